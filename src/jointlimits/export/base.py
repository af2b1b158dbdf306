"""The one interface every engine module implements, and the swing-twist engines' common part."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .swingtwist import JointFrame, SwingTwistLimit, cover_swing_twist

Array = NDArray[np.float64]


@dataclass
class JointInfo:
    """What an engine needs to know of one exported joint besides its limit."""

    name: str
    parent: str
    offset_m: Array  # the joint's origin in the parent joint's frame, metres
    frame: JointFrame


class Engine:
    """One physics/game engine: fit its limit to engine-frame rotations, test rotations against
    it (the engine's documented test, in numpy), and write its parameters in its own names/units.

    Subclasses set ``name``, ``docs`` (the pages the conventions come from) and implement
    :meth:`cover` and :meth:`parameters`; the limit objects they return implement
    ``admits(r)``, ``sample(n, rng)`` and ``scaled(k)`` on engine-frame rotations.
    """

    name: str = ""
    docs: tuple[str, ...] = ()
    conventions: str = ""

    def cover(self, r: Array) -> Any:
        """The smallest engine limit containing engine-frame rotations ``r`` ``[N, 4]``."""
        raise NotImplementedError

    def parameters(self, limit: Any, joint: JointInfo) -> dict:
        """The engine's parameters for ``limit`` in its own names and units."""
        raise NotImplementedError


class SwingTwistEngine(Engine):
    """An engine whose limit is a swing ellipse (or circle) in some metric plus a twist range."""

    metric: str = "angle"
    circular: bool = False
    symmetric_twist: bool = False
    max_swing: float = math.pi
    max_twist: float = math.pi
    min_angle: float = 0.0

    def cover(self, r: Array) -> SwingTwistLimit:
        return cover_swing_twist(
            r, self.metric, self.max_swing, self.max_twist, self.symmetric_twist, self.circular, self.min_angle
        )


def vec(v: Array, scale: float = 1.0) -> list[float]:
    return [float(x) * scale for x in np.asarray(v, np.float64).reshape(-1)]


def frames_block(joint: JointInfo, length_scale: float = 1.0) -> dict:
    """The joint frames as axes: parent side (in the parent joint's frame, at the joint's offset)
    and child side (in the joint's own frame, at its origin)."""
    from ..motion import quat

    pa = quat.to_matrix(joint.frame.parent)
    ca = quat.to_matrix(joint.frame.child)
    return {
        "parent": {
            "position": vec(joint.offset_m, length_scale),
            "twist_axis": vec(pa[:, 0]),
            "y_axis": vec(pa[:, 1]),
            "z_axis": vec(pa[:, 2]),
        },
        "child": {
            "position": [0.0, 0.0, 0.0],
            "twist_axis": vec(ca[:, 0]),
            "y_axis": vec(ca[:, 1]),
            "z_axis": vec(ca[:, 2]),
        },
    }

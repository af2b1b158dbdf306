"""Skeleton groups of a corpus: clips of one topology (joint names and parents) and one rest pose
(child bone directions within a tolerance), named after their naming convention."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..limits.rest import DEFAULT_REST_TOLERANCE, rest_mismatch
from ..motion.skeleton import Skeleton

__all__ = ["Grouping", "convention_of"]


def convention_of(skeleton: Skeleton) -> str:
    """The naming convention of a skeleton (``unknown`` when none matches)."""
    from ..errors import SkeletonError
    from ..motion.naming import detect

    try:
        return detect(skeleton)
    except SkeletonError:
        return "unknown"


@dataclass
class Grouping:
    """Assigns clips to skeleton groups in the order they come (names are stable for a corpus
    in a fixed order: convention, joint count, topology hash, and a rest-pose number when one
    topology has several rest poses)."""

    tolerance: float = DEFAULT_REST_TOLERANCE
    _reps: dict[str, list[tuple[str, list[NDArray[np.float64]]]]] = field(default_factory=dict)

    def assign(self, skeleton: Skeleton, rest: list[NDArray[np.float64]]) -> str:
        fp = skeleton.fingerprint()
        reps = self._reps.setdefault(fp, [])
        every = list(range(skeleton.num_joints))
        for name, r in reps:
            if not rest_mismatch(skeleton.names, r, rest, every, self.tolerance):
                return name
        name = f"{convention_of(skeleton)}-{skeleton.num_joints}j-{fp[:6]}"
        if reps:
            name += f"-rest{len(reps) + 1}"
        reps.append((name, rest))
        return name

"""Smoothing of limited clips: the pops a projection makes when it switches sides of its limit
(a rotation moving across the far side of a limit lands on a different face from one frame to the
next), found by comparing the limited clip with the original and removed by a tracking spring.
Pass :func:`smooth_switches` as ``JointLimits.apply(..., smooth=...)``."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..motion import quat
from .tracking import track_rotations

__all__ = ["side_switches", "smooth_switches"]

Array = NDArray[np.float64]


def side_switches(limited: Array, original: Array, threshold: float = 0.25) -> NDArray[np.int64]:
    """Frames where a projection jumped (switched sides of its limit): the limited rotation moved
    more than ``threshold`` radians further between two frames than the input did."""
    jump_out = quat.angle(limited[1:], limited[:-1])
    jump_in = quat.angle(original[1:], original[:-1])
    hit = np.any(jump_out - jump_in > threshold, axis=tuple(range(1, jump_out.ndim)))
    return np.nonzero(hit)[0] + 1


def smooth_switches(
    limited: Array, original: Array, frame_time: float, halflife: float = 0.25, threshold: float = 0.25
) -> Array:
    """Remove the pops of projections that switch sides with a tracking spring; frames the spring
    does not touch are returned exactly as projected."""
    cuts = side_switches(limited, original, threshold)
    if cuts.size == 0:
        return limited
    return track_rotations(limited, cuts, frame_time, halflife=halflife)

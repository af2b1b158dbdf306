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
    """Frames where a projection jumped (switched sides of its limit) on any joint: the limited
    rotation moved more than ``threshold`` radians further between two frames than the input did."""
    return np.nonzero(np.any(_switch_mask(limited, original, threshold), axis=1))[0] + 1


def _switch_mask(limited: Array, original: Array, threshold: float) -> NDArray[np.bool_]:
    """``bool[F-1, ...]``: per frame pair and channel, the limited rotation jumped."""
    jump_out = quat.angle(limited[1:], limited[:-1])
    jump_in = quat.angle(original[1:], original[:-1])
    hit = jump_out - jump_in > threshold
    return hit.reshape(hit.shape[0], -1)


def smooth_switches(
    limited: Array, original: Array, frame_time: float, halflife: float = 0.25, threshold: float = 0.25
) -> Array:
    """Remove the pops of projections that switch sides with a tracking spring, joint by joint:
    a joint is filtered at its own switches only; joints and frames the spring does not touch are
    returned exactly as projected. (``JointLimits.apply`` then brings the result back inside.)"""
    lim = np.asarray(limited, np.float64)
    if lim.shape[0] < 2:
        return lim
    hit = _switch_mask(lim, np.asarray(original, np.float64), threshold)
    if not hit.any():
        return lim
    out = lim.copy()
    flat = out.reshape(out.shape[0], -1, 4)
    src = lim.reshape(lim.shape[0], -1, 4)
    for c in np.nonzero(hit.any(axis=0))[0]:
        cuts = np.nonzero(hit[:, c])[0] + 1
        flat[:, c] = track_rotations(src[:, c : c + 1], cuts, frame_time, halflife=halflife)[:, 0]
    return out

"""Resampling a motion to another frame rate: slerp for local rotations, linear for positions."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import JointLimitsError, SkeletonError
from . import quat
from .skeleton import Motion

__all__ = ["resample", "sample_times"]


def sample_times(motion: Motion, fps: float) -> np.ndarray:
    """Times (s, from the first frame) of a resampling at ``fps`` that stays within the clip."""
    if not (np.isfinite(fps) and fps > 0):
        raise SkeletonError(f"fps must be positive and finite, got {fps}")
    span = (motion.num_frames - 1) * motion.frame_time
    n = int(math.floor(span * fps + 1e-6)) + 1
    return np.arange(n) / fps


def resample(motion: Motion, fps: float) -> Motion:
    """The motion sampled every ``1/fps`` s from its first frame to (at most) its last.

    Rotations are slerped on the shortest arc between neighbouring frames, positions interpolated
    linearly; samples falling on a source frame (within 1e-6 frame) copy it exactly, so the same
    rate returns the clip unchanged and an integer division of the rate picks frames.
    """
    times = sample_times(motion, fps)
    if motion.num_frames == 1:
        return dataclasses.replace(
            motion,
            rotations=motion.rotations.copy(),
            positions=motion.positions.copy(),
            frame_time=1.0 / fps,
            source_euler=None,
        )
    s = times / motion.frame_time
    r = np.round(s)
    s = np.where(np.abs(s - r) < 1e-6, r, s)
    i = np.clip(np.floor(s).astype(np.int64), 0, motion.num_frames - 2)
    u = np.clip(s - i, 0.0, 1.0)
    exact = u == 0.0
    a, b = motion.rotations[i], motion.rotations[i + 1]
    rot = quat.normalize(quat.slerp(a, b, np.broadcast_to(u[:, None], a.shape[:2])))
    rot[exact] = a[exact]
    hit_end = u == 1.0
    rot[hit_end] = b[hit_end]
    pos = motion.positions[i] + (motion.positions[i + 1] - motion.positions[i]) * u[:, None, None]
    pos[exact] = motion.positions[i][exact]
    src = None
    if motion.source_euler is not None and np.all(exact):
        try:
            src = (motion.source_euler[0][i], motion.source_euler[1][i])
        except JointLimitsError:  # the clip's file changed since it was loaded: written from rotations
            src = None
    return dataclasses.replace(motion, rotations=rot, positions=pos, frame_time=1.0 / fps, source_euler=src)

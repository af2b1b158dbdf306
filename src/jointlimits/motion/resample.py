"""Resampling a motion to another frame rate: slerp for local rotations, linear for positions."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import JointLimitsError, SkeletonError
from . import quat
from .skeleton import Motion

__all__ = ["nominal_fps", "resample", "sample_times"]

#: a frame rate within this relative distance of a whole number is that number (0.033333 s is 30 fps)
NOMINAL_TOLERANCE = 1e-4


def nominal_fps(rate: float) -> float:
    """The whole frame rate that ``rate`` (fps) rounds, when within 1e-4 relative, else ``rate``.

    Files write the frame time rounded (0.033333, 0.0083333): this is the rate they mean.
    """
    n = round(rate)
    return float(n) if n >= 1 and abs(rate - n) <= NOMINAL_TOLERANCE * n else float(rate)


def _check_fps(fps: float) -> None:
    if not (np.isfinite(fps) and fps > 0):
        raise SkeletonError(f"fps must be positive and finite, got {fps}")


def sample_times(motion: Motion, fps: float) -> np.ndarray:
    """Times (s, from the first frame) of a resampling at ``fps`` that stays within the clip.

    The clip's frame time and ``fps`` are read as the whole rates they round (:func:`nominal_fps`).
    """
    _check_fps(fps)
    fps = nominal_fps(fps)
    ft = 1.0 / nominal_fps(motion.fps)
    span = (motion.num_frames - 1) * ft
    n = int(math.floor(span * fps + 1e-6)) + 1
    return np.arange(n) / fps


def _take(motion: Motion, i: np.ndarray, frame_time: float) -> Motion:
    """Frames ``i`` of the motion, with their source values and text (a lossless save)."""
    step = int(i[1] - i[0]) if i.size > 1 else 1
    regular = step > 0 and np.array_equal(i, i[0] + step * np.arange(i.size))
    key: slice | np.ndarray = slice(int(i[0]), int(i[-1]) + 1, step) if regular else i
    src = None
    if motion.source_euler is not None:
        try:
            src = (motion.source_euler[0][i], motion.source_euler[1][i])
        except JointLimitsError:  # the clip's file changed since it was loaded: written from rotations
            src = None
    text = None
    if motion.source_text is not None and src is not None:
        text = motion.source_text[key]
    return dataclasses.replace(
        motion,
        rotations=motion.rotations[i].copy(),
        positions=motion.positions[i].copy(),
        frame_time=frame_time,
        source_euler=src,
        source_text=text,
    )


def resample(motion: Motion, fps: float) -> Motion:
    """The motion sampled every ``1/fps`` s from its first frame to (at most) its last.

    Rotations are slerped on the shortest arc between neighbouring frames, positions interpolated
    linearly. Frame times written rounded are read as the whole rate they round
    (:func:`nominal_fps`: 0.033333 s is 30 fps). Samples on a source frame (within 1e-6 frame)
    copy it, with what the clip keeps of its file: the same rate returns the clip as it is (saved,
    the same bytes) and a whole divisor of the rate picks every k-th frame. An interpolated clip
    keeps its source's text style (line endings, decimals) for the writer.
    """
    _check_fps(fps)
    if motion.num_frames == 0:
        raise SkeletonError("cannot resample a clip with no frames")
    times = sample_times(motion, fps)
    rate = nominal_fps(fps)
    if motion.num_frames == 1:
        return _take(motion, np.zeros(1, np.int64), motion.frame_time if rate == nominal_fps(motion.fps) else 1 / rate)
    s = times * nominal_fps(motion.fps)
    r = np.round(s)
    s = np.where(np.abs(s - r) < 1e-6, r, s)
    i = np.clip(np.floor(s).astype(np.int64), 0, motion.num_frames - 2)
    u = np.clip(s - i, 0.0, 1.0)
    if np.all((u == 0.0) | (u == 1.0)):
        i = i + (u == 1.0)
        if i.size == motion.num_frames and rate == nominal_fps(motion.fps):
            return _take(motion, i, motion.frame_time)  # the same rate: the clip itself
        return _take(motion, i, 1.0 / rate)
    exact = u == 0.0
    a, b = motion.rotations[i], motion.rotations[i + 1]
    rot = quat.normalize(quat.slerp(a, b, np.broadcast_to(u[:, None], a.shape[:2])))
    rot[exact] = a[exact]
    hit_end = u == 1.0
    rot[hit_end] = b[hit_end]
    pos = motion.positions[i] + (motion.positions[i + 1] - motion.positions[i]) * u[:, None, None]
    pos[exact] = motion.positions[i][exact]
    # no source values (the frames are new); the source text stays for its style (line endings, decimals)
    return dataclasses.replace(motion, rotations=rot, positions=pos, frame_time=1.0 / rate, source_euler=None)

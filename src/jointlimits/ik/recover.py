"""Posture recovery: 3D joint positions -> a motion (local rotations) inside the joint limits.

Markerless capture and 3D pose estimators give joint positions, noisy and with gaps; animation
needs rotations. :func:`recover` fits a skeleton to every frame with the whole-body IK of
:mod:`jointlimits.ik.whole_body` (damped least squares, the limits as the top-priority task, a
weak pull toward the rest posture for what positions do not observe), frames batched, then
restarts each frame from its predecessor (warm start) with outliers down-weighted. NaN positions
are occlusions: the joint simply has no target in that frame. ``smooth`` first runs the
toolkit's damper (the gain of :func:`jointlimits.cleanup.springs.halflife_to_gain`) forward and
backward over the observed positions (zero phase lag).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import IKError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton
from .whole_body import WholeBodyIK

__all__ = ["recover", "RecoveryReport", "smooth_positions", "load_limits_for"]

Array = NDArray[np.float64]


@dataclass
class RecoveryReport:
    """What :func:`recover` did: frames, joint-frames observed, fit error (RMS distance between
    solved and observed joints, file units) of the limit-free closed-form guess ("before") and of
    the result ("after"), and joint-frames / frames outside the limits before and after."""

    frames: int
    joints: int
    observed_fraction: float
    error_before: float
    error_after: float
    outside_before: int
    outside_after: int
    frames_outside_before: int
    frames_outside_after: int
    limited: bool
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {
            k: getattr(self, k)
            for k in (
                "frames",
                "joints",
                "observed_fraction",
                "error_before",
                "error_after",
                "outside_before",
                "outside_after",
                "frames_outside_before",
                "frames_outside_after",
                "limited",
                "seconds",
            )
        }
        d.update(self.extra)
        return d


def _damper_gain(halflife: float, dt: float) -> float:
    """The per-step gain of the springs' damper, 1 - exp(-ln2 dt / (halflife + 1e-5)), written here
    because IK sits below cleanup (a test holds it equal to ``halflife_to_gain``)."""
    return float(1.0 - np.exp(-(0.69314718056 * np.float64(dt)) / (np.float64(halflife) + 1e-5)))


def smooth_positions(positions: ArrayLike, frame_time: float, halflife: float) -> Array:
    """Zero-lag smoothing of positions ``[F, J, 3]``: an exponential damper with ``halflife``
    seconds run forward then backward. NaN (missing) samples stay NaN and do not pull the
    damper, which keeps its state across the gap."""
    p = np.asarray(positions, np.float64)
    if not (np.isfinite(halflife) and halflife > 0):
        raise IKError(f"smoothing half-life must be a positive number of seconds, got {halflife!r}")
    a = _damper_gain(halflife, frame_time)
    seen = np.all(np.isfinite(p), axis=-1)

    def sweep(x: Array, s: NDArray[np.bool_]) -> Array:
        out = np.full_like(x, np.nan)
        state = np.where(s[0][:, None], x[0], np.nan)
        for f in range(x.shape[0]):  # one step per frame, all joints at once
            fresh = s[f] & ~np.isfinite(state[:, 0])
            state = np.where(fresh[:, None], x[f], state)
            upd = s[f] & ~fresh
            state = np.where(upd[:, None], state + a * (x[f] - state), state)
            out[f] = np.where(s[f][:, None], state, np.nan)
        return out

    fwd = sweep(p, seen)
    return sweep(fwd[::-1], seen[::-1])[::-1]


def _fill_gaps(rotations: Array, roots: Array, observed: NDArray[np.int64], empty: NDArray[np.int64]) -> None:
    """Frames without any observation: interpolate the solution between the nearest observed
    frames before and after (slerp, lerp; held at the ends). In place."""
    k = np.searchsorted(observed, empty)
    lo = observed[np.clip(k - 1, 0, observed.size - 1)]
    hi = observed[np.clip(k, 0, observed.size - 1)]
    lo = np.where(k == 0, hi, lo)
    hi = np.where(k == observed.size, lo, hi)
    t = np.where(hi > lo, (empty - lo) / np.maximum(hi - lo, 1), 0.0)
    rotations[empty] = quat.slerp(rotations[lo], rotations[hi], np.broadcast_to(t[:, None], rotations[lo].shape[:2]))
    roots[empty] = roots[lo] + t[:, None] * (roots[hi] - roots[lo])


def _joint_frames_outside(limits: Any, rotations: Array) -> NDArray[np.bool_]:
    if limits is None:
        return np.zeros(rotations.shape[:2], bool)
    return ~limits.contains(rotations, 1e-6)


def recover(
    positions: ArrayLike,
    skeleton: Skeleton | Motion,
    limits: Any = None,
    *,
    frame_time: float | None = None,
    rest: ArrayLike | None = None,
    smooth: float | None = None,
    warm_start: bool = True,
    robust: bool = False,
    iterations: int = 8,
    chunk: int = 2048,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Motion, RecoveryReport]:
    """Recover a motion from global joint positions ``[F, J, 3]`` in ``skeleton``'s joint order
    (NaN = not observed; use :meth:`jointlimits.io.positions.JointPositions.for_skeleton`).

    ``skeleton``: a Skeleton, or a Motion (e.g. a BVH of the rig) whose first frame's local
    positions give the bone offsets and whose frame time is the default. ``limits``: a
    JointLimits model (or any object with ``project`` / ``contains`` on ``[F, J, 4]``) or None.
    Frames with no observation at all are interpolated from their neighbours.
    ``rest``: the posture ``[J, 4]`` the weak pull goes to, which decides the twist of bones
    that positions do not observe (default: the limits' reference rotations; without limits,
    the mean posture of ``skeleton`` when it is a Motion, e.g. the rig's BVH, else the
    skeleton's rest pose, which for rigs drawn with bones along one local axis (LAFAN1) is no
    human posture: twists then go far wrong). ``smooth``: half-life (s) of the zero-lag damper
    applied to the positions first. ``robust``: down-weight outliers in the second pass (by
    their distance against twice the median residual of the first). Returns the motion and
    a :class:`RecoveryReport`.
    """
    import time

    t0 = time.perf_counter()
    if isinstance(skeleton, Motion):
        # the rig's first frame gives the bone lengths (its offsets if it has no frames)
        sk = skeleton.skeleton
        local = skeleton.positions[0] if skeleton.num_frames else sk.offsets
        ft = skeleton.frame_time if frame_time is None else frame_time
    else:
        sk, local = skeleton, skeleton.offsets
        ft = 1.0 / 30.0 if frame_time is None else frame_time
    if not (np.isfinite(ft) and ft > 0):
        raise IKError(f"frame time must be positive, got {ft!r}")
    p = np.asarray(positions, np.float64)
    J = sk.num_joints
    if p.ndim != 3 or p.shape[1:] != (J, 3):
        raise IKError(f"positions must be [F, {J}, 3] in the skeleton's joint order, got {p.shape}")
    if p.shape[0] == 0:
        raise IKError("no frames to recover")
    if np.any(np.isinf(p)):
        raise IKError("positions contain infinite values (use NaN for a missing joint)")
    seen = np.all(np.isfinite(p), axis=-1)
    if not seen.any():
        raise IKError("no joint is observed in any frame (every position is NaN)")
    empty = np.nonzero(~seen.any(axis=1))[0]
    if limits is not None:
        check = getattr(limits, "check_skeleton", None)
        if callable(check):
            check(sk)
    if smooth is not None:
        p = smooth_positions(p, ft, smooth)
    p = np.where(seen[..., None], p, np.nan)
    posture = "given" if rest is not None else "limits reference" if limits is not None else "skeleton rest"
    if rest is None and limits is None and isinstance(skeleton, Motion) and skeleton.num_frames:
        # the rig's mean posture: a human posture to take unobserved twists from
        rest = quat.normalize(quat.average(skeleton.rotations, axis=0))
        posture = "rig mean posture"
    ik = WholeBodyIK(sk, limits, local_positions=local, rest=rest, iterations=iterations)
    free = WholeBodyIK(sk, None, local_positions=local, rest=ik.rest)
    # "before": the closed-form guess without limits (what a limit-free fit gives at once)
    tg, wg = free._targets(p, None, None)
    g_rot, g_root = free.initial_guess(tg, wg, np.broadcast_to(ik.rest, (p.shape[0], J, 4)))
    _, g_pos = free._fk(g_rot, g_root)

    first_scale = 0.0 if robust else None  # 0: twice the median residual of the first pass
    res = ik.solve_sequence(p, warm_start=warm_start, robust=first_scale, chunk=chunk, progress=progress)
    if empty.size:
        _fill_gaps(res.rotations, res.root_positions, np.nonzero(seen.any(axis=1))[0], empty)
        if limits is not None:  # an interpolated pose is projected like every other one
            res.rotations[empty] = limits.project(res.rotations[empty])
    out_pos = np.repeat(np.asarray(local, np.float64)[None], p.shape[0], axis=0)
    out_pos[:, 0] = res.root_positions
    motion = Motion(sk, quat.normalize(res.rotations), out_pos, ft)

    def rms(sol: Array) -> float:
        d = np.linalg.norm(tg - sol, axis=-1)[wg > 0]
        return float(np.sqrt(np.mean(d * d))) if d.size else float("nan")

    before = _joint_frames_outside(limits, g_rot)
    after = _joint_frames_outside(limits, motion.rotations)
    rep = RecoveryReport(
        frames=int(p.shape[0]),
        joints=J,
        observed_fraction=float(seen.mean()),
        error_before=rms(g_pos),
        error_after=rms(res.positions),
        outside_before=int(before.sum()),
        outside_after=int(after.sum()),
        frames_outside_before=int(before.any(axis=1).sum()),
        frames_outside_after=int(after.any(axis=1).sum()),
        limited=limits is not None,
        seconds=time.perf_counter() - t0,
        extra={
            "frames_without_observation": int(empty.size),
            "robust_scale": first_scale,
            "warm_start": bool(warm_start),
            "smooth_halflife": smooth,
            "posture_prior": posture,
        },
    )
    return motion, rep


def load_limits_for(path: Any, skeleton: Skeleton) -> Any:
    """Load a limits file and check it belongs to ``skeleton`` (LimitsError otherwise)."""
    from ..limits.model import JointLimits

    lim = JointLimits.load(path)
    lim.check_skeleton(skeleton)
    return lim

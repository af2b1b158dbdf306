"""Posture recovery: 3D joint positions -> a motion (local rotations) inside the joint limits.

Markerless capture and 3D pose estimators give joint positions, noisy and with gaps; animation
needs rotations. :func:`recover` fits a skeleton to every frame with the whole-body IK of
:mod:`jointlimits.ik.whole_body` (damped least squares, the limits as the top-priority task, a
weak pull toward the rest posture for what positions do not observe), frames batched, then
restarts each frame from its predecessor (warm start) with outliers down-weighted; a frame where
a joint still turns faster than any human joint does is solved again from the frame before. NaN positions
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


#: half-life (s) of the zero-lag damper :func:`recover` runs by itself on noisy positions
AUTO_HALFLIFE = 0.02
#: positions count as noisy when their bone lengths vary by more than this share of the median bone
AUTO_NOISE_SHARE = 0.01


def position_noise(positions: Array, skeleton: Skeleton, local: Array) -> float:
    """The noise of joint positions ``[F, J, 3]`` (file units, per axis) estimated from how much
    their bone lengths vary over the frames: the median over bones at least as long as the median
    bone of the standard deviation of the observed length, over sqrt(2). 0 for exact positions."""
    lengths = np.linalg.norm(np.asarray(local, np.float64), axis=-1)
    par = skeleton.parents
    kids = [c for c in range(1, skeleton.num_joints) if par[c] >= 0 and lengths[c] > 0]
    if not kids:
        return 0.0
    med = float(np.median(lengths[kids]))
    sd = []
    for c in kids:
        if lengths[c] < med:
            continue
        d = np.linalg.norm(positions[:, c] - positions[:, par[c]], axis=-1)
        d = d[np.isfinite(d)]
        if d.size > 2:
            sd.append(float(np.std(d)))
    return float(np.median(sd) / np.sqrt(2.0)) if sd else 0.0


def _translation_joint(rig: Skeleton | Motion) -> int | None:
    """The child of the root that carries the translation in ``rig`` (a Motion) while the root
    stays put (Bandai Namco: Hips under a static joint_Root), else None."""
    if not isinstance(rig, Motion) or rig.num_frames < 2:
        return None
    pos = rig.positions
    scale = float(np.abs(pos).max()) or 1.0
    if np.ptp(pos[:, 0], axis=0).max() > 1e-9 * scale:
        return None
    for k in rig.skeleton.children(0):
        if np.ptp(pos[:, k], axis=0).max() > 1e-6 * scale:
            return int(k)
    return None


#: a local rotation faster than this (deg/s) between two solved frames is re-solved from the
#: frame before (no human joint turns that fast: the batch solve took the other branch there)
CONTINUITY_DEG_PER_S = 1500.0


def _continuity_pass(ik: WholeBodyIK, p: Array, res: Any, frame_time: float) -> int:
    """Frames whose solution turns a joint faster than :data:`CONTINUITY_DEG_PER_S` from the
    frame before are solved again from that frame's solution (a warm start that keeps the twist
    and the side of a limit), in order, so a run of such frames follows the motion. In place;
    returns the number of frames solved again."""
    F = p.shape[0]
    bound = np.radians(CONTINUITY_DEG_PER_S) * frame_time
    rot, roots, pos = res.rotations, res.root_positions, res.positions
    redone = 0
    for f in range(1, F):
        if not np.any(np.isfinite(p[f])):
            continue
        if float(quat.angle(quat.normalize(rot[f]), quat.normalize(rot[f - 1])).max()) <= bound:
            continue
        r = ik.solve(p[f : f + 1], init=rot[f - 1 : f], root_positions=roots[f - 1 : f])
        rot[f], roots[f], pos[f] = r.rotations[0], r.root_positions[0], r.positions[0]
        redone += 1
    return redone


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
    auto_smooth: bool = True,
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
    applied to the positions first; without it, ``auto_smooth`` runs that damper with
    :data:`AUTO_HALFLIFE` when the positions are noisy (bone lengths varying by more than
    :data:`AUTO_NOISE_SHARE` of the median bone, :func:`position_noise`), so the rotations of
    short bones do not jump with the noise. When the rig (a Motion) keeps its root still and
    carries the translation on a child of the root (Bandai Namco's Hips), the result does too:
    the root stays where it is observed (its rig place when never observed). ``robust``:
    down-weight outliers in the second pass (by their distance against twice the median residual
    of the first). Returns the motion and
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
    noise = position_noise(p, sk, local)
    if smooth is None and auto_smooth and p.shape[0] > 2:
        lengths = np.linalg.norm(np.asarray(local, np.float64)[1:], axis=-1)
        med = float(np.median(lengths[lengths > 0])) if np.any(lengths > 0) else 0.0
        if med > 0 and noise > AUTO_NOISE_SHARE * med:
            smooth = AUTO_HALFLIFE
    if smooth is not None:
        p = smooth_positions(p, ft, smooth)
    p = np.where(seen[..., None], p, np.nan)
    carrier = _translation_joint(skeleton)
    if carrier is not None:
        seen_root = np.isfinite(p[:, 0, 0])
        root_place = np.nanmean(p[seen_root, 0], axis=0) if seen_root.any() else np.asarray(local[0], np.float64)
        p[:, 0] = np.nan  # the solve places a floating root; the still root is put back after
    posture = "given" if rest is not None else "limits reference" if limits is not None else "skeleton rest"
    if rest is None and limits is None and isinstance(skeleton, Motion) and skeleton.num_frames:
        # the rig's mean posture: a human posture to take unobserved twists from
        rest = quat.normalize(quat.average(skeleton.rotations, axis=0))
        posture = "rig mean posture"
    ik = WholeBodyIK(sk, limits, local_positions=local, rest=rest, iterations=iterations)
    free = WholeBodyIK(sk, None, local_positions=local, rest=ik.rest)
    # what noise is left after the damper: the start weighs short bones down by it
    ik.noise = free.noise = noise if smooth is None else position_noise(p, sk, local)
    # "before": the closed-form guess without limits (what a limit-free fit gives at once)
    tg, wg = free._targets(p, None, None)
    g_rot, g_root = free.initial_guess(tg, wg, np.broadcast_to(ik.rest, (p.shape[0], J, 4)))
    _, g_pos = free._fk(g_rot, g_root)

    first_scale = 0.0 if robust else None  # 0: twice the median residual of the first pass
    res = ik.solve_sequence(p, warm_start=warm_start, robust=first_scale, chunk=chunk, progress=progress)
    redone = _continuity_pass(ik, p, res, ft) if warm_start else 0
    if empty.size:
        _fill_gaps(res.rotations, res.root_positions, np.nonzero(seen.any(axis=1))[0], empty)
        if limits is not None:  # an interpolated pose is projected like every other one
            res.rotations[empty] = limits.project(res.rotations[empty])
    out_pos = np.repeat(np.asarray(local, np.float64)[None], p.shape[0], axis=0)
    out_pos[:, 0] = res.root_positions
    motion = Motion(sk, quat.normalize(res.rotations), out_pos, ft)
    solved_pos = res.positions
    if carrier is not None:
        motion = _still_root(motion, carrier, root_place, skeleton)
        from ..motion.skeleton import forward_kinematics

        solved_pos = forward_kinematics(motion)[1]

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
        error_after=rms(solved_pos),
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
            "position_noise": noise,
            "frames_solved_again": redone,
            "translation_joint": None if carrier is None else sk.names[carrier],
        },
    )
    return motion, rep


def _still_root(motion: Motion, carrier: int, place: Array, rig: Any) -> Motion:
    """``motion`` with its root put back at ``place`` with the rig's root rotation and the
    translation and turn of the solved root moved onto ``carrier`` (the same global pose)."""
    rot = motion.rotations.copy()
    pos = motion.positions.copy()
    r0 = quat.normalize(np.asarray(rig.rotations[0, 0], np.float64))
    g_root, p_root = rot[:, 0], pos[:, 0]
    g_c = quat.mul(g_root, rot[:, carrier])
    p_c = p_root + quat.mul_vec(g_root, pos[:, carrier])
    r0b = np.broadcast_to(r0, g_c.shape)
    rot[:, 0] = r0b
    pos[:, 0] = place
    rot[:, carrier] = quat.normalize(quat.inv_mul(r0b, g_c))
    pos[:, carrier] = quat.mul_vec(quat.inv(r0b), p_c - place)
    return Motion(motion.skeleton, rot, pos, motion.frame_time)


def load_limits_for(path: Any, skeleton: Skeleton) -> Any:
    """Load a limits file and check it belongs to ``skeleton`` (LimitsError otherwise)."""
    from ..limits.model import JointLimits

    lim = JointLimits.load(path)
    lim.check_skeleton(skeleton)
    return lim

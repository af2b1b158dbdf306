"""Pop-free tracking filters for whole motions (root positions as vectors, joint rotations as quaternions).

The filter is the seed's tracking spring ("Perfect Tracking with Springs") with half-life gains
(``tracking_spring_update_improved`` with exact ``exp``), run in *error form*: per channel it keeps
the offset ``e`` of the spring from the input and the velocity error ``ev``. Wherever the input is
continuous the offset dynamics do not depend on the signal, so a spring that sits on the input
stays on it *exactly* (bit-exact output), and after a discontinuity the offset decays back to zero
(and is snapped to exactly zero once below ``snap``).

Rotations are tracked in the tangent space: the target angular velocity of a joint is
``log(q[t] q[t-1]^-1) / dt`` (shortest arc, so the double cover does not matter) and the output is
``exp(e) q[t]``, always a unit quaternion on the input's own hemisphere.

Discontinuities are frame indices ``c`` where a new segment starts (``q[c]`` does not follow from
``q[c-1]``). On frame ``c`` only the position target is used, on ``c + 1`` position and velocity
(the seed's ``*_no_velocity_acceleration`` / ``*_no_acceleration`` variants). They can be given,
detected with :func:`detect_discontinuities` (:mod:`jointlimits.cleanup.pops`: spikes the clip's own
motion makes implausible), or tamed by clipping target velocity/acceleration.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import JointLimitsError, SkeletonError
from ..motion import quat
from ..motion.skeleton import Motion
from .pops import PopParams, pop_scores
from .springs import SpringError, halflife_to_gain, track_errors, tracking_modes

__all__ = [
    "TrackingError",
    "DEFAULT_HALFLIFE",
    "DEFAULT_VELOCITY_HALFLIFE",
    "DEFAULT_THRESHOLD",
    "DEFAULT_SNAP",
    "angular_velocities",
    "angular_speeds",
    "track_rotations",
    "track_positions",
    "detect_discontinuities",
    "discontinuity_scores",
    "filter_motion",
    "splice",
    "varying_position_joints",
]

Array = NDArray[np.float64]

#: Half-life (s) of the pull toward the input position: how long a pop takes to fade.
DEFAULT_HALFLIFE = 0.25
#: Half-life (s) of the pull toward the input velocity.
DEFAULT_VELOCITY_HALFLIFE = 0.05
#: Pop score (spike / plausible bound, see :mod:`jointlimits.cleanup.pops`) above which
#: :func:`detect_discontinuities` reports a jump.
DEFAULT_THRESHOLD = 1.0
#: Offsets below this (radians / file units) are set to exactly zero.
DEFAULT_SNAP = 1e-10


class TrackingError(SpringError):
    """Invalid input to a tracking filter (bad shapes, NaN, frame indices out of range, ...)."""


# ----------------------------------------------------------------------------------------------
# low level, batched


def _quats(q: ArrayLike) -> Array:
    a = np.asarray(q, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] != 4 or a.shape[0] == 0:
        raise TrackingError(f"quaternions must have shape [T, ..., 4] with T >= 1, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise TrackingError("quaternions contain NaN or infinite values")
    n = np.linalg.norm(a, axis=-1)
    if np.any(n < 1e-8):
        raise TrackingError("quaternions contain zero-length rows")
    return a


def _check_dt(dt: float) -> float:
    dt = float(dt)
    if not (dt > 0.0 and np.isfinite(dt)):
        raise TrackingError(f"dt must be positive and finite, got {dt!r}")
    return dt


def angular_velocities(quats: ArrayLike, dt: float) -> Array:
    """w[t] = log(q[t] q[t-1]^-1) / dt (scaled angle axis, shortest arc, parent frame), w[0] = 0 -> [T, ..., 3]."""
    q = quat.normalize(_quats(quats))
    dt = _check_dt(dt)
    w = np.zeros(q.shape[:-1] + (3,))
    if q.shape[0] > 1:
        w[1:] = quat.to_scaled_angle_axis(quat.abs(quat.mul_inv(q[1:], q[:-1]))) / dt
    return w


def angular_speeds(quats: ArrayLike) -> Array:
    """Per-frame rotation angle |log(q[t] q[t-1]^-1)| in radians, 0 for frame 0 -> [T, ...]."""
    q = _quats(quats)
    s = np.zeros(q.shape[:-1])
    if q.shape[0] > 1:
        s[1:] = quat.angle(q[:-1], q[1:])
    return s


def _gains(
    dt: float, halflife: float, velocity_halflife: float, acceleration_halflife: float
) -> tuple[float, float, float]:
    for name, h in (
        ("halflife", halflife),
        ("velocity_halflife", velocity_halflife),
        ("acceleration_halflife", acceleration_halflife),
    ):
        if not (np.isfinite(h) and h >= 0.0):
            raise TrackingError(f"{name} must be >= 0 and finite, got {h!r}")
    g = [float(halflife_to_gain(h, dt)) for h in (halflife, velocity_halflife, acceleration_halflife)]
    return g[0], g[1], g[2]


def _modes(T: int, cuts: Sequence[int] | NDArray[np.integer] | None) -> NDArray[np.int8]:
    try:
        return tracking_modes(T, cuts)
    except SpringError as e:
        raise TrackingError(str(e)) from None


def track_rotations(
    quats: ArrayLike,
    cuts: Sequence[int] | NDArray[np.integer] | None = None,
    dt: float = 1.0 / 30.0,
    *,
    halflife: float = DEFAULT_HALFLIFE,
    velocity_halflife: float = DEFAULT_VELOCITY_HALFLIFE,
    acceleration_halflife: float = 0.0,
    v_max: float | None = None,
    a_max: float | None = None,
    snap: float = DEFAULT_SNAP,
) -> Array:
    """Tracking-spring filter of rotation sequences ``[T, ..., 4]`` (all trailing channels at once) -> unit quaternions.

    ``cuts``: frames where a discontinuity starts; ``v_max`` (rad/s) and ``a_max`` (rad/s^2) clip the
    targets per angular-velocity component. Frames whose offset is zero are returned bit-exact.
    """
    q = _quats(quats)
    dt = _check_dt(dt)
    T = q.shape[0]
    xg, vg, ag = _gains(dt, halflife, velocity_halflife, acceleration_halflife)
    modes = _modes(T, cuts)
    if np.all(modes == 2) and v_max is None and a_max is None:
        return q.copy()
    qn = quat.normalize(q)
    w = angular_velocities(qn, dt)
    try:
        e, _ = track_errors(w, dt, xg, vg, ag, modes=modes, v_max=v_max, a_max=a_max, snap=snap)
    except SpringError as err:
        raise TrackingError(str(err)) from None
    moved = np.any(e != 0.0, axis=-1)
    out = q.copy()
    if np.any(moved):
        idx = np.nonzero(moved)
        out[idx] = quat.normalize(quat.mul(quat.from_scaled_angle_axis(e[idx]), qn[idx]))
    return out


def track_positions(
    positions: ArrayLike,
    cuts: Sequence[int] | NDArray[np.integer] | None = None,
    dt: float = 1.0 / 30.0,
    *,
    halflife: float = DEFAULT_HALFLIFE,
    velocity_halflife: float = DEFAULT_VELOCITY_HALFLIFE,
    acceleration_halflife: float = 0.0,
    v_max: float | None = None,
    a_max: float | None = None,
    snap: float = DEFAULT_SNAP,
) -> Array:
    """Tracking-spring filter of vector signals ``[T, ...]`` (e.g. root positions [T, 3]) -> same shape.

    ``v_max`` / ``a_max`` (units/s, units/s^2) clip the targets per component.
    """
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim < 1 or p.shape[0] == 0:
        raise TrackingError(f"positions must have shape [T, ...] with T >= 1, got {p.shape}")
    if not np.all(np.isfinite(p)):
        raise TrackingError("positions contain NaN or infinite values")
    dt = _check_dt(dt)
    T = p.shape[0]
    xg, vg, ag = _gains(dt, halflife, velocity_halflife, acceleration_halflife)
    modes = _modes(T, cuts)
    if np.all(modes == 2) and v_max is None and a_max is None:
        return p.copy()
    vt = np.zeros_like(p)
    vt[1:] = (p[1:] - p[:-1]) / dt
    try:
        e, _ = track_errors(vt, dt, xg, vg, ag, modes=modes, v_max=v_max, a_max=a_max, snap=snap)
    except SpringError as err:
        raise TrackingError(str(err)) from None
    return np.where(e != 0.0, p + e, p)


# ----------------------------------------------------------------------------------------------
# discontinuity detection


def varying_position_joints(motion: Motion) -> NDArray[np.int64]:
    """Indices of joints whose local position changes over the clip (root, joints with position channels)."""
    p = motion.positions
    return np.nonzero(np.any(p != p[:1], axis=(0, 2)))[0]


def discontinuity_scores(motion: Motion, params: PopParams | None = None) -> Array:
    """Per-frame pop score [T]: the largest over joints (rotations and moving positions) of the
    two-sided velocity spike divided by what the clip's own motion makes plausible for that joint
    at that time (:func:`jointlimits.cleanup.pops.pop_scores`). Above 1 is implausible."""
    if motion.num_frames < 3:
        return np.zeros(motion.num_frames)
    rs, ps = pop_scores(motion, params)
    return np.maximum(rs.max(axis=1, initial=0.0), ps.max(axis=1, initial=0.0))


def detect_discontinuities(
    motion: Motion, threshold: float = DEFAULT_THRESHOLD, *, params: PopParams | None = None
) -> NDArray[np.int64]:
    """Frames t where a pop enters or leaves (``q[t]`` does not follow from ``q[t-1]``):
    :func:`discontinuity_scores` > ``threshold`` (1 = the plausible bound; larger is more lenient).

    A burst of ``k`` frames starting at ``s`` gives cuts at ``s`` and ``s + k``; a jump that stays,
    one cut. Clean capture gives none (see ``benchmarks/bench_pops.py`` for measured rates).
    """
    if not (np.isfinite(threshold) and threshold > 0):
        raise TrackingError(f"threshold must be > 0, got {threshold!r}")
    motion.check_finite()
    score = discontinuity_scores(motion, params)
    return np.nonzero(score > threshold)[0].astype(np.int64)


# ----------------------------------------------------------------------------------------------
# motions


def _cuts_for(motion: Motion, cuts: Sequence[int] | NDArray[np.integer] | None) -> NDArray[np.int64]:
    if cuts is None:
        return np.zeros(0, np.int64)
    c = np.asarray(cuts).reshape(-1)
    if c.size and c.dtype.kind not in "iu":
        if not np.all(np.isfinite(c)) or np.any(c != np.round(c)):
            raise TrackingError(f"discontinuity frames must be integers, got {list(c)}")
    c = np.unique(c.astype(np.int64))
    if c.size and (c[0] < 0 or c[-1] >= motion.num_frames):
        raise TrackingError(f"discontinuity frames must be in [0, {motion.num_frames - 1}], got {c.tolist()}")
    return c


def filter_motion(
    motion: Motion,
    cuts: Sequence[int] | NDArray[np.integer] | None = None,
    detect: bool = False,
    threshold: float = DEFAULT_THRESHOLD,
    halflife: float = DEFAULT_HALFLIFE,
    *,
    velocity_halflife: float = DEFAULT_VELOCITY_HALFLIFE,
    acceleration_halflife: float = 0.0,
    v_max: float | None = None,
    a_max: float | None = None,
    position_v_max: float | None = None,
    position_a_max: float | None = None,
    snap: float = DEFAULT_SNAP,
) -> Motion:
    """Remove pops at discontinuities (given ``cuts`` and/or ``detect``-ed) from a motion -> new Motion.

    Rotations of every joint and positions of every joint that moves are tracked; ``v_max``/``a_max``
    (rad/s, rad/s^2) and ``position_v_max``/``position_a_max`` (units/s, units/s^2) clip the targets,
    for clips whose jumps are unknown. Frames the filter does not touch are returned bit-exact.
    """
    if not isinstance(motion, Motion):
        raise TrackingError(f"filter_motion needs a Motion, got {type(motion).__name__}")
    motion.check_finite()
    c = _cuts_for(motion, cuts)
    if detect:
        c = np.union1d(c, detect_discontinuities(motion, threshold)).astype(np.int64)
    dt = motion.frame_time
    kw = dict(
        halflife=halflife, velocity_halflife=velocity_halflife, acceleration_halflife=acceleration_halflife, snap=snap
    )
    rot = track_rotations(motion.rotations, c, dt, v_max=v_max, a_max=a_max, **kw)
    pos = motion.positions.copy()
    vj = varying_position_joints(motion)
    if vj.size:
        pos[:, vj] = track_positions(motion.positions[:, vj], c, dt, v_max=position_v_max, a_max=position_a_max, **kw)
    return dataclasses.replace(motion, rotations=rot, positions=pos)


def _yaw(q: Array, up: Array) -> Array:
    # rotation about the up axis closest to q (twist of a swing-twist decomposition), unit, w >= 0
    proj = np.sum(q[..., 1:] * up, axis=-1, keepdims=True) * up
    t = np.concatenate([q[..., :1], proj], axis=-1)
    n = np.linalg.norm(t, axis=-1, keepdims=True)
    t = np.where(n > 1e-9, t / np.where(n > 1e-9, n, 1.0), np.array([1.0, 0.0, 0.0, 0.0]))
    return quat.abs(t)


def _up_vector(motion: Motion, up: str | None) -> Array:
    from ..motion.units import guess_up_axis, parse_up_axis, up_vector

    return up_vector(parse_up_axis(guess_up_axis(motion) if up is None else up, TrackingError))


def splice(
    a: Motion,
    b: Motion,
    at: int | None = None,
    smooth: bool = True,
    *,
    align: bool = True,
    up: str | None = None,
    halflife: float = DEFAULT_HALFLIFE,
    velocity_halflife: float = DEFAULT_VELOCITY_HALFLIFE,
    snap: float = DEFAULT_SNAP,
) -> Motion:
    """Frames ``a[:at]`` followed by all of ``b`` (same skeleton); ``at`` defaults to the end of ``a``.

    ``align`` turns and moves ``b`` about the up axis (guessed when ``up`` is None) so that its root
    starts where ``a``'s root would be one frame after ``a[at-1]``, facing the same way (height kept).
    ``smooth`` filters the pop at the join away with :func:`filter_motion` (cut at frame ``at``).
    """
    for name, m in (("a", a), ("b", b)):
        if not isinstance(m, Motion):
            raise TrackingError(f"splice needs Motions, {name} is {type(m).__name__}")
        if m.num_frames < 1:
            raise TrackingError(f"clip {name} has no frames")
        m.check_finite()
    sa, sb = a.skeleton, b.skeleton
    if sa.names != sb.names or not np.array_equal(sa.parents, sb.parents):
        raise SkeletonError("cannot splice clips of different skeletons (joint names or parents differ)")
    if not np.isclose(a.frame_time, b.frame_time, rtol=1e-4, atol=0.0):
        raise TrackingError(f"frame times differ: {a.frame_time} vs {b.frame_time}; resample one clip first")
    if at is None:
        at = a.num_frames
    if (
        isinstance(at, bool)
        or not isinstance(at, (int, float, np.integer, np.floating))
        or not math.isfinite(at)
        or int(at) != at
        or not 1 <= int(at) <= a.num_frames
    ):
        raise TrackingError(f"at must be a frame of a in [1, {a.num_frames}], got {at!r}")
    at = int(at)
    rot_b = b.rotations.copy()
    pos_b = b.positions.copy()
    # joints without position channels sit at their OFFSET: use a's skeleton throughout
    fixed = [j for j in range(sa.num_joints) if not sa.has_position_channels(j)]
    if fixed:
        pos_b[:, fixed] = sa.offsets[fixed]
    if align:
        upv = _up_vector(a, up)
        last = a.rotations[at - 1, 0]
        ya, yb = _yaw(quat.normalize(last), upv), _yaw(quat.normalize(b.rotations[0, 0]), upv)
        turn = quat.mul_inv(ya, yb)  # yaw that takes b's facing onto a's
        rot_b[:, 0] = quat.mul(turn, rot_b[:, 0])
        step = a.positions[at - 1, 0] - a.positions[at - 2, 0] if at >= 2 else np.zeros(3)
        anchor = a.positions[at - 1, 0] + step
        rel = quat.mul_vec(turn, b.positions[:, 0] - b.positions[0, 0])
        new_root = anchor + rel
        # keep b's own height along the up axis
        h_b = b.positions[:, 0] @ upv
        new_root = new_root - np.outer(new_root @ upv, upv) + np.outer(h_b, upv)
        pos_b[:, 0] = new_root
    rot = np.concatenate([a.rotations[:at], rot_b], axis=0)
    pos = np.concatenate([a.positions[:at], pos_b], axis=0)
    src = None
    if a.source_euler is not None and b.source_euler is not None:
        ea, eb = a.source_euler, b.source_euler
        if ea[1].shape[1:] == eb[1].shape[1:]:
            try:
                src = (np.concatenate([ea[0][:at], eb[0]], axis=0), np.concatenate([ea[1][:at], eb[1]], axis=0))
            except JointLimitsError:  # a clip's file changed since it was loaded: written from rotations
                src = None
    out = Motion(a.skeleton.copy(), rot, pos, a.frame_time, source_euler=src)
    if smooth and at < out.num_frames:
        out = filter_motion(out, cuts=[at], halflife=halflife, velocity_halflife=velocity_halflife, snap=snap)
    return out

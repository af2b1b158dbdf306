"""The leg solve's helpers: targets kept within reach (:func:`_soft_reach`), the knee's pole, the foot
turned to hold its toe, the limits of a joint, the leg's forward kinematics and the step bound
(:func:`_no_new_steps`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...motion import quat
from ...motion.skeleton import Motion
from ..contacts import find_feet

Array = NDArray[np.float64]


#: the window (seconds either side) of the input's largest step that bounds a locked joint's step
STEP_SECONDS = 0.25
#: the ``step_margin`` that keeps every step within 2 degrees of the input's local largest
STEP_MARGIN_DEGREES = 1.99


#: how the step bound is kept (:data:`jointlimits.motion.steps.WALKERS`): "forward" lags behind a
#: fast target, "centred" spreads the lag before and after (measured: more skating on LAFAN1)
STEP_WALK = "forward"


#: targets farther from the hip than this fraction of the leg's length are pulled in smoothly, so
#: that a held foot never straightens the knee into its singular (snapping) pose
SOFT_REACH = 0.97


def _soft_reach(hip: Array, knee: Array, ankle: Array, target: Array, up: int | None = None) -> Array:
    """Targets with their distance ``d`` from the hip softly limited below the leg's length ``L``:
    beyond ``a L`` (``a = SOFT_REACH``) ``d' = a L + (1 - a) L tanh((d - a L) / ((1 - a) L))``, never
    farther than the animated ankle already is. With ``up`` (the vertical axis) the target keeps its
    horizontal position and rises toward the hip (a planted foot does not slide, the heel lifts);
    only when the horizontal distance alone is too long is that shortened."""
    L = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
    cur = np.linalg.norm(ankle - hip, axis=-1)
    v = target - hip
    d = np.linalg.norm(v, axis=-1)
    a = SOFT_REACH * L
    span = np.maximum((1.0 - SOFT_REACH) * L, 1e-12)
    soft = np.where(d > a, a + span * np.tanh((d - a) / span), d)
    soft = np.maximum(soft, np.minimum(d, cur))
    if up is None:
        return hip + v * (soft / np.maximum(d, 1e-12))[:, None]
    vh = v.copy()
    vh[:, up] = 0.0
    dh = np.linalg.norm(vh, axis=-1)
    short = soft < d
    out = v.copy()
    # the vertical part shrinks first (continuous: at dh == soft both branches give vh, 0 up)
    rise = short & (dh <= soft)
    out[rise, up] = np.sign(v[rise, up]) * np.sqrt(np.maximum(soft[rise] ** 2 - dh[rise] ** 2, 0.0))
    flat = short & (dh > soft)
    out[flat] = vh[flat] * (soft[flat] / np.maximum(dh[flat], 1e-12))[:, None]
    return hip + out


def _knee_pole(hip: Array, knee: Array, ankle: Array) -> Array:
    """A pole point one leg length out along the animated knee's bend direction (the knee's offset
    from the hip-ankle line): with a target far from the animated ankle, "the circle point nearest
    the animated knee" can flip sides when that knee lies near the new hip-target axis; the pole far
    out in the bend direction keeps the knee on its side."""
    L = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
    e = ankle - hip
    e = e / np.maximum(np.linalg.norm(e, axis=-1), 1e-12)[:, None]
    n = (knee - hip) - np.sum((knee - hip) * e, -1)[:, None] * e
    ln = np.linalg.norm(n, axis=-1)
    ok = ln > 1e-6 * L
    return np.where(ok[:, None], knee + n * (L / np.maximum(ln, 1e-300))[:, None], knee)


def _hold_toe(foot_g: Array, ankle: Array, toe_off: Array, toe_want: Array, w: Array, up: int | None) -> Array:
    """Global foot rotations turned about the reached ankle so that the toe (local offset ``toe_off``)
    lands horizontally on ``toe_want`` keeping the foot's length (its height on the side it points
    to), by weight ``w``; with ``up`` None the whole position is the aim."""
    cur = quat.mul_vec(foot_g, toe_off)
    want = toe_want - ankle
    if up is not None:
        ln2 = np.sum(cur * cur, -1)
        want[:, up] = 0.0
        dh2 = np.sum(want * want, -1)
        over = dh2 > ln2
        want[over] *= np.sqrt(ln2[over] / dh2[over])[:, None]
        rem = np.sqrt(np.maximum(ln2 - np.sum(want * want, -1), 0.0))
        want[:, up] = np.where(cur[:, up] >= 0.0, rem, -rem)
    turn = quat.between(cur, want)
    turn = quat.slerp(quat.identity(len(w)), turn, np.clip(w, 0.0, 1.0))
    return quat.normalize(quat.mul(turn, foot_g))


def _joint_limit(limits: Any, j: int) -> Any:
    """The limit of joint ``j`` in a JointLimits-like model (None when it has none or is disabled)."""
    if hasattr(limits, "joints") and isinstance(limits.joints, dict):
        if j not in limits.joints:
            return None
        en = getattr(limits, "enabled", None)
        if en is not None and not en[j]:
            return None
        return limits.joints[j]
    try:
        return limits.joint(j)
    except Exception:
        return None


def _leg_fk(par: Array, base: Array, off: Array, hip: Array, knee: Array) -> Array:
    """Global foot position of hip -> knee -> foot: ``base + P o_h``, ``+ P H o_k``, ``+ P H K o_f``."""
    g = quat.mul(par, hip)
    p = base + quat.mul_vec(par, off[:, 0]) + quat.mul_vec(g, off[:, 1])
    return p + quat.mul_vec(quat.mul(g, knee), off[:, 2])


def _no_new_steps(
    motion: Motion,
    rot: Array,
    chains: Sequence[tuple[int, int, int]],
    limits: Any,
    limit_ankle: bool,
    margin: float,
) -> Array:
    """The changed leg joints walked toward their solved rotations at no more than the input's
    largest step at that joint within ``STEP_SECONDS`` plus ``margin`` degrees
    (:func:`jointlimits.motion.steps.walk`), inside their limits, so that a lock adds no one-frame
    jump (a knee snapping straight, a flip between IK branches). Hip and knee walk first; the foot
    then walks toward the local rotation that gives it its solved global rotation under the walked
    hip and knee (so a lagging knee does not turn the planted foot, and the toe stays)."""
    from ...motion.steps import WALKERS, local_step_bound

    sk = motion.skeleton
    feet = set(find_feet(sk))

    def bounded(j: int, target: Array) -> Array:
        lim = _joint_limit(limits, j) if limits is not None and (limit_ankle or j not in feet) else None
        bound = local_step_bound(motion.rotations[:, j], motion.frame_time, STEP_SECONDS, margin)

        def keep(y: Array, t: int, lim: Any = lim) -> Array:
            return y if lim is None else lim.project(y)

        return WALKERS[STEP_WALK](target, bound, keep)

    for h, k, f in chains:
        hk = (rot[:, h].copy(), rot[:, k].copy())
        solved = quat.mul(quat.mul(rot[:, h], rot[:, k]), rot[:, f])
        for j in (h, k):
            if np.any(rot[:, j] != motion.rotations[:, j]):
                rot[:, j] = bounded(j, rot[:, j])
        moved = np.any(rot[:, f] != motion.rotations[:, f], axis=-1)
        if not np.any(moved):
            continue
        want = rot[:, f].copy()
        lag = moved & (np.any(rot[:, h] != hk[0], axis=-1) | np.any(rot[:, k] != hk[1], axis=-1))
        if np.any(lag):
            w = quat.normalize(quat.inv_mul(quat.mul(rot[lag, h], rot[lag, k]), solved[lag]))
            want[lag] = np.where(np.sum(w * want[lag], axis=-1, keepdims=True) < 0.0, -w, w)
        rot[:, f] = bounded(f, want)
    return rot

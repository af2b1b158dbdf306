"""Where each foot goes: per frame the offset and turn that keep its planted heel or toe on its lock
(:func:`_planted_offsets`), and the weight with which a planted toe is held (:func:`_toe_weight`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ...motion import quat
from ..contacts import runs

Array = NDArray[np.float64]


#: frames over which the lock offset is ramped in before and out after each contact
DEFAULT_BLEND_FRAMES = 6
#: largest turn (degrees) of a foot whose heel and toe are both held; beyond it the toe slips
MAX_TURN_DEGREES = 60.0
#: a foot turn that is let go fades by at most this many degrees per frame
MAX_FADE_DEGREES = 6.0
#: largest distance (m) a locked heel or toe is held away from its animation; beyond it the lock
#: slides (off by default: on LAFAN1 any finite value traded more skating for few fewer pops)
MAX_OFFSET = float("inf")
#: a released correction at most this many times the animated foot's own travel across a gap is
#: let go within that gap (hidden in the step) instead of fading on into the next contact
HIDE_IN_STEP = 2.0
#: largest acceleration (m/s^2) a released lock adds to the foot while it fades out; what a gap is too
#: short for keeps fading into the next contact (whose own lock is taken afresh)
RELEASE_ACCELERATION = 10.0


def _smoothstep(x: Array) -> Array:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _still(points: Sequence[Array], a: int, b: int, step: float, up: int | None) -> bool:
    """Whether every point travels at most ``step`` per frame (horizontally when ``up`` is given)
    from frame ``a`` to frame ``b``."""
    for p in points:
        d = p[b] - p[a]
        if up is not None:
            d = d.copy()
            d[up] = 0.0
        if np.linalg.norm(d) > step * (b - a):
            return False
    return True


def _planted_offsets(
    pa: Array,
    pt: Array | None,
    heel: NDArray[np.bool_],
    toe: NDArray[np.bool_],
    blend_frames: int,
    lock_frames: int,
    up: int | None,
    max_offset: float = np.inf,
    bridge_step: float = np.inf,
    release_acc: float = np.inf,
    max_fade: float = MAX_FADE_DEGREES,
) -> tuple[Array, Array, NDArray[np.bool_]]:
    """How to move one foot so that what is planted stays put -> (ankle offsets ``o [F, 3]``, global
    foot rotations ``R [F, 4]`` applied about the ankle, frames that need a solve).

    The moved foot has its ankle at ``pa + o`` and its toe at ``pa + o + R (pt - pa)``. Frames are
    taken run by run of one state: *heel* (ankle in contact, toe not): the ankle stays at its lock;
    *both*: the ankle stays and ``R`` turns the foot about it (shortest arc, keeping its length, at
    most ``MAX_TURN_DEGREES``) so that the toe stays at its lock too; *toe*: the toe stays and the
    ankle follows the animated foot about it (the heel lifts about the toe); *none*: the corrections
    fade out. A run that follows another run starts from the previous frame's moved foot, so
    nothing jumps at a switch; a run after a gap takes its lock afresh from the animation, so
    corrections never pile up from step to step (on LAFAN1's walk4 they had turned a foot 68
    degrees off its animation after 700 frames of shuffling). Offsets fade over ``blend_frames``
    and rotations at most ``max_fade`` degrees per frame on average (smoothstep). A planted point whose
    animation drifts farther than ``max_offset`` from its lock drags the lock along (it is sliding,
    and a long drift would be released as a pop). ``up``: that offset component
    is 0 (heights follow the animation). ``lock_frames``: a lock taken from rest averages that many
    frames. A gap of 1-2 frames between contacts is bridged when the animated ankle and toe travel at
    most ``bridge_step`` per frame (horizontally) across it. ``release_acc`` (units per frame
    squared) bounds how fast a released offset may fade; what a gap is too short for keeps fading
    (a separate layer) into the next contact, unless it is at most ``HIDE_IN_STEP`` times the
    animated foot's own travel across the gap (then it goes within the gap, hidden in the step).
    Default: every fade completes within its gap."""
    F = pa.shape[0]
    o = np.zeros((F, 3))
    R = quat.identity(F)
    st = np.where(heel, 1, 0) + (np.where(toe, 2, 0) if pt is not None else 0)  # 0 none, 1 heel, 2 toe, 3 both
    # a gap of a frame or two between two contacts keeps the state before it (no release and re-lock)
    # unless the animated foot steps meanwhile (a shuffle step is released and locked again)
    pts = [pa] if pt is None else [pa, pt]
    for g0, g1 in runs(st == 0):
        if g0 > 0 and g1 < F and g1 - g0 <= 2 and _still(pts, g0 - 1, g1, bridge_step, up):
            st[g0:g1] = st[g0 - 1]
    if not (st > 0).any():
        return o, R, st > 0
    B = max(int(blend_frames), 0)
    hz = np.ones(3)
    if up is not None:
        hz[up] = 0.0
    edges = np.nonzero(np.diff(st))[0] + 1
    starts = np.concatenate([[0], edges]).tolist()
    stops = np.concatenate([edges, [F]]).tolist()
    lf = max(int(lock_frames), 1)
    carry: list[tuple[int, Array, Array]] = []
    for s0, e0 in zip(starts, stops):
        k = int(st[s0])
        o_prev = np.zeros(3) if s0 == 0 else o[s0 - 1]
        r_prev = quat.identity() if s0 == 0 else R[s0 - 1]
        # a run that follows another run starts where the previous frame left the foot
        rest = s0 == 0 or st[s0 - 1] == 0
        if rest and k != 0:
            # after a gap the lock is taken afresh; what the gap could not fade is a separate layer
            # that keeps fading (added below), so corrections never pile up from step to step
            o_prev, r_prev = np.zeros(3), quat.identity()
        n = e0 - s0
        nb = max(B, int(np.ceil(np.degrees(quat.angle(r_prev)) / max_fade)))
        fade_r = 1.0 - _smoothstep(np.arange(1, n + 1) / (nb + 1.0)) if nb else np.zeros(n)
        r_fade = quat.slerp(np.broadcast_to(quat.identity(), (n, 4)), np.broadcast_to(r_prev, (n, 4)), fade_r)
        if k == 0:
            # released: the corrections fade out over blend_frames, or longer where that would
            # accelerate the foot by more than release_acc (smoothstep's peak second difference is
            # 6 / L^2 of its span); what a gap is too short for keeps fading into the next contact
            last = n if e0 < F else n + 1
            if np.isfinite(release_acc):
                dist = float(np.linalg.norm(o_prev))
                bo = max(B + 1, int(np.ceil(np.sqrt(6.0 * dist / max(release_acc, 1e-300)))))
                br = nb + 1
            else:
                bo, br = min(B + 1, last), min(nb + 1, last)
            if HIDE_IN_STEP and e0 < F and s0 > 0:
                # a correction no larger than the animated foot's own step across the gap is let go
                # within the gap: it hides in that step instead of sliding the next contact
                step = min(float(np.linalg.norm((p[e0] - p[s0 - 1]) * hz)) for p in pts)
                lv = float(np.linalg.norm(pt[s0 - 1] - pa[s0 - 1])) if pt is not None else 0.0
                if float(np.linalg.norm(o_prev)) + lv * quat.angle(r_prev) <= HIDE_IN_STEP * step:
                    bo, br = min(bo, last), min(br, last)
            fade_o = 1.0 - _smoothstep(np.arange(1, n + 1) / bo)
            fr_ = 1.0 - _smoothstep(np.arange(1, n + 1) / br)
            o[s0:e0] = fade_o[:, None] * o_prev
            R[s0:e0] = quat.slerp(np.broadcast_to(quat.identity(), (n, 4)), np.broadcast_to(r_prev, (n, 4)), fr_)
            rest_n = min(max(bo, br) - n - 1, F - e0)
            if e0 < F and rest_n > 0:
                t = np.arange(n + 1, n + 1 + rest_n)
                carry.append(
                    (
                        e0,
                        (1.0 - _smoothstep(t / bo))[:, None] * o_prev,
                        quat.slerp(
                            quat.identity(rest_n), np.broadcast_to(r_prev, (rest_n, 4)), 1.0 - _smoothstep(t / br)
                        ),
                    )
                )
            continue
        # where the previous frame left the ankle and the toe
        if rest:
            ankle_prev = pa[s0 : min(e0, s0 + lf)].mean(axis=0)
            toe_prev = pt[s0 : min(e0, s0 + lf)].mean(axis=0) if pt is not None else None
        else:
            ankle_prev = pa[s0 - 1] + o_prev
            toe_prev = ankle_prev + quat.mul_vec(r_prev, pt[s0 - 1] - pa[s0 - 1]) if pt is not None else None
        if k == 1:  # the heel alone is planted: the ankle stays
            o[s0:e0] = (ankle_prev - pa[s0:e0]) * hz
            R[s0:e0] = r_fade
        elif k == 3:  # both: heel and toe stay, the foot turned about the ankle to reach both locks
            assert pt is not None  # toe contacts (k 2 and 3) come from a toe
            v0 = pt[s0:e0] - pa[s0:e0]
            cur = quat.mul_vec(r_prev, v0)
            o[s0:e0] = (ankle_prev - pa[s0:e0]) * hz
            d = np.broadcast_to((toe_prev - ankle_prev) * hz, cur.shape)
            if up is None:
                want = d
            else:  # the up component keeps the foot's length, on the side it pointed to when the run began
                rem = np.sqrt(np.maximum(np.sum(cur * cur, -1) - np.sum(d * d, -1), 0.0))
                want = d.copy()
                want[:, up] = rem if cur[0, up] >= 0 else -rem
            turn = quat.between(cur, want)
            ang = quat.angle(turn)
            big = ang > np.radians(MAX_TURN_DEGREES)  # a foot that really pivots is let pivot
            if np.any(big):
                turn[big] = quat.slerp(
                    quat.identity(int(big.sum())), turn[big], np.radians(MAX_TURN_DEGREES) / ang[big]
                )
            R[s0:e0] = quat.mul(turn, r_prev)
        else:  # the toe alone is planted: the foot pivots about it
            assert pt is not None
            v0 = pt[s0:e0] - pa[s0:e0]
            R[s0:e0] = r_fade
            o[s0:e0] = (toe_prev - quat.mul_vec(r_fade, v0) - pa[s0:e0]) * hz
        if np.isfinite(max_offset):
            # a lock the animation drifts away from is dragged along (its drift beyond max_offset)
            seg = o[s0:e0]
            ln = np.linalg.norm(seg, axis=-1)
            excess = np.maximum.accumulate(np.maximum(ln - max_offset, 0.0))
            seg *= (np.maximum(ln - excess, 0.0) / np.maximum(ln, 1e-300))[:, None]
    for c0, oc, rc in carry:
        o[c0 : c0 + len(oc)] += oc
        R[c0 : c0 + len(rc)] = quat.mul(rc, R[c0 : c0 + len(rc)])
    need = np.any(o != 0.0, axis=-1) | (quat.angle(R) > 0.0) | (st > 0)
    return o, R, need


def _toe_weight(
    toe: NDArray[np.bool_],
    blend_frames: int,
    pt: Array | None = None,
    bridge_step: float = np.inf,
    up: int | None = None,
) -> Array:
    """Per frame how much a planted toe is held by turning the foot about the reached ankle: 1 while
    the toe is planted (gaps of 1-2 frames bridged where the toe travels at most ``bridge_step`` per
    frame), fading out (smoothstep) over ``blend_frames`` after each run."""
    F = toe.shape[0]
    m = toe.copy()
    for g0, g1 in runs(~m):
        if g0 > 0 and g1 < F and g1 - g0 <= 2 and (pt is None or _still([pt], g0 - 1, g1, bridge_step, up)):
            m[g0:g1] = True
    w = m.astype(float)
    B = max(int(blend_frames), 0)
    for _, e in runs(m):
        n = min(B, F - e)
        if n > 0:
            w[e : e + n] = np.maximum(w[e : e + n], 1.0 - _smoothstep(np.arange(1, n + 1) / (B + 1.0)))
    return w

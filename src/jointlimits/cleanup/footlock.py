"""Foot locking: find the frames where a heel or a toe is planted and pin it there with two-bone leg IK.

* :func:`detect_contacts` (from :mod:`.contacts`, the one contact detector): a foot is planted while
  its joint is low (within ``height_threshold`` metres of the clip's ground level for that joint, a
  low percentile of its heights) and slow (horizontal speed at most ``velocity_threshold`` m/s);
  runs shorter than ``min_frames`` are dropped and gaps shorter than it are filled. Thresholds are
  in metres and converted with :func:`jointlimits.motion.units.guess_units`.
  The same test on the toe (ball) joint gives the toe contacts (:func:`find_toes`).
* :func:`measure_skating`: horizontal foot displacement between consecutive contact frames.
* :func:`foot_skating`: the *independent* measure: horizontal motion (cm) of the ankle and toe
  joints on frames where that joint is low and slow, with thresholds taken from the clip's body
  height (not from the contact detector); see its docstring.
* :func:`footlock`: per foot and frame the planted point is the heel (ankle) while the ankle is in
  contact, else the toe while the toe is in contact. Each run of one planted point keeps that point
  where it was when the run began (where the previous run had put it, so switching from heel to
  toe does not jump): the whole foot is moved by ``o = lock - point`` (horizontally), so in a toe
  run the toe stays put while the animated foot lifts its heel about it. The offset is ramped in
  before and out after each planted stretch over ``blend_frames`` (smoothstep); the legs (UpLeg,
  Leg, Foot) are solved for all frames in one batch with :func:`~jointlimits.ik.two_bone` (the
  knee on its animated bend side), projected into the joint limits, refined with limited CCD where the projection
  pulled the ankle off its target; the foot keeps its global orientation, turned about the reached
  ankle where the toe is planted so that the toe stays on its lock (then, with limits, its local
  rotation is projected into the ankle's limit). Targets out of the leg's reach rise toward the hip
  (the heel lifts) instead of sliding; the knee keeps its animated bend side. A run that follows
  another run keeps its lock (no re-lock at a heel/toe switch); a 1-2 frame detection gap is
  bridged only where the foot does not step; a released lock fades at a bounded acceleration and a
  gap too short for it carries the rest into the next contact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ..errors import IKError
from ..ik.ccd import ccd
from ..ik.two_bone import two_bone
from ..motion import quat
from ..motion.skeleton import Motion, forward_kinematics
from ..motion.units import guess_units, guess_up_axis, up_axis_index
from .contacts import (
    DEFAULT_HEIGHT_THRESHOLD,
    DEFAULT_MIN_FRAMES,
    DEFAULT_VELOCITY_THRESHOLD,
    contact_segments,
    detect_contacts,
    find_feet,
    find_toes,
    resolve_feet,
    runs,
)

__all__ = [
    "find_feet",
    "find_toes",
    "detect_contacts",
    "contact_segments",
    "measure_skating",
    "foot_skating",
    "foot_drift",
    "footlock",
    "FootlockSettings",
    "FootlockReport",
    "SKATE_LOW",
    "SKATE_SLOW",
    "DEFAULT_HEIGHT_THRESHOLD",
    "DEFAULT_VELOCITY_THRESHOLD",
    "DEFAULT_MIN_FRAMES",
    "DEFAULT_BLEND_FRAMES",
    "STEP_MARGIN_DEGREES",
]

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
#: frames added to both ends of each detected contact when locking (the landing and take-off frames)
DEFAULT_MARGIN = 1


# --------------------------------------------------------------------------- feet and contacts
def _up_index(motion: Motion) -> tuple[int, float]:
    return up_axis_index(guess_up_axis(motion))


def _horizontal(p: Array, k: int) -> Array:
    h = p.copy()
    h[..., k] = 0.0
    return h


def _check_contacts(contacts: Any, F: int, n: int) -> NDArray[np.bool_]:
    c = np.asarray(contacts)
    if c.shape != (F, n):
        raise IKError(f"contacts must be bool[{F}, {n}] (frames, feet), got shape {c.shape}")
    return c.astype(bool)


def measure_skating(motion: Motion, contacts: NDArray[np.bool_], feet: Sequence[str | int] | None = None) -> dict:
    """Foot skating: horizontal displacement ``|Δp_h|`` of each foot between consecutive frames
    that are both in contact. Returns totals and means per contact frame, in metres and cm,
    overall and per foot."""
    idx = resolve_feet(motion, feet)
    c = _check_contacts(contacts, motion.num_frames, len(idx))
    mpu = guess_units(motion).metres_per_unit
    k, _ = _up_index(motion)
    _, gp = forward_kinematics(motion)
    ph = _horizontal(gp[:, idx] * mpu, k)
    both = c[1:] & c[:-1]
    d = np.linalg.norm(ph[1:] - ph[:-1], axis=-1) * both
    per = {}
    for i, j in enumerate(idx):
        n = int(both[:, i].sum())
        tot = float(d[:, i].sum())
        per[motion.skeleton.names[j]] = {
            "frames": n,
            "total_m": tot,
            "mean_m": tot / n if n else 0.0,
            "mean_cm": 100.0 * tot / n if n else 0.0,
            "max_cm": 100.0 * float(d[:, i].max(initial=0.0)),
        }
    n = int(both.sum())
    tot = float(d.sum())
    return {
        "frames": n,
        "total_m": tot,
        "total_cm": 100.0 * tot,
        "mean_m": tot / n if n else 0.0,
        "mean_cm": 100.0 * tot / n if n else 0.0,
        "per_foot": per,
    }


#: independent skating measure: a joint is low within this fraction of body height of its own
#: lowest level (2nd percentile) ...
SKATE_LOW = 0.04
#: ... and slow below this many body heights per second (horizontal)
SKATE_SLOW = 0.25


def foot_skating(
    motion: Motion,
    reference: Motion | None = None,
    feet: Sequence[str | int] | None = None,
    low: float = SKATE_LOW,
    slow: float = SKATE_SLOW,
) -> dict:
    """Independent foot skating (cm): per ankle and toe joint, the horizontal distance it travels
    between consecutive frames on which it is *low and slow*.

    Low: within ``low`` x body height of the joint's own ground level (2nd percentile of its
    height); slow: horizontal speed below ``slow`` body heights per second. Both are judged on
    ``reference`` (default: ``motion``), so a locked clip is measured on the frames of its input;
    distances are measured on ``motion``. Body height is :func:`jointlimits.motion.units.body_height` of
    the reference, so the thresholds follow the clip's own size and units; nothing here uses the
    contact detector. Returns ``{"total_cm", "ankle_cm", "toe_cm", "frames", "per_joint": {name:
    {"cm", "frames", "kind"}}}``.
    """
    from ..motion.units import body_height

    ref = motion if reference is None else reference
    if ref.num_frames != motion.num_frames or ref.skeleton.names != motion.skeleton.names:
        raise IKError("reference must be the same clip (same joints and frame count)")
    idx = resolve_feet(ref, feet)
    toes = find_toes(ref.skeleton, idx)
    joints = [(j, "ankle") for j in idx] + [(t, "toe") for t in toes if t is not None]
    ids = [j for j, _ in joints]
    k, sign = _up_index(ref)
    H = body_height(ref)
    mpu = guess_units(ref).metres_per_unit
    _, gr = forward_kinematics(ref)
    _, gm = forward_kinematics(motion)
    pr, pm = gr[:, ids], gm[:, ids]
    h = sign * pr[..., k]
    # an empty clip has no ground level and no skating
    ground = np.percentile(h, 2.0, axis=0) if len(h) else np.zeros(h.shape[1:])
    is_low = h - ground <= low * H
    dr = np.linalg.norm(np.diff(_horizontal(pr, k), axis=0), axis=-1)
    dm = np.linalg.norm(np.diff(_horizontal(pm, k), axis=0), axis=-1)
    use = is_low[1:] & is_low[:-1] & (dr <= slow * H * ref.frame_time)
    cm = (dm * use).sum(axis=0) * mpu * 100.0
    per: dict[str, dict[str, Any]] = {
        ref.skeleton.names[j]: {"cm": float(cm[i]), "frames": int(use[:, i].sum()), "kind": kind}
        for i, (j, kind) in enumerate(joints)
    }
    ank = float(sum(v["cm"] for v in per.values() if v["kind"] == "ankle"))
    toe = float(sum(v["cm"] for v in per.values() if v["kind"] == "toe"))
    return {"total_cm": ank + toe, "ankle_cm": ank, "toe_cm": toe, "frames": int(use.sum()), "per_joint": per}


def foot_drift(motion: Motion, reference: Motion, feet: Sequence[str | int] | None = None) -> dict:
    """How far ``motion``'s feet are from ``reference``'s (the same clip before locking), another
    measure independent of the contact detector: ``{"cm": [F, n]`` horizontal distance of each ankle
    and toe joint, ``"heading_deg": [...]`` per foot with a toe the change of the ankle->toe heading
    on frames where that vector lies mostly flat (horizontal part over 0.7 of its length) in both}.
    Locks that pile up from step to step show here while skating figures read zero."""
    if reference.num_frames != motion.num_frames or reference.skeleton.names != motion.skeleton.names:
        raise IKError("reference must be the same clip (same joints and frame count)")
    idx = resolve_feet(reference, feet)
    toes = find_toes(reference.skeleton, idx)
    up, _ = _up_index(reference)
    _, g0 = forward_kinematics(reference)
    _, g1 = forward_kinematics(motion)
    ids = idx + [t for t in toes if t is not None]
    d = g1[:, ids] - g0[:, ids]
    d[..., up] = 0.0
    cm = np.linalg.norm(d, axis=-1) * guess_units(reference).metres_per_unit * 100.0
    h = [i for i in range(3) if i != up]
    heading = []
    for a, t in zip(idx, toes):
        if t is None:
            continue
        v0, v1 = g0[:, t] - g0[:, a], g1[:, t] - g1[:, a]
        flat = (np.hypot(v0[:, h[0]], v0[:, h[1]]) > 0.7 * np.linalg.norm(v0, axis=-1)) & (
            np.hypot(v1[:, h[0]], v1[:, h[1]]) > 0.7 * np.linalg.norm(v1, axis=-1)
        )
        y0, y1 = np.arctan2(v0[:, h[0]], v0[:, h[1]]), np.arctan2(v1[:, h[0]], v1[:, h[1]])
        heading.append(np.degrees(np.abs((y1 - y0 + np.pi) % (2 * np.pi) - np.pi))[flat])
    return {"cm": cm, "heading_deg": heading}


# --------------------------------------------------------------------------- locking
@dataclass
class FootlockReport:
    """What :func:`footlock` did: contacts used, skating before/after (see :func:`measure_skating`),
    ``reduction_percent = 100 (1 - after / before)`` of the total, frames changed, solves, how many
    solves the limits changed and how many CCD refined, and the largest distance left between a
    locked foot and its target (cm)."""

    feet: list[str]
    contacts: NDArray[np.bool_]
    segments: int
    skating_before: dict
    skating_after: dict
    reduction_percent: float
    frames_changed: int
    solves: int
    limited: int
    refined: int
    max_target_error_cm: float
    #: toe contacts ``bool[F, n_feet]`` (all False for a foot without a toe joint)
    toe_contacts: NDArray[np.bool_] | None = None
    #: :func:`foot_skating` of the input and of the result (on the input's low-and-slow frames)
    independent_before: dict | None = None
    independent_after: dict | None = None

    @property
    def independent_reduction(self) -> dict:
        """Percent less independent skating, ``{"ankle", "toe", "total"}`` (None where there was none)."""
        out: dict = {}
        b, a = self.independent_before or {}, self.independent_after or {}
        for key in ("ankle", "toe", "total"):
            x, y = b.get(f"{key}_cm", 0.0), a.get(f"{key}_cm", 0.0)
            out[key] = 100.0 * (1.0 - y / x) if x > 0 else None
        return out

    def to_dict(self) -> dict:
        tc = self.toe_contacts
        return {
            "feet": self.feet,
            "segments": self.segments,
            "contact_frames": [int(x) for x in self.contacts.sum(0)],
            "toe_contact_frames": [int(x) for x in tc.sum(0)] if tc is not None else None,
            "skating_before": self.skating_before,
            "skating_after": self.skating_after,
            "reduction_percent": self.reduction_percent,
            "independent_skating_before": self.independent_before,
            "independent_skating_after": self.independent_after,
            "independent_reduction_percent": self.independent_reduction,
            "frames_changed": self.frames_changed,
            "solves": self.solves,
            "limited": self.limited,
            "refined": self.refined,
            "max_target_error_cm": self.max_target_error_cm,
        }


def _smoothstep(x: Array) -> Array:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


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


@dataclass(frozen=True)
class FootlockSettings:
    """The settings of :func:`footlock` (same defaults as its keyword arguments); pass one as
    ``settings=`` and override single fields with keyword arguments, or use :func:`dataclasses.replace`."""

    #: contact detection (:func:`~jointlimits.cleanup.contacts.detect_contacts`): metres above the
    #: joint's ground level, horizontal speed (m/s), shortest contact (frames) ...
    height_threshold: float = DEFAULT_HEIGHT_THRESHOLD
    velocity_threshold: float = DEFAULT_VELOCITY_THRESHOLD
    min_frames: int = DEFAULT_MIN_FRAMES
    #: ... and frames added to both ends of each detected contact
    margin: int = DEFAULT_MARGIN
    #: lock the toe joints too (False: the ankle only)
    toes: bool = True
    #: frames over which the lock offset is ramped in and out
    blend_frames: int = DEFAULT_BLEND_FRAMES
    #: frames averaged for the first lock of a contact
    lock_frames: int = 1
    #: hold the locked point's height too (default: horizontal place only)
    lock_height: bool = False
    #: re-solve by CCD inside the limits where the projection pulled the ankle off its target ...
    refine: bool = True
    #: ... by more than this many metres
    tolerance: float = 0.001
    #: project the ankle's rotation into its limit (hip and knee always are)
    limit_ankle: bool = True
    #: put a planted toe that the ankle's limit moved back by moving the ankle (a second leg solve)
    toe_first: bool = False
    #: turn the foot about the reached ankle so that a planted toe stays on its lock
    hold_toe: bool = True
    #: a changed leg joint steps at most this many degrees more between two frames than the input's
    #: largest step at that joint within 0.25 s (None: unbounded, the locks hold better but a lock
    #: may add a one-frame jump; the CLI uses STEP_MARGIN_DEGREES)
    step_margin: float | None = None


def footlock(
    motion: Motion,
    limits: Any = None,
    contacts: NDArray[np.bool_] | None = None,
    feet: Sequence[str | int] | None = None,
    *,
    settings: FootlockSettings | None = None,
    toe_contacts: NDArray[np.bool_] | None = None,
    **overrides: Any,
) -> tuple[Motion, FootlockReport]:
    """Pin planted heels and toes with two-bone leg IK; returns the new motion and a :class:`FootlockReport`.

    Per foot the chain is (grandparent, parent, foot) = (UpLeg, Leg, Foot). ``contacts`` are the
    heel (ankle) contacts, ``toe_contacts`` those of the toe joints (:func:`find_toes`; detected the
    same way when not given; ``toes=False`` locks the ankle only). Ankle targets come from
    :func:`_planted_offsets` (a detection gap of 1-2 frames is bridged only where the foot moves no
    faster than ``velocity_threshold``; released locks fade at most at ``RELEASE_ACCELERATION``);
    targets the leg cannot reach rise toward the hip keeping their horizontal place
    (:func:`_soft_reach`); all frames of all feet are solved as one batch, ``hip', knee' =
    two_bone(...)`` with the knee kept on its animated bend side (:func:`_knee_pole`), then
    ``limits.joint(j).project`` (a :class:`~jointlimits.limits.model.JointLimits`) is applied to the
    hip and knee; with ``refine`` the
    solves the projection pulled more than ``tolerance`` metres off target are re-solved by CCD
    inside the limits. The foot keeps its global rotation: ``foot' = inv(G_knee') G_foot``; where
    the toe is planted (``hold_toe``) the foot is turned about the ankle as reached so that the toe
    lands horizontally on its lock (:func:`_hold_toe`, faded out over ``blend_frames`` after the toe
    lifts); then with limits it is projected into the ankle's limit. Frames outside contacts and their blend
    windows are returned unchanged. ``limit_ankle=False`` leaves the ankle's rotation unlimited
    (hip and knee still are); with ``toe_first`` a planted toe that the ankle's limit moved is put
    back by moving the ankle (a second leg solve), trading ankle for toe skating. The report
    carries both the contact-based skating and the independent :func:`foot_skating` before and
    after.

    The settings (``height_threshold``, ``velocity_threshold``, ``min_frames``, ``margin``, ``toes``,
    ``blend_frames``, ``lock_frames``, ``lock_height``, ``refine``, ``tolerance``, ``limit_ankle``,
    ``toe_first``, ``hold_toe``) are the fields of :class:`FootlockSettings`: ``settings`` (default
    ``FootlockSettings()``) with any of them overridden by keyword.
    """
    try:
        st = dataclasses.replace(settings or FootlockSettings(), **overrides)
    except TypeError:
        known = {f.name for f in dataclasses.fields(FootlockSettings)}
        bad = ", ".join(sorted(set(overrides) - known))
        raise TypeError(f"footlock() got unexpected keyword argument(s): {bad}") from None
    height_threshold, velocity_threshold, min_frames, margin = (
        st.height_threshold,
        st.velocity_threshold,
        st.min_frames,
        st.margin,
    )
    toes, blend_frames, lock_frames, lock_height = st.toes, st.blend_frames, st.lock_frames, st.lock_height
    refine, tolerance, limit_ankle, toe_first, hold_toe = (
        st.refine,
        st.tolerance,
        st.limit_ankle,
        st.toe_first,
        st.hold_toe,
    )
    idx = resolve_feet(motion, feet)
    motion.check_finite()
    sk = motion.skeleton
    F = motion.num_frames
    if int(blend_frames) < 0:
        raise IKError(f"blend_frames must be >= 0, got {blend_frames}")
    if int(margin) < 0:
        raise IKError(f"margin must be >= 0, got {margin}")
    if contacts is None:
        contacts = cast(
            NDArray[np.bool_],
            detect_contacts(motion, idx, height_threshold, velocity_threshold, min_frames, margin=margin),
        )
    c = _check_contacts(contacts, F, len(idx))
    toe_idx = find_toes(sk, idx) if toes else [None] * len(idx)
    if toe_contacts is None:
        tc = np.zeros((F, len(idx)), bool)
        have = [i for i, t in enumerate(toe_idx) if t is not None]
        if have and F:
            tc[:, have] = detect_contacts(
                motion,
                [cast(int, toe_idx[i]) for i in have],
                height_threshold,
                velocity_threshold,
                min_frames,
                margin=margin,
            )
    else:
        tc = _check_contacts(toe_contacts, F, len(idx))
    if limits is not None and hasattr(limits, "check_skeleton"):
        limits.check_skeleton(sk)
    mpu = guess_units(motion).metres_per_unit
    up, _ = _up_index(motion)
    before = measure_skating(motion, c, idx)
    ind_before = foot_skating(motion, feet=idx)
    gr, gp = forward_kinematics(motion)
    rot = motion.rotations.copy()
    chains = [(int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j) for j in idx]

    # a detection gap of 1-2 frames is bridged where the foot moves no faster than a planted one
    bridge = velocity_threshold * motion.frame_time / mpu
    # one batch over (frame, foot)
    fs, ks, tg, rs, tws, tts = [], [], [], [], [], []
    for i, (_h, _k, j) in enumerate(chains):
        pt = gp[:, toe_idx[i]] if toe_idx[i] is not None else None
        o, Rf, need = _planted_offsets(
            gp[:, j],
            pt,
            c[:, i],
            tc[:, i],
            blend_frames,
            lock_frames,
            None if lock_height else up,
            MAX_OFFSET / mpu,
            bridge,
            RELEASE_ACCELERATION * motion.frame_time**2 / mpu,
            # under a step bound a foot turn fades no faster than the bound lets the foot follow
            # (smoothstep's peak rate is 1.5 times its mean), so the bounded foot does not lag
            MAX_FADE_DEGREES if st.step_margin is None else min(MAX_FADE_DEGREES, st.step_margin / 1.5),
        )
        t = gp[:, j] + o
        fr = np.nonzero(need)[0]
        rs.append(Rf[fr])
        if pt is not None:
            tws.append(_toe_weight(tc[:, i], blend_frames, pt, bridge, None if lock_height else up)[fr])
            tts.append(t[fr] + quat.mul_vec(Rf[fr], pt[fr] - gp[fr, j]))
        else:
            tws.append(np.zeros(fr.size))
            tts.append(t[fr])
        fs.append(fr)
        ks.append(np.full(fr.size, i))
        tg.append(t[fr])
    fr = np.concatenate(fs)
    which = np.concatenate(ks)
    targets = np.concatenate(tg) if tg else np.zeros((0, 3))
    limited = refined = 0
    max_err = 0.0
    if fr.size:
        H = np.array([ch[0] for ch in chains])[which]
        K = np.array([ch[1] for ch in chains])[which]
        J = np.array([ch[2] for ch in chains])[which]
        Pp = sk.parents[H]
        par = np.where((Pp >= 0)[:, None], gr[fr, np.maximum(Pp, 0)], quat.identity(fr.size))
        toe_w = np.concatenate(tws)
        toe_want = np.concatenate(tts)
        TT = np.array([-1 if t is None else t for t in toe_idx])[which]
        toe_off = np.where((TT >= 0)[:, None], motion.positions[fr, np.maximum(TT, 0)], 0.0)
        targets = _soft_reach(gp[fr, H], gp[fr, K], gp[fr, J], targets, None if lock_height else up)
        off = np.stack([motion.positions[fr, H], motion.positions[fr, K], motion.positions[fr, J]], axis=1)
        base_p = np.where((Pp >= 0)[:, None], gp[fr, np.maximum(Pp, 0)], 0.0)
        turn = np.concatenate(rs) if rs else quat.identity(0)
        want_foot = quat.mul(turn, gr[fr, J])
        pole = _knee_pole(gp[fr, H], gp[fr, K], gp[fr, J])
        tol_u = tolerance / mpu

        def solve(tg: Array) -> tuple[Array, Array, Array, Array, Array, int, int]:
            nlim = nref = 0
            sol = two_bone(gp[fr, H], gp[fr, K], gp[fr, J], tg, par, rot[fr, H], rot[fr, K], pole)
            hip, knee = sol.root_local, sol.mid_local
            if limits is not None:
                for i, (h, k_, _) in enumerate(chains):
                    sel = which == i
                    if not np.any(sel):
                        continue
                    for col, jj in ((0, h), (1, k_)):
                        lim = _joint_limit(limits, jj)
                        if lim is None:
                            continue
                        q = hip[sel] if col == 0 else knee[sel]
                        pq = lim.project(q)
                        nlim += int((quat.angle(pq, q) > 1e-9).sum())
                        if col == 0:
                            hip[sel] = pq
                        else:
                            knee[sel] = pq
            ankle = _leg_fk(par, base_p, off, hip, knee)
            err = np.linalg.norm(ankle - tg, axis=-1)
            if refine and limits is not None:
                bad = np.nonzero(err > tol_u)[0]
                for i, (h, k_, _) in enumerate(chains):
                    b = bad[which[bad] == i]
                    if b.size == 0:
                        continue
                    lims = [_joint_limit(limits, h), _joint_limit(limits, k_)]
                    res = ccd(
                        par[b],
                        base_p[b],
                        off[b],
                        tg[b],
                        np.stack([hip[b], knee[b]], axis=1),
                        lims,
                        tolerance=tol_u,
                        max_iterations=60,
                        max_restarts=0,
                    )
                    improve = res.error < err[b]
                    bb = b[improve]
                    hip[bb], knee[bb] = res.rotations[improve, 0], res.rotations[improve, 1]
                    err[bb] = res.error[improve]
                    nref += int(improve.sum())
                ankle = _leg_fk(par, base_p, off, hip, knee)
            # the foot keeps its global rotation, turned about the ankle where heel and toe are both planted
            # and, where the toe is planted, turned about the ankle as reached so that the toe stays
            gk = quat.mul(par, quat.mul(hip, knee))
            wf = want_foot
            if hold_toe and np.any(toe_w > 0):
                r = np.nonzero(toe_w > 0)[0]
                wf = want_foot.copy()
                wf[r] = _hold_toe(
                    want_foot[r], ankle[r], toe_off[r], toe_want[r], toe_w[r], None if lock_height else up
                )
            foot = quat.normalize(quat.inv_mul(gk, wf))
            if limits is not None and limit_ankle:
                for i, (_, _, jj) in enumerate(chains):
                    lim = _joint_limit(limits, jj)
                    sel = which == i
                    if lim is None or not np.any(sel):
                        continue
                    pq = lim.project(foot[sel])
                    nlim += int((quat.angle(pq, foot[sel]) > 1e-9).sum())
                    foot[sel] = pq
            return hip, knee, foot, ankle, err, nlim, nref

        hip, knee, foot, ankle, err, nlim, nref = solve(targets)
        toe_rows = np.nonzero((TT >= 0) & (toe_w > 0))[0]
        if toe_first and toe_rows.size and limits is not None and limit_ankle:
            # the ankle's limit turned the foot: move the ankle so that a planted toe stays put
            r = toe_rows
            gk = quat.mul(par[r], quat.mul(hip[r], knee[r]))
            toe_now = ankle[r] + quat.mul_vec(quat.mul(gk, foot[r]), toe_off[r])
            e = (toe_want[r] - toe_now) * toe_w[r, None]
            if not lock_height:
                e[:, up] = 0.0
            if np.any(np.linalg.norm(e, axis=-1) > tol_u):
                t2 = targets.copy()
                t2[r] += e
                t2 = _soft_reach(gp[fr, H], gp[fr, K], gp[fr, J], t2, None if lock_height else up)
                hip, knee, foot, ankle, err, nlim2, nref2 = solve(t2)
                nlim, nref = nlim2, nref + nref2
        limited += nlim
        refined += nref
        max_err = float(err.max()) * mpu * 100.0
        rot[fr, H] = hip
        rot[fr, K] = knee
        rot[fr, J] = foot
    if st.step_margin is not None:
        rot = _no_new_steps(motion, rot, chains, limits, limit_ankle, st.step_margin)
    out = motion.with_rotations(rot)
    after = measure_skating(out, c, idx)
    red = 100.0 * (1.0 - after["total_m"] / before["total_m"]) if before["total_m"] > 0 else 0.0
    changed = int(np.any(rot != motion.rotations, axis=(1, 2)).sum())
    report = FootlockReport(
        [sk.names[j] for j in idx],
        c,
        sum(len(s) for s in contact_segments(c)),
        before,
        after,
        red,
        changed,
        int(fr.size),
        limited,
        refined,
        max_err,
        toe_contacts=tc,
        independent_before=ind_before,
        independent_after=foot_skating(out, reference=motion, feet=idx),
    )
    return out, report


#: the window (seconds either side) of the input's largest step that bounds a locked joint's step
STEP_SECONDS = 0.25
#: the ``step_margin`` that keeps every step within 2 degrees of the input's local largest
STEP_MARGIN_DEGREES = 1.99


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
    from ..motion.steps import WALKERS, local_step_bound

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

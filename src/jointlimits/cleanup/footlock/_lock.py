"""The locking itself: :func:`footlock`, its :class:`FootlockSettings` and :class:`FootlockReport`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ...errors import IKError
from ...ik.ccd import ccd
from ...ik.two_bone import two_bone
from ...motion import quat
from ...motion.skeleton import Motion, forward_kinematics
from ...motion.units import guess_units
from ..contacts import (
    DEFAULT_HEIGHT_THRESHOLD,
    DEFAULT_MIN_FRAMES,
    DEFAULT_VELOCITY_THRESHOLD,
    contact_segments,
    detect_contacts,
    detect_point_contacts,
    find_toes,
    resolve_feet,
)
from ._legs import _hold_toe, _joint_limit, _knee_pole, _leg_fk, _no_new_steps, _soft_reach
from ._measure import _check_contacts, _up_index, foot_skating, keep_no_worse, low_slow_skating, measure_skating
from ._offsets import (
    DEFAULT_BLEND_FRAMES,
    MAX_FADE_DEGREES,
    MAX_OFFSET,
    RELEASE_ACCELERATION,
    _planted_offsets,
    _toe_weight,
)

Array = NDArray[np.float64]


#: frames added to both ends of each detected contact when locking (the landing and take-off frames)
DEFAULT_MARGIN = 1


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
    #: :func:`low_slow_skating` of the input and of the result (each on its own frames), and the
    #: feet whose leg was put back to the input (over the stretches where locking added skating at
    #: one of its points)
    low_slow_before: dict | None = None
    low_slow_after: dict | None = None
    reverted: list[str] | None = None

    @property
    def low_slow_reduction(self) -> dict:
        """Percent less low-and-slow skating, ``{"ankle", "toe", "total"}`` (None where there was none)."""
        b, a = self.low_slow_before or {}, self.low_slow_after or {}
        out: dict = {}
        for key in ("ankle", "toe", "total"):
            x, y = b.get(f"{key}_cm", 0.0), a.get(f"{key}_cm", 0.0)
            out[key] = 100.0 * (1.0 - y / x) if x > 0 else None
        return out

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
            "low_slow_skating_before": self.low_slow_before,
            "low_slow_skating_after": self.low_slow_after,
            "low_slow_reduction_percent": self.low_slow_reduction,
            "reverted_feet": self.reverted or [],
            "frames_changed": self.frames_changed,
            "solves": self.solves,
            "limited": self.limited,
            "refined": self.refined,
            "max_target_error_cm": self.max_target_error_cm,
        }


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
    # a foot without a toe joint: its end site (if it has one) is its toe
    gr, gp = forward_kinematics(motion)
    toe_end: dict[int, NDArray[np.float64]] = {}
    if toes:
        for i, j in enumerate(idx):
            ends = [o for p, o in sk.end_sites if p == j]
            if toe_idx[i] is None and ends:
                toe_end[i] = np.asarray(ends[0], np.float64)
        if toe_end and F and toe_contacts is None:
            pts = np.stack([gp[:, idx[i]] + quat.mul_vec(gr[:, idx[i]], o) for i, o in toe_end.items()], axis=1)
            tc[:, list(toe_end)] = detect_point_contacts(
                motion, pts, height_threshold, velocity_threshold, min_frames, margin=margin
            )
    if limits is not None and hasattr(limits, "check_skeleton"):
        limits.check_skeleton(sk)
    mpu = guess_units(motion).metres_per_unit
    up, _ = _up_index(motion)
    before = measure_skating(motion, c, idx)
    ind_before = foot_skating(motion, feet=idx)
    rot = motion.rotations.copy()
    chains = [(int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j) for j in idx]

    # a detection gap of 1-2 frames is bridged where the foot moves no faster than a planted one
    bridge = velocity_threshold * motion.frame_time / mpu
    # one batch over (frame, foot)
    fs, ks, tg, rs, tws, tts = [], [], [], [], [], []
    for i, (_h, _k, j) in enumerate(chains):
        pt = gp[:, toe_idx[i]] if toe_idx[i] is not None else None
        if i in toe_end:
            pt = gp[:, j] + quat.mul_vec(gr[:, j], toe_end[i])
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
        for i, o in toe_end.items():
            toe_off[which == i] = o
            TT[which == i] = -2  # a toe end site: held like a toe joint
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
        toe_rows = np.nonzero((TT != -1) & (toe_w > 0))[0]
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
    # where locking added low-and-slow skating at a foot point, that leg's changed run is put back
    ls_before = low_slow_skating(motion, feet=idx)
    worse = keep_no_worse(motion, rot, chains, idx)
    out = motion.with_rotations(rot)
    ls_after = low_slow_skating(out, feet=idx)
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
        low_slow_before=ls_before,
        low_slow_after=ls_after,
        reverted=[sk.names[idx[i]] for i in worse],
    )
    return out, report

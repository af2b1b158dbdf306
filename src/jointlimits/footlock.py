"""Foot locking: find the frames where a foot is planted and pin it there with two-bone leg IK.

* :func:`detect_contacts`: a foot is planted while its joint is low (within ``height_threshold``
  metres of the clip's ground level for that joint, a low percentile of its heights) and slow
  (horizontal speed at most ``velocity_threshold`` m/s); runs shorter than ``min_frames`` are
  dropped and gaps shorter than it are filled. Thresholds are in metres and converted with
  :func:`jointlimits.units.guess_units`.
* :func:`measure_skating`: horizontal foot displacement between consecutive contact frames.
* :func:`footlock`: per contact segment the foot is locked where it was at the start of the
  contact (mean of the first ``lock_frames`` frames); the offset ``lock - foot`` is ramped in
  before and out after the segment over ``blend_frames`` (smoothstep), and the legs (UpLeg, Leg,
  Foot) are solved for all frames of all contacts in one batch with :func:`~jointlimits.ik.two_bone`
  (the knee moves least), projected into the joint limits, refined with limited CCD where the
  projection pulled the foot off its target, and the foot keeps its global orientation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from . import quat
from .errors import IKError
from .ik.ccd import ccd
from .ik.two_bone import two_bone
from .skeleton import Motion, Skeleton, forward_kinematics
from .units import guess_units, guess_up_axis

__all__ = ["find_feet", "detect_contacts", "contact_segments", "measure_skating", "footlock", "FootlockReport",
           "DEFAULT_HEIGHT_THRESHOLD", "DEFAULT_VELOCITY_THRESHOLD", "DEFAULT_MIN_FRAMES", "DEFAULT_BLEND_FRAMES"]

Array = NDArray[np.float64]

#: metres above the clip's ground level (per foot joint) under which a foot may be planted
DEFAULT_HEIGHT_THRESHOLD = 0.05
#: horizontal speed (m/s) under which a low foot counts as planted
DEFAULT_VELOCITY_THRESHOLD = 0.2
#: shortest contact (frames); shorter gaps between contacts are filled
DEFAULT_MIN_FRAMES = 3
#: frames over which the lock offset is ramped in before and out after each contact
DEFAULT_BLEND_FRAMES = 6
#: percentile of a foot joint's heights taken as its ground level
GROUND_PERCENTILE = 2.0

_FOOT = re.compile(r"(foot|ankle)", re.I)
_NOT_FOOT = re.compile(r"(toe|end|site|ball|finger)", re.I)


# --------------------------------------------------------------------------- feet and contacts
def find_feet(skeleton: Skeleton) -> list[int]:
    """Indices of the foot (ankle) joints: names matching foot/ankle (not toe/end) with at least
    two ancestors, so that UpLeg -> Leg -> Foot exists; ordered left before right."""
    out = []
    for j, n in enumerate(skeleton.names):
        if _FOOT.search(n) and not _NOT_FOOT.search(n):
            p = skeleton.parents[j]
            if p >= 0 and skeleton.parents[p] >= 0:
                out.append(j)
    return sorted(out, key=lambda j: (0 if re.search(r"(left|^l_|^l[A-Z])", skeleton.names[j], re.I) else 1, j))


def _resolve_feet(motion: Motion, feet: Sequence[str | int] | None) -> list[int]:
    sk = motion.skeleton
    if feet is None:
        idx = find_feet(sk)
        if not idx:
            raise IKError(f"no foot joints found by name (foot/ankle) among {', '.join(sk.names)}; pass feet=")
        return idx
    try:
        idx = [sk.index(f) for f in feet]
    except Exception as e:
        raise IKError(f"feet: {e}") from None
    for j in idx:
        p = sk.parents[j]
        if p < 0 or sk.parents[p] < 0:
            raise IKError(f"foot {sk.names[j]!r} needs a parent and a grandparent (UpLeg -> Leg -> Foot)")
    return idx


def _up_index(motion: Motion) -> tuple[int, float]:
    up = guess_up_axis(motion)
    return "xyz".index(up[1]), (1.0 if up[0] == "+" else -1.0)


def _horizontal(p: Array, k: int) -> Array:
    h = p.copy()
    h[..., k] = 0.0
    return h


def _runs(mask: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """[start, stop) of every run of True."""
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(m)
    return list(zip(np.nonzero(d == 1)[0].tolist(), np.nonzero(d == -1)[0].tolist()))


def _clean(mask: NDArray[np.bool_], min_frames: int) -> NDArray[np.bool_]:
    out = mask.copy()
    # fill short gaps inside contacts, then drop short contacts
    for s, e in _runs(~out):
        if s > 0 and e < len(out) and e - s < min_frames:
            out[s:e] = True
    for s, e in _runs(out):
        if e - s < min_frames:
            out[s:e] = False
    return out


def detect_contacts(motion: Motion, feet: Sequence[str | int] | None = None,
                    height_threshold: float = DEFAULT_HEIGHT_THRESHOLD,
                    velocity_threshold: float = DEFAULT_VELOCITY_THRESHOLD,
                    min_frames: int = DEFAULT_MIN_FRAMES) -> NDArray[np.bool_]:
    """``bool[F, n_feet]``: foot planted where ``h - h_ground <= height_threshold`` (metres) and
    ``|Δp_horizontal| / (2 dt) <= velocity_threshold`` (m/s, central difference).

    ``h_ground`` is a low percentile of that foot joint's height over the clip (so the ankle's
    height above the sole does not count); metres are converted with :func:`guess_units`.
    """
    if not (np.isfinite(height_threshold) and height_threshold >= 0):
        raise IKError(f"height_threshold must be a finite number >= 0 (metres), got {height_threshold}")
    if not (np.isfinite(velocity_threshold) and velocity_threshold >= 0):
        raise IKError(f"velocity_threshold must be a finite number >= 0 (m/s), got {velocity_threshold}")
    if int(min_frames) < 1:
        raise IKError(f"min_frames must be >= 1, got {min_frames}")
    idx = _resolve_feet(motion, feet)
    motion.check_finite()
    F = motion.num_frames
    if F == 0:
        return np.zeros((0, len(idx)), bool)
    mpu = guess_units(motion).metres_per_unit
    k, sign = _up_index(motion)
    _, gp = forward_kinematics(motion)
    p = gp[:, idx] * mpu  # metres [F, n, 3]
    h = sign * p[..., k]
    ground = np.percentile(h, GROUND_PERCENTILE, axis=0)
    low = h - ground <= height_threshold
    ph = _horizontal(p, k)
    v = np.zeros(h.shape)
    if F >= 3:
        v[1:-1] = np.linalg.norm(ph[2:] - ph[:-2], axis=-1) / (2.0 * motion.frame_time)
        v[0], v[-1] = v[1], v[-2]
    elif F == 2:
        v[:] = np.linalg.norm(ph[1] - ph[0], axis=-1) / motion.frame_time
    slow = v <= velocity_threshold
    c = low & slow
    return np.stack([_clean(c[:, i], int(min_frames)) for i in range(len(idx))], axis=1)


def contact_segments(contacts: NDArray[np.bool_]) -> list[list[tuple[int, int]]]:
    """Per foot, the ``[start, stop)`` frame ranges of each contact."""
    c = np.asarray(contacts, bool)
    return [_runs(c[:, i]) for i in range(c.shape[1])]


def _check_contacts(contacts: Any, F: int, n: int) -> NDArray[np.bool_]:
    c = np.asarray(contacts)
    if c.shape != (F, n):
        raise IKError(f"contacts must be bool[{F}, {n}] (frames, feet), got shape {c.shape}")
    return c.astype(bool)


def measure_skating(motion: Motion, contacts: NDArray[np.bool_], feet: Sequence[str | int] | None = None) -> dict:
    """Foot skating: horizontal displacement ``|Δp_h|`` of each foot between consecutive frames
    that are both in contact. Returns totals and means per contact frame, in metres and cm,
    overall and per foot."""
    idx = _resolve_feet(motion, feet)
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
        per[motion.skeleton.names[j]] = {"frames": n, "total_m": tot, "mean_m": tot / n if n else 0.0,
                                         "mean_cm": 100.0 * tot / n if n else 0.0, "max_cm": 100.0 * float(d[:, i].max(initial=0.0))}
    n = int(both.sum())
    tot = float(d.sum())
    return {"frames": n, "total_m": tot, "total_cm": 100.0 * tot, "mean_m": tot / n if n else 0.0,
            "mean_cm": 100.0 * tot / n if n else 0.0, "per_foot": per}


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

    def to_dict(self) -> dict:
        return {"feet": self.feet, "segments": self.segments, "contact_frames": [int(x) for x in self.contacts.sum(0)],
                "skating_before": self.skating_before, "skating_after": self.skating_after,
                "reduction_percent": self.reduction_percent, "frames_changed": self.frames_changed,
                "solves": self.solves, "limited": self.limited, "refined": self.refined,
                "max_target_error_cm": self.max_target_error_cm}


def _smoothstep(x: Array) -> Array:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _lock_targets(p: Array, contact: NDArray[np.bool_], blend_frames: int, lock_frames: int,
                  up: int | None = None) -> tuple[Array, NDArray[np.bool_]]:
    """IK targets of one foot ``[F, 3]`` and which frames need a solve.

    In a contact ``[s, e)``: ``t = lock``. Outside, the offsets at the nearest contact edges decay:
    ``t_f = p_f + Σ w_i o_i / max(1, Σ w_i)`` with ``w = 1 - smoothstep(distance / (B + 1))``."""
    F = p.shape[0]
    t = p.copy()
    segs = _runs(contact)
    if not segs:
        return t, np.zeros(F, bool)
    B = max(int(blend_frames), 0)
    acc = np.zeros((F, 3))
    wsum = np.zeros(F)
    inside = np.zeros(F, bool)
    f = np.arange(F)
    for s, e in segs:
        lock = p[s:min(e, s + max(lock_frames, 1))].mean(axis=0)
        t[s:e] = lock
        if up is not None:  # the height follows the animation
            t[s:e, up] = p[s:e, up]
        inside[s:e] = True
        if B == 0:
            continue
        o_in, o_out = t[s] - p[s], t[e - 1] - p[e - 1]
        before = (f < s) & (f >= s - B)
        after = (f >= e) & (f < e + B)
        w_b = 1.0 - _smoothstep((s - f[before]) / (B + 1.0))
        w_a = 1.0 - _smoothstep((f[after] - (e - 1)) / (B + 1.0))
        acc[before] += w_b[:, None] * o_in
        wsum[before] += w_b
        acc[after] += w_a[:, None] * o_out
        wsum[after] += w_a
    out = ~inside & (wsum > 0)
    t[out] = p[out] + acc[out] / np.maximum(1.0, wsum[out])[:, None]
    return t, inside | out


def footlock(motion: Motion, limits: Any = None, contacts: NDArray[np.bool_] | None = None,
             feet: Sequence[str | int] | None = None, *, height_threshold: float = DEFAULT_HEIGHT_THRESHOLD,
             velocity_threshold: float = DEFAULT_VELOCITY_THRESHOLD, min_frames: int = DEFAULT_MIN_FRAMES,
             blend_frames: int = DEFAULT_BLEND_FRAMES, lock_frames: int = 1, lock_height: bool = False,
             refine: bool = True, tolerance: float = 0.001) -> tuple[Motion, FootlockReport]:
    """Pin planted feet with two-bone leg IK; returns the new motion and a :class:`FootlockReport`.

    Per foot the chain is (grandparent, parent, foot) = (UpLeg, Leg, Foot). Targets come from
    :func:`_lock_targets`; all frames of all feet are solved as one batch, ``hip' , knee' =
    two_bone(...)`` with the knee moving least, then ``limits.joint(j).project`` (a
    :class:`~jointlimits.model.JointLimits`) is applied to the hip and knee; with ``refine`` the
    solves the projection pulled more than ``tolerance`` metres off target are re-solved by CCD
    inside the limits. The foot keeps its global rotation: ``foot' = inv(G_knee') G_foot``.
    Frames outside contacts and their blend windows are returned unchanged.
    """
    idx = _resolve_feet(motion, feet)
    motion.check_finite()
    sk = motion.skeleton
    F = motion.num_frames
    if int(blend_frames) < 0:
        raise IKError(f"blend_frames must be >= 0, got {blend_frames}")
    if contacts is None:
        contacts = detect_contacts(motion, idx, height_threshold, velocity_threshold, min_frames)
    c = _check_contacts(contacts, F, len(idx))
    if limits is not None and hasattr(limits, "check_skeleton"):
        limits.check_skeleton(sk)
    mpu = guess_units(motion).metres_per_unit
    up, _ = _up_index(motion)
    before = measure_skating(motion, c, idx)
    gr, gp = forward_kinematics(motion)
    rot = motion.rotations.copy()
    chains = [(int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j) for j in idx]

    # one batch over (frame, foot)
    fs, ks, tg = [], [], []
    for i, (h, k_, j) in enumerate(chains):
        t, need = _lock_targets(gp[:, j], c[:, i], blend_frames, lock_frames, None if lock_height else up)
        fr = np.nonzero(need)[0]
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
        sol = two_bone(gp[fr, H], gp[fr, K], gp[fr, J], targets, par, rot[fr, H], rot[fr, K])
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
                    p = lim.project(q)
                    changed = quat.angle(p, q) > 1e-9
                    limited += int(changed.sum())
                    if col == 0:
                        hip[sel] = p
                    else:
                        knee[sel] = p
        # where the foot ended (positions of the chain in its parent's frame)
        off = np.stack([motion.positions[fr, H], motion.positions[fr, K], motion.positions[fr, J]], axis=1)
        base_p = np.where((Pp >= 0)[:, None], gp[fr, np.maximum(Pp, 0)], 0.0)
        foot = _leg_fk(par, base_p, off, hip, knee)
        err = np.linalg.norm(foot - targets, axis=-1)
        tol_u = tolerance / mpu
        if refine and limits is not None:
            bad = np.nonzero(err > tol_u)[0]
            for i, (h, k_, _) in enumerate(chains):
                b = bad[which[bad] == i]
                if b.size == 0:
                    continue
                lims = [_joint_limit(limits, h), _joint_limit(limits, k_)]
                res = ccd(par[b], base_p[b], off[b], targets[b], np.stack([hip[b], knee[b]], axis=1), lims,
                          tolerance=tol_u, max_iterations=60, max_restarts=0)
                improve = res.error < err[b]
                bb = b[improve]
                hip[bb], knee[bb] = res.rotations[improve, 0], res.rotations[improve, 1]
                err[bb] = res.error[improve]
                refined += int(improve.sum())
        max_err = float(err.max()) * mpu * 100.0
        # foot keeps its global rotation
        gk = quat.mul(par, quat.mul(hip, knee))
        rot[fr, H] = hip
        rot[fr, K] = knee
        rot[fr, J] = quat.normalize(quat.inv_mul(gk, gr[fr, J]))
    out = motion.with_rotations(rot)
    after = measure_skating(out, c, idx)
    red = 100.0 * (1.0 - after["total_m"] / before["total_m"]) if before["total_m"] > 0 else 0.0
    changed = int(np.any(rot != motion.rotations, axis=(1, 2)).sum())
    report = FootlockReport([sk.names[j] for j in idx], c, sum(len(s) for s in contact_segments(c)), before, after,
                            red, changed, int(fr.size), limited, refined, max_err)
    return out, report


def _joint_limit(limits: Any, j: int) -> Any:
    """The limit of joint ``j`` in a JointLimits-like model (None when it has none or is disabled)."""
    if hasattr(limits, "joints") and isinstance(getattr(limits, "joints"), dict):
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

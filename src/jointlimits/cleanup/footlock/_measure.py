"""Skating measures: the contact-based :func:`measure_skating` and the independent
:func:`foot_skating` and :func:`foot_drift`, with the helpers they share with the locking."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import IKError
from ...motion.skeleton import Motion, forward_kinematics
from ...motion.units import guess_units, guess_up_axis, up_axis_index
from ..contacts import find_toes, resolve_feet

Array = NDArray[np.float64]


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
    from ...motion.units import body_height

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


#: low-and-slow skating (:func:`low_slow_skating`): a foot point is low below this percentile of its
#: own heights ...
LOW_PERCENTILE = 10.0
#: ... plus this many metres, and slow under this horizontal speed (m/s)
LOW_MARGIN_M = 0.03
SLOW_M_S = 0.6


def foot_points(motion: Motion, feet: Sequence[int]) -> list[tuple[str, str, int, int]]:
    """The foot points of ``feet``: ``(name, kind, foot index in feet, point)`` with ``kind``
    ``ankle`` or ``toe`` and ``point`` a joint index, or ``-1 - e`` for end site ``e`` (the toes of a
    foot without a toe joint)."""
    sk = motion.skeleton
    toes = find_toes(sk, feet)
    pts = [(sk.names[j], "ankle", i, j) for i, j in enumerate(feet)]
    for i, (j, t) in enumerate(zip(feet, toes)):
        if t is not None:
            pts.append((sk.names[t], "toe", i, t))
        else:
            pts += [(f"{sk.names[j]} end", "toe", i, -1 - e) for e, (p, _) in enumerate(sk.end_sites) if p == j]
    return pts


def low_slow_steps(motion: Motion, feet: Sequence[int]) -> list[tuple[str, str, int, Array]]:
    """Per foot point (:func:`foot_points`): ``(name, kind, foot, cm [F-1])``, the horizontal
    distance between consecutive frames where both are low and the step slow (see
    :func:`low_slow_skating`), else 0."""
    from ...motion.skeleton import end_site_positions

    k, sign = _up_index(motion)
    mpu = guess_units(motion).metres_per_unit
    gr, gp = forward_kinematics(motion)
    ends = end_site_positions(motion, gr, gp)
    out = []
    for name, kind, i, p in foot_points(motion, list(feet)):
        pos = (gp[:, p] if p >= 0 else ends[:, -1 - p]) * mpu
        h = sign * pos[:, k]
        low = h < (np.percentile(h, LOW_PERCENTILE) if len(h) else 0.0) + LOW_MARGIN_M
        step = np.linalg.norm(np.diff(_horizontal(pos, k), axis=0), axis=-1)
        use = low[1:] & low[:-1] & (step < SLOW_M_S * motion.frame_time)
        out.append((name, kind, i, 100.0 * step * use))
    return out


def low_slow_skating(motion: Motion, feet: Sequence[str | int] | None = None) -> dict:
    """Foot skating (cm) judged on the clip itself: per foot point (:func:`foot_points`) the
    horizontal distance it travels between consecutive frames on which it is low (below its own
    ``LOW_PERCENTILE`` height + ``LOW_MARGIN_M``) and slow (under ``SLOW_M_S`` horizontally).
    Returns ``{"total_cm", "ankle_cm", "toe_cm", "per_point": {name: {"cm", "kind", "foot"}}}``."""
    idx = resolve_feet(motion, feet)
    per: dict[str, dict[str, Any]] = {
        name: {"cm": float(cm.sum()), "kind": kind, "foot": i} for name, kind, i, cm in low_slow_steps(motion, idx)
    }
    ank = float(sum(v["cm"] for v in per.values() if v["kind"] == "ankle"))
    toe = float(sum(v["cm"] for v in per.values() if v["kind"] == "toe"))
    return {"total_cm": ank + toe, "ankle_cm": ank, "toe_cm": toe, "per_point": per}


def keep_no_worse(motion: Motion, rot: Array, chains: Sequence[Sequence[int]], feet: Sequence[int]) -> list[int]:
    """Put back, in place in ``rot`` ``[F, J, 4]``, the input's leg rotations over each run of
    changed frames of a leg where locking added low-and-slow skating at one of that foot's points
    (a run starts and ends beside unchanged frames, so putting it back adds no jump); a leg still
    worse after three rounds is put back whole. Returns the feet (indices into ``feet``) touched."""
    F = motion.num_frames
    before = low_slow_steps(motion, feet)
    touched: set[int] = set()
    for round_ in range(4):
        after = low_slow_steps(motion.with_rotations(rot), feet)
        worse_any = False
        for i, chain in enumerate(chains):
            pts = [(b[3], a[3]) for b, a in zip(before, after) if b[2] == i]
            if not any(a.sum() > b.sum() + 1e-9 for b, a in pts):
                continue
            worse_any = True
            touched.add(i)
            if round_ == 3:
                rot[:, list(chain)] = motion.rotations[:, list(chain)]
                continue
            changed = np.any(rot[:, list(chain)] != motion.rotations[:, list(chain)], axis=(1, 2))
            d = np.diff(np.concatenate([[0], changed.astype(np.int8), [0]]))
            for a0, b0 in zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]):
                s0, s1 = max(a0 - 1, 0), min(b0, F - 1)
                if any(a[s0:s1].sum() > b[s0:s1].sum() + 1e-9 for b, a in pts):
                    rot[a0:b0, list(chain)] = motion.rotations[a0:b0, list(chain)]
        if not worse_any:
            break
    return sorted(touched)

"""Foot locking on the shared LAFAN1 clips, judged by the independent skating measure.

For every LAFAN1 clip: :func:`jointlimits.cleanup.footlock.foot_skating` (horizontal motion of the ankle and
toe joints on frames where that joint is low and slow, thresholds from the clip's body height,
independent of the contact detector) before and after :func:`footlock` without limits (per joint)
and with joint limits fitted on the *other* LAFAN1 clips (hip, knee and ankle limited, and hip and
knee only), checking that every changed leg rotation is inside; the detector's own contact-based
figure beside it; and a pop check of the output against the input:

* new cuts: frames :func:`jointlimits.cleanup.pops.detect_pops` finds in the output and not within 2 frames
  of one of the input's;
* the largest two-sided spike ``min(|w[t]-w[t-1]|, |w[t+1]-w[t]|)`` (the pop detector's quantity)
  of the hip, knee and ankle local rotations (deg/frame) and of the ankle and toe positions
  (cm/frame), output against input;
* the largest one-sided change ``|w[t]-w[t-1]|`` of the same (a foot that stops on landing raises
  it without being a pop).

Clean-data check: a clip without skating (feet still, upper body moving) must not change, and the
locked walk locked again must hardly change.

The Done-when target (issue 14): >= 90% less toe and ankle skating on every LAFAN1 walk* and
multipleActions* clip present, without new pops.

    python -m benchmarks.bench_footlock [--quick]

Full: every LAFAN1 clip, with and without limits; quick: walk4_subject1 without limits, and the
clean-data checks.
"""

from __future__ import annotations

import numpy as np

from . import _compat as C
from ._common import LAFAN, main_single, record, skipped
from ._timing import clock

BENCH = "footlock"
bvh = C.mod("io.bvh")
quat = C.mod("motion.quat")
_fl = C.mod("cleanup.footlock")
find_feet, find_toes, foot_drift, foot_skating, footlock = (
    _fl.find_feet,
    _fl.find_toes,
    _fl.foot_drift,
    _fl.foot_skating,
    _fl.footlock,
)
JointLimits = C.mod("limits.model").JointLimits
detect_pops, two_sided_spikes = C.mod("cleanup.pops").detect_pops, C.mod("cleanup.pops").two_sided_spikes
forward_kinematics = C.mod("motion.skeleton").forward_kinematics
guess_units = C.mod("motion.units").guess_units


def leg_joints(m) -> list[int]:
    sk = m.skeleton
    out = []
    for j in find_feet(sk):
        out += [int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j]
    return out


def velocities(m) -> tuple[np.ndarray, np.ndarray]:
    """Leg rotation velocities (rad/frame, scaled angle-axis) and ankle/toe velocities (cm/frame)."""
    sk = m.skeleton
    q = quat.normalize(m.rotations[:, leg_joints(m)])
    w = np.zeros(q.shape[:-1] + (3,))
    w[1:] = quat.to_scaled_angle_axis(quat.abs(quat.mul_inv(q[1:], q[:-1])))
    feet = find_feet(sk)
    pts = feet + [t for t in find_toes(sk, feet) if t is not None]
    _, gp = forward_kinematics(m)
    v = np.zeros((m.num_frames, len(pts), 3))
    v[1:] = np.diff(gp[:, pts], axis=0) * guess_units(m).metres_per_unit * 100.0
    return w, v


def pop_check(m, out) -> dict:
    w0, v0 = velocities(m)
    w1, v1 = velocities(out)
    (rs0, ra0), (rs1, ra1) = two_sided_spikes(w0), two_sided_spikes(w1)
    (ps0, pa0), (ps1, pa1) = two_sided_spikes(v0), two_sided_spikes(v1)
    c0, c1 = detect_pops(m), detect_pops(out)
    new = [int(f) for f in c1 if not np.any(np.abs(c0 - f) <= 2)]
    deg = np.degrees
    return {
        "new_cuts": new,
        "rot_spike": (deg(rs0.max()), deg(rs1.max())),
        "pos_spike": (ps0.max(), ps1.max()),
        "rot_step": (deg(ra0.max()), deg(ra1.max())),
        "pos_step": (pa0.max(), pa1.max()),
    }


def held_away(m, out) -> tuple[float, float, float]:
    """How far the locked feet are from their animation (:func:`foot_drift`): ankles and toes, cm,
    95th percentile and largest over frames, and the 95th percentile of the feet's heading change."""
    d = foot_drift(out, m)
    hd = np.concatenate(d["heading_deg"]) if d["heading_deg"] else np.zeros(1)
    return float(np.percentile(d["cm"], 95)), float(d["cm"].max()), float(np.percentile(hd, 95))


def inside(m, out, lim, ankle: bool) -> bool:
    sk = m.skeleton
    ok = True
    for j in find_feet(sk):
        for jj in [int(sk.parents[sk.parents[j]]), int(sk.parents[j])] + ([j] if ankle else []):
            ch = np.any(out.rotations[:, jj] != m.rotations[:, jj], axis=-1)
            ok &= bool(lim.joint(jj).contains(out.rotations[ch, jj]).all())
    return ok


def clip_records(name: str, m, clips: dict | None) -> list[dict]:
    """Skating before/after footlock on one clip (and with limits fitted on the other clips)."""
    t = clock()
    out, rep = footlock(m)
    dt = clock() - t
    b, a = rep.independent_before, rep.independent_after
    red = rep.independent_reduction
    data = f"lafan1/{name}.bvh, {m.num_frames} frames"
    q = "quality"
    per_joint = {jn: [b["per_joint"][jn]["cm"], a["per_joint"][jn]["cm"]] for jn in b["per_joint"]}
    pc = pop_check(m, out)
    ha_p95, ha_max, hd_p95 = held_away(m, out)
    recs = [
        record(BENCH, f"{name}: ankles skating before", b["ankle_cm"], "cm", kind=q, data=data),
        record(BENCH, f"{name}: ankles skating after", a["ankle_cm"], "cm", kind=q, data=data, per_joint_cm=per_joint),
        record(BENCH, f"{name}: ankles skating reduction", red["ankle"], "%", kind=q, data=data, target=90.0),
        record(BENCH, f"{name}: toes skating before", b["toe_cm"], "cm", kind=q, data=data),
        record(BENCH, f"{name}: toes skating after", a["toe_cm"], "cm", kind=q, data=data),
        record(BENCH, f"{name}: toes skating reduction", red["toe"], "%", kind=q, data=data, target=90.0),
        record(BENCH, f"{name}: detector's own measure, reduction", rep.reduction_percent, "%", kind=q, data=data),
        record(BENCH, f"{name}: frames changed", rep.frames_changed, "frames", kind="count", data=data),
        record(BENCH, f"{name}: footlock time", dt, "s", data=data + "; one run", solves=rep.solves),
        record(
            BENCH,
            f"{name}: new pop-detector cuts",
            len(pc["new_cuts"]),
            "cuts",
            kind="count",
            data=data,
            frames=pc["new_cuts"],
        ),
        record(
            BENCH,
            f"{name}: largest leg rotation spike, output",
            pc["rot_spike"][1],
            "deg/frame",
            kind=q,
            data=data,
            anchor="the input's",
            anchor_value=pc["rot_spike"][0],
        ),
        record(
            BENCH,
            f"{name}: largest foot position spike, output",
            pc["pos_spike"][1],
            "cm/frame",
            kind=q,
            data=data,
            anchor="the input's",
            anchor_value=pc["pos_spike"][0],
        ),
        record(
            BENCH,
            f"{name}: largest leg rotation step, output",
            pc["rot_step"][1],
            "deg/frame",
            kind=q,
            data=data,
            anchor="the input's",
            anchor_value=pc["rot_step"][0],
        ),
        record(
            BENCH,
            f"{name}: largest foot position step, output",
            pc["pos_step"][1],
            "cm/frame",
            kind=q,
            data=data,
            anchor="the input's",
            anchor_value=pc["pos_step"][0],
        ),
        record(BENCH, f"{name}: feet held away from the animation, p95", ha_p95, "cm", kind=q, data=data),
        record(BENCH, f"{name}: feet held away from the animation, max", ha_max, "cm", kind=q, data=data),
        record(BENCH, f"{name}: feet heading change, p95", hd_p95, "deg", kind=q, data=data),
    ]
    if clips is None:
        return recs
    lim = JointLimits.fit([c for k, c in clips.items() if k != name], shape="ellipsoid")
    out_l, rep_l = footlock(m, lim)
    out_h, rep_h = footlock(m, lim, limit_ankle=False)
    rl, rh = rep_l.independent_reduction, rep_h.independent_reduction
    il, ih = inside(m, out_l, lim, True), inside(m, out_h, lim, False)
    d = data + "; ellipsoid limits fitted on the other LAFAN1 clips"
    return recs + [
        record(BENCH, f"{name}: limited hip/knee/ankle, ankles reduction", rl["ankle"], "%", kind=q, data=d),
        record(BENCH, f"{name}: limited hip/knee/ankle, toes reduction", rl["toe"], "%", kind=q, data=d),
        record(BENCH, f"{name}: limited hip/knee/ankle, rotations limited", rep_l.limited, "", kind="count", data=d),
        record(
            BENCH,
            f"{name}: limited hip/knee/ankle, changed rotations all inside",
            int(il),
            "bool",
            kind="count",
            data=d,
        ),
        record(BENCH, f"{name}: limited hip/knee, ankles reduction", rh["ankle"], "%", kind=q, data=d),
        record(BENCH, f"{name}: limited hip/knee, toes reduction", rh["toe"], "%", kind=q, data=d),
        record(BENCH, f"{name}: limited hip/knee, changed rotations all inside", int(ih), "bool", kind="count", data=d),
    ]


def clean_checks(walk) -> list[dict]:
    """A clip without skating must not change. The walk's frame 100 held for 10 s while the spine
    and arms move (feet planted, no skating at all), and the locked walk locked again."""
    sk = walk.skeleton
    still = walk[100:101]
    F = 300
    rot = np.repeat(still.rotations, F, axis=0)
    pos = np.repeat(still.positions, F, axis=0)
    t = np.arange(F) * walk.frame_time
    for k, name in enumerate(("Spine", "Spine1", "LeftArm", "RightArm", "LeftForeArm", "Neck")):
        j = sk.index(name)
        w = quat.from_scaled_angle_axis(np.outer(0.4 * np.sin(1.3 * t + k), [0.3, 0.8, 0.5]))
        rot[:, j] = quat.mul(w, rot[:, j])
    clean = walk.with_rotations(rot, pos)[0:F]
    locked, rep_c = footlock(clean)
    d1 = np.degrees(quat.angle(clean.rotations, locked.rotations))
    once, _ = footlock(walk)
    twice, _ = footlock(once)
    d2 = np.degrees(quat.angle(once.rotations, twice.rotations))
    s0, s1 = foot_skating(once), foot_skating(twice, reference=once)
    c1 = f"walk4_subject1 frame 100 held {F} frames, upper body moving (no skating)"
    c2 = "walk4_subject1 locked, then locked again"
    return [
        record(
            BENCH,
            "clean check 1: skating after",
            rep_c.independent_after["total_cm"],
            "cm",
            kind="quality",
            data=c1,
            anchor="before",
            anchor_value=rep_c.independent_before["total_cm"],
        ),
        record(BENCH, "clean check 1: largest joint change", d1.max(), "deg", kind="quality", data=c1),
        record(
            BENCH,
            "clean check 2: skating after locking again",
            s1["total_cm"],
            "cm",
            kind="quality",
            data=c2,
            anchor="the locked walk's own",
            anchor_value=s0["total_cm"],
        ),
        record(BENCH, "clean check 2: largest joint change", d2.max(), "deg", kind="quality", data=c2),
        record(
            BENCH,
            "clean check 2: frames changed by > 0.5 deg",
            int(np.any(d2 > 0.5, axis=1).sum()),
            "frames",
            kind="count",
            data=c2,
            of=int(d2.shape[0]),
        ),
    ]


def run(quick: bool) -> list[dict]:
    if not LAFAN.is_dir():
        return [skipped(BENCH, "foot locking", f"LAFAN1 clips not found at {LAFAN}")]
    if quick:
        walk = bvh.load(LAFAN / "walk4_subject1.bvh")
        return (
            clip_records("walk4_subject1", walk, None)
            + [skipped(BENCH, "other LAFAN1 clips, and with limits", "full mode only")]
            + clean_checks(walk)
        )
    clips = {p.stem: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    targets = [n for n in clips if n.startswith(("walk", "multipleActions"))]
    recs = []
    for name, m in clips.items():
        recs += clip_records(name, m, clips)
    ok = all(
        r["value"] >= 90
        for r in recs
        if r["name"].split(":")[0] in targets
        and r["name"].endswith(("ankles skating reduction", "toes skating reduction"))
    )
    ok &= all(
        r["value"] == 0
        for r in recs
        if r["name"].split(":")[0] in targets and r["name"].endswith("new pop-detector cuts")
    )
    recs.append(
        record(
            BENCH,
            "Done-when met (>= 90% less ankle and toe skating, no new cut, no limits)",
            int(ok),
            "bool",
            kind="count",
            data=", ".join(targets),
        )
    )
    return recs + clean_checks(clips["walk4_subject1"])


if __name__ == "__main__":
    main_single(BENCH, run)

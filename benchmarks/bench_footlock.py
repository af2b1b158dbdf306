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

Run: ``PYTHONPATH=src python benchmarks/bench_footlock.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from jointlimits.io import bvh
from jointlimits.motion import quat  # noqa: E402
from jointlimits.cleanup.footlock import find_feet, find_toes, foot_drift, foot_skating, footlock  # noqa: E402
from jointlimits.limits.model import JointLimits  # noqa: E402
from jointlimits.cleanup.pops import detect_pops, two_sided_spikes  # noqa: E402
from jointlimits.motion.skeleton import forward_kinematics  # noqa: E402
from jointlimits.motion.units import guess_units  # noqa: E402

LAFAN = Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap" / "lafan1"


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
    return {"new_cuts": new, "rot_spike": (deg(rs0.max()), deg(rs1.max())), "pos_spike": (ps0.max(), ps1.max()),
            "rot_step": (deg(ra0.max()), deg(ra1.max())), "pos_step": (pa0.max(), pa1.max())}


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


def main() -> None:
    if not LAFAN.is_dir():
        print(f"LAFAN1 clips not found at {LAFAN}")
        return
    clips = {p.stem: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    targets = [n for n in clips if n.startswith(("walk", "multipleActions"))]
    print(f"target clips (LAFAN1 walk* and multipleActions* present): {', '.join(targets)}")
    print("independent skating (cm, ankle and toe joints on low-and-slow frames of the input) before -> after footlock")
    print(f"{'clip':28s} {'joint':10s} {'before':>8s} {'after':>8s} {'less':>7s}")
    ok = True
    summary = []
    for name, m in clips.items():
        t = time.perf_counter()
        out, rep = footlock(m)
        dt = time.perf_counter() - t
        b, a = rep.independent_before, rep.independent_after
        for jn in b["per_joint"]:
            x, y = b["per_joint"][jn]["cm"], a["per_joint"][jn]["cm"]
            print(f"{name:28s} {jn:10s} {x:8.1f} {y:8.1f} {100 * (1 - y / x) if x else 0:6.1f}%")
        red = rep.independent_reduction
        print(f"{name:28s} {'ANKLES':10s} {b['ankle_cm']:8.1f} {a['ankle_cm']:8.1f} {red['ankle']:6.1f}%")
        print(f"{name:28s} {'TOES':10s} {b['toe_cm']:8.1f} {a['toe_cm']:8.1f} {red['toe']:6.1f}%")
        print(f"{'':28s} detector's own measure: {rep.reduction_percent:.1f}% less; {rep.frames_changed} frames changed, "
              f"{rep.solves} solves in {dt:.2f} s")
        pc = pop_check(m, out)
        print(f"{'':28s} pops: new cuts {pc['new_cuts'] or 'none'}; largest two-sided spike in -> out: legs "
              f"{pc['rot_spike'][0]:.1f} -> {pc['rot_spike'][1]:.1f} deg, feet {pc['pos_spike'][0]:.1f} -> "
              f"{pc['pos_spike'][1]:.1f} cm; largest one-sided step: legs {pc['rot_step'][0]:.1f} -> "
              f"{pc['rot_step'][1]:.1f} deg, feet {pc['pos_step'][0]:.1f} -> {pc['pos_step'][1]:.1f} cm")
        ha_p95, ha_max, hd_p95 = held_away(m, out)
        print(f"{'':28s} held away from the animation: ankles and toes {ha_p95:.1f} cm (95th percentile), "
              f"{ha_max:.1f} cm (largest); foot heading {hd_p95:.1f} deg (95th percentile)")
        pc["held"] = (ha_p95, ha_max, hd_p95)
        lim = JointLimits.fit([c for k, c in clips.items() if k != name], shape="ellipsoid")
        out_l, rep_l = footlock(m, lim)
        out_h, rep_h = footlock(m, lim, limit_ankle=False)
        rl, rh = rep_l.independent_reduction, rep_h.independent_reduction
        il, ih = inside(m, out_l, lim, True), inside(m, out_h, lim, False)
        print(f"{'':28s} limits fitted on the other clips: hip/knee/ankle limited: ankles {rl['ankle']:.1f}% less, "
              f"toes {rl['toe']:.1f}% less ({rep_l.limited} rotations limited, all inside: {il}); hip/knee only: "
              f"ankles {rh['ankle']:.1f}%, toes {rh['toe']:.1f}% (inside: {ih})")
        summary.append((name, b["ankle_cm"], a["ankle_cm"], red["ankle"], b["toe_cm"], a["toe_cm"], red["toe"],
                        rl["ankle"], rl["toe"], rh["ankle"], rh["toe"], pc))
        if name in targets:
            ok &= red["ankle"] >= 90 and red["toe"] >= 90 and not pc["new_cuts"]
    print(f"\n{'clip':28s} {'ankles cm':>18s} {'toes cm':>18s} | limits: all / hip+knee (ankle, toe %) "
          f"| new cuts, spike legs deg / feet cm in -> out | held away cm p95, max, heading deg p95")
    for n, ab, aa, ar, tb, ta, tr, la, lt, ha, ht, pc in summary:
        print(f"{n:28s} {ab:6.0f}->{aa:5.1f} {ar:5.1f}% {tb:6.0f}->{ta:5.1f} {tr:5.1f}% | {la:5.1f} {lt:5.1f} / "
              f"{ha:5.1f} {ht:5.1f} | {len(pc['new_cuts'])}, {pc['rot_spike'][0]:.1f}->{pc['rot_spike'][1]:.1f} / "
              f"{pc['pos_spike'][0]:.1f}->{pc['pos_spike'][1]:.1f} | {pc['held'][0]:.1f}, {pc['held'][1]:.1f}, "
              f"{pc['held'][2]:.1f}")
    print(f"\nDone-when (>= 90% less toe and ankle skating, no new cut, on {', '.join(targets)}; no limits): "
          f"{'met' if ok else 'NOT met'}")

    # clean data: a clip without skating must not change. The walk's frame 100 held for 10 s while
    # the spine and arms move (feet planted, no skating at all), and the locked walk locked again.
    walk = clips["walk4_subject1"]
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
    d = np.degrees(quat.angle(clean.rotations, locked.rotations))
    print(f"\nclean check 1 (no skating: feet still, upper body moving, {F} frames): skating "
          f"{rep_c.independent_before['total_cm']:.2f} -> {rep_c.independent_after['total_cm']:.2f} cm, "
          f"max joint change {d.max():.2e} deg")
    once, _ = footlock(walk)
    twice, _ = footlock(once)
    d = np.degrees(quat.angle(once.rotations, twice.rotations))
    s0, s1 = foot_skating(once), foot_skating(twice, reference=once)
    print(f"clean check 2 (the locked walk locked again; its own skating is {s0['total_cm']:.1f} cm, not zero): "
          f"-> {s1['total_cm']:.1f} cm, max joint change {d.max():.1f} deg, "
          f"{int(np.any(d > 0.5, axis=1).sum())} of {d.shape[0]} frames change by > 0.5 deg")


if __name__ == "__main__":
    main()

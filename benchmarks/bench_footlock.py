"""Foot locking on the shared LAFAN1 clips, judged by the independent skating measure.

For every LAFAN1 clip: :func:`jointlimits.footlock.foot_skating` (horizontal motion of the ankle and
toe joints on frames where that joint is low and slow, thresholds from the clip's body height,
independent of the contact detector) before and after :func:`footlock` with joint limits fitted on
the *other* LAFAN1 clips (summary) and without limits (per joint); the detector's own contact-based figure beside it; and a pop
check: the largest per-frame rotation of a hip, knee or ankle after locking against the same
joints' 99.9th percentile in the input.

Clean-data check: a clip without skating (the locked walk) locked again must hardly change.

Run: ``PYTHONPATH=src python benchmarks/bench_footlock.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from jointlimits import bvh, quat  # noqa: E402
from jointlimits.footlock import find_feet, foot_skating, footlock  # noqa: E402
from jointlimits.model import JointLimits  # noqa: E402
from jointlimits.tracking import angular_speeds  # noqa: E402

LAFAN = Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap" / "lafan1"
TARGETS = ("walk4_subject1", "multipleActions1_subject1")


def leg_joints(m) -> list[int]:
    sk = m.skeleton
    out = []
    for j in find_feet(sk):
        out += [int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j]
    return out


def main() -> None:
    if not LAFAN.is_dir():
        print(f"LAFAN1 clips not found at {LAFAN}")
        return
    clips = {p.stem: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    print("independent skating (cm, ankle and toe joints on low-and-slow frames of the input) before -> after footlock")
    print(f"{'clip':28s} {'joint':10s} {'before':>8s} {'after':>8s} {'less':>7s}")
    ok = True
    summary = []
    for name, m in clips.items():
        lim = JointLimits.fit([c for k, c in clips.items() if k != name], shape="ellipsoid")
        _, rep_l = footlock(m, lim)
        t = time.perf_counter()
        out, rep = footlock(m)
        dt = time.perf_counter() - t
        b, a = rep.independent_before, rep.independent_after
        for jn in b["per_joint"]:
            x, y = b["per_joint"][jn]["cm"], a["per_joint"][jn]["cm"]
            print(f"{name:28s} {jn:10s} {x:8.1f} {y:8.1f} {100 * (1 - y / x) if x else 0:6.1f}%")
        red = rep.independent_reduction
        legs = leg_joints(m)
        p999 = float(np.degrees(np.percentile(angular_speeds(m.rotations[:, legs])[1:], 99.9)))
        jump = float(np.degrees(angular_speeds(out.rotations[:, legs])[1:].max()))
        print(f"{name:28s} {'ANKLES':10s} {b['ankle_cm']:8.1f} {a['ankle_cm']:8.1f} {red['ankle']:6.1f}%")
        print(f"{name:28s} {'TOES':10s} {b['toe_cm']:8.1f} {a['toe_cm']:8.1f} {red['toe']:6.1f}%")
        print(f"{'':28s} detector's own measure: {rep.reduction_percent:.1f}% less; {rep.frames_changed} frames changed, "
              f"{rep.solves} solves ({rep.limited} limited, {rep.refined} CCD) in {dt:.2f} s")
        flag = "ok" if jump <= p999 else "ABOVE"
        print(f"{'':28s} pops: max hip/knee/ankle step after {jump:.2f} deg/frame, input 99.9th pct {p999:.2f} ({flag})")
        rl = rep_l.independent_reduction
        print(f"{'':28s} with limits fitted on the other clips (ankle limit on): ankles {rl['ankle']:.1f}% less, "
              f"toes {rl['toe']:.1f}% less ({rep_l.limited} rotations limited)")
        summary.append((name, red["ankle"], red["toe"], rl["ankle"], rl["toe"], jump, p999))
        if name in TARGETS:
            ok &= red["ankle"] >= 90 and red["toe"] >= 90
    print(f"\n{'clip':28s} {'ankles':>8s} {'toes':>8s} | with limits {'ankles':>8s} {'toes':>8s} | max leg step / input p99.9")
    for n, a1, t1, a2, t2, j, p in summary:
        print(f"{n:28s} {a1:7.1f}% {t1:7.1f}% | {'':11s} {a2:7.1f}% {t2:7.1f}% | {j:5.1f} / {p:5.1f} deg")
    print(f"\nDone-when (>= 90% less toe and ankle skating on {', '.join(TARGETS)}, no limits): {'met' if ok else 'NOT met'}")

    # clean data: a clip without skating must hardly change. The walk's frame 100 held for 10 s while
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

"""Foot locking on the shared LAFAN1 clips, judged by the independent skating measure.

For every LAFAN1 clip: :func:`jointlimits.footlock.foot_skating` (horizontal motion of the ankle and
toe joints on frames where that joint is low and slow, thresholds from the clip's body height,
independent of the contact detector) before and after :func:`footlock` with joint limits fitted on
the *other* LAFAN1 clips, per joint; the detector's own contact-based figure beside it; and a pop
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
    for name, m in clips.items():
        lim = JointLimits.fit([c for k, c in clips.items() if k != name], shape="ellipsoid")
        t = time.perf_counter()
        out, rep = footlock(m, lim)
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
        if name in TARGETS:
            ok &= red["ankle"] >= 90 and red["toe"] >= 90
    print(f"\nDone-when (>= 90% less toe and ankle skating on {', '.join(TARGETS)}): {'met' if ok else 'NOT met'}")

    # clean data: a clip without skating hardly changes
    walk = clips["walk4_subject1"]
    once, _ = footlock(walk)
    twice, rep2 = footlock(once)
    d = np.degrees(quat.angle(once.rotations, twice.rotations))
    s0, s1 = foot_skating(once, reference=walk), foot_skating(twice, reference=walk)
    print(f"\nclean check (locked walk locked again): max joint change {d.max():.3f} deg, mean over changed "
          f"{d[d > 1e-9].mean() if np.any(d > 1e-9) else 0:.4f} deg, {int(np.any(d > 0.5, axis=1).sum())} frames "
          f"change by > 0.5 deg; skating {s0['total_cm']:.1f} -> {s1['total_cm']:.1f} cm")


if __name__ == "__main__":
    main()

"""Benchmark of jointlimits.cleanup.springs / jointlimits.cleanup.tracking.

Prints ns per channel-update of the one-step spring functions on 1e6 channels (float64 with new
arrays, then float32 with out= against the reference -O3 on the same float32 values), and the
seconds needed to filter a 5,000-frame, 22-joint clip (a real LAFAN1 clip from ../shared when
present, else a synthetic one) against the target of 0.5 s. BLAS threads are pinned to 1.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_springs.py``
"""

from __future__ import annotations

import os
import sys

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
           "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from jointlimits.motion import quat  # noqa: E402
from jointlimits.cleanup import springs as S  # noqa: E402
from jointlimits.cleanup import tracking as TR  # noqa: E402
from jointlimits.motion.skeleton import Motion, Skeleton  # noqa: E402
from _timing import best  # noqa: E402

TARGET_S = 0.5
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CLIP = SHARED / "data" / "mocap" / "lafan1" / "walk4_subject1.bvh"


def _refbench():
    """The reference C++ (../shared/refbench), or None with a message when it is absent."""
    rb_dir = SHARED / "refbench"
    if not (rb_dir / "refbench.py").exists():
        print("  (../shared/refbench absent: no comparison with the reference C++)")
        return None
    sys.path.insert(0, str(rb_dir))
    import refbench

    return refbench


def bench_updates(n: int = 1_000_000) -> None:
    """One step on n independent channels per spring family: ours (float64, exact and the
    reference's approximations) against the reference C++ (float32, -O2 and -O3), same inputs, same run."""
    rng = np.random.default_rng(0)
    x, v, g, vg, ag = (rng.normal(size=n) for _ in range(5))
    # mixed regimes per channel: a third each under-, critically and over-damped
    d = rng.uniform(1, 40, n)
    s = (d * d / 4) * rng.choice([0.25, 1.0, 4.0], n)
    dt, hl, freq = 1 / 60, 0.1, 2.0
    dh = float(S.halflife_to_damping(hl))
    sf = float(S.frequency_to_stiffness(freq))
    ours = {
        "simple_spring_damper_exact": lambda ap: S.spring_damper_exact(x, v, g, 0.0, dh * dh / 4, dh, dt, approx=ap),
        "critical_spring_damper_exact": lambda ap: S.spring_damper_exact(x, v, g, vg, dh * dh / 4, dh, dt, approx=ap),
        "spring_damper_exact (frequency, halflife)": lambda ap: S.spring_damper_exact(x, v, g, vg, sf, dh, dt,
                                                                                        approx=ap),
        "spring_damper_exact (mixed regimes)": lambda ap: S.spring_damper_exact(x, v, g, vg, s, d, dt, approx=ap),
        "tracking_spring_update": lambda ap: S.tracking_spring_update(x, v, g, vg, ag, 0.01, 0.2, 1.0, dt),
        "tracking_spring_update_improved": lambda ap: S.tracking_spring_update_improved(x, v, g, vg, ag, 1.0, 0.05,
                                                                                        0.0, dt, approx=ap),
        "tracking_spring_update_exact": lambda ap: S.tracking_spring_update_exact(x, v, g, vg, ag, 0.01, 0.2, 1.0,
                                                                                  dt, dt, approx=ap),
    }
    rb = _refbench()
    refs = {}
    if rb is not None:
        for var in ("O2", "O3"):
            refs[var] = {
                "simple_spring_damper_exact": rb.simple_spring_damper_exact.bind(x, v, g, hl, dt, variant=var),
                "critical_spring_damper_exact": rb.critical_spring_damper_exact.bind(x, v, g, vg, hl, dt, variant=var),
                "spring_damper_exact (frequency, halflife)": rb.spring_damper_exact.bind(x, v, g, vg, freq, hl, dt,
                                                                                         variant=var),
                "spring_damper_exact (mixed regimes)": rb.spring_damper_exact_stiffness_damping.bind(
                    x, v, g, vg, s, d, dt, variant=var),
                "tracking_spring_update": rb.tracking_spring_update.bind(x, v, g, vg, ag, 0.01, 0.2, 1.0, dt,
                                                                         variant=var),
                "tracking_spring_update_improved": rb.tracking_spring_update_improved.bind(
                    x, v, g, vg, ag, 1.0, 0.05, 0.0, dt, variant=var),
                "tracking_spring_update_exact": rb.tracking_spring_update_exact.bind(
                    x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, dt, variant=var),
            }
    print(f"one step on {n:.0e} channels, ns per channel-update (ours float64, reference float32); "
          "ratio = ours / reference -O3 (<= 1: at least its throughput)")
    print(f"  {'family':42s} {'exact':>7s} {'approx':>7s} {'ref O2':>7s} {'ref O3':>7s} {'exact/O3':>9s} {'approx/O3':>9s}")
    for name, fn in ours.items():
        cases = {"exact": lambda fn=fn: fn(False), "approx": lambda fn=fn: fn(True)}
        for var in refs:
            cases[var] = refs[var][name]
        if rb is not None:
            t = rb.compare(cases, reps=1, repeat=7)
        else:
            t = {k: best(c, 5) for k, c in cases.items()}
        ns = {k: t[k] / n * 1e9 for k in t}
        row = f"  {name:42s} {ns['exact']:7.2f} {ns['approx']:7.2f}"
        if refs:
            row += f" {ns['O2']:7.2f} {ns['O3']:7.2f} {ns['exact'] / ns['O3']:9.2f} {ns['approx'] / ns['O3']:9.2f}"
        print(row)
    if rb is not None:
        bench_updates_f32(rb, x, v, g, vg, ag, s, d, dt, hl, freq)
    # whole-signal kernel (error form): 600 frames x 1e4 channels
    T, C = 600, 10_000
    goal = np.cumsum(rng.normal(size=(T, C)), axis=0)
    t = best(lambda: S.track_signal(goal, 1 / 60, method="improved", cuts=[150, 300]), 3)
    print(f"  {'track_signal improved (600 x 1e4)':42s} {t * 1e3:8.1f} ms  {T * C / t / 1e6:8.1f} M channel-updates/s")


def bench_updates_f32(rb, x, v, g, vg, ag, s, d, dt: float, hl: float, freq: float) -> None:
    """The reference's conditions: float32 inputs (the values the reference gets) and outputs written
    into preallocated arrays (out=), against the reference -O3 on the same values, same run."""
    n = len(x)
    f32 = np.float32
    x, v, g, vg, ag, s, d = (np.asarray(a, f32) for a in (x, v, g, vg, ag, s, d))
    out = (np.empty(n, f32), np.empty(n, f32))
    dh = f32(S.halflife_to_damping(hl))
    sc = dh * dh / f32(4)  # critical in float32 arithmetic too (s - d^2/4 == 0)
    sf = f32(S.frequency_to_stiffness(freq))
    ours = {
        "simple_spring_damper_exact": lambda ap: S.spring_damper_exact(x, v, g, 0.0, sc, dh, dt, approx=ap, out=out),
        "critical_spring_damper_exact": lambda ap: S.spring_damper_exact(x, v, g, vg, sc, dh, dt, approx=ap, out=out),
        "spring_damper_exact (frequency, halflife)": lambda ap: S.spring_damper_exact(x, v, g, vg, sf, dh, dt,
                                                                                        approx=ap, out=out),
        "spring_damper_exact (mixed regimes)": lambda ap: S.spring_damper_exact(x, v, g, vg, s, d, dt, approx=ap,
                                                                                out=out),
        "tracking_spring_update": lambda ap: S.tracking_spring_update(x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, out=out),
        "tracking_spring_update_improved": lambda ap: S.tracking_spring_update_improved(
            x, v, g, vg, ag, 1.0, 0.05, 0.0, dt, approx=ap, out=out),
        "tracking_spring_update_exact": lambda ap: S.tracking_spring_update_exact(
            x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, dt, approx=ap, out=out),
    }
    refs = {
        "simple_spring_damper_exact": rb.simple_spring_damper_exact.bind(x, v, g, hl, dt, variant="O3"),
        "critical_spring_damper_exact": rb.critical_spring_damper_exact.bind(x, v, g, vg, hl, dt, variant="O3"),
        "spring_damper_exact (frequency, halflife)": rb.spring_damper_exact.bind(x, v, g, vg, freq, hl, dt,
                                                                                 variant="O3"),
        "spring_damper_exact (mixed regimes)": rb.spring_damper_exact_stiffness_damping.bind(x, v, g, vg, s, d, dt,
                                                                                             variant="O3"),
        "tracking_spring_update": rb.tracking_spring_update.bind(x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, variant="O3"),
        "tracking_spring_update_improved": rb.tracking_spring_update_improved.bind(x, v, g, vg, ag, 1.0, 0.05, 0.0,
                                                                                   dt, variant="O3"),
        "tracking_spring_update_exact": rb.tracking_spring_update_exact.bind(x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, dt,
                                                                             variant="O3"),
    }
    print(f"same, apples to apples: ours on float32 inputs with out= (float32 results) against the reference -O3; "
          "diff = max |ours approx - reference| (the reference's approximations, float32)")
    print(f"  {'family':42s} {'exact':>7s} {'approx':>7s} {'ref O3':>7s} {'exact/O3':>9s} {'approx/O3':>9s} "
          f"{'diff':>8s}  <= 1.0 ?")
    met = []
    for name, fn in ours.items():
        cases = {"exact": lambda fn=fn: fn(False), "approx": lambda fn=fn: fn(True), "O3": refs[name]}
        t = rb.compare(cases, reps=1, repeat=9)
        ns = {k: t[k] / n * 1e9 for k in t}
        re, ra = ns["exact"] / ns["O3"], ns["approx"] / ns["O3"]
        xa, va = (a.copy() for a in fn(True))
        xr, vr = refs[name].run()
        diff = max(float(np.max(np.abs(xa - xr))), float(np.max(np.abs(va - vr))))
        verdict = ("both" if re <= 1.0 and ra <= 1.0 else "exact only" if re <= 1.0
                   else "approx only" if ra <= 1.0 else "NO")
        met.append(verdict == "both")
        print(f"  {name:42s} {ns['exact']:7.2f} {ns['approx']:7.2f} {ns['O3']:7.2f} {re:9.2f} {ra:9.2f} "
              f"{diff:8.1e}  {verdict}")
    print(f"  rows with exact and approx at least the reference -O3's throughput: {sum(met)} of {len(met)}")


def load_clip(frames: int = 5000) -> tuple[Motion, str]:
    if CLIP.exists():
        from jointlimits.io import bvh

        m = bvh.load(CLIP)
        reps = int(np.ceil(frames / m.num_frames))
        rot = np.concatenate([m.rotations] * reps)[:frames]
        pos = np.concatenate([m.positions] * reps)[:frames]
        return Motion(m.skeleton, rot, pos, m.frame_time), f"{CLIP.name} (looped to {frames} frames)"
    J = 22
    rng = np.random.default_rng(1)
    sk = Skeleton([f"j{k}" for k in range(J)], np.arange(-1, J - 1), rng.normal(size=(J, 3)))
    t = np.arange(frames) / 30
    rot = quat.from_scaled_angle_axis(0.5 * np.sin(t[:, None, None] + rng.uniform(0, 6, (1, J, 3))))
    pos = np.repeat(sk.offsets[None], frames, 0)
    pos[:, 0] += t[:, None]
    return Motion(sk, rot, pos, 1 / 30), "synthetic"


def bench_filter() -> None:
    m, label = load_clip()
    cuts = [1000, 2500, 4000]
    popped = m.copy()
    popped.rotations[2500:] = quat.mul(quat.from_scaled_angle_axis([0.0, 0.7, 0.0]), popped.rotations[2500:])
    print(f"filter_motion on {m.num_frames} frames x {m.num_joints} joints, {label}:")
    for name, fn in {
        "cuts=[1000, 2500, 4000]": lambda: TR.filter_motion(popped, cuts=cuts),
        "detect=True": lambda: TR.filter_motion(popped, detect=True),
        "clipping (v_max, a_max)": lambda: TR.filter_motion(popped, v_max=10.0, a_max=300.0),
    }.items():
        t = best(fn)
        print(f"  {name:28s} {t:7.4f} s   target < {TARGET_S} s  ratio {t / TARGET_S:6.3f}"
              f"  {'OK' if t < TARGET_S else 'TOO SLOW'}")


if __name__ == "__main__":
    bench_updates()
    bench_filter()

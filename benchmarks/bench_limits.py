"""Joint-limit throughput: the full per-joint step per shape, fitting LAFAN1, applying to a clip.

    python benchmarks/bench_limits.py

Figures are printed beside the reference C++ (-O2, one core, 1e6 rotations) measured on this kind
of machine. Batches go through the phased step (jointlimits.limits._kernels.phased: numpy's SIMD ufuncs for atan2,
tanh and tan between compiled loops); the scalar kernel it falls back to is timed too. Projection in limit space alone and subsampling are in bench_projection.py.
"""

from __future__ import annotations

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from jointlimits import JointLimits, bvh, quat  # noqa: E402
from jointlimits.limits._kernels.fused import PHASED_MIN_ROWS, _fitted_kernel  # noqa: E402
from jointlimits.limits.joint import FittedLimit, fit_shape  # noqa: E402
from _timing import best  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAFAN = ROOT.parent / "shared" / "data" / "mocap" / "lafan1"
# reference C++ -O2, ns per rotation: quaternion -> limited quaternion (relative to reference,
# log, project, soften, exp), without and with swing-twist
TARGET_STEP = {"box": (148, 203), "ellipsoid": (233, 301), "kdop": (213, 313)}


def step_benchmark(n: int = 1_000_000) -> None:
    rng = np.random.default_rng(0)
    q = quat.normalize(rng.normal(size=(n, 4)))
    # a ball-joint-like cloud: ~0.4 rad spread, not reaching past pi (as real limits)
    cloud = rng.normal(0, 0.4, (5000, 3)) * [1.0, 0.7, 0.4]
    ref = quat.normalize(np.array([0.9, 0.1, 0.2, 0.1]))
    axis = np.array([1.0, 0.0, 0.0])
    print(f"full per-joint step on {n:,} random rotations (soften on), ns per rotation:")
    print(f"  {'shape':<14}{'ours':>8}{'C++':>8}{'ratio':>8}   {'swing-twist':>12}{'C++':>8}{'ratio':>8}")
    for kind in ("box", "oriented-box", "ellipsoid", "kdop"):
        shape = fit_shape(cloud, kind)
        if kind == "kdop":
            shape.exact = False  # the reference's slab clamps, for a like-for-like figure
        full = FittedLimit(ref, axis, shape=shape)
        twist_cloud = cloud * [1.0, 0.0, 0.0]
        st = FittedLimit(ref, axis, swing=fit_shape(cloud * [0.0, 1.0, 1.0], kind), twist=fit_shape(twist_cloud, kind))
        t1 = best(lambda: full.project(q, (1.0, 0.1))) / n * 1e9
        t2 = best(lambda: st.project(q, (1.0, 0.1))) / n * 1e9
        tgt = TARGET_STEP.get(kind)
        c1, c2 = (f"{tgt[0]:>8}", f"{tgt[1]:>8}") if tgt else (f"{'-':>8}", f"{'-':>8}")
        r1 = f"{t1 / tgt[0]:>8.2f}" if tgt else f"{'':>8}"
        r2 = f"{t2 / tgt[1]:>8.2f}" if tgt else f"{'':>8}"
        print(f"  {kind:<14}{t1:>8.0f}{c1}{r1}   {t2:>12.0f}{c2}{r2}")
    exact = FittedLimit(ref, axis, shape=fit_shape(cloud, "kdop"))
    print(f"  kdop, exact closest point (no C++ equivalent): {best(lambda: exact.project(q)) / n * 1e9:.0f} ns")
    print("  the same step on the one-rotation-at-a-time kernel (batches under "
          f"{PHASED_MIN_ROWS} rotations, CCD):")
    for kind in ("box", "ellipsoid", "kdop"):
        shape = fit_shape(cloud, kind)
        if kind == "kdop":
            shape.exact = False
        lim = FittedLimit(ref, axis, shape=shape)
        mode, covers, twist, a, b = lim._packed
        out = np.empty_like(q)
        t1 = best(lambda: _fitted_kernel(q, ref, axis, mode, covers, True, False, 1.0, 0.1, *twist, *a, *b,
                                         out, out[:0])) / n * 1e9
        print(f"  {kind:<14}{t1:>8.0f}{TARGET_STEP[kind][0]:>8}{t1 / TARGET_STEP[kind][0]:>8.2f}")


def dataset_benchmark() -> None:
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        print("(../shared/data/mocap/lafan1 not found: skipping the LAFAN1 fit and apply figures)")
        return
    t = time.perf_counter()
    ms = [bvh.load(p) for p in clips]
    t_load = time.perf_counter() - t
    frames = sum(m.num_frames for m in ms)
    print(f"LAFAN1: {len(ms)} clips, {frames:,} frames x {ms[0].num_joints} joints (loaded in {t_load:.2f} s)")
    for shape in ("box", "ellipsoid", "kdop"):
        for st in (False, True):
            tf = best(lambda: JointLimits.fit(ms, shape=shape, swing_twist=st), repeat=2)
            print(f"  fit {shape:<10} swing_twist={st!s:<5}: {tf:6.2f} s  (target < 5 s)")
    lim = JointLimits.fit(ms[1:], shape="ellipsoid")
    clip = max(ms, key=lambda m: m.num_frames)[:5000]
    ta = best(lambda: lim.apply(clip), repeat=3)
    ts = best(lambda: lim.apply(clip, soften=(1.0, 0.1), smooth=True), repeat=3)
    print(f"  apply ellipsoid limits to a {clip.num_frames}-frame clip: {ta:.3f} s "
          f"(soften + smooth: {ts:.3f} s; target < 0.5 s)")


def implicit_benchmark(n: int = 200_000) -> None:
    """Implicit limits on LAFAN1 (targets: contains <= 100 ns, projection <= 2 us per rotation,
    fitting all clips with coupling <= 10 s)."""
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        return
    ms = [bvh.load(p) for p in clips]
    JointLimits.fit(ms[:1], shape="implicit", coupled=True)  # compile
    tf = best(lambda: JointLimits.fit(ms, shape="implicit", coupled=True), repeat=2)
    tu = best(lambda: JointLimits.fit(ms, shape="implicit"), repeat=2)
    lim = JointLimits.fit(ms, shape="implicit", coupled=True)
    rng = np.random.default_rng(1)
    q = quat.normalize(rng.normal(size=(n, 4)))
    print(f"implicit limits on LAFAN1 ({len(ms)} clips): fit {tu:.2f} s, with coupling {tf:.2f} s (target <= 10 s)")
    print(f"  per rotation, batches of {n:,} random rotations:")
    for name in ("LeftArm", "LeftForeArm", "LeftUpLeg"):
        j = lim.skeleton.index(name)
        one = lim.joints[j]
        parent = q[::-1].copy()
        kw = {"parent": parent} if hasattr(one, "parent") else {}
        tc = best(lambda: one.contains(q, **kw)) / n * 1e9
        tp = best(lambda: one.project(q, **kw), repeat=3) / n * 1e6
        inside = one.contains(q, **kw).mean()
        print(f"  {name:<12}{'coupled' if kw else 'implicit':<9} contains {tc:6.0f} ns (target 100), "
              f"project {tp:5.2f} us (target 2); {100 * inside:.2f}% of random rotations inside")


if __name__ == "__main__":
    step_benchmark()
    dataset_benchmark()
    implicit_benchmark()

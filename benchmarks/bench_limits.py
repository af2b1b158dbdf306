"""Joint-limit throughput against the reference C++ (../shared/refbench), in one run.

    python benchmarks/bench_limits.py [--n 200000] [--quick]

Prints, for the full per-joint step (relative to the reference, log, project, soften, exp) of every
shape with swing-twist off and on, for one 22-joint pose and batches of poses, and for the fixed
cost of a call, our time beside the reference's -O2, -O3 (its own Makefiles' level) and
-O3 -march=native builds and the ratios ours / reference (< 1: we are faster). The reference is
float32 with fast approximations; ours is float64 and exact. Times are medians of interleaved
rounds (thread CPU time). Without ../shared the reference columns are skipped (with a message).
Then the LAFAN1 fit / apply figures and the implicit limits.
"""

from __future__ import annotations

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from jointlimits import JointLimits
from jointlimits.cleanup.smoothing import smooth_switches  # noqa: E402
from jointlimits._native import _core
from jointlimits.io import bvh
from jointlimits.motion import quat  # noqa: E402
from jointlimits.limits.joint import FittedLimit, fit_shape  # noqa: E402
from _timing import best  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
LAFAN = SHARED / "data" / "mocap" / "lafan1"
VARIANTS = ("O2", "O3", "O3native")
try:
    sys.path.insert(0, str(SHARED / "refbench"))
    import refbench as rb  # noqa: E402
except ImportError:
    rb = None
SOFTEN = (1.0, 0.1)  # the reference demo's falloff and radius


def _timer_compare(cases: dict, reps: int, repeat: int = 7) -> dict:
    if rb is not None:
        return rb.compare(cases, reps=reps, repeat=repeat, timer=time.thread_time)
    out = {}
    for name, fn in cases.items():
        out[name] = best(lambda: [fn() for _ in range(reps)], repeat=repeat) / reps
    return out


def ref_shape(shape):
    """The reference's Shape (refbench) equal to one of our fitted shapes."""
    kind = shape.kind
    if kind == "box":
        return rb.Shape(lo=shape.lo, hi=shape.hi)
    if kind == "oriented-box":
        return rb.Shape(position=shape.position, rotation=shape.rotation, lo=shape.lo, hi=shape.hi)
    if kind == "ellipsoid":
        return rb.Shape(position=shape.position, rotation=shape.rotation, scale=shape.scale)
    if kind == "kdop":
        return rb.Shape(position=shape.position, rotation=shape.rotation, mins=shape.mins, maxs=shape.maxs)
    raise ValueError(kind)


REF_KIND = {"box": "rect", "oriented-box": "rect", "ellipsoid": "ellipsoid", "kdop": "kdop"}


def ref_joint(lim: FittedLimit):
    if lim.swing_twist:
        return rb.Joint(lim.reference, lim.twist_axis, swing=ref_shape(lim.swing), twist=ref_shape(lim.twist))
    return rb.Joint(lim.reference, lim.twist_axis, full=ref_shape(lim.shape))


def _row(label: str, ours: float, refs: dict, unit: float, fmt: str = "{:8.1f}") -> str:
    s = f"  {label:<34}" + fmt.format(ours * unit)
    for v in VARIANTS:
        s += fmt.format(refs[v] * unit) if v in refs else f"{'-':>8}"
    for v in VARIANTS:
        s += f"{ours / refs[v]:8.2f}" if v in refs else f"{'-':>8}"
    return s


def _header(unit: str) -> str:
    h = f"  {'':<34}{'ours':>8}" + "".join(f"{'C++ ' + v:>8}"[-8:] for v in VARIANTS)
    return f"{h}" + "".join(f"{'/' + v:>8}" for v in VARIANTS) + f"   ({unit})"


def _limits(kind: str, rng) -> tuple[FittedLimit, FittedLimit]:
    """One joint's limit of ``kind``, without and with swing-twist, fitted to a ball-joint-like cloud."""
    cloud = rng.normal(0, 0.4, (5000, 3)) * [1.0, 0.7, 0.4]
    ref = quat.normalize(np.array([0.9, 0.1, 0.2, 0.1]))
    axis = np.array([1.0, 0.0, 0.0])
    full = FittedLimit(ref, axis, shape=fit_shape(cloud, kind))
    st = FittedLimit(ref, axis, swing=fit_shape(cloud * [0.0, 1.0, 1.0], kind), twist=fit_shape(cloud * [1.0, 0, 0], kind))
    return full, st


def step_benchmark(n: int) -> None:
    rng = np.random.default_rng(0)
    q = quat.normalize(rng.normal(size=(n, 4)))
    print(f"per-joint step on {n:,} random rotations (soften {SOFTEN}), ns per rotation:")
    print(_header("ns"))
    for kind in ("box", "oriented-box", "ellipsoid", "kdop"):
        full, st = _limits(kind, rng)
        for lim, tag in ((full, ""), (st, " swing-twist")):
            variants = [("", lim)]
            if kind == "kdop":  # the default exact closest point, and the reference's slab clamps
                slabs = FittedLimit(lim.reference, lim.twist_axis, shape=lim.shape, swing=lim.swing, twist=lim.twist)
                for part in (slabs.shape, slabs.swing, slabs.twist):
                    if part is not None:
                        part.exact = False
                slabs = FittedLimit(slabs.reference, slabs.twist_axis, shape=slabs.shape, swing=slabs.swing,
                                    twist=slabs.twist)
                variants = [(" exact", lim), (" slabs", slabs)]
            for sub, one in variants:
                cases = {"ours": lambda one=one: one.project(q, SOFTEN)}
                if rb is not None:
                    j = ref_joint(one)
                    for v in VARIANTS:
                        cases[v] = rb.joint_step.bind(q, j, REF_KIND[kind], one.swing_twist, variant=v)
                t = _timer_compare(cases, reps=1, repeat=7)
                print(_row(kind + sub + tag, t.pop("ours"), t, 1e9 / n))


def batch_benchmark() -> None:
    """ns per rotation at small batch sizes (the old fused/phased switch sat at 128)."""
    rng = np.random.default_rng(2)
    full, _ = _limits("ellipsoid", rng)
    print("\nper-joint step (ellipsoid, soften on) by batch size, ns per rotation "
          "(ours through FittedLimit.project, Python call included):")
    print(_header("ns"))
    for n in (1, 16, 127, 128, 1024, 16384):
        q = quat.normalize(rng.normal(size=(n, 4)))
        reps = max(1, 20000 // n)
        cases = {"ours": lambda q=q: full.project(q, SOFTEN)}
        if rb is not None:
            j = ref_joint(full)
            for v in VARIANTS:
                cases[v] = rb.joint_step.bind(q, j, "ellipsoid", False, variant=v)
        t = _timer_compare(cases, reps=reps, repeat=7)
        print(_row(f"{n} rotations", t.pop("ours"), t, 1e9 / n))


def fixed_cost_benchmark() -> None:
    """Fixed cost per call: one rotation through the public API, minus the per-rotation cost."""
    rng = np.random.default_rng(3)
    print("\nfixed cost per call (one rotation; per-rotation cost of a 16k batch subtracted), ns:")
    big = quat.normalize(rng.normal(size=(16384, 4)))
    one = big[:1].copy()
    for kind in ("box", "ellipsoid"):
        full, _ = _limits(kind, rng)
        out = np.empty((1, 4))
        per_row = _timer_compare({"b": lambda: full.project(big)}, reps=3)["b"] / len(big)
        t = _timer_compare({"api": lambda: full.project(one),
                            "api soften": lambda: full.project(one, SOFTEN),
                            "core": lambda: _core.limit_step(full._compiled, one, False, 0.0, 0.0, out)},
                           reps=2000)
        print(f"  {kind:<12} FittedLimit.project {1e9 * (t['api'] - per_row):6.0f}   with soften "
              f"{1e9 * (t['api soften'] - per_row):6.0f}   _core.limit_step {1e9 * (t['core'] - per_row):6.0f}"
              f"   (one rotation's work: {1e9 * per_row:.0f})")


def pose_benchmark() -> None:
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        print("\n(../shared/data/mocap/lafan1 not found: skipping the whole-pose figures)")
        return
    m = bvh.load(clips[0])
    print(f"\nwhole poses ({m.num_joints} joints, limits fitted on {clips[0].name}), JointLimits.project, "
          "soften on:")
    print(_header("us per pose"))
    poses = m.rotations
    for kind in ("oriented-box", "ellipsoid", "kdop"):
        for st in (False, True):
            lim = JointLimits.fit(m, shape=kind, swing_twist=st)
            if kind == "kdop":  # the reference's slab clamps, like for like
                for j, one in list(lim.joints.items()):
                    parts = [one.shape] if one.shape is not None else [one.swing, one.twist]
                    for p in parts:
                        p.exact = False
                    lim = lim.with_limit(j, FittedLimit(one.reference, one.twist_axis, shape=one.shape, swing=one.swing,
                                                 twist=one.twist))
            # random rotations: most joints out of their limits (the reference poses are all inside)
            rng = np.random.default_rng(4)
            pose = quat.normalize(poses[0] + rng.normal(0, 0.3, poses[0].shape))
            batch = quat.normalize(poses[:1000] + rng.normal(0, 0.3, poses[:1000].shape))
            joints = None
            if rb is not None:
                idx = {j: one for j, one in lim.joints.items()}
                joints = [ref_joint(idx[j]) if j in idx else rb.Joint() for j in range(m.num_joints)]
            for label, q, reps in ((f"1 pose, {kind}{' st' if st else ''}", pose, 2000),
                                   (f"1000 poses, {kind}{' st' if st else ''}", batch, 2)):
                cases = {"ours": lambda q=q: lim.project(q, SOFTEN)}
                if joints is not None:
                    for v in VARIANTS:
                        cases[v] = rb.pose_step.bind(q, joints, REF_KIND[kind], st, variant=v)
                t = _timer_compare(cases, reps=reps, repeat=7)
                frames = q.size // (4 * m.num_joints)
                print(_row(label, t.pop("ours"), t, 1e6 / frames, "{:8.2f}"))


def dataset_benchmark() -> None:
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        print("(../shared/data/mocap/lafan1 not found: skipping the LAFAN1 fit and apply figures)")
        return
    t = time.perf_counter()
    ms = [bvh.load(p) for p in clips]
    t_load = time.perf_counter() - t
    frames = sum(m.num_frames for m in ms)
    print(f"\nLAFAN1: {len(ms)} clips, {frames:,} frames x {ms[0].num_joints} joints (loaded in {t_load:.2f} s)")
    for shape in ("box", "ellipsoid", "kdop"):
        for st in (False, True):
            tf = best(lambda: JointLimits.fit(ms, shape=shape, swing_twist=st), repeat=2)
            print(f"  fit {shape:<10} swing_twist={st!s:<5}: {tf:6.2f} s  (target < 5 s)")
    lim = JointLimits.fit(ms[1:], shape="ellipsoid")
    clip = max(ms, key=lambda m: m.num_frames)[:5000]
    ta = best(lambda: lim.apply(clip), repeat=3)
    ts = best(lambda: lim.apply(clip, soften=(1.0, 0.1), smooth=smooth_switches), repeat=3)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000, help="rotations for the per-joint step")
    ap.add_argument("--quick", action="store_true", help="only the step, batch, fixed-cost and pose figures")
    args = ap.parse_args()
    if rb is None:
        print("(../shared/refbench not found: printing our figures only, no reference ratios)")
    step_benchmark(args.n)
    batch_benchmark()
    fixed_cost_benchmark()
    pose_benchmark()
    if not args.quick:
        dataset_benchmark()
        implicit_benchmark()


if __name__ == "__main__":
    main()

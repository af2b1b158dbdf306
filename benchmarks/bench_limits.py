"""Joint-limit throughput against the reference C++ (../shared/refbench), in one run.

    python -m benchmarks.bench_limits [--quick]

The full per-joint step (relative to the reference, log, project, soften, exp) of every shape with
swing-twist off and on, for one 22-joint pose and batches of poses, and the fixed cost of a call:
ours beside the reference's -O3 build (its own Makefiles' level; full mode also -O2 and -O3
-march=native), ratio = ours / reference -O3 (< 1: we are faster). The reference is float32 with
fast approximations; ours is float64 and exact. Times are medians of interleaved rounds (thread CPU
time). Full mode adds the LAFAN1 fit / apply figures and the implicit limits.
Full: 200k rotations, 7 rounds; quick: 20k rotations, 3 rounds.
"""

from __future__ import annotations

import time

import numpy as np

from jointlimits import JointLimits
from jointlimits.limits.joint import FittedLimit, fit_shape

from . import _compat as C
from ._common import LAFAN, main_single, record, refbench, refbench_missing, skipped
from ._timing import best

BENCH = "limits"
SOFTEN = (1.0, 0.1)  # the reference demo's falloff and radius
REF_KIND = {"box": "rect", "oriented-box": "rect", "ellipsoid": "ellipsoid", "kdop": "kdop"}
REF = "refbench C++ -O3, same run"


class _Ctx:
    def __init__(self, quick: bool):
        self.rb = refbench()
        self.variants = ("O3",) if quick else ("O2", "O3", "O3native")
        self.repeat = 3 if quick else 7
        self.quat = C.mod("motion.quat")

    def compare(self, cases: dict, reps: int, repeat: int | None = None) -> dict:
        repeat = repeat or self.repeat
        if self.rb is not None:
            return self.rb.compare(cases, reps=reps, repeat=repeat, timer=time.thread_time)
        return {
            name: best(lambda fn=fn: [fn() for _ in range(reps)], repeat=repeat) / reps for name, fn in cases.items()
        }

    def rec(self, name: str, t: dict, scale: float, unit: str, data: str) -> dict:
        """A record of ours (t['ours']) against the reference -O3, other builds as extras."""
        ours = t.pop("ours") * scale
        extra = {f"ref_{v}": t[v] * scale for v in self.variants if v in t and v != "O3"}
        return record(
            BENCH,
            name,
            ours,
            unit,
            data=data,
            anchor=REF if "O3" in t else None,
            anchor_value=t["O3"] * scale if "O3" in t else None,
            **extra,
        )


def ref_shape(rb, shape):
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


def ref_joint(rb, lim: FittedLimit):
    if lim.swing_twist:
        return rb.Joint(lim.reference, lim.twist_axis, swing=ref_shape(rb, lim.swing), twist=ref_shape(rb, lim.twist))
    return rb.Joint(lim.reference, lim.twist_axis, full=ref_shape(rb, lim.shape))


def _limits(quat, kind: str, rng) -> tuple[FittedLimit, FittedLimit]:
    """One joint's limit of ``kind``, without and with swing-twist, fitted to a ball-joint-like cloud."""
    cloud = rng.normal(0, 0.4, (5000, 3)) * [1.0, 0.7, 0.4]
    ref = quat.normalize(np.array([0.9, 0.1, 0.2, 0.1]))
    axis = np.array([1.0, 0.0, 0.0])
    full = FittedLimit(ref, axis, shape=fit_shape(cloud, kind))
    st = FittedLimit(
        ref, axis, swing=fit_shape(cloud * [0.0, 1.0, 1.0], kind), twist=fit_shape(cloud * [1.0, 0, 0], kind)
    )
    return full, st


def _slabs(lim: FittedLimit) -> FittedLimit:
    """The same k-DOP limit with the reference's slab clamps instead of the exact closest point."""
    slabs = FittedLimit(lim.reference, lim.twist_axis, shape=lim.shape, swing=lim.swing, twist=lim.twist)
    for part in (slabs.shape, slabs.swing, slabs.twist):
        if part is not None:
            part.exact = False
    return FittedLimit(slabs.reference, slabs.twist_axis, shape=slabs.shape, swing=slabs.swing, twist=slabs.twist)


def step_benchmark(cx: _Ctx, n: int) -> list[dict]:
    rb, quat = cx.rb, cx.quat
    rng = np.random.default_rng(0)
    q = quat.normalize(rng.normal(size=(n, 4)))
    data = f"{n:,} random rotations, soften {SOFTEN}; median of {cx.repeat} interleaved rounds, thread CPU time"
    recs = []
    for kind in ("box", "oriented-box", "ellipsoid", "kdop"):
        full, st = _limits(quat, kind, rng)
        for lim, tag in ((full, ""), (st, " swing-twist")):
            variants = [("", lim)] if kind != "kdop" else [(" exact", lim), (" slabs", _slabs(lim))]
            for sub, one in variants:
                cases = {"ours": lambda one=one: one.project(q, SOFTEN)}
                if rb is not None:
                    j = ref_joint(rb, one)
                    for v in cx.variants:
                        cases[v] = rb.joint_step.bind(q, j, REF_KIND[kind], one.swing_twist, variant=v)
                t = cx.compare(cases, reps=1)
                recs.append(cx.rec(f"step {kind}{sub}{tag}", t, 1e9 / n, "ns/rotation", data))
    return recs


def batch_benchmark(cx: _Ctx) -> list[dict]:
    """ns per rotation at small batch sizes (the old fused/phased switch sat at 128)."""
    rb, quat = cx.rb, cx.quat
    rng = np.random.default_rng(2)
    full, _ = _limits(quat, "ellipsoid", rng)
    recs = []
    for n in (1, 16, 127, 128, 1024, 16384):
        q = quat.normalize(rng.normal(size=(n, 4)))
        reps = max(1, 20000 // n)
        cases = {"ours": lambda q=q: full.project(q, SOFTEN)}
        if rb is not None:
            j = ref_joint(rb, full)
            for v in cx.variants:
                cases[v] = rb.joint_step.bind(q, j, "ellipsoid", False, variant=v)
        t = cx.compare(cases, reps=reps)
        recs.append(
            cx.rec(
                f"step ellipsoid, batch of {n}",
                t,
                1e9 / n,
                "ns/rotation",
                "random rotations, soften on, through FittedLimit.project (Python call included)",
            )
        )
    return recs


def fixed_cost_benchmark(cx: _Ctx) -> list[dict]:
    """Fixed cost per call: one rotation through the public API, minus the per-rotation cost."""
    quat, core = cx.quat, C.core()
    rng = np.random.default_rng(3)
    big = quat.normalize(rng.normal(size=(16384, 4)))
    one = big[:1].copy()
    recs = []
    for kind in ("box", "ellipsoid"):
        full, _ = _limits(quat, kind, rng)
        out = np.empty((1, 4))
        per_row = cx.compare({"b": lambda: full.project(big)}, reps=3)["b"] / len(big)
        t = cx.compare(
            {
                "api": lambda: full.project(one),
                "api soften": lambda: full.project(one, SOFTEN),
                "core": lambda: core.limit_step(full._compiled, one, False, 0.0, 0.0, out),
            },
            reps=2000,
        )
        data = "one rotation per call; the per-rotation cost of a 16k batch subtracted"
        recs += [
            record(
                BENCH,
                f"fixed cost {kind}: FittedLimit.project",
                1e9 * (t["api"] - per_row),
                "ns",
                data=data,
                per_rotation_ns=1e9 * per_row,
            ),
            record(BENCH, f"fixed cost {kind}: with soften", 1e9 * (t["api soften"] - per_row), "ns", data=data),
            record(BENCH, f"fixed cost {kind}: _core.limit_step", 1e9 * (t["core"] - per_row), "ns", data=data),
        ]
    return recs


def pose_benchmark(cx: _Ctx) -> list[dict]:
    rb, quat = cx.rb, cx.quat
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        return [skipped(BENCH, "whole poses", f"LAFAN1 clips not found at {LAFAN}")]
    m = C.mod("io.bvh").load(clips[0])
    poses = m.rotations
    recs = []
    for kind in ("oriented-box", "ellipsoid", "kdop"):
        for st in (False, True):
            lim = JointLimits.fit(m, shape=kind, swing_twist=st)
            if kind == "kdop":  # the reference's slab clamps, like for like
                for j, one in list(lim.joints.items()):
                    parts = [one.shape] if one.shape is not None else [one.swing, one.twist]
                    for p in parts:
                        p.exact = False
                    lim = lim.with_limit(
                        j, FittedLimit(one.reference, one.twist_axis, shape=one.shape, swing=one.swing, twist=one.twist)
                    )
            # random rotations: most joints out of their limits (the reference poses are all inside)
            rng = np.random.default_rng(4)
            pose = quat.normalize(poses[0] + rng.normal(0, 0.3, poses[0].shape))
            batch = quat.normalize(poses[:1000] + rng.normal(0, 0.3, poses[:1000].shape))
            joints = None
            if rb is not None:
                joints = [ref_joint(rb, lim.joints[j]) if j in lim.joints else rb.Joint() for j in range(m.num_joints)]
            for label, q, reps in (
                (f"1 pose, {kind}{' st' if st else ''}", pose, 2000),
                (f"1000 poses, {kind}{' st' if st else ''}", batch, 2),
            ):
                cases = {"ours": lambda q=q: lim.project(q, SOFTEN)}
                if joints is not None:
                    for v in cx.variants:
                        cases[v] = rb.pose_step.bind(q, joints, REF_KIND[kind], st, variant=v)
                t = cx.compare(cases, reps=reps)
                frames = q.size // (4 * m.num_joints)
                recs.append(
                    cx.rec(
                        f"JointLimits.project {label}",
                        t,
                        1e6 / frames,
                        "us/pose",
                        f"{m.num_joints} joints, limits fitted on lafan1/{clips[0].name}, poses jittered "
                        "by 0.3 (most joints outside), soften on",
                    )
                )
    return recs


def dataset_benchmark() -> list[dict]:
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        return [skipped(BENCH, "LAFAN1 fit and apply", f"LAFAN1 clips not found at {LAFAN}")]
    bvh = C.mod("io.bvh")
    ms = [bvh.load(p) for p in clips]
    frames = sum(m.num_frames for m in ms)
    data = f"lafan1, {len(ms)} clips, {frames:,} frames x {ms[0].num_joints} joints; best of 2"
    recs = []
    for shape in ("box", "ellipsoid", "kdop"):
        for st in (False, True):
            tf = best(lambda: JointLimits.fit(ms, shape=shape, swing_twist=st), repeat=2)
            recs.append(
                record(BENCH, f"fit {shape}{' swing-twist' if st else ''}, all LAFAN1", tf, "s", data=data, target=5.0)
            )
    lim = JointLimits.fit(ms[1:], shape="ellipsoid")
    clip = max(ms, key=lambda m: m.num_frames)[:5000]
    ta = best(lambda: lim.apply(clip), repeat=3)
    ts = best(lambda: lim.apply(clip, soften=(1.0, 0.1), smooth=C.smooth_arg()), repeat=3)
    d = f"ellipsoid limits on a {clip.num_frames}-frame LAFAN1 clip; best of 3"
    return recs + [
        record(BENCH, "apply ellipsoid limits, 5,000 frames", ta, "s", data=d, target=0.5),
        record(BENCH, "apply ellipsoid limits + soften + smooth, 5,000 frames", ts, "s", data=d, target=0.5),
    ]


def implicit_benchmark(n: int = 200_000) -> list[dict]:
    """Implicit limits on LAFAN1 (targets: contains <= 100 ns, projection <= 2 us per rotation,
    fitting all clips with coupling <= 10 s)."""
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        return [skipped(BENCH, "implicit limits", f"LAFAN1 clips not found at {LAFAN}")]
    bvh, quat = C.mod("io.bvh"), C.mod("motion.quat")
    ms = [bvh.load(p) for p in clips]
    JointLimits.fit(ms[:1], shape="implicit", coupled=True)  # compile
    tf = best(lambda: JointLimits.fit(ms, shape="implicit", coupled=True), repeat=2)
    tu = best(lambda: JointLimits.fit(ms, shape="implicit"), repeat=2)
    lim = JointLimits.fit(ms, shape="implicit", coupled=True)
    rng = np.random.default_rng(1)
    q = quat.normalize(rng.normal(size=(n, 4)))
    data = f"lafan1, {len(ms)} clips"
    recs = [
        record(BENCH, "fit implicit, all LAFAN1", tu, "s", data=data + "; best of 2", target=10.0),
        record(BENCH, "fit implicit + coupled, all LAFAN1", tf, "s", data=data + "; best of 2", target=10.0),
    ]
    for name in ("LeftArm", "LeftForeArm", "LeftUpLeg"):
        j = lim.skeleton.index(name)
        one = lim.joints[j]
        parent = q[::-1].copy()
        kw = {"parent": parent} if hasattr(one, "parent") else {}
        what = "coupled" if kw else "implicit"
        tc = best(lambda: one.contains(q, **kw)) / n * 1e9
        tp = best(lambda: one.project(q, **kw), repeat=3) / n * 1e6
        inside = one.contains(q, **kw).mean()
        d = f"{data}; batches of {n:,} random rotations"
        recs += [
            record(BENCH, f"{name} ({what}) contains", tc, "ns/rotation", data=d, target=100.0),
            record(BENCH, f"{name} ({what}) project", tp, "us/rotation", data=d, target=2.0),
            record(BENCH, f"{name} ({what}) random rotations inside", 100 * inside, "%", kind="quality", data=d),
        ]
    return recs


def run(quick: bool) -> list[dict]:
    cx = _Ctx(quick)
    recs = [] if cx.rb is not None else [skipped(BENCH, "reference C++ columns", refbench_missing())]
    recs += step_benchmark(cx, 20_000 if quick else 200_000)
    recs += batch_benchmark(cx)
    recs += fixed_cost_benchmark(cx)
    recs += pose_benchmark(cx)
    if not quick:
        recs += dataset_benchmark()
        recs += implicit_benchmark()
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

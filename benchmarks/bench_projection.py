"""Limit-space projections, soften and subsample against the reference C++ (one core).

    python -m benchmarks.bench_projection [--quick]

Nanoseconds per point for each batched projection and for soften, ours (float64, into a
preallocated ``out=``, and with a fresh output) beside the reference C++ of ../shared/refbench built
-O3 (its own Makefiles' level; full mode also -O2 and -O3 -march=native), in the same run; ratio =
ours / reference -O3 (< 1: we are faster). Medians of interleaved rounds (thread CPU time). Then the
subsample speed-up against the naive O(N*M) greedy loop (compiled, the reference algorithm).
Full: 1M points, 7 rounds, subsample 100k; quick: 100k points, 3 rounds, subsample 20k.
"""

from __future__ import annotations

import time

import numpy as np

from jointlimits import limits as L
from jointlimits.limits.cloud import _subsample_naive_kernel

from ._common import main_single, record, refbench, refbench_missing, skipped
from ._timing import best, clock

BENCH = "projection"


def _limits(rng):
    """Limits fitted (with this library) to an anisotropic mocap-like cloud."""
    ang = rng.normal(size=3)
    ang /= np.linalg.norm(ang)
    c, s = np.cos(0.7), np.sin(0.7)
    k = np.array([[0, -ang[2], ang[1]], [ang[2], 0, -ang[0]], [-ang[1], ang[0], 0]])
    rot = np.eye(3) + s * k + (1 - c) * k @ k
    cloud = rng.normal(size=(5000, 3)) * [0.9, 0.45, 0.15] @ rot.T + [0.3, -0.2, 0.1]
    pos, R = L.fit_orientation(cloud)
    return {
        "cloud": cloud,
        "aabb": L.fit_box(cloud, 0.05),
        "pos": pos,
        "rot": R,
        "obb": L.fit_oriented_box(cloud, pos, R, 0.05),
        "scale": L.fit_ellipsoid(cloud, pos, R, 0.05),
        "kdop": L.fit_kdop(cloud, pos, R, L.kdop_axes(), 0.05),
    }


def bench_projections(n: int, repeats: int, variants: tuple[str, ...]) -> list[dict]:
    rb = refbench()
    rng = np.random.default_rng(0)
    lim = _limits(rng)
    # points: uniform in the ball of radius pi (most of them violate the limits, like the
    # reference's test points pushed outward), plus cloud-like points inside
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    pts = d * (np.pi * rng.random((n, 1)) ** (1 / 3))
    half = n // 4
    pts[:half] = lim["cloud"][rng.integers(0, len(lim["cloud"]), half)]
    pts = np.ascontiguousarray(pts)
    out = np.empty_like(pts)
    axes = L.kdop_axes()
    lo, hi = lim["aabb"]
    olo, ohi = lim["obb"]
    mins, maxs = lim["kdop"]
    pos, rot = lim["pos"], lim["rot"]
    proj = L.project_box(pts, olo, ohi, pos, rot)
    pts32 = pts.astype(np.float32)  # the values the reference computes on (it converts to float32)
    out32 = np.empty_like(pts32)
    cases = {  # name: (ours with **kw, reference RefCall factory)
        "box (axis-aligned)": (
            lambda **kw: L.project_box(pts, lo, hi, **kw),
            lambda v: rb.project_box.bind(pts, lo, hi, variant=v),
        ),
        "box (axis-aligned) float32": (
            lambda **kw: L.project_box(pts32, lo, hi, **kw),
            lambda v: rb.project_box.bind(pts32, lo, hi, variant=v),
        ),
        "oriented box": (
            lambda **kw: L.project_box(pts, olo, ohi, pos, rot, **kw),
            lambda v: rb.project_oriented_box.bind(pts, olo, ohi, pos, rot, variant=v),
        ),
        "ellipsoid": (
            lambda **kw: L.project_ellipsoid(pts, lim["scale"], pos, rot, **kw),
            lambda v: rb.project_ellipsoid.bind(pts, lim["scale"], pos, rot, variant=v),
        ),
        "ellipsoid (eps=1e-5, 8 it)": (
            lambda **kw: L.project_ellipsoid(pts, lim["scale"], pos, rot, iterations=8, eps=1e-5, **kw),
            lambda v: rb.project_ellipsoid.bind(pts, lim["scale"], pos, rot, variant=v),
        ),
        "k-DOP (slab clamps)": (
            lambda **kw: L.project_kdop(pts, mins, maxs, pos, rot, axes, **kw),
            lambda v: rb.project_kdop.bind(pts, mins, maxs, pos, rot, variant=v),
        ),
        "k-DOP exact (active set)": (
            lambda **kw: L.project_kdop(pts, mins, maxs, pos, rot, axes, exact=True, **kw),
            lambda v: rb.project_kdop.bind(pts, mins, maxs, pos, rot, variant=v),
        ),
        "soften": (
            lambda **kw: L.soften(pts, proj, 1.0, 0.1),
            lambda v: rb.soften.bind(pts, proj, 1.0, 0.1, variant=v),
        ),
    }
    inside = L.contains_box(pts, olo, ohi, pos, rot).mean()
    data = (
        f"{n:,} points, {inside:.0%} inside the oriented box, float64 (float32 where named); "
        f"median of {repeats} interleaved rounds, thread CPU time"
    )
    recs = []
    for name, (fn, ref) in cases.items():
        fn()  # warm up
        o = out32 if "float32" in name else out
        timed = {"ours": (lambda o=o: fn(out=o)) if name != "soften" else fn, "fresh": fn}
        if rb is not None:
            for v in variants:
                timed[v] = ref(v)
            t = rb.compare(timed, reps=3, repeat=repeats, timer=time.thread_time)
        else:
            t = {k: best(f, repeats) for k, f in timed.items()}
        t = {k: val / n * 1e9 for k, val in t.items()}
        others = {f"ref_{v}": t[v] for v in variants if v in t and v != "O3"}
        recs.append(
            record(
                BENCH,
                name + ("" if name == "soften" else ", out="),
                t["ours"],
                "ns/point",
                data=data,
                anchor="refbench C++ -O3, same run" if "O3" in t else None,
                anchor_value=t.get("O3"),
                **others,
            )
        )
        if name != "soften":
            recs.append(record(BENCH, name + ", fresh output", t["fresh"], "ns/point", data=data))
    if rb is None:
        recs.append(skipped(BENCH, "reference C++ columns", refbench_missing()))
    return recs


def _trajectory(n: int, rng) -> np.ndarray:
    """Mocap-like limit-space samples: a smooth random walk inside |x| < pi."""
    steps = rng.normal(size=(n, 3)) * 0.02
    x = np.cumsum(steps, axis=0)
    x = np.pi * np.tanh(x / np.pi)  # keep it bounded
    return x


def bench_subsample(n: int, naive_n: int, distance: float) -> list[dict]:
    rng = np.random.default_rng(1)
    clouds = {
        "mocap-like trajectory": _trajectory(n, rng),
        "uniform in ball r=pi": (
            lambda d: d / np.linalg.norm(d, axis=1, keepdims=True) * np.pi * rng.random((n, 1)) ** (1 / 3)
        )(rng.normal(size=(n, 3))),
    }
    L.subsample(clouds["mocap-like trajectory"][:100], distance)
    _subsample_naive_kernel(clouds["mocap-like trajectory"][:100], distance)
    recs = []
    for name, pts in clouds.items():
        t_grid = best(lambda: L.subsample(pts, distance), 3, warmup=0)
        kept = len(L.subsample(pts, distance))
        m = min(naive_n, n)
        t0 = clock()
        naive_idx = _subsample_naive_kernel(pts[:m], distance)
        t_naive_m = clock() - t0
        assert np.array_equal(naive_idx, L.subsample(pts[:m], distance)), "grid and naive disagree"
        if m == n:
            t_naive = t_naive_m
            how = "naive measured"
        else:
            # the naive loop costs ~ sum over points of the kept count so far: scale by the
            # ratio of those sums (computed from the grid result)
            kept_full = np.cumsum(np.isin(np.arange(n), L.subsample(pts, distance)))
            kept_m = np.cumsum(np.isin(np.arange(m), naive_idx))
            t_naive = t_naive_m * kept_full.sum() / max(kept_m.sum(), 1)
            how = f"naive extrapolated from N={m:,} by the pairwise-check count"
        data = f"{name}, N = {n:,}, distance {distance}; {how}"
        recs += [
            record(BENCH, f"subsample {name}: kept", kept, "points", kind="count", data=data),
            record(
                BENCH,
                f"subsample {name}: grid",
                t_grid * 1e3,
                "ms",
                data=data,
                anchor="naive O(N*M) loop (compiled), same run",
                anchor_value=t_naive * 1e3,
            ),
        ]
    return recs


def bench_small_calls(calls: int) -> list[dict]:
    """Microseconds per call of the public projections on 16 points into ``out=`` (the thin
    compiled call: arrays already right are checked once in C++), best of 7 (--cpu-time: CPU time)."""
    rng = np.random.default_rng(1)
    lim = _limits(rng)
    pts = rng.normal(size=(16, 3))
    out = np.empty_like(pts)
    lo, hi = lim["aabb"]
    olo, ohi = lim["obb"]
    pos, rot, scale = lim["pos"], lim["rot"], lim["scale"]
    cases = {
        "box (axis-aligned)": lambda: L.project_box(pts, lo, hi, out=out),
        "oriented box": lambda: L.project_box(pts, olo, ohi, pos, rot, out=out),
        "ellipsoid": lambda: L.project_ellipsoid(pts, scale, pos, rot, out=out),
    }
    recs = []
    for name, fn in cases.items():

        def loop(fn=fn):
            for _ in range(calls):
                fn()

        t = best(loop, 7) / calls
        recs.append(
            record(
                BENCH,
                f"{name}, 16 points per call",
                t * 1e6,
                "us/call",
                data=f"{calls:,} calls into out=, best of 7",
                target=3.0,
            )
        )
    return recs


def run(quick: bool) -> list[dict]:
    if quick:
        return bench_small_calls(2_000) + bench_projections(100_000, 3, ("O3",)) + bench_subsample(20_000, 20_000, 0.05)
    return (
        bench_small_calls(20_000)
        + bench_projections(1_000_000, 7, ("O2", "O3", "O3native"))
        + bench_subsample(100_000, 100_000, 0.05)
    )


if __name__ == "__main__":
    main_single(BENCH, run)

"""Benchmark of the limit-space projections and of subsample (one core).

Run:  .venv/bin/python benchmarks/bench_projection.py [--n 1000000]   (from the repository root)

Prints nanoseconds per point for each projection beside the C++ reference (-O2) targets
and their ratio (ours / target, < 1 is faster), for a fresh output array and for a
preallocated ``out=``.  Then the subsample speed-up against the naive O(N*M) greedy loop
(compiled with numba, i.e. the reference algorithm at native speed).
BLAS/OpenMP/numba are pinned to one thread before numpy is imported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from jointlimits import limits as L  # noqa: E402
from jointlimits.limits.cloud import _subsample_naive_kernel  # noqa: E402
from _timing import best  # noqa: E402

TARGETS_NS = {  # C++ reference, -O2, per rotation, in limit space
    "box (axis-aligned)": 6.1,
    "oriented box": 14.8,
    "ellipsoid": 99.0,
    "k-DOP (slab clamps)": 74.0,
}


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


def bench_projections(n: int, repeats: int) -> None:
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
    cases = {
        "box (axis-aligned)": lambda **kw: L.project_box(pts, lo, hi, **kw),
        "oriented box": lambda **kw: L.project_box(pts, olo, ohi, lim["pos"], lim["rot"], **kw),
        "ellipsoid": lambda **kw: L.project_ellipsoid(pts, lim["scale"], lim["pos"], lim["rot"], **kw),
        "ellipsoid (eps=1e-5, 8 it)": lambda **kw: L.project_ellipsoid(
            pts, lim["scale"], lim["pos"], lim["rot"], iterations=8, eps=1e-5, **kw),
        "k-DOP (slab clamps)": lambda **kw: L.project_kdop(pts, mins, maxs, lim["pos"], lim["rot"], axes, **kw),
        "k-DOP exact (active set)": lambda **kw: L.project_kdop(
            pts, mins, maxs, lim["pos"], lim["rot"], axes, exact=True, **kw),
    }
    inside = L.contains_box(pts, olo, ohi, lim["pos"], lim["rot"]).mean()
    print(f"projections: N = {n:,} points, {inside:.0%} inside the oriented box, float64, best of {repeats}")
    print(f"{'function':30s} {'ns/pt':>8s} {'ns/pt out=':>11s} {'C++ -O2':>8s} {'ratio':>7s}")
    for name, fn in cases.items():
        fn()  # compile / warm up
        t_new = best(fn, repeats, warmup=0) / n * 1e9
        t_out = best(lambda: fn(out=out), repeats, warmup=0) / n * 1e9
        target = TARGETS_NS.get(name)
        if target is None:
            print(f"{name:30s} {t_new:8.1f} {t_out:11.1f} {'-':>8s} {'-':>7s}")
        else:
            print(f"{name:30s} {t_new:8.1f} {t_out:11.1f} {target:8.1f} {t_new / target:7.2f}")


def _trajectory(n: int, rng) -> np.ndarray:
    """Mocap-like limit-space samples: a smooth random walk inside |x| < pi."""
    steps = rng.normal(size=(n, 3)) * 0.02
    x = np.cumsum(steps, axis=0)
    x = np.pi * np.tanh(x / np.pi)  # keep it bounded
    return x


def bench_subsample(n: int, naive_n: int, distance: float) -> None:
    rng = np.random.default_rng(1)
    clouds = {
        "mocap-like trajectory": _trajectory(n, rng),
        "uniform in ball r=pi": (lambda d: d / np.linalg.norm(d, axis=1, keepdims=True)
                                 * np.pi * rng.random((n, 1)) ** (1 / 3))(rng.normal(size=(n, 3))),
    }
    L.subsample(clouds["mocap-like trajectory"][:100], distance)
    _subsample_naive_kernel(clouds["mocap-like trajectory"][:100], distance)
    print(f"\nsubsample: N = {n:,}, distance = {distance}")
    for name, pts in clouds.items():
        t_grid = best(lambda: L.subsample(pts, distance), 3, warmup=0)
        kept = len(L.subsample(pts, distance))
        m = min(naive_n, n)
        t0 = time.perf_counter()
        naive_idx = _subsample_naive_kernel(pts[:m], distance)
        t_naive_m = time.perf_counter() - t0
        assert np.array_equal(naive_idx, L.subsample(pts[:m], distance)), "grid and naive disagree"
        if m == n:
            t_naive = t_naive_m
            how = "measured"
        else:
            # the naive loop costs ~ sum over points of the kept count so far: scale by the
            # ratio of those sums (computed from the grid result), which is exact for the
            # comparison count up to the early break
            kept_full = np.cumsum(np.isin(np.arange(n), L.subsample(pts, distance)))
            kept_m = np.cumsum(np.isin(np.arange(m), naive_idx))
            t_naive = t_naive_m * kept_full.sum() / max(kept_m.sum(), 1)
            how = f"extrapolated from N={m:,} by the pairwise-check count"
        print(f"  {name:24s} kept {kept:7,}  grid {t_grid * 1e3:8.2f} ms   naive (numba) {t_naive:8.3f} s "
              f"({how})   speed-up x{t_naive / t_grid:,.0f}   vs C++ naive 1.9 s: x{1.9 / t_grid:,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="points for the projection benchmark")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--subsample-n", type=int, default=100_000)
    ap.add_argument("--naive-n", type=int, default=100_000, help="run the naive loop on at most this many points")
    ap.add_argument("--distance", type=float, default=0.05)
    args = ap.parse_args()
    bench_projections(args.n, args.repeats)
    bench_subsample(args.subsample_n, args.naive_n, args.distance)


if __name__ == "__main__":
    main()

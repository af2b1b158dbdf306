"""Benchmark of the limit-space projections, soften and subsample against the reference C++ (one core).

Run:  python benchmarks/bench_projection.py [--n 1000000]   (from the repository root)

Prints nanoseconds per point for each batched projection and for soften, ours (float64, into a
preallocated ``out=`` and with a fresh output) beside the reference C++ of ../shared/refbench built
-O2, -O3 (its own Makefiles' level) and -O3 -march=native, in the same run, and the ratios ours /
reference (< 1: we are faster). Without ../shared the reference columns are skipped with a message.
Then the subsample speed-up against the naive O(N*M) greedy loop (compiled, the reference algorithm).
BLAS/OpenMP are pinned to one thread before numpy is imported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from jointlimits import limits as L  # noqa: E402
from jointlimits.limits.cloud import _subsample_naive_kernel  # noqa: E402
from _timing import best  # noqa: E402

VARIANTS = ("O2", "O3", "O3native")
try:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shared" / "refbench"))
    import refbench as rb  # noqa: E402
except ImportError:
    rb = None


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
    pos, rot = lim["pos"], lim["rot"]
    proj = L.project_box(pts, olo, ohi, pos, rot)
    pts32 = pts.astype(np.float32)  # the values the reference computes on (it converts to float32)
    out32 = np.empty_like(pts32)
    cases = {  # name: (ours with **kw, reference RefCall factory or None)
        "box (axis-aligned)": (lambda **kw: L.project_box(pts, lo, hi, **kw),
                               lambda v: rb.project_box.bind(pts, lo, hi, variant=v)),
        "box (axis-aligned), float32 out": (lambda **kw: L.project_box(pts32, lo, hi, **kw),
                                            lambda v: rb.project_box.bind(pts32, lo, hi, variant=v)),
        "oriented box": (lambda **kw: L.project_box(pts, olo, ohi, pos, rot, **kw),
                         lambda v: rb.project_oriented_box.bind(pts, olo, ohi, pos, rot, variant=v)),
        "ellipsoid": (lambda **kw: L.project_ellipsoid(pts, lim["scale"], pos, rot, **kw),
                      lambda v: rb.project_ellipsoid.bind(pts, lim["scale"], pos, rot, variant=v)),
        "ellipsoid (eps=1e-5, 8 it)": (lambda **kw: L.project_ellipsoid(pts, lim["scale"], pos, rot, iterations=8,
                                                                        eps=1e-5, **kw),
                                       lambda v: rb.project_ellipsoid.bind(pts, lim["scale"], pos, rot, variant=v)),
        "k-DOP (slab clamps)": (lambda **kw: L.project_kdop(pts, mins, maxs, pos, rot, axes, **kw),
                                lambda v: rb.project_kdop.bind(pts, mins, maxs, pos, rot, variant=v)),
        "k-DOP exact (active set)": (lambda **kw: L.project_kdop(pts, mins, maxs, pos, rot, axes, exact=True, **kw),
                                     lambda v: rb.project_kdop.bind(pts, mins, maxs, pos, rot, variant=v)),
        "soften": (lambda **kw: L.soften(pts, proj, 1.0, 0.1),
                   lambda v: rb.soften.bind(pts, proj, 1.0, 0.1, variant=v)),
    }
    inside = L.contains_box(pts, olo, ohi, pos, rot).mean()
    print(f"projections: N = {n:,} points, {inside:.0%} inside the oriented box, float64 (float32 where the row "
          f"says so; the reference always computes in float32), median of {repeats}")
    if rb is None:
        print("(../shared/refbench not found: no reference columns)")
    head = f"{'function':28s} {'ours':>7s} {'fresh':>7s}" + "".join(f"{'C++ ' + v:>12s}" for v in VARIANTS)
    print(head + "".join(f"{'/' + v:>9s}" for v in VARIANTS) + "   (ns per point; ratios of ours out=)")
    for name, (fn, ref) in cases.items():
        fn()  # warm up
        o = out32 if "float32" in name else out
        timed = {"ours": (lambda o=o: fn(out=o)) if name != "soften" else fn, "fresh": fn}
        if rb is not None:
            for v in VARIANTS:
                timed[v] = ref(v)
        if rb is not None:
            t = rb.compare(timed, reps=3, repeat=repeats, timer=time.thread_time)
        else:
            t = {k: best(f, repeats) for k, f in timed.items()}
        t = {k: val / n * 1e9 for k, val in t.items()}
        row = f"{name:28s} {t['ours']:7.1f} {t['fresh']:7.1f}"
        row += "".join(f"{t[v]:12.1f}" if v in t else f"{'-':>12s}" for v in VARIANTS)
        row += "".join(f"{t['ours'] / t[v]:9.2f}" if v in t else f"{'-':>9s}" for v in VARIANTS)
        print(row)


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
        print(f"  {name:24s} kept {kept:7,}  grid {t_grid * 1e3:8.2f} ms   naive (C++) {t_naive:8.3f} s "
              f"({how})   speed-up x{t_naive / t_grid:,.0f}")


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

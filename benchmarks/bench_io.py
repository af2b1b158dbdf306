"""BVH I/O, Euler->quaternion and FK timings, against pymotion / bvhio when installed.

    python benchmarks/bench_io.py [CLIP]

Medians of repeated runs, BLAS pinned to one thread. Without ../shared a procedural clip is used.
"""

from __future__ import annotations

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from jointlimits.io import bvh  # noqa: E402
from jointlimits.motion.skeleton import forward_kinematics  # noqa: E402
from _timing import median  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "data" / "mocap" / "cmu_cgspeed_max" / "131_01.bvh"


def main() -> None:
    clip = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    tmpdir = Path(tempfile.mkdtemp())
    if not clip.is_file():
        from jointlimits.motion.procedural import range_of_motion

        clip = tmpdir / "procedural.bvh"
        bvh.save(clip, range_of_motion(seconds=33.0, fps=30))
        print(f"(../shared not found: using a procedural clip {clip})")
    m = bvh.load(clip)
    print(f"clip: {clip.name}  {m.num_frames} frames x {m.num_joints} joints")
    out = tmpdir / "out.bvh"
    t_load = median(lambda: bvh.load(clip))
    t_save = median(lambda: bvh.save(out, m))
    from jointlimits.motion.quat import from_euler_axes

    ang = np.random.default_rng(0).uniform(-180, 180, (m.num_frames, m.num_joints, 3))
    t_euler = median(lambda: from_euler_axes(ang, "zxy", degrees=True))
    t_fk = median(lambda: forward_kinematics(m), repeat=50)
    rows = [("load (text -> local quaternions)", t_load), ("save (atomic, exact values)", t_save),
            ("Euler -> quaternion (all joints)", t_euler), ("forward kinematics", t_fk)]
    for name, t in rows:
        print(f"  {name:<36} {t * 1e3:8.2f} ms")
    print(f"  FK throughput: {m.num_frames / t_fk:,.0f} frames/s (target >= 250,000)")
    print(f"  load target: < 20 ms -> {'OK' if t_load < 0.020 else 'MISSED'}")

    try:
        from pymotion.io.bvh import BVH

        def pm():
            b = BVH()
            b.load(str(clip))
            b.get_data()

        t_pm = median(pm, repeat=7)
        print(f"  pymotion load + get_data: {t_pm * 1e3:8.2f} ms  -> ours is {t_pm / t_load:.1f}x faster "
              f"(target >= 3x)")
        try:
            from pymotion.ops.forward_kinematics import fk as pm_fk  # noqa: F401
        except ImportError:
            pass
    except ImportError:
        print("  pymotion not installed (pip install -e '.[bench]' to compare)")
    try:
        import bvhio

        t_bh = median(lambda: bvhio.readAsBvh(str(clip)), repeat=5)
        print(f"  bvhio readAsBvh:          {t_bh * 1e3:8.2f} ms  -> ours is {t_bh / t_load:.1f}x faster")
    except ImportError:
        print("  bvhio not installed")


if __name__ == "__main__":
    main()

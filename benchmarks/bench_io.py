"""BVH I/O, Euler->quaternion and FK timings, against pymotion / bvhio when installed.

    python -m benchmarks.bench_io [--quick]

Medians of repeated runs, BLAS pinned to one thread. Without ../shared a procedural clip is used.
Anchors in the same run: pymotion's and bvhio's load of the same file (when installed).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from . import _compat as C
from ._common import MOCAP, main_single, record, skipped
from ._timing import median

BENCH = "io"
DEFAULT = MOCAP / "cmu_cgspeed_max" / "131_01.bvh"


def run(quick: bool, clip: Path = DEFAULT) -> list[dict]:
    bvh = C.mod("io.bvh")
    forward_kinematics = C.mod("motion.skeleton").forward_kinematics
    tmpdir = Path(tempfile.mkdtemp())
    if not clip.is_file():
        clip = tmpdir / "procedural.bvh"
        bvh.save(clip, C.mod("motion.procedural").range_of_motion(seconds=33.0, fps=30))
        data = "procedural clip (33 s at 30 fps; ../shared not found)"
    else:
        data = str(clip.relative_to(MOCAP)) if clip.is_relative_to(MOCAP) else str(clip)
    m = bvh.load(clip)
    data += f", {m.num_frames} frames x {m.num_joints} joints"
    rep = 7 if quick else 15
    out = tmpdir / "out.bvh"
    t_load = median(lambda: bvh.load(clip), repeat=rep)
    t_save = median(lambda: bvh.save(out, m), repeat=rep)
    ang = np.random.default_rng(0).uniform(-180, 180, (m.num_frames, m.num_joints, 3))
    t_euler = median(lambda: C.euler_to_quat_degrees(ang, "zxy"), repeat=rep)
    t_fk = median(lambda: forward_kinematics(m), repeat=20 if quick else 50)

    peers: dict[str, float] = {}
    recs = []
    try:
        from pymotion.io.bvh import BVH

        def pm():
            b = BVH()
            b.load(str(clip))
            b.get_data()

        peers["pymotion"] = median(pm, repeat=3 if quick else 7)
        recs.append(record(BENCH, "pymotion load + get_data", 1e3 * peers["pymotion"], "ms", data=data))
    except ImportError:
        recs.append(skipped(BENCH, "pymotion load + get_data", "pymotion not installed (pip install -e '.[bench]')"))
    try:
        import bvhio

        peers["bvhio"] = median(lambda: bvhio.readAsBvh(str(clip)), repeat=3 if quick else 5)
        recs.append(record(BENCH, "bvhio readAsBvh", 1e3 * peers["bvhio"], "ms", data=data))
    except ImportError:
        recs.append(skipped(BENCH, "bvhio readAsBvh", "bvhio not installed (pip install -e '.[bench]')"))
    peer = next(iter(peers), None)
    load = record(
        BENCH,
        "load (text -> local quaternions)",
        1e3 * t_load,
        "ms",
        data=data,
        anchor=f"{peer} load, same run" if peer else None,
        anchor_value=1e3 * peers[peer] if peer else None,
        target=20.0,
    )
    return [
        load,
        record(BENCH, "save (atomic, exact values)", 1e3 * t_save, "ms", data=data),
        record(BENCH, "Euler -> quaternion (all joints)", 1e3 * t_euler, "ms", data=data),
        record(BENCH, "forward kinematics", 1e3 * t_fk, "ms", data=data),
        record(
            BENCH,
            "forward kinematics throughput",
            m.num_frames / t_fk,
            "frames/s",
            kind="rate",
            data=data,
            target=250_000,
        ),
    ] + recs


if __name__ == "__main__":
    main_single(BENCH, run)

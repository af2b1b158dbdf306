"""BVH at size: peak memory of loading against the file's size, and save time against load time.

    python -m benchmarks.bench_bvh_size [--quick]

Each measurement runs in a fresh process with the jointlimits this process imported: imports
first, then the peak RSS counter is reset (``/proc/self/clear_refs``) and the load's peak is read
from ``VmHWM``. Full: the largest shared clip, a synthetic large clip (its frames repeated 40
times) written to /tmp, and the compact clips; quick: the largest clip and CMU 131_01. Set
JL_BENCH_ANCHOR_SRC to another source tree to measure it too in the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ._common import MOCAP, main_single, record, skipped
from ._compat import CHILD_IMPORTS

BENCH = "bvh_size"

CHILD = (
    r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from jointlimits.io import bvh
bvh.loads('HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\n'  # noqa: E501
          'Frames: 1\nFrame Time: 0.1\n1\n')  # imports
"""
    + CHILD_IMPORTS
    + r"""
bvh.dumps(procedural.range_of_motion(seconds=0.2))  # compiled writer: loaded from cache (or compiled) now
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
before = status('VmRSS:')
with open('/proc/self/clear_refs', 'w') as fh:
    fh.write('5')
t = time.perf_counter(); m = bvh.load(sys.argv[2]); t_load = time.perf_counter() - t
peak = status('VmHWM:')
out = sys.argv[3]
t = time.perf_counter(); bvh.save(out, m); t_save = time.perf_counter() - t
m.rotations = quat.mul(m.rotations, quat.from_angle_axis(0.01, [0.0, 0.0, 1.0]))  # every rotation changed
t = time.perf_counter(); bvh.save(out, m); t_changed = time.perf_counter() - t
print(json.dumps({"before": before, "peak": peak, "load_s": t_load, "save_s": t_save, "changed_s": t_changed,
                  "frames": m.num_frames}))
os.unlink(out)
"""
)

#: compact clips (23-31 bytes of text per joint-frame), where the arrays weigh most against the text
COMPACT = ["cmu_cgspeed_max/131_01.bvh", "cmu_cgspeed_mb/01_01.bvh", "sfu/0005_Jogging001.bvh", "perfume/A_test.bvh"]


def measure(src: Path, path: Path) -> dict:
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(
            [sys.executable, "-c", CHILD, str(src), str(path), os.path.join(d, "out.bvh")],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
    return json.loads(r.stdout.strip().splitlines()[-1])


def repeated_clip(src: Path, times: int, out: Path) -> Path:
    text = src.read_bytes().decode("latin-1").replace("\r\n", "\n")
    head, _, rest = text.partition("MOTION\n")
    lines = rest.split("\n")
    frames = [l for l in lines[2:] if l.strip()]
    with open(out, "w", encoding="latin-1") as fh:
        fh.write(head + "MOTION\n" + f"Frames: {len(frames) * times}\n" + lines[1] + "\n")
        block = "\n".join(frames) + "\n"
        for _ in range(times):
            fh.write(block)
    return out


def run(quick: bool, repeat: int = 40) -> list[dict]:
    import jointlimits

    clips = sorted(MOCAP.glob("*/*.bvh"), key=lambda p: p.stat().st_size)
    if not clips:
        return [skipped(BENCH, "BVH at size", f"no clips under {MOCAP}")]
    largest = clips[-1]
    trees = [("", Path(jointlimits.__file__).resolve().parents[1])]
    anchor = os.environ.get("JL_BENCH_ANCHOR_SRC")
    if anchor and Path(anchor).is_dir():
        trees.append((f" [tree {anchor}]", Path(anchor)))
    todo = [(str(largest.relative_to(MOCAP)), largest)]
    big = None
    if quick:
        todo += [(c, MOCAP / c) for c in COMPACT[:1] if (MOCAP / c).is_file()]
    else:
        big = repeated_clip(largest, repeat, Path(tempfile.gettempdir()) / f"jl_bench_{largest.stem}_x{repeat}.bvh")
        todo += [(f"{largest.relative_to(MOCAP)} x{repeat}", big)]
        todo += [(c, MOCAP / c) for c in COMPACT if (MOCAP / c).is_file()]
    recs = []
    try:
        for name, path in todo:
            size = path.stat().st_size
            for label, tree in trees:
                r = measure(tree, path)
                extra = r["peak"] - r["before"]
                data = f"{name}, {size / 1e6:.1f} MB, {r['frames']} frames; one fresh process"
                recs += [
                    record(BENCH, f"{name}{label}: load", r["load_s"], "s", data=data),
                    record(
                        BENCH,
                        f"{name}{label}: save",
                        r["save_s"],
                        "s",
                        data=data,
                        anchor="its load",
                        anchor_value=r["load_s"],
                        target=1.0,
                    ),
                    record(
                        BENCH,
                        f"{name}{label}: save, every rotation changed",
                        r["changed_s"],
                        "s",
                        data=data,
                        anchor="its load",
                        anchor_value=r["load_s"],
                    ),
                    record(
                        BENCH,
                        f"{name}{label}: load peak RSS over baseline",
                        extra / 1e6,
                        "MB",
                        kind="memory",
                        data=data,
                        anchor="file size",
                        anchor_value=size / 1e6,
                        target=3.0,
                    ),
                ]
    finally:
        if big is not None:
            big.unlink()
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

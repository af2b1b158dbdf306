"""BVH at size: peak memory of loading against the file's size, and save time against load time.

Each measurement runs in a fresh process: imports first, then the peak RSS counter is reset
(``/proc/self/clear_refs``) and the load's peak is read from ``VmHWM``. Runs on the largest
shared clip and on a synthetic large clip (its frames repeated) written to /tmp.

    python benchmarks/bench_bvh_size.py [--repeat 40] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOCAP = ROOT.parent / "shared" / "data" / "mocap"

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from jointlimits.io import bvh
bvh.loads('HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n1\n')  # imports
from jointlimits import procedural
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
from jointlimits import quat
m.rotations = quat.mul(m.rotations, quat.from_angle_axis(0.01, [0.0, 0.0, 1.0]))  # every rotation changed
t = time.perf_counter(); bvh.save(out, m); t_changed = time.perf_counter() - t
print(json.dumps({"before": before, "peak": peak, "load_s": t_load, "save_s": t_save, "changed_s": t_changed,
                  "frames": m.num_frames}))
os.unlink(out)
"""


#: compact clips (23-31 bytes of text per joint-frame), where the arrays weigh most against the text
COMPACT = ["cmu_cgspeed_max/131_01.bvh", "cmu_cgspeed_mb/01_01.bvh", "sfu/0005_Jogging001.bvh", "perfume/A_test.bvh"]


def measure(src: Path, path: Path) -> dict:
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, "-c", CHILD, str(src), str(path), os.path.join(d, "out.bvh")],
                           capture_output=True, text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=40, help="times the largest clip's frames are repeated")
    ap.add_argument("--anchor", type=Path, default=ROOT.parent / "main" / "src",
                    help="another source tree measured in the same run (default: ../main/src if present)")
    ap.add_argument("--keep", action="store_true", help="keep the synthetic clip in /tmp")
    ap.add_argument("--clips", nargs="*", type=Path, default=[], help="more clips to measure")
    args = ap.parse_args()
    clips = sorted(MOCAP.glob("*/*.bvh"), key=lambda p: p.stat().st_size)
    if not clips:
        sys.exit(f"no clips under {MOCAP}")
    largest = clips[-1]
    big = repeated_clip(largest, args.repeat, Path(tempfile.gettempdir()) / f"jl_bench_{largest.stem}_x{args.repeat}.bvh")
    trees = [("this tree", ROOT / "src")]
    if args.anchor.is_dir() and args.anchor.resolve() != (ROOT / "src").resolve():
        trees.append((f"anchor {args.anchor}", args.anchor))
    try:
        compact = [MOCAP / c for c in COMPACT if (MOCAP / c).is_file()]
        for name, path in ([(largest.relative_to(MOCAP), largest), (big.name, big)]
                           + [(c.relative_to(MOCAP), c) for c in compact] + [(c.name, c) for c in args.clips]):
            size = path.stat().st_size
            print(f"{name}: {size / 1e6:.1f} MB")
            for label, tree in trees:
                r = measure(tree, path)
                extra = r["peak"] - r["before"]
                print(f"  {label:<28} load {r['load_s']:6.2f} s  save {r['save_s']:6.2f} s  "
                      f"save/load {r['save_s'] / r['load_s']:4.2f} (every rotation changed: "
                      f"{r['changed_s'] / r['load_s']:4.2f})  peak RSS over baseline {extra / 1e6:7.1f} MB "
                      f"= {extra / size:4.2f}x file  ({r['frames']} frames)")
    finally:
        if not args.keep:
            big.unlink()


if __name__ == "__main__":
    main()

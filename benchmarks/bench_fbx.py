"""FBX through Blender: what bpy costs to start, in-process and in a subprocess, and per file.

    JOINTLIMITS_BLENDER_PYTHON=/path/to/python-with-bpy python -m benchmarks.bench_fbx [--quick]

In-process (the caller's Python has bpy): ``import bpy`` once, then each file is a scene reset and
Blender's importer; measured inside the bpy Python. Subprocess (the caller has no bpy):
``jointlimits.io.fbx.load`` starts that Python for every file (import bpy included); measured
from here, wall and the child's CPU. The anchor is a bare ``python -c pass`` of the bpy Python.
A LAFAN1 clip cut to 60 and to 600 frames, written once with ``fbx.save``.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ._common import ROOT, main_single, record, skipped

BENCH = "fbx"
CLIP = ROOT.parent / "shared" / "data" / "mocap" / "lafan1" / "walk4_subject1.bvh"

_INPROC = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import bpy
t1, c1 = time.perf_counter(), time.process_time()
sys.path.insert(0, sys.argv[1])
import _blender
reads = []
for path in sys.argv[2:]:
    t, c = time.perf_counter(), time.process_time()
    _blender.read_fbx(path)
    reads.append((time.perf_counter() - t, time.process_time() - c))
print(json.dumps({"import": [t1 - t0, c1 - c0], "reads": reads}))
"""


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(quick: bool) -> list[dict]:
    from jointlimits.io import bvh, fbx

    py = os.environ.get(fbx.ENV)
    if not py:
        return [skipped(BENCH, "fbx start-up", f"{fbx.ENV} is not set (a Python with bpy)")]
    if not CLIP.is_file():
        return [skipped(BENCH, "fbx start-up", f"{CLIP} not found")]
    reps = 2 if quick else 4
    recs = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in (60, 600):
            files[n] = Path(tmp) / f"clip{n}.fbx"
            fbx.save(files[n], bvh.load(CLIP).frames(0, n))
        bare = []
        for _ in range(reps):
            t = time.perf_counter()
            subprocess.run([py, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - t)
        anchor = statistics.median(bare)
        script = Path(tmp) / "inproc.py"
        script.write_text(_INPROC)
        src = str(Path(fbx.__file__).parent)
        outs = []
        for _ in range(reps):
            res = subprocess.run(
                [py, "-I", str(script), src, str(files[60]), str(files[60]), str(files[600])],
                check=True,
                capture_output=True,
                text=True,
            )
            outs.append(json.loads(res.stdout.strip().splitlines()[-1]))
        med = lambda xs: statistics.median(xs)  # noqa: E731
        recs += [
            record(BENCH, "in-process: import bpy (wall)", med([o["import"][0] for o in outs]), "s",
                   anchor="python -c pass", anchor_value=anchor),
            record(BENCH, "in-process: import bpy (CPU)", med([o["import"][1] for o in outs]), "s", kind="time"),
            record(BENCH, "in-process: first read, 60 frames (wall)", med([o["reads"][0][0] for o in outs]), "s"),
            record(BENCH, "in-process: next read, 60 frames (wall)", med([o["reads"][1][0] for o in outs]), "s"),
            record(BENCH, "in-process: read, 600 frames (wall)", med([o["reads"][2][0] for o in outs]), "s"),
        ]  # fmt: skip
        for n in (60, 600):
            walls, cpus = [], []
            for _ in range(reps):
                c = _children_cpu()
                t = time.perf_counter()
                fbx.load(files[n], blender=py)
                walls.append(time.perf_counter() - t)
                cpus.append(_children_cpu() - c)
            recs += [
                record(BENCH, f"subprocess: fbx.load, {n} frames (wall)", med(walls), "s",
                       anchor="python -c pass", anchor_value=anchor),
                record(BENCH, f"subprocess: fbx.load, {n} frames (child CPU)", med(cpus), "s"),
            ]  # fmt: skip
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

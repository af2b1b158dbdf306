"""USD: what reading a crate (``.usdc``) file in a child process first costs (#39).

    python -m benchmarks --only usd [--quick]

``jointlimits.io.usd.load`` opens crate files in a short-lived child Python first
(``jointlimits.io.usd_isolate``: usd-core's own crashes and runaway allocations end there). The
peer in the same run is the same load without the child (``isolate=False``); a text ``.usda``
(no child) is measured beside them. The clip: LAFAN1 walk4_subject1 (600 frames in quick mode,
all of it in full), written once as ``.usdc`` and ``.usda``; usd-core is loaded before timing.
"""

from __future__ import annotations

import resource
import statistics
import tempfile
import time
from pathlib import Path

from ._common import ROOT, main_single, record, skipped

BENCH = "usd"
CLIP = ROOT.parent / "shared" / "data" / "mocap" / "lafan1" / "walk4_subject1.bvh"


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run(quick: bool) -> list[dict]:
    try:
        import pxr.Usd  # noqa: F401
    except ImportError:
        return [skipped(BENCH, "usd isolate", "usd-core is not installed (pip install -e '.[usd]')")]
    if not CLIP.is_file():
        return [skipped(BENCH, "usd isolate", f"{CLIP} not found")]
    from jointlimits.io import bvh, usd

    reps = 3 if quick else 7
    m = bvh.load(CLIP)
    frames = 600 if quick else m.num_frames
    m = m.frames(0, frames)
    med = statistics.median
    recs = []
    with tempfile.TemporaryDirectory() as tmp:
        c, a = Path(tmp) / "clip.usdc", Path(tmp) / "clip.usda"
        usd.save(c, m)
        usd.save(a, m)
        usd.load(c, isolate=False)  # warm: usd-core's plugins and schemas loaded
        times: dict[str, list[float]] = {"off": [], "on": [], "usda": [], "cpu off": [], "cpu on": []}
        for _ in range(reps):
            for key, path, iso in (("off", c, False), ("on", c, None), ("usda", a, None)):
                t, cpu = time.perf_counter(), _cpu()
                usd.load(path, isolate=iso)
                times[key].append(time.perf_counter() - t)
                times[f"cpu {key}"] = times.get(f"cpu {key}", []) + [_cpu() - cpu]
        data = f"{frames} frames x {m.skeleton.num_joints} joints"
        off = med(times["off"])
        recs += [
            record(BENCH, "load .usdc in-process only (isolate=False)", off, "s", data=data),
            record(
                BENCH,
                "load .usdc with the child check (default)",
                med(times["on"]),
                "s",
                data=data,
                anchor="isolate=False",
                anchor_value=off,
            ),
            record(BENCH, "load .usda (no child)", med(times["usda"]), "s", data=data),
            record(BENCH, "load .usdc in-process only: CPU", med(times["cpu off"]), "s", data=data),
            record(
                BENCH,
                "load .usdc with the child check: CPU (this process and the child)",
                med(times["cpu on"]),
                "s",
                data=data,
                anchor="isolate=False",
                anchor_value=med(times["cpu off"]),
            ),
        ]
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

"""Start-up cost a new user pays: `import jointlimits` + the first projection in a fresh process,
the first `jointlimits demo`, and (with JL_BENCH_INSTALL=1, full mode) a fresh venv's
`pip install -e . && jointlimits demo` in a fresh clone of the committed tree (it compiles the core:
minutes of both cores; pip's download cache as it is: PIP_NO_CACHE_DIR=1 for a cold one).

    python -m benchmarks.bench_startup [--quick]

The anchor is a bare `python -c pass` (interpreter start) timed in the same run; medians of
fresh processes.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._common import ROOT, main_single, record, skipped
from ._compat import CHILD_IMPORTS

BENCH = "startup"


def _timed(cmd: list[str], cwd: Path | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def first_projection(python: str) -> tuple[float, float]:
    """(seconds for import jointlimits, seconds for import + fit + first pose and clip projections) in a
    fresh process."""
    code = (
        "import time; t0 = time.perf_counter()\n"
        "import jointlimits as jl\n"
        "t1 = time.perf_counter()\n" + CHILD_IMPORTS + "m = procedural.range_of_motion(seconds=4.0)\n"
        "lim = jl.JointLimits.fit(m, shape='kdop', swing_twist=True)\n"
        "lim.project(m.rotations[:1])\n"
        "lim.project(m.rotations)\n"
        "print(t1 - t0, time.perf_counter() - t0)\n"
    )
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def run(quick: bool) -> list[dict]:
    py = sys.executable
    repeat = 3 if quick else 5
    anchor = statistics.median(_timed([py, "-c", "pass"]) for _ in range(repeat))
    runs = [first_projection(py) for _ in range(repeat)]
    imp = statistics.median(r[0] for r in runs)
    first = statistics.median(r[1] for r in runs)
    a = "python -c pass, same run"
    data = f"fresh processes, median of {repeat}"
    recs = [
        record(BENCH, "python -c pass (anchor)", 1e3 * anchor, "ms", data=data),
        record(BENCH, "import jointlimits", 1e3 * imp, "ms", data=data, anchor=a, anchor_value=1e3 * anchor),
        record(
            BENCH,
            "import + fit + first projections",
            1e3 * first,
            "ms",
            data=data + "; procedural 4 s clip, k-DOP swing-twist",
            anchor=a,
            anchor_value=1e3 * anchor,
            target=1000.0,
        ),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        demo = _timed([py, "-m", "jointlimits", "demo", "--out", str(Path(tmp) / "demo")])
    recs.append(
        record(
            BENCH, "jointlimits demo", demo, "s", data="one fresh process", anchor=a, anchor_value=anchor, target=10.0
        )
    )
    if quick or os.environ.get("JL_BENCH_INSTALL") != "1":
        recs.append(
            skipped(
                BENCH,
                "fresh venv + pip install -e . + demo",
                "compiles the core: full mode with JL_BENCH_INSTALL=1 only",
            )
        )
        return recs
    with tempfile.TemporaryDirectory() as tmp:
        # a fresh clone of the committed tree, as a new user has it: installing from ROOT would
        # reuse its build/ folder (an incremental compile, not the user's full one)
        src = Path(tmp) / "src"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(src)], check=True)
        venv = Path(tmp) / "venv"
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin/pip"), "install", "-q", "-e", str(src)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        t_install = time.perf_counter() - t
        t_demo = _timed([str(venv / "bin/jointlimits"), "demo", "--out", str(Path(tmp) / "demo")])
    recs += [
        record(BENCH, "fresh venv + pip install -e .", t_install, "s", data="one run"),
        record(BENCH, "then jointlimits demo", t_demo, "s", data="one run"),
        record(BENCH, "install + demo total", t_install + t_demo, "s", data="one run", target=60.0),
    ]
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

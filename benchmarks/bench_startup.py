"""Start-up cost a new user pays: `import jointlimits` + the first projection in a fresh process,
the first `jointlimits demo`, and (with --install) a fresh venv's `pip install -e . && jointlimits demo`
in a fresh clone of the committed tree (pip's download cache as it is: PIP_NO_CACHE_DIR=1 for a cold one).

Run: python benchmarks/bench_startup.py [--install]
The anchor is a bare `python -c pass` (interpreter start) timed in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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
        "t1 = time.perf_counter()\n"
        "from jointlimits import procedural\n"
        "m = procedural.range_of_motion(seconds=4.0)\n"
        "lim = jl.JointLimits.fit(m, shape='kdop', swing_twist=True)\n"
        "lim.project(m.rotations[:1])\n"
        "lim.project(m.rotations)\n"
        "print(t1 - t0, time.perf_counter() - t0)\n"
    )
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--install", action="store_true", help="also time a fresh venv + pip install -e . + demo")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable

    anchor = statistics.median(_timed([py, "-c", "pass"]) for _ in range(args.repeat))
    runs = [first_projection(py) for _ in range(args.repeat)]
    imp = statistics.median(r[0] for r in runs)
    first = statistics.median(r[1] for r in runs)
    print(f"python -c pass (anchor)                 {anchor * 1e3:8.0f} ms")
    print(f"import jointlimits                      {imp * 1e3:8.0f} ms")
    print(f"import + fit + first projections        {first * 1e3:8.0f} ms   (target <= 1000 ms)")

    with tempfile.TemporaryDirectory() as tmp:
        demo = _timed([py, "-m", "jointlimits", "demo", "--out", str(Path(tmp) / "demo")])
    print(f"jointlimits demo                        {demo:8.1f} s    (target <= 10 s)")

    if args.install:
        with tempfile.TemporaryDirectory() as tmp:
            # a fresh clone of the committed tree, as a new user has it: installing from ROOT would
            # reuse its build/ folder (an incremental compile, not the user's full one)
            src = Path(tmp) / "src"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(src)], check=True)
            venv = Path(tmp) / "venv"
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin/pip"), "install", "-q", "-e", str(src)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t_install = time.perf_counter() - t
            t_demo = _timed([str(venv / "bin/jointlimits"), "demo", "--out", str(Path(tmp) / "demo")])
        print(f"fresh venv + pip install -e .           {t_install:8.1f} s")
        print(f"  then jointlimits demo                 {t_demo:8.1f} s")
        print(f"  total                                 {t_install + t_demo:8.1f} s    (target <= 60 s)")


if __name__ == "__main__":
    main()

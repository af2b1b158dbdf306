"""Shared pieces of the benchmark modules: paths, the reference C++ (refbench), records, machine info."""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: ../shared next to the repository (or $JOINTLIMITS_SHARED): mocap clips, refbench, golden vectors
SHARED = Path(os.environ.get("JOINTLIMITS_SHARED", ROOT.parent / "shared"))
MOCAP = SHARED / "data" / "mocap"
LAFAN = MOCAP / "lafan1"

#: kinds of figure; the first three are timings (compared within a noise band), the rest exactly
TIMING_KINDS = ("time", "rate", "memory")
EXACT_KINDS = ("count", "quality")

_RB: Any = False  # not looked up yet


def refbench():
    """The reference C++ (``../shared/refbench``), or None when it is absent or does not build."""
    global _RB
    if _RB is False:
        _RB = None
        d = SHARED / "refbench"
        if (d / "refbench.py").is_file():
            sys.path.insert(0, str(d))
            try:
                import refbench as rb

                _RB = rb
            except Exception as e:
                print(f"  (refbench unusable: {type(e).__name__}: {e})")
    return _RB


def refbench_missing() -> str:
    return f"reference C++ not found at {SHARED / 'refbench'}"


def record(
    bench: str,
    name: str,
    value: float | None,
    unit: str,
    *,
    kind: str = "time",
    data: str = "",
    anchor: str | None = None,
    anchor_value: float | None = None,
    better: str | None = None,
    note: str = "",
    **extra: Any,
) -> dict:
    """One figure. ``kind``: time / rate / memory (timings: compared within a noise band) or
    count / quality (compared exactly). ``anchor``: what the figure is compared with in the same run
    (the reference C++, a peer library, an interpreter start, ...) and ``ratio`` = value / anchor."""
    if better is None:
        better = "higher" if kind == "rate" else "lower" if kind in TIMING_KINDS else ""
    r: dict[str, Any] = {
        "bench": bench,
        "name": name,
        "value": _num(value),
        "unit": unit,
        "kind": kind,
        "better": better,
        "data": data,
    }
    if anchor is not None:
        r["anchor"] = anchor
        r["anchor_value"] = _num(anchor_value)
        r["ratio"] = _num(value / anchor_value) if value is not None and anchor_value else None
    if note:
        r["note"] = note
    r.update({k: _num(v) if isinstance(v, float) else v for k, v in extra.items()})
    return r


def skipped(bench: str, name: str, reason: str) -> dict:
    """A record that could not be measured here, with the one reason."""
    return {"bench": bench, "name": name, "value": None, "unit": "", "kind": "skipped", "skipped": reason}


def _num(x: Any) -> Any:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def fmt(x: float | None) -> str:
    """A figure with 3-4 significant digits."""
    if x is None:
        return "-"
    a = abs(x)
    if a == 0:
        return "0"
    if float(x).is_integer() and a < 1e15:
        return f"{int(x):,}"
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.3g}" if a < 10 else f"{x:.1f}"
    return f"{x:.3g}"


def summary(r: dict) -> str:
    """One human line for a record."""
    if r.get("kind") == "skipped":
        return f"  {r['name']:<58} skipped: {r['skipped']}"
    s = f"  {r['name']:<58} {fmt(r['value']):>10} {r['unit']}"
    if r.get("anchor"):
        s += f"   ({r['anchor']}: {fmt(r['anchor_value'])}, ratio {fmt(r['ratio'])})"
    return s


def git_commit(path: Path = ROOT) -> str:
    try:
        sha = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> dict:
    """Where and with what the figures were measured."""
    import numpy as np

    cpu = platform.processor() or "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info: dict[str, Any] = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    try:
        import scipy

        info["scipy"] = scipy.__version__
    except ImportError:
        pass
    try:
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    import jointlimits

    from ._compat import layout

    pkg = Path(jointlimits.__file__).resolve().parent
    info["jointlimits"] = {
        "version": getattr(jointlimits, "__version__", "?"),
        "path": str(pkg),
        "layout": layout(),
        "commit": git_commit(pkg),
    }
    info["benchmarks_commit"] = git_commit(ROOT)
    info["refbench"] = str(SHARED / "refbench") if refbench() is not None else None
    return info


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def main_single(bench: str, run: Callable[[bool], list[dict]]) -> None:
    """``python -m benchmarks.bench_NAME [--quick] [--json OUT]``: one module's records."""
    ap = argparse.ArgumentParser(description=f"the {bench} benchmark alone (python -m benchmarks runs them all)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true")
    g.add_argument("--full", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cpu-time", action="store_true", help="in-process timings in process CPU time")
    args = ap.parse_args()
    if args.cpu_time:
        os.environ["JL_BENCH_CLOCK"] = "cpu"
    records = run(args.quick)
    for r in records:
        print(summary(r))
    if args.json:
        out = {
            "machine": machine(),
            "timestamp": now(),
            "mode": "quick" if args.quick else "full",
            "clock": os.environ.get("JL_BENCH_CLOCK", "wall"),
            "command": " ".join(["python -m", f"benchmarks.bench_{bench}"] + sys.argv[1:]),
            "records": records,
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n")

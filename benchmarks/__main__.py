"""One runner for every benchmark.

    python -m benchmarks [--quick | --full] [--only NAME ...] [--cpu-time] [--json OUT.json]
                         [--markdown docs/benchmarks.md]
    python -m benchmarks compare BEFORE.json AFTER.json [--band 0.15]
    python -m benchmarks markdown RUN.json [docs/benchmarks.md]
    python -m benchmarks --list

Run from the repository root with the package importable (``PYTHONPATH=src`` or an installed
venv). Quick mode (~1-3 minutes on 2 cores): small sizes, fewer repeats, no slow sweeps; full
(the default): every figure as the scripts measured them. The JSON holds the machine (CPU, cores,
Python, numpy, git commits), the time, the mode and the records; ``compare`` prints every record's
ratio AFTER / BEFORE and flags timings outside the noise band and any count or quality figure that
changed at all. ``compare`` takes comma-separated lists (``b1.json,b2.json``): per record the best
of the runs (min of times, max of rates), to damp a shared machine's noise. ``--cpu-time`` times
in-process work in process CPU time instead of wall time (see ``_timing``): on a loaded machine the
before/after comparison to use.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

from . import BENCHMARKS
from ._common import EXACT_KINDS, TIMING_KINDS, fmt, machine, now, skipped, summary
from ._timing import cpu_clock


def run_all(names: list[str], quick: bool, json_out: Path | None, md_out: Path | None, command: str) -> dict:
    result = {
        "machine": machine(),
        "timestamp": now(),
        "mode": "quick" if quick else "full",
        "clock": "cpu" if cpu_clock() else "wall",
        "command": command,
        "benchmarks": {},
        "records": [],
    }
    print(f"jointlimits benchmarks, {result['mode']} mode, {result['clock']} clock: {', '.join(names)}")
    m = result["machine"]
    print(
        f"  {m['cpu']}, {m['cores']} cores, Python {m['python']}, numpy {m['numpy']}; jointlimits "
        f"{m['jointlimits']['layout']} layout at {m['jointlimits']['path']} ({m['jointlimits']['commit'][:12]})",
        flush=True,
    )
    t_all = time.perf_counter()
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name} ...", flush=True)
        t = time.perf_counter()
        info: dict = {}
        try:
            mod = importlib.import_module(f"benchmarks.bench_{name}")
            recs = mod.run(quick)
        except Exception as e:
            traceback.print_exc()
            recs = [skipped(name, "(whole benchmark)", f"error: {type(e).__name__}: {e}")]
            info["error"] = f"{type(e).__name__}: {e}"
        info["seconds"] = round(time.perf_counter() - t, 2)
        result["benchmarks"][name] = info
        for r in recs:
            print(summary(r))
        print(f"  ({name}: {info['seconds']:.1f} s)", flush=True)
        result["records"] += recs
        if json_out:  # written after every benchmark: a crash keeps what was measured
            json_out.write_text(json.dumps(result, indent=1) + "\n")
    result["seconds"] = round(time.perf_counter() - t_all, 1)
    print(f"done in {result['seconds']:.0f} s")
    if json_out:
        json_out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {json_out}")
    if md_out:
        from ._markdown import write

        write(result, md_out, json_out)
        print(f"wrote {md_out}")
    return result


# ---------------------------------------------------------------------------------------------- compare


def _load_best(spec: str) -> tuple[dict, int]:
    """A run, or (comma-separated) several merged: per record the best value (min of times and
    memory, max of rates; count and quality figures from the first run), with the range of the
    values over the runs in ``_lo`` / ``_hi``."""
    runs = [json.loads(Path(p).read_text()) for p in spec.split(",") if p]
    out = dict(runs[0])
    best: dict = {}
    order = []
    for run in runs:
        for r in run["records"]:
            key = (r["bench"], r["name"])
            v = r.get("value")
            if key not in best:
                best[key] = dict(r, _lo=v, _hi=v)
                order.append(key)
                continue
            b = best[key]
            if v is None or b.get("value") is None:
                continue
            lo, hi = min(b["_lo"], v), max(b["_hi"], v)
            if r.get("kind") in TIMING_KINDS:
                better = v > b["value"] if r.get("better") == "higher" else v < b["value"]
                if better:
                    best[key] = dict(r)
            best[key]["_lo"], best[key]["_hi"] = lo, hi
    out["records"] = [best[k] for k in order]
    return out, len(runs)


def _same(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= max(1e-9 * max(abs(a), abs(b)), 1e-12)


def compare(before_spec: str, after_spec: str, band: float = 0.15, out=sys.stdout) -> int:
    """Print every record's ratio AFTER / BEFORE; returns the number of flagged rows."""
    before, nb = _load_best(before_spec)
    after, na = _load_best(after_spec)
    p = lambda s="": print(s, file=out)  # noqa: E731
    p(
        f"before: {before_spec} ({nb} run{'s' if nb > 1 else ''}; {before['mode']} mode, "
        f"{before.get('clock', 'wall')} clock, jointlimits "
        f"{before['machine']['jointlimits']['layout']} layout, {before['machine']['jointlimits']['commit'][:12]}, "
        f"{before['timestamp']})"
    )
    p(
        f"after:  {after_spec} ({na} run{'s' if na > 1 else ''}; {after['mode']} mode, "
        f"{after.get('clock', 'wall')} clock, jointlimits "
        f"{after['machine']['jointlimits']['layout']} layout, {after['machine']['jointlimits']['commit'][:12]}, "
        f"{after['timestamp']})"
    )
    if before["mode"] != after["mode"]:
        p("WARNING: different modes: quick and full figures are measured on different sizes")
    if before.get("clock", "wall") != after.get("clock", "wall"):
        p("WARNING: different clocks (wall and CPU time): the timings are not comparable")
    if nb > 1 or na > 1:
        p("timings: best of the runs per record (min of times and memory, max of rates)")
    p(
        f"flags: TIME = timing (time, rate, memory) off by more than {100 * band:.0f}% (with several runs: "
        f"the after runs' range {100 * band:.0f}% or more outside the before runs' range); "
        "'anchor ok' = its ratio to the same-run anchor moved less (the machine's load moved both); "
        "CHANGED = a count or quality figure that is not identical"
    )
    bidx = {(r["bench"], r["name"]): r for r in before["records"]}
    aidx = {(r["bench"], r["name"]): r for r in after["records"]}
    keys = list(bidx) + [k for k in aidx if k not in bidx]
    width = max(len(f"{b}: {n}") for b, n in keys) if keys else 20
    width = min(width, 80)
    p()
    p(f"{'record':<{width}} {'kind':<7} {'before':>10} {'after':>10} {'after/before':>12} {'anchored':>9}  flag")
    flagged = 0
    counts = {"ok": 0, "flagged": 0, "anchor ok": 0, "changed": 0, "skipped": 0, "missing": 0}
    for key in keys:
        b, a = bidx.get(key), aidx.get(key)
        label = f"{key[0]}: {key[1]}"
        if len(label) > width:
            label = label[: width - 3] + "..."
        if b is None or a is None:
            counts["missing"] += 1
            p(f"{label:<{width}} {'':7} {'(only in ' + ('after' if b is None else 'before') + ')':>34}")
            continue
        bv, av = b.get("value"), a.get("value")
        if bv is None or av is None:
            counts["skipped"] += 1
            why = b.get("skipped") if bv is None else a.get("skipped")
            p(f"{label:<{width}} {'skip':7} {fmt(bv):>10} {fmt(av):>10} {'':>12} {'':>9}  ({why})")
            continue
        kind = a.get("kind", "time")
        ratio = av / bv if bv else (1.0 if av == bv else float("inf"))
        anch = ""
        if a.get("ratio") and b.get("ratio"):
            anch = fmt(a["ratio"] / b["ratio"])
        flag = ""
        if kind in EXACT_KINDS:
            if not (_same(av, bv) and _same(a["_lo"], a["_hi"]) and _same(b["_lo"], b["_hi"])):
                flag = "CHANGED"
        elif b["_lo"] > 0 and a["_lo"] > 0 and (a["_lo"] > b["_hi"] * (1 + band) or a["_hi"] < b["_lo"] / (1 + band)):
            flag = "TIME"
            if anch and abs(a["ratio"] / b["ratio"] - 1) <= band:
                flag = "TIME (anchor ok)"
        if flag:
            flagged += 1
            counts["flagged"] += 1
            counts["anchor ok"] += flag.endswith("(anchor ok)")
            counts["changed"] += flag == "CHANGED"
        else:
            counts["ok"] += 1
        p(f"{label:<{width}} {kind:<7} {fmt(bv):>10} {fmt(av):>10} {ratio:12.3f} {anch:>9}  {flag}")
    p()
    p(
        f"{counts['ok']} within noise / identical, {counts['flagged']} flagged ({counts['changed']} count or quality "
        f"figures changed; {counts['flagged'] - counts['changed']} timings, of which {counts['anchor ok']} within the "
        f"band against their same-run anchor), {counts['skipped']} skipped, {counts['missing']} in one run only"
    )
    return flagged


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "compare":
        ap = argparse.ArgumentParser(prog="python -m benchmarks compare")
        ap.add_argument("before", help="BEFORE.json (or b1.json,b2.json: best of the runs)")
        ap.add_argument("after", help="AFTER.json (or a1.json,a2.json)")
        ap.add_argument("--band", type=float, default=0.15, help="noise band of the timings (default 0.15 = 15%%)")
        ap.add_argument("--strict", action="store_true", help="exit 1 when a row is flagged")
        args = ap.parse_args(argv[1:])
        n = compare(args.before, args.after, args.band)
        return 1 if (args.strict and n) else 0
    if argv and argv[0] == "markdown":
        ap = argparse.ArgumentParser(prog="python -m benchmarks markdown")
        ap.add_argument("json", type=Path)
        ap.add_argument("out", type=Path, nargs="?", default=Path("docs/benchmarks.md"))
        args = ap.parse_args(argv[1:])
        from ._markdown import write

        write(json.loads(args.json.read_text()), args.out, args.json)
        print(f"wrote {args.out}")
        return 0
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__.split("\n\n")[0],
        epilog="subcommands: compare BEFORE.json AFTER.json; markdown RUN.json [OUT.md]",
    )
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="small sizes, fewer repeats, no slow sweeps (~1-3 min)")
    g.add_argument("--full", action="store_true", help="every figure at the scripts' sizes (the default)")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=BENCHMARKS, help="run only these benchmarks")
    ap.add_argument("--json", type=Path, help="write the records here")
    ap.add_argument("--markdown", type=Path, help="generate this page from the records (e.g. docs/benchmarks.md)")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="in-process timings in process CPU time instead of wall time (a loaded machine's noise)",
    )
    ap.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name in BENCHMARKS:
            doc = (importlib.import_module(f"benchmarks.bench_{name}").__doc__ or "").strip().splitlines()
            print(f"{name:<11} {doc[0] if doc else ''}")
        return 0
    names = [n for n in BENCHMARKS if not args.only or n in args.only]
    if args.cpu_time:
        os.environ["JL_BENCH_CLOCK"] = "cpu"
    command = "python -m benchmarks " + ("--quick" if args.quick else "--full")
    if args.cpu_time or cpu_clock():
        command += " --cpu-time"
    if args.only:
        command += " --only " + " ".join(args.only)
    run_all(names, args.quick, args.json, args.markdown, command)
    return 0


if __name__ == "__main__":
    sys.exit(main())

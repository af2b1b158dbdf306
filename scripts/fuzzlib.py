"""What the reader fuzzers (``scripts/fuzz_*.py``) share: a sandboxed worker process that reads
one file per request, and the counting of outcomes.

Each mutated file is written to a scratch folder and read in a worker subprocess that runs with
an address-space limit (``RLIMIT_AS``, 1 GB by default) and one BLAS thread; a file that takes
longer than the timeout (10 s) kills the worker (counted as a hang) and a worker that dies by a
signal is counted by the signal's name; both restart the worker. Outcomes:

- ``rejected``: the reader raised its own error class (one line, naming the file);
- ``accepted``: the reader returned, and the checks of the fuzzer's ``accept`` function passed
  (finite values, and what the fuzzer asks of an accepted file);
- anything else is a failure: ``escaped <Type>`` (another exception, MemoryError included),
  ``multi-line error``, ``check failed: ...``, ``hang``, ``signal SIGxxx``.

``summary`` gives the one-line JSON every fuzzer prints last (the counts issue #38 asks for:
tracebacks, hangs, non-finite values accepted, MemoryErrors, the worker's peak RSS and the
largest input).

The worker imports the fuzzer module by path and calls its ``read(kind, path)`` (which returns a
short string for an accepted file or raises); the fuzzer names its error class in ``ERRORS``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MOCAP = SHARED / "data" / "mocap"
PYTHON = sys.executable


# ------------------------------------------------------------------------------------ the worker
def _peak_rss_mb() -> float:
    """The worker's peak resident memory since it started (MB): ``VmHWM`` of its own address
    space. ``ru_maxrss`` would also count the parent's memory copied at ``fork`` before ``exec``
    (Linux keeps that high-water mark across ``execve``): a fuzzer holding 1 GB of cases made a
    worker of 60 MB report 1.2 GB."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker(module_path: str) -> None:  # pragma: no cover - runs in the subprocess
    spec = importlib.util.spec_from_file_location("fuzz_target", module_path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    errors = tuple(mod.errors())
    out = sys.stdout
    sys.stdout = sys.stderr  # what the reader prints stays off the protocol
    import warnings

    warnings.simplefilter("ignore")
    for line in sys.stdin:
        kind, path = json.loads(line)
        t = time.perf_counter()
        try:
            note = mod.read(kind, path)
            res = {"outcome": "accepted", "note": str(note or "")}
        except errors as e:
            msg = str(e)
            res = {"outcome": "rejected" if "\n" not in msg.strip() else "multi-line error", "note": msg[:300]}
        except AssertionError as e:
            res = {"outcome": f"check failed: {str(e)[:120]}", "note": ""}
        except BaseException as e:
            res = {"outcome": f"escaped {type(e).__name__}", "note": f"{str(e)[:300]}"}
        res["seconds"] = time.perf_counter() - t
        res["maxrss_mb"] = _peak_rss_mb()
        out.write(json.dumps(res) + "\n")
        out.flush()


class Sandbox:
    """A worker subprocess reading files with a memory limit and a per-file timeout."""

    def __init__(self, module_path: str, memory_bytes: int = 1 << 30, timeout: float = 10.0):
        self.module_path, self.memory, self.timeout = module_path, memory_bytes, timeout
        self.proc: subprocess.Popen | None = None
        self.warm = False  # the worker has answered once (its imports are done)

    def _start(self) -> None:
        env = dict(os.environ)
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")
        src = str(ROOT / "src")
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        mem = self.memory

        def limit() -> None:  # pragma: no cover - runs in the child before exec
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        self.warm = False
        self.proc = subprocess.Popen(
            [
                PYTHON,
                "-c",
                f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                f"import fuzzlib; fuzzlib._worker({self.module_path!r})",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            preexec_fn=limit,
            text=True,
            bufsize=1,
        )

    def _stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

    def read(self, kind: str, path: str) -> dict:
        """The outcome of reading ``path`` (a dict with ``outcome``, ``note``, ``seconds``)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        t = time.perf_counter()
        try:
            self.proc.stdin.write(json.dumps([kind, path]) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        # the first request also waits for the worker's imports
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout + (0.0 if self.warm else 60.0))
        if ready:
            line = self.proc.stdout.readline()
            if line:
                self.warm = True
                return json.loads(line)
        if self.proc.poll() is None:  # still running: a hang
            self._stop()
            return {"outcome": "hang", "note": f"no answer in {time.perf_counter() - t:.0f} s", "seconds": self.timeout}
        rc = self.proc.returncode
        self._stop()
        name = signal.Signals(-rc).name if rc < 0 else f"exit {rc}"
        return {"outcome": f"signal {name}" if rc < 0 else f"worker {name}", "note": "", "seconds": 0.0}

    def close(self) -> None:
        self._stop()


def run_cases(
    module_path: str, cases, scratch: Path, verbose: bool = True, timeout: float = 10.0, memory_bytes: int = 1 << 30
) -> Counter:
    """Read every ``(label, kind, name, data)`` case (``data`` bytes written to ``scratch/name``,
    or None: ``name`` is an existing path such as a FIFO) in the sandbox; the outcome counts.
    ``memory_bytes`` is the worker's address-space limit (a library that reserves much virtual
    memory, like usd-core, needs more; its peak RSS is reported either way)."""
    counts: Counter = Counter()
    box = Sandbox(module_path, memory_bytes=memory_bytes, timeout=timeout)
    slow = 0.0
    peak = 0.0
    peak_small = 0.0  # worker peak RSS after inputs under 100 MB
    largest = 0
    try:
        for i, (label, kind, name, data) in enumerate(cases):
            if data is None:
                path = name
            else:
                path = str(scratch / name)
                Path(path).write_bytes(data)
            try:
                size = os.stat(path).st_size if data is None else len(data)
            except OSError:
                size = 0
            res = box.read(kind, path)
            out = res["outcome"]
            largest = max(largest, size)
            if size < 100 * 2**20:
                peak_small = max(peak_small, res.get("maxrss_mb", 0.0))
            counts[out] += 1
            slow = max(slow, res.get("seconds", 0.0))
            peak = max(peak, res.get("maxrss_mb", 0.0))
            if out not in ("accepted", "rejected") and verbose:
                print(f"[{i}] {label}: {out}: {res.get('note', '')[:200]}", file=sys.stderr)
            if data is not None:
                try:
                    os.unlink(path)
                except OSError:
                    pass
    finally:
        box.close()
    counts["_slowest_s"] = round(slow, 2)  # type: ignore[assignment]
    counts["_peak_rss_mb"] = round(peak)  # type: ignore[assignment]
    counts["_peak_rss_small_mb"] = round(peak_small)  # type: ignore[assignment]
    counts["_largest_input_mb"] = round(largest / 2**20, 1)  # type: ignore[assignment]
    return counts


def special_files(scratch: Path) -> list[tuple[str, str]]:
    """(label, path) of files no reader may block on or read without end: a FIFO with no writer,
    /dev/zero, /dev/urandom, a folder."""
    fifo = scratch / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    return [("fifo", str(fifo)), ("/dev/zero", "/dev/zero"), ("/dev/urandom", "/dev/urandom"), ("folder", str(scratch))]


def report(title: str, counts: Counter, seconds: float, max_peak_mb: float | None = None) -> int:
    """Print the counts; the number of failures (outcomes other than accepted/rejected, and one
    more when the worker's peak resident memory passed ``max_peak_mb``)."""
    counts = Counter(counts)
    slow, peak = counts.pop("_slowest_s", 0), counts.pop("_peak_rss_mb", 0)
    for k in [k for k in counts if k.startswith("_")]:
        counts.pop(k)
    n = sum(counts.values())
    bad = sum(v for k, v in counts.items() if k not in ("accepted", "rejected"))
    print(
        f"{title}: {n} files in {seconds:.0f} s: {counts['rejected']} rejected with the reader's error, "
        f"{counts['accepted']} accepted (checked), {bad} failures; slowest file {slow} s, worker peak RSS {peak} MB"
    )
    for k, v in sorted(counts.items()):
        if k not in ("accepted", "rejected"):
            print(f"  {v:6d}  {k}")
    if max_peak_mb is not None and peak > max_peak_mb:
        print(f"  worker peak RSS {peak} MB is over {max_peak_mb:g} MB")
        bad += 1
    return bad


#: prefix of the AssertionError message a fuzzer's ``read`` raises for a non-finite value
NON_FINITE = "non-finite"


def summary(reader: str, counts: Counter, seconds: float, timeout: float = 10.0) -> dict:
    """The counts of a run as one flat dict (``print_summary`` prints it as one JSON line):
    ``tracebacks`` (an exception other than the reader's error class, MemoryError excluded, or a
    multi-line message), ``memory_errors`` (MemoryError escaping), ``hangs`` (no answer within
    ``timeout`` s), ``crashes`` (the worker died by a signal or exited), ``non_finite`` (an
    accepted file with a non-finite value in the clip or its forward kinematics),
    ``other_checks_failed`` (the fuzzer's other checks), ``peak_rss_mb`` (the worker's peak
    resident memory, ``VmHWM`` since its ``exec``: the most any file it read took, under a 1 GB
    address-space limit),
    ``peak_rss_under_100mb_inputs_mb`` and ``largest_input_mb``."""
    outcomes = {k: v for k, v in counts.items() if not k.startswith("_")}
    out = {
        "reader": reader,
        "runs": sum(outcomes.values()),
        "accepted": outcomes.get("accepted", 0),
        "rejected": outcomes.get("rejected", 0),
        "tracebacks": 0,
        "memory_errors": 0,
        "hangs": 0,
        "crashes": 0,
        "non_finite": 0,
        "other_checks_failed": 0,
    }
    for k, v in outcomes.items():
        if k in ("accepted", "rejected"):
            continue
        if k == "escaped MemoryError":
            out["memory_errors"] += v
        elif k.startswith("escaped") or k == "multi-line error":
            out["tracebacks"] += v
        elif k == "hang":
            out["hangs"] += v
        elif k.startswith(("signal", "worker")):
            out["crashes"] += v
        elif k.startswith(f"check failed: {NON_FINITE}"):
            out["non_finite"] += v
        else:
            out["other_checks_failed"] += v
    out["failed"] = out["runs"] - out["accepted"] - out["rejected"]
    out["timeout_s"] = timeout
    out["slowest_s"] = counts.get("_slowest_s", 0)
    out["peak_rss_mb"] = counts.get("_peak_rss_mb", 0)
    out["peak_rss_under_100mb_inputs_mb"] = counts.get("_peak_rss_small_mb", 0)
    out["largest_input_mb"] = counts.get("_largest_input_mb", 0)
    out["seconds"] = round(seconds, 1)
    return out


def print_summary(reader: str, counts: Counter, seconds: float, timeout: float = 10.0) -> dict:
    """Print :func:`summary` as one line of JSON (the last line of a fuzzer's output)."""
    out = summary(reader, counts, seconds, timeout)
    print(json.dumps(out), flush=True)
    return out

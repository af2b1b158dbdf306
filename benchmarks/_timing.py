"""Timing helpers shared by the benchmark modules.

Wall clock (``time.perf_counter``) by default, as the scripts always measured. With
``python -m benchmarks --cpu-time`` (or JL_BENCH_CLOCK=cpu) every in-process timing that used the
wall clock uses the process's CPU time instead (``time.process_time``, all threads): on a shared,
oversubscribed machine that is the figure that does not move with the other jobs' load (a
multi-threaded call then counts the CPU time of all its threads). Timings already taken in
thread CPU time (the interleaved rounds against the reference C++) and the fresh-process timings
(start-up, BVH at size) are unchanged.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any


def cpu_clock() -> bool:
    """Whether the in-process timings use CPU time (JL_BENCH_CLOCK=cpu)."""
    return os.environ.get("JL_BENCH_CLOCK", "wall") == "cpu"


def clock() -> float:
    """Seconds: the wall clock, or the process's CPU time with JL_BENCH_CLOCK=cpu."""
    return time.process_time() if cpu_clock() else time.perf_counter()


def best(fn: Callable[[], Any], repeat: int = 5, warmup: int = 1) -> float:
    """Fastest of ``repeat`` timed calls (seconds), after ``warmup`` untimed ones (caches warm up)."""
    return best_with_result(fn, repeat, warmup)[1]


def best_with_result(fn: Callable[[], Any], repeat: int = 3, warmup: int = 0) -> tuple[Any, float]:
    """(last result, fastest of ``repeat`` timed calls in seconds)."""
    for _ in range(warmup):
        fn()
    out, fastest = None, float("inf")
    for _ in range(repeat):
        t = clock()
        out = fn()
        fastest = min(fastest, clock() - t)
    return out, fastest


def median(fn: Callable[[], Any], repeat: int = 15, warmup: int = 2) -> float:
    """Median of ``repeat`` timed calls (seconds), after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t = clock()
        fn()
        ts.append(clock() - t)
    return statistics.median(ts)

"""Timing helpers shared by the benchmark scripts (run them with the venv's python)."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def best(fn: Callable[[], Any], repeat: int = 5, warmup: int = 1) -> float:
    """Fastest of ``repeat`` timed calls (seconds), after ``warmup`` untimed ones (caches warm up)."""
    return best_with_result(fn, repeat, warmup)[1]


def best_with_result(fn: Callable[[], Any], repeat: int = 3, warmup: int = 0) -> tuple[Any, float]:
    """(last result, fastest of ``repeat`` timed calls in seconds)."""
    for _ in range(warmup):
        fn()
    out, fastest = None, float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        fastest = min(fastest, time.perf_counter() - t)
    return out, fastest


def median(fn: Callable[[], Any], repeat: int = 15, warmup: int = 2) -> float:
    """Median of ``repeat`` timed calls (seconds), after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)

"""The one-line JSON summary printed by the glTF and AMASS fuzzers (``scripts/fuzz_gltf.py``,
``scripts/fuzz_amass.py``): the counts issue #38 asks of a campaign, from the outcome counts of
``fuzzlib.run_cases``.

Keys: ``runs`` (files read), ``rejected`` / ``accepted``, ``failed`` (everything else),
``tracebacks`` (an exception other than the reader's error class escaped, MemoryError included),
``memory_errors`` (of which MemoryError), ``multi_line_errors``, ``hangs`` (no answer within the
timeout), ``crashes`` (the worker died: a signal or an exit), ``non_finite`` (an accepted clip or
its forward kinematics held NaN / inf), ``other_checks_failed``, ``slowest_s`` (slowest file),
``peak_rss_mb`` (ru_maxrss of the worker that loads, the campaign's maximum: the worker runs
under a 1 GB address-space limit), ``largest_input_mb`` (largest mutated file; the special files
/dev/zero and /dev/urandom are endless) and ``seconds`` (the whole run).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator


class Largest:
    """The largest input of a stream of ``(label, kind, name, data)`` cases, seen as
    ``fuzzlib.run_cases`` takes them one by one (the cases need not all be held at once)."""

    def __init__(self) -> None:
        self.bytes = 0

    def watch(self, cases: Iterable[tuple]) -> Iterator[tuple]:
        for case in cases:
            if case[3] is not None:
                self.bytes = max(self.bytes, len(case[3]))
            yield case


def summary(fuzzer: str, counts: Counter, seconds: float, largest_input_bytes: int) -> dict:
    """The summary of one campaign (``counts`` as returned by ``fuzzlib.run_cases``, untouched)."""
    outcomes = {k: v for k, v in counts.items() if not k.startswith("_")}
    failures = {k: v for k, v in outcomes.items() if k not in ("accepted", "rejected")}
    checks = {k: v for k, v in failures.items() if k.startswith("check failed")}
    non_finite = sum(v for k, v in checks.items() if "non-finite" in k)
    return {
        "fuzzer": fuzzer,
        "runs": sum(outcomes.values()),
        "rejected": outcomes.get("rejected", 0),
        "accepted": outcomes.get("accepted", 0),
        "failed": sum(failures.values()),
        "tracebacks": sum(v for k, v in failures.items() if k.startswith("escaped ")),
        "memory_errors": failures.get("escaped MemoryError", 0),
        "multi_line_errors": failures.get("multi-line error", 0),
        "hangs": failures.get("hang", 0),
        "crashes": sum(v for k, v in failures.items() if k.startswith(("signal ", "worker "))),
        "non_finite": non_finite,
        "other_checks_failed": sum(checks.values()) - non_finite,
        "slowest_s": counts.get("_slowest_s", 0),
        "peak_rss_mb": counts.get("_peak_rss_mb", 0),
        "largest_input_mb": round(largest_input_bytes / 2**20, 2),
        "seconds": round(seconds, 1),
    }


def line(summary_: dict) -> str:
    """The summary as one line of JSON (the fuzzers print it last; take the summary before
    ``fuzzlib.report``, which pops counts). Its keys avoid the word "failures", which
    tests/io/test_fuzz_short.py looks for in the human-readable lines."""
    return json.dumps(summary_)

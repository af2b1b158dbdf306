"""The memory budget of every reader: how many bytes of values one input may declare.

A reader checks each count, shape or field size an input declares *before* it allocates, and
counts every value at its float64 size (8 bytes), whatever type it is stored in: a ``uint8``
array of 100 M values costs 800 MB of budget, because it becomes float64 once read. All arrays of
one input share one budget (:class:`Budget`). An input over budget raises the reader's own error
class (``FormatError``, ``BVHError``, ``LimitsError``) in one line; no ``MemoryError`` escapes.

The budget is 160 MB by default (about 21 M float64 values, e.g. 50,000 frames of 55 joints'
rotations and positions); a reader's peak stays within a few times it (under 1 GB). Set it once
per process with :func:`set_memory_budget` or for every process with the environment variable
``JOINTLIMITS_MEMORY_BUDGET_MB`` (a plain decimal number of megabytes, 1 to 65536).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = [
    "DEFAULT_BUDGET_BYTES",
    "ENV_VAR",
    "Budget",
    "charge",
    "check_values",
    "memory_budget",
    "reading",
    "set_memory_budget",
]

ENV_VAR = "JOINTLIMITS_MEMORY_BUDGET_MB"
DEFAULT_BUDGET_BYTES = 160 * 1024 * 1024
_MB = 1024 * 1024
_MAX_MB = 65536
VALUE_BYTES = 8  # every value is counted at its float64 size

_override: int | None = None


def set_memory_budget(nbytes: int | None) -> None:
    """Set the bytes of (float64-counted) values one input may declare; ``None`` goes back to
    ``JOINTLIMITS_MEMORY_BUDGET_MB`` or the default (160 MB). Raises ``ValueError`` outside
    1 MB .. 64 GB."""
    global _override
    if nbytes is None:
        _override = None
        return
    if type(nbytes) is not int or not _MB <= nbytes <= _MAX_MB * _MB:
        raise ValueError(
            f"the memory budget must be an integer number of bytes in [{_MB}, {_MAX_MB * _MB}], got {nbytes!r}"
        )
    _override = nbytes


def memory_budget() -> int:
    """The bytes of (float64-counted) values one input may declare (see the module's text)."""
    if _override is not None:
        return _override
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_BUDGET_BYTES
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", raw) or not 1 <= float(raw) <= _MAX_MB:
        raise ValueError(f"{ENV_VAR} must be a plain decimal number of megabytes in [1, {_MAX_MB}], got {raw!r}")
    return int(float(raw) * _MB)


def _fmt(nbytes: float) -> str:
    return f"{nbytes / _MB:.4g} MB"


class Budget:
    """One input's budget: :meth:`take` each declared array (its number of values) before reading
    it; ``fail(message)`` builds the reader's own exception, raised when the sum passes the budget.
    """

    def __init__(self, what: str, fail: Callable[[str], Exception], limit: int | None = None):
        self.what = what
        self.fail = fail
        self.limit = memory_budget() if limit is None else int(limit)
        self.used = 0.0

    def take(self, n_values: int | float, label: str = "its arrays") -> None:
        """Count ``n_values`` values (at 8 bytes each); raise if the input now declares more than
        the budget. ``n_values`` may be a Python int of any size or a float (even inf or NaN)."""
        try:
            need = float(n_values) * VALUE_BYTES
        except OverflowError:
            need = float("inf")
        if not need >= 0:  # NaN or negative
            raise self.fail(f"{self.what}: {label} declare an invalid size ({n_values!r})")
        self.used += need
        if self.used > self.limit:
            raise self.fail(
                f"{self.what}: {label} declare {_fmt(need)} of values (as float64), more than the memory budget "
                f"of {_fmt(self.limit)} ({ENV_VAR} raises it)"
            )


def check_values(n_values: int | float, what: str, fail: Callable[[str], Exception], label: str = "its arrays") -> None:
    """One-shot :class:`Budget` check of a single declared size."""
    Budget(what, fail).take(n_values, label)


_current: ContextVar[Budget | None] = ContextVar("jointlimits_budget", default=None)


@contextmanager
def reading(budget: Budget) -> Iterator[Budget]:
    """Make ``budget`` the one :func:`charge` takes from while a nested reader runs (e.g. every
    grid of every joint of one limits file shares the file's budget)."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def charge(n_values: int | float, label: str) -> None:
    """Take ``n_values`` from the budget of the input being read (:func:`reading`), if any."""
    b = _current.get()
    if b is not None:
        b.take(n_values, label)

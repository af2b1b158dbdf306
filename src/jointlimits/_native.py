"""The compiled core, ``jointlimits._core`` (C++17 under nanobind, ``cpp/``), imported here alone.

Every module reaches the core as ``from .._native import _core`` rather than through the package
root; a missing or stale build fails here with one clear message instead of deep in a kernel."""

from __future__ import annotations

try:
    from . import _core as _core
except ImportError as exc:  # pragma: no cover - only without a built core
    raise ImportError(
        "jointlimits._core, the compiled core, is not built or does not load "
        f"({exc}); install the package with `pip install -e .` (needs a C++17 compiler)"
    ) from exc

__all__ = ["_core"]

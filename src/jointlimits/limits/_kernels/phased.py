"""Former large-batch step (numpy ufuncs between compiled phases). The C++ step
(:func:`.fused.step`) is one loop that is fastest at every batch size, so this module only keeps
its entry point for old callers."""

from __future__ import annotations

import numpy as np

from .fused import compile_limit

__all__ = ["project_phased", "CHUNK"]

CHUNK = 2048  # kept for old callers: the C++ step needs no chunking


def project_phased(flat: np.ndarray, ref: np.ndarray, axis: np.ndarray, mode: int, covers: bool,
                   soften: tuple[float, float] | None, a: tuple, twist: tuple[float, float],
                   out: np.ndarray, hard: np.ndarray | None) -> None:
    """Write the limited rotations of ``flat`` ``[N, 4]`` (C-contiguous float64) into ``out`` (and
    the unsoftened ones into ``hard`` if given) for a packed limit of mode 0 or 1."""
    if mode not in (0, 1):
        raise ValueError("the phased step handles modes 0 and 1 (use fused.project_fitted)")
    from .fused import EMPTY_SHAPE
    from ... import _core

    packed = compile_limit(ref, axis, mode, covers, a, EMPTY_SHAPE, twist)
    soft_on = soften is not None
    falloff, radius = (float(soften[0]), float(soften[1])) if soft_on else (0.0, 0.0)
    _core.limit_step(packed, flat, soft_on, falloff, radius, out, hard if (hard is not None and soft_on) else None)
    if hard is not None and not soft_on:
        hard[...] = out

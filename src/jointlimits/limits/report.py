"""Violation reports: per limited joint, how many frames of a set of clips are outside the
limits, by how much (degrees), and where (frame ranges)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["frame_ranges", "violation_report", "with_expected"]


def frame_ranges(mask: NDArray[np.bool_]) -> list[list[int]]:
    """``[[first, last], ...]`` (inclusive) of the runs of true frames in ``mask``."""
    m = np.concatenate([[False], np.asarray(mask, bool), [False]])
    edges = np.flatnonzero(m[1:] != m[:-1])
    return [[int(a), int(b) - 1] for a, b in zip(edges[::2], edges[1::2])]


def violation_report(
    names: Sequence[str], active: Sequence[int], violations: Sequence[NDArray[np.float64]], tolerance: float = 1e-6
) -> list[dict[str, Any]]:
    """Per joint of ``active``: frames outside, fraction outside, mean and max violation (degrees)
    over every clip's violations ``[F, J]`` (radians); with one clip also its frame ranges."""
    v = np.concatenate(list(violations), axis=0)
    rows = []
    for j in active:
        vj = v[:, j]
        out = vj > tolerance
        row: dict[str, Any] = {
            "joint": names[j],
            "frames": int(vj.size),
            "frames_outside": int(out.sum()),
            "fraction_outside": float(out.mean()) if vj.size else 0.0,
            "mean_violation_deg": float(np.degrees(vj[out].mean())) if out.any() else 0.0,
            "max_violation_deg": float(np.degrees(vj.max())) if vj.size else 0.0,
        }
        if len(violations) == 1:
            row["frame_ranges"] = frame_ranges(out)
        rows.append(row)
    return rows


def with_expected(
    rows: list[dict[str, Any]], calibration: Mapping[str, Mapping[str, float]] | None
) -> list[dict[str, Any]]:
    """``rows`` of :func:`violation_report` with, for each calibrated joint, its measured
    ``recall`` (fraction of frames inside) next to the ``expected_recall`` and ``expected_spread``
    stored by a fit with a target recall, and ``below_expected`` when it measured lower."""
    if not calibration:
        return rows
    for r in rows:
        c = calibration.get(r["joint"])
        if c is None:
            continue
        r["recall"] = 1.0 - r["fraction_outside"]
        r["expected_recall"] = c["expected_recall"]
        r["expected_spread"] = c["spread"]
        r["below_expected"] = bool(r["recall"] < c["expected_recall"])
    return rows

"""Whole corpora: fit, check and clean thousands of clips in bounded memory on Dask.

Sources are files, folders (recursive), glob patterns and ``@LIST.txt`` files (:mod:`.sources`);
clips are grouped by skeleton (:mod:`.groups`); work runs per clip on a Dask cluster
(:mod:`.engine`). :func:`fit` merges per-clip statistics (:mod:`jointlimits.limits.fit`), :func:`scan`
measures each clip (:mod:`.scan`), :func:`clean` runs the cleanup chain on each (:mod:`.clean`).
"""

from __future__ import annotations

from .clean import CleanResult, CleanSettings, clean
from .fitting import CorpusFit, fit
from .scan import ScanResult, read_table, scan, write_html, write_table
from .sources import Clip, expand

__all__ = [
    "Clip",
    "CleanResult",
    "CleanSettings",
    "CorpusFit",
    "ScanResult",
    "clean",
    "expand",
    "fit",
    "read_table",
    "scan",
    "write_html",
    "write_table",
]

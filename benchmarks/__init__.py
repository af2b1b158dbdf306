"""jointlimits benchmarks: one runner, ``python -m benchmarks [--quick|--full]`` (see ``__main__``).

Every ``bench_*`` module exposes ``run(quick: bool) -> list[dict]`` (records, see ``_common.record``)
and runs alone as ``python -m benchmarks.bench_NAME [--quick]``. BLAS/OpenMP pools are pinned to
one thread here, before any module imports numpy (the compiled core sizes its own threads).
"""

from __future__ import annotations

import os

for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ.setdefault(_var, "1")

#: the benchmark modules, in the order the runner runs them (cheap first)
BENCHMARKS = (
    "io",
    "startup",
    "projection",
    "limits",
    "springs",
    "ik",
    "studio",
    "bvh_size",
    "pops",
    "footlock",
    "recover",
    "quality",
    "retarget",
    "fbx",
    "usd",
    "quat",
    "difflimits",
    "cleanup",
    "corpus",
    "web_demo",
    "human",
)

"""The compiled form of a shape and of a joint's limit: building the ``_core`` shape a
:meth:`Shape.compile` returns, and the form it takes in a limits file, for code without Python.

Every joint entry of a limits file written by :meth:`JointLimits.save` carries, beside its shape
parameters, a ``"compiled"`` object: exactly the arrays the C++ core projects with (the shape
parameters reduced to half-spaces, swing sections and twist intervals). The C++ header
``cpp/include/jointlimits/limits_file.hpp`` reads it, so an engine or DCC plugin projects poses with
the same results as :meth:`JointLimits.project` and no geometry code of its own. Limits without a
compiled form (implicit surfaces, coupled and reach-window limits) have no ``"compiled"`` entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._native import _core

COMPILED_VERSION = 1

_SHAPE_FIELDS = ("f", "axes", "mins", "maxs", "G", "bnd")


def _flat(a: Any, cols: int) -> np.ndarray:
    return np.ascontiguousarray(np.zeros((0, cols)) if a is None else a, np.float64).reshape(-1)


def core_shape(
    kind: str, f: Any, axes: Any = None, mins: Any = None, maxs: Any = None, G: Any = None, bnd: Any = None
) -> _core.CompiledShape:
    """The ``_core`` shape ``kind`` (``"box"``, ``"slabs"``, ``"ellipsoid"``, ``"ellipse"``, ``"kdop"``,
    ``"polygon"``) from limit-space arrays: ``f[16]`` = position, row-major rotation (columns are
    the axes), scale, radius; ``axes`` ``[n, 3]``, ``mins`` / ``maxs`` ``[n]``, ``G`` ``[m, 3]``,
    ``bnd`` ``[m]`` as the shape reads them (None: empty). ValueError if they do not fit it."""
    return _core.CompiledShape(
        kind, _flat(f, 1), _flat(axes, 3), _flat(mins, 1), _flat(maxs, 1), _flat(G, 3), _flat(bnd, 1)
    )


def _finite(a: Any) -> np.ndarray:
    # strict JSON has no Infinity: an unbounded side is written as +-1e300, which clamps the same
    return np.nan_to_num(np.asarray(a, np.float64), nan=0.0, posinf=1e300, neginf=-1e300)


def _shape_dict(shape: _core.CompiledShape) -> dict[str, Any]:
    d: dict[str, Any] = {"code": int(shape.code)}  # the file's name for the kind (see compiled_shape.hpp)
    arrays = shape.arrays()
    for name in _SHAPE_FIELDS:
        d[name] = _finite(arrays[name]).reshape(-1).tolist()
    return d


def compiled_dict(limit: Any) -> dict[str, Any] | None:
    """The ``"compiled"`` entry of a joint's limit (None when the limit has no compiled form).

    ``mode`` 0: one shape ``a``; 1: swing section ``a`` and twist interval ``twist`` on
    ``twist_axis``; 2: the reference's quirks (swing shape ``a``, twist shape ``b``). Shapes carry
    their code (the kind's index in ``CompiledShape``, cpp/include/jointlimits/compiled_shape.hpp),
    ``f`` (position, row-major rotation, scale, radius) and flattened ``axes`` / ``mins`` / ``maxs`` /
    ``G`` / ``bnd``."""
    packed = getattr(limit, "_packed", None)
    if packed is None:
        return None
    mode, covers, twist, a, b = packed
    return {
        "version": COMPILED_VERSION,
        "mode": int(mode),
        "covers": bool(covers),
        "reference": np.asarray(limit.reference, np.float64).tolist(),
        "twist_axis": np.asarray(limit.twist_axis, np.float64).tolist(),
        "twist": _finite(twist).tolist(),
        "a": _shape_dict(a),
        "b": _shape_dict(b),
    }

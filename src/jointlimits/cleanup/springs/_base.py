"""Shared by the spring modules: constants, the error type, and input validation and broadcasting
helpers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import JointLimitsError

Array = NDArray[np.float64]
#: A flat input or output of a kernel: float64, or float32 for the ``*_f32`` kernels. The dtype is
#: chosen at run time (:func:`_result_dtype`), so it is left open here; the kernels check it.
FlatArray = NDArray[Any]
#: ``out=`` of the one-step functions: (x_out, v_out) or None for new arrays.
Out = tuple[np.ndarray, np.ndarray] | None

#: ln(2) with the digits the reference uses (0.69314718056).
LN2 = 0.69314718056
#: Per-frame modes of a tracking spring around a discontinuity (see :func:`tracking_modes`).
MODE_POSITION = 0  # discontinuity frame: position target only (``*_no_velocity_acceleration``)
MODE_VELOCITY = 1  # frame after it: position and velocity targets (``*_no_acceleration``)
MODE_FULL = 2  # normal frame: position, velocity and acceleration targets


class SpringError(JointLimitsError, ValueError):
    """Invalid input to a spring function (NaN, non-positive dt, shapes that do not match, ...)."""


# ----------------------------------------------------------------------------------------------
# validation helpers


def _arr(x: ArrayLike, name: str) -> Array:
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise SpringError(f"{name} contains NaN or infinite values")
    return a


def _dt(dt: ArrayLike, name: str = "dt") -> Array:
    a = _arr(dt, name)
    if np.any(a <= 0.0):
        raise SpringError(f"{name} must be > 0, got min {float(np.min(a))!r}")
    return a


def _nonneg(x: ArrayLike, name: str) -> Array:
    a = _arr(x, name)
    if np.any(a < 0.0):
        raise SpringError(f"{name} must be >= 0, got min {float(np.min(a))!r}")
    return a


def _result_dtype(values: Sequence[ArrayLike]) -> type:
    """float32 when every numpy input (array or numpy scalar) is float32 and there is one, else float64.
    Python numbers take the other inputs' type; anything else (lists, other dtypes) means float64."""
    f32 = False
    for v in values:
        if isinstance(v, (np.ndarray, np.generic)):
            if v.dtype != np.float32:
                return np.float64
            f32 = True
        elif not isinstance(v, (float, int)):
            return np.float64
    return np.float32 if f32 else np.float64


def _flat(values: Sequence[ArrayLike], dtype: type = np.float64) -> tuple[tuple[int, ...], list[FlatArray]]:
    """The broadcast shape of ``values`` and each as a flat ``dtype`` array of 1 or n elements (no
    copy for scalars and arrays already of that shape and dtype)."""
    arrs: list[FlatArray] = [np.asarray(v, dtype=dtype) for v in values]
    shape = arrs[0].shape
    if any(a.shape != shape for a in arrs):
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrs))
        except ValueError as exc:
            raise SpringError(f"shapes do not broadcast: {[a.shape for a in arrs]}") from exc
    n = math.prod(shape)
    flat: list[FlatArray] = []
    for a in arrs:
        if a.size == 1 and n != 1:
            flat.append(a.reshape(1))
        elif a.shape == shape:
            flat.append(np.ascontiguousarray(a).reshape(-1))
        else:
            flat.append(np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1))
    return shape, flat


def _outputs(out: Out, shape: tuple[int, ...], dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """(x_out, v_out): new arrays, or ``out`` checked (shape, dtype, C order, writeable, distinct)."""
    if out is None:
        return np.empty(shape, dtype), np.empty(shape, dtype)
    if not isinstance(out, tuple) or len(out) != 2:
        raise SpringError("out must be a tuple (x_out, v_out) of two arrays")
    for name, a in zip(("x_out", "v_out"), out):
        if not isinstance(a, np.ndarray):
            raise SpringError(f"out: {name} must be a numpy array, got {type(a).__name__}")
        if a.dtype != dtype or a.shape != shape:
            raise SpringError(
                f"out: {name} must have shape {shape} and dtype {np.dtype(dtype).name}, got {a.shape} {a.dtype.name}"
            )
        if not (a.flags.c_contiguous and a.flags.writeable):
            raise SpringError(f"out: {name} must be C-contiguous and writeable")
    if np.may_share_memory(out[0], out[1]):
        raise SpringError("out: x_out and v_out must not share memory")
    return out


def _invalid(checks: Sequence[tuple[str, ArrayLike, str]]) -> SpringError:
    """The precise error for the first invalid input (kind: 'finite', 'nonneg', 'positive', 'gain')."""
    for name, value, kind in checks:
        if kind == "positive":
            _dt(value, name)
        elif kind == "nonneg":
            _nonneg(value, name)
        else:
            a = _arr(value, name)
            if kind == "gain" and np.any((a < 0.0) | (a > 1.0)):
                return SpringError(f"{name} must be in [0, 1]")
    return SpringError("invalid spring input")

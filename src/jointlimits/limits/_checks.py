"""Input checks shared by the limit-space shape functions (one place for the error messages)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import overload

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError

#: the identity frame of the thin compiled calls (read-only: shared by every call)
_ZERO3 = np.zeros(3)
_EYE3 = np.eye(3)
_ZERO3.flags.writeable = False
_EYE3.flags.writeable = False


def _as_float_array(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise LimitsError(f"{name}: cannot convert to an array ({exc})") from exc
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_
    ):
        raise LimitsError(f"{name}: expected a real numeric array, got dtype {arr.dtype}")
    return np.asarray(arr, dtype=np.float64)


def _first_nonfinite(arr: np.ndarray) -> tuple | None:
    bad = ~np.isfinite(arr)
    if bad.any():
        return tuple(int(i) for i in np.argwhere(bad)[0])
    return None


def _check_finite(arr: np.ndarray, name: str) -> None:
    where = _first_nonfinite(arr)
    if where is not None:
        raise LimitsError(f"{name} contains a non-finite value ({arr[where]}) at index {where}")


def _points(points, name: str = "points") -> np.ndarray:
    """Points ``[..., 3]`` as float64 (no copy when already float64)."""
    arr = _as_float_array(points, name)
    if arr.ndim == 0 or arr.shape[-1] != 3:
        raise LimitsError(f"{name} must have shape [..., 3], got {arr.shape}")
    return arr


def _cloud(points, name: str = "points") -> np.ndarray:
    """A cloud (or batch of clouds) ``[..., N, 3]`` with N >= 1 and finite values."""
    arr = _points(points, name)
    if arr.ndim < 2:
        raise LimitsError(f"{name} must be a cloud of shape [..., N, 3], got {arr.shape}")
    if arr.shape[-2] == 0:
        raise LimitsError(f"{name} is an empty cloud (shape {arr.shape}): cannot fit a limit to no points")
    if arr.size == 0:
        raise LimitsError(f"{name} is empty (shape {arr.shape})")
    _check_finite(arr, name)
    return arr


#: Largest padding (radians) a fit accepts: a limit padded by half a radian (29 degrees) past every
#: pose seen is hardly a limit; an implicit grid grows with its cube (1 rad: 34 MB, 10: 90 s).
MAX_PADDING = 0.5


def _padding(padding) -> float:
    try:
        p = float(padding)
    except (TypeError, ValueError) as exc:
        raise LimitsError(f"padding must be a real number, got {padding!r}") from exc
    if not math.isfinite(p):
        raise LimitsError(f"padding must be finite, got {p}")
    if p < 0.0 or p > MAX_PADDING:
        raise LimitsError(f"padding must be >= 0 and at most {MAX_PADDING} radians, got {p}")
    return p


def _vec(x, name: str, n: int = 3) -> np.ndarray:
    arr = _as_float_array(x, name)
    if arr.shape != (n,):
        raise LimitsError(f"{name} must have shape ({n},), got {arr.shape}")
    _check_finite(arr, name)
    return np.ascontiguousarray(arr)


def _frame(position, rotation) -> tuple[np.ndarray, np.ndarray]:
    pos = np.zeros(3) if position is None else _vec(position, "position")
    if rotation is None:
        rot = np.eye(3)
    else:
        rot = _as_float_array(rotation, "rotation")
        if rot.shape != (3, 3):
            raise LimitsError(f"rotation must have shape (3, 3), got {rot.shape}")
        _check_finite(rot, "rotation")
        rot = np.ascontiguousarray(rot)
    return pos, rot


def _flat_points(points):
    """Validate projection input; return (flat [M,3] contiguous float64, original shape)."""
    arr = _points(points)
    flat = np.ascontiguousarray(arr).reshape(-1, 3)
    return flat, arr.shape


def _out_array(out, shape) -> np.ndarray:
    if out is None:
        return np.empty(shape, dtype=np.float64)
    if not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.shape != tuple(shape):
        raise LimitsError(f"out must be a float64 array of shape {tuple(shape)}")
    if not out.flags.c_contiguous:
        raise LimitsError("out must be C-contiguous")
    return out


def _raise_bad_point(idx: int, flat: np.ndarray, shape) -> None:
    if idx >= 0:
        where = np.unravel_index(idx, shape[:-1]) if len(shape) > 1 else ()
        raise LimitsError(
            f"points contain a non-finite value (NaN or inf) at index {tuple(int(i) for i in where)}: "
            f"{flat[idx].tolist()}"
        )


def _local(points: np.ndarray, position, rotation) -> np.ndarray:
    """``R^T (x - position)`` for clouds ``[..., N, 3]`` and frames ``[..., 3]``/``[..., 3, 3]``."""
    pos = _as_float_array(position, "position")
    rot = _as_float_array(rotation, "rotation")
    if pos.ndim == 0 or pos.shape[-1] != 3:
        raise LimitsError(f"position must have shape [..., 3], got {pos.shape}")
    if rot.ndim < 2 or rot.shape[-2:] != (3, 3):
        raise LimitsError(f"rotation must have shape [..., 3, 3], got {rot.shape}")
    _check_finite(pos, "position")
    _check_finite(rot, "rotation")
    d = points - pos[..., None, :]
    # local_j = sum_i R_ij d_i
    try:
        return np.einsum("...ni,...ij->...nj", d, rot)
    except ValueError as exc:
        raise LimitsError(
            f"points {points.shape}, position {pos.shape} and rotation {rot.shape} do not broadcast"
        ) from exc


def _local_points(points, position, rotation):
    """``R^T (x - p)`` with the same operation order as the numba kernels, so inside /
    outside decisions agree bit for bit with the projections."""
    arr = _points(points)
    _check_finite(arr, "points")
    pos, rot = _frame(position, rotation)
    d = arr - pos
    dx, dy, dz = d[..., 0], d[..., 1], d[..., 2]
    local = np.stack([rot[0, j] * dx + rot[1, j] * dy + rot[2, j] * dz for j in range(3)], axis=-1)
    return local, arr


#: Largest softening radius (radians in limit space): beyond two full turns it has no meaning, and
#: huge radii overflow the exponential map into NaN.
MAX_SOFTEN_RADIUS = 4.0 * math.pi


_soften_ok: tuple[float, float] | None = None


@overload
def check_soften(soften: None) -> None: ...


@overload
def check_soften(soften: Sequence[float]) -> tuple[float, float]: ...


def check_soften(soften: Sequence[float] | None) -> tuple[float, float] | None:
    """``soften=(falloff, radius)`` as two floats: falloff finite and >= 0, radius in
    ``[0, MAX_SOFTEN_RADIUS]``; None stays None. ``LimitsError`` otherwise (never NaN out)."""
    global _soften_ok
    if soften is None:
        return None
    if soften is _soften_ok:  # the tuple checked last time (immutable: still valid)
        return _soften_ok
    if (
        type(soften) is tuple
        and len(soften) == 2
        and type(soften[0]) is float
        and type(soften[1]) is float
        and 0.0 <= soften[0] < math.inf
        and 0.0 <= soften[1] <= MAX_SOFTEN_RADIUS
    ):
        _soften_ok = soften  # the common case, checked without conversions (a per-call cost of every projection)
        return soften
    try:
        falloff, radius = (float(v) for v in soften)
    except (TypeError, ValueError) as exc:
        raise LimitsError(f"soften must be (falloff, radius), two real numbers; got {soften!r}") from exc
    if not (math.isfinite(falloff) and falloff >= 0.0):
        raise LimitsError(f"soften falloff must be finite and >= 0, got {falloff}")
    if not (math.isfinite(radius) and 0.0 <= radius <= MAX_SOFTEN_RADIUS):
        raise LimitsError(f"soften radius must be between 0 and {MAX_SOFTEN_RADIUS:.4g} radians, got {radius}")
    return falloff, radius


#: Limit space is rotation vectors, |v| <= 2 pi on either cover: a limit's position or grid origin
#: beyond this bound (per coordinate) is out of proportion with rotation space.
LIMIT_SPACE_BOUND = 4.0 * math.pi
#: An implicit grid's cell (radians): finer is no limit of measured motion, coarser than a turn
#: covers rotation space in a cell.
MIN_GRID_CELL, MAX_GRID_CELL = 1e-3, 2.0 * math.pi
#: Most nodes per axis and per field of an implicit grid (a fitted one has a few thousand).
MAX_GRID_EXTENT, MAX_GRID_NODES = 512, 1 << 21
#: Most nodes of all of a coupled limit's fields together (float32: 64 MB), and its most fields.
MAX_FIELDS_NODES, MAX_FIELDS = 1 << 24, 4096


def check_grid(origin, cell, dims, what: str) -> None:
    """An implicit grid in proportion with rotation space: origin within ``LIMIT_SPACE_BOUND``,
    cell in ``[MIN_GRID_CELL, MAX_GRID_CELL]``, ``dims`` (3 ints >= 2) within ``MAX_GRID_EXTENT``
    and ``MAX_GRID_NODES``, and its extent within twice ``LIMIT_SPACE_BOUND``; LimitsError otherwise."""
    o = np.asarray(origin, np.float64)
    if o.shape != (3,) or not np.all(np.abs(o) <= LIMIT_SPACE_BOUND):
        raise LimitsError(f"{what}: origin must be 3 finite numbers within +-{LIMIT_SPACE_BOUND:.4g} radians")
    c = float(cell)
    if not (MIN_GRID_CELL <= c <= MAX_GRID_CELL):
        raise LimitsError(f"{what}: cell must be in [{MIN_GRID_CELL:g}, {MAX_GRID_CELL:.4g}] radians, got {c}")
    check_dims(dims, what)
    if max(dims) * c > 2 * LIMIT_SPACE_BOUND:
        raise LimitsError(f"{what}: the grid spans {max(dims) * c:.4g} radians, out of proportion with rotation space")


def check_dims(dims, what: str, n: int = 3) -> tuple[int, ...]:
    """``n`` integers in ``[2, MAX_GRID_EXTENT]`` whose product is at most ``MAX_GRID_NODES``."""
    try:
        out = tuple(operator.index(d) if not isinstance(d, float) or not d.is_integer() else int(d) for d in dims)
    except (TypeError, ValueError, OverflowError):
        raise LimitsError(f"{what}: dims must be {n} integers, got {dims!r}") from None
    if len(out) != n or any(isinstance(d, bool) for d in dims) or not all(2 <= d <= MAX_GRID_EXTENT for d in out):
        raise LimitsError(f"{what}: dims must be {n} integers in [2, {MAX_GRID_EXTENT}], got {dims!r}")
    if math.prod(out) > MAX_GRID_NODES:
        raise LimitsError(f"{what}: a grid of {math.prod(out)} nodes, at most {MAX_GRID_NODES} are supported")
    return out


def filled(value: np.ndarray | None, what: str) -> np.ndarray:
    """``value``, an array field of a shape, which its ``__post_init__`` fills in (None before)."""
    if value is None:
        raise LimitsError(f"shape field {what!r} is not set")
    return value


#: A quaternion whose squared norm is below this is no rotation (LimitsError); one whose norm is
#: off 1 by more than UNIT_TOLERANCE is normalised before any limit sees it.
MIN_QUAT_NORM2 = 1e-12
UNIT_TOLERANCE = 1e-6


def unit_rotations(q: NDArray[np.float64]) -> NDArray[np.float64]:
    """``q`` (``[..., 4]``) checked at the API boundary: a zero or near-zero quaternion raises
    LimitsError; a non-unit one is normalised (a new array; unit input is returned as it is, bit
    for bit). NaN and infinity are left for the caller's own check."""
    n2 = np.einsum("...i,...i->...", q, q)
    if np.any(n2 < MIN_QUAT_NORM2):
        at = tuple(int(i) for i in np.argwhere(n2 < MIN_QUAT_NORM2)[0])
        raise LimitsError(f"rotations hold a zero (or near-zero) quaternion at index {list(at)}: no rotation")
    off = np.abs(n2 - 1.0) > 2 * UNIT_TOLERANCE
    if np.any(off):
        q = np.where(off[..., None], q / np.sqrt(np.where(off, n2, 1.0))[..., None], q)
    return q

"""What :mod:`.quat` and its Euler conversions (:mod:`._quat_euler`) share: array coercion, overflow-safe
norms and the primitives ``identity``, ``mul`` and ``normalize`` (public in :mod:`.quat`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._native import _core

# A float array of the input's precision (float64 from anything not floating). NumPy's types cannot
# tie the result's dtype to an ArrayLike argument's, so it is left open: callers holding float64 keep it.
Array = NDArray[Any]

_SAFE_LO, _SAFE_HI = 1e-150, 1e150  # plain norms are exact enough in between


def _plain_norm(x: Array, keepdims: bool) -> Array:
    with np.errstate(over="ignore", under="ignore"):  # out-of-range norms take the scaled path
        return np.linalg.norm(x, axis=-1, keepdims=keepdims)


def _plain_ok(n: Array) -> bool:
    return bool(np.all((n > _SAFE_LO) & (n < _SAFE_HI)))


def _norm(x: Array, keepdims: bool = False) -> Array:
    """Euclidean norm over the last axis without overflow or underflow (1e200 and 1e-200 work)."""
    n = _plain_norm(x, keepdims)
    if _plain_ok(n):
        return n
    m = np.max(np.abs(x), axis=-1, keepdims=True)
    safe = np.where(m > 0, m, 1.0)
    with np.errstate(invalid="ignore"):
        n = m * np.linalg.norm(x / safe, axis=-1, keepdims=True)
    return n if keepdims else n[..., 0]


def _unit(x: Array) -> tuple[Array, NDArray[np.bool_]]:
    """x / |x| over the last axis (scaled by the largest component first, so subnormal and huge
    vectors work) and where x is zero (left zero)."""
    n = _plain_norm(x, True)
    if _plain_ok(n):
        return x / n, np.zeros(n.shape[:-1], bool)
    m = np.max(np.abs(x), axis=-1, keepdims=True)
    s = x / np.where(m > 0, m, 1.0)
    n = np.linalg.norm(s, axis=-1, keepdims=True)
    return s / np.where(n > 0, n, 1.0), m[..., 0] == 0


def _f(x: ArrayLike) -> Array:
    a = np.asarray(x)
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    return a


def _f64(*xs: Array) -> bool:
    """Whether the compiled kernels take these arrays (float64; other precisions stay in numpy)."""
    return all(x.dtype == np.float64 for x in xs)


_c = np.ascontiguousarray


def identity(shape: Sequence[int] | int = (), dtype=np.float64) -> Array:
    """Identity rotations (1, 0, 0, 0) of the given leading shape."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    q = np.zeros(shape + (4,), dtype=dtype)
    q[..., 0] = 1.0
    return q


def mul(a: ArrayLike, b: ArrayLike) -> Array:
    """Hamilton product a*b (rotation b, then a)."""
    a, b = _f(a), _f(b)
    if _f64(a, b) and a.shape == b.shape and a.shape[-1:] == (4,):
        out = np.empty(a.shape)
        _core.q_mul(_c(a), _c(b), out)
        return out
    return mul_xp(np, a, b)


def mul_xp(xp: Any, a: Any, b: Any) -> Any:
    """The Hamilton product of ``[..., 4]`` quaternions in any array namespace ``xp`` with
    ``stack`` (numpy, or an array-API namespace: torch and JAX through :mod:`jointlimits._diff`)."""
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return xp.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def normalize(q: ArrayLike, eps: float = 0.0) -> Array:
    """q / |q|; zero quaternions become the identity instead of NaN."""
    q = _f(q)
    if _f64(q) and q.shape[-1:] == (4,) and eps < _SAFE_LO:
        out = np.empty(q.shape)
        if _core.q_normalize(_c(q), out):
            return out
    n = _plain_norm(q, True)
    if _plain_ok(n) and eps < _SAFE_LO:
        return q / n
    # scaled first, so huge (1e200) and tiny (1e-200) quaternions keep their direction
    m = np.max(np.abs(q), axis=-1, keepdims=True)
    s = q / np.where(m > 0, m, 1.0)
    ns = np.linalg.norm(s, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):  # only compared with eps: inf is fine
        n = m * ns
    out = s / np.where(n > eps, ns, 1.0)
    zero = (n <= eps)[..., 0]
    if np.any(zero):
        out = np.where(zero[..., None], identity((), q.dtype), out)
    return out

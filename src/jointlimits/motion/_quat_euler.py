"""Euler angles of :mod:`.quat` (used from there): intrinsic three-axis orders, a BVH joint's channel
axes, and the unwrapping of angle tracks."""

from __future__ import annotations

import warnings
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._native import _core
from ..errors import QuatError
from ._quat_base import Array, _c, _f, _f64, mul, normalize

EULER_ORDERS = ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx")
_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def _check_order(order: str) -> str:
    o = order.lower()
    if o not in EULER_ORDERS:
        raise ValueError(f"unknown Euler order {order!r}; expected one of {EULER_ORDERS}")
    return o


def from_euler(angles: ArrayLike, order: str = "xyz", degrees: bool = False) -> Array:
    """Intrinsic Euler angles [..., 3] -> quaternion ``q = R_order[0](a0) R_order[1](a1) R_order[2](a2)``."""
    return from_euler_axes(angles, _check_order(order), degrees)


def from_euler_axes(angles: ArrayLike, axes: str, degrees: bool = False) -> Array:
    """Product ``R_axes[0](a0) R_axes[1](a1) ...`` for any sequence of axes ``[..., len(axes)]``
    (a BVH joint's rotation channels: one to three, repeats allowed)."""
    a = _f(angles)
    if len(axes) == 3 and len(set(axes)) == 3 and _f64(a) and a.shape[-1:] == (3,):
        res = np.empty(a.shape[:-1] + (4,))
        i, j, k = (_AXIS_INDEX[ch] for ch in axes)
        _core.q_from_euler3(_c(a), i, j, k, bool(degrees), res)
        return res
    half = (np.deg2rad(a) if degrees else a) * 0.5
    c, s = np.cos(half), np.sin(half)
    if len(axes) == 3 and len(set(axes)) == 3:
        # closed form of (c1 + s1 e_i)(c2 + s2 e_j)(c3 + s3 e_k); e_i e_j = eps e_k
        i, j, k = (_AXIS_INDEX[ch] for ch in axes)
        eps = 1.0 if (j - i) % 3 == 1 else -1.0
        c1, c2, c3, s1, s2, s3 = c[..., 0], c[..., 1], c[..., 2], s[..., 0], s[..., 1], s[..., 2]
        w, b, cc, d = c1 * c2, c1 * s2, s1 * c2, s1 * s2
        q = np.empty(a.shape[:-1] + (4,), dtype=half.dtype)
        q[..., 0] = w * c3 - eps * d * s3
        q[..., 1 + i] = cc * c3 + eps * b * s3
        q[..., 1 + j] = b * c3 - eps * cc * s3
        q[..., 1 + k] = w * s3 + eps * d * c3
        return q
    out = None
    for n, ch in enumerate(axes):
        qn = np.zeros(a.shape[:-1] + (4,), dtype=half.dtype)
        qn[..., 0] = c[..., n]
        qn[..., 1 + _AXIS_INDEX[ch]] = s[..., n]
        out = qn if out is None else mul(out, qn)
    return cast(Array, out)


def _where(i: int, q: Array) -> str:
    return f" {tuple(int(k) for k in np.unravel_index(i, q.shape[:-1]))}" if q.ndim > 1 else ""


def to_euler(q: ArrayLike, order: str = "xyz", degrees: bool = False) -> Array:
    """Quaternion -> intrinsic Euler angles [..., 3] (inverse of from_euler; middle angle in
    [-pi/2, pi/2], others in (-pi, pi])."""
    from scipy.spatial.transform import Rotation

    o = _check_order(order)
    q = _f(q)
    if _f64(q) and q.shape[-1:] == (4,):
        out = np.empty(q.shape[:-1] + (3,))
        i, j, k = (_AXIS_INDEX[ch] for ch in o)
        if _core.q_to_euler(_c(q), i, j, k, 180.0 / np.pi if degrees else 1.0, out) == out.size // 3:
            return out
        # a bad row (reported below) or a norm outside the safe range (the scaled path)
    flat = q.reshape(-1, 4)
    if flat.shape[0] == 0:
        return np.zeros(q.shape[:-1] + (3,), dtype=q.dtype)
    bad = ~np.isfinite(flat).all(axis=-1)
    if bad.any():
        i = int(np.argmax(bad))
        raise QuatError(f"to_euler: quaternion{_where(i, q)} is not finite: {flat[i].tolist()}")
    zero = np.max(np.abs(flat), axis=-1) == 0.0
    if zero.any():
        i = int(np.argmax(zero))
        raise QuatError(f"to_euler: quaternion{_where(i, q)} has zero length")
    flat = normalize(flat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gimbal lock: scipy still returns a valid triple
        e = Rotation.from_quat(flat[:, [1, 2, 3, 0]]).as_euler(o.upper(), degrees=degrees)
    return e.reshape(q.shape[:-1] + (3,)).astype(q.dtype, copy=False)


def to_euler_axes(
    q: Array,
    axes: str,
    hint: Array | None = None,
    exact: NDArray[np.bool_] | None = None,
    carry: dict[str, Any] | None = None,
) -> Array:
    """Angles (degrees, ``[F, len(axes)]``) whose product (:func:`from_euler_axes`) is q ``[F, 4]``.

    Rows where ``exact`` is set are the ``hint`` rows themselves. Elsewhere the Euler twin nearest
    the hint (modulo 360) is chosen (the principal one without a hint) and runs of such rows are
    unwrapped so that they continue from the row before without 360-degree jumps.

    ``carry`` (from :func:`euler_carry`, updated here) continues the unwrapping from the previous
    call: consecutive blocks of rows then give exactly the angles of one call on all of them.
    """
    n = len(axes)
    F = q.shape[0]
    if n == 1:
        a = _AXIS_INDEX[axes]
        cands = [np.rad2deg(2.0 * np.arctan2(q[:, 1 + a], q[:, 0]))[:, None]]
    else:
        full = axes if n == 3 else axes + next(c for c in "xyz" if c not in axes)
        from scipy.spatial.transform import Rotation

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            e = Rotation.from_quat(q[:, [1, 2, 3, 0]]).as_euler(full.upper(), degrees=True)[:, :n]
        cands = [e]
        if n == 3:
            mid = 180.0 - e[:, 1] if full[0] != full[2] else -e[:, 1]  # Tait-Bryan / proper twin
            cands.append(np.stack([e[:, 0] + 180.0, mid, e[:, 2] + 180.0], -1))
    out = cands[0]
    if hint is not None and len(cands) > 1:

        def dist(c: Array) -> Array:
            return np.sum(((c - hint + 180.0) % 360.0 - 180.0) ** 2, axis=-1)

        out = np.where((dist(cands[1]) < dist(cands[0]))[:, None], cands[1], cands[0])
    if exact is None:
        exact = np.zeros(F, bool)
    # unwrapped is continuous: without a hint the angles themselves, with one their difference from
    # the original angles of the same frame (the file's own wraps at +-180 are kept, a new
    # rotation that turns further than the original is followed past them)
    ref = np.zeros_like(out) if hint is None else hint
    d = out - ref
    if hint is not None:
        d -= 360.0 * np.round(d / 360.0)
        d = np.where(exact[:, None], 0.0, d)
    if F > 1 or carry is not None:
        corr = np.zeros_like(d)
        corr[1:] = -360.0 * np.round(np.diff(d, axis=0) / 360.0)
        if carry is not None and carry["prev"] is not None and F:
            corr[0] = -360.0 * np.round((d[0] - carry["prev"]) / 360.0)
        corr[exact] = 0.0
        cs = np.cumsum(corr, axis=0)
        if carry is not None:
            cs = cs + carry["cs"]  # multiples of 360: the same sums in any order
        last = np.maximum.accumulate(np.where(exact, np.arange(F), -1))
        base = np.where((last >= 0)[:, None], cs[np.maximum(last, 0)], 0.0 if carry is None else carry["base"])
        if carry is not None and F:
            carry.update(prev=d[-1].copy(), cs=cs[-1].copy(), base=base[-1].copy())
        d = np.where(exact[:, None], d, d + cs - base)
    out = ref + d
    return out if hint is None else np.where(exact[:, None], hint, out)


def euler_carry(n: int) -> dict[str, Any]:
    """The unwrapping state of :func:`to_euler_axes` before a first row, for ``n`` angles."""
    return {"prev": None, "cs": np.zeros(n), "base": np.zeros(n)}


def euler_carry_exact(carry: dict[str, Any]) -> None:
    """Update ``carry`` past a block whose rows are all exact (:func:`to_euler_axes` not called)."""
    carry.update(prev=np.zeros_like(carry["cs"]), base=carry["cs"].copy())

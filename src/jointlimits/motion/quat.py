"""Batched quaternion algebra on ``[..., 4]`` arrays ordered (w, x, y, z).

Every function broadcasts over leading dimensions and returns new arrays. Rotations follow the
Hamilton product (``mul(a, b)`` applies ``b`` first, then ``a``). Vectors are ``[..., 3]``.
Unless stated otherwise inputs are assumed to be unit quaternions.

The module is written in three files, all used from here: :mod:`._quat_euler` (the Euler
conversions ``from_euler``, ``to_euler``, ``from_euler_axes``, ``to_euler_axes``, ``euler_carry``),
:mod:`._quat_base` (``identity``, ``mul`` and ``normalize``, which they build on) and this one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._native import _core
from ._quat_base import Array, _c, _f, _f64, _norm, _unit, identity, mul, normalize
from ._quat_euler import (
    EULER_ORDERS,
    euler_carry,
    euler_carry_exact,
    from_euler,
    from_euler_axes,
    to_euler,
    to_euler_axes,
)

__all__ = [
    "identity",
    "mul",
    "inv",
    "inv_mul",
    "mul_inv",
    "mul_vec",
    "inv_mul_vec",
    "normalize",
    "abs",
    "dot",
    "angle",
    "unroll",
    "to_scaled_angle_axis",
    "from_scaled_angle_axis",
    "log",
    "exp",
    "from_angle_axis",
    "from_euler",
    "to_euler",
    "from_euler_axes",
    "to_euler_axes",
    "euler_carry",
    "euler_carry_exact",
    "to_matrix",
    "from_matrix",
    "between",
    "swing_twist",
    "slerp",
    "average",
    "EULER_ORDERS",
]


def inv(q: ArrayLike) -> Array:
    """Inverse of a unit quaternion: the conjugate (w, -x, -y, -z)."""
    q = _f(q)
    if _f64(q) and q.shape[-1:] == (4,):
        out = np.empty(q.shape)
        _core.q_inv(_c(q), out)
        return out
    return q * np.array([1.0, -1.0, -1.0, -1.0], dtype=q.dtype)


def inv_mul(a: ArrayLike, b: ArrayLike) -> Array:
    """inv(a)*b: b expressed relative to a."""
    return mul(inv(a), b)


def mul_inv(a: ArrayLike, b: ArrayLike) -> Array:
    """a*inv(b)."""
    return mul(a, inv(b))


def mul_vec(q: ArrayLike, v: ArrayLike) -> Array:
    """Rotate vectors v by q: q v q^-1 = v + 2w(u x v) + 2u x (u x v)."""
    q, v = _f(q), _f(v)
    if _f64(q, v) and q.shape[-1:] == (4,) and v.shape[-1:] == (3,) and q.shape[:-1] == v.shape[:-1]:
        out = np.empty(v.shape)
        _core.q_mul_vec(_c(q), _c(v), out)
        return out
    u = q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + q[..., :1] * t + np.cross(u, t)


def inv_mul_vec(q: ArrayLike, v: ArrayLike) -> Array:
    """Rotate vectors v by inv(q)."""
    return mul_vec(inv(q), v)


def abs(q: ArrayLike) -> Array:  # noqa: A001 - the field's name for the w >= 0 cover
    """Pick the cover with w >= 0 (q and -q are the same rotation)."""
    q = _f(q)
    return np.where(q[..., :1] < 0.0, -q, q)


def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """4D dot product of quaternions."""
    return np.sum(_f(a) * _f(b), axis=-1)


def angle(a: ArrayLike, b: ArrayLike | None = None) -> Array:
    """Rotation angle of a (or between a and b) in radians, in [0, pi], cover independent."""
    q = _f(a) if b is None else inv_mul(a, b)
    return 2.0 * np.arctan2(_norm(q[..., 1:]), np.abs(q[..., 0]))


def _unroll_flat(q: Array) -> Array:
    """Unroll q of shape [T, N, 4] along T (reference rules: abs first, flip if dot < 0)."""
    out = q.copy()
    if q.shape[0] == 0:
        return out
    d = np.sum(q[1:] * q[:-1], axis=-1)  # [T-1, N]
    T = q.shape[0]
    # sign of frame i: s_0 from abs; s_i = s_{i-1}*sign(d_i) but resets to +1 where d_i == 0.
    s0 = np.where(q[0, :, 0] < 0.0, -1.0, 1.0)
    neg = np.concatenate([(s0 < 0)[None].astype(np.int64), (d < 0).astype(np.int64)], axis=0)
    reset = np.concatenate([np.ones((1,) + d.shape[1:], bool), d == 0], axis=0)
    cs = np.cumsum(neg, axis=0)
    idx = np.where(reset, np.arange(T)[:, None], 0)
    last = np.maximum.accumulate(idx, axis=0)
    before = np.take_along_axis(cs, last, axis=0) - np.take_along_axis(neg, last, axis=0)
    flips = cs - before
    sign = np.where(flips % 2 == 1, -1.0, 1.0)
    return out * sign[..., None]


def unroll(q: ArrayLike, axis: int = 0, ranges: Sequence[tuple[int, int]] | None = None) -> Array:
    """Make a sequence hemisphere-continuous along ``axis``: abs() the first element, then flip
    each element whose dot with the previous (unrolled) one is negative.

    With ``ranges`` ([(start, stop), ...] along ``axis``) each range restarts independently and
    elements outside every range are left untouched.
    """
    q = _f(q)
    if q.ndim < 2:
        raise ValueError("unroll needs at least one sequence axis besides the last")
    ax = axis % (q.ndim - 1)
    moved = np.moveaxis(q, ax, 0)
    shape = moved.shape
    flat = moved.reshape(shape[0], -1, 4)
    if ranges is None:
        res = _unroll_flat(flat)
    else:
        res = flat.copy()
        for start, stop in ranges:
            if stop > start:
                res[start:stop] = _unroll_flat(flat[start:stop])
    return np.moveaxis(res.reshape(shape), 0, ax)


def to_scaled_angle_axis(q: ArrayLike, eps: float = 1e-8) -> Array:
    """Scaled angle axis angle*axis = 2 log(q); no cover is chosen (w < 0 gives angles > pi)."""
    q = _f(q)
    if _f64(q) and q.shape[-1:] == (4,):
        out = np.empty(q.shape[:-1] + (3,))
        if _core.q_log2(_c(q), float(eps), 1.0, out):
            return out
    v = q[..., 1:]
    n = _norm(v, keepdims=True)
    half = np.arctan2(n, q[..., :1])
    scale = np.where(n > eps, 2.0 * half / np.where(n > eps, n, 1.0), 2.0)
    return v * scale


def from_scaled_angle_axis(v: ArrayLike) -> Array:
    """Unit quaternion exp(v/2) of a scaled angle axis vector v = angle*axis."""
    v = _f(v)
    if _f64(v) and v.shape[-1:] == (3,):
        out = np.empty(v.shape[:-1] + (4,))
        if _core.q_exp2(_c(v), 1.0, out):
            return out
    h = 0.5 * v
    a = _norm(h, keepdims=True)
    # sin(a)/a; sinc's own pi*(a/pi) drifts from a for huge angles, breaking the unit length
    big = a >= 1.0
    s = np.where(big, np.sin(a) / np.where(big, a, 1.0), np.sinc(a / np.pi))
    return np.concatenate([np.cos(a), h * s], axis=-1)


def log(q: ArrayLike, eps: float = 1e-8) -> Array:
    """Quaternion logarithm (half-angle * axis) of a unit quaternion."""
    q = _f(q)
    if _f64(q) and q.shape[-1:] == (4,):
        out = np.empty(q.shape[:-1] + (3,))
        if _core.q_log2(_c(q), float(eps), 0.5, out):
            return out
    return 0.5 * to_scaled_angle_axis(q, eps)


def exp(v: ArrayLike) -> Array:
    """Quaternion exponential of a pure-vector v (half-angle * axis)."""
    v = _f(v)
    if _f64(v) and v.shape[-1:] == (3,):
        out = np.empty(v.shape[:-1] + (4,))
        if _core.q_exp2(_c(v), 2.0, out):
            return out
    return from_scaled_angle_axis(2.0 * v)


def from_angle_axis(angle_: ArrayLike, axis: ArrayLike) -> Array:
    """Rotation by angle (radians) about a unit axis."""
    a = 0.5 * _f(angle_)[..., None]
    return np.concatenate([np.cos(a), np.sin(a) * _f(axis)], axis=-1)


def to_matrix(q: ArrayLike) -> Array:
    """Rotation matrices [..., 3, 3] (columns are the rotated basis vectors)."""
    q = _f(q)
    if _f64(q) and q.shape[-1:] == (4,):
        out = np.empty(q.shape[:-1] + (3, 3))
        _core.q_to_matrix(_c(q), out)
        return out
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    m = np.stack(
        [
            1 - 2 * (yy + zz),
            2 * (xy - wz),
            2 * (xz + wy),
            2 * (xy + wz),
            1 - 2 * (xx + zz),
            2 * (yz - wx),
            2 * (xz - wy),
            2 * (yz + wx),
            1 - 2 * (xx + yy),
        ],
        axis=-1,
    )
    return m.reshape(q.shape[:-1] + (3, 3))


def from_matrix(m: ArrayLike) -> Array:
    """Rotation matrices [..., 3, 3] -> unit quaternions with w >= 0 (Shepperd's method)."""
    m = _f(m)
    if _f64(m) and m.shape[-2:] == (3, 3):
        out = np.empty(m.shape[:-2] + (4,))
        if _core.q_from_matrix(_c(m), out):
            return out
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    tr = m00 + m11 + m22
    cand = np.stack(
        [
            np.stack(
                [1 + tr, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1
            ),
            np.stack(
                [
                    m[..., 2, 1] - m[..., 1, 2],
                    1 + m00 - m11 - m22,
                    m[..., 0, 1] + m[..., 1, 0],
                    m[..., 0, 2] + m[..., 2, 0],
                ],
                -1,
            ),
            np.stack(
                [
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 0, 1] + m[..., 1, 0],
                    1 - m00 + m11 - m22,
                    m[..., 1, 2] + m[..., 2, 1],
                ],
                -1,
            ),
            np.stack(
                [
                    m[..., 1, 0] - m[..., 0, 1],
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 1, 2] + m[..., 2, 1],
                    1 - m00 - m11 + m22,
                ],
                -1,
            ),
        ],
        axis=-2,
    )
    pick = np.argmax(np.stack([tr, m00, m11, m22], -1), axis=-1)
    q = np.take_along_axis(cand, pick[..., None, None], axis=-2)[..., 0, :]
    return abs(normalize(q))


def between(u: ArrayLike, v: ArrayLike) -> Array:
    """The simple (shortest-arc) rotation taking direction u to direction v; for antiparallel
    vectors a half turn about an axis perpendicular to u (the reference returns zeros there)."""
    u, v = _f(u), _f(v)
    # unit directions first (scaled, so 1e-200 and 1e200 long vectors work); a zero vector has
    # no direction: the identity
    u, zu = _unit(u)
    v, zv = _unit(v)
    zero = zu | zv
    # w = 1 + u.v written as |u + v|^2 / 2: no cancellation near antiparallel
    c = np.cross(u, v)
    h = u + v
    w = 0.5 * np.sum(h * h, -1)
    q = np.concatenate([w[..., None], c], axis=-1)
    n = np.linalg.norm(q, axis=-1)
    bad = (n <= 1e-12) & ~np.broadcast_to(zero, n.shape)
    if np.any(bad):
        # antiparallel: rotate pi about the axis of u's smallest component crossed with u
        ub = np.broadcast_to(u, np.broadcast_shapes(u.shape, v.shape))
        k = np.argmin(np.abs(ub), axis=-1)
        e = np.zeros_like(ub)
        np.put_along_axis(e, k[..., None], 1.0, axis=-1)
        perp = np.cross(ub, e)
        perp = perp / np.maximum(np.linalg.norm(perp, axis=-1, keepdims=True), 1e-300)
        half = np.concatenate([np.zeros(perp.shape[:-1] + (1,), perp.dtype), perp], -1)
        q = np.where(bad[..., None], half, q)
        n = np.where(bad, 1.0, n)
    out = q / np.where(n > 0, n, 1.0)[..., None]
    if np.any(zero):
        out = np.where(np.broadcast_to(zero, n.shape)[..., None], identity((), out.dtype), out)
    return out


def swing_twist(q: ArrayLike, axis: ArrayLike) -> tuple[Array, Array]:
    """Decompose q = swing * twist where twist rotates about ``axis`` and swing moves ``axis``.

    twist = normalize(w, (v.axis) axis); when that is zero (a half turn about an axis orthogonal
    to ``axis``) the twist is the identity and the swing is q.
    """
    q, axis = _f(q), _f(axis)
    proj = np.sum(q[..., 1:] * axis, axis=-1, keepdims=True) * axis
    t = np.concatenate([np.broadcast_to(q[..., :1], proj.shape[:-1] + (1,)), proj], axis=-1)
    twist = normalize(t, eps=1e-12)
    swing = mul_inv(q, twist)
    return swing, twist


def slerp(a: ArrayLike, b: ArrayLike, t: ArrayLike) -> Array:
    """Shortest-path spherical interpolation from a (t=0) to b (t=1)."""
    a, b = _f(a), _f(b)
    t = _f(t)
    if _f64(a, b, t) and a.shape == b.shape and a.shape[-1:] == (4,) and t.shape in ((), a.shape[:-1]):
        out = np.empty(a.shape)
        if _core.q_slerp(_c(a), _c(b), _c(t).reshape(-1), out):
            return out
    d = inv_mul(a, b)
    d = abs(d)
    return mul(
        a, from_scaled_angle_axis(to_scaled_angle_axis(d) * t[..., None] if t.ndim else to_scaled_angle_axis(d) * t)
    )


def average(q: ArrayLike, weights: ArrayLike | None = None, axis: int = 0) -> Array:
    """Weighted mean rotation: principal eigenvector of sum w q q^T along ``axis`` (cover free)."""
    q = _f(q)
    q = np.moveaxis(q, axis, 0)
    w = np.ones(q.shape[0]) if weights is None else _f(weights)
    acc = np.einsum("n,n...i,n...j->...ij", w, q, q)
    _, vecs = np.linalg.eigh(acc)
    return abs(vecs[..., :, -1])

"""Batched quaternion algebra on ``[..., 4]`` arrays ordered (w, x, y, z).

Every function broadcasts over leading dimensions and returns new arrays. Rotations follow the
Hamilton product (``mul(a, b)`` applies ``b`` first, then ``a``). Vectors are ``[..., 3]``.
Unless stated otherwise inputs are assumed to be unit quaternions.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._native import _core
from ..errors import QuatError

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
    "to_matrix",
    "from_matrix",
    "between",
    "swing_twist",
    "slerp",
    "average",
    "EULER_ORDERS",
]

# A float array of the input's precision (float64 from anything not floating). NumPy's types cannot
# tie the result's dtype to an ArrayLike argument's, so it is left open: callers holding float64 keep it.
Array = NDArray[Any]
EULER_ORDERS = ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx")
_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


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
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


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


def _check_order(order: str) -> str:
    o = order.lower()
    if o not in EULER_ORDERS:
        raise ValueError(f"unknown Euler order {order!r}; expected one of {EULER_ORDERS}")
    return o


def from_euler(angles: ArrayLike, order: str = "xyz", degrees: bool = False) -> Array:
    """Intrinsic Euler angles [..., 3] -> quaternion q = R_order[0](a0) R_order[1](a1) R_order[2](a2)."""
    return from_euler_axes(angles, _check_order(order), degrees)


def from_euler_axes(angles: ArrayLike, axes: str, degrees: bool = False) -> Array:
    """Product R_axes[0](a0) R_axes[1](a1) ... for any sequence of axes ``[..., len(axes)]``
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

"""The differentiable half, written once against the array API standard (``array-api-compat``):
PyTorch and JAX run the same functions.

A projected rotation is rebuilt from the input: relative to the reference, on the anchor's cover,
to limit space, then the anchor's projected point plus its Jacobian times the (zero-valued)
difference between the point and its stopped copy, and back. Values are the anchor's; first
derivatives are the projection's. Rotations that do not move come back as the input itself.
Every square root and division is guarded, so values and gradients stay finite at the identity,
at antipodal covers and exactly on the boundary.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..motion._quat_base import mul_xp

__all__ = ["Backend", "project_graph", "violation_graph", "to_quaternion", "reduce"]

TINY = 1e-30


class Backend:
    """What the shared code needs beyond the array API: the namespace and a gradient stop."""

    def __init__(self, xp: Any, stop: Callable[[Any], Any]):
        self.xp = xp
        self.stop = stop


def _safe_norm(xp: Any, v: Any) -> Any:
    """|v| over the last axis with a finite gradient at 0 (where it is 0)."""
    n2 = xp.sum(v * v, axis=-1)
    pos = n2 > TINY
    return xp.where(pos, xp.sqrt(xp.where(pos, n2, 1.0)), 0.0 * n2)


def qmul(xp: Any, a: Any, b: Any) -> Any:
    return mul_xp(xp, a, b)


def conj(xp: Any, q: Any) -> Any:
    return xp.concat([q[..., :1], -q[..., 1:]], axis=-1)


def _unit(xp: Any, q: Any) -> Any:
    n = _safe_norm(xp, q)
    return q / xp.where(n > 0, n, 1.0)[..., None]


def log2(xp: Any, r: Any) -> Any:
    """2 log of unit quaternions with w >= 0 (scaled angle axis), as the core's ``lim_log2``."""
    n = _safe_norm(xp, r[..., 1:])
    big = n > 1e-8
    k = xp.where(big, 2.0 * xp.atan2(n, r[..., 0]) / xp.where(big, n, 1.0), 2.0 + 0.0 * n)
    return r[..., 1:] * k[..., None]


def exp2(xp: Any, v: Any) -> Any:
    """exp(v / 2) of limit-space points."""
    a = 0.5 * _safe_norm(xp, v)
    big = a > 1e-8
    k = xp.where(big, xp.sin(a) / xp.where(big, a, 1.0), 1.0 - a * a / 6.0)
    return xp.concat([xp.cos(a)[..., None], 0.5 * v * k[..., None]], axis=-1)


def _long(xp: Any, v: Any) -> Any:
    n = _safe_norm(xp, v)
    ok = n > 1e-12
    return v * xp.where(ok, 1.0 - 2.0 * math.pi / xp.where(ok, n, 1.0), 0.0 * n)[..., None]


def _matvec(m: Any, v: Any) -> Any:
    return m[..., 0] * v[..., :1] + m[..., 1] * v[..., 1:2] + m[..., 2] * v[..., 2:3]


def project_graph(b: Backend, q: Any, ref: Any, axis: Any, mode: Any, anchor: tuple[Any, ...]) -> Any:
    """Projected rotations ``[N, J, 4]`` of unit quaternions ``q`` ``[N, J, 4]``; ``ref`` ``[J, 4]``,
    ``axis`` ``[J, 3]``, ``mode`` ``[J]`` (2: swing-twist) and the anchor arrays (see
    :data:`.anchor.ANCHOR_FIELDS`), all in q's dtype and device."""
    xp, stop = b.xp, b.stop
    moved, cover, h0, jac, tshift, tproj, tgrad = anchor
    r = qmul(xp, conj(xp, ref)[None], q)
    r = xp.where(r[..., :1] < 0.0, -r, r)
    # swing-twist parts (used where mode == 2): twist = normalize(w, (x.a) a), swing = r conj(twist)
    a = axis[None]
    s = xp.sum(r[..., 1:] * a, axis=-1)
    tw = xp.concat([r[..., :1], s[..., None] * a], axis=-1)
    tn = _safe_norm(xp, tw)
    tok = tn > 1e-12
    one = xp.zeros_like(tw) + xp.asarray([1.0, 0.0, 0.0, 0.0], dtype=tw.dtype, device=_device(tw))
    tw = xp.where(tok[..., None], tw / xp.where(tok, tn, 1.0)[..., None], one)
    sw = qmul(xp, r, conj(xp, tw))
    sw = xp.where(sw[..., :1] < 0.0, -sw, sw)
    tw = xp.where(tw[..., :1] < 0.0, -tw, tw)
    st = (mode == 2)[None, :]
    v = log2(xp, xp.where(st[..., None], sw, r))
    v = xp.where(cover[..., None] > 0.5, _long(xp, v), v)
    d = v - stop(v)
    h = h0 + _matvec(jac, d)
    # twist angle 2 atan2(|s|, w) signed by s, on the anchor's cover
    ts = xp.sum(tw[..., 1:] * a, axis=-1)
    t = 2.0 * xp.atan2(ts, tw[..., 0]) + tshift
    p = tproj + tgrad * (t - stop(t))
    half = 0.5 * p
    twq = xp.concat([xp.cos(half)[..., None], xp.sin(half)[..., None] * a], axis=-1)
    part = exp2(xp, h)
    part = xp.where(st[..., None], qmul(xp, part, twq), part)
    o = qmul(xp, ref[None], part)
    o = xp.where(xp.sum(o * q, axis=-1)[..., None] < 0.0, -o, o)  # the caller's cover
    return xp.where(moved[..., None] > 0.5, o, q)


def _device(x: Any) -> Any:
    from array_api_compat import device

    return device(x)


def angle_between(xp: Any, a: Any, b: Any) -> Any:
    """Angle in radians between unit quaternions (cover independent), gradient-safe at 0."""
    d = qmul(xp, conj(xp, a), b)
    return 2.0 * xp.atan2(_safe_norm(xp, d[..., 1:]), xp.abs(d[..., 0]))


def violation_graph(b: Backend, q: Any, ref: Any, axis: Any, mode: Any, anchor: tuple[Any, ...]) -> Any:
    """Radians ``[N, J]`` between each rotation and its projection (0 inside, with a 0 gradient)."""
    xp = b.xp
    o = project_graph(b, q, ref, axis, mode, anchor)
    moved = anchor[0] > 0.5
    # inside, o is q itself: the angle is 0 and so is its gradient; a recomposed rotation within
    # rounding of the input (a swing-twist limit's inside) keeps its value and gets no gradient
    ang = angle_between(xp, q, xp.where(moved[..., None], o, q))
    eps = 1e-12 if q.dtype == xp.float64 else 1e-6
    real = moved & (b.stop(ang) > eps)
    return xp.where(real, ang, xp.where(moved, b.stop(ang), 0.0 * ang))


# --------------------------------------------------------------------------- input formats


def to_quaternion(xp: Any, x: Any, fmt: str) -> Any:
    """Unit quaternions ``[..., 4]`` (w, x, y, z) of rotations given as ``"quat"`` ``[..., 4]``
    (normalised), ``"axis-angle"`` ``[..., 3]`` or ``"6d"`` ``[..., 6]`` (the first two columns of
    the rotation matrix, Gram-Schmidt orthonormalised)."""
    if fmt == "quat":
        return _unit(xp, x)
    if fmt == "axis-angle":
        th = _safe_norm(xp, x)
        big = th > 1e-6
        k = xp.where(big, xp.sin(0.5 * th) / xp.where(big, th, 1.0), 0.5 - th * th / 48.0)
        return xp.concat([xp.cos(0.5 * th)[..., None], x * k[..., None]], axis=-1)
    if fmt == "6d":
        return _matrix_to_quat(xp, _six_to_matrix(xp, x))
    raise ValueError(f"unknown rotation format {fmt!r}; expected 'quat', 'axis-angle' or '6d'")


def _cross(xp: Any, a: Any, b: Any) -> Any:
    return xp.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        axis=-1,
    )


def _six_to_matrix(xp: Any, x: Any) -> Any:
    a1, a2 = x[..., :3], x[..., 3:]
    b1 = _unit(xp, a1)
    b2 = _unit(xp, a2 - xp.sum(b1 * a2, axis=-1)[..., None] * b1)
    b3 = _cross(xp, b1, b2)
    return xp.stack([b1, b2, b3], axis=-1)  # columns


def _matrix_to_quat(xp: Any, m: Any) -> Any:
    """Quaternion of rotation matrices ``[..., 3, 3]``: each of the four candidates (one per
    largest diagonal term), the best-conditioned picked; square roots guarded."""
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    tr = [1.0 + m00 + m11 + m22, 1.0 + m00 - m11 - m22, 1.0 - m00 + m11 - m22, 1.0 - m00 - m11 + m22]
    cands = []
    for i, t in enumerate(tr):
        sq = xp.sqrt(xp.where(t > 1e-12, t, 1e-12))
        s = 0.5 / sq
        if i == 0:
            c = [
                0.5 * sq,
                (m[..., 2, 1] - m[..., 1, 2]) * s,
                (m[..., 0, 2] - m[..., 2, 0]) * s,
                (m[..., 1, 0] - m[..., 0, 1]) * s,
            ]
        elif i == 1:
            c = [
                (m[..., 2, 1] - m[..., 1, 2]) * s,
                0.5 * sq,
                (m[..., 0, 1] + m[..., 1, 0]) * s,
                (m[..., 0, 2] + m[..., 2, 0]) * s,
            ]
        elif i == 2:
            c = [
                (m[..., 0, 2] - m[..., 2, 0]) * s,
                (m[..., 0, 1] + m[..., 1, 0]) * s,
                0.5 * sq,
                (m[..., 1, 2] + m[..., 2, 1]) * s,
            ]
        else:
            c = [
                (m[..., 1, 0] - m[..., 0, 1]) * s,
                (m[..., 0, 2] + m[..., 2, 0]) * s,
                (m[..., 1, 2] + m[..., 2, 1]) * s,
                0.5 * sq,
            ]
        cands.append(xp.stack(c, axis=-1))
    best = cands[0]
    bt = tr[0]
    for t, c in zip(tr[1:], cands[1:], strict=True):
        use = t > bt
        best = xp.where(use[..., None], c, best)
        bt = xp.where(use, t, bt)
    best = xp.where(best[..., :1] < 0.0, -best, best)
    return _unit(xp, best)


def reduce(xp: Any, x: Any, reduction: str) -> Any:
    """``"mean"``, ``"sum"`` or ``"none"`` of a loss ``[..., J]``."""
    if reduction == "mean":
        return xp.mean(x)
    if reduction == "sum":
        return xp.sum(x)
    if reduction == "none":
        return x
    raise ValueError(f"unknown reduction {reduction!r}; expected 'mean', 'sum' or 'none'")

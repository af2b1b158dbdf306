"""A joint limit's rows ``s_k(q)`` (``<= 0`` inside, radians in limit space) as functions of local
rotations, and their tangent gradients by central differences (numpy only: no mink needed)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._native import _core
from ...errors import JointLimitsError
from ...limits.coupled import CoupledLimit
from ...limits.ellipsoid import Ellipsoid
from ...limits.implicit import Implicit
from ...limits.joint import FittedLimit, to_limit_space
from ...limits.kdop import SlabShape
from ...limits.shape import Shape
from ...motion import quat

Array = NDArray[np.float64]

EPS = 1e-6  # central-difference step of the tangent gradients (radians)


class IntegrationError(JointLimitsError, ValueError):
    """A limit or model that the integration cannot use (no matching body, unsupported limit)."""


# --------------------------------------------------------------------------- rows per limit


def _slab_rows(shape: SlabShape) -> Callable[[Array], Array]:
    pos, rot, ax, mins, maxs = shape.slabs()
    m = np.asarray(ax, np.float64) @ np.asarray(rot, np.float64).T  # slab directions in limit space
    off = m @ np.asarray(pos, np.float64)
    hi_ok, lo_ok = np.isfinite(maxs), np.isfinite(mins)
    mh, bh = m[hi_ok], np.asarray(maxs)[hi_ok] + off[hi_ok]
    ml, bl = m[lo_ok], np.asarray(mins)[lo_ok] + off[lo_ok]
    M = np.vstack([mh, -ml])
    b = np.concatenate([bh, -bl])
    n = np.linalg.norm(M, axis=1)
    M, b = M / n[:, None], b / n

    def rows(v: Array) -> Array:
        return v @ M.T - b

    return rows


def _ellipsoid_rows(shape: Ellipsoid) -> Callable[[Array], Array]:
    keep = np.asarray(shape.scale) > 1e-12  # a swing section's ellipse has a zero third semi-axis
    R = np.asarray(shape.rotation, np.float64)[:, keep]
    c = np.asarray(shape.position, np.float64)
    sc = np.asarray(shape.scale, np.float64)[keep]
    smin = float(sc.min())

    def rows(v: Array) -> Array:
        u = ((v - c) @ R) / sc
        nu = np.linalg.norm(u, axis=1)
        ng = np.linalg.norm(u / sc, axis=1)
        if nu[0] >= 0.5:  # first-order distance to the surface |u| = 1 (unit gradient on it)
            return ((nu - 1.0) * nu / np.maximum(ng, 1e-300))[:, None]
        # deep inside: a smooth stand-in (|u| has a kink at the centre), at least half smin away
        return (0.5 * smin * (nu * nu - 1.0))[:, None]

    return rows


def _field_rows(
    field_fn: Callable[[Array], Array], project: Callable[[Array], Array], threshold: float
) -> Callable[[Array], Array]:
    """An implicit field's first-order distance ``(threshold - F) / |grad F|`` near and inside the
    surface; far outside (a vanishing field) the distance to the projection instead."""

    def rows(v: Array) -> Array:
        fv = field_fn(v)
        F, g = fv[:, 0], np.linalg.norm(fv[:, 1:], axis=1)
        if F[0] >= 0.5 * threshold and g[0] > 1e-9:
            return ((threshold - F) / np.maximum(g, 1e-12))[:, None]
        return np.linalg.norm(v - project(v), axis=1)[:, None]

    return rows


def _curvature(shape: Any) -> float:
    """An upper estimate of the largest curvature (1/radians) of a shape's surface in limit space,
    for the step bound of :class:`FittedLimits` (the log map bends even flat faces a little)."""
    if isinstance(shape, Ellipsoid):
        sc = np.asarray(shape.scale, np.float64)
        sc = sc[sc > 1e-12]
        return float(sc.max() / sc.min() ** 2)
    if isinstance(shape, Implicit):
        return 1.0 / float(shape.cell)
    if isinstance(shape, CoupledLimit):
        return 1.0 / float(shape.fcell or shape.base_shape.cell)
    return 1.0 / np.pi


def _limit_curvature(limit: Any) -> float:
    if isinstance(limit, CoupledLimit):
        return _curvature(limit)
    if limit.shape is None:
        return max(_curvature(limit.swing), 1.0 / np.pi)
    return _curvature(limit.shape)


def _shape_rows(shape: Shape) -> Callable[[Array], Array]:
    if isinstance(shape, SlabShape):
        return _slab_rows(shape)
    if isinstance(shape, Ellipsoid):
        return _ellipsoid_rows(shape)
    if isinstance(shape, Implicit):
        return _field_rows(lambda v: shape.value(v).reshape(-1, 4), shape.project, shape.threshold)
    raise IntegrationError(f"no mink rows for a {getattr(shape, 'kind', type(shape).__name__)!r} shape")


@dataclass
class _Joint:
    """One limited joint: its MJCF body, parent body, dofs, and its rows function of local
    rotations ``[N, 4]`` (and the parent's local rotation for a coupled child)."""

    name: str
    body: int
    parent_body: int
    dofs: NDArray[np.int64]
    rows: Callable[[Array, Array | None], Array]
    coupled_parent: int | None = None  # the body whose local rotation conditions the limit
    index: int = 0  # the joint's index in the limits' skeleton
    step: float = np.inf  # the largest tangent step per QP solve near the limit (radians)
    safe_step: float = np.inf  # the step bound from the limit's curvature and the margin


def _limit_rows(limit: Any) -> Callable[[Array, Array | None], Array]:
    """Rows ``[N, K]`` (``<= 0`` inside) of local rotations ``[N, 4]`` for one joint's limit."""
    if isinstance(limit, CoupledLimit):
        base = limit.base
        s = limit.frame
        threshold = float(s.threshold)

        def coupled(q: Array, parent: Array | None) -> Array:
            n = len(q)
            ids, ws = limit.weights(np.repeat(np.asarray(parent).reshape(1, 4), n, axis=0))
            v = to_limit_space(q, base.reference)
            blend = limit._proxy(np.repeat(np.asarray(parent).reshape(1, 4), n, axis=0), n).shape

            def field_fn(p: Array) -> Array:
                out = np.empty((len(p), 4))
                # the blended field of the parent's cell (the limit's own arrays, as its project does)
                _core.implicit_field(
                    np.ascontiguousarray(p),
                    s.position,
                    s.rotation,
                    s.origin,
                    s.cell,
                    limit._F,
                    limit._cmax,
                    ids,
                    ws,
                    out,
                )
                return out

            return _field_rows(field_fn, blend.project, threshold)(v)

        return coupled
    if not isinstance(limit, FittedLimit):
        raise IntegrationError(f"no mink rows for a {getattr(limit, 'kind', type(limit).__name__)!r} limit")
    if limit.shape is not None:
        shape_rows = _shape_rows(limit.shape)
        ref = limit.reference

        def plain(q: Array, parent: Array | None) -> Array:
            return shape_rows(to_limit_space(q, ref))

        return plain
    swing, twist = limit.swing, limit.twist
    assert swing is not None and twist is not None  # a FittedLimit has a shape or both parts
    section = swing if isinstance(swing, SlabShape) else swing.swing_section(limit.twist_axis)
    swing_rows = _shape_rows(section)
    tlo, thi = twist.twist_interval(limit.twist_axis)
    axis = limit.twist_axis

    def st(q: Array, parent: Array | None) -> Array:
        vs, vt = limit.limit_space(q)
        t = vt @ axis
        cols = [swing_rows(vs)]
        if np.isfinite(thi):
            cols.append((t - thi)[:, None])
        if np.isfinite(tlo):
            cols.append((tlo - t)[:, None])
        return np.concatenate(cols, axis=1)

    return st


#: the Hamilton product as a bilinear map: (a b)_i = sum_jk a_j _QL[j, 4 i + k] b_k
_QL = np.stack([quat.mul(np.broadcast_to(np.eye(4)[j], (4, 4)), np.eye(4)).T.reshape(16) for j in range(4)])


def _qmul(a: Array, b: Array) -> Array:
    """Hamilton products of broadcast quaternion arrays (w, x, y, z), without normalising (two
    matrix products: the left factors' product matrices, then the right factors; the small
    batches of the per-solve rows are dominated by per-call overhead)."""
    L = (a @ _QL).reshape(*a.shape[:-1], 4, 4)
    return (L @ b[..., None])[..., 0]


def _perturbations(eps: float = EPS) -> Array:
    """The identity and ``exp(+-eps e_i)`` as quaternions ``[7, 4]`` (right factors)."""
    v = np.zeros((7, 3))
    for i in range(3):
        v[1 + i, i], v[4 + i, i] = eps, -eps
    return quat.from_scaled_angle_axis(v)


def tangent_rows(limit: Any, rotation: Array, parent: Array | None = None) -> tuple[Array, Array]:
    """A joint limit's rows at one local rotation ``[4]``, for any solver: ``(s [K], grad [K, 3])``
    with ``s <= 0`` inside (radians in limit space) and ``grad`` the gradient with respect to a
    rotation vector ``w`` applied on the right, ``q exp(w)`` (the body frame). A step is then
    limited by ``grad @ w <= gain * (-margin - s)``; ``parent`` is a coupled child's parent's
    local rotation. (Rebuilds the rows each call; :class:`FittedLimits` keeps them.)"""
    q = quat.mul(np.asarray(rotation, np.float64).reshape(1, 4), _perturbations())
    S = _limit_rows(limit)(q, None if parent is None else np.asarray(parent, np.float64).reshape(4))
    return S[0], ((S[1:4] - S[4:7]) / (2.0 * EPS)).T

"""The non-differentiable half of the differentiable limits: where each rotation's projection lands.

For every joint and rotation this computes, in float64 numpy with the same shapes the compiled
core projects onto, the *anchor* of the projection: whether it moved, which cover it used, the
projected limit-space point and the Jacobian of the shape's projection there. The array
libraries (:mod:`.graph`) then rebuild the projected rotation from the input with a first-order
expansion around the anchor: the values are the anchor's (the core's), the derivatives the
Jacobian's. Joints without a limit (or disabled) get an identity anchor that never moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ..limits.coupled import CoupledLimit
from ..limits.joint import FittedLimit, _log, _long_cover, _swing_twist
from ..motion import quat

__all__ = ["JointPlan", "plan", "anchors", "ANCHOR_FIELDS", "FD_STEP"]

Array = NDArray[np.float64]

#: central-difference step (radians of limit space) of the Jacobians of shapes without a closed form
FD_STEP = 1e-7
#: the anchor arrays, in order: moved [N, J], cover [N, J] (1: the swing/shape point is on the long
#: cover), h [N, J, 3] (the projected swing or shape point), jac [N, J, 3, 3], tshift [N, J] (0 or
#: -+2 pi added to the twist angle), tproj [N, J] (the clamped twist angle), tgrad [N, J] (1 where
#: the twist is free, 0 where it is clamped)
ANCHOR_FIELDS = ("moved", "cover", "h", "jac", "tshift", "tproj", "tgrad")


@dataclass(frozen=True)
class JointPlan:
    """How one joint is limited: ``mode`` 0 none, 1 one shape, 2 swing-twist; the reference and
    twist axis; the region a point is projected onto and the twist interval; ``parent`` the column
    of a coupled limit's parent joint (-1 without one)."""

    mode: int
    reference: Array
    axis: Array
    limit: Any = None
    region: Any = None
    interval: tuple[float, float] = (0.0, 0.0)
    parent: int = -1
    kind: str = "none"


def _region_of(limit: FittedLimit) -> Any:
    """What the projection of a fitted limit's (swing) point goes onto: the compiled shape the core
    uses, or the Python shape (implicit) the batched step uses."""
    c = limit.compiled()
    if c is not None:
        return c.a
    return limit._section if limit.swing_twist else limit._shape()


def plan(limits: Any) -> list[JointPlan]:
    """One :class:`JointPlan` per joint of a :class:`~jointlimits.limits.model.JointLimits`
    (LimitsError for a limit kind without a differentiable form)."""
    out = []
    ident, z = np.array([1.0, 0, 0, 0]), np.array([1.0, 0, 0])
    active = set(limits.active())
    for j in range(limits.skeleton.num_joints):
        lim = limits.joints.get(j)
        if lim is None or j not in active:
            out.append(JointPlan(0, ident, z))
            continue
        name = limits.skeleton.names[j]
        if isinstance(lim, FittedLimit):
            if lim.reference_quirks:
                raise LimitsError(f"joint {name!r}: reference_quirks limits have no differentiable form")
            if lim.swing_twist:
                swing, twist = lim._parts()
                kind = swing.kind + "+" + twist.kind
                interval = twist.twist_interval(lim.twist_axis) if lim.compiled() is not None else lim._interval
                out.append(JointPlan(2, lim.reference, lim.twist_axis, lim, _region_of(lim), interval, -1, kind))
            else:
                out.append(JointPlan(1, lim.reference, lim.twist_axis, lim, _region_of(lim), kind=lim._shape().kind))
        elif isinstance(lim, CoupledLimit):
            parent = limits.skeleton.index(lim.parent)
            out.append(JointPlan(1, lim.base.reference, lim.base.twist_axis, lim, None, (0.0, 0.0), parent, "coupled"))
        else:
            raise LimitsError(
                f"joint {name!r}: a {getattr(lim, 'kind', type(lim).__name__)!r} limit has no differentiable form"
            )
    return out


def _radius(region: Any) -> float:
    r = region.radius
    return float(r() if callable(r) else r)


def _project_covers(region: Any, v: Array) -> tuple[Array, Array, NDArray[np.bool_]]:
    """(point, projection, long cover used) as the core's project_covers."""
    h = region.project(v)
    pick = np.zeros(len(v), bool)
    if _radius(region) > np.pi:
        v2 = _long_cover(v)
        h2 = region.project(v2)
        pick = np.einsum("ij,ij->i", h2 - v2, h2 - v2) < np.einsum("ij,ij->i", h - v, h - v)
        v, h = np.where(pick[:, None], v2, v), np.where(pick[:, None], h2, h)
    return v, h, pick


def _jacobian(region: Any, v: Array, h: Array) -> Array:
    """Jacobian ``[N, 3, 3]`` of the region's projection at points ``v`` (projections ``h``)."""
    kind = getattr(region, "kind", "")
    n = len(v)
    if kind in ("ellipsoid", "ellipse"):
        return _ellipsoid_jacobian(region, v, h)
    if kind == "box":
        f = np.asarray(region.arrays()["f"], np.float64)
        R = f[3:12].reshape(3, 3)
        l_v, l_h = (v - f[:3]) @ R, (h - f[:3]) @ R
        free = (np.abs(l_v - l_h) <= 1e-12 * (1.0 + np.abs(l_v))).astype(np.float64)  # not clamped
        return np.einsum("ij,nj,kj->nik", R, free, R)
    if kind == "kdop":
        return _kdop_jacobian(region, v, h)
    if kind == "polygon":
        return _polygon_jacobian(region, h)
    # every other shape: central differences of the projection itself
    e = FD_STEP
    jac = np.empty((n, 3, 3))
    for i in range(3):
        d = np.zeros(3)
        d[i] = e
        jac[:, :, i] = (region.project(v + d) - region.project(v - d)) / (2 * e)
    return jac


def _ellipsoid_jacobian(region: Any, v: Array, h: Array) -> Array:
    """Closed form: p = D x with D = diag(s^2 / (s^2 + m)) and sum (p / s)^2 = 1 defining m."""
    f = np.asarray(region.arrays()["f"], np.float64)
    R = f[3:12].reshape(3, 3)
    s2 = f[12:15] ** 2
    if region.kind == "ellipse":
        s2 = np.array([s2[0], s2[1], 0.0])
    x = (v - f[:3]) @ R
    p = (h - f[:3]) @ R
    # the multiplier from the projected point: p_i = x_i s_i^2 / (s_i^2 + m)
    k = np.argmax(np.abs(x) * (s2 > 0), axis=1)
    xk, pk, sk = x[np.arange(len(x)), k], p[np.arange(len(x)), k], s2[k]
    m = np.where(np.abs(pk) > 0, sk * (xk - pk) / np.where(np.abs(pk) > 0, pk, 1.0), 0.0)
    den = s2 + m[:, None]
    ok = s2 > 0
    D = np.where(ok, s2 / np.where(ok, den, 1.0), 0.0)
    gx = np.where(ok, 2 * s2 * x / np.where(ok, den, 1.0) ** 2, 0.0)  # d g / d x
    gm = -2 * np.sum(np.where(ok, s2 * x**2 / np.where(ok, den, 1.0) ** 3, 0.0), axis=1)  # d g / d m
    dm = -gx / np.where(gm != 0, gm, -1.0)[:, None]
    dp_dm = np.where(ok, -x * s2 / np.where(ok, den, 1.0) ** 2, 0.0)
    local = D[:, :, None] * np.eye(3) + dp_dm[:, :, None] * dm[:, None, :]
    return np.einsum("ij,njk,lk->nil", R, local, R)


def _null_projector(normals: Array, active: NDArray[np.bool_]) -> Array:
    """Per row the projector ``[N, 3, 3]`` onto the directions orthogonal to the active normals."""
    M = np.einsum("nk,ki,kj->nij", active.astype(np.float64), normals, normals)
    w, U = np.linalg.eigh(M)
    free = (w <= 1e-9).astype(np.float64)
    return np.einsum("nik,nk,njk->nij", U, free, U)


def _kdop_jacobian(region: Any, v: Array, h: Array) -> Array:
    """Closed form: the closest point of a polytope moves with the point inside the face, edge or
    vertex it lies on (the projector orthogonal to the active half-spaces' normals)."""
    a = region.arrays()
    f = np.asarray(a["f"], np.float64)
    R = f[3:12].reshape(3, 3)
    G = np.asarray(a["G"], np.float64).reshape(-1, 3)
    bnd = np.asarray(a["bnd"], np.float64)
    lh = (h - f[:3]) @ R
    tol = 1e-9 * (1.0 + np.max(np.abs(bnd)) + np.max(np.abs(lh), axis=1, keepdims=True))
    active = np.abs(lh @ G.T - bnd) <= tol
    local = _null_projector(G, active)
    return np.einsum("ij,njk,lk->nil", R, local, R)


def _polygon_jacobian(region: Any, h: Array) -> Array:
    """Closed form: a point projected into an edge's interior moves along the edge; onto a vertex,
    not at all (the plane's normal direction is dropped)."""
    a = region.arrays()
    f = np.asarray(a["f"], np.float64)
    e1, e2 = f[3:6], f[6:9]
    verts = np.asarray(a["axes"], np.float64).reshape(-1, 3)[:, :2]
    hu = np.stack([h @ e1, h @ e2], axis=1)
    nxt = np.roll(verts, -1, axis=0)
    edge = nxt - verts
    ee = np.maximum(np.einsum("ij,ij->i", edge, edge), 1e-300)
    rel = hu[:, None, :] - verts[None]
    t = np.einsum("nkj,kj->nk", rel, edge) / ee
    off = np.abs(rel[..., 0] * edge[:, 1] - rel[..., 1] * edge[:, 0]) / np.sqrt(ee)
    tol = 1e-9 * (1.0 + np.abs(hu).max(axis=1, keepdims=True))
    on = (off <= tol) & (t > 1e-9) & (t < 1.0 - 1e-9)
    at_vertex = np.min(np.linalg.norm(rel, axis=-1), axis=1) <= tol[:, 0]
    k = np.argmax(on, axis=1)
    d = edge[k] / np.sqrt(ee[k])[:, None]
    dw = d[:, :1] * e1 + d[:, 1:] * e2
    use = (np.any(on, axis=1) & ~at_vertex).astype(np.float64)
    return np.einsum("n,ni,nj->nij", use, dw, dw)


def _coupled_region(lim: CoupledLimit, parent: Array | None, n: int) -> Any:
    return lim._proxy(parent, n).shape


def _joint_anchor(p: JointPlan, q: Array, parent: Array | None) -> tuple[Array, ...]:
    n = len(q)
    moved = np.zeros(n)
    cover = np.zeros(n)
    h = np.zeros((n, 3))
    jac = np.zeros((n, 3, 3))
    tshift, tproj, tgrad = np.zeros(n), np.zeros(n), np.zeros(n)
    if p.mode == 0:
        return moved, cover, h, jac, tshift, tproj, tgrad
    r = quat.inv_mul(p.reference, q)
    r = np.where(r[:, :1] < 0.0, -r, r)
    region = p.region if p.region is not None else _coupled_region(p.limit, parent, n)
    if p.mode == 1:
        v, hh, pick = _project_covers(region, _log(r))
        mv = np.any(hh != v, axis=1)
    else:
        vs, vt = _swing_twist(p.limit, r)
        v, hh, pick = _project_covers(region, vs)
        tlo, thi = p.interval
        t = vt @ p.axis
        pp = np.clip(t, tlo, thi)
        shift = np.zeros(n)
        if max(-tlo, thi) > np.pi:
            t2 = np.where(t >= 0, t - 2.0 * np.pi, t + 2.0 * np.pi)
            p2 = np.clip(t2, tlo, thi)
            use = np.abs(p2 - t2) < np.abs(pp - t)
            shift = np.where(use, t2 - t, 0.0)
            t, pp = np.where(use, t2, t), np.where(use, p2, pp)
        u = pp[:, None] * p.axis
        mv = np.any(hh != v, axis=1) | (np.abs(u - vt).sum(1) > 1e-15 * (1.0 + np.abs(vt).sum(1)))
        tshift, tproj, tgrad = shift, pp, (pp == t).astype(np.float64)
    moved = mv.astype(np.float64)
    cover = pick.astype(np.float64)
    h = hh
    if np.any(mv):
        idx = np.flatnonzero(mv)
        if p.region is None:  # a coupled limit's blend is per row: project the moved rows again
            region = _coupled_region(p.limit, None if parent is None else parent[idx], len(idx))
            # central differences need one blend row per shifted point: three passes of the rows
            jac[idx] = _jacobian_rows(region, v[idx])
        else:
            jac[idx] = _jacobian(region, v[idx], hh[idx])
    return moved, cover, h, jac, tshift, tproj, tgrad


def _jacobian_rows(region: Any, v: Array) -> Array:
    e = FD_STEP
    jac = np.empty((len(v), 3, 3))
    for i in range(3):
        d = np.zeros(3)
        d[i] = e
        jac[:, :, i] = (region.project(v + d) - region.project(v - d)) / (2 * e)
    return jac


def anchors(plans: list[JointPlan], rotations: Any, parents: Any = None) -> tuple[Array, ...]:
    """The anchor arrays (see :data:`ANCHOR_FIELDS`) of rotations ``[N, J, 4]`` (unit quaternions;
    any float dtype, computed in float64). A coupled limit reads its parent's rotation in
    ``parents`` (a callable giving the poses ``[N, J, 4]`` its parents are read from, given the
    normalised rotations; None: the rotations themselves)."""
    q = np.asarray(rotations, np.float64)
    if q.ndim != 3 or q.shape[1:] != (len(plans), 4):
        raise LimitsError(f"rotations must be [N, {len(plans)}, 4], got {q.shape}")
    n, J = q.shape[:2]
    outs = [
        np.zeros((n, J)),
        np.zeros((n, J)),
        np.zeros((n, J, 3)),
        np.zeros((n, J, 3, 3)),
        np.zeros((n, J)),
        np.zeros((n, J)),
        np.zeros((n, J)),
    ]
    if not np.all(np.isfinite(q)):  # non-finite rows never move (their results stay non-finite)
        q = np.where(np.isfinite(q), q, 0.0)
    qn = q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-300)
    qn[np.linalg.norm(q, axis=-1) == 0] = (1.0, 0.0, 0.0, 0.0)
    src = qn if parents is None or not any(p.parent >= 0 for p in plans) else parents(qn)
    for j, p in enumerate(plans):
        if p.mode == 0:
            continue
        parent = src[:, p.parent] if p.parent >= 0 else None
        for k, a in enumerate(_joint_anchor(p, np.ascontiguousarray(qn[:, j]), parent)):
            outs[k][:, j] = a
    return tuple(outs)

"""k-DOP limits: slabs along 13 directions in the cloud's principal frame, projected with the
reference's sequential slab clamps or exactly (dual active set). Also the swing section and twist
interval of any slab shape (boxes are k-DOPs with three slabs)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Tuple

import numpy as np
from numba import njit

from ..errors import LimitsError
from ._checks import (_as_float_array, _check_finite, _cloud, _flat_points, _frame, _local, _local_points,
                      _out_array, _padding, _points, _raise_bad_point, _vec)
from ._kernels.codes import KDOP_EXACT, POLYGON, SLABS
from . import cloud
from .shape import ConvexShape

__all__ = ["KDop", "SlabShape", "fit_kdop", "kdop_axes", "project_kdop", "contains_kdop", "distance_kdop"]


def _axes(axes, name: str = "axes") -> np.ndarray:
    arr = _as_float_array(axes, name)
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
        raise LimitsError(f"{name} must have shape (K, 3) with K >= 1, got {arr.shape}")
    _check_finite(arr, name)
    norms = np.linalg.norm(arr, axis=1)
    if np.any(norms == 0.0):
        raise LimitsError(f"{name} row {int(np.argmin(norms))} is the zero vector")
    return np.ascontiguousarray(arr)


def fit_kdop(points, position, rotation, axes, padding: float = 0.05) -> Tuple[np.ndarray, np.ndarray]:
    """k-DOP (slabs along ``axes``) in the limit frame around a cloud.

    ``axes`` ``[K, 3]`` are directions in the local frame (normally unit, see
    :func:`kdop_axes`).  Returns ``(mins, maxs)`` ``[..., K]``: min/max of
    ``dot(axis_k, local)`` minus/plus ``padding`` (max starts at ``-inf``).
    """
    pts = _cloud(points)
    pad = _padding(padding)
    ax = _axes(axes)
    local = _local(pts, position, rotation)
    proj = local @ ax.T
    return proj.min(axis=-2) - pad, proj.max(axis=-2) + pad


_KDOP_DIRECTIONS = np.array(
    [
        [1, 0, 0], [0, 1, 0], [0, 0, 1],
        [1, 1, 1], [-1, 1, 1], [-1, -1, 1], [1, -1, 1],
        [0, 1, 1], [0, -1, 1], [1, 0, 1], [-1, 0, 1],
        [1, 1, 0], [-1, 1, 0],
    ],
    dtype=np.float64,
)


def kdop_axes() -> np.ndarray:
    """The reference demo's 13 k-DOP directions (normalized), shape ``(13, 3)``.

    x, y, z, the four cube diagonals (1,1,1), (-1,1,1), (-1,-1,1), (1,-1,1) and the
    edge directions (0,1,1), (0,-1,1), (1,0,1), (-1,0,1), (1,1,0), (-1,1,0).
    """
    d = _KDOP_DIRECTIONS
    return d / np.linalg.norm(d, axis=1, keepdims=True)


@njit(cache=True, fastmath=False)
def _kdop_slab_kernel(pts, mins, maxs, pos, rot, axes, aa, always_map, out):
    k = axes.shape[0]
    px, py, pz = pos[0], pos[1], pos[2]
    r00, r01, r02 = rot[0, 0], rot[0, 1], rot[0, 2]
    r10, r11, r12 = rot[1, 0], rot[1, 1], rot[1, 2]
    r20, r21, r22 = rot[2, 0], rot[2, 1], rot[2, 2]
    bad = -1
    for i in range(pts.shape[0]):
        x = pts[i, 0]
        y = pts[i, 1]
        z = pts[i, 2]
        dx = x - px
        dy = y - py
        dz = z - pz
        u = r00 * dx + r10 * dy + r20 * dz
        v = r01 * dx + r11 * dy + r21 * dz
        w = r02 * dx + r12 * dy + r22 * dz
        inside = not always_map
        for j in range(k if inside else 0):
            d = axes[j, 0] * u + axes[j, 1] * v + axes[j, 2] * w
            if not (d >= mins[j] * aa[j] and d <= maxs[j] * aa[j]):
                inside = False
                break
        if inside:
            out[i, 0] = x
            out[i, 1] = y
            out[i, 2] = z
            continue
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            if bad < 0:
                bad = i
            out[i, 0] = 0.0
            out[i, 1] = 0.0
            out[i, 2] = 0.0
            continue
        # one sequential pass of slab clamps (as the reference)
        for j in range(k):
            ax = axes[j, 0]
            ay = axes[j, 1]
            az = axes[j, 2]
            d = ax * u + ay * v + az * w
            c0 = d - mins[j] * aa[j]
            c1 = d - maxs[j] * aa[j]
            if c0 < 0.0:
                u -= c0 * ax
                v -= c0 * ay
                w -= c0 * az
            if c1 > 0.0:
                u -= c1 * ax
                v -= c1 * ay
                w -= c1 * az
        out[i, 0] = r00 * u + r01 * v + r02 * w + px
        out[i, 1] = r10 * u + r11 * v + r12 * w + py
        out[i, 2] = r20 * u + r21 * v + r22 * w + pz
    return bad


# --- exact k-DOP projection: dual active set (Goldfarb-Idnani with identity Hessian) ---


@njit(cache=True, fastmath=False)
def _solve_active(G, act, na, gx, gy, gz, r):
    """Split g into z (orthogonal to the active normals) and r (g = z + N r).

    Returns (zx, zy, zz, ok); ok is False when the active normals are (numerically)
    dependent.
    """
    if na == 0:
        return gx, gy, gz, True
    if na == 1:
        a = act[0]
        n0 = G[a, 0]
        n1 = G[a, 1]
        n2 = G[a, 2]
        nn = n0 * n0 + n1 * n1 + n2 * n2
        c = (n0 * gx + n1 * gy + n2 * gz) / nn
        r[0] = c
        return gx - c * n0, gy - c * n1, gz - c * n2, True
    if na == 2:
        a = act[0]
        b = act[1]
        a0, a1, a2 = G[a, 0], G[a, 1], G[a, 2]
        b0, b1, b2 = G[b, 0], G[b, 1], G[b, 2]
        m00 = a0 * a0 + a1 * a1 + a2 * a2
        m01 = a0 * b0 + a1 * b1 + a2 * b2
        m11 = b0 * b0 + b1 * b1 + b2 * b2
        det = m00 * m11 - m01 * m01
        if det <= 1e-14 * m00 * m11:
            return 0.0, 0.0, 0.0, False
        ca = a0 * gx + a1 * gy + a2 * gz
        cb = b0 * gx + b1 * gy + b2 * gz
        ra = (m11 * ca - m01 * cb) / det
        rb = (m00 * cb - m01 * ca) / det
        r[0] = ra
        r[1] = rb
        return (gx - ra * a0 - rb * b0, gy - ra * a1 - rb * b1, gz - ra * a2 - rb * b2, True)
    # na == 3: N r = g, z = 0 (Cramer's rule with columns n_a, n_b, n_c)
    a = act[0]
    b = act[1]
    c = act[2]
    a0, a1, a2 = G[a, 0], G[a, 1], G[a, 2]
    b0, b1, b2 = G[b, 0], G[b, 1], G[b, 2]
    c0, c1, c2 = G[c, 0], G[c, 1], G[c, 2]
    # cross products
    bc0 = b1 * c2 - b2 * c1
    bc1 = b2 * c0 - b0 * c2
    bc2 = b0 * c1 - b1 * c0
    det = a0 * bc0 + a1 * bc1 + a2 * bc2
    if abs(det) <= 1e-12:
        return 0.0, 0.0, 0.0, False
    ca0 = c1 * a2 - c2 * a1
    ca1 = c2 * a0 - c0 * a2
    ca2 = c0 * a1 - c1 * a0
    ab0 = a1 * b2 - a2 * b1
    ab1 = a2 * b0 - a0 * b2
    ab2 = a0 * b1 - a1 * b0
    r[0] = (gx * bc0 + gy * bc1 + gz * bc2) / det
    r[1] = (gx * ca0 + gy * ca1 + gz * ca2) / det
    r[2] = (gx * ab0 + gy * ab1 + gz * ab2) / det
    return 0.0, 0.0, 0.0, True


@njit(cache=True, fastmath=False)
def _kdop_exact_local(u, v, w, G, bnd, tol, max_iter):
    """Euclidean projection of (u, v, w) onto {x : G x <= bnd} (rows of G have unit norm).

    Returns (x, y, z, status): status 0 ok, 1 infeasible, 2 did not converge.
    """
    m = G.shape[0]
    act = np.empty(3, dtype=np.int64)
    mult = np.zeros(3)
    r = np.zeros(3)
    na = 0
    x = u
    y = v
    z = w
    it = 0
    while True:
        # most violated constraint not in the active set
        q = -1
        worst = tol
        for j in range(m):
            s = G[j, 0] * x + G[j, 1] * y + G[j, 2] * z - bnd[j]
            if s > worst:
                skip = False
                for t in range(na):
                    if act[t] == j:
                        skip = True
                if not skip:
                    worst = s
                    q = j
        if q < 0:
            return x, y, z, 0
        gx = G[q, 0]
        gy = G[q, 1]
        gz = G[q, 2]
        uq = 0.0
        while True:
            it += 1
            if it > max_iter:
                return x, y, z, 2
            zx, zy, zz, ok = _solve_active(G, act, na, gx, gy, gz, r)
            if not ok:
                return x, y, z, 2
            z2 = zx * zx + zy * zy + zz * zz
            viol = gx * x + gy * y + gz * z - bnd[q]
            t2 = np.inf
            if z2 > 1e-20:
                t2 = viol / z2
                if t2 < 0.0:
                    t2 = 0.0
            t1 = np.inf
            drop = -1
            for t in range(na):
                if r[t] > 1e-14:
                    cand = mult[t] / r[t]
                    if cand < t1:
                        t1 = cand
                        drop = t
            if t1 == np.inf and t2 == np.inf:
                return x, y, z, 1
            if t2 <= t1:
                x -= t2 * zx
                y -= t2 * zy
                z -= t2 * zz
                for t in range(na):
                    mult[t] -= t2 * r[t]
                uq += t2
                act[na] = q
                mult[na] = uq
                na += 1
                break
            # partial step, then drop constraint `drop`
            if z2 > 1e-20:
                x -= t1 * zx
                y -= t1 * zy
                z -= t1 * zz
            for t in range(na):
                mult[t] -= t1 * r[t]
            uq += t1
            for t in range(drop, na - 1):
                act[t] = act[t + 1]
                mult[t] = mult[t + 1]
            na -= 1


@njit(cache=True, fastmath=False)
def _kdop_brute_local(u, v, w, G, bnd, tol):
    """Exact projection by enumerating every active set of size <= 3 (slow fallback)."""
    m = G.shape[0]
    best = np.inf
    bx = u
    by = v
    bz = w
    feas = True
    for j in range(m):
        if G[j, 0] * u + G[j, 1] * v + G[j, 2] * w - bnd[j] > tol:
            feas = False
            break
    if feas:
        return u, v, w, 0
    act = np.empty(3, dtype=np.int64)
    for a in range(m):
        for b in range(a, m):
            for c in range(b, m):
                if a == b and b != c:
                    continue
                if a == b:
                    na = 1
                    act[0] = a
                elif b == c:
                    na = 2
                    act[0] = a
                    act[1] = b
                else:
                    na = 3
                    act[0] = a
                    act[1] = b
                    act[2] = c
                # projection of p onto the planes {N^T x = b_act}: x = p - N lam with
                # (N^T N) lam = N^T p - b_act (rows of G are unit vectors)
                ok = True
                lam0 = 0.0
                lam1 = 0.0
                if na == 1:
                    e0 = G[a, 0] * u + G[a, 1] * v + G[a, 2] * w - bnd[a]
                    lam0 = e0
                    x = u - lam0 * G[a, 0]
                    y = v - lam0 * G[a, 1]
                    z = w - lam0 * G[a, 2]
                elif na == 2:
                    m00 = 1.0
                    m11 = 1.0
                    m01 = G[a, 0] * G[b, 0] + G[a, 1] * G[b, 1] + G[a, 2] * G[b, 2]
                    det = m00 * m11 - m01 * m01
                    if det <= 1e-12:
                        ok = False
                        x = y = z = 0.0
                    else:
                        e0 = G[a, 0] * u + G[a, 1] * v + G[a, 2] * w - bnd[a]
                        e1 = G[b, 0] * u + G[b, 1] * v + G[b, 2] * w - bnd[b]
                        lam0 = (m11 * e0 - m01 * e1) / det
                        lam1 = (m00 * e1 - m01 * e0) / det
                        x = u - lam0 * G[a, 0] - lam1 * G[b, 0]
                        y = v - lam0 * G[a, 1] - lam1 * G[b, 1]
                        z = w - lam0 * G[a, 2] - lam1 * G[b, 2]
                else:
                    # vertex: solve N^T x = b (rows G[a], G[b], G[c])
                    a0, a1, a2 = G[a, 0], G[a, 1], G[a, 2]
                    b0, b1, b2 = G[b, 0], G[b, 1], G[b, 2]
                    c0, c1, c2 = G[c, 0], G[c, 1], G[c, 2]
                    bc0 = b1 * c2 - b2 * c1
                    bc1 = b2 * c0 - b0 * c2
                    bc2 = b0 * c1 - b1 * c0
                    det = a0 * bc0 + a1 * bc1 + a2 * bc2
                    if abs(det) <= 1e-9:
                        ok = False
                        x = y = z = 0.0
                    else:
                        ca0 = c1 * a2 - c2 * a1
                        ca1 = c2 * a0 - c0 * a2
                        ca2 = c0 * a1 - c1 * a0
                        ab0 = a1 * b2 - a2 * b1
                        ab1 = a2 * b0 - a0 * b2
                        ab2 = a0 * b1 - a1 * b0
                        x = (bnd[a] * bc0 + bnd[b] * ca0 + bnd[c] * ab0) / det
                        y = (bnd[a] * bc1 + bnd[b] * ca1 + bnd[c] * ab1) / det
                        z = (bnd[a] * bc2 + bnd[b] * ca2 + bnd[c] * ab2) / det
                if not ok:
                    continue
                d2 = (x - u) ** 2 + (y - v) ** 2 + (z - w) ** 2
                if d2 >= best:
                    continue
                feas = True
                for j in range(m):
                    if G[j, 0] * x + G[j, 1] * y + G[j, 2] * z - bnd[j] > tol:
                        feas = False
                        break
                if feas:
                    best = d2
                    bx = x
                    by = y
                    bz = z
    if best == np.inf:
        return u, v, w, 1
    return bx, by, bz, 0


@njit(cache=True, fastmath=False)
def _kdop_exact_kernel(pts, G, bnd, pos, rot, out, status):
    m = G.shape[0]
    px, py, pz = pos[0], pos[1], pos[2]
    r00, r01, r02 = rot[0, 0], rot[0, 1], rot[0, 2]
    r10, r11, r12 = rot[1, 0], rot[1, 1], rot[1, 2]
    r20, r21, r22 = rot[2, 0], rot[2, 1], rot[2, 2]
    bmax = 0.0
    for j in range(m):
        if abs(bnd[j]) > bmax:
            bmax = abs(bnd[j])
    bad = -1
    for i in range(pts.shape[0]):
        x = pts[i, 0]
        y = pts[i, 1]
        z = pts[i, 2]
        status[i] = 0
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            if bad < 0:
                bad = i
            out[i, 0] = 0.0
            out[i, 1] = 0.0
            out[i, 2] = 0.0
            continue
        dx = x - px
        dy = y - py
        dz = z - pz
        u = r00 * dx + r10 * dy + r20 * dz
        v = r01 * dx + r11 * dy + r21 * dz
        w = r02 * dx + r12 * dy + r22 * dz
        mag = abs(u)
        if abs(v) > mag:
            mag = abs(v)
        if abs(w) > mag:
            mag = abs(w)
        tol = 1e-12 * (1.0 + bmax + mag)
        inside = True
        for j in range(m):
            if G[j, 0] * u + G[j, 1] * v + G[j, 2] * w - bnd[j] > tol:
                inside = False
                break
        if inside:
            out[i, 0] = x
            out[i, 1] = y
            out[i, 2] = z
            continue
        a, b, c, st = _kdop_exact_local(u, v, w, G, bnd, tol, 64)
        if st == 2:
            a, b, c, st = _kdop_brute_local(u, v, w, G, bnd, 10.0 * tol)
        status[i] = st
        out[i, 0] = r00 * a + r01 * b + r02 * c + px
        out[i, 1] = r10 * a + r11 * b + r12 * c + py
        out[i, 2] = r20 * a + r21 * b + r22 * c + pz
    return bad


def _kdop_limits(mins, maxs, axes):
    ax = _axes(axes)
    k = ax.shape[0]
    mins = _vec(mins, "mins", k)
    maxs = _vec(maxs, "maxs", k)
    if np.any(mins > maxs):
        j = int(np.argmax(mins > maxs))
        raise LimitsError(f"empty k-DOP slab {j}: mins[{j}] = {mins[j]} > maxs[{j}] = {maxs[j]}")
    return mins, maxs, ax


def project_kdop(
    points,
    mins,
    maxs,
    position=None,
    rotation=None,
    axes=None,
    exact: bool = False,
    *,
    always_map: bool = False,
    out=None,
) -> np.ndarray:
    """Project onto the k-DOP ``mins_k <= dot(axis_k, local) <= maxs_k``.

    ``points`` ``[..., 3]`` in limit space; ``axes`` ``[K, 3]`` in the local frame
    (default :func:`kdop_axes`).  Points inside every slab are returned unchanged.

    * ``exact=False``: the reference ``apply_kdop_limit``, one sequential pass of slab
      clamps in axis order (cheap, but not a closest point and not always inside when
      slabs interact).  ``always_map=True`` reproduces the reference quirk of mapping
      inside points through the frame too (see :func:`project_box`).
    * ``exact=True``: the Euclidean closest point of the polytope (intersection of the
      slabs), solved per point by a dual active-set method (Goldfarb-Idnani with the
      identity Hessian; at most 3 active planes in 3-D), with an exhaustive active-set
      enumeration as fallback.  "Closest" is in the local frame, i.e. in limit space
      when ``rotation`` is orthonormal.  Raises :class:`LimitsError` if the slabs do not
      intersect.
    """
    flat, shape = _flat_points(points)
    if axes is None:
        axes = kdop_axes()
    mins, maxs, ax = _kdop_limits(mins, maxs, axes)
    pos, rot = _frame(position, rotation)
    res = _out_array(out, shape)
    res_flat = res.reshape(-1, 3)
    if not exact:
        aa = np.einsum("ij,ij->i", ax, ax)
        bad = _kdop_slab_kernel(flat, mins, maxs, pos, rot, ax, aa, bool(always_map), res_flat)
        _raise_bad_point(bad, flat, shape)
        return res
    norms = np.linalg.norm(ax, axis=1)
    unit = ax / norms[:, None]
    G = np.ascontiguousarray(np.concatenate([unit, -unit], axis=0))
    bnd = np.concatenate([maxs / norms, -mins / norms])
    status = np.empty(flat.shape[0], dtype=np.int8)
    bad = _kdop_exact_kernel(flat, G, bnd, pos, rot, res_flat, status)
    _raise_bad_point(bad, flat, shape)
    if status.size and status.max() > 0:
        i = int(np.argmax(status > 0))
        raise LimitsError(
            "the k-DOP slabs do not intersect (empty polytope): cannot project "
            f"point {i} {flat[i].tolist()}"
        )
    return res


def contains_kdop(points, mins, maxs, position=None, rotation=None, axes=None, tol: float = 0.0) -> np.ndarray:
    """Bool ``[...]``: ``mins_k - tol <= dot(unit axis_k, local) * |axis_k| <= maxs_k + tol`` for all k."""
    if axes is None:
        axes = kdop_axes()
    mins, maxs, ax = _kdop_limits(mins, maxs, axes)
    local, _ = _local_points(points, position, rotation)
    u, v, w = local[..., 0, None], local[..., 1, None], local[..., 2, None]
    d = ax[:, 0] * u + ax[:, 1] * v + ax[:, 2] * w
    aa = np.einsum("ij,ij->i", ax, ax)
    return np.all((d >= mins * aa - tol) & (d <= maxs * aa + tol), axis=-1)


def distance_kdop(points, mins, maxs, position=None, rotation=None, axes=None) -> np.ndarray:
    """Euclidean distance ``[...]`` from each point to the k-DOP polytope (exact projection)."""
    p = _points(points)
    return np.linalg.norm(project_kdop(p, mins, maxs, position, rotation, axes, exact=True) - p, axis=-1)


def _clip_polygon(poly: np.ndarray, g: np.ndarray, h: float) -> np.ndarray:
    """Sutherland-Hodgman: the part of a convex polygon [V, 2] with g.y <= h."""
    if len(poly) == 0:
        return poly
    d = poly @ g - h
    out = []
    for i in range(len(poly)):
        j = (i + 1) % len(poly)
        if d[i] <= 0:
            out.append(poly[i])
        if (d[i] < 0 < d[j]) or (d[j] < 0 < d[i]):
            t = d[i] / (d[i] - d[j])
            out.append(poly[i] + t * (poly[j] - poly[i]))
    return np.array(out).reshape(-1, 2)


class SlabShape(ConvexShape):
    """A shape that is an intersection of slabs ``mins <= axes . R^T (v - position) <= maxs``."""

    def slabs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(position, rotation, local axes, mins, maxs)."""
        raise NotImplementedError

    def swing_section(self, axis) -> "KDop":
        a = np.asarray(axis, np.float64)
        pos, rot, ax, mins, maxs = self.slabs()
        n = rot.T @ a  # the plane a.x = 0 in the shape's local frame: n.l = -a.pos
        b = -float(a @ pos)
        return KDop(position=pos, rotation=rot, axes=np.vstack([ax, n]), mins=np.append(mins, b),
                    maxs=np.append(maxs, b))

    def twist_interval(self, axis) -> tuple[float, float]:
        a = np.asarray(axis, np.float64)
        pos, rot, ax, mins, maxs = self.slabs()
        m = ax @ (rot.T @ a)  # slab k: mins_k <= t m_k - ax_k.(R^T pos) <= maxs_k
        off = ax @ (rot.T @ (-pos))
        lo, hi = -np.inf, np.inf
        for mk, ok, mn, mx in zip(m, off, mins, maxs):
            if abs(mk) < 1e-12:
                continue
            t1, t2 = (mn - ok) / mk, (mx - ok) / mk
            lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
        if lo > hi:
            lo = hi = 0.5 * (lo + hi)
        return float(lo), float(hi)

    def pack_section(self, axis) -> tuple:
        """A convex polygon in the swing plane (the 3D section solver if the plane misses the shape)."""
        a = np.asarray(axis, np.float64)
        e1 = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
        e1 /= np.linalg.norm(e1)
        P = np.stack([e1, np.cross(a, e1)], axis=1)  # plane basis, columns
        pos, rot, ax, mins, maxs = self.slabs()
        m = ax @ rot.T  # slab directions in limit space (rows)
        off = m @ pos
        big = 100.0
        poly = np.array([[-big, -big], [big, -big], [big, big], [-big, big]])
        for mk, ok, mn, mx in zip(m, off, mins, maxs):
            g = P.T @ mk
            poly = _clip_polygon(poly, g, mx + ok)
            poly = _clip_polygon(poly, -g, -(mn + ok))
        if len(poly) == 0:
            return self.swing_section(axis).pack()
        f = np.zeros(16)
        f[3:6], f[6:9] = P[:, 0], P[:, 1]
        f[15] = float(np.max(np.linalg.norm(poly, axis=1)))
        verts = np.zeros((len(poly), 3))
        verts[:, :2] = poly
        return (POLYGON, f, verts, np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros(0))


@dataclass(eq=False)
class KDop(SlabShape):
    """Slabs ``mins <= axes . R^T (v - position) <= maxs``; ``exact`` projects to the true closest
    point (False: the reference's sequential slab clamps)."""

    kind: str = "kdop"
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    axes: np.ndarray | None = None
    mins: np.ndarray | None = None
    maxs: np.ndarray | None = None
    exact: bool = True
    _FIELDS: ClassVar[tuple[str, ...]] = ("axes", "mins", "maxs")
    _OPTIONS: ClassVar[tuple[str, ...]] = ("exact",)

    def __post_init__(self) -> None:
        self._check()

    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05) -> "KDop":
        pos, rot = cloud.fit_frame(points, subsample)
        axes = kdop_axes()
        mins, maxs = fit_kdop(points, pos, rot, axes, padding)
        return cls(position=pos, rotation=rot, axes=axes, mins=mins, maxs=maxs)

    def project(self, points):
        return project_kdop(points, self.mins, self.maxs, self.position, self.rotation, self.axes, exact=self.exact)

    def contains(self, points, tolerance: float = 1e-9):
        return contains_kdop(points, self.mins, self.maxs, self.position, self.rotation, self.axes, tol=tolerance)

    def radius(self) -> float:
        ext = np.maximum(np.abs(self.mins), np.abs(self.maxs))
        return float(np.linalg.norm(self.position) + math.sqrt(3.0) * np.max(ext))

    def slabs(self):
        return self.position, self.rotation, self.axes, self.mins, self.maxs

    def to_dict(self) -> dict:
        return {**super().to_dict(), "exact": bool(self.exact)}

    def pack(self) -> tuple:
        f = np.zeros(16)
        f[0:3], f[3:12], f[15] = self.position, self.rotation.reshape(-1), self.radius()
        if not self.exact:
            return (SLABS, f, self.axes.copy(), self.mins.copy(), self.maxs.copy(), np.zeros((0, 3)), np.zeros(0))
        norms = np.linalg.norm(self.axes, axis=1)
        unit = self.axes / norms[:, None]
        G = np.ascontiguousarray(np.concatenate([unit, -unit], axis=0))
        bnd = np.concatenate([self.maxs / norms, -self.mins / norms])
        return (KDOP_EXACT, f, np.zeros((0, 3)), np.zeros(0), np.zeros(0), G, bnd)

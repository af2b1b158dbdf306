"""k-DOP limits: slabs along 13 directions in the cloud's principal frame, projected with the
reference's sequential slab clamps or exactly (dual active set). Also the swing section and twist
interval of any slab shape (boxes are k-DOPs with three slabs)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import ClassVar

import numpy as np

from .._native import _core
from ..errors import LimitsError
from . import cloud
from ._checks import (
    _as_float_array,
    _check_finite,
    _cloud,
    _flat_points,
    _frame,
    _local,
    _local_points,
    _out_array,
    _padding,
    _points,
    _raise_bad_point,
    _vec,
    filled,
)
from .compiled import core_shape
from .shape import ConvexShape

__all__ = ["KDop", "SlabShape", "fit_kdop", "kdop_axes", "project_kdop", "contains_kdop", "distance_kdop"]


#: Most k-DOP axes: the compiled k-DOP's vertex bound costs O(K^4) once and its exact projection
#: O(K^3) per point (150 axes took 25 s and 12 GB); the default has 13.
MAX_KDOP_AXES = 30


def _axes(axes, name: str = "axes") -> np.ndarray:
    arr = _as_float_array(axes, name)
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
        raise LimitsError(f"{name} must have shape (K, 3) with K >= 1, got {arr.shape}")
    if arr.shape[0] > MAX_KDOP_AXES:
        raise LimitsError(f"{name}: {arr.shape[0]} k-DOP axes, at most {MAX_KDOP_AXES} are supported")
    _check_finite(arr, name)
    norms = np.linalg.norm(arr, axis=1)
    if np.any(norms == 0.0):
        raise LimitsError(f"{name} row {int(np.argmin(norms))} is the zero vector")
    return np.ascontiguousarray(arr)


def fit_kdop(points, position, rotation, axes, padding: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
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
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
        [1, 1, 1],
        [-1, 1, 1],
        [-1, -1, 1],
        [1, -1, 1],
        [0, 1, 1],
        [0, -1, 1],
        [1, 0, 1],
        [-1, 0, 1],
        [1, 1, 0],
        [-1, 1, 0],
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
        bad = _core.project_kdop_slabs(flat, mins, maxs, pos, rot, ax, aa, bool(always_map), res_flat)
        _raise_bad_point(bad, flat, shape)
        return res
    norms = np.linalg.norm(ax, axis=1)
    unit = ax / norms[:, None]
    G = np.ascontiguousarray(np.concatenate([unit, -unit], axis=0))
    bnd = np.concatenate([maxs / norms, -mins / norms])
    bad, i = _core.project_kdop_exact(flat, G, bnd, pos, rot, res_flat)
    _raise_bad_point(bad, flat, shape)
    if i >= 0:
        raise LimitsError(
            f"the k-DOP slabs do not intersect (empty polytope): cannot project point {i} {flat[i].tolist()}"
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

    def swing_section(self, axis) -> KDop:
        a = np.asarray(axis, np.float64)
        pos, rot, ax, mins, maxs = self.slabs()
        n = rot.T @ a  # the plane a.x = 0 in the shape's local frame: n.l = -a.pos
        b = -float(a @ pos)
        return KDop(
            position=pos, rotation=rot, axes=np.vstack([ax, n]), mins=np.append(mins, b), maxs=np.append(maxs, b)
        )

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

    def compile_section(self, axis):
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
            return self.swing_section(axis).compile()
        f = np.zeros(16)
        f[3:6], f[6:9] = P[:, 0], P[:, 1]
        f[15] = float(np.max(np.linalg.norm(poly, axis=1)))
        verts = np.zeros((len(poly), 3))
        verts[:, :2] = poly
        return core_shape("polygon", f, axes=verts)


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
        self.mins, self.maxs, self.axes = _kdop_limits(self.mins, self.maxs, self.axes)

    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05) -> KDop:
        pos, rot = cloud.fit_frame(points, subsample)
        axes = kdop_axes()
        mins, maxs = fit_kdop(points, pos, rot, axes, padding)
        return cls(position=pos, rotation=rot, axes=axes, mins=mins, maxs=maxs)

    def project(self, points):
        return project_kdop(points, self.mins, self.maxs, self.position, self.rotation, self.axes, exact=self.exact)

    def contains(self, points, tolerance: float = 1e-9):
        return contains_kdop(points, self.mins, self.maxs, self.position, self.rotation, self.axes, tol=tolerance)

    def radius(self) -> float:
        """Largest |v| over the k-DOP: its farthest vertex (every triple of slab planes that meets
        inside the others), or the bound ``|position| + sqrt(3) max |bound|`` if none does. It decides
        whether the limit reaches past pi (the step then also tries the long cover)."""
        mins, maxs = filled(self.mins, "mins"), filled(self.maxs, "maxs")
        ext = np.maximum(np.abs(mins), np.abs(maxs))
        bound = float(np.linalg.norm(self.position) + math.sqrt(3.0) * np.max(ext))
        ax = np.asarray(self.axes, np.float64)
        A = np.concatenate([ax, -ax])
        b = np.concatenate([np.asarray(maxs, np.float64), -np.asarray(mins, np.float64)])
        idx = np.array(list(combinations(range(len(A)), 3)))
        M = A[idx]
        scale = np.prod(np.linalg.norm(M, axis=2), axis=1)
        ok = np.abs(np.linalg.det(M)) > 1e-9 * scale
        if not ok.any():
            return bound
        V = np.linalg.solve(M[ok], b[idx[ok]][..., None])[..., 0]
        tol = 1e-9 * (1.0 + np.abs(b).max())
        feasible = np.all(V @ A.T <= b + tol, axis=1)
        if not feasible.any():
            return bound
        world = V[feasible] @ np.asarray(self.rotation, np.float64).T + self.position
        return float(min(bound, np.linalg.norm(world, axis=1).max() * (1.0 + 1e-9) + 1e-12))

    def slabs(self):
        return self.position, self.rotation, self.axes, self.mins, self.maxs

    def to_dict(self) -> dict:
        return {**super().to_dict(), "exact": bool(self.exact)}

    def compile(self):
        f = np.zeros(16)
        f[0:3], f[3:12], f[15] = self.position, self.rotation.reshape(-1), self.radius()
        if not self.exact:
            return core_shape("slabs", f, axes=self.axes, mins=self.mins, maxs=self.maxs)
        axes, mins, maxs = filled(self.axes, "axes"), filled(self.mins, "mins"), filled(self.maxs, "maxs")
        norms = np.linalg.norm(axes, axis=1)
        unit = axes / norms[:, None]
        G = np.ascontiguousarray(np.concatenate([unit, -unit], axis=0))
        bnd = np.concatenate([maxs / norms, -mins / norms])
        return core_shape("kdop", f, G=G, bnd=bnd)

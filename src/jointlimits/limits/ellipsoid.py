"""Ellipsoid limits in the cloud's principal frame (the reference's fit), projected onto the
true surface by Newton's method; the swing section of an ellipsoid is a flat ellipse."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numba import njit

from ..errors import LimitsError
from ._checks import _cloud, _flat_points, _frame, _local, _out_array, _padding, _points, _raise_bad_point, _vec
from ._kernels.codes import ELLIPSE, ELLIPSOID
from . import cloud
from .shape import ConvexShape

__all__ = ["Ellipsoid", "fit_ellipsoid", "project_ellipsoid", "contains_ellipsoid", "distance_ellipsoid"]


def fit_ellipsoid(points, position, rotation, padding: float = 0.05) -> np.ndarray:
    """Ellipsoid semi-axes in the limit frame enclosing a cloud (the reference's method).

    ``scale0 = max(padding, max |local|)`` per axis, ``radius = max |local / scale0|``,
    ``scale = max(radius * scale0, padding)``.  Axes with zero extent (and zero padding)
    contribute 0 to the radius instead of NaN, and get scale 0.  Returns ``[..., 3]``.
    """
    pts = _cloud(points)
    pad = _padding(padding)
    local = _local(pts, position, rotation)
    scale0 = np.maximum(pad, np.abs(local).max(axis=-2))
    safe = np.where(scale0 > 0.0, scale0, 1.0)
    ratio = np.where(scale0[..., None, :] > 0.0, local / safe[..., None, :], 0.0)
    radius = np.sqrt(np.sum(ratio * ratio, axis=-1)).max(axis=-1)
    return np.maximum(radius[..., None] * scale0, pad)


@njit(cache=True, fastmath=False)
def _ellipsoid_local(u, v, w, ssx, ssy, ssz, iterations):
    """Closest point to (u, v, w) on the ellipsoid with squared radii (ssx, ssy, ssz).

    The closest point is ``x_i = p_i ss_i / (ss_i + h)`` where ``h >= 0`` solves
    ``S(h) = sum ss_i p_i^2 / (ss_i + h)^2 = 1``.  Newton's method is applied to
    ``S(h)^(-1/2) = 1`` (exactly linear in ``h`` for a sphere, nearly so otherwise, so it
    converges in a few steps), started at a lower bound of the root so that the iterates
    increase monotonically.  Axes with ``ss_i == 0`` contribute nothing and map to 0.
    If ``S(0) <= 1`` (inside) ``h = 0``, i.e. the point is returned (up to rounding).
    """
    s0 = 0.0
    if ssx > 0.0:
        s0 += u * u / ssx
    if ssy > 0.0:
        s0 += v * v / ssy
    if ssz > 0.0:
        s0 += w * w / ssz
    h = 0.0
    if s0 > 1.0:
        # lower bounds of the root: every term of S is <= 1, and ss_i + h <= max(ss) + h
        m = ssx
        if ssy > m:
            m = ssy
        if ssz > m:
            m = ssz
        lo = ssx
        if ssy > 0.0 and (ssy < lo or lo == 0.0):
            lo = ssy
        if ssz > 0.0 and (ssz < lo or lo == 0.0):
            lo = ssz
        b = math.sqrt(ssx * u * u + ssy * v * v + ssz * w * w) - m
        if b > h:
            h = b
        b = math.sqrt(ssx) * abs(u) - ssx
        if b > h:
            h = b
        b = math.sqrt(ssy) * abs(v) - ssy
        if b > h:
            h = b
        b = math.sqrt(ssz) * abs(w) - ssz
        if b > h:
            h = b
        for _ in range(iterations):
            S = 0.0
            D = 0.0
            if ssx > 0.0:
                t = 1.0 / (ssx + h)
                a = u * t
                g = ssx * a * a
                S += g
                D += g * t
            if ssy > 0.0:
                t = 1.0 / (ssy + h)
                a = v * t
                g = ssy * a * a
                S += g
                D += g * t
            if ssz > 0.0:
                t = 1.0 / (ssz + h)
                a = w * t
                g = ssz * a * a
                S += g
                D += g * t
            if S <= 1.0 + 1e-15 or D <= 0.0:
                break
            step = (S * math.sqrt(S) - S) / D
            if not (step > 0.0):
                break
            h += step
            if step <= 1e-9 * (h + lo):
                # quadratic convergence: the next step would be below rounding
                break
    ox = u * ssx / (ssx + h) if ssx + h > 0.0 else 0.0
    oy = v * ssy / (ssy + h) if ssy + h > 0.0 else 0.0
    oz = w * ssz / (ssz + h) if ssz + h > 0.0 else 0.0
    return ox, oy, oz


@njit(cache=True, fastmath=False)
def _ellipsoid_inside(u, v, w, sx, sy, sz):
    """``|local / scale| <= 1`` with zero radii handled (0/0 -> 0, x/0 -> outside)."""
    acc = 0.0
    if sx > 0.0:
        a = u / sx
        acc += a * a
    elif u != 0.0:
        return False
    if sy > 0.0:
        a = v / sy
        acc += a * a
    elif v != 0.0:
        return False
    if sz > 0.0:
        a = w / sz
        acc += a * a
    elif w != 0.0:
        return False
    return acc <= 1.0


@njit(cache=True, fastmath=False)
def _ellipsoid_kernel(pts, scale, eps, pos, rot, iterations, out):
    sx, sy, sz = scale[0], scale[1], scale[2]
    ssx = sx * sx + eps
    ssy = sy * sy + eps
    ssz = sz * sz + eps
    px, py, pz = pos[0], pos[1], pos[2]
    r00, r01, r02 = rot[0, 0], rot[0, 1], rot[0, 2]
    r10, r11, r12 = rot[1, 0], rot[1, 1], rot[1, 2]
    r20, r21, r22 = rot[2, 0], rot[2, 1], rot[2, 2]
    bad = -1
    for i in range(pts.shape[0]):
        x = pts[i, 0]
        y = pts[i, 1]
        z = pts[i, 2]
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
        if _ellipsoid_inside(u, v, w, sx, sy, sz):
            out[i, 0] = x
            out[i, 1] = y
            out[i, 2] = z
            continue
        u, v, w = _ellipsoid_local(u, v, w, ssx, ssy, ssz, iterations)
        out[i, 0] = r00 * u + r01 * v + r02 * w + px
        out[i, 1] = r10 * u + r11 * v + r12 * w + py
        out[i, 2] = r20 * u + r21 * v + r22 * w + pz
    return bad


def _scale(scale) -> np.ndarray:
    s = _vec(scale, "scale")
    if np.any(s < 0.0):
        raise LimitsError(f"scale must be >= 0, got {s.tolist()}")
    return s


def project_ellipsoid(
    points,
    scale,
    position=None,
    rotation=None,
    iterations: int = 32,
    eps: float = 0.0,
    *,
    out=None,
) -> np.ndarray:
    """Closest point on the ellipsoid with semi-axes ``scale`` (in the limit frame).

    ``points`` ``[..., 3]`` in limit space.  Points with ``|local / scale| <= 1`` are
    returned unchanged.  Others go to the closest surface point
    ``x_i = p_i ss_i / (ss_i + h)`` (``ss = scale**2 + eps``), with ``h`` found by
    Newton's method (on ``S(h)^(-1/2) = 1``, ``S(h) = sum ss_i p_i^2 / (ss_i + h)^2``)
    started at a lower bound of the root so the iterates increase monotonically; it
    stops when converged (typically 3-5 steps) or after ``iterations`` steps.  Zero or tiny radii are fine (the point is
    flattened onto that axis; an all-zero scale maps to ``position``).

    ``eps=0`` (default) is the exact closest point on ``scale``.  ``eps=1e-5`` reproduces
    the reference ``apply_ellipsoid_limit``, which projects onto ``scale**2 + 1e-5``
    (points between the two surfaces are left unchanged here, as ``h`` is kept >= 0).
    """
    flat, shape = _flat_points(points)
    s = _scale(scale)
    pos, rot = _frame(position, rotation)
    try:
        iters = int(iterations)
        e = float(eps)
    except (TypeError, ValueError) as exc:
        raise LimitsError(f"iterations must be an int and eps a float ({exc})") from exc
    if iters < 1:
        raise LimitsError(f"iterations must be >= 1, got {iters}")
    if not (math.isfinite(e) and e >= 0.0):
        raise LimitsError(f"eps must be finite and >= 0, got {e}")
    res = _out_array(out, shape)
    bad = _ellipsoid_kernel(flat, s, e, pos, rot, iters, res.reshape(-1, 3))
    _raise_bad_point(bad, flat, shape)
    return res


def distance_ellipsoid(points, scale, position=None, rotation=None) -> np.ndarray:
    """Euclidean distance ``[...]`` from each point to the ellipsoid (0 inside)."""
    p = _points(points)
    return np.linalg.norm(project_ellipsoid(p, scale, position, rotation, iterations=100) - p, axis=-1)


def contains_ellipsoid(points, scale, position=None, rotation=None, tol: float = 0.0) -> np.ndarray:
    """Bool ``[...]``: the point is within ``tol`` (Euclidean) of the ellipsoid."""
    return distance_ellipsoid(points, scale, position, rotation) <= tol


@dataclass(eq=False)
class Ellipsoid(ConvexShape):
    """``|R^T (v - position) / scale| <= 1``; a zero ``scale[2]`` is a flat ellipse (a swing section)."""

    kind: str = "ellipsoid"
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    scale: np.ndarray | None = None
    _FIELDS: ClassVar[tuple[str, ...]] = ("scale",)

    def __post_init__(self) -> None:
        self._check()

    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05) -> "Ellipsoid":
        pos, rot = cloud.fit_frame(points, subsample)
        return cls(position=pos, rotation=rot, scale=fit_ellipsoid(points, pos, rot, padding))

    def project(self, points):
        return project_ellipsoid(points, self.scale, self.position, self.rotation)

    def contains(self, points, tolerance: float = 1e-9):
        return contains_ellipsoid(points, self.scale, self.position, self.rotation, tol=tolerance)

    def radius(self) -> float:
        return float(np.linalg.norm(self.position) + np.max(self.scale))

    def _metric(self) -> np.ndarray:
        s = np.maximum(self.scale, 1e-12)
        return self.rotation @ np.diag(1.0 / s**2) @ self.rotation.T

    def swing_section(self, axis) -> "Ellipsoid":
        # ellipse (x - c)^T M (x - c) <= 1 restricted to x = P y
        a = np.asarray(axis, np.float64)
        e1 = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
        e1 /= np.linalg.norm(e1)
        P = np.stack([e1, np.cross(a, e1)], axis=1)
        M = self._metric()
        A = P.T @ M @ P
        y0 = np.linalg.solve(A, P.T @ M @ self.position)
        rhs = 1.0 - self.position @ M @ self.position + y0 @ A @ y0
        w, V = np.linalg.eigh(A)
        radii = np.sqrt(np.maximum(rhs, 0.0) / w)
        R2 = np.column_stack([P @ V[:, 0], P @ V[:, 1], a])
        if np.linalg.det(R2) < 0:
            R2[:, 1] = -R2[:, 1]
        return Ellipsoid(position=P @ y0, rotation=R2, scale=np.array([radii[0], radii[1], 0.0]))

    def twist_interval(self, axis) -> tuple[float, float]:
        a = np.asarray(axis, np.float64)
        M = self._metric()
        c = self.position
        qa, qb, qc = a @ M @ a, a @ M @ c, c @ M @ c - 1.0
        disc = qb * qb - qa * qc
        mid = qb / qa
        if disc <= 0:
            return float(mid), float(mid)
        h = math.sqrt(disc) / qa
        return float(mid - h), float(mid + h)

    def pack(self) -> tuple:
        f = np.zeros(16)
        f[0:3], f[3:12], f[12:15], f[15] = self.position, self.rotation.reshape(-1), self.scale, self.radius()
        none3, none1 = np.zeros((0, 3)), np.zeros(0)
        return (ELLIPSOID, f, none3, none1, none1, none3, none1)

    def pack_section(self, axis) -> tuple:
        # a flat ellipse: inside-ness is decided on the in-plane coordinates only, so a swing
        # point's rounding-level offset from the plane does not count as a violation
        code, f, *rest = self.swing_section(axis).pack()
        return (ELLIPSE, f, *rest)

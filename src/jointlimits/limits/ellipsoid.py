"""Ellipsoid limits in the cloud's principal frame (the reference's fit), projected onto the
true surface by Newton's method; the swing section of an ellipsoid is a flat ellipse."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._native import _core
from ..errors import LimitsError
from . import cloud
from ._checks import (
    _EYE3,
    _ZERO3,
    _cloud,
    _flat_points,
    _frame,
    _local,
    _out_array,
    _padding,
    _points,
    _raise_bad_point,
    _vec,
    filled,
)
from .compiled import core_shape
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
    try:  # arrays already right: checked once in the compiled call (None: take the checked path)
        if type(iterations) is int and type(eps) is float:
            fast = _core.project_ellipsoid_fast(
                points,
                scale,
                eps,
                _ZERO3 if position is None else position,
                _EYE3 if rotation is None else rotation,
                iterations,
                out,
            )
            if isinstance(fast, np.ndarray):
                return fast
    except TypeError:  # not float64 C-contiguous arrays
        pass
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
    bad = _core.project_ellipsoid(flat, s, e, pos, rot, iters, res.reshape(-1, 3))
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
        self.scale = _scale(self.scale)

    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05) -> Ellipsoid:
        pos, rot = cloud.fit_frame(points, subsample)
        scale = fit_ellipsoid(points, pos, rot, padding)
        # the seed's semi-axes are the cloud's extents along each axis: points toward the corners
        # of that box lie outside. Grown uniformly until every training point is inside, plus
        # 1e-7 (radians), so that rounding in a swing section or a projection never puts a point
        # of the surface outside: a limit applied to the clip it was fitted on changes nothing.
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        if pts.shape[0] and np.all(scale > 0):
            r = float(np.sqrt(np.max(np.sum(((pts - pos) @ rot / scale) ** 2, axis=-1))))
            scale = scale * max(r, 1.0) * (1.0 + 1e-7) + 1e-7
        return cls(position=pos, rotation=rot, scale=scale)

    def project(self, points):
        return project_ellipsoid(points, self.scale, self.position, self.rotation)

    def contains(self, points, tolerance: float = 1e-9):
        return contains_ellipsoid(points, self.scale, self.position, self.rotation, tol=tolerance)

    def radius(self) -> float:
        return float(np.linalg.norm(self.position) + np.max(filled(self.scale, "scale")))

    def _metric(self) -> np.ndarray:
        s = np.maximum(filled(self.scale, "scale"), 1e-12)
        return self.rotation @ np.diag(1.0 / s**2) @ self.rotation.T

    def swing_section(self, axis) -> Ellipsoid:
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

    def _f(self) -> np.ndarray:
        """position, row-major rotation, scale, radius: the compiled ellipsoid's f[16]."""
        f = np.zeros(16)
        f[0:3], f[3:12], f[12:15], f[15] = self.position, self.rotation.reshape(-1), self.scale, self.radius()
        return f

    def compile(self):
        return core_shape("ellipsoid", self._f())

    def compile_section(self, axis):
        # a flat ellipse: inside-ness is decided on the in-plane coordinates only, so a swing
        # point's rounding-level offset from the plane does not count as a violation
        return core_shape("ellipse", self.swing_section(axis)._f())

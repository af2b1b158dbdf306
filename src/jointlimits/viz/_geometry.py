"""Drawable geometry of limit shapes in limit space (radians), shared by the PNG figures
(:mod:`.plots`), the HTML page (:mod:`.viewer`) and the studio: polytopes of slab shapes, outlines of
swing sections, the covers a limit measures a rotation on, and which shapes a fitted limit holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ..limits.coupled import CoupledLimit
from ..limits.ellipsoid import Ellipsoid
from ..limits.fit import relative_clouds
from ..limits.implicit import Implicit
from ..limits.joint import FittedLimit
from ..limits.shape import Shape
from ..motion.skeleton import Motion

Array = NDArray[np.float64]


# --------------------------------------------------------------------------- what a shape offers


@runtime_checkable
class Surfaced(Protocol):
    """A shape drawn as its own triangle mesh (an implicit limit's iso-surface)."""

    def surface(self, step: int = 1) -> tuple[Array, NDArray[np.int64]]: ...


@runtime_checkable
class Outlined(Protocol):
    """A shape whose section by a plane through the origin it outlines itself (an implicit limit)."""

    def outline(self, e1: Array, e2: Array, samples: int | None = None) -> Array | None: ...


@runtime_checkable
class Slabbed(Protocol):
    """A shape bounded by slabs ``mins <= axes . R^T (v - position) <= maxs`` (box, k-DOP)."""

    def slabs(self) -> tuple[Array, Array, Array, Array, Array]: ...


def slabs(shape: Shape) -> tuple[Array, Array, Array, Array, Array]:
    """``(position, rotation, axes, mins, maxs)`` of a slab shape (LimitsError for any other)."""
    if not isinstance(shape, Slabbed):
        raise LimitsError(f"cannot draw a {shape.kind!r} limit: not an ellipsoid, implicit or slab shape")
    return shape.slabs()


def swing_twist_shapes(limit: FittedLimit) -> tuple[Shape, Shape] | None:
    """The (swing, twist) shapes of a swing-twist fitted limit (None for a single-shape one)."""
    if limit.shape is not None or limit.swing is None or limit.twist is None:
        return None
    return limit.swing, limit.twist


def limit_kind(limit: FittedLimit) -> str:
    """``"<swing> swing + <twist> twist"`` or the single shape's kind."""
    parts = swing_twist_shapes(limit)
    if parts is not None:
        return f"{parts[0].kind} swing + {parts[1].kind} twist"
    return "" if limit.shape is None else limit.shape.kind


# --------------------------------------------------------------------------- meshes


def ellipsoid_mesh(shape: Ellipsoid, n_around: int = 48, n_rings: int = 24) -> tuple[Array, NDArray[np.int64]]:
    """A UV sphere mapped onto the ellipsoid: every vertex lies on its surface."""
    th = np.linspace(0.0, 2.0 * np.pi, n_around, endpoint=False)
    ph = np.linspace(0.0, np.pi, n_rings + 1)[1:-1]  # rings between the poles
    ring = np.stack(
        [np.outer(np.sin(ph), np.cos(th)), np.outer(np.sin(ph), np.sin(th)), np.outer(np.cos(ph), np.ones_like(th))],
        axis=-1,
    ).reshape(-1, 3)
    unit = np.vstack([[0.0, 0.0, 1.0], ring, [0.0, 0.0, -1.0]])
    verts = shape.position + (unit * np.asarray(shape.scale, np.float64)) @ shape.rotation.T
    tris = []
    top, bottom = 0, unit.shape[0] - 1
    nr = n_rings - 1

    def at(r: int, a: int) -> int:
        return 1 + r * n_around + a % n_around

    for a in range(n_around):
        tris.append((top, at(0, a), at(0, a + 1)))
        tris.append((bottom, at(nr - 1, a + 1), at(nr - 1, a)))
        for r in range(nr - 1):
            tris.append((at(r, a), at(r + 1, a), at(r + 1, a + 1)))
            tris.append((at(r, a), at(r + 1, a + 1), at(r, a + 1)))
    return verts, np.asarray(tris, np.int64)


# --------------------------------------------------------------------------- polytopes


def halfspaces(axes: Array, mins: Array, maxs: Array) -> Array:
    """Rows ``[A | b]`` with ``A y + b <= 0`` for ``mins |a|^2 <= a.y <= maxs |a|^2`` (zero rows dropped)."""
    aa = np.einsum("ij,ij->i", axes, axes)
    keep = np.linalg.norm(axes, axis=1) > 1e-12
    a, lo, hi = axes[keep], (mins * aa)[keep], (maxs * aa)[keep]
    return np.vstack([np.column_stack([a, -hi]), np.column_stack([-a, lo])])


def polytope(hs: Array) -> Array | None:
    """Vertices of ``{y : A y + b <= 0}`` (any dimension), or None when it is empty or flat."""
    from scipy.optimize import linprog
    from scipy.spatial import HalfspaceIntersection

    A, b = hs[:, :-1], hs[:, -1]
    d = A.shape[1]
    norms = np.linalg.norm(A, axis=1)
    # Chebyshev centre: the deepest interior point (HalfspaceIntersection needs one)
    res = linprog(
        np.r_[np.zeros(d), -1.0],
        A_ub=np.column_stack([A, norms]),
        b_ub=-b,
        bounds=[(None, None)] * d + [(0, None)],
        method="highs",
    )
    if not res.success or res.x[-1] <= 1e-9:
        return None
    try:
        return HalfspaceIntersection(hs, res.x[:d]).intersections
    except Exception:  # qhull: numerically degenerate polytope
        return None


def faces(vertices: Array) -> tuple[list[Array], Array]:
    """Convex hull of 3D points as planar polygons (coplanar hull triangles merged) and its points."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(vertices)
    groups: dict[tuple, set[int]] = {}
    for simplex, eq in zip(hull.simplices, hull.equations):
        key = tuple(np.round(eq, 6))
        groups.setdefault(key, set()).update(int(i) for i in simplex)
    out = []
    for key, idx in groups.items():
        pts = vertices[sorted(idx)]
        n = np.asarray(key[:3])
        c = pts.mean(axis=0)
        e1 = pts[0] - c
        e1 /= max(np.linalg.norm(e1), 1e-300)
        e2 = np.cross(n, e1)
        ang = np.arctan2((pts - c) @ e2, (pts - c) @ e1)
        out.append(pts[np.argsort(ang)])
    return out, vertices[hull.vertices]


def hull2d(points: Array) -> Array | None:
    """Closed outline (convex hull) of 2D points, or None if degenerate."""
    from scipy.spatial import ConvexHull

    if points.shape[0] < 3:
        return None
    try:
        h = ConvexHull(points)
    except Exception:
        return None
    v = points[h.vertices]
    return np.vstack([v, v[:1]])


# --------------------------------------------------------------------------- sections and covers


def plane_basis(axis: Array) -> tuple[Array, Array]:
    """Right-handed unit vectors (e1, e2) spanning the plane perpendicular to ``axis``."""
    e = np.zeros(3)
    e[int(np.argmin(np.abs(axis)))] = 1.0
    e1 = e - (e @ axis) * axis
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(axis, e1)


def ellipse_points(sec: Ellipsoid, count: int) -> Array:
    """``count`` points ``[count, 3]`` around a flat ellipsoid (a swing section), evenly spaced in
    angle from 0 to 2 pi (the last is the first, to rounding)."""
    th = np.linspace(0.0, 2.0 * np.pi, count)
    scale = np.asarray(sec.scale, np.float64)
    return (
        sec.position
        + np.outer(np.cos(th) * scale[0], sec.rotation[:, 0])
        + np.outer(np.sin(th) * scale[1], sec.rotation[:, 1])
    )


def section_outline(sec: Shape, e1: Array, e2: Array) -> Array | None:
    """The swing limit ``sec`` (a shape's section by the plane spanned by e1, e2, from
    :func:`~jointlimits.limits.model.swing_section`) as a closed 2D outline in (e1, e2) coordinates."""
    if isinstance(sec, Ellipsoid):
        pts = ellipse_points(sec, 121)
        return np.column_stack([pts @ e1, pts @ e2])
    if isinstance(sec, Outlined):  # an implicit limit: its iso-line in the plane
        return sec.outline(e1, e2)
    pos, rot, axes, mins, maxs = slabs(sec)
    # x = y1 e1 + y2 e2: a.R^T(x - pos) = (a R^T P) y - a.R^T pos
    P = np.column_stack([e1, e2])
    A = axes @ (rot.T @ P)
    off = axes @ (rot.T @ pos)
    aa = np.einsum("ij,ij->i", axes, axes)
    keep = np.linalg.norm(A, axis=1) > 1e-9
    hs = np.vstack(
        [np.column_stack([A[keep], -(maxs * aa + off)[keep]]), np.column_stack([-A[keep], (mins * aa + off)[keep]])]
    )
    v = polytope(hs)
    return None if v is None else hull2d(v)


def nearest_cover(shape: Shape | None, v: Array) -> Array:
    """Per point, ``v`` or the same rotation the long way round (``v - 2 pi v/|v|``), whichever is
    nearer to ``shape``: where the limit sees a rotation of another clip."""
    if shape is None or v.size == 0:
        return v
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    v2 = np.where(n > 1e-12, v - 2.0 * np.pi * v / np.where(n > 1e-12, n, 1.0), v)
    d1 = np.linalg.norm(shape.project(v) - v, axis=-1)
    d2 = np.linalg.norm(shape.project(v2) - v2, axis=-1)
    return np.where((d2 < d1)[..., None], v2, v)


def nearest_twist(t: Array, interval: tuple[float, float]) -> Array:
    """Twist angles shifted by a turn where that brings them nearer to ``interval``."""
    lo, hi = interval

    def dist(x: Array) -> Array:
        return np.abs(np.clip(x, lo, hi) - x)

    alt = np.where(t >= 0, t - 2.0 * np.pi, t + 2.0 * np.pi)
    return np.where(dist(alt) < dist(t), alt, t)


def coupled_surfaces(coupled: CoupledLimit, k: float, count: int = 3) -> list[Array]:
    """Iso-surface vertices of a coupled child's limit at up to ``count`` parent cells with their
    own field, the ones nearest the middle of the parent's grid first."""
    s = coupled.base.shape
    if not isinstance(s, Implicit):
        raise LimitsError(f"a coupled limit's own limit is implicit, not {type(s).__name__}")
    idx = np.argwhere(coupled.cells > 0)
    middle = (np.array(coupled.cells.shape) - 1) / 2.0
    used: list[int] = []
    for c in idx[np.argsort(np.linalg.norm(idx - middle, axis=1), kind="stable")]:
        f = int(coupled.cells[tuple(c)])
        if f not in used:
            used.append(f)
        if len(used) == count:
            break
    out = []
    for f in used:
        cell = Implicit(
            position=s.position,
            rotation=s.rotation,
            origin=s.origin if coupled.forigin is None else coupled.forigin,
            cell=s.cell if coupled.fcell is None else coupled.fcell,
            grid=coupled.fields[f],
            threshold=s.threshold,
        )
        out.append(cell.surface(step=1)[0] * k)
    return out


# --------------------------------------------------------------------------- clouds


def limit_cloud(ms: Sequence[Motion], joint: int, reference: Array) -> Array:
    """Limit-space points ``[F, 3]`` of one joint over clips (:func:`~jointlimits.limits.fit.relative_clouds`)."""
    out = relative_clouds(ms, joint, reference)
    if isinstance(out, tuple):  # only with a twist axis
        raise TypeError("relative_clouds gave (swing, twist) without a twist axis")
    return out


def swing_twist_clouds(ms: Sequence[Motion], joint: int, reference: Array, axis: Array) -> tuple[Array, Array]:
    """Swing and twist limit-space points ``[F, 3]`` of one joint over clips."""
    out = relative_clouds(ms, joint, reference, axis)
    if not isinstance(out, tuple):
        raise TypeError("relative_clouds gave one cloud for a twist axis")
    return out

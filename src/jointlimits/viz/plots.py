"""Figures of fitted joint limits and of how far clips go past them (PNG, matplotlib's Agg canvas).

Every function checks its inputs before drawing, writes the PNG to a temporary file in the
destination folder and renames it into place, so a failure never leaves a half-written figure;
each returns the path it wrote. Limit-space quantities are scaled angle axis vectors (the
rotation's angle times its axis, relative to the limit's reference rotation), shown in degrees
unless ``degrees=False``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write
from .._names import plot_label
from ..errors import LimitsError
from ..limits.fit import relative_clouds
from ..limits.joint import FittedLimit, swing_section, twist_interval
from ..limits.model import JointLimits
from ..limits.shape import Shape
from ..motion import quat
from ..motion.skeleton import Motion

__all__ = ["plot_joint_limit", "plot_violation_report", "plot_calibration", "shape_geometry", "JOINT_FIGSIZE", "DPI"]

Array = NDArray[np.float64]
JOINT_FIGSIZE = (16.0, 10.0)  # inches; at DPI this is 1600 x 1000 pixels
DPI = 100
_MAX_SCATTER = 6000  # points drawn per cloud (a deterministic subsample beyond that)

_C_CLIP, _C_PROJ, _C_OVER, _C_LIMIT, _C_OUT = "tab:blue", "tab:orange", "0.55", "tab:red", "magenta"


# --------------------------------------------------------------------------- files


def _figure(figsize: tuple[float, float], dpi: int) -> Any:
    """A pyplot-free figure on the Agg canvas (no global state, safe in threads)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: str | os.PathLike, dpi: int) -> Path:
    """Write ``fig`` as PNG atomically: temporary file beside ``path``, then rename."""
    p = Path(path)
    with atomic_write(p, binary=True) as fh:
        fig.savefig(fh, format="png", dpi=dpi)
    return p


# --------------------------------------------------------------------------- shape geometry


def _halfspaces(axes: Array, mins: Array, maxs: Array) -> Array:
    """Rows ``[A | b]`` with ``A y + b <= 0`` for ``mins |a|^2 <= a.y <= maxs |a|^2`` (zero rows dropped)."""
    aa = np.einsum("ij,ij->i", axes, axes)
    keep = np.linalg.norm(axes, axis=1) > 1e-12
    a, lo, hi = axes[keep], (mins * aa)[keep], (maxs * aa)[keep]
    return np.vstack([np.column_stack([a, -hi]), np.column_stack([-a, lo])])


def _polytope(hs: Array) -> Array | None:
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


def _faces(vertices: Array) -> tuple[list[Array], Array]:
    """Convex hull of 3D points as planar polygons (coplanar hull triangles merged) and its points."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(vertices)
    groups: dict[tuple, set[int]] = {}
    for simplex, eq in zip(hull.simplices, hull.equations):
        key = tuple(np.round(eq, 6))
        groups.setdefault(key, set()).update(int(i) for i in simplex)
    faces = []
    for key, idx in groups.items():
        pts = vertices[sorted(idx)]
        n = np.asarray(key[:3])
        c = pts.mean(axis=0)
        e1 = pts[0] - c
        e1 /= max(np.linalg.norm(e1), 1e-300)
        e2 = np.cross(n, e1)
        ang = np.arctan2((pts - c) @ e2, (pts - c) @ e1)
        faces.append(pts[np.argsort(ang)])
    return faces, vertices[hull.vertices]


def _coupled_surfaces(coupled: Any, k: float, count: int = 3) -> list[Array]:
    """Iso-surface vertices of a coupled child's limit at up to ``count`` parent cells with their
    own field, the ones nearest the middle of the parent's grid first."""
    from ..limits.implicit import Implicit

    s = coupled.base.shape
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
            origin=coupled.forigin,
            cell=coupled.fcell,
            grid=coupled.fields[f],
            threshold=s.threshold,
        )
        out.append(cell.surface(step=1)[0] * k)
    return out


def shape_geometry(shape: Shape) -> dict[str, Any]:
    """Drawable geometry of a limit shape in limit space (radians).

    Returns ``{"faces": [polygons [k, 3]], "lines": [polylines [k, 3]], "points": [N, 3]}``:
    faces of boxes and k-DOPs (the k-DOP polytope from the intersection of its half-spaces), a
    wireframe of meridians and parallels for an ellipsoid, and points whose convex hull is the
    shape (its outline in any 2D projection is the hull of their projection).
    """
    if shape.kind == "ellipsoid":
        th = np.linspace(0.0, 2.0 * np.pi, 49)
        ph = np.linspace(0.0, np.pi, 25)
        unit = np.stack(
            [
                np.outer(np.cos(th), np.sin(ph)),
                np.outer(np.sin(th), np.sin(ph)),
                np.outer(np.ones_like(th), np.cos(ph)),
            ],
            axis=-1,
        )  # [49, 25, 3]
        world = shape.position + (unit * shape.scale) @ shape.rotation.T
        lines = [world[i] for i in range(0, 48, 4)] + [world[:, k] for k in range(3, 24, 3)]
        return {"faces": [], "lines": lines, "points": world.reshape(-1, 3)}
    if hasattr(shape, "surface"):  # an implicit limit: its iso-surface (marching cubes)
        verts, tris = shape.surface()
        step = max(1, len(tris) // 3000)  # a drawable number of faces
        return {"faces": [verts[t] for t in tris[::step]], "lines": [], "points": verts}
    pos, rot, axes, mins, maxs = shape.slabs()
    local = _polytope(_halfspaces(axes, mins, maxs))
    if local is None:
        return {"faces": [], "lines": [], "points": np.zeros((0, 3))}
    verts = pos + local @ rot.T
    try:
        faces, pts = _faces(verts)
    except Exception:  # flat polytope: qhull cannot build a 3D hull
        return {"faces": [], "lines": [], "points": verts}
    return {"faces": faces, "lines": [np.vstack([f, f[:1]]) for f in faces], "points": pts}


def _hull2d(points: Array) -> Array | None:
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


def _plane_basis(axis: Array) -> tuple[Array, Array]:
    """Right-handed unit vectors (e1, e2) spanning the plane perpendicular to ``axis``."""
    e = np.zeros(3)
    e[int(np.argmin(np.abs(axis)))] = 1.0
    e1 = e - (e @ axis) * axis
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(axis, e1)


def _section_outline(sec: Shape, e1: Array, e2: Array) -> Array | None:
    """The swing limit ``sec`` (a shape's section by the plane spanned by e1, e2, from
    :func:`~jointlimits.limits.model.swing_section`) as a closed 2D outline in (e1, e2) coordinates."""
    if sec.kind == "ellipsoid":
        th = np.linspace(0.0, 2.0 * np.pi, 121)
        pts = (
            sec.position
            + np.outer(np.cos(th) * sec.scale[0], sec.rotation[:, 0])
            + np.outer(np.sin(th) * sec.scale[1], sec.rotation[:, 1])
        )
        return np.column_stack([pts @ e1, pts @ e2])
    if hasattr(sec, "outline"):  # an implicit limit: its iso-line in the plane
        return sec.outline(e1, e2)
    pos, rot, axes, mins, maxs = sec.slabs()
    # x = y1 e1 + y2 e2: a.R^T(x - pos) = (a R^T P) y - a.R^T pos
    P = np.column_stack([e1, e2])
    A = axes @ (rot.T @ P)
    off = axes @ (rot.T @ pos)
    aa = np.einsum("ij,ij->i", axes, axes)
    keep = np.linalg.norm(A, axis=1) > 1e-9
    hs = np.vstack(
        [np.column_stack([A[keep], -(maxs * aa + off)[keep]]), np.column_stack([-A[keep], (mins * aa + off)[keep]])]
    )
    v = _polytope(hs)
    return None if v is None else _hull2d(v)


# --------------------------------------------------------------------------- drawing helpers


def _thin(points: Array, n: int = _MAX_SCATTER) -> Array:
    """At most ``n`` evenly spaced rows (deterministic)."""
    if points.shape[0] <= n:
        return points
    return points[np.linspace(0, points.shape[0] - 1, n).astype(int)]


def _equal_3d(ax: Any, clouds: Sequence[Array]) -> None:
    allp = np.vstack([c for c in clouds if c.size]) if any(c.size for c in clouds) else np.zeros((1, 3))
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    c, r = 0.5 * (lo + hi), 0.5 * max(float(np.max(hi - lo)), 1e-6) * 1.05
    ax.set_xlim(c[0] - r, c[0] + r)
    ax.set_ylim(c[1] - r, c[1] + r)
    ax.set_zlim(c[2] - r, c[2] + r)
    ax.set_box_aspect((1, 1, 1))


def _draw_shape_3d(ax: Any, geo: dict[str, Any], k: float, label: str) -> None:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    if geo["faces"]:
        ax.add_collection3d(
            Poly3DCollection([f * k for f in geo["faces"]], facecolor=_C_LIMIT, alpha=0.08, edgecolor="none")
        )
    for i, line in enumerate(geo["lines"]):
        ax.plot(*(line * k).T, color=_C_LIMIT, lw=0.8, alpha=0.8, label=label if i == 0 else None)


def _scatter_3d(
    ax: Any, pts: Array, color: str, label: str, size: float = 4.0, alpha: float = 0.6, marker: str = "o"
) -> None:
    if pts.size:
        p = _thin(pts)
        ax.scatter(
            p[:, 0],
            p[:, 1],
            p[:, 2],
            s=size,
            c=color,
            alpha=alpha,
            depthshade=False,
            label=label,
            linewidths=0 if marker == "o" else 0.9,
            marker=marker,
        )


def _scatter_2d(
    ax: Any, pts: Array, color: str, label: str | None, size: float = 4.0, alpha: float = 0.6, marker: str = "o"
) -> None:
    if pts.size:
        p = _thin(pts)
        ax.scatter(
            p[:, 0],
            p[:, 1],
            s=size,
            c=color,
            alpha=alpha,
            label=label,
            linewidths=0 if marker == "o" else 0.9,
            marker=marker,
        )


def _outside_label(inside: NDArray[np.bool_]) -> str:
    return f"outside the limit ({int((~inside).sum())} frames)"


def _outline_2d(ax: Any, outline: Array | None, label: str | None) -> None:
    if outline is not None:
        ax.fill(outline[:, 0], outline[:, 1], color=_C_LIMIT, alpha=0.08, lw=0)
        ax.plot(outline[:, 0], outline[:, 1], color=_C_LIMIT, lw=1.2, label=label)


def _nearest_cover(shape: Shape | None, v: Array) -> Array:
    """Per point, ``v`` or the same rotation the long way round (``v - 2 pi v/|v|``), whichever is
    nearer to ``shape``: where the limit sees a rotation of another clip."""
    if shape is None or v.size == 0:
        return v
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    v2 = np.where(n > 1e-12, v - 2.0 * np.pi * v / np.where(n > 1e-12, n, 1.0), v)
    d1 = np.linalg.norm(shape.project(v) - v, axis=-1)
    d2 = np.linalg.norm(shape.project(v2) - v2, axis=-1)
    return np.where((d2 < d1)[..., None], v2, v)


def _nearest_twist(t: Array, interval: tuple[float, float]) -> Array:
    """Twist angles shifted by a turn where that brings them nearer to ``interval``."""
    lo, hi = interval

    def dist(x: Array) -> Array:
        return np.abs(np.clip(x, lo, hi) - x)

    alt = np.where(t >= 0, t - 2.0 * np.pi, t + 2.0 * np.pi)
    return np.where(dist(alt) < dist(t), alt, t)


def _clip_bounds(ms: Sequence[Motion]) -> list[int]:
    return [int(b) for b in np.cumsum([m.num_frames for m in ms])[:-1]]


def _quat_panels(
    fig: Any, spec_before: Any, spec_after: Any, rel: Array, ranges: list[tuple[int, int]], bounds: list[int]
) -> None:
    """The seed's "before unroll" / "after unroll" plots of relative quaternion components."""
    after = quat.unroll(rel, ranges=ranges)
    flipped = np.sum(after * rel, axis=-1) < 0
    starts = np.zeros(rel.shape[0], bool)
    starts[[a for a, _ in ranges]] = True
    changes = int(np.sum((flipped[1:] != flipped[:-1]) & ~starts[1:]) + np.sum(flipped & starts))
    frames = np.arange(rel.shape[0])
    for spec, data, title in (
        (spec_before, rel, "before unroll"),
        (spec_after, after, f"after unroll ({changes} cover switch{'es' if changes != 1 else ''} removed)"),
    ):
        ax = fig.add_subplot(spec)
        for c, name in enumerate("wxyz"):
            ax.plot(frames, data[:, c], lw=0.9, label=name)
        for b in bounds:
            ax.axvline(b, color="k", lw=0.6, ls=":", alpha=0.6)
        ax.set_ylim(-1.05, 1.05)
        ax.set_xlim(0, max(1, rel.shape[0] - 1))
        ax.axhline(0.0, color="k", lw=0.4, alpha=0.4)
        ax.set_xlabel("frame" + (" (dotted lines: clip boundaries)" if bounds else ""))
        ax.set_ylabel("component of inv(reference) * q")
        ax.set_title(f"relative rotation, {title}")
        ax.legend(loc="upper right", ncol=4, fontsize=8)
        ax.grid(alpha=0.25)


def _as_list(motions: Motion | Sequence[Motion]) -> list[Motion]:
    ms = [motions] if isinstance(motions, Motion) else list(motions)
    if not ms:
        raise LimitsError("no motions to plot")
    return ms


# --------------------------------------------------------------------------- figures


def plot_joint_limit(
    limits: JointLimits,
    motions: Motion | Sequence[Motion],
    joint: str | int,
    path: str | os.PathLike,
    projected: Motion | None = None,
    *,
    over_rotated: Motion | None = None,
    degrees: bool = True,
    figsize: tuple[float, float] = JOINT_FIGSIZE,
    dpi: int = DPI,
) -> Path:
    """One joint's limit, as in the seed: its limit-space point cloud over ``motions`` with the
    fitted limit surface, and the relative quaternion components before/after unrolling.

    Top row: a 3D view and the three 2D projections (xy, xz, yz) of the cloud and the shape (box
    and oriented box as edges, ellipsoid as a wireframe, k-DOP as its polytope). With swing-twist:
    the swing cloud in 3D with its 3D shape, the swing in its plane (perpendicular to the twist
    axis) with the swing limit actually used there, and the twist angle over time with its
    interval. ``projected`` (e.g. an over-rotated clip after ``limits.apply``) is drawn in orange,
    ``over_rotated`` (the same clip before limiting) in grey. Bottom row: the components of
    ``inv(reference) q`` before and after unrolling.

    Raises SkeletonError for an unknown joint, LimitsError if the joint has no limit or a clip
    belongs to another skeleton; nothing is written then.
    """
    ms = _as_list(motions)
    sk = limits.skeleton
    j = sk.index(joint)
    lim = limits.joint(j)
    for m in ms + [x for x in (projected, over_rotated) if x is not None]:
        limits.check_skeleton(m.skeleton)
    name = sk.names[j]
    k = float(np.degrees(1.0)) if degrees else 1.0
    unit = "deg" if degrees else "rad"
    coupled = lim if hasattr(lim, "base") and hasattr(lim, "parent") else None
    if coupled is not None:  # a parent-conditioned child: its own limit, plus a few parent cells' limits
        lim = coupled.base
    ref = np.asarray(getattr(lim, "reference", quat.identity()), np.float64)
    fitted = isinstance(lim, FittedLimit)
    swing_twist = fitted and lim.swing_twist
    axis = np.asarray(lim.twist_axis if fitted else getattr(lim, "axis", (1.0, 0.0, 0.0)), np.float64)

    qs = np.concatenate([m.rotations[:, j] for m in ms], axis=0)
    if coupled is not None:
        qp = np.concatenate([m.rotations[:, sk.index(coupled.parent)] for m in ms], axis=0)
        inside = coupled.contains(qs, parent=qp)
    else:
        inside = lim.contains(qs)
    extra = [x for x in (over_rotated, projected) if x is not None]
    bounds = _clip_bounds(ms)
    ranges = list(zip([0] + bounds, bounds + [qs.shape[0]]))

    fig = _figure(figsize, dpi)
    gs = fig.add_gridspec(
        2, 4, height_ratios=(1.25, 1.0), hspace=0.3, wspace=0.38, left=0.05, right=0.98, top=0.91, bottom=0.06
    )
    kind = (
        f"implicit coupled to {coupled.parent}"
        if coupled is not None
        else lim.kind
        if not fitted
        else (f"{lim.swing.kind} swing + {lim.twist.kind} twist" if swing_twist else lim.shape.kind)
    )
    title = (
        f"{plot_label(name)}: {kind} limit · {qs.shape[0]} frames in {len(ms)} clip{'s' if len(ms) != 1 else ''} · "
        f"{100.0 * inside.mean():.1f}% inside"
    )
    if projected is not None and coupled is not None:
        pin = coupled.contains(projected.rotations[:, j], parent=projected.rotations[:, sk.index(coupled.parent)])
        title += f" · projected clip: {projected.num_frames} frames, {100.0 * pin.mean():.1f}% inside"
    elif projected is not None:
        pin = lim.contains(projected.rotations[:, j])
        title += f" · projected clip: {projected.num_frames} frames, {100.0 * pin.mean():.1f}% inside"
    fig.suptitle(title, fontsize=13)

    if not swing_twist:
        cloud = relative_clouds(ms, j, ref) * k
        others = [_nearest_cover(lim.shape if fitted else None, relative_clouds([x], j, ref)) * k for x in extra]
        geo = shape_geometry(lim.shape) if fitted else {"faces": [], "lines": [], "points": np.zeros((0, 3))}
        surf = geo["points"] * k
        cell_surfaces = _coupled_surfaces(coupled, k) if coupled is not None else []
        ax3 = fig.add_subplot(gs[0, 0], projection="3d")
        _scatter_3d(ax3, cloud, _C_CLIP, "clip")
        _scatter_3d(ax3, cloud[~inside], _C_OUT, _outside_label(inside), size=14.0, alpha=0.9, marker="x")
        styles = [(_C_OVER, "over-rotated")] if over_rotated is not None else []
        styles += [(_C_PROJ, "projected")] if projected is not None else []
        for pts, (col, lab) in zip(others, styles):
            _scatter_3d(ax3, pts, col, lab, size=4.0, alpha=0.6)
        _draw_shape_3d(ax3, geo, k, "limit")
        _equal_3d(ax3, [cloud, surf] + others)
        for setter, a in ((ax3.set_xlabel, "x"), (ax3.set_ylabel, "y"), (ax3.set_zlabel, "z")):
            setter(f"{a} ({unit})")
        ax3.set_title("scaled angle axis, 3D")
        ax3.legend(loc="upper left", fontsize=7, markerscale=3)
        for col, (a, b) in enumerate(((0, 1), (0, 2), (1, 2)), start=1):
            ax = fig.add_subplot(gs[0, col])
            _scatter_2d(ax, cloud[:, [a, b]], _C_CLIP, "clip")
            _scatter_2d(
                ax,
                cloud[~inside][:, [a, b]],
                _C_OUT,
                _outside_label(inside) if col == 1 else None,
                size=14.0,
                alpha=0.9,
                marker="x",
            )
            for pts, (c, lab) in zip(others, styles):
                _scatter_2d(ax, pts[:, [a, b]], c, lab, size=4.0, alpha=0.6)
            _outline_2d(ax, _hull2d(surf[:, [a, b]]) if surf.size else None, "limit (outline)")
            for n, cs in enumerate(cell_surfaces):
                o = _hull2d(cs[:, [a, b]]) if len(cs) else None
                if o is not None:
                    ax.plot(
                        o[:, 0],
                        o[:, 1],
                        lw=0.9,
                        ls="--",
                        color=f"C{4 + n}",
                        label=f"at parent cell {n + 1}" if col == 1 else None,
                    )
            ax.set_xlabel(f"{'xyz'[a]} ({unit})")
            ax.set_ylabel(f"{'xyz'[b]} ({unit})")
            ax.set_title(f"{'xyz'[a]}{'xyz'[b]} projection")
            ax.set_aspect("equal", adjustable="datalim")
            ax.grid(alpha=0.25)
            if col == 1:
                ax.legend(loc="best", fontsize=7, markerscale=3)
        if not fitted:
            ax3.text2D(0.02, 0.02, f"{lim.kind} limit: surface not drawn", transform=ax3.transAxes, fontsize=8)
    else:
        sw, tw = relative_clouds(ms, j, ref, axis)
        sec = swing_section(lim.swing, axis)
        tint = twist_interval(lim.twist, axis)
        ex = []
        for x in extra:  # each frame on the cover the limit itself measures it on
            s_, t_ = relative_clouds([x], j, ref, axis)
            ex.append((_nearest_cover(sec, s_), _nearest_twist(t_ @ axis, tint)[:, None] * axis))
        styles = [(_C_OVER, "over-rotated")] if over_rotated is not None else []
        styles += [(_C_PROJ, "projected")] if projected is not None else []
        geo = shape_geometry(lim.swing)
        ax3 = fig.add_subplot(gs[0, 0], projection="3d")
        _scatter_3d(ax3, sw * k, _C_CLIP, "clip swing")
        _scatter_3d(ax3, sw[~inside] * k, _C_OUT, _outside_label(inside), size=14.0, alpha=0.9, marker="x")
        for (s, _), (col, lab) in zip(ex, styles):
            _scatter_3d(ax3, s * k, col, lab, size=4.0, alpha=0.6)
        _draw_shape_3d(ax3, geo, k, "fitted swing shape")
        ax3.plot(*np.outer([-1.0, 1.0], axis * np.abs(sw * k).max()).T, color="k", lw=1.0, ls="--", label="twist axis")
        _equal_3d(ax3, [sw * k, geo["points"] * k] + [s * k for s, _ in ex])
        for setter, a in ((ax3.set_xlabel, "x"), (ax3.set_ylabel, "y"), (ax3.set_zlabel, "z")):
            setter(f"{a} ({unit})")
        ax3.set_title("swing, scaled angle axis 3D")
        ax3.legend(loc="upper left", fontsize=7, markerscale=3)

        e1, e2 = _plane_basis(axis)
        axp = fig.add_subplot(gs[0, 1])
        _scatter_2d(axp, np.column_stack([sw @ e1, sw @ e2]) * k, _C_CLIP, "clip")
        _scatter_2d(
            axp,
            np.column_stack([sw[~inside] @ e1, sw[~inside] @ e2]) * k,
            _C_OUT,
            _outside_label(inside),
            size=14.0,
            alpha=0.9,
            marker="x",
        )
        for (s, _), (col, lab) in zip(ex, styles):
            _scatter_2d(axp, np.column_stack([s @ e1, s @ e2]) * k, col, lab, size=4.0, alpha=0.6)
        outline = _section_outline(sec, e1, e2)
        _outline_2d(axp, None if outline is None else outline * k, "swing limit")
        axp.set_xlabel(f"swing along e1 ({unit})")
        axp.set_ylabel(f"swing along e2 ({unit})")
        axp.set_title("swing in the plane perpendicular to the twist axis")
        axp.set_aspect("equal", adjustable="datalim")
        axp.grid(alpha=0.25)
        axp.legend(loc="best", fontsize=7, markerscale=3)

        axt = fig.add_subplot(gs[0, 2:])
        t = tw @ axis
        axt.plot(np.arange(t.shape[0]), t * k, ".", ms=2.0, color=_C_CLIP, label="clip twist")
        if (~inside).any():
            out_f = np.flatnonzero(~inside)
            axt.plot(out_f, t[out_f] * k, "x", ms=4.0, color=_C_OUT, label=_outside_label(inside))
        for (_, tt), (col, lab) in zip(ex, styles):
            axt.plot(np.arange(tt.shape[0]), (tt @ axis) * k, ".", ms=2.5, color=col, label=lab)
        lo, hi = tint
        axt.axhspan(lo * k, hi * k, color=_C_LIMIT, alpha=0.08)
        for v in (lo, hi):
            axt.axhline(v * k, color=_C_LIMIT, lw=1.2)
        axt.plot([], [], color=_C_LIMIT, lw=1.2, label=f"twist limit [{lo * k:.1f}, {hi * k:.1f}] {unit}")
        for b in bounds:
            axt.axvline(b, color="k", lw=0.6, ls=":", alpha=0.6)
        axt.set_xlabel("frame")
        axt.set_ylabel(f"twist about the bone axis ({unit})")
        axt.set_title(f"twist, axis ({axis[0]:.2f}, {axis[1]:.2f}, {axis[2]:.2f})")
        axt.grid(alpha=0.25)
        axt.legend(loc="upper right", fontsize=7, markerscale=3)

    rel = quat.inv_mul(ref, qs)
    _quat_panels(fig, gs[1, 0:2], gs[1, 2:4], rel, ranges, bounds)
    return _save(fig, path, dpi)


def plot_violation_report(
    limits: JointLimits,
    motion: Motion,
    path: str | os.PathLike,
    projected: Motion | None = None,
    *,
    figsize: tuple[float, float] | None = None,
    dpi: int = DPI,
) -> Path:
    """Per joint with an active limit, the fraction of ``motion``'s frames outside it and the
    largest violation in degrees, as horizontal bars sorted worst first; with ``projected`` (the
    clip after limiting) its bars are drawn beside them.

    Raises LimitsError if the clips belong to another skeleton or no joint has a limit.
    """
    limits.check_skeleton(motion.skeleton)
    if projected is not None:
        limits.check_skeleton(projected.skeleton)
    joints = limits.active()
    if not joints:
        raise LimitsError("no joint has an active limit: nothing to report")
    sets = [("clip", motion, "tab:red")] + ([("projected", projected, "tab:green")] if projected is not None else [])
    frac, worst = [], []
    for _, m, _ in sets:
        q = m.rotations
        frac.append(1.0 - limits.contains(q)[:, joints].mean(axis=0))
        worst.append(np.degrees(limits.violation(q)[:, joints].max(axis=0)) if m.num_frames else np.zeros(len(joints)))
    order = np.lexsort((-worst[0], -frac[0]))  # worst first: by fraction outside, then max violation
    names = [limits.skeleton.names[joints[i]] for i in order]
    n = len(joints)
    if figsize is None:
        figsize = (12.0, max(4.0, 0.3 * n + 1.8))
    fig = _figure(figsize, dpi)
    gs = fig.add_gridspec(1, 2, wspace=0.08, left=0.13, right=0.97, top=1.0 - 1.0 / figsize[1], bottom=0.7 / figsize[1])
    ax_f = fig.add_subplot(gs[0, 0])
    ax_v = fig.add_subplot(gs[0, 1], sharey=ax_f)
    y = np.arange(n)[::-1]  # worst at the top
    h = 0.8 / len(sets)
    for s, (label, m, color) in enumerate(sets):
        off = (s - (len(sets) - 1) / 2) * h
        note = ", all inside" if not np.any(frac[s] > 0) else ""
        ax_f.barh(
            y - off,
            100.0 * frac[s][order],
            height=h,
            color=color,
            alpha=0.8,
            label=f"{label} ({m.num_frames} frames{note})",
        )
        ax_v.barh(y - off, worst[s][order], height=h, color=color, alpha=0.8, label=label)
        for yy, v, f in zip(y - off, worst[s][order], frac[s][order]):
            if v >= 0.05:
                ax_v.text(v, yy, f" {v:.1f}", va="center", fontsize=7)
            if f > 0:
                ax_f.text(min(100.0 * f, 88.0), yy, f" {100.0 * f:.0f}%", va="center", fontsize=7)
    ax_f.set_yticks(y)
    ax_f.set_yticklabels([plot_label(n) for n in names], fontsize=8)
    ax_f.set_xlim(0, 100)
    ax_f.set_xlabel("frames outside the limit (%)")
    ax_v.set_xlabel("largest violation (deg)")
    ax_v.tick_params(labelleft=False)
    xmax = max(float(max(w.max() for w in worst)), 1.0)
    ax_v.set_xlim(0, xmax * 1.15)
    for ax in (ax_f, ax_v):
        ax.grid(axis="x", alpha=0.3)
        ax.set_ylim(-0.7, n - 0.3)
    ax_f.legend(loc="lower right", fontsize=8)
    totals = [
        100.0 * (1.0 - limits.contains(m.rotations)[:, joints].all(axis=1).mean()) if m.num_frames else 0.0
        for _, m, _ in sets
    ]
    text = (
        f"Joint limit violations, worst first ({n} limited joints)\nframes with a joint outside: clip {totals[0]:.1f}%"
    )
    if projected is not None:
        text += f", projected clip {totals[1]:.1f}%"
    fig.suptitle(text, fontsize=12)
    return _save(fig, path, dpi)


# --------------------------------------------------------------------------- before / after


def _one_cover(q: Array, ref: Array) -> Array:
    """``q`` [F, 4] on the cover of ``ref`` [F, 4]: where they are the same rotation, ``ref``'s
    sign; through a run of frames where they differ, continued from the frame before the run
    (so a repaired flip draws as the smooth curve it is, not as a jump between covers)."""
    out = np.where(np.sum(q * ref, axis=-1, keepdims=True) < 0.0, -q, q)
    same = quat.angle(q, ref) < 1e-9
    for t in np.nonzero(~same)[0]:
        if t > 0 and np.dot(out[t], out[t - 1]) < 0.0:
            out[t] = -out[t]
    return out


def changed_span(before: Motion, after: Motion, joint: int, margin: int = 15) -> tuple[int, int] | None:
    """(start, stop) of the frames around the run of changed frames of ``joint`` that holds its
    largest change, widened by ``margin``; None when nothing changed."""
    d = quat.angle(quat.normalize(before.rotations[:, joint]), quat.normalize(after.rotations[:, joint]))
    ch = np.any(before.rotations[:, joint] != after.rotations[:, joint], axis=-1)
    if not ch.any():
        return None
    k = int(np.argmax(np.where(ch, d, -1.0)))
    a = b = k
    while a > 0 and ch[a - 1]:
        a -= 1
    while b + 1 < len(ch) and ch[b + 1]:
        b += 1
    return max(0, a - margin), min(len(ch), b + 1 + margin)


def plot_before_after(
    before: Motion,
    after: Motion,
    joint: str,
    path: str | os.PathLike,
    changed_by: str = "filtering",
    frames: Sequence[int] | slice | None = None,
    cuts: Sequence[int] | None = None,
) -> Path:
    """PNG of a joint's local rotation (scaled angle axis, degrees) and angular speed before
    (dashed) and after (solid) ``changed_by`` (the command that changed the clip: its title), with a
    zoom onto the frames it changed. Both curves are drawn on one quaternion cover: ``before``
    unrolled along the clip, ``after`` on ``before``'s sign where they agree and continued through
    the frames it changed, so an unchanged frame draws on the same point."""
    if before.num_frames != after.num_frames:
        raise LimitsError(f"before has {before.num_frames} frames, after {after.num_frames}")
    j = before.skeleton.index(joint)
    F = before.num_frames
    if frames is None:
        sl = slice(0, F)
    elif isinstance(frames, slice):
        sl = frames
    else:
        fr = list(frames)
        if len(fr) != 2:
            raise LimitsError("frames must be a slice or (start, stop)")
        sl = slice(int(fr[0]), int(fr[1]))
    idx = np.arange(F)[sl]
    if idx.size == 0:
        raise LimitsError(f"frame range {sl} selects no frames of {F}")
    q0 = quat.unroll(quat.normalize(before.rotations[:, j])[:, None], axis=0)[:, 0]
    q1 = _one_cover(quat.normalize(after.rotations[:, j]), q0)
    aa = [np.degrees(quat.to_scaled_angle_axis(q)) for q in (q0, q1)]
    sp = []
    for q in (q0, q1):
        s = np.zeros(F)
        s[1:] = np.degrees(quat.angle(q[1:], q[:-1]))
        sp.append(s)
    zoom = changed_span(before, after, j)
    fig = _figure((11.0, 9.0 if zoom else 6.0), DPI)
    rows = 3 if zoom else 2
    axes = [fig.add_subplot(rows, 1, r + 1) for r in range(rows)]
    names = "xyz"
    for k, (style, label) in enumerate((("--", "before"), ("-", "after"))):
        for c in range(3):
            axes[0].plot(idx, aa[k][idx, c], style, color=f"C{c}", lw=1.0, label=f"{names[c]} {label}")
            if zoom:
                zi = np.arange(*zoom)
                axes[2].plot(zi, aa[k][zi, c], style, color=f"C{c}", lw=1.2, marker="." if k else None, ms=3)
        axes[1].plot(idx, sp[k][idx], style, color="C3" if k == 0 else "C0", lw=1.0, label=label)
    for c in cuts or []:
        for ax, rng in ((axes[0], idx), (axes[1], idx)) + (((axes[2], np.arange(*zoom)),) if zoom else ()):
            if rng.size and rng[0] <= c <= rng[-1]:
                ax.axvline(c, color="k", lw=0.8, alpha=0.5)
    if zoom:
        axes[0].axvspan(zoom[0], zoom[1] - 1, color="0.85", zorder=0)
        axes[2].set_title(f"zoom: frames {zoom[0]}-{zoom[1] - 1} (the largest change)", fontsize=9)
        axes[2].set_ylabel("deg")
    axes[0].set_ylabel("rotation (scaled angle axis, deg)")
    axes[1].set_ylabel("angular speed (deg/frame)")
    axes[-1].set_xlabel("frame")
    axes[0].set_title(f"{plot_label(before.skeleton.names[j])}: before (dashed) / after (solid) {changed_by}")
    axes[0].legend(ncol=3, fontsize=7)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, path, DPI)


def plot_calibration(
    rows: Sequence[dict[str, Any]],
    path: str | os.PathLike,
    title: str = "",
    *,
    figsize: tuple[float, float] = (7.0, 6.0),
    dpi: int = DPI,
) -> Path:
    """Each calibrated joint's measured recall on clips against the expected recall its limits
    file stores (rows of :meth:`JointLimits.report` with ``expected_recall``), the spread as
    error bars; joints below the diagonal measured less than expected and are named."""
    rs = [r for r in rows if "expected_recall" in r]
    if not rs:
        raise LimitsError("these limits store no expected recall (fit them with a target recall)")
    e = np.array([r["expected_recall"] for r in rs])
    m = np.array([r["recall"] for r in rs])
    s = np.array([r["expected_spread"] for r in rs])
    fig = _figure(figsize, dpi)
    ax = fig.add_subplot(1, 1, 1)
    lo = float(min(e.min(), m.min()))
    lo = max(0.0, lo - 0.1 * (1.0 - lo) - 1e-3)
    ax.plot([lo, 1.0], [lo, 1.0], ls="--", c="0.5", lw=1, label="measured = expected")
    below = m < e
    ax.errorbar(e[~below], m[~below], xerr=s[~below], fmt="o", c=_C_CLIP, ms=4, lw=0.8, label="at or above")
    ax.errorbar(e[below], m[below], xerr=s[below], fmt="o", c=_C_LIMIT, ms=4, lw=0.8, label="below expected")
    for r, x, y in zip(rs, e, m):
        if y < x:
            ax.annotate(plot_label(r["joint"]), (x, y), textcoords="offset points", xytext=(4, -8), fontsize=7)
    ax.set_xlim(lo, 1.0)
    ax.set_ylim(lo, 1.0)
    ax.set_xlabel("expected recall (stored; bars: spread over folds)")
    ax.set_ylabel("measured recall (fraction of frames inside)")
    ax.set_title(title or f"{int(below.sum())} of {len(rs)} joints below their expected recall", fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig, path, dpi)

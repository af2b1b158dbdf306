"""An interactive HTML page of fitted joint limits (plotly): turn them around in 3D, switch joints.

:func:`write_limits_page` draws, per joint with an active limit, the clip's rotations of that joint
in limit space (the scaled angle axis of ``inv(reference) q``, in degrees) with the frames outside
the limit in another colour, and the limit surface; a dropdown switches the joint. The page holds
plotly.js inline, so it is one self-contained file that works offline.

:func:`limit_surface` and :func:`swing_twist_geometry` give the drawn geometry (in radians) for
use elsewhere.
"""

from __future__ import annotations

import errno
import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write
from .._names import html_text
from ..errors import LimitsError
from ..limits.fit import relative_clouds
from ..limits.joint import FittedLimit, swing_section, twist_interval
from ..limits.model import JointLimits
from ..limits.shape import Shape
from ..motion import quat
from ..motion.skeleton import Motion
from .plots import _nearest_cover, _nearest_twist, _plane_basis, _section_outline, shape_geometry

__all__ = ["write_limits_page", "limit_surface", "swing_twist_geometry", "DEFAULT_MAX_POINTS", "DIV_ID"]

Array = NDArray[np.float64]
DEFAULT_MAX_POINTS = 3000
DIV_ID = "jointlimits-view"  # the plot's <div> id in the page
_DEG = float(np.degrees(1.0))
_TOLERANCE = 1e-6  # radians; JointLimits.contains' and report()'s default

_C_IN, _C_OUT, _C_LIMIT, _C_EDGE, _C_AXIS = "#1f77b4", "#d62728", "#2ca02c", "#196619", "#444444"


# --------------------------------------------------------------------------- geometry (radians)


def _ellipsoid_mesh(shape: Shape, n_around: int = 48, n_rings: int = 24) -> tuple[Array, NDArray[np.int64]]:
    """A UV sphere mapped onto the ellipsoid: every vertex lies on its surface."""
    th = np.linspace(0.0, 2.0 * np.pi, n_around, endpoint=False)
    ph = np.linspace(0.0, np.pi, n_rings + 1)[1:-1]  # rings between the poles
    ring = np.stack(
        [np.outer(np.sin(ph), np.cos(th)), np.outer(np.sin(ph), np.sin(th)), np.outer(np.cos(ph), np.ones_like(th))],
        axis=-1,
    ).reshape(-1, 3)
    unit = np.vstack([[0.0, 0.0, 1.0], ring, [0.0, 0.0, -1.0]])
    verts = shape.position + (unit * shape.scale) @ shape.rotation.T
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


def limit_surface(shape: Shape) -> dict[str, Any]:
    """A 3D limit shape as a triangle mesh and edges, in limit space (radians).

    Returns ``{"vertices": [N, 3], "triangles": [M, 3] indices, "lines": [polylines [k, 3]]}``.
    Ellipsoid: a UV sphere mapped onto it (every vertex on the surface) and a wireframe of
    meridians and parallels. Box, oriented box and k-DOP: the polytope (intersection of the
    slabs' half-spaces, :func:`jointlimits.viz.plots.shape_geometry`), its convex-hull triangles and
    its face outlines. A flat or empty polytope gives no triangles.
    """
    if shape.kind == "ellipsoid":
        verts, tris = _ellipsoid_mesh(shape)
        return {"vertices": verts, "triangles": tris, "lines": shape_geometry(shape)["lines"]}
    if hasattr(shape, "surface"):  # an implicit limit: its marching-cubes iso-surface
        verts, tris = shape.surface()
        return {"vertices": verts, "triangles": tris, "lines": []}
    geo = shape_geometry(shape)
    verts = np.asarray(geo["points"], np.float64).reshape(-1, 3)
    if not geo["faces"] or verts.shape[0] < 4:
        return {"vertices": verts, "triangles": np.zeros((0, 3), np.int64), "lines": geo["lines"]}
    from scipy.spatial import ConvexHull

    hull = ConvexHull(verts)
    return {"vertices": verts, "triangles": np.asarray(hull.simplices, np.int64), "lines": geo["lines"]}


def swing_twist_geometry(limit: FittedLimit) -> dict[str, Any]:
    """What a swing-twist limit allows, in limit space (radians): the swing section (the swing
    shape cut by the plane perpendicular to the twist axis, where swing points live) as a flat
    polygon, and the twist interval on the axis.

    Returns ``{"outline": [k, 3] closed outline of the section (or an empty array),
    "vertices": [k, 3] (outline points, then the centroid), "triangles": [k - 1, 3] fan,
    "twist": (lo, hi) in radians along the axis, "axis": [3]}``. For an ellipsoid the outline
    points lie on the fitted 3D ellipsoid; for the other shapes, on its slabs.
    """
    if not (isinstance(limit, FittedLimit) and limit.swing_twist):
        raise LimitsError("swing_twist_geometry needs a fitted swing-twist limit")
    axis = limit.twist_axis
    sec = swing_section(limit.swing, axis)
    if sec.kind == "ellipsoid":  # a flat ellipse: its points in 3D directly (exact, no round trip)
        th = np.linspace(0.0, 2.0 * np.pi, 97)
        outline = (
            sec.position
            + np.outer(np.cos(th) * sec.scale[0], sec.rotation[:, 0])
            + np.outer(np.sin(th) * sec.scale[1], sec.rotation[:, 1])
        )
        outline[-1] = outline[0]
    else:
        e1, e2 = _plane_basis(axis)
        flat = _section_outline(sec, e1, e2)
        outline = np.zeros((0, 3)) if flat is None else np.outer(flat[:, 0], e1) + np.outer(flat[:, 1], e2)
    if outline.shape[0] >= 4:
        ring = outline[:-1]
        n = ring.shape[0]
        verts = np.vstack([ring, ring.mean(axis=0)])
        tris = np.column_stack([np.full(n, n), np.arange(n), (np.arange(n) + 1) % n]).astype(np.int64)
    else:
        verts, tris = outline[:-1] if outline.size else np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    return {
        "outline": outline,
        "vertices": verts,
        "triangles": tris,
        "twist": twist_interval(limit.twist, axis),
        "axis": axis.copy(),
    }


# --------------------------------------------------------------------------- inputs


def _as_clips(
    motions: Motion | Sequence[Motion] | None, limits: JointLimits, names: Sequence[str] | None = None
) -> list[Motion]:
    if motions is None:
        return []
    ms = [motions] if isinstance(motions, Motion) else list(motions)
    if not ms:
        raise LimitsError("no clips given (pass motions=None to show only the limit surfaces)")
    if names is not None and len(names) != len(ms):
        raise LimitsError(f"clip_names has {len(names)} names for {len(ms)} clips")

    def label(k: int) -> str:
        return str(names[k]) if names is not None else f"clip {k}"

    for k, m in enumerate(ms):
        if not isinstance(m, Motion):
            raise LimitsError(f"{label(k)} is a {type(m).__name__}, not a Motion")
        if m.num_frames == 0:
            raise LimitsError(f"{label(k)}: the clip has no frames")
        try:
            limits.check_skeleton(m.skeleton)
        except LimitsError as e:
            raise LimitsError(f"{label(k)}: {e}") from None
        if not np.all(np.isfinite(m.rotations)):
            raise LimitsError(f"{label(k)} has NaN or infinite rotations")
    return ms


def _pick_joints(limits: JointLimits, joints: Sequence[str] | None) -> list[int]:
    sk = limits.skeleton
    active = limits.active()
    have = ", ".join(sk.names[j] for j in active) or "none"
    if joints is None:
        if not active:
            raise LimitsError("no joint has an active limit: nothing to show")
        return active
    if isinstance(joints, str):
        joints = [joints]
    out: list[int] = []
    for name in joints:
        if name not in sk.names:
            raise LimitsError(f"unknown joint {name!r}; joints with a limit: {have}")
        j = sk.names.index(name)
        if j not in limits.joints:
            raise LimitsError(f"joint {name!r} has no limit; joints with a limit: {have}")
        if not limits.enabled[j]:
            raise LimitsError(f"joint {name!r} has a limit but it is disabled")
        if j not in out:
            out.append(j)
    if not out:
        raise LimitsError("no joints given (pass joints=None for every joint with a limit)")
    return out


def _shown_frames(total: int, max_points: int) -> NDArray[np.int64]:
    """At most ``max_points`` frame indices spread evenly over ``total`` frames (first and last kept)."""
    if total <= max_points:
        return np.arange(total, dtype=np.int64)
    return np.linspace(0, total - 1, max_points).astype(np.int64)  # step > 1: strictly increasing


# --------------------------------------------------------------------------- traces


def _lines_xyz(lines: Sequence[Array], k: float) -> dict[str, list]:
    """Polylines as one trace's coordinates, separated by gaps (None)."""
    xyz: list[list] = [[], [], []]
    for line in lines:
        for c in range(3):
            xyz[c].extend((np.asarray(line)[:, c] * k).tolist())
            xyz[c].append(None)
    return {"x": xyz[0], "y": xyz[1], "z": xyz[2]}


def _mesh(go: Any, verts: Array, tris: NDArray[np.int64], meta: dict, name: str, flat: bool) -> Any:
    v = verts * _DEG
    return go.Mesh3d(
        x=v[:, 0],
        y=v[:, 1],
        z=v[:, 2],
        i=tris[:, 0],
        j=tris[:, 1],
        k=tris[:, 2],
        color=_C_LIMIT,
        opacity=0.2,
        flatshading=flat,
        hoverinfo="skip",
        name=name,
        showlegend=True,
        meta=meta,
    )


def _points(
    go: Any, pts: Array, info: Array, clips: NDArray[np.str_], meta: dict, name: str, color: str, size: float
) -> Any:
    """Limit-space points (radians) as markers; ``info`` rows are (clip, frame, violation deg) and
    ``clips`` the clip names (hover text). Single precision (about 1e-5 degrees here) keeps big
    pages small."""
    v = (pts * _DEG).astype(np.float32)
    return go.Scatter3d(
        x=v[:, 0],
        y=v[:, 1],
        z=v[:, 2],
        mode="markers",
        name=name,
        meta=meta,
        marker={"size": size, "color": color, "opacity": 0.85, "line": {"width": 0}},
        customdata=info.astype(np.float32),
        text=[html_text(c) for c in clips[info[:, 0].astype(np.int64)]],
        hovertemplate=(
            "%{text}, frame %{customdata[1]}<br>violation %{customdata[2]:.2f}°"
            "<br>(%{x:.1f}°, %{y:.1f}°, %{z:.1f}°)<extra>" + html.escape(name) + "</extra>"
        ),
    )


def _cube_ranges(clouds: Sequence[Array]) -> list[list[float]]:
    """Equal ranges (degrees) around everything drawn, so limit space is not distorted."""
    pts = [np.asarray(c, np.float64).reshape(-1, 3) for c in clouds]
    pts = [p[np.all(np.isfinite(p), axis=1)] for p in pts if p.size]
    if not pts or not any(p.size for p in pts):
        return [[-10.0, 10.0]] * 3
    allp = np.vstack(pts)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    c, r = 0.5 * (lo + hi), max(0.5 * float(np.max(hi - lo)) * 1.08, 1.0)
    return [[float(c[i] - r), float(c[i] + r)] for i in range(3)]


def _kind(lim: Any) -> str:
    if not isinstance(lim, FittedLimit):
        return str(getattr(lim, "kind", type(lim).__name__))
    if lim.swing_twist:
        return f"{lim.swing.kind} swing + {lim.twist.kind} twist"
    return lim.shape.kind


def _joint_group(
    go: Any,
    limits: JointLimits,
    j: int,
    ms: list[Motion],
    shown: NDArray[np.int64],
    info: Array,
    clips: NDArray[np.str_],
    row: dict | None,
) -> tuple[list[Any], str, list[list[float]]]:
    """One joint's traces, its title and its axis ranges (degrees)."""
    sk = limits.skeleton
    name = sk.names[j]
    lim = limits.joints[j]
    fitted = isinstance(lim, FittedLimit)
    meta = {"joint": name}
    traces: list[Any] = []
    drawn: list[Array] = []
    note = ""

    inside = None
    if ms:
        q = np.concatenate([m.rotations[shown_in_clip, j] for m, shown_in_clip in _per_clip(ms, shown)], axis=0)
        inside = np.asarray(lim.contains(q, _TOLERANCE), bool)
        info = info.copy()
        info[:, 2] = np.degrees(lim.violation(q))

    def add_cloud(pts: Array, out: NDArray[np.bool_], part: str) -> None:
        label = f"{part} " if part else ""
        for mask, role, color, size in ((~out, "inside", _C_IN, 2.5), (out, "outside", _C_OUT, 3.5)):
            if mask.any():
                traces.append(
                    _points(
                        go,
                        pts[mask],
                        info[mask],
                        clips,
                        {**meta, "role": f"{label}{role}".replace(" ", "-")},
                        f"{label}{role} ({int(mask.sum())})",
                        color,
                        size,
                    )
                )
        drawn.append(pts * _DEG)

    if fitted and lim.swing_twist:
        axis = lim.twist_axis
        geo = swing_twist_geometry(lim)
        lo, hi = geo["twist"]
        if ms:
            sw, tw = relative_clouds(ms, j, lim.reference, axis)
            sec = swing_section(lim.swing, axis)
            swing_pts = _nearest_cover(sec, sw[shown])
            t = _nearest_twist(tw[shown] @ axis, (lo, hi))
            # a frame the limit rejects shows red where it is out: its swing, its twist, or (at the
            # tolerance's edge) both; frames it accepts are blue in both parts
            out = ~inside
            swing_out = np.linalg.norm(sec.project(swing_pts) - swing_pts, axis=-1) > _TOLERANCE
            twist_out = (t < lo - _TOLERANCE) | (t > hi + _TOLERANCE)
            neither = out & ~swing_out & ~twist_out
            add_cloud(swing_pts, out & (swing_out | neither), "swing")
            add_cloud(t[:, None] * axis, out & (twist_out | neither), "twist")
        if geo["triangles"].shape[0]:
            traces.append(
                _mesh(
                    go,
                    geo["vertices"],
                    geo["triangles"],
                    {**meta, "role": "swing-section"},
                    "swing limit (section)",
                    flat=True,
                )
            )
        if geo["outline"].shape[0]:
            traces.append(
                go.Scatter3d(
                    **_lines_xyz([geo["outline"]], _DEG),
                    mode="lines",
                    name="swing limit edge",
                    line={"color": _C_EDGE, "width": 4},
                    hoverinfo="skip",
                    showlegend=False,
                    meta={**meta, "role": "swing-outline"},
                )
            )
            drawn.append(geo["outline"] * _DEG)
        seg = np.outer([lo, hi], axis) * _DEG
        traces.append(
            go.Scatter3d(
                x=seg[:, 0],
                y=seg[:, 1],
                z=seg[:, 2],
                mode="lines+markers",
                name=f"twist limit [{lo * _DEG:.1f}°, {hi * _DEG:.1f}°]",
                line={"color": _C_LIMIT, "width": 9},
                marker={"size": 4, "color": _C_EDGE},
                hoverinfo="skip",
                meta={**meta, "role": "twist-interval"},
            )
        )
        drawn.append(seg)
        reach = max(float(np.max(np.abs(np.vstack(drawn)))) if drawn else 0.0, 10.0)
        ax_line = np.outer([-1.0, 1.0], axis) * reach
        traces.append(
            go.Scatter3d(
                x=ax_line[:, 0],
                y=ax_line[:, 1],
                z=ax_line[:, 2],
                mode="lines",
                name="twist axis",
                line={"color": _C_AXIS, "width": 2, "dash": "dash"},
                hoverinfo="skip",
                meta={**meta, "role": "twist-axis"},
            )
        )
    else:
        ref = np.asarray(getattr(lim, "reference", quat.identity()), np.float64)
        if ms:
            cloud = relative_clouds(ms, j, ref)[shown]
            add_cloud(_nearest_cover(lim.shape if fitted else None, cloud), ~inside, "")
        if fitted:
            surf = limit_surface(lim.shape)
            if surf["triangles"].shape[0]:
                traces.append(
                    _mesh(
                        go,
                        surf["vertices"],
                        surf["triangles"],
                        {**meta, "role": "surface"},
                        f"{lim.shape.kind} limit",
                        flat=lim.shape.kind != "ellipsoid",
                    )
                )
            if surf["lines"]:
                traces.append(
                    go.Scatter3d(
                        **_lines_xyz(surf["lines"], _DEG),
                        mode="lines",
                        name=f"{lim.shape.kind} limit edges",
                        line={"color": _C_EDGE, "width": 2},
                        opacity=0.6,
                        hoverinfo="skip",
                        showlegend=False,
                        meta={**meta, "role": "edges"},
                    )
                )
            if surf["vertices"].size:
                drawn.append(surf["vertices"] * _DEG)
            else:
                note = " (the limit is empty or flat: nothing to draw)"
        else:
            note = " (surface not drawn)"
    if not traces:  # keep one (empty) trace so every joint has a group the dropdown can show
        traces.append(
            go.Scatter3d(
                x=[], y=[], z=[], mode="markers", showlegend=False, hoverinfo="skip", meta={**meta, "role": "empty"}
            )
        )

    title = f"<b>{html.escape(name)}</b>: {html.escape(_kind(lim))} limit{html.escape(note)}"
    if row is not None:
        title += (
            f" · {row['frames_outside']} of {row['frames']} frames outside "
            f"({100.0 * row['fraction_outside']:.1f}%) · max violation {row['max_violation_deg']:.1f}°"
        )
    return traces, title, _cube_ranges(drawn)


def _per_clip(ms: list[Motion], shown: NDArray[np.int64]) -> list[tuple[Motion, NDArray[np.int64]]]:
    """Split global frame indices into (clip, frame indices within it)."""
    bounds = np.cumsum([0] + [m.num_frames for m in ms])
    return [(m, shown[(shown >= a) & (shown < b)] - a) for m, a, b in zip(ms, bounds[:-1], bounds[1:])]


# --------------------------------------------------------------------------- the page


def write_limits_page(
    limits: JointLimits,
    motions: Motion | Sequence[Motion] | None,
    path: str | os.PathLike,
    joints: Sequence[str] | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
    overwrite: bool = False,
    *,
    clip_names: Sequence[str] | None = None,
) -> Path:
    """Write an interactive HTML page of the limits of ``joints`` (default: every joint with an
    active limit) with the rotations of ``motions`` in limit space; returns the path written.

    Per joint the page shows, in degrees of limit space (the scaled angle axis of
    ``inv(reference) q``, on the cover nearest to the limit):

    - the clips' rotations, an even subsample of at most ``max_points`` frames over all clips
      (the same frames for every joint), blue inside the limit and red where
      :meth:`JointLimits.contains` rejects them;
    - the limit surface: box, oriented box and k-DOP as their polytope with its edges, an
      ellipsoid as a mesh whose vertices lie on it, with a wireframe;
    - for swing-twist limits, the swing section (in the plane perpendicular to the twist axis,
      where swing points live) and the twist interval on the axis (where twist points live); of
      a frame the limit rejects, the part that is out is red, so the frames with a red point
      are exactly the rejected ones;
    - a title with the frames outside and the largest violation in degrees over all frames
      (:meth:`JointLimits.report`); hovering a point tells its clip, frame and violation.

    A dropdown switches the joint. With ``motions=None`` only the surfaces are drawn.

    The page is one self-contained file: plotly.js is written inline (3.5-5 MB), so it opens
    offline and can be moved or mailed alone. ``clip_names`` (one per clip) label the hover text.
    The file is written atomically; an existing ``path`` is replaced only with ``overwrite=True``.

    Raises LimitsError for an unknown joint or one without an active limit, an empty clip list, a
    clip without frames or of another skeleton, and ``max_points < 1``; FileExistsError if
    ``path`` exists and ``overwrite`` is false. Nothing is written then.
    """
    import plotly.graph_objects as go
    import plotly.io as pio

    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) or max_points < 1:
        raise LimitsError(f"max_points must be an integer >= 1, got {max_points!r}")
    ms = _as_clips(motions, limits, clip_names)
    picked = _pick_joints(limits, joints)
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a page to write", str(p))
    if p.exists() and not overwrite:
        raise FileExistsError(errno.EEXIST, "file exists (pass overwrite=True to replace it)", str(p))

    total = int(sum(m.num_frames for m in ms))
    shown = _shown_frames(total, int(max_points))
    info = np.zeros((shown.size, 3))
    rows: dict[str, dict] = {}
    if ms:
        bounds = np.cumsum([0] + [m.num_frames for m in ms])
        clip = np.searchsorted(bounds, shown, side="right") - 1
        info[:, 0], info[:, 1] = clip, shown - bounds[clip]
        rows = {r["joint"]: r for r in limits.report(ms, _TOLERANCE)}

    sk = limits.skeleton
    names = [str(n) for n in clip_names] if clip_names is not None else [f"clip {k}" for k in range(len(ms))]
    labels = np.asarray(names, dtype=np.str_)
    groups = [_joint_group(go, limits, j, ms, shown, info, labels, rows.get(sk.names[j])) for j in picked]
    fig = go.Figure()
    owner: list[int] = []
    for g, (traces, _, _) in enumerate(groups):
        for t in traces:
            t.visible = g == 0
            fig.add_trace(t)
            owner.append(g)

    if ms:
        listed = names if len(names) <= 4 else names[:2] + [f"… {len(names) - 3} more"] + names[-1:]
        sub = (
            f"{len(ms)} clip{'s' if len(ms) != 1 else ''} ({html.escape(', '.join(listed))}), {total} frames"
            f"{f', {shown.size} shown' if shown.size < total else ''} · blue inside, red outside the limit"
        )
    else:
        sub = "limit surfaces only (no clip given)"
    sub += " · limit space: scaled angle axis of inv(reference)·q, degrees"

    def layout_for(g: int) -> dict[str, Any]:
        _, title, ranges = groups[g]
        out: dict[str, Any] = {"title.text": f"{title}<br><sup>{sub}</sup>"}
        for axis, r in zip("xyz", ranges):
            out[f"scene.{axis}axis.range"] = r
        return out

    buttons = [
        {
            "label": html_text(sk.names[j]),
            "method": "update",
            "args": [{"visible": [o == g for o in owner]}, layout_for(g)],
        }
        for g, j in enumerate(picked)
    ]
    first = layout_for(0)
    fig.update_layout(
        template="plotly_white",
        title={"text": first["title.text"], "x": 0.5, "xanchor": "center", "y": 0.97, "yanchor": "top"},
        scene={
            "aspectmode": "cube",
            **{
                f"{a}axis": {
                    "title": {"text": f"{a} (deg)"},
                    "range": first[f"scene.{a}axis.range"],
                    "autorange": False,
                }
                for a in "xyz"
            },
        },
        updatemenus=[
            {
                "type": "dropdown",
                "direction": "down",
                "active": 0,
                "showactive": True,
                "buttons": buttons,
                "x": 0.0,
                "xanchor": "left",
                "y": 1.0,
                "yanchor": "top",
                "pad": {"l": 50, "t": 4},
            }
        ],
        annotations=[
            {
                "text": "joint",
                "x": 0.0,
                "xref": "paper",
                "xanchor": "left",
                "y": 0.995,
                "yref": "paper",
                "yanchor": "top",
                "showarrow": False,
                "font": {"size": 13},
            },
            {
                "text": "drag to rotate · scroll to zoom · hover a point for its clip, frame and violation"
                " · click a legend entry to hide it",
                "x": 0.0,
                "xref": "paper",
                "xanchor": "left",
                "y": 0.0,
                "yref": "paper",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 11, "color": "#666666"},
            },
        ],
        legend={"x": 1.0, "xanchor": "right", "y": 0.9, "yanchor": "top", "bgcolor": "rgba(255,255,255,0.7)"},
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
        uirevision="jointlimits",
    )
    page = pio.to_html(
        fig,
        include_plotlyjs=True,
        full_html=True,
        div_id=DIV_ID,
        default_height="96vh",
        config={
            "displaylogo": False,
            "responsive": True,
            "toImageButtonOptions": {"format": "png", "filename": p.stem},
        },
    )
    where = ", ".join(sk.names[j] for j in picked)
    head_title = f"<title>jointlimits: {html.escape(where if len(picked) <= 4 else f'{len(picked)} joints')}</title>"
    no_icon = '<link rel="icon" href="data:,">'  # no favicon request (a 404 when the page is served)
    page = page.replace("</head>", head_title + no_icon + "</head>", 1)
    with atomic_write(p, binary=True) as fh:
        fh.write(page.encode("utf-8"))
    return p

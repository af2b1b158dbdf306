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
from ..limits.ellipsoid import Ellipsoid
from ..limits.joint import FittedLimit, swing_section, twist_interval
from ..limits.model import JointLimits
from ..limits.shape import Shape
from ..motion import quat
from ..motion.skeleton import Motion
from ._geometry import (
    Surfaced,
    ellipse_points,
    ellipsoid_mesh,
    limit_cloud,
    limit_kind,
    nearest_cover,
    nearest_twist,
    plane_basis,
    section_outline,
    swing_twist_clouds,
    swing_twist_shapes,
)
from ._page import (
    C_AXIS,
    C_EDGE,
    C_IN,
    C_LIMIT,
    C_OUT,
    DEG,
    as_clips,
    cube_ranges,
    lines_xyz,
    mesh,
    per_clip,
    pick_joints,
    points,
    shown_frames,
)
from .plots import shape_geometry

__all__ = ["write_limits_page", "limit_surface", "swing_twist_geometry", "DEFAULT_MAX_POINTS", "DIV_ID"]

Array = NDArray[np.float64]
DEFAULT_MAX_POINTS = 3000
DIV_ID = "jointlimits-view"  # the plot's <div> id in the page
_TOLERANCE = 1e-6  # radians; JointLimits.contains' and report()'s default


# --------------------------------------------------------------------------- geometry (radians)


def limit_surface(shape: Shape) -> dict[str, Any]:
    """A 3D limit shape as a triangle mesh and edges, in limit space (radians).

    Returns ``{"vertices": [N, 3], "triangles": [M, 3] indices, "lines": [polylines [k, 3]]}``.
    Ellipsoid: a UV sphere mapped onto it (every vertex on the surface) and a wireframe of
    meridians and parallels. Box, oriented box and k-DOP: the polytope (intersection of the
    slabs' half-spaces, :func:`jointlimits.viz.plots.shape_geometry`), its convex-hull triangles and
    its face outlines. A flat or empty polytope gives no triangles.
    """
    if isinstance(shape, Ellipsoid):
        verts, tris = ellipsoid_mesh(shape)
        return {"vertices": verts, "triangles": tris, "lines": shape_geometry(shape)["lines"]}
    if isinstance(shape, Surfaced):  # an implicit limit: its marching-cubes iso-surface
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
    parts = swing_twist_shapes(limit) if isinstance(limit, FittedLimit) else None
    if parts is None:
        raise LimitsError("swing_twist_geometry needs a fitted swing-twist limit")
    swing, twist = parts
    axis = limit.twist_axis
    sec = swing_section(swing, axis)
    if isinstance(sec, Ellipsoid):  # a flat ellipse: its points in 3D directly (exact, no round trip)
        outline = ellipse_points(sec, 97)
        outline[-1] = outline[0]
    else:
        e1, e2 = plane_basis(axis)
        flat = section_outline(sec, e1, e2)
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
        "twist": twist_interval(twist, axis),
        "axis": axis.copy(),
    }


# --------------------------------------------------------------------------- traces


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
    fitted = lim if isinstance(lim, FittedLimit) else None
    parts = None if fitted is None else swing_twist_shapes(fitted)  # (swing, twist) shapes
    shape = None if fitted is None else fitted.shape  # the one shape (None: swing-twist or not fitted)
    meta = {"joint": name}
    traces: list[Any] = []
    drawn: list[Array] = []
    note = ""

    inside = np.zeros(0, bool)  # per shown frame, when there are clips
    if ms:
        q = np.concatenate([m.rotations[shown_in_clip, j] for m, shown_in_clip in per_clip(ms, shown)], axis=0)
        inside = np.asarray(lim.contains(q, _TOLERANCE), bool)
        info = info.copy()
        info[:, 2] = np.degrees(lim.violation(q))

    def add_cloud(pts: Array, out: NDArray[np.bool_], part: str) -> None:
        label = f"{part} " if part else ""
        for mask, role, color, size in ((~out, "inside", C_IN, 2.5), (out, "outside", C_OUT, 3.5)):
            if mask.any():
                traces.append(
                    points(
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
        drawn.append(pts * DEG)

    if fitted is not None and parts is not None:
        axis = fitted.twist_axis
        geo = swing_twist_geometry(fitted)
        lo, hi = geo["twist"]
        if ms:
            sw, tw = swing_twist_clouds(ms, j, fitted.reference, axis)
            sec = swing_section(parts[0], axis)
            swing_pts = nearest_cover(sec, sw[shown])
            t = nearest_twist(tw[shown] @ axis, (lo, hi))
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
                mesh(
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
                    **lines_xyz([geo["outline"]], DEG),
                    mode="lines",
                    name="swing limit edge",
                    line={"color": C_EDGE, "width": 4},
                    hoverinfo="skip",
                    showlegend=False,
                    meta={**meta, "role": "swing-outline"},
                )
            )
            drawn.append(geo["outline"] * DEG)
        seg = np.outer([lo, hi], axis) * DEG
        traces.append(
            go.Scatter3d(
                x=seg[:, 0],
                y=seg[:, 1],
                z=seg[:, 2],
                mode="lines+markers",
                name=f"twist limit [{lo * DEG:.1f}°, {hi * DEG:.1f}°]",
                line={"color": C_LIMIT, "width": 9},
                marker={"size": 4, "color": C_EDGE},
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
                line={"color": C_AXIS, "width": 2, "dash": "dash"},
                hoverinfo="skip",
                meta={**meta, "role": "twist-axis"},
            )
        )
    else:
        ref = np.asarray(getattr(lim, "reference", quat.identity()), np.float64)
        if ms:
            cloud = limit_cloud(ms, j, ref)[shown]
            add_cloud(nearest_cover(shape, cloud), ~inside, "")
        if shape is not None:
            surf = limit_surface(shape)
            if surf["triangles"].shape[0]:
                traces.append(
                    mesh(
                        go,
                        surf["vertices"],
                        surf["triangles"],
                        {**meta, "role": "surface"},
                        f"{shape.kind} limit",
                        flat=shape.kind != "ellipsoid",
                    )
                )
            if surf["lines"]:
                traces.append(
                    go.Scatter3d(
                        **lines_xyz(surf["lines"], DEG),
                        mode="lines",
                        name=f"{shape.kind} limit edges",
                        line={"color": C_EDGE, "width": 2},
                        opacity=0.6,
                        hoverinfo="skip",
                        showlegend=False,
                        meta={**meta, "role": "edges"},
                    )
                )
            if surf["vertices"].size:
                drawn.append(surf["vertices"] * DEG)
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

    kind = limit_kind(fitted) if fitted is not None else str(getattr(lim, "kind", type(lim).__name__))
    title = f"<b>{html.escape(name)}</b>: {html.escape(kind)} limit{html.escape(note)}"
    if row is not None:
        title += (
            f" · {row['frames_outside']} of {row['frames']} frames outside "
            f"({100.0 * row['fraction_outside']:.1f}%) · max violation {row['max_violation_deg']:.1f}°"
        )
    return traces, title, cube_ranges(drawn)


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
    ms = as_clips(motions, limits, clip_names)
    picked = pick_joints(limits, joints)
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a page to write", str(p))
    if p.exists() and not overwrite:
        raise FileExistsError(errno.EEXIST, "file exists (pass overwrite=True to replace it)", str(p))

    total = int(sum(m.num_frames for m in ms))
    shown = shown_frames(total, int(max_points))
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

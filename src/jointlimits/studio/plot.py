"""The studio's limit-space panel: one joint's fitting cloud, its limit surface and the current
rotation (raw and limited), in degrees of scaled angle axis, as a plotly figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..limits.fit import relative_clouds
from ..limits.model import FittedLimit, JointLimits
from ..motion.skeleton import Motion
from ..viz.viewer import limit_surface, swing_twist_geometry

__all__ = ["limit_figure", "current_points"]

Array = NDArray[np.float64]
_DEG = float(np.degrees(1.0))
MAX_POINTS = 1200


def _near(v: Array, to: Array) -> Array:
    """Of a scaled-angle-axis point and its other cover, the one nearer ``to``."""
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    other = np.where(n > 1e-9, v - 2 * np.pi * v / np.maximum(n, 1e-12), v)
    pick = np.linalg.norm(other - to, axis=-1) < np.linalg.norm(v - to, axis=-1)
    return np.where(pick[..., None], other, v)


def current_points(limit: FittedLimit, rotation: Array, centre: Array) -> Array:
    """Limit-space point(s) ``[k, 3]`` of one local rotation (swing and twist for swing-twist)."""
    ls = limit.limit_space(np.asarray(rotation, np.float64)[None])
    if isinstance(ls, tuple):
        return np.vstack([_near(ls[0], centre)[0], ls[1][0]])
    return _near(ls, centre)


def limit_figure(
    limits: JointLimits, joint: int, clips: Sequence[Motion], raw: Array | None = None, limited: Array | None = None
) -> Any:
    """A plotly figure of ``joint``'s limit: cloud of ``clips`` (subsampled), surface, and the
    current raw (orange) and limited (black) rotations."""
    import plotly.graph_objects as go

    sk = limits.skeleton
    fig = go.Figure()
    lim = limits.joints.get(joint)
    title = sk.names[joint]
    if not isinstance(lim, FittedLimit):
        fig.update_layout(
            title={"text": f"{title}: no fitted limit", "font": {"size": 12}},
            margin={"l": 0, "r": 0, "t": 30, "b": 0},
            height=330,
        )
        return fig
    tot = sum(m.num_frames for m in clips)
    step = max(1, tot // MAX_POINTS)
    centre = np.zeros(3)
    shape = lim.shape  # None: swing-twist
    if shape is None:
        geo = swing_twist_geometry(lim)
        kind = f"{lim.swing.kind if lim.swing is not None else ''} swing-twist"
        sw, tw = relative_clouds(clips, joint, lim.reference, lim.twist_axis)
        pts = np.vstack([sw[::step], tw[::step]])
        if geo["outline"].shape[0]:
            o = geo["outline"] * _DEG
            fig.add_trace(
                go.Scatter3d(
                    x=o[:, 0],
                    y=o[:, 1],
                    z=o[:, 2],
                    mode="lines",
                    name="swing limit",
                    line={"color": "#2ca02c", "width": 5},
                )
            )
        lo, hi = geo["twist"]
        seg = np.outer([lo, hi], geo["axis"]) * _DEG
        fig.add_trace(
            go.Scatter3d(
                x=seg[:, 0],
                y=seg[:, 1],
                z=seg[:, 2],
                mode="lines",
                name="twist limit",
                line={"color": "#196619", "width": 8},
            )
        )
    else:
        pts = np.asarray(relative_clouds(clips, joint, lim.reference), np.float64)[::step]  # no twist axis: one cloud
        surf = limit_surface(shape)
        v, t = surf["vertices"] * _DEG, surf["triangles"]
        centre = getattr(shape, "position", centre)  # its centre (every built-in shape has one)
        kind = shape.kind
        if t.shape[0]:
            fig.add_trace(
                go.Mesh3d(
                    x=v[:, 0],
                    y=v[:, 1],
                    z=v[:, 2],
                    i=t[:, 0],
                    j=t[:, 1],
                    k=t[:, 2],
                    color="#2ca02c",
                    opacity=0.25,
                    name=f"{shape.kind} limit",
                    showlegend=True,
                )
            )
    p = pts * _DEG
    fig.add_trace(
        go.Scatter3d(
            x=p[:, 0],
            y=p[:, 1],
            z=p[:, 2],
            mode="markers",
            name="clips",
            marker={"size": 1.5, "color": "#1f77b4", "opacity": 0.5},
        )
    )
    for q, name, color in ((raw, "gizmo (raw)", "#ff7f0e"), (limited, "limited", "#000000")):
        if q is not None:
            c = current_points(lim, q, centre) * _DEG
            fig.add_trace(
                go.Scatter3d(
                    x=c[:, 0], y=c[:, 1], z=c[:, 2], mode="markers", name=name, marker={"size": 6, "color": color}
                )
            )
    fig.update_layout(
        title={"text": f"{title}: {kind} (degrees)", "font": {"size": 12}},
        margin={"l": 0, "r": 0, "t": 30, "b": 0},
        height=330,
        legend={"orientation": "h", "y": -0.02, "font": {"size": 9}},
        scene={"aspectmode": "data", "xaxis": {"title": ""}, "yaxis": {"title": ""}, "zaxis": {"title": ""}},
    )
    return fig

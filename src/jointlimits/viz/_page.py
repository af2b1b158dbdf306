"""Parts of the HTML page of :mod:`.viewer`: its inputs checked (clips, joints, the frames shown)
and the plotly traces it is made of (points, meshes, polylines, the axis ranges around them)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._names import html_text
from ..errors import LimitsError
from ..limits.model import JointLimits
from ..motion.skeleton import Motion

Array = NDArray[np.float64]
DEG = float(np.degrees(1.0))

C_IN, C_OUT, C_LIMIT, C_EDGE, C_AXIS = "#1f77b4", "#d62728", "#2ca02c", "#196619", "#444444"


# --------------------------------------------------------------------------- inputs


def as_clips(
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


def pick_joints(limits: JointLimits, joints: Sequence[str] | None) -> list[int]:
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


def shown_frames(total: int, max_points: int) -> NDArray[np.int64]:
    """At most ``max_points`` frame indices spread evenly over ``total`` frames (first and last kept)."""
    if total <= max_points:
        return np.arange(total, dtype=np.int64)
    return np.linspace(0, total - 1, max_points).astype(np.int64)  # step > 1: strictly increasing


def per_clip(ms: list[Motion], shown: NDArray[np.int64]) -> list[tuple[Motion, NDArray[np.int64]]]:
    """Split global frame indices into (clip, frame indices within it)."""
    bounds = np.cumsum([0] + [m.num_frames for m in ms])
    return [(m, shown[(shown >= a) & (shown < b)] - a) for m, a, b in zip(ms, bounds[:-1], bounds[1:])]


# --------------------------------------------------------------------------- traces


def lines_xyz(lines: Sequence[Array], k: float) -> dict[str, list]:
    """Polylines as one trace's coordinates, separated by gaps (None)."""
    xyz: list[list] = [[], [], []]
    for line in lines:
        for c in range(3):
            xyz[c].extend((np.asarray(line)[:, c] * k).tolist())
            xyz[c].append(None)
    return {"x": xyz[0], "y": xyz[1], "z": xyz[2]}


def mesh(go: Any, verts: Array, tris: NDArray[np.int64], meta: dict, name: str, flat: bool) -> Any:
    v = verts * DEG
    return go.Mesh3d(
        x=v[:, 0],
        y=v[:, 1],
        z=v[:, 2],
        i=tris[:, 0],
        j=tris[:, 1],
        k=tris[:, 2],
        color=C_LIMIT,
        opacity=0.2,
        flatshading=flat,
        hoverinfo="skip",
        name=name,
        showlegend=True,
        meta=meta,
    )


def points(
    go: Any, pts: Array, info: Array, clips: NDArray[np.str_], meta: dict, name: str, color: str, size: float
) -> Any:
    """Limit-space points (radians) as markers; ``info`` rows are (clip, frame, violation deg) and
    ``clips`` the clip names (hover text). Single precision (about 1e-5 degrees here) keeps big
    pages small."""
    v = (pts * DEG).astype(np.float32)
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


def cube_ranges(clouds: Sequence[Array]) -> list[list[float]]:
    """Equal ranges (degrees) around everything drawn, so limit space is not distorted."""
    pts = [np.asarray(c, np.float64).reshape(-1, 3) for c in clouds]
    pts = [p[np.all(np.isfinite(p), axis=1)] for p in pts if p.size]
    if not pts or not any(p.size for p in pts):
        return [[-10.0, 10.0]] * 3
    allp = np.vstack(pts)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    c, r = 0.5 * (lo + hi), max(0.5 * float(np.max(hi - lo)) * 1.08, 1.0)
    return [[float(c[i] - r), float(c[i] + r)] for i in range(3)]

"""Matplotlib helpers of the PNG figures (:mod:`.plots`): a pyplot-free canvas, atomic PNG
writes, thinned scatters, limit outlines and the relative quaternion panels."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write
from ..errors import LimitsError
from ..motion import quat
from ..motion.skeleton import Motion

Array = NDArray[np.float64]
MAX_SCATTER = 6000  # points drawn per cloud (a deterministic subsample beyond that)

C_CLIP, C_PROJ, C_OVER, C_LIMIT, C_OUT = "tab:blue", "tab:orange", "0.55", "tab:red", "magenta"


# --------------------------------------------------------------------------- files


def figure(figsize: tuple[float, float], dpi: int) -> Any:
    """A pyplot-free figure on the Agg canvas (no global state, safe in threads)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def save(fig: Any, path: str | os.PathLike, dpi: int) -> Path:
    """Write ``fig`` as PNG atomically: temporary file beside ``path``, then rename."""
    p = Path(path)
    with atomic_write(p, binary=True) as fh:
        fig.savefig(fh, format="png", dpi=dpi)
    return p


# --------------------------------------------------------------------------- drawing


def thin(points: Array, n: int = MAX_SCATTER) -> Array:
    """At most ``n`` evenly spaced rows (deterministic)."""
    if points.shape[0] <= n:
        return points
    return points[np.linspace(0, points.shape[0] - 1, n).astype(int)]


def equal_3d(ax: Any, clouds: Sequence[Array]) -> None:
    allp = np.vstack([c for c in clouds if c.size]) if any(c.size for c in clouds) else np.zeros((1, 3))
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    c, r = 0.5 * (lo + hi), 0.5 * max(float(np.max(hi - lo)), 1e-6) * 1.05
    ax.set_xlim(c[0] - r, c[0] + r)
    ax.set_ylim(c[1] - r, c[1] + r)
    ax.set_zlim(c[2] - r, c[2] + r)
    ax.set_box_aspect((1, 1, 1))


def draw_shape_3d(ax: Any, geo: dict[str, Any], k: float, label: str) -> None:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    if geo["faces"]:
        ax.add_collection3d(
            Poly3DCollection([f * k for f in geo["faces"]], facecolor=C_LIMIT, alpha=0.08, edgecolor="none")
        )
    for i, line in enumerate(geo["lines"]):
        ax.plot(*(line * k).T, color=C_LIMIT, lw=0.8, alpha=0.8, label=label if i == 0 else None)


def scatter_3d(
    ax: Any, pts: Array, color: str, label: str, size: float = 4.0, alpha: float = 0.6, marker: str = "o"
) -> None:
    if pts.size:
        p = thin(pts)
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


def scatter_2d(
    ax: Any, pts: Array, color: str, label: str | None, size: float = 4.0, alpha: float = 0.6, marker: str = "o"
) -> None:
    if pts.size:
        p = thin(pts)
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


def outside_label(inside: NDArray[np.bool_]) -> str:
    return f"outside the limit ({int((~inside).sum())} frames)"


def outline_2d(ax: Any, outline: Array | None, label: str | None) -> None:
    if outline is not None:
        ax.fill(outline[:, 0], outline[:, 1], color=C_LIMIT, alpha=0.08, lw=0)
        ax.plot(outline[:, 0], outline[:, 1], color=C_LIMIT, lw=1.2, label=label)


# --------------------------------------------------------------------------- clips


def clip_bounds(ms: Sequence[Motion]) -> list[int]:
    return [int(b) for b in np.cumsum([m.num_frames for m in ms])[:-1]]


def quat_panels(
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


def as_list(motions: Motion | Sequence[Motion]) -> list[Motion]:
    ms = [motions] if isinstance(motions, Motion) else list(motions)
    if not ms:
        raise LimitsError("no motions to plot")
    return ms

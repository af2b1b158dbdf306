"""Point labels placed so that none overlaps another label, a data marker or an error bar, and each
stays inside the axes: candidate offsets around the point, nearest first, measured on the figure's
own renderer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["place_labels", "overlaps", "text_box"]

_ANGLES = np.radians([-30, 30, -150, 150, -90, 90, 0, 180, -60, 60, -120, 120, -10, 10, -170, 170])
_RADII = (5.0, 10.0, 16.0, 24.0, 34.0, 46.0, 60.0, 76.0, 95.0, 120.0)  # points


def overlaps(a: Any, b: Any) -> float:
    """Overlap area (pixels²) of two matplotlib ``Bbox``es; 0 when they only touch."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return float(w * h) if w > 0 and h > 0 else 0.0


def text_box(ann: Any, renderer: Any) -> Any:
    """The pixel box of an annotation's text alone (``Annotation.get_window_extent`` adds its
    arrow, which runs to the point it names)."""
    from matplotlib.text import Text

    ann.update_positions(renderer)  # the text's place from its offset (done at draw time otherwise)
    return Text.get_window_extent(ann, renderer)


def place_labels(
    ax: Any,
    xy: ArrayLike,
    texts: Sequence[str],
    data: ArrayLike,
    *,
    xerr: ArrayLike | None = None,
    marker_px: float = 4.0,
    fontsize: float = 7.0,
) -> list[Any]:
    """Annotate points ``xy`` ``[N, 2]`` (data coordinates) with ``texts``, in that order (put the
    most important first), keeping clear of each other, of the markers at every row of ``data``
    ``[M, 2]`` (``marker_px`` pixels around each, plus its horizontal error bar ``xerr`` ``[M]``)
    and of the axes' edges. Call it after the axes' limits and the figure's layout are final.
    A label that cannot be placed clear takes the candidate with the least overlap."""
    from matplotlib.transforms import Bbox

    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    pts = np.asarray(data, np.float64).reshape(-1, 2)
    err = np.zeros(len(pts)) if xerr is None else np.asarray(xerr, np.float64).reshape(-1)
    to_px = ax.transData.transform
    centres = to_px(pts)
    left, right = to_px(pts - np.c_[err, 0 * err])[:, 0], to_px(pts + np.c_[err, 0 * err])[:, 0]
    blocked = [
        Bbox.from_extents(c[0] - marker_px, c[1] - marker_px, c[0] + marker_px, c[1] + marker_px) for c in centres
    ]
    blocked += [Bbox.from_extents(lo, c[1] - 1.0, hi, c[1] + 1.0) for lo, hi, c in zip(left, right, centres) if hi > lo]
    placed: list[Any] = []
    out = []
    for (x, y), text in zip(np.asarray(xy, np.float64).reshape(-1, 2), texts):
        best: tuple[float, Any] | None = None
        for r in _RADII:
            for a in _ANGLES:
                dx, dy = r * np.cos(a), r * np.sin(a)
                ha = "left" if dx > 0.1 else "right" if dx < -0.1 else "center"
                va = "bottom" if dy > 0.1 else "top" if dy < -0.1 else "center"
                ann = ax.annotate(
                    text,
                    (x, y),
                    textcoords="offset points",
                    xytext=(dx, dy),
                    ha=ha,
                    va=va,
                    fontsize=fontsize,
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.4"} if r > 12 else None,
                )
                box = text_box(ann, renderer)
                inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
                cost = sum(overlaps(box, b) for b in blocked + placed) + (0.0 if inside else 1e9)
                if best is None or cost < best[0]:
                    if best is not None:
                        best[1].remove()
                    best = (cost, ann)
                else:
                    ann.remove()
                if cost == 0.0:
                    break
            if best is not None and best[0] == 0.0:
                break
        assert best is not None
        placed.append(text_box(best[1], renderer))
        out.append(best[1])
    return out

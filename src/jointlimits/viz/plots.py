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

from .._names import plot_label
from ..errors import LimitsError
from ..limits.coupled import CoupledLimit
from ..limits.ellipsoid import Ellipsoid
from ..limits.joint import FittedLimit, JointLimit, swing_section, twist_interval
from ..limits.model import JointLimits
from ..limits.shape import Shape
from ..motion import quat
from ..motion.skeleton import Motion
from ._draw import (
    C_CLIP,
    C_LIMIT,
    C_OUT,
    C_OVER,
    C_PROJ,
    as_list,
    clip_bounds,
    draw_shape_3d,
    equal_3d,
    outline_2d,
    outside_label,
    quat_panels,
    save,
    scatter_2d,
    scatter_3d,
)
from ._draw import figure as _figure  # module-level name: tests substitute it to see the figure drawn
from ._geometry import (
    Surfaced,
    coupled_surfaces,
    faces,
    halfspaces,
    hull2d,
    limit_cloud,
    limit_kind,
    nearest_cover,
    nearest_twist,
    plane_basis,
    polytope,
    section_outline,
    slabs,
    swing_twist_clouds,
    swing_twist_shapes,
)

__all__ = ["plot_joint_limit", "plot_violation_report", "plot_calibration", "shape_geometry", "JOINT_FIGSIZE", "DPI"]

Array = NDArray[np.float64]
JOINT_FIGSIZE = (16.0, 10.0)  # inches; at DPI this is 1600 x 1000 pixels
DPI = 100


# --------------------------------------------------------------------------- shape geometry


def shape_geometry(shape: Shape) -> dict[str, Any]:
    """Drawable geometry of a limit shape in limit space (radians).

    Returns ``{"faces": [polygons [k, 3]], "lines": [polylines [k, 3]], "points": [N, 3]}``:
    faces of boxes and k-DOPs (the k-DOP polytope from the intersection of its half-spaces), a
    wireframe of meridians and parallels for an ellipsoid, and points whose convex hull is the
    shape (its outline in any 2D projection is the hull of their projection).
    """
    if isinstance(shape, Ellipsoid):
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
        world = shape.position + (unit * np.asarray(shape.scale, np.float64)) @ shape.rotation.T
        lines = [world[i] for i in range(0, 48, 4)] + [world[:, k] for k in range(3, 24, 3)]
        return {"faces": [], "lines": lines, "points": world.reshape(-1, 3)}
    if isinstance(shape, Surfaced):  # an implicit limit: its iso-surface (marching cubes)
        verts, tris = shape.surface()
        step = max(1, len(tris) // 3000)  # a drawable number of faces
        return {"faces": [verts[t] for t in tris[::step]], "lines": [], "points": verts}
    pos, rot, axes, mins, maxs = slabs(shape)
    local = polytope(halfspaces(axes, mins, maxs))
    if local is None:
        return {"faces": [], "lines": [], "points": np.zeros((0, 3))}
    verts = pos + local @ rot.T
    try:
        polygons, pts = faces(verts)
    except Exception:  # flat polytope: qhull cannot build a 3D hull
        return {"faces": [], "lines": [], "points": verts}
    return {"faces": polygons, "lines": [np.vstack([f, f[:1]]) for f in polygons], "points": pts}


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
    ms = as_list(motions)
    sk = limits.skeleton
    j = sk.index(joint)
    own = limits.joint(j)
    for m in ms + [x for x in (projected, over_rotated) if x is not None]:
        limits.check_skeleton(m.skeleton)
    name = sk.names[j]
    k = float(np.degrees(1.0)) if degrees else 1.0
    unit = "deg" if degrees else "rad"
    # a parent-conditioned child: its own limit, plus a few parent cells' limits
    coupled = own if isinstance(own, CoupledLimit) else None
    lim: JointLimit = own if coupled is None else coupled.base
    fitted = lim if isinstance(lim, FittedLimit) else None
    parts = None if fitted is None else swing_twist_shapes(fitted)  # (swing, twist) shapes
    shape = None if fitted is None else fitted.shape  # the one shape (None: swing-twist or not fitted)
    ref = np.asarray(getattr(lim, "reference", quat.identity()), np.float64)
    axis = np.asarray(fitted.twist_axis if fitted is not None else getattr(lim, "axis", (1.0, 0.0, 0.0)), np.float64)

    qs = np.concatenate([m.rotations[:, j] for m in ms], axis=0)
    if coupled is not None:
        qp = np.concatenate([m.rotations[:, sk.index(coupled.parent)] for m in ms], axis=0)
        inside = coupled.contains(qs, parent=qp)
    else:
        inside = lim.contains(qs)
    extra = [x for x in (over_rotated, projected) if x is not None]
    bounds = clip_bounds(ms)
    ranges = list(zip([0] + bounds, bounds + [qs.shape[0]]))

    fig = _figure(figsize, dpi)
    gs = fig.add_gridspec(
        2, 4, height_ratios=(1.25, 1.0), hspace=0.3, wspace=0.38, left=0.05, right=0.98, top=0.91, bottom=0.06
    )
    kind = (
        f"implicit coupled to {coupled.parent}"
        if coupled is not None
        else lim.kind
        if fitted is None
        else limit_kind(fitted)
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

    if parts is None:
        cloud = limit_cloud(ms, j, ref) * k
        others = [nearest_cover(shape, limit_cloud([x], j, ref)) * k for x in extra]
        geo: dict[str, Any] = (
            shape_geometry(shape) if shape is not None else {"faces": [], "lines": [], "points": np.zeros((0, 3))}
        )
        surf = geo["points"] * k
        cell_surfaces = coupled_surfaces(coupled, k) if coupled is not None else []
        ax3 = fig.add_subplot(gs[0, 0], projection="3d")
        scatter_3d(ax3, cloud, C_CLIP, "clip")
        scatter_3d(ax3, cloud[~inside], C_OUT, outside_label(inside), size=14.0, alpha=0.9, marker="x")
        styles = [(C_OVER, "over-rotated")] if over_rotated is not None else []
        styles += [(C_PROJ, "projected")] if projected is not None else []
        for pts, (col, lab) in zip(others, styles):
            scatter_3d(ax3, pts, col, lab, size=4.0, alpha=0.6)
        draw_shape_3d(ax3, geo, k, "limit")
        equal_3d(ax3, [cloud, surf] + others)
        for setter, letter in ((ax3.set_xlabel, "x"), (ax3.set_ylabel, "y"), (ax3.set_zlabel, "z")):
            setter(f"{letter} ({unit})")
        ax3.set_title("scaled angle axis, 3D")
        ax3.legend(loc="upper left", fontsize=7, markerscale=3)
        for panel, (a, b) in enumerate(((0, 1), (0, 2), (1, 2)), start=1):
            ax = fig.add_subplot(gs[0, panel])
            scatter_2d(ax, cloud[:, [a, b]], C_CLIP, "clip")
            scatter_2d(
                ax,
                cloud[~inside][:, [a, b]],
                C_OUT,
                outside_label(inside) if panel == 1 else None,
                size=14.0,
                alpha=0.9,
                marker="x",
            )
            for pts, (c, lab) in zip(others, styles):
                scatter_2d(ax, pts[:, [a, b]], c, lab, size=4.0, alpha=0.6)
            outline_2d(ax, hull2d(surf[:, [a, b]]) if surf.size else None, "limit (outline)")
            for n, cs in enumerate(cell_surfaces):
                o = hull2d(cs[:, [a, b]]) if len(cs) else None
                if o is not None:
                    ax.plot(
                        o[:, 0],
                        o[:, 1],
                        lw=0.9,
                        ls="--",
                        color=f"C{4 + n}",
                        label=f"at parent cell {n + 1}" if panel == 1 else None,
                    )
            ax.set_xlabel(f"{'xyz'[a]} ({unit})")
            ax.set_ylabel(f"{'xyz'[b]} ({unit})")
            ax.set_title(f"{'xyz'[a]}{'xyz'[b]} projection")
            ax.set_aspect("equal", adjustable="datalim")
            ax.grid(alpha=0.25)
            if panel == 1:
                ax.legend(loc="best", fontsize=7, markerscale=3)
        if fitted is None:
            ax3.text2D(0.02, 0.02, f"{lim.kind} limit: surface not drawn", transform=ax3.transAxes, fontsize=8)
    else:
        swing, twist = parts
        sw, tw = swing_twist_clouds(ms, j, ref, axis)
        sec = swing_section(swing, axis)
        tint = twist_interval(twist, axis)
        ex: list[tuple[Array, Array]] = []
        for x in extra:  # each frame on the cover the limit itself measures it on
            s_, t_ = swing_twist_clouds([x], j, ref, axis)
            ex.append((nearest_cover(sec, s_), nearest_twist(t_ @ axis, tint)[:, None] * axis))
        styles = [(C_OVER, "over-rotated")] if over_rotated is not None else []
        styles += [(C_PROJ, "projected")] if projected is not None else []
        geo = shape_geometry(swing)
        ax3 = fig.add_subplot(gs[0, 0], projection="3d")
        scatter_3d(ax3, sw * k, C_CLIP, "clip swing")
        scatter_3d(ax3, sw[~inside] * k, C_OUT, outside_label(inside), size=14.0, alpha=0.9, marker="x")
        for (s, _), (col, lab) in zip(ex, styles):
            scatter_3d(ax3, s * k, col, lab, size=4.0, alpha=0.6)
        draw_shape_3d(ax3, geo, k, "fitted swing shape")
        ax3.plot(*np.outer([-1.0, 1.0], axis * np.abs(sw * k).max()).T, color="k", lw=1.0, ls="--", label="twist axis")
        equal_3d(ax3, [sw * k, geo["points"] * k] + [s * k for s, _ in ex])
        for setter, letter in ((ax3.set_xlabel, "x"), (ax3.set_ylabel, "y"), (ax3.set_zlabel, "z")):
            setter(f"{letter} ({unit})")
        ax3.set_title("swing, scaled angle axis 3D")
        ax3.legend(loc="upper left", fontsize=7, markerscale=3)

        e1, e2 = plane_basis(axis)
        axp = fig.add_subplot(gs[0, 1])
        scatter_2d(axp, np.column_stack([sw @ e1, sw @ e2]) * k, C_CLIP, "clip")
        scatter_2d(
            axp,
            np.column_stack([sw[~inside] @ e1, sw[~inside] @ e2]) * k,
            C_OUT,
            outside_label(inside),
            size=14.0,
            alpha=0.9,
            marker="x",
        )
        for (s, _), (col, lab) in zip(ex, styles):
            scatter_2d(axp, np.column_stack([s @ e1, s @ e2]) * k, col, lab, size=4.0, alpha=0.6)
        outline = section_outline(sec, e1, e2)
        outline_2d(axp, None if outline is None else outline * k, "swing limit")
        axp.set_xlabel(f"swing along e1 ({unit})")
        axp.set_ylabel(f"swing along e2 ({unit})")
        axp.set_title("swing in the plane perpendicular to the twist axis")
        axp.set_aspect("equal", adjustable="datalim")
        axp.grid(alpha=0.25)
        axp.legend(loc="best", fontsize=7, markerscale=3)

        axt = fig.add_subplot(gs[0, 2:])
        t = tw @ axis
        axt.plot(np.arange(t.shape[0]), t * k, ".", ms=2.0, color=C_CLIP, label="clip twist")
        if (~inside).any():
            out_f = np.flatnonzero(~inside)
            axt.plot(out_f, t[out_f] * k, "x", ms=4.0, color=C_OUT, label=outside_label(inside))
        for (_, tt), (col, lab) in zip(ex, styles):
            axt.plot(np.arange(tt.shape[0]), (tt @ axis) * k, ".", ms=2.5, color=col, label=lab)
        lo, hi = tint
        axt.axhspan(lo * k, hi * k, color=C_LIMIT, alpha=0.08)
        for v in (lo, hi):
            axt.axhline(v * k, color=C_LIMIT, lw=1.2)
        axt.plot([], [], color=C_LIMIT, lw=1.2, label=f"twist limit [{lo * k:.1f}, {hi * k:.1f}] {unit}")
        for b in bounds:
            axt.axvline(b, color="k", lw=0.6, ls=":", alpha=0.6)
        axt.set_xlabel("frame")
        axt.set_ylabel(f"twist about the bone axis ({unit})")
        axt.set_title(f"twist, axis ({axis[0]:.2f}, {axis[1]:.2f}, {axis[2]:.2f})")
        axt.grid(alpha=0.25)
        axt.legend(loc="upper right", fontsize=7, markerscale=3)

    rel = quat.inv_mul(ref, qs)
    quat_panels(fig, gs[1, 0:2], gs[1, 2:4], rel, ranges, bounds)
    return save(fig, path, dpi)


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
    return save(fig, path, dpi)


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
    for ax in axes[:2]:  # exactly the frames drawn, first to last
        ax.set_xlim(idx[0], max(idx[-1], idx[0] + 1))
    axes[0].set_ylabel("rotation (scaled angle axis, deg)")
    axes[1].set_ylabel("angular speed (deg/frame)")
    axes[-1].set_xlabel("frame")
    axes[0].set_title(f"{plot_label(before.skeleton.names[j])}: before (dashed) / after (solid) {changed_by}")
    axes[0].legend(ncol=3, fontsize=7)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return save(fig, path, DPI)


def plot_calibration(
    rows: Sequence[dict[str, Any]],
    path: str | os.PathLike,
    title: str = "",
    *,
    figsize: tuple[float, float] = (9.0, 6.0),
    dpi: int = DPI,
) -> Path:
    """Each calibrated joint's measured recall on clips against the expected recall its limits
    file stores (rows of :meth:`JointLimits.report` with ``expected_recall``), the spread as
    error bars; joints below the diagonal measured less than expected and are named (the worst
    first, each label clear of the others and of the data). The legend sits outside the axes."""
    from .labels import place_labels

    rs = [r for r in rows if "expected_recall" in r]
    if not rs:
        raise LimitsError("these limits store no expected recall (fit them with a target recall)")
    e = np.array([r["expected_recall"] for r in rs])
    m = np.array([r["recall"] for r in rs])
    s = np.array([r["expected_spread"] for r in rs])
    fig = _figure(figsize, dpi)
    fig.subplots_adjust(left=0.1, right=0.7, bottom=0.1, top=0.92)  # the legend goes right of the axes
    ax = fig.add_subplot(1, 1, 1)
    lo = float(min(e.min(), m.min(), (e - s).min()))
    lo = max(0.0, lo - 0.1 * (1.0 - lo) - 1e-3)
    hi = 1.0 + 0.04 * (1.0 - lo)  # a point at recall 1 is drawn whole
    ax.plot([lo, 1.0], [lo, 1.0], ls="--", c="0.5", lw=1, label="measured = expected")
    below = m < e
    ax.errorbar(e[~below], m[~below], xerr=s[~below], fmt="o", c=C_CLIP, ms=4, lw=0.8, label="at or above")
    ax.errorbar(e[below], m[below], xerr=s[below], fmt="o", c=C_LIMIT, ms=4, lw=0.8, label="below expected")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("expected recall (stored; bars: spread over folds)")
    ax.set_ylabel("measured recall (fraction of frames inside)")
    ax.set_title(title or f"{int(below.sum())} of {len(rs)} joints below their expected recall", fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0.0, fontsize=8)
    order = [int(k) for k in np.argsort(m - e) if below[k]]  # the worst joint first
    place_labels(
        ax, np.c_[e[order], m[order]], [plot_label(rs[k]["joint"]) for k in order], np.c_[e, m], xerr=s, marker_px=4.0
    )
    return save(fig, path, dpi)

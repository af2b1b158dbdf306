"""``jointlimits demo``: the main job end to end on a procedural or given clip (fit, limit an
over-rotated copy, report, figures and an interactive page)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import numpy as np

from ._common import (
    BadInput,
    Finite,
    check_output_path,
    emit,
    friendly_errors,
    json_option,
    quiet_option,
    strict_json,
)
from .limits import SHAPE_CHOICE, fit_limits
from .report import _report_table

__all__ = ["demo_command", "run_demo", "worst_joints", "DEMO_FILES"]


#: the files every demo run writes into --out (plus joint_<name>.png figures)
DEMO_FILES = (
    "range_of_motion.bvh",
    "limits.json",
    "over_rotated.bvh",
    "limited.bvh",
    "report.json",
    "report.txt",
    "violations.png",
    "limits.html",
)


def worst_joints(violation: Any, joints: Any, n: int = 3) -> list[int]:
    """The ``n`` joints (of ``joints``) with the largest violation ``[F, J]`` in any frame. (A mean
    over all frames favours joints with a small range that are often a little out, such as toes.)"""
    worst = np.asarray(violation).max(axis=0) if len(violation) else np.zeros(np.shape(violation)[1])
    return sorted(joints, key=lambda j: (-worst[j], j))[:n]


def run_demo(
    input_clip: Path | None,
    out_dir: Path,
    shape: str,
    swing_twist: bool,
    over: float,
    quiet: bool = False,
    coupled: bool = False,
) -> dict[str, Any]:
    """The main job: fit limits, limit an over-rotated copy, write BVHs, a report, figures and an
    interactive page (``limits.html``) of the joints the figures show."""
    from .. import io as motion_io
    from .._atomic import atomic_write
    from .._names import safe_filename
    from ..cleanup.smoothing import smooth_switches
    from ..limits.report import violation_report
    from ..motion import procedural
    from ..viz.plots import plot_joint_limit, plot_violation_report
    from ..viz.viewer import write_limits_page

    files: dict[str, str] = {}
    motion = procedural.range_of_motion() if input_clip is None else motion_io.load(input_clip)
    lim = fit_limits([motion], shape, swing_twist, None, "mean", 0.05, {}, quiet, coupled)
    out_dir.mkdir(parents=True, exist_ok=True)  # only once the input has loaded and fitted
    if input_clip is None:
        src = out_dir / "range_of_motion.bvh"
        motion_io.save(src, motion)
        files["range_of_motion"] = str(src)
    lim_path = out_dir / "limits.json"
    lim.save(lim_path)
    files["limits"] = str(lim_path)
    wild = procedural.over_rotate(motion, over)
    # one pass limits the over-rotated copy and measures how far out it was
    limited, wild_violation = lim.apply_and_measure(wild, smooth=smooth_switches, check=False)
    for key, m in (("over_rotated", wild), ("limited", limited)):
        p = out_dir / f"{key}.bvh"
        motion_io.save(p, m)
        files[key] = str(p)
    before = violation_report(wild.skeleton.names, lim.active(), [wild_violation])
    after = lim.report(limited)
    # the hard projection alone: the spring that removes its pops may leave some frames slightly out
    hard = lim.report(lim.apply(wild))
    report = {
        "input": str(input_clip) if input_clip else "procedural range of motion",
        "frames": motion.num_frames,
        "joints": len(lim.joints),
        "shape": shape,
        "swing_twist": swing_twist,
        "over_rotation": over,
        "over_rotated": before,
        "limited": after,
        "projected": hard,
    }
    rp = out_dir / "report.json"
    with atomic_write(rp) as fh:
        fh.write(strict_json(report))
    files["report"] = str(rp)
    with atomic_write(out_dir / "report.txt") as fh:
        fh.write(
            "over-rotated copy:\n"
            + _report_table(before)
            + "\n\nprojected onto the limits:\n"
            + _report_table(hard)
            + "\n\nafter limiting (projected, pops smoothed; limited.bvh):\n"
            + _report_table(after)
            + "\n"
        )
    files["report_text"] = str(out_dir / "report.txt")
    files["violations_png"] = str(plot_violation_report(lim, wild, out_dir / "violations.png", projected=limited))
    # figures for the three joints the over-rotation pushed furthest out
    worst = [motion.skeleton.names[j] for j in worst_joints(wild_violation, lim.active())]
    for name in worst:
        p = out_dir / f"joint_{safe_filename(name)}.png"  # names come from the clip: never a path
        plot_joint_limit(lim, motion, name, p, projected=limited, over_rotated=wild)
        files[f"joint_{name}"] = str(p)
    # the same joints on an interactive page: the fitted clip and the over-rotated copy in limit space
    if worst:
        names = [input_clip.name if input_clip is not None else "range_of_motion.bvh", "over_rotated.bvh"]
        files["limits_html"] = str(
            write_limits_page(
                lim, [motion, wild], out_dir / "limits.html", joints=worst, overwrite=True, clip_names=names
            )
        )
    report["files"] = files
    return report


@click.command("demo")
@click.option(
    "--input",
    "input_clip",
    type=click.Path(path_type=Path),
    default=None,
    help="A real BVH clip (default: a procedural range-of-motion clip of a built-in humanoid).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("jointlimits_demo"),
    show_default=True,
    help="Folder for the results.",
)
@click.option("--shape", type=SHAPE_CHOICE, default="ellipsoid", show_default=True, help="Limit shape in limit space.")
@click.option("--swing-twist", is_flag=True, help="Separate limits for swing and twist about the bone axis.")
@click.option("--coupled", is_flag=True, help="With --shape implicit: parent-conditioned limits.")
@click.option(
    "--over-rotation",
    type=Finite(min=0.0, max=10.0),
    default=0.5,
    show_default=True,
    help="How far past the data the over-rotated copy goes (0.5 = 50%).",
)
@click.option("--force", is_flag=True, help="Replace the results of an earlier run in --out.")
@quiet_option
@json_option
@friendly_errors
def demo_command(
    input_clip: Path | None,
    out_dir: Path,
    shape: str,
    swing_twist: bool,
    coupled: bool,
    over_rotation: float,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Fit limits, apply them to an over-rotated copy, write BVHs, a report, PNG figures and an
    interactive HTML page of the worst joints' limits."""
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(f"{out_dir}: --out must be a folder, and this is a file")
    if not out_dir.exists():
        check_output_path(out_dir, [])
    if (
        input_clip is not None
        and out_dir.exists()
        and out_dir.resolve() == input_clip.resolve().parent
        and (out_dir / input_clip.name).exists()
        and input_clip.name in ("limited.bvh", "over_rotated.bvh")
    ):
        raise BadInput(f"{input_clip}: the demo would overwrite its own input; choose another --out")
    if coupled and (shape != "implicit" or swing_twist):
        raise BadInput("--coupled needs --shape implicit (without --swing-twist)")
    if shape == "implicit":  # its figures draw iso-surfaces: a missing extra fails before any work
        from .._optional import require

        require("skimage.measure", "implicit-draw", "drawing implicit limits")
    if out_dir.is_dir() and not force:
        old = [n for n in DEMO_FILES if (out_dir / n).exists()] + sorted(p.name for p in out_dir.glob("joint_*.png"))
        if old:
            raise BadInput(
                f"{out_dir}: holds the results of an earlier run ({old[0]}, ...); pass --force to replace them"
            )
    rep = run_demo(input_clip, out_dir, shape, swing_twist, over_rotation, quiet or as_json, coupled)
    b = rep["over_rotated"]
    a = rep["limited"]
    frac_b = np.mean([r["fraction_outside"] for r in b]) if b else 0.0
    frac_a = np.mean([r["fraction_outside"] for r in a]) if a else 0.0
    frac_h = np.mean([r["fraction_outside"] for r in rep["projected"]]) if a else 0.0
    lines = [
        f"jointlimits demo on {rep['input']}: {rep['frames']} frames, {rep['joints']} joints limited "
        f"({shape}{', swing-twist' if swing_twist else ''})",
        f"  over-rotated copy: {100 * frac_b:.1f}% of joint-frames outside the limits; "
        f"projected: {100 * frac_h:.1f}%; after smoothing the pops (limited.bvh): {100 * frac_a:.1f}%",
        "  wrote:",
    ]
    lines += [f"    {k:<18} {v}" for k, v in rep["files"].items()]
    emit(
        "\n".join(lines),
        {
            "input": rep["input"],
            "frames": rep["frames"],
            "joints": rep["joints"],
            "fraction_outside": {"over_rotated": float(frac_b), "projected": float(frac_h), "limited": float(frac_a)},
            "files": rep["files"],
        },
        quiet,
        as_json,
    )

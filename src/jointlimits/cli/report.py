"""``jointlimits report | plot``: where clips go past fitted limits, as a table and as figures."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import (
    BadInput,
    check_output_path,
    emit,
    friendly_errors,
    joint_selection,
    json_option,
    limits_for_clip,
    load_limits,
    quiet_option,
)
from .corpus import is_corpus
from .limits import _load_clips, _require_frames

__all__ = ["report_command", "plot_command"]


def _ranges_text(ranges: list[list[int]], most: int = 4) -> str:
    parts = [f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:most]]
    return ", ".join(parts) + (f" (+{len(ranges) - most} more)" if len(ranges) > most else "")


def _fraction(x: float) -> str:
    """A fraction with 3 decimals, or 2 significant digits where those would read 0.000 (one
    frame out of thousands is not none)."""
    return f"{x:.3f}" if x == 0 or x >= 0.0005 else f"{x:.2g}"


def _expected_text(r: dict) -> str:
    if "expected_recall" not in r:
        return f"{'':>8} {'':>9}  "
    flag = "  below" if r["below_expected"] else ""
    return f"{r['recall']:>8.4f} {r['expected_recall']:>9.4f}{flag:<7}"


def _report_table(rows: list[dict]) -> str:
    ranges = any("frame_ranges" in r for r in rows)
    expected = any("expected_recall" in r for r in rows)
    lines = [
        f"{'joint':<20} {'outside':>8} {'fraction':>9} {'mean deg':>9} {'max deg':>9}"
        + (f" {'recall':>8} {'expected':>9}{'':<7}" if expected else "")
        + ("  frames outside" if ranges else "")
    ]
    for r in sorted(rows, key=lambda r: -r["fraction_outside"]):
        lines.append(
            f"{r['joint']:<20} {r['frames_outside']:>8d} {_fraction(r['fraction_outside']):>9} "
            f"{r['mean_violation_deg']:>9.2f} {r['max_violation_deg']:>9.2f}"
            + (f" {_expected_text(r)}" if expected else "")
            + (f"  {_ranges_text(r.get('frame_ranges', []))}" if ranges else "")
        )
    if expected:
        below = [r["joint"] for r in rows if r.get("below_expected")]
        lines.append(
            f"{len(below)} of {sum('expected_recall' in r for r in rows)} joints below their expected recall"
            + (f": {', '.join(below)}" if below else "")
        )
    return "\n".join(lines)


def _clip_line(label: str, frames: int, rows: list[dict]) -> str:
    """One line for a clip (or a whole folder): joints with frames outside, and the worst one."""
    out = [r for r in rows if r["frames_outside"] > 0]
    head = f"{label}: {frames} frames, {len(out)} of {len(rows)} joints outside"
    if not out:
        return head
    worst = max(out, key=lambda r: (r["fraction_outside"], r["max_violation_deg"]))
    return (
        f"{head}; most {worst['joint']} ({_fraction(worst['fraction_outside'])} of frames, "
        f"max {worst['max_violation_deg']:.1f} deg)"
    )


def _folder_text(per_clip: list[dict], rows: list[dict]) -> str:
    """A folder's report: one line per clip, then one summary line (the detail is in --json)."""
    lines = [_clip_line(p["clip"], p["frames"], p["joints"]) for p in per_clip]
    total = sum(p["frames"] for p in per_clip)
    clean = sum(all(r["frames_outside"] == 0 for r in p["joints"]) for p in per_clip)
    lines.append(_clip_line(f"all {len(per_clip)} clips ({clean} inside the limits)", total, rows))
    return "\n".join(lines)


@click.command("report")
@click.argument("limits_file", metavar="LIMITS.json", type=click.Path(path_type=Path))
@click.argument("clips", nargs=-1, required=True, type=click.Path(path_type=Path))
@joint_selection
@click.option(
    "--retarget-rest",
    is_flag=True,
    help="Re-express the limits in the clips' rest pose where it differs by one rotation per joint.",
)
@quiet_option
@json_option
@friendly_errors
def report_command(
    limits_file: Path,
    clips: tuple[Path, ...],
    joints: tuple[str, ...],
    exclude: tuple[str, ...],
    root: bool,
    retarget_rest: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Per clip and joint: frames outside the limits (and which), fraction, mean and max violation
    in degrees; then all clips together. For limits fitted with --target-recall also each joint's
    measured recall next to the expected one, joints below it flagged. CLIPS may be folders, glob
    patterns or @LIST.txt files; with a folder, glob or list the text is one line per clip and a
    summary line (the tables are in --json). LIMITS may be ``human`` (the built-in human model)."""

    loaded = load_limits(limits_file)
    folder = is_corpus(clips)
    if folder:
        from ..corpus.sources import expand

        found, bad = expand([str(c) for c in clips])
        if not found:
            raise BadInput("no clips: " + "; ".join(f"{s}: {w}" for s, w in bad))
        if bad and not (quiet or as_json):
            click.echo("skipped: " + "; ".join(f"{s}: {w}" for s, w in bad), err=True)
        clips = tuple(Path(c.path) for c in found)
    ms = _load_clips(list(clips), quiet=quiet or as_json)
    per_clip = []
    for c, m in zip(clips, ms):
        lim = limits_for_clip(loaded, m, joints, exclude, root, retarget_rest)
        per_clip.append({"clip": str(c), "frames": m.num_frames, "joints": lim.report(m)})
    lim = limits_for_clip(loaded, ms[0], joints, exclude, root, retarget_rest)
    rows = (
        lim.report(ms)
        if len(ms) > 1
        else [{k: v for k, v in r.items() if k != "frame_ranges"} for r in per_clip[0]["joints"]]
    )
    text = "\n\n".join(f"{p['clip']} ({p['frames']} frames):\n" + _report_table(p["joints"]) for p in per_clip)
    if folder:
        text = _folder_text(per_clip, rows)
    elif len(ms) > 1:
        text += f"\n\nall {len(ms)} clips:\n" + _report_table(rows)
    emit(
        text,
        {"limits": str(limits_file), "clips": [str(c) for c in clips], "joints": rows, "per_clip": per_clip},
        quiet,
        as_json,
    )


@click.command("plot")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--joint", default=None, help="Joint to plot.")
@click.option(
    "--calibration",
    is_flag=True,
    help="LIMITS.json CLIP...: every joint's measured recall on the clips against its expected recall.",
)
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="PNG file to write.")
@click.option(
    "--after",
    type=click.Path(path_type=Path),
    default=None,
    help="A filtered/limited version of CLIP: plot the joint's channel before/after instead.",
)
@click.option(
    "--retarget-rest",
    is_flag=True,
    help="Re-express the limits in the clip's rest pose where it differs by one rotation per joint.",
)
@click.option("--force", is_flag=True, help="Replace an existing figure.")
@quiet_option
@json_option
@friendly_errors
def plot_command(
    inputs: tuple[Path, ...],
    joint: str | None,
    calibration: bool,
    output: Path,
    after: Path | None,
    retarget_rest: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Plot a joint. With LIMITS.json and CLIP: its point cloud in limit space with the limit
    surface, and the quaternions before/after unrolling. With CLIP and --after OUT (a filtered
    or limited version of it): the joint's rotation before/after. Frames outside the limit are
    marked."""
    from .. import io as motion_io

    check_output_path(output, [*inputs, after], force, suffixes=(".png",), what="figure")
    if calibration:
        if len(inputs) < 2 or inputs[0].suffix.lower() != ".json" or after is not None:
            raise BadInput("usage: jointlimits plot LIMITS.json CLIP... --calibration -o FIG.png")
        from ..limits.model import JointLimits
        from ..viz.plots import plot_calibration

        loaded = JointLimits.load(inputs[0])
        if loaded.calibration is None:
            raise BadInput(f"{inputs[0]}: these limits store no expected recall (fit them with --target-recall)")
        ms = _load_clips(list(inputs[1:]), quiet=True)
        for c, m in zip(inputs[1:], ms):
            _require_frames(m, c)
        lim = limits_for_clip(loaded, ms[0], (), (), False, retarget_rest)
        path = plot_calibration(lim.report(ms), output)
        emit(f"wrote {path}", {"output": str(path)}, quiet, as_json)
        return
    if joint is None:
        raise BadInput("--joint is needed (or --calibration)")
    if after is not None:
        if len(inputs) != 1:
            raise BadInput("with --after give exactly one CLIP (the original)")
        from .filters import plot_channel_before_after

        before_m, after_m = motion_io.load(inputs[0]), motion_io.load(after)
        _require_frames(before_m, inputs[0])
        before_m.skeleton.index(joint)
        path = plot_channel_before_after(before_m, after_m, joint, output)
    else:
        if len(inputs) != 2 or (inputs[0].suffix.lower() != ".json" and str(inputs[0]) != "human"):
            raise BadInput(
                "usage: jointlimits plot LIMITS.json CLIP --joint NAME -o FIG.png "
                "(or CLIP --after OUT.bvh for a before/after channel plot)"
            )
        from ..limits.model import JointLimits
        from ..viz.plots import plot_joint_limit

        m = motion_io.load(inputs[1])
        _require_frames(m, inputs[1])
        lim = limits_for_clip(load_limits(inputs[0]), m, (), (), True, retarget_rest)
        path = plot_joint_limit(lim, m, joint, output)
    emit(f"wrote {path or output}", {"output": str(path or output), "joint": joint}, quiet, as_json)

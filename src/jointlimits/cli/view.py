"""``jointlimits view``: an interactive HTML page of fitted limits (a thin layer over :mod:`jointlimits.viz.viewer`)."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import (
    BadInput,
    check_output_path,
    emit,
    friendly_errors,
    json_option,
    limits_for_clip,
    quiet_option,
    split_names,
)

__all__ = ["view_command"]


@click.command("view")
@click.argument("limits_file", metavar="LIMITS.json", type=click.Path(path_type=Path))
@click.argument("clips", nargs=-1, metavar="[CLIP]...", type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), required=True, help="HTML page to write (with --demo: a folder)."
)
@click.option(
    "--demo",
    is_flag=True,
    help="Write the web demo instead (a folder: a character posed by IK and look-at with these limits on or off, "
    "the first CLIP to scrub limited against raw; runs from file:// or any static server).",
)
@click.option(
    "--joint",
    "--joints",
    "joints",
    multiple=True,
    metavar="NAMES",
    help="Joints to show (comma-separated, repeatable; default: every joint with a limit).",
)
@click.option("--exclude", multiple=True, metavar="NAMES", help="Joints not to show (comma-separated, repeatable).")
@click.option("--root", is_flag=True, help="Also show the joints carrying the global position and heading.")
@click.option(
    "--retarget-rest",
    is_flag=True,
    help="Re-express the limits in the clips' rest pose where it differs by one rotation per joint.",
)
@click.option(
    "--max-points",
    type=click.IntRange(1, 10**7),
    default=3000,
    show_default=True,
    help="Frames drawn per joint (an even subsample over all clips).",
)
@click.option("--force", is_flag=True, help="Replace an existing page (or an input file).")
@quiet_option
@json_option
@friendly_errors
def view_command(
    limits_file: Path,
    clips: tuple[Path, ...],
    output: Path,
    joints: tuple[str, ...],
    exclude: tuple[str, ...],
    root: bool,
    retarget_rest: bool,
    max_points: int,
    demo: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Write an interactive page of the limits: per joint, the clips' rotations in limit space
    (red where outside) and the limit surface, turnable in 3D, with a dropdown to switch joints.
    Without CLIP only the limit surfaces are shown. The page works offline (plotly.js inline)."""
    from .. import io as motion_io
    from ..viz.viewer import write_limits_page
    from ._common import load_limits

    if demo:
        _write_demo(limits_file, clips, output, force, quiet, as_json)
        return
    check_output_path(output, [limits_file, *clips], force, suffixes=(".html", ".htm"), what="page")
    if output.exists() and not force:
        raise BadInput(f"{output}: file exists; pass --force to replace it")
    lim = load_limits(limits_file)
    ms = [motion_io.load(c) for c in clips]
    names = split_names(joints)
    lim = limits_for_clip(lim, ms[0] if ms else None, joints, exclude, root, retarget_rest)
    try:  # the page's checks name each clip by its file name (LimitsError -> one line via friendly_errors)
        path = write_limits_page(
            lim,
            ms or None,
            output,
            joints=names,
            max_points=max_points,
            overwrite=force,
            clip_names=[c.name for c in clips] or None,
        )
    except FileExistsError:  # appeared while the page was being built
        raise BadInput(f"{output}: file exists; pass --force to replace it") from None
    shown = len(dict.fromkeys(names)) if names else len(lim.active())
    frames = sum(m.num_frames for m in ms)
    what = f"{frames} frames of {len(ms)} clip(s)" if ms else "limit surfaces only"
    emit(
        f"wrote {path} ({shown} joint(s), {what}; opens offline in a browser)",
        {"output": str(path), "joints": shown, "frames": frames, "clips": [str(c) for c in clips]},
        quiet,
        as_json,
    )


def _write_demo(
    limits_file: Path, clips: tuple[Path, ...], output: Path, force: bool, quiet: bool, as_json: bool
) -> None:
    """``view --demo``: the web demo (jointlimits.viz.demo) with these limits and the first clip built in."""
    from .. import io as motion_io
    from ..limits.model import JointLimits
    from ..viz.demo import write_demo

    if len(clips) > 1:
        raise BadInput("--demo shows one clip; give at most one CLIP")
    if output.exists() and not output.is_dir():
        raise BadInput(f"{output}: not a folder; --demo writes a folder (index.html and its files)")
    if (output / "index.html").exists() and not force:
        raise BadInput(f"{output / 'index.html'}: file exists; pass --force to replace it")
    lim = JointLimits.load(limits_file)
    clip = motion_io.load(clips[0]) if clips else None
    try:
        page = write_demo(
            output,
            lim,
            clip,
            title=f"{limits_file.name}" + (f", {clips[0].name}" if clips else ""),
            overwrite=force,
            limits_name=limits_file.name,
        )
    except FileExistsError:  # appeared while the page was being built
        raise BadInput(f"{output / 'index.html'}: file exists; pass --force to replace it") from None
    from ..viz.demo import MAX_FRAMES

    frames = clip.num_frames if clip is not None else 0
    shown = f"{frames}" if frames <= MAX_FRAMES else f"{MAX_FRAMES} of {frames}"
    emit(
        f"wrote {page} (the web demo: {len(lim.active())} limited joint(s)"
        + (f", {shown} frames of {clips[0].name}" if clips else "")
        + "; opens from disk, no server needed)",
        {"output": str(page), "joints": len(lim.active()), "frames": frames, "clips": [str(c) for c in clips]},
        quiet,
        as_json,
    )

"""``jointlimits resample | rename``: another frame rate; joint names of another convention, or a
clip re-expressed on the skeleton a limits file was fitted on."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from ._common import (
    CLIP_OUTPUT_FORMATS,
    BadInput,
    Finite,
    check_output_path,
    emit,
    friendly_errors,
    json_option,
    quiet_option,
)

__all__ = ["resample_command", "rename_command"]


@click.command("resample")
@click.argument("clip", type=click.Path(path_type=Path))
@click.option("--fps", type=Finite(min=0.0, min_open=True, max=1e4), required=True, help="Frame rate of the result.")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help=f"Motion file to write: {CLIP_OUTPUT_FORMATS}.",
)
@click.option("--force", is_flag=True, help="Replace an existing output (also the input clip).")
@quiet_option
@json_option
@friendly_errors
def resample_command(clip: Path, fps: float, output: Path, force: bool, quiet: bool, as_json: bool) -> None:
    """Resample CLIP to FPS frames per second (slerp for rotations, linear for positions).

    A rounded frame time (0.033333) is read as the rate it rounds (30). The clip's own rate writes
    the same file; a whole divisor of it (15 on a 30 fps clip) picks every k-th frame. A BVH
    output keeps the input's line endings and number style.
    """
    from .. import io as motion_io
    from ..motion.resample import nominal_fps, resample

    check_output_path(output, [clip], force)
    m = motion_io.load(clip)
    out = resample(m, fps)
    # interpolated values are written to the file's decimals, not to every digit of a double
    motion_io.save(
        output, out, **({"round_new": True} if motion_io.FORMATS.get(output.suffix.lower()) == "bvh" else {})
    )
    fps_in, fps_out = nominal_fps(m.fps), nominal_fps(out.fps)
    emit(
        f"{m.num_frames} frames at {fps_in:g} fps -> {out.num_frames} frames at {fps_out:g} fps -> {output}",
        {"output": str(output), "frames_in": m.num_frames, "fps_in": fps_in, "frames": out.num_frames, "fps": fps_out},
        quiet,
        as_json,
    )


@click.command("rename")
@click.argument("clip", type=click.Path(path_type=Path))
@click.option(
    "--to",
    "target",
    required=True,
    metavar="CONVENTION|LIMITS.json|CLIP",
    help="A naming convention (lafan1, cmu, cmu_max, bandai, mixamo, smpl): rename the joints; or a "
    "limits file or clip: re-express the motion on that skeleton (rest poses must agree).",
)
@click.option("--from", "source", default=None, help="CLIP's convention (default: detected from its names).")
@click.option(
    "--tolerance",
    type=Finite(min=0.0, max=1e6),
    default=None,
    metavar="DEG",
    help="Largest angle between mapped bones at rest (default 30).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help=f"Motion file to write: {CLIP_OUTPUT_FORMATS}.",
)
@click.option("--force", is_flag=True, help="Replace an existing output (also the input clip).")
@quiet_option
@json_option
@friendly_errors
def rename_command(
    clip: Path,
    target: str,
    source: str | None,
    tolerance: float | None,
    output: Path,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Rename CLIP's joints into another convention, or map it onto the skeleton of a limits file
    (or another clip) so that limits fitted there can be applied to it or reported on it."""
    from .. import io as motion_io
    from ..motion import naming

    check_output_path(output, [clip], force)
    m = motion_io.load(clip)
    if source is not None:
        naming.canonical(m.skeleton, source)  # checks the name
    if target in naming.CONVENTIONS:
        out = naming.rename_motion(m, target, source)
        changed = sum(a != b for a, b in zip(m.skeleton.names, out.skeleton.names))
        motion_io.save(output, out)
        emit(
            f"renamed {changed} of {m.num_joints} joints into {target} -> {output}",
            {"output": str(output), "renamed": changed, "joints": m.num_joints, "convention": target},
            quiet,
            as_json,
        )
        return
    tp = Path(target)
    if tp.suffix.lower() == ".json":
        from ..limits.model import JointLimits

        sk = JointLimits.load(tp).skeleton
    elif tp.suffix.lower() in motion_io.FORMATS:
        sk = motion_io.load(tp).skeleton
    else:
        raise BadInput(
            f"--to {target!r}: not a convention ({', '.join(naming.CONVENTIONS)}), "
            f"a limits file (.json) or a motion file"
        )
    if source is not None:
        m = naming.rename_motion(m, source, source)
    tol = naming.DEFAULT_TOLERANCE_DEG if tolerance is None else tolerance
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = naming.map_motion(m, sk, tol)
    for w in caught if not (quiet or as_json) else ():
        click.echo(f"warning: {w.message}", err=True)
    motion_io.save(output, out)
    ang = naming.rest_pose_angles(m.skeleton, sk)
    emit(
        f"mapped {m.num_joints} joints onto {sk.num_joints} of {tp.name} "
        f"(rest bones within {max(ang.values()):.1f} deg) -> {output}",
        {
            "output": str(output),
            "joints": m.num_joints,
            "target_joints": sk.num_joints,
            "rest_max_deg": float(max(ang.values())),
            "warnings": [str(w.message) for w in caught],
        },
        quiet,
        as_json,
    )

"""``jointlimits recover``: 3D joint positions -> a BVH motion inside the joint limits.

Registered on the main group by ``jointlimits.cli``. Bad input is one line on stderr, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import click

from ._common import (
    CLIP_OUTPUT_FORMATS,
    BadInput,
    Finite,
    check_output_path,
    friendly_errors,
    quiet_option,
    strict_json,
)
from ._common import progress as progress_bar

__all__ = ["recover_command"]


@click.command("recover")
@click.argument("positions", type=click.Path(path_type=Path))
@click.option(
    "--skeleton",
    "skeleton_path",
    type=click.Path(path_type=Path),
    required=True,
    help="BVH file of the rig (its hierarchy and bone offsets; its frame rate is the default).",
)
@click.option(
    "--limits",
    "limits_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Joint limits JSON (from jointlimits fit), or 'human' (the built-in human model, or a `human build` "
    "file: limits for the --skeleton rig, its frames setting the twist zeros); without it the recovery is "
    "unconstrained.",
)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path),
    required=True,
    help=f"Motion file to write: {CLIP_OUTPUT_FORMATS}.",
)
@click.option(
    "--fps",
    type=Finite(min=0.0, min_open=True, max=1e5),
    default=None,
    help="Frame rate of the positions (default: the file's, else the rig's).",
)
@click.option(
    "--smooth",
    type=Finite(min=0.0, max=1e3),
    default=None,
    metavar="HALFLIFE",
    help="Smooth the positions first with a zero-lag damper of this half-life (seconds).",
)
@click.option(
    "--iterations",
    type=click.IntRange(1, 1000),
    default=8,
    show_default=True,
    help="Damped least-squares iterations per pass.",
)
@click.option(
    "--no-warm-start", is_flag=True, help="Solve every frame on its own (no second pass from the previous frame)."
)
@click.option("--robust", is_flag=True, help="Down-weight outlying observations in the second pass.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@quiet_option
@click.option("--force", is_flag=True, help="Replace an existing output (also an input file).")
@friendly_errors
def recover_command(
    positions: Path,
    skeleton_path: Path,
    limits_path: Path | None,
    out: Path,
    fps: float | None,
    smooth: float | None,
    iterations: int,
    no_warm_start: bool,
    robust: bool,
    as_json: bool,
    quiet: bool,
    force: bool,
) -> None:
    """Recover rotations from 3D joint POSITIONS (.npz, .npy, .csv or the FK of a .bvh; NaN or
    empty = not observed) on the --skeleton rig, inside --limits (a limits file, or ``human``: the
    built-in human model on the rig), and write OUT (BVH, glTF, USD or FBX by its extension); prints
    the fit error and the frames outside the limits before (limit-free closed-form fit) and after."""
    from .. import io as motion_io
    from ..ik.recover import recover
    from ..io import WRITABLE, bvh
    from ..io.positions import load_positions
    from ._common import limits_for_clip, load_limits

    inputs = [positions, skeleton_path] + ([limits_path] if limits_path else [])
    check_output_path(out, inputs, force, suffixes=WRITABLE)
    if iterations < 0:
        raise BadInput(f"--iterations must be >= 0, got {iterations}")
    if fps is not None and not fps > 0:
        raise BadInput(f"--fps must be positive, got {fps}")
    if smooth is not None and not smooth > 0:
        raise BadInput(f"--smooth must be a positive half-life in seconds, got {smooth}")
    rig = bvh.load(skeleton_path)
    jp = load_positions(positions, rig.skeleton)
    target = jp.for_skeleton(rig.skeleton)
    # a limits file as it is (every joint, checked against the rig); a human model made for the rig
    limits = limits_for_clip(load_limits(limits_path), rig, (), (), True) if limits_path else None
    rate = fps or jp.fps or rig.fps
    bar = progress_bar(1, "recovering", "frame", disable=quiet or as_json)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        motion, rep = recover(
            target,
            rig,
            limits,
            frame_time=1.0 / rate,
            smooth=smooth,
            warm_start=not no_warm_start,
            robust=robust,
            iterations=iterations,
            progress=progress,
        )
    finally:
        bar.close()
    motion_io.save(out, motion)
    truth = _rotation_error(positions, rig.skeleton, motion)
    if truth is not None:
        rep.extra["rotation_error_deg"], rep.extra["rotation_error_inner_deg"] = truth
    if as_json:
        d = rep.to_dict()
        d.update(
            {
                "input": str(positions),
                "skeleton": str(skeleton_path),
                "output": str(out),
                "limits": str(limits_path) if limits_path else None,
            }
        )
        click.echo(strict_json(d, unknown_as_null=True))
        return
    if quiet:
        return
    n = rep.frames * rep.joints
    click.echo(f"{positions} -> {out}")
    click.echo(
        f"  {rep.frames} frames x {rep.joints} joints, {100 * rep.observed_fraction:.1f}% observed, "
        f"{rep.frames / max(rep.seconds, 1e-9):.0f} frames/s"
    )
    click.echo(
        f"  fit error (RMS, file units): before {rep.error_before:.3f} (limit-free closed form), "
        f"after {rep.error_after:.3f}"
    )
    if rep.limited:
        click.echo(
            f"  outside the limits: before {rep.outside_before} joint-frames ({100 * rep.outside_before / n:.1f}%) "
            f"in {rep.frames_outside_before} frames; after {rep.outside_after} joint-frames in "
            f"{rep.frames_outside_after} frames"
        )
    else:
        click.echo(
            f"  no limits given: unconstrained recovery, unobserved twists from the {rep.extra['posture_prior']}"
        )
    if truth is not None:
        click.echo(
            f"  local rotations against {positions.name}'s own: mean {truth[0]:.1f} deg"
            + (f" (joints with a child {truth[1]:.1f} deg)" if truth[1] == truth[1] else "")
        )


def _rotation_error(positions: Path, skeleton, motion) -> tuple[float, float] | None:
    """Mean angle (degrees) between the recovered local rotations and those of POSITIONS when it
    is a BVH of the same joints and frames (all joints; joints with a child), else None."""
    import numpy as np

    from ..io import bvh
    from ..motion import quat

    if positions.suffix.lower() != ".bvh":
        return None
    src = bvh.load(positions)
    if src.skeleton.names != skeleton.names or src.num_frames != motion.num_frames:
        return None
    ang = np.degrees(quat.angle(motion.rotations, src.rotations))
    inner = [j for j in range(skeleton.num_joints) if skeleton.children(j)]
    return float(ang.mean()), float(ang[:, inner].mean()) if inner else float("nan")

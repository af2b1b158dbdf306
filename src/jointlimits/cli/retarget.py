"""``jointlimits retarget``: a clip onto an exported MJCF humanoid with mink, under fitted limits."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import CLIP_OUTPUT_FORMATS, BadInput, check_output_path, emit, friendly_errors, json_option, quiet_option
from ._common import progress as progress_bar

__all__ = ["retarget_command"]


@click.command("retarget")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--mjcf",
    type=click.Path(path_type=Path),
    required=True,
    help="The MJCF humanoid `jointlimits export --to mujoco` (or mujoco-ball) wrote for the limits' skeleton.",
)
@click.option(
    "--limits",
    "limits_file",
    type=click.Path(path_type=Path),
    required=True,
    help="Limits file (its skeleton is the output's; its limits are the constraint), or 'human' (the built-in "
    "human model, or a `human build` file: limits for SOURCE's own skeleton, which is then the output's).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help=f"Motion file to write: {CLIP_OUTPUT_FORMATS}.",
)
@click.option(
    "--mode",
    type=click.Choice(["fitted", "box", "none"]),
    default="fitted",
    show_default=True,
    help="fitted: the limits file through jointlimits' mink limit; box: mink's ConfigurationLimit from the MJCF; none.",
)
@click.option(
    "--margin",
    type=click.FloatRange(0.0, 1.0),
    default=0.005,
    show_default=True,
    help="Radians kept inside the fitted limits (as mink's min_distance_from_limits).",
)
@click.option(
    "--max-step",
    type=click.FloatRange(0.0),
    default=0.5,
    show_default=True,
    help="Largest tangent step of a limited joint per solve near its limit (radians; 0: from the limit's curvature).",
)
@click.option(
    "--gain",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=0.95,
    show_default=True,
    help="Share of the distance to a limit a solve may close (as mink's ConfigurationLimit gain).",
)
@click.option("--iterations", type=click.IntRange(1, 100), default=3, show_default=True, help="QP solves per frame.")
@click.option("--start", type=click.IntRange(0), default=0, show_default=True, help="First frame of SOURCE.")
@click.option("--frames", type=click.IntRange(1), default=None, help="Frames to retarget (default: to the end).")
@click.option("--force", is_flag=True, help="Replace an existing output (also the input clip).")
@quiet_option
@json_option
@friendly_errors
def retarget_command(
    source: Path,
    mjcf: Path,
    limits_file: Path,
    output: Path,
    mode: str,
    margin: float,
    max_step: float,
    gain: float,
    iterations: int,
    start: int,
    frames: int | None,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Retarget SOURCE onto the MJCF humanoid with mink (root, end-effector and joint-position
    tasks) and write the result on the limits' skeleton (BVH, glTF, USD or FBX by OUT's extension).
    --limits human: the built-in human model on SOURCE's skeleton (export the MJCF for it with
    ``jointlimits export human --rig SOURCE --to mujoco``)."""
    from .. import io as motion_io
    from ..io import WRITABLE
    from ..limits.human import HumanModel, is_human_model
    from ._common import limits_for_clip, load_limits

    check_output_path(output, [source, mjcf, limits_file], force, suffixes=WRITABLE)
    for p in (source, mjcf, limits_file):
        if not p.is_file() and not (p is limits_file and is_human_model(p)):
            raise BadInput(f"{p}: no such file")
    from ..integrations.mink import (
        RetargetSettings,
        load_model,
        make_limits,
        retarget,
        tracking_errors,
    )

    loaded = load_limits(limits_file)
    m = motion_io.load(source)
    # a limits file as it is (on its own skeleton); a human model made for the source clip's
    limits = limits_for_clip(loaded, m, (), (), True) if isinstance(loaded, HumanModel) else loaded
    if start >= m.num_frames:
        raise BadInput(f"{source}: --start {start} is past its {m.num_frames} frames")
    m = m.frames(start, None if frames is None else start + frames)
    model = load_model(mjcf)
    lims = make_limits(model, mode, limits, margin, gain, max_step or None)
    bar = progress_bar(m.num_frames, "retarget", "frame", disable=quiet or as_json)

    def progress(k: int, n: int) -> None:
        bar.n = k
        bar.refresh()

    try:
        res = retarget(m, model, limits.skeleton, lims, RetargetSettings(iterations=iterations), progress)
    finally:
        bar.close()
    motion_io.save(output, res.motion)
    outside = int((~limits.contains(res.motion.rotations)).sum())
    ee, jp = tracking_errors(model, res)
    fps = m.num_frames / max(res.seconds, 1e-9)
    emit(
        f"{m.num_frames} frames ({mode} limits): {outside} joint-frames outside the fitted limits, "
        f"end effectors {1000 * ee:.2f} mm, joints {1000 * jp:.2f} mm, {fps:.1f} frames/s -> {output}",
        {
            "output": str(output),
            "frames": m.num_frames,
            "mode": mode,
            "outside": outside,
            "end_effector_error_m": ee,
            "joint_error_m": jp,
            "frames_per_second": fps,
        },
        quiet,
        as_json,
    )

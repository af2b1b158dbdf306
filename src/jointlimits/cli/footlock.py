"""``jointlimits footlock``: pin planted feet of a BVH clip with limit-respecting leg IK.

Registered on the main group by ``jointlimits.cli``. Bad input is one line on stderr, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..cleanup.footlock import (
    DEFAULT_BLEND_FRAMES,
    DEFAULT_HEIGHT_THRESHOLD,
    DEFAULT_MIN_FRAMES,
    DEFAULT_VELOCITY_THRESHOLD,
    STEP_MARGIN_DEGREES,
)
from ._common import CLIP_OUTPUT_FORMATS, BadInput, Finite, friendly_errors, quiet_option, strict_json

__all__ = ["footlock_command"]


@click.command("footlock")
@click.argument("clip", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path),
    required=True,
    help=f"Motion file to write: {CLIP_OUTPUT_FORMATS}.",
)
@click.option(
    "--limits",
    "limits_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Joint limits JSON (from jointlimits fit); hip, knee and ankle rotations are kept inside "
    "(the ankle unless --free-ankle).",
)
@click.option(
    "--height-threshold",
    type=Finite(min=0.0, min_open=True, max=1e6),
    default=DEFAULT_HEIGHT_THRESHOLD,
    show_default=True,
    help="Metres above the clip's ground level under which a heel or toe may be planted.",
)
@click.option(
    "--velocity-threshold",
    type=Finite(min=0.0, min_open=True, max=1e6),
    default=DEFAULT_VELOCITY_THRESHOLD,
    show_default=True,
    help="Horizontal speed (m/s) under which a low heel or toe counts as planted.",
)
@click.option(
    "--min-frames",
    type=click.IntRange(1, 10**6),
    default=DEFAULT_MIN_FRAMES,
    show_default=True,
    help="Shortest contact in frames.",
)
@click.option(
    "--blend-frames",
    type=click.IntRange(0, 10**6),
    default=DEFAULT_BLEND_FRAMES,
    show_default=True,
    help="Frames over which the lock is blended in before and out after each contact.",
)
@click.option(
    "--free-ankle",
    is_flag=True,
    help="With --limits: limit hip and knee only, not the ankle (the ankle's limit undoes part of a held toe).",
)
@click.option(
    "--free-steps",
    is_flag=True,
    help="Do not bound the legs' frame-to-frame steps by the input's (locks hold better, a lock may add a pop).",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write a before/after PNG of the joint footlock changed most (or --joint).",
)
@click.option("--joint", default=None, help="Joint to plot (default: the one changed most).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--force", is_flag=True, help="Replace an existing output (also the input clip).")
@quiet_option
@friendly_errors
def footlock_command(
    clip: Path,
    out: Path,
    limits_path: Path | None,
    height_threshold: float,
    velocity_threshold: float,
    min_frames: int,
    blend_frames: int,
    free_ankle: bool,
    free_steps: bool,
    plot_path: Path | None,
    joint: str | None,
    as_json: bool,
    force: bool,
    quiet: bool,
) -> None:
    """Remove foot skating from CLIP: detect heel and toe contacts, lock what is planted with two-bone
    leg IK (inside --limits when given) and write OUT; prints skating before/after, on the detected
    contacts and by the independent measure (ankle and toe joints on low-and-slow frames)."""
    from .. import io as motion_io
    from ..cleanup.footlock import FootlockSettings, footlock

    if free_ankle and limits_path is None:
        raise BadInput("--free-ankle needs --limits (without limits no joint is limited)")
    from .filters import _check_outputs, _pick_joint

    _check_outputs(out, plot_path, [clip] + ([limits_path] if limits_path else []), force)
    if blend_frames < 0:
        raise BadInput(f"--blend-frames must be >= 0, got {blend_frames}")
    if min_frames < 1:
        raise BadInput(f"--min-frames must be >= 1, got {min_frames}")
    motion = motion_io.load(clip)
    limits = None
    if limits_path:
        from ..limits.human import HumanModel
        from ._common import load_limits

        loaded = load_limits(limits_path)
        limits = loaded.limits_for_clip(motion) if isinstance(loaded, HumanModel) else loaded
    settings = FootlockSettings(
        height_threshold=height_threshold,
        velocity_threshold=velocity_threshold,
        min_frames=min_frames,
        blend_frames=blend_frames,
        limit_ankle=not free_ankle,
        step_margin=None if free_steps else STEP_MARGIN_DEGREES,
    )
    result, rep = footlock(motion, limits, settings=settings)
    if plot_path is not None and joint is not None:
        motion.skeleton.index(joint)  # an unknown --joint fails before anything is written
    motion_io.save(out, result)
    if plot_path is not None:
        from ..viz.plots import plot_before_after

        name = _pick_joint(motion, joint, result)
        plot_before_after(motion, result, name, plot_path, changed_by="footlock")
    if as_json:
        d = rep.to_dict()
        d.update({"input": str(clip), "output": str(out), "limits": str(limits_path) if limits_path else None})
        click.echo(strict_json(d, unknown_as_null=True))
        return
    if quiet:
        return
    b, a = rep.skating_before, rep.skating_after
    click.echo(f"{clip} -> {out}")
    click.echo(
        f"  feet {', '.join(rep.feet)}: {rep.segments} contacts, "
        f"{' + '.join(str(int(x)) for x in rep.contacts.sum(0))} contact frames"
    )
    click.echo(f"  skating before {b['mean_cm']:.4f} cm/frame ({b['total_cm']:.2f} cm total)")
    click.echo(f"  skating after  {a['mean_cm']:.4f} cm/frame ({a['total_cm']:.2f} cm total)")
    click.echo(
        f"  reduction {rep.reduction_percent:.1f}%  ({rep.solves} leg solves, {rep.limited} limited, "
        f"{rep.refined} refined by CCD; {rep.frames_changed} frames changed)"
    )
    ib, ia, red = rep.independent_before, rep.independent_after, rep.independent_reduction

    def pct(x):
        return "n/a" if x is None else f"{x:.1f}% less"

    if ib is not None and ia is not None:
        click.echo(
            f"  independent skating (ankle and toe joints on low-and-slow frames): "
            f"ankles {ib['ankle_cm']:.1f} -> {ia['ankle_cm']:.1f} cm ({pct(red['ankle'])}), "
            f"toes {ib['toe_cm']:.1f} -> {ia['toe_cm']:.1f} cm ({pct(red['toe'])})"
        )
    lb, la, lr = rep.low_slow_before, rep.low_slow_after, rep.low_slow_reduction
    if lb is not None and la is not None:
        click.echo(
            f"  low-and-slow skating (each foot point below its 10th-percentile height + 3 cm, under 0.6 m/s): "
            f"ankles {lb['ankle_cm']:.1f} -> {la['ankle_cm']:.1f} cm ({pct(lr['ankle'])}), "
            f"toes {lb['toe_cm']:.1f} -> {la['toe_cm']:.1f} cm ({pct(lr['toe'])}), "
            f"all {pct(lr['total'])}"
            + (f"; legs left as they were (locking added skating): {', '.join(rep.reverted)}" if rep.reverted else "")
        )

"""``jointlimits filter`` and ``jointlimits splice``: tracking-spring pop removal on BVH clips.

Register on the main group with ``main.add_command(filter_command)`` / ``main.add_command(splice_command)``
(``jointlimits.cli`` does this). Bad input is reported as one line on stderr with exit status 2.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import click
import numpy as np

from ..cleanup.tracking import DEFAULT_HALFLIFE, DEFAULT_THRESHOLD, DEFAULT_VELOCITY_HALFLIFE
from ..errors import JointLimitsError
from ..motion.skeleton import Motion
from ._common import (
    CLIP_OUTPUT_FORMATS,
    BadInput,
    Finite,
    check_distinct_outputs,
    check_output_path,
    emit,
    friendly_errors,
    json_option,
    progress,
    quiet_option,
)

__all__ = ["filter_command", "splice_command", "plot_channel_before_after", "parse_cuts"]

#: Clips with more frames than this get a progress bar on stderr.
PROGRESS_MIN_FRAMES = 2000


def parse_cuts(text: str | None) -> list[int]:
    """'10,250, 900' -> [10, 250, 900] (raises JointLimitsError on anything else: an empty
    --cuts, an empty item, a negative frame)."""
    if text is None:
        return []
    out = []
    for part in text.split(","):
        p = part.strip()
        try:
            out.append(int(p))
        except ValueError:
            raise JointLimitsError(f"--cuts must be comma-separated frame numbers, got {p!r}") from None
        if out[-1] < 0:
            raise JointLimitsError(f"--cuts frames must be >= 0, got {out[-1]}")
    return out


def plot_channel_before_after(
    before: Motion,
    after: Motion,
    joint: str,
    path: str | os.PathLike,
    frames: Sequence[int] | slice | None = None,
    cuts: Sequence[int] | None = None,
    title: str = "filtering",
) -> Path:
    """Write a PNG of a joint's local rotation and angular speed before/after ``title`` (the command
    that changed the clip), on one quaternion cover, with a zoom onto the changed frames and
    vertical lines at ``cuts``; ``frames`` = slice or (start, stop)
    (:func:`jointlimits.viz.plots.plot_before_after`)."""
    from ..viz.plots import plot_before_after

    return plot_before_after(before, after, joint, path, changed_by=title, frames=frames, cuts=cuts)


def _progress(total: int, show: bool, desc: str):
    return progress(total, desc, disable=not show)


def _check_outputs(out: Path, plot_path: Path | None, inputs: list[Path], force: bool) -> None:
    """Every output checked before any work: -o, then --plot (a PNG, not an input, not -o)."""
    check_output_path(out, inputs, force)
    if plot_path is not None:
        check_distinct_outputs(out, plot_path)
        check_output_path(plot_path, inputs, force, suffixes=(".png",), what="--plot figure")


def _pick_joint(motion: Motion, joint: str | None, after: Motion) -> str:
    if joint is not None:
        motion.skeleton.index(joint)
        return joint
    from ..motion import quat

    # the joint whose rotation the command turned the most (either cover)
    d = quat.angle(quat.normalize(motion.rotations), quat.normalize(after.rotations)).max(axis=0, initial=0.0)
    return motion.skeleton.names[int(np.argmax(d))]


@click.command("filter")
@click.argument("clip", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help=f"Where to write the filtered clip: {CLIP_OUTPUT_FORMATS}.",
)
@click.option("--cuts", default=None, help="Comma-separated frames where a discontinuity starts.")
@click.option("--detect", is_flag=True, help="Detect discontinuities (robust jump detector).")
@click.option(
    "--threshold",
    type=Finite(min=0.0, min_open=True, max=1e6),
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Scale factor on the plausible bound of a joint's jump (1 = the bound; larger finds fewer pops).",
)
@click.option(
    "--halflife",
    type=Finite(min=0.0, min_open=True, max=1e3),
    default=DEFAULT_HALFLIFE,
    show_default=True,
    help="With --v-max/--a-max: seconds for half of a clipped jump to fade (position half-life).",
)
@click.option(
    "--velocity-halflife",
    type=Finite(min=0.0, min_open=True, max=1e3),
    default=DEFAULT_VELOCITY_HALFLIFE,
    show_default=True,
    help="With --v-max/--a-max: velocity half-life in seconds.",
)
@click.option(
    "--v-max", type=Finite(min=0.0, min_open=True, max=1e9), default=None, help="Clip target angular velocity (rad/s)."
)
@click.option(
    "--a-max",
    type=Finite(min=0.0, min_open=True, max=1e12),
    default=None,
    help="Clip target angular acceleration (rad/s^2).",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write a before/after PNG.",
)
@click.option("--joint", default=None, help="Joint to plot (default: the one changed most).")
@click.option("--force", is_flag=True, help="Replace existing outputs (also the input file).")
@quiet_option
@json_option
@friendly_errors
def filter_command(
    clip: Path,
    out: Path,
    cuts: str | None,
    detect: bool,
    threshold: float,
    halflife: float,
    velocity_halflife: float,
    v_max: float | None,
    a_max: float | None,
    plot_path: Path | None,
    joint: str | None,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Repair pops in CLIP joint by joint: at each cut only the joints whose own motion jumps there
    change (a burst out and back is refilled, a jump that stays is blended out); every other joint
    and frame is written unchanged, and planted feet stay planted."""
    from .. import io as motion_io
    from ..cleanup.repair import repair_pops
    from ..cleanup.tracking import filter_motion

    _check_outputs(out, plot_path, [clip], force)
    given = parse_cuts(cuts)
    if cuts is not None and detect:
        raise BadInput("give either --cuts or --detect, not both")
    if cuts is None and not detect and v_max is None and a_max is None:
        raise BadInput("nothing to filter: give --cuts F1,F2,... or --detect (or --v-max/--a-max to clip)")
    m = motion_io.load(clip)
    if m.num_frames == 0:
        raise BadInput(f"{clip}: the clip has no frames")
    if plot_path is not None and joint is not None:
        m.skeleton.index(joint)  # an unknown --joint fails before anything is written
    with _progress(4, not (quiet or as_json) and m.num_frames > PROGRESS_MIN_FRAMES, "filter") as bar:
        bar.update(1)
        res, rep = repair_pops(m, given, detect, threshold)
        all_cuts = rep.cuts
        found = sorted(set(all_cuts) - set(given)) if detect else []
        bar.update(1)
        if v_max is not None or a_max is not None:
            res = filter_motion(res, halflife=halflife, velocity_halflife=velocity_halflife, v_max=v_max, a_max=a_max)
        bar.update(1)
        motion_io.save(out, res)
        bar.update(1)
    rot_changed = np.any(res.rotations != m.rotations, axis=2)
    changed = np.count_nonzero(rot_changed.any(axis=1) | np.any(res.positions != m.positions, axis=(1, 2)))
    joints_changed = [m.skeleton.names[j] for j in np.nonzero(rot_changed.any(axis=0))[0]]
    if plot_path is not None:
        name = _pick_joint(m, joint, res)
        plot_channel_before_after(m, res, name, plot_path, cuts=all_cuts, title="filter (pop repair)")
    emit(
        (f"detected {len(found)} discontinuities: {found}\n" if detect else "")
        + f"{out}: {m.num_frames} frames, {len(all_cuts)} cuts, {changed} frames changed"
        + (f", joints changed: {', '.join(joints_changed)}" if joints_changed else ""),
        {
            "joints_changed": joints_changed,
            "repair": rep.to_dict(),
            "output": str(out),
            "frames": m.num_frames,
            "cuts": [int(c) for c in all_cuts],
            "detected": [int(c) for c in found],
            "frames_changed": int(changed),
            "plot": str(plot_path) if plot_path is not None else None,
        },
        quiet,
        as_json,
    )


@click.command("splice")
@click.argument("clip_a", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("clip_b", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help=f"Where to write the spliced clip: {CLIP_OUTPUT_FORMATS}.",
)
@click.option(
    "--at", "at", type=click.IntRange(0, None), default=None, help="Frame of A where B starts (default: end of A)."
)
@click.option("--smooth/--no-smooth", default=True, show_default=True, help="Filter the pop at the join.")
@click.option(
    "--align/--no-align", default=True, show_default=True, help="Move/turn B about the up axis to continue A's root."
)
@click.option(
    "--halflife",
    type=Finite(min=0.0, min_open=True, max=1e3),
    default=DEFAULT_HALFLIFE,
    show_default=True,
    help="Seconds for half of the join's pop to fade.",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write a before/after PNG around the join.",
)
@click.option("--joint", default=None, help="Joint to plot (default: the one changed most).")
@click.option("--force", is_flag=True, help="Replace existing outputs (also an input file).")
@quiet_option
@json_option
@friendly_errors
def splice_command(
    clip_a: Path,
    clip_b: Path,
    out: Path,
    at: int | None,
    smooth: bool,
    align: bool,
    halflife: float,
    plot_path: Path | None,
    joint: str | None,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Join CLIP_A and CLIP_B (same skeleton) and smooth the pop at the join."""
    from .. import io as motion_io
    from ..cleanup.tracking import splice

    _check_outputs(out, plot_path, [clip_a, clip_b], force)
    a = motion_io.load(clip_a)
    b = motion_io.load(clip_b)
    if plot_path is not None and joint is not None:
        a.skeleton.index(joint)  # an unknown --joint fails before anything is written
    total = a.num_frames + b.num_frames
    with _progress(3, not (quiet or as_json) and total > PROGRESS_MIN_FRAMES, "splice") as bar:
        bar.update(1)
        res = splice(a, b, at=at, smooth=smooth, align=align, halflife=halflife)
        bar.update(1)
        motion_io.save(out, res)
        bar.update(1)
    join = a.num_frames if at is None else at
    if plot_path is not None:
        raw = splice(a, b, at=at, smooth=False, align=align) if smooth else res
        name = _pick_joint(raw, joint, res)
        # the top panels span the whole result; the zoom panel shows the frames the smoothing changed
        plot_channel_before_after(raw, res, name, plot_path, cuts=[join], title="splice smoothing")
    emit(
        f"{out}: {res.num_frames} frames, B starts at frame {join}",
        {
            "output": str(out),
            "frames": res.num_frames,
            "join": join,
            "plot": str(plot_path) if plot_path is not None else None,
        },
        quiet,
        as_json,
    )

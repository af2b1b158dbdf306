"""``jointlimits fit | apply | report | plot | demo``: thin CLI layers over :class:`JointLimits`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click
import numpy as np

from ..limits._checks import MAX_PADDING
from ..limits.registry import JOINT_KINDS, SHAPES
from ._common import (
    BadInput,
    Finite,
    check_output_path,
    emit,
    friendly_errors,
    joint_selection,
    json_option,
    limits_for_clip,
    quiet_option,
    split_names,
    strict_json,
)
from ._common import progress as progress_bar
from .corpus import engine_options, fit_corpus, is_corpus

__all__ = ["fit_command", "apply_command", "report_command", "plot_command", "demo_command"]

SHAPE_CHOICE = click.Choice(list(SHAPES))


def _plural(unit: str) -> str:
    return unit + ("es" if unit.endswith("h") else "s")


def _progress(total: int, label: str, quiet: bool = False):
    return progress_bar(total, label, "clip", disable=quiet or total < 2)


def _require_frames(m: Any, path: Path) -> None:
    if m.num_frames == 0:
        raise BadInput(f"{path}: the clip has no frames")


def _load_clips(paths: list[Path], quiet: bool = False) -> list:
    from .. import io as motion_io

    out = []
    with _progress(len(paths), "loading", quiet) as bar:
        for p in paths:
            out.append(motion_io.load(p))
            bar.update(1)
    return out


def _parse_reference(value: str) -> Any:
    from .. import io as motion_io

    if value in ("mean", "first"):
        return value
    try:
        index = int(value)
    except ValueError:
        pass
    else:
        if index < 0:
            raise BadInput(f"--reference frame index must be >= 0, got {index}")
        return index
    p = Path(value)
    if p.suffix.lower() in motion_io.FORMATS:
        return motion_io.load(p)
    raise BadInput(f"--reference must be 'mean', 'first', a frame index or a motion file, not {value!r}")


def _parse_joint_shapes(items: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for it in items:
        if "=" not in it:
            raise BadInput(f"--joint-shape takes NAME=SHAPE, got {it!r}")
        name, shape = it.split("=", 1)
        if shape not in SHAPES + JOINT_KINDS:
            raise BadInput(f"--joint-shape {it!r}: shape must be one of {', '.join(SHAPES + JOINT_KINDS)}")
        out[name] = shape
    return out


def fit_limits(
    clips: list,
    shape: str,
    swing_twist: bool,
    padding: float | None,
    reference: Any,
    subsample: float,
    joint_shapes: dict[str, str],
    quiet: bool = False,
    coupled: bool = False,
    pairs: list[tuple[str, str]] | None = None,
    joints: list[str] | None = None,
    exclude: list[str] | None = None,
    root: bool = False,
    mirror: bool = False,
    target_recall: float | None = None,
    groups: list[str] | None = None,
    allocation: str = "uniform",
):
    """Fit with a progress bar over joints."""
    from ..limits.model import JointLimits
    from ..limits.options import FitOptions

    bar = progress_bar(None, "fitting", "joint", disable=quiet)

    def progress(k: int, n: int, name: str) -> None:
        bar.total = n
        bar.n = k
        bar.set_postfix_str(name)
        bar.refresh()

    try:
        options = FitOptions(
            shape=shape, swing_twist=swing_twist, padding=padding, reference=reference, subsample=subsample,
            shapes=joint_shapes, coupled=coupled, pairs=pairs, joints=joints, exclude=exclude, root=root,
            mirror=mirror, target_recall=target_recall, groups=groups, allocation=allocation,
        )  # fmt: skip
        return JointLimits.fit(clips, options, progress=progress)
    finally:
        bar.close()


def _coupled_pairs(lim) -> list[tuple[str, str]]:
    """The (parent, child) joints whose child limit is conditioned on its parent, in joint order."""
    from ..limits.coupled import CoupledLimit

    sk = lim.skeleton
    return [
        (sk.names[int(sk.parents[j])], sk.names[j])
        for j in sorted(lim.joints)
        if isinstance(lim.joints[j], CoupledLimit)
    ]


@click.command("fit")
@click.argument("clips", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), required=True,
    help="Limits file to write (JSON); a folder for one file per skeleton group.",
)  # fmt: skip
@click.option("--shape", type=SHAPE_CHOICE, default="ellipsoid", show_default=True, help="Limit shape in limit space.")
@click.option("--swing-twist", is_flag=True, help="Separate limits for swing and twist about the bone axis.")
@click.option(
    "--padding",
    type=Finite(min=0.0, max=MAX_PADDING),
    default=None,
    help="Padding around the data (radians; default 0.05, implicit 0.095).",
)
@click.option(
    "--reference",
    default="mean",
    show_default=True,
    help="Reference pose: mean, first, a frame index of the first clip, or a motion file (its first frame).",
)
@click.option(
    "--subsample",
    type=Finite(min=0.0, max=3.2),
    default=0.05,
    show_default=True,
    help="Subsampling distance (radians) for fitting the limit frame.",
)
@click.option(
    "--joint-shape",
    multiple=True,
    metavar="NAME=SHAPE",
    help="Per-joint shape override, e.g. --joint-shape LeftArm=reach-window (repeatable).",
)
@click.option(
    "--coupled", is_flag=True, help="Implicit limits only: condition children's limits on their parents' rotations."
)
@click.option(
    "--pair",
    multiple=True,
    metavar="PARENT=CHILD",
    help="A coupled pair (repeatable; default: the humanoid pairs found from the skeleton's topology).",
)
@click.option(
    "--mirror",
    is_flag=True,
    help="Also fit every clip mirrored left/right (needs a skeleton whose rest pose is symmetric).",
)
@click.option(
    "--target-recall",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=None,
    help="Implicit limits: choose the paddings so the recall on new motion (fraction of frames admitted) "
    "is expected to meet this, e.g. 0.99 (overrides --padding).",
)
@click.option(
    "--groups",
    multiple=True,
    metavar="PATTERN|CSV",
    help="With --target-recall: fold by group, not by clip. A regular expression on file names "
    "(e.g. '_subject\\d+' for LAFAN1, '^\\d+' for CMU subjects; repeatable) or a CSV of file,group rows.",
)
@click.option(
    "--allocation",
    type=click.Choice(["uniform", "joint", "balanced"]),
    default="uniform",
    show_default=True,
    help="With --target-recall: one padding whose mean expected recall meets the target, each joint its own, "
    "or the least rotation space admitted at that mean (balanced).",
)
@joint_selection
@click.option("--force", is_flag=True, help="Replace an existing output (also one that is an input).")
@engine_options
@quiet_option
@json_option
@friendly_errors
def fit_command(
    clips: tuple[Path, ...],
    output: Path,
    shape: str,
    swing_twist: bool,
    padding: float | None,
    reference: str,
    subsample: float,
    joint_shape: tuple[str, ...],
    coupled: bool,
    pair: tuple[str, ...],
    mirror: bool,
    target_recall: float | None,
    groups: tuple[str, ...],
    allocation: str,
    joints: tuple[str, ...],
    exclude: tuple[str, ...],
    root: bool,
    force: bool,
    workers: int | None,
    scheduler: str | None,
    cache: Path | None,
    strict: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Fit joint limits to clips (any supported motion format: BVH, glTF, AMASS .npz, USD, FBX) of
    the same skeleton and rest pose. The joints carrying the global position and heading get no
    limit unless --root or --joints names them. With --coupled it prints the pairs it coupled.
    With --target-recall the limits file stores each joint's padding, expected recall on new
    motion and its spread (see `report`). Folders, glob patterns, @LIST.txt files or an engine
    option (--workers, --scheduler, --cache) fit a corpus on Dask: clips that fail to load are
    skipped, one limits file per skeleton group (-o DIR)."""
    import warnings

    from ..limits.calibrate import CalibrationWarning, group_labels

    if (groups or allocation != "uniform") and target_recall is None:
        raise BadInput("--groups and --allocation need --target-recall")
    if target_recall is not None and (shape != "implicit" or swing_twist):
        raise BadInput("--target-recall needs --shape implicit (without --swing-twist)")
    labels = group_labels([str(c) for c in clips], list(groups)) if groups else None
    if (coupled or pair) and (shape != "implicit" or swing_twist):
        raise BadInput("--coupled and --pair need --shape implicit (without --swing-twist)")
    pairs = None
    if pair:
        bad = [p for p in pair if "=" not in p]
        if bad:
            raise BadInput(f"--pair takes PARENT=CHILD, got {bad[0]!r}")
        pairs = [cast("tuple[str, str]", tuple(p.split("=", 1))) for p in pair]
    if is_corpus(clips, workers=workers, scheduler=scheduler, cache=cache, strict=strict):
        if target_recall is not None:
            raise BadInput("--target-recall fits clips in memory: give files, without --workers/--scheduler/--cache")
        fit_corpus(
            clips, output, force, quiet, as_json, workers, scheduler, cache, strict,
            shape=shape, swing_twist=swing_twist, padding=padding, reference=_parse_reference(reference),
            subsample=subsample, shapes=_parse_joint_shapes(joint_shape), coupled=coupled or bool(pair),
            pairs=pairs, joints=split_names(joints), exclude=split_names(exclude), root=root, mirror=mirror,
        )  # fmt: skip
        return
    check_output_path(output, list(clips), force, suffixes=(".json",), what="limits file")
    ms = _load_clips(list(clips), quiet or as_json)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CalibrationWarning)
        lim = fit_limits(
            ms,
            shape,
            swing_twist,
            padding,
            _parse_reference(reference),
            subsample,
            _parse_joint_shapes(joint_shape),
            quiet or as_json,
            coupled or bool(pair),
            pairs,
            split_names(joints),
            split_names(exclude),
            root,
            mirror,
            target_recall,
            labels,
            allocation,
        )
    notes = [str(w.message) for w in caught if issubclass(w.category, CalibrationWarning)]
    for n in notes:
        click.echo(f"warning: {n}", err=True)
    lim.save(output)
    frames = sum(m.num_frames for m in ms)
    names = [lim.skeleton.names[j] for j in sorted(lim.joints)]
    left = [n for n in lim.settings.get("root_joints", []) if n not in names]
    used = _coupled_pairs(lim)
    emit(
        f"fitted {len(lim.joints)} joints ({shape}{', swing-twist' if swing_twist else ''}"
        f"{', coupled' if coupled or pair else ''}{', mirrored' if mirror else ''}) "
        f"on {len(ms)} clip(s), {frames} frames -> {output}"
        + (f" (left alone: {', '.join(left)})" if left else "")
        + (f"\ncoupled pairs ({len(used)}): {', '.join(f'{a} -> {b}' for a, b in used)}" if coupled or pair else ""),
        {
            "output": str(output),
            "clips": [str(c) for c in clips],
            "frames": frames,
            "shape": shape,
            "swing_twist": swing_twist,
            "coupled": bool(coupled or pair),
            "mirror": mirror,
            "joints": names,
            "root_joints_left_alone": left,
            "pairs": [list(ab) for ab in used],
            **({"calibration": lim.settings["calibration"]} if target_recall is not None else {}),
        },
        quiet,
        as_json,
    )
    if target_recall is not None and not (quiet or as_json):
        cal = lim.calibration or {}
        worst = min(cal, key=lambda n: cal[n]["expected_recall"])
        mean = float(np.mean([c["expected_recall"] for c in cal.values()]))
        click.echo(
            f"target recall {target_recall}: expected recall on new motion {mean:.4f} on average, "
            f"lowest {cal[worst]['expected_recall']:.4f} ({worst}); folds: {lim.settings['calibration']['folds']} "
            f"{_plural(lim.settings['calibration']['units'])}"
        )


@click.command("apply")
@click.argument("limits_file", metavar="LIMITS.json", type=click.Path(path_type=Path))
@click.argument("clip", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Motion file to write (any supported format: .bvh, .glb, .gltf, .usd/.usda/.usdc, .fbx).",
)
@click.option(
    "--soften",
    nargs=2,
    type=Finite(min=0.0, max=1e6),
    metavar="FALLOFF RADIUS",
    default=None,
    help="Soften the projection (tanh falloff, extra radius in radians).",
)
@click.option(
    "--smooth",
    is_flag=True,
    help="Remove pops where a projection switches sides (tracking spring); the result stays inside the limits.",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write a before/after PNG of the joint the limits changed most (or --plot-joint).",
)
@click.option("--plot-joint", default=None, help="Joint to plot (default: the one changed most).")
@joint_selection
@click.option(
    "--retarget-rest",
    is_flag=True,
    help="Re-express the limits in the clip's rest pose where it differs by one rotation per joint.",
)
@click.option("--force", is_flag=True, help="Replace an existing output (also the input clip).")
@quiet_option
@json_option
@friendly_errors
def apply_command(
    limits_file: Path,
    clip: Path,
    output: Path,
    soften: tuple[float, float] | None,
    smooth: bool,
    plot_path: Path | None,
    plot_joint: str | None,
    joints: tuple[str, ...],
    exclude: tuple[str, ...],
    root: bool,
    retarget_rest: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Project every frame of CLIP (any supported motion format) into the limits and write the
    result. The joints carrying the global position and heading are left alone unless --root or
    --joints names them."""
    from .. import io as motion_io
    from ..cleanup.smoothing import smooth_switches
    from ..limits.model import JointLimits
    from .filters import _check_outputs, _pick_joint

    _check_outputs(output, plot_path, [clip, limits_file], force)
    m = motion_io.load(clip)
    _require_frames(m, clip)
    if plot_path is not None and plot_joint is not None:
        m.skeleton.index(plot_joint)  # an unknown joint fails before anything is written
    lim = limits_for_clip(JointLimits.load(limits_file), m, joints, exclude, root, retarget_rest)
    # (limits_for_clip checked the skeleton; one pass limits the clip and measures the input)
    n_frames, names = m.num_frames, m.skeleton.names
    stats: list[tuple[int, float]] = []  # per block of frames: frames limited, largest violation

    def limit(block):
        out, v = lim.apply_and_measure(block, soften=soften, root=True, check=False)
        stats.append((int(np.any(v > 1e-6, axis=1).sum()), float(v.max())))
        return out

    bvh = motion_io.format_for(output)
    # a BVH clip written back as BVH goes block by block (its memory: the clip plus one block);
    # smoothing runs along the whole clip, and the figure needs both clips whole
    blockwise = not smooth and plot_path is None and hasattr(bvh, "save_blocks")
    if not blockwise or not bvh.save_blocks(output, m, limit):
        stats.clear()
        out, v = lim.apply_and_measure(
            m, soften=soften, smooth=smooth_switches if smooth else None, root=True, check=False
        )
        if plot_path is None:
            del m  # the input's arrays are not needed to write the output (its text source stays with out)
        motion_io.save(output, out)
        stats.append((int(np.any(v > 1e-6, axis=1).sum()), float(v.max())))
        if plot_path is not None:
            from ..viz.plots import plot_before_after

            name = _pick_joint(m, plot_joint, out)
            what = "apply (joint limits" + (", smoothed)" if smooth else ")")
            plot_before_after(m, out, name, plot_path, changed_by=what)
    changed = sum(c for c, _ in stats)
    worst = max(x for _, x in stats)
    emit(
        f"limited {changed}/{n_frames} frames (max violation {np.degrees(worst):.1f} deg) -> {output}",
        {
            "output": str(output),
            "frames": n_frames,
            "frames_limited": changed,
            "max_violation_deg": float(np.degrees(worst)),
            "joints": [names[j] for j in lim.active()],
        },
        quiet,
        as_json,
    )


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
    patterns or @LIST.txt files."""
    from ..limits.model import JointLimits

    loaded = JointLimits.load(limits_file)
    if is_corpus(clips):
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
    if len(ms) > 1:
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
        if len(inputs) != 2 or inputs[0].suffix.lower() != ".json":
            raise BadInput(
                "usage: jointlimits plot LIMITS.json CLIP --joint NAME -o FIG.png "
                "(or CLIP --after OUT.bvh for a before/after channel plot)"
            )
        from ..limits.model import JointLimits
        from ..viz.plots import plot_joint_limit

        m = motion_io.load(inputs[1])
        _require_frames(m, inputs[1])
        lim = limits_for_clip(JointLimits.load(inputs[0]), m, (), (), True, retarget_rest)
        path = plot_joint_limit(lim, m, joint, output)
    emit(f"wrote {path or output}", {"output": str(path or output), "joint": joint}, quiet, as_json)


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

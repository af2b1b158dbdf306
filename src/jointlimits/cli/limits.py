"""``jointlimits fit | apply``: thin CLI layers over :class:`JointLimits` (``report`` and ``plot``
are in :mod:`.report`, ``demo`` in :mod:`.demo`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click
import numpy as np

from ..limits._checks import MAX_PADDING
from ..limits.registry import JOINT_KINDS, SHAPES
from ._common import (
    CLIP_OUTPUT_FORMATS,
    BadInput,
    Finite,
    check_output_path,
    emit,
    friendly_errors,
    joint_selection,
    json_option,
    limits_for_clip,
    load_limits,
    quiet_option,
    split_names,
)
from ._common import progress as progress_bar
from .corpus import engine_options, fit_corpus, is_corpus

__all__ = ["fit_command", "apply_command"]

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
@click.option(
    "--prior",
    default=None,
    type=click.Path(path_type=Path),
    metavar="MODEL",
    help="Combine the clips with a human model ('human' or a 'human build' file): the clips widen it where "
    "they move further, the model covers the rest; prints per segment which decided.",
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
    prior: Path | None,
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
    if prior is not None:
        _fit_with_prior(clips, output, prior, padding, force, quiet, as_json)
        return
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


def _fit_with_prior(
    clips: tuple[Path, ...], output: Path, prior: Path, padding: float | None, force: bool, quiet: bool, as_json: bool
) -> None:
    """``fit --prior MODEL``: the human model widened by the clips, as limits on their skeleton."""
    from ..limits.human import load_model

    check_output_path(output, list(clips), force, suffixes=(".json",), what="limits file")
    model = load_model(prior)
    ms = _load_clips(list(clips), quiet or as_json)
    fp = {m.skeleton.fingerprint() for m in ms}
    if len(fp) > 1:
        raise BadInput("--prior fits clips of one skeleton (these clips have several)")
    widened, decided = model.widened(ms, padding)
    lim = widened.limits_for_clip(ms[0])
    lim.save(output)
    text = f"wrote {output}: the human model widened by {len(ms)} clip(s); per segment what decided the bounds:\n"
    text += "\n".join(f"  {n:16s} {d}" for n, d in decided.items())
    emit(text, {"output": str(output), "decided": decided}, quiet, as_json)


@click.command("apply")
@click.argument("inputs", metavar="[LIMITS.json] CLIP", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--limits",
    "limits_opt",
    default=None,
    type=click.Path(path_type=Path),
    metavar="LIMITS",
    help="The limits instead of the LIMITS.json argument: a limits file, a human model file, or "
    "'human' (the shipped human model, for any humanoid rig, no fitting).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help=f"Motion file to write: {CLIP_OUTPUT_FORMATS}.",
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
    inputs: tuple[Path, ...],
    limits_opt: Path | None,
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
    --joints names them. LIMITS.json may be ``human`` (the shipped human model) or a model
    written by ``jointlimits human build``; ``--limits LIMITS`` replaces the argument."""
    from .. import io as motion_io
    from ..cleanup.smoothing import smooth_switches
    from .filters import _check_outputs, _pick_joint

    if len(inputs) != (1 if limits_opt is not None else 2):
        raise BadInput("usage: jointlimits apply LIMITS.json CLIP -o OUT (or apply --limits LIMITS CLIP -o OUT)")
    limits_file, clip = (limits_opt, inputs[0]) if limits_opt is not None else (inputs[0], inputs[1])
    _check_outputs(output, plot_path, [clip, limits_file], force)
    m = motion_io.load(clip)
    _require_frames(m, clip)
    if plot_path is not None and plot_joint is not None:
        m.skeleton.index(plot_joint)  # an unknown joint fails before anything is written
    lim = limits_for_clip(load_limits(limits_file), m, joints, exclude, root, retarget_rest)
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


#: names that lived here before ``report``, ``plot`` and ``demo`` moved to their own modules: still
#: importable from here (looked up on first use; those modules import this one)
_MOVED = {
    "report_command": "report",
    "plot_command": "report",
    "_ranges_text": "report",
    "_fraction": "report",
    "_expected_text": "report",
    "_report_table": "report",
    "demo_command": "demo",
    "run_demo": "demo",
    "worst_joints": "demo",
    "DEMO_FILES": "demo",
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"{__package__}.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""``jointlimits export``: limits to physics and game engines, with a loss report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..export import ENGINES
from ._common import BadInput, check_output_path, emit, friendly_errors, json_option, quiet_option
from ._common import progress as progress_bar

__all__ = ["export_command"]

VARIANT_CHOICE = click.Choice(["conservative", "covering", "both"])


class _Greedy(click.Option):
    """An option taking every following argument up to the next option: ``--clips A B C``
    (repeating the option works too)."""

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            opt = getattr(parser, "_long_opt", {}).get(name) or getattr(parser, "_short_opt", {}).get(name)
            if opt is None or not hasattr(opt, "process"):
                continue
            orig = opt.process

            def process(value: Any, state: Any, _orig=orig) -> None:
                values = [value]
                rargs = getattr(state, "rargs", [])
                while rargs and not (rargs[0].startswith("-") and len(rargs[0]) > 1):
                    values.append(rargs.pop(0))
                for v in values:
                    _orig(v, state)

            opt.process = process


_USD = (".usda", ".usd", ".usdc")


def _outputs(output: Path, engine: str, variants: tuple[str, ...]) -> tuple[Path, dict[str, Path]]:
    """(JSON path, {variant: MJCF or USD path}) from ``-o``."""
    suffix = output.suffix.lower()
    mj = engine.startswith("mujoco")
    usd = engine.startswith("usd")
    if usd and suffix in (".json", *_USD):
        js = output if suffix == ".json" else output.with_suffix(".json")
        base = output.with_suffix(suffix if suffix in _USD else ".usda")
        if len(variants) == 1:
            return js, {variants[0]: base}
        return js, {v: base.with_name(f"{base.stem}-{v}{base.suffix}") for v in variants}
    if suffix not in (".json", ".xml") or (suffix == ".xml" and not mj):
        raise BadInput(
            f"{output}: give a .json path"
            + (" (or .xml for the MJCF model)" if mj else " (or .usda/.usd/.usdc for the stage)" if usd else "")
        )
    js = output if suffix == ".json" else output.with_suffix(".json")
    xml: dict[str, Path] = {}
    if mj:
        base = output.with_suffix(".xml")
        if len(variants) == 1:
            xml[variants[0]] = base
        else:
            xml = {v: base.with_name(f"{base.stem}-{v}.xml") for v in variants}
    return js, xml


@click.command("export")
@click.argument("limits_file", metavar="LIMITS.json", type=click.Path(path_type=Path))
@click.option("--to", "engine", required=True, type=click.Choice(list(ENGINES)), help="Target engine.")
@click.option(
    "--clips",
    cls=_Greedy,
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="CLIP...",
    help="Clips whose rotations the engine limits are fitted to (default: rotations sampled inside the fitted limits).",
)
@click.option(
    "--holdout",
    cls=_Greedy,
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="CLIP...",
    help="Other clips, only measured in the report.",
)
@click.option(
    "--rig",
    type=click.Path(path_type=Path),
    default=None,
    metavar="CLIP",
    help="With LIMITS.json 'human' (the built-in human model, or a `human build` file): the clip whose skeleton "
    "the limits are made for (its frames set the twist zeros; default: the first of --clips).",
)
@click.option(
    "--variant",
    type=VARIANT_CHOICE,
    default="both",
    show_default=True,
    help="conservative: inside the fitted limit; covering: containing the training data.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="JSON file to write (mujoco: also OUT.xml, or OUT-<variant>.xml for both variants; an .xml path works too; "
    "usd/usd-spherical: also the stage OUT.usda, or OUT-<variant>.usda; a .usda/.usd/.usdc path works too).",
)
@click.option(
    "--samples",
    type=click.IntRange(100, 10**6),
    default=4000,
    show_default=True,
    help="Rotations sampled per joint when no clips are given.",
)
@click.option(
    "--random",
    "n_random",
    type=click.IntRange(1000, 10**7),
    default=40000,
    show_default=True,
    help="Haar-uniform random rotations per joint for the false-accept figures.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**32 - 1),
    default=0,
    show_default=True,
    help="Seed of the sampled and random rotations.",
)
@click.option("--force", is_flag=True, help="Replace existing outputs (also an input file).")
@quiet_option
@json_option
@friendly_errors
def export_command(
    limits_file: Path,
    engine: str,
    clips: tuple[Path, ...],
    holdout: tuple[Path, ...],
    rig: Path | None,
    variant: str,
    output: Path,
    samples: int,
    n_random: int,
    seed: int,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Export fitted limits to an engine's joint parameters, print and store the loss report.
    LIMITS.json may be ``human`` (the built-in human model) or a ``human build`` file: limits made
    for the skeleton of --rig CLIP (or of the first of --clips)."""
    from .._atomic import atomic_write
    from ..errors import JointLimitsError
    from ..export import export_limits
    from ..io import load
    from ..limits.human import HumanModel
    from ._common import limits_for_clip, load_limits

    variants = ("conservative", "covering") if variant == "both" else (variant,)
    js, xml = _outputs(output, engine, variants)
    inputs = [limits_file, *clips, *holdout, rig]
    for p in [js, *xml.values()]:
        check_output_path(p, inputs, force)
    loaded = load_limits(limits_file)
    human = isinstance(loaded, HumanModel)
    if human and rig is None and not clips:
        raise BadInput(f"{limits_file}: a human model makes limits for a clip's skeleton; give --rig CLIP (or --clips)")
    if rig is not None and not human:
        raise BadInput(f"--rig is for a human model (LIMITS.json 'human' or a `human build` file), not {limits_file}")
    ms = [load(p) for p in clips]
    hs = [load(p) for p in holdout]
    # a limits file as it is; a human model made for the rig's skeleton (on its frames)
    lim = limits_for_clip(loaded, load(rig) if rig is not None else ms[0], (), (), True) if human else loaded
    for p, m in zip([*clips, *holdout], [*ms, *hs]):
        try:
            lim.check_skeleton(m.skeleton)
        except JointLimitsError as e:
            raise BadInput(f"{p}: {e}") from None
    bar = progress_bar(1, f"export {engine}", "joint", disable=quiet or as_json)

    def progress(k: int, n: int, name: str) -> None:
        bar.total = n
        bar.n = k
        bar.set_postfix_str(name)
        bar.refresh()

    try:
        ex = export_limits(
            lim,
            engine,
            clips=ms or None,
            holdout=hs or None,
            variants=variants,
            samples=samples,
            random=n_random,
            seed=seed,
            progress=progress,
        )
    finally:
        bar.close()
    doc = ex.to_dict()
    doc["limits"] = str(limits_file)
    if human:
        doc["rig"] = str(rig if rig is not None else clips[0])
    doc["clips"] = [str(p) for p in clips]
    doc["holdout"] = [str(p) for p in holdout]
    usd = engine.startswith("usd")
    stages = {v: ex.usd_stage(v) for v in xml} if usd else {}
    texts = {} if usd else {v: ex.mjcf(v) for v in xml}
    doc["files"] = {v: str(p) for v, p in xml.items()}
    text = json.dumps(doc, indent=1)
    with atomic_write(js) as fh:
        fh.write(text)
    for v, p in xml.items():
        if usd:
            from ..io.usd import write_stage

            write_stage(p, stages[v])
            continue
        with atomic_write(p) as fh:
            fh.write(texts[v])
    emit(
        ex.table() + "\n" + f"wrote {js}" + "".join(f", {p}" for p in xml.values()),
        {"output": str(js), "files": [str(js), *map(str, xml.values())], "engine": engine},
        quiet,
        as_json,
    )

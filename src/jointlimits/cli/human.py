"""``jointlimits human build``: a human joint-limit model from any humanoid clips."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import BadInput, OneLineGroup, check_output_path, emit, friendly_errors, json_option, quiet_option

__all__ = ["human_group"]


@click.group("human", cls=OneLineGroup)
def human_group() -> None:
    """The human joint-limit model: limits of the canonical humanoid for any humanoid rig
    (``--limits human`` / LIMITS ``human`` uses the shipped one)."""


@human_group.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="MODEL.json to write.")
@click.option(
    "--padding",
    default=None,
    type=click.FloatRange(0.0, 1.0),
    help="Radians added around the pooled data in model space (default: the shipped model's).",
)
@click.option("--force", is_flag=True, help="Replace an existing output.")
@quiet_option
@json_option
@friendly_errors
def build_command(
    sources: tuple[Path, ...], output: Path, padding: float | None, force: bool, quiet: bool, as_json: bool
) -> None:
    """Fit a human model on SOURCES (clips of any humanoid rigs and conventions; folders, glob
    patterns or @LIST.txt files), pooled in the canonical anatomical frames. Use it with
    ``--limits MODEL.json`` (or as LIMITS.json) wherever a limits file is accepted."""
    from .. import io as motion_io
    from ..corpus.sources import expand
    from ..limits.human import DEFAULT_PADDING, HumanModel

    check_output_path(output, list(sources), force, suffixes=(".json",), what="model")
    found, bad = expand([str(s) for s in sources])
    if not found:
        raise BadInput("no clips: " + "; ".join(f"{s}: {w}" for s, w in bad))
    paths = [Path(c.path) for c in found]
    ms = [motion_io.load(p) for p in paths]
    pad = DEFAULT_PADDING if padding is None else padding
    prov = {"clips": [str(p) for p in paths], "frames": int(sum(m.num_frames for m in ms))}
    model = HumanModel.build(ms, pad, prov)
    model.save(output)
    emit(
        f"wrote {output}: {len(model.segments)} segments from {len(ms)} clips ({prov['frames']} frames)",
        {"output": str(output), "segments": sorted(model.segments), "clips": len(ms), "frames": prov["frames"]},
        quiet,
        as_json,
    )

"""``jointlimits scan | clean`` and the corpus path of ``fit``: whole corpora on Dask."""

from __future__ import annotations

import glob
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ._common import BadInput, Finite, check_output_path, emit, friendly_errors, json_option, quiet_option

__all__ = ["scan_command", "clean_command", "engine_options", "is_corpus", "fit_corpus"]


def engine_options(fn: Callable) -> Callable:
    """--workers, --scheduler, --cache, --strict: where and how a corpus job runs."""
    for opt in reversed(
        [
            click.option(
                "--workers",
                type=click.IntRange(min=1),
                default=None,
                help="Local Dask workers (default: one per core).",
            ),
            click.option(
                "--scheduler", default=None, metavar="tcp://HOST:PORT", help="Run on this existing Dask cluster."
            ),
            click.option(
                "--cache",
                type=click.Path(path_type=Path, file_okay=False),
                default=None,
                help="Keep per-clip results here (by content hash and settings); a rerun does only missing clips.",
            ),
            click.option("--strict", is_flag=True, help="Stop at the first clip that fails to load."),
        ]
    ):
        fn = opt(fn)
    return fn


def is_corpus(sources: tuple[Path, ...], **engine: Any) -> bool:
    """Whether ``fit`` takes the corpus path: a folder, a pattern or a list among the sources, or
    an engine option."""
    if any(v not in (None, False) for v in engine.values()):
        return True
    return any(str(s).startswith("@") or glob.has_magic(str(s)) or Path(s).is_dir() for s in sources)


def _failures(failures: list[tuple[str, str]], quiet: bool) -> None:
    if failures and not quiet:
        click.echo(f"skipped {len(failures)}:", err=True)
        for path, why in failures:
            click.echo(f"  {why if why.startswith(path) else f'{path}: {why}'}", err=True)


def fit_corpus(
    sources: tuple[Path, ...],
    output: Path,
    force: bool,
    quiet: bool,
    as_json: bool,
    workers: int | None,
    scheduler: str | None,
    cache: Path | None,
    strict: bool,
    **options: Any,
) -> None:
    """``fit`` over a corpus: one limits file (``-o L.json``) or, with several skeleton groups, one
    per group in a folder (``-o DIR``)."""
    from .. import corpus

    one_file = output.suffix.lower() == ".json" and not output.is_dir()
    if one_file:
        check_output_path(output, [], force)
    res = corpus.fit(
        [str(s) for s in sources], one_group=one_file, strict=strict, workers=workers, scheduler=scheduler, cache=cache,
        progress=None if not (quiet or as_json) else False, **options,
    )  # fmt: skip
    if not res.limits:
        raise BadInput("no clip could be fitted")
    written = {}
    if one_file:
        targets = {g: output for g in res.limits}
    else:
        targets = {g: output / f"{g}.json" for g in res.limits}
        for t in targets.values():
            if t.exists() and not force:
                raise BadInput(f"{t}: file exists; pass --force to replace it")
        output.mkdir(parents=True, exist_ok=True)
    for g, lim in res.limits.items():
        lim.save(targets[g])
        written[g] = {"output": str(targets[g]), "clips": len(res.groups[g]), "frames": lim.settings["frames"]}
    _failures(res.failures, quiet or as_json)
    emit(
        "\n".join(f"{g}: {w['clips']} clip(s), {w['frames']} frames -> {w['output']}" for g, w in written.items()),
        {"groups": written, "skipped": [{"file": f, "reason": r} for f, r in res.failures]},
        quiet,
        as_json,
    )


@click.command("scan")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), required=True, help="Table to write (.parquet, or .csv)."
)
@click.option(
    "--limits",
    "limits_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Measure frames outside these limits.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write an HTML summary.",
)
@engine_options
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@quiet_option
@json_option
@friendly_errors
def scan_command(
    sources: tuple[str, ...],
    output: Path,
    limits_file: Path | None,
    html_path: Path | None,
    workers: int | None,
    scheduler: str | None,
    cache: Path | None,
    strict: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """One row per clip of SOURCES (files, folders, glob patterns, @LIST.txt) with what is wrong
    with it: glitches, pops, foot skating, floor contact, jitter, frames outside limits."""
    from .. import corpus

    check_output_path(output, [], force, suffixes=(".parquet", ".csv"), what="table")
    if html_path is not None:
        check_output_path(html_path, [], force, suffixes=(".html",), what="summary")
    res = corpus.scan(
        sources, limits=limits_file, strict=strict, workers=workers, scheduler=scheduler, cache=cache,
        progress=None if not (quiet or as_json) else False,
    )  # fmt: skip
    corpus.write_table(res.rows, output)
    if html_path is not None:
        corpus.write_html(res.rows, html_path)
    _failures(res.failures, quiet or as_json)
    ok = [r for r in res.rows if not r.get("error")]
    emit(
        f"scanned {len(ok)} clip(s), {sum(r['frames'] for r in ok)} frames, {len(res.failures)} skipped -> {output}",
        {
            "output": str(output),
            "html": None if html_path is None else str(html_path),
            "clips": len(ok),
            "skipped": [{"file": f, "reason": r} for f, r in res.failures],
        },
        quiet,
        as_json,
    )


@click.command("clean")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder to write the cleaned clips to.",
)
@click.option(
    "--limits", "limits_file", type=click.Path(path_type=Path, dir_okay=False), default=None, help="Apply these limits."
)
@click.option("--smooth", is_flag=True, help="With --limits: remove pops where a projection switches sides.")
@click.option("--detect", is_flag=True, help="Detect pops and repair them joint by joint (as filter --detect).")
@click.option(
    "--threshold",
    type=Finite(min=0.0, min_open=True, max=1e6),
    default=None,
    help="Scale factor on the pop detector's plausible bound of a joint's jump (default: filter's).",
)
@click.option("--footlock", is_flag=True, help="Lock planted feet (two-bone leg IK).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Local Dask workers (default: one per core).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", help="Run on this existing Dask cluster.")
@click.option("--strict", is_flag=True, help="Stop at the first clip that fails.")
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@quiet_option
@json_option
@friendly_errors
def clean_command(
    sources: tuple[str, ...],
    out: Path,
    limits_file: Path | None,
    smooth: bool,
    detect: bool,
    threshold: float | None,
    footlock: bool,
    workers: int | None,
    scheduler: str | None,
    strict: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Run the cleanup chain (--detect, --limits, --footlock) on every clip of SOURCES and write
    them under --out with the same folder structure, with scan-before/after.parquet beside them."""
    from .. import corpus

    settings = corpus.CleanSettings(detect, threshold, limits_file, smooth, footlock)
    if not settings.any():
        raise BadInput("nothing to clean: give --limits, --detect or --footlock")
    res = corpus.clean(
        sources, out, settings=settings, force=force, strict=strict, workers=workers, scheduler=scheduler,
        progress=None if not (quiet or as_json) else False,
    )  # fmt: skip
    _failures(res.failures, quiet or as_json)
    emit(
        f"cleaned {len(res.outputs)} clip(s), {len(res.failures)} skipped -> {out}",
        {"outputs": res.outputs, "skipped": [{"file": f, "reason": r} for f, r in res.failures]},
        quiet,
        as_json,
    )

"""``jointlimits scan | clean`` and the corpus path of ``fit``: whole corpora on Dask."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from ._common import EXIT_PARTIAL, BadInput, Finite, check_output_path, emit, friendly_errors, json_option, quiet_option

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


#: the exit status of a corpus command stopped by SIGINT (128 + the signal's number, as shells report it)
EXIT_INTERRUPTED = 130
#: seconds an interrupted corpus command takes at most to stop (a cluster that has not shut down
#: gracefully by then is ended)
STOP_SECONDS = 3.5


@contextlib.contextmanager
def interruptible(resume_hint: str = "") -> Iterator[None]:
    """Run a corpus job so that SIGINT stops it, whether it reaches this process alone (``kill
    -INT``, a job scheduler) or the whole process group (Ctrl-C), and even when the process was
    started with SIGINT ignored (a background job of a script): the cluster this command started
    is shut down, what finished stays, and the command exits with :data:`EXIT_INTERRUPTED` after
    one line naming how many clips finished."""
    from ..corpus.engine import Interrupted

    def force() -> None:  # the cluster did not shut down in time: end it, and this process
        from ..corpus.engine import _end_children

        _end_children()
        click.echo(f"interrupted{resume_hint}", err=True)
        os._exit(EXIT_INTERRUPTED)

    def on_sigint(signum: int, frame: Any) -> None:
        if not watchdog.is_alive():
            watchdog.start()
        raise KeyboardInterrupt

    watchdog = threading.Timer(STOP_SECONDS, force)
    watchdog.daemon = True
    old = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    except Interrupted as e:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the line short
        click.echo(f"interrupted: {e.done} of {e.total} {e.what}{resume_hint}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        click.echo(f"interrupted{resume_hint}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        with contextlib.suppress(ValueError, TypeError):
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
                signal.signal(signal.SIGINT, old)


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
    with interruptible("; nothing was written"):
        res = corpus.fit(
            [str(s) for s in sources], one_group=one_file, strict=strict, workers=workers, scheduler=scheduler,
            cache=cache, progress=None if not (quiet or as_json) else False, **options,
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
    type=click.Path(path_type=Path),
    default=None,
    help="Measure frames outside these limits: a limits file, the folder `fit -o DIR` writes (each clip "
    "against its skeleton's file), or 'human' (the built-in human model, or a `human build` file: limits for "
    "each clip's own skeleton).",
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
    with it: glitches, pops, foot skating, floor contact, jitter, frames outside limits. Exit status
    3 (partial) when a clip could not be read or, with --limits, had no limits for its skeleton
    (listed on stderr). --limits human measures each clip against the built-in human model on its
    own skeleton (exit status 2 when it maps none of them)."""
    from .. import corpus
    from ..errors import JointLimitsError

    check_output_path(output, [], force, suffixes=(".parquet", ".csv"), what="table")
    if html_path is not None:
        check_output_path(html_path, [], force, suffixes=(".html",), what="summary")
    # without --cache, the clips measured so far are kept beside the table until it is written,
    # so that the same command run again after an interrupt measures only the rest
    resume = output.with_name(f".{output.name}.resume") if cache is None else None
    if resume is not None and force:
        shutil.rmtree(resume, ignore_errors=True)
    hint = "; run the same command again to finish the rest" + (f" (kept in {resume})" if resume else "")
    with interruptible(hint):
        try:
            res = corpus.scan(
                sources, limits=limits_file, strict=strict, workers=workers, scheduler=scheduler,
                cache=cache if resume is None else resume, progress=None if not (quiet or as_json) else False,
            )  # fmt: skip
        except JointLimitsError:
            if resume is not None:  # refused as a whole (a human model that maps no clip): nothing kept
                shutil.rmtree(resume, ignore_errors=True)
            raise
    corpus.write_table(res.rows, output)
    if html_path is not None:
        corpus.write_html(res.rows, html_path)
    if resume is not None:
        shutil.rmtree(resume, ignore_errors=True)
    if res.cache_refused and not (quiet or as_json):
        click.echo(
            f"warning: {res.cache_refused} cached result(s) were damaged or not written by jointlimits; measured again",
            err=True,
        )
    _failures(res.failures, quiet or as_json)
    if res.no_limits and not (quiet or as_json):
        click.echo(f"measured without limits {len(res.no_limits)}:", err=True)
        for path, why in res.no_limits:
            click.echo(f"  {path}: {why}", err=True)
    ok = [r for r in res.rows if not r.get("error")]
    emit(
        f"scanned {len(ok)} clip(s), {sum(r['frames'] for r in ok)} frames, {len(res.failures)} skipped"
        + (f", {len(res.no_limits)} without limits" if res.no_limits else "")
        + f" -> {output}",
        {
            "output": str(output),
            "html": None if html_path is None else str(html_path),
            "clips": len(ok),
            "skipped": [{"file": f, "reason": r} for f, r in res.failures],
            "without_limits": [{"file": f, "reason": r} for f, r in res.no_limits],
        },
        quiet,
        as_json,
    )
    if res.failures or res.no_limits:
        raise click.exceptions.Exit(EXIT_PARTIAL)


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
    "--limits",
    "limits_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Apply these limits: a limits file, the folder `fit -o DIR` writes (each clip its skeleton's file; "
    "a clip with none is skipped), or 'human' (the built-in human model, or a `human build` file: limits for "
    "each clip's own skeleton; a clip it cannot map is skipped).",
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
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["bvh", "glb", "gltf", "usd", "usda", "usdc", "fbx"], case_sensitive=False),
    default=None,
    help="Write every cleaned clip in this format (default: each input's own; AMASS .npz inputs as BVH).",
)
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
    fmt: str | None,
    workers: int | None,
    scheduler: str | None,
    strict: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Run the cleanup chain (--detect, --limits, --footlock) on every clip of SOURCES and write
    them under --out with the same folder structure, with scan-before/after.parquet beside them.
    Exit status 3 (partial) when a clip was skipped (listed on stderr with the reason). --limits
    human applies the built-in human model on each clip's own skeleton (exit status 2, nothing
    written, when it maps none of them)."""
    from .. import corpus

    settings = corpus.CleanSettings(detect, threshold, limits_file, smooth, footlock)
    if not settings.any():
        raise BadInput("nothing to clean: give --limits, --detect or --footlock")
    with interruptible("; run the same command again to finish the rest"):
        res = corpus.clean(
            sources, out, settings=settings, force=force, strict=strict, workers=workers, scheduler=scheduler,
            progress=None if not (quiet or as_json) else False, format=fmt,
        )  # fmt: skip
    _failures(res.failures, quiet or as_json)
    text = f"cleaned {len(res.outputs)} clip(s), {len(res.failures)} skipped -> {out}"
    if res.resumed:
        text += f"\n{len(res.resumed)} of them were done by an earlier run and kept"
    if res.converted:
        kinds = sorted({Path(i).suffix.lower() for i, _ in res.converted})
        to = sorted({Path(o).suffix.lower() for _, o in res.converted})
        text += f"\n{len(res.converted)} {'/'.join(kinds)} input(s) written as {'/'.join(to)}"
    emit(
        text,
        {
            "outputs": res.outputs,
            "resumed": res.resumed,
            "converted": [{"input": i, "output": o} for i, o in res.converted],
            "skipped": [{"file": f, "reason": r} for f, r in res.failures],
        },
        quiet,
        as_json,
    )
    if res.failures:
        raise click.exceptions.Exit(EXIT_PARTIAL)

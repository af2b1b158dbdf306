"""What every command shares: one-line errors with exit status 2, the output-path checks, progress
bars that leave nothing behind, and the group class that puts click's usage errors on one line."""

from __future__ import annotations

import errno
import functools
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from .._atomic import check_writable
from ..errors import JointLimitsError

EXIT_BAD_INPUT = 2
#: a corpus command (scan, clean) that left clips unprocessed: listed on stderr (and in --json)
EXIT_PARTIAL = 3

#: errno -> what to tell the user about the path (file system errors, one line each)
_OS_REASONS = {
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENOTDIR: "a parent of this path is a file, not a folder",
    errno.EISDIR: "is a folder, not a file",
    errno.ENAMETOOLONG: "file name too long",
    errno.ENOENT: "no such file or folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EEXIST: "file exists",
    errno.ELOOP: "too many levels of symbolic links",
    errno.EFBIG: "file too large",
    errno.EIO: "input/output error",
}


class BadInput(click.ClickException):
    """One-line error with exit status 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file: Any = None) -> None:
        msg = " ".join(self.format_message().split("\n"))
        click.echo(f"error: {msg}", err=True)


def os_error_message(e: OSError) -> str:
    """``path: reason`` for a file system error (never a temporary file's name)."""
    reason = _OS_REASONS.get(e.errno or 0) or (e.strerror or str(e)).lower()
    return f"{e.filename}: {reason}" if e.filename is not None else reason


def friendly_errors(fn: Callable) -> Callable:
    """Turn the library's precise exceptions and file system errors into one-line CLI errors;
    numpy's warnings do not reach the terminal."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fn(*args, **kwargs)
        except JointLimitsError as e:
            raise BadInput(str(e)) from None
        except OSError as e:
            raise BadInput(os_error_message(e)) from None
        except RecursionError:
            raise BadInput("input nested too deeply to process") from None
        except MemoryError:
            raise BadInput("not enough memory for this input") from None

    return wrapper


class Finite(click.FloatRange):
    """A float option in a range that is also finite (click's FloatRange lets NaN through: every
    comparison with NaN is false). A value outside is a usage error: one line, exit status 2."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


#: Most ``--workers`` per core: a larger request is a mistake, not a speed-up (each worker holds
#: its own clips); ``--workers`` is at most this many times ``os.cpu_count()``.
WORKERS_PER_CORE = 4

_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")


class StrictFloat(Finite):
    """:class:`Finite`, reading only a plain decimal number (``1.5``, ``2e-3``): no ``1_0``, no
    ``nan``/``inf``, no hex or spaces inside."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not _DECIMAL.fullmatch(value.strip()):
            self.fail(f"{value!r} is not a plain decimal number.", param, ctx)
        return super().convert(value, param, ctx)


class StrictInt(click.IntRange):
    """An IntRange reading only plain decimal integers (no ``1_0``, ``0x10``, ``1.0``)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not _INTEGER.fullmatch(value.strip()):
            self.fail(f"{value!r} is not a plain decimal integer.", param, ctx)
        return super().convert(value, param, ctx)


def max_workers() -> int:
    """The most ``--workers`` accepted: :data:`WORKERS_PER_CORE` per core."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def harden_numeric_options(command: click.Command) -> None:
    """Give every float or int parameter of ``command`` (and its subcommands) a strict type: plain
    decimal text only, floats finite, the same range as before; ``--workers`` is capped at
    :func:`max_workers`. Run once on the CLI's group, so a new command's options are covered."""
    for p in command.params:
        t = p.type
        if isinstance(t, click.types.FloatParamType) and not isinstance(t, StrictFloat):
            lo, hi = (t.min, t.max) if isinstance(t, click.FloatRange) else (None, None)
            lo_open = t.min_open if isinstance(t, click.FloatRange) else False
            hi_open = t.max_open if isinstance(t, click.FloatRange) else False
            p.type = StrictFloat(lo, hi, min_open=lo_open, max_open=hi_open)
        elif isinstance(t, click.types.IntParamType) and not isinstance(t, StrictInt):
            lo, hi = (t.min, t.max) if isinstance(t, click.IntRange) else (None, None)
            lo_open = t.min_open if isinstance(t, click.IntRange) else False
            hi_open = t.max_open if isinstance(t, click.IntRange) else False
            if p.name == "workers":
                hi, hi_open = max_workers(), False
                if isinstance(p, click.Option) and p.help and "At most" not in p.help:
                    p.help = f"{p.help.rstrip()} At most {WORKERS_PER_CORE} per core ({hi} here)."
            p.type = StrictInt(lo, hi, min_open=lo_open, max_open=hi_open)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            harden_numeric_options(sub)


def check_output_path(
    out: Path,
    inputs: Iterable[Path | None],
    force: bool = False,
    suffixes: tuple[str, ...] | None = None,
    what: str = "output",
) -> None:
    """Before any work: refuse an output that exists or would overwrite an input (unless
    ``--force``), that has the wrong extension, or that cannot be written (folder, missing or
    read-only parent, name too long)."""
    if suffixes is not None and out.suffix.lower() not in suffixes:
        if len(suffixes) > 2:
            raise BadInput(f"{out}: the {what} is a motion file; give it one of {', '.join(suffixes)}")
        raise BadInput(f"{out}: the {what} is written as {suffixes[0][1:].upper()}; give a {suffixes[0]} path")
    try:
        out_r = out.resolve()
        for p in inputs:
            if p is not None and p.exists() and p.resolve() == out_r and not force:
                raise BadInput(f"{out}: {what} would overwrite the input; pass --force to do that on purpose")
        if not force and (out.exists() or out.is_symlink()) and not out.is_dir():
            raise BadInput(f"{out}: file exists; pass --force to replace it")
        check_writable(out)
    except OSError as e:
        raise BadInput(os_error_message(e)) from None


#: What a clip output takes: every format :func:`jointlimits.io.save` writes (``io.WRITABLE``).
CLIP_OUTPUT_FORMATS = ".bvh, .glb/.gltf, .usd/.usda/.usdc or .fbx (through Blender): the format follows the extension"
#: What a clip input takes: every format :func:`jointlimits.io.load` reads (``io.FORMATS``).
CLIP_INPUT_FORMATS = ".bvh, .glb/.gltf, .usd/.usda/.usdc, .fbx (through Blender) or AMASS .npz"


def quiet_option(fn: Callable) -> Callable:
    return click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors (no progress bars, no summary).")(
        fn
    )


def json_option(fn: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object on stdout.")(fn)


def emit(text: str, data: dict, quiet: bool = False, as_json: bool = False, unknown_as_null: bool = False) -> None:
    """A command's summary: ``data`` as strict JSON with ``--json``, else ``text`` unless ``--quiet``."""
    if as_json:
        click.echo(strict_json(data, unknown_as_null=unknown_as_null))
    elif not quiet:
        click.echo(text)


def split_names(values: Iterable[str]) -> list[str] | None:
    """Joint names from repeatable, comma-separated options (None when none were given)."""
    out = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return out or None


def joint_selection(fn: Callable) -> Callable:
    """``--joints``, ``--exclude`` and ``--root``: which joints a command's limits concern."""
    fn = click.option(
        "--root",
        is_flag=True,
        help="Also limit the joints carrying the global position and heading (left alone by default).",
    )(fn)
    fn = click.option(
        "--exclude", multiple=True, metavar="NAMES", help="Joints to leave alone (comma-separated, repeatable)."
    )(fn)
    fn = click.option(
        "--joints", multiple=True, metavar="NAMES", help="Only these joints (comma-separated, repeatable)."
    )(fn)
    return fn


def load_limits(path: Any) -> Any:
    """A limits file, or a human model: ``human`` (the shipped one) or a file ``human build`` wrote
    (made ready for each clip by :func:`limits_for_clip`)."""
    from ..limits.human import is_human_model, load_model
    from ..limits.model import JointLimits

    if is_human_model(path):
        return load_model(path)
    return JointLimits.load(path)


def limits_for_clip(
    lim: Any, motion: Any, joints: Iterable[str], exclude: Iterable[str], root: bool, retarget_rest: bool = False
) -> Any:
    """Loaded limits made ready for a clip (or none): the same joints, re-expressed in its rest pose
    with ``--retarget-rest``, on the joints ``--joints``/``--exclude``/``--root`` choose (by
    default without those carrying the global position and heading), and checked against it.
    A human model (:func:`load_limits`) becomes limits on the clip's own skeleton."""
    from ..limits.human import HumanModel

    if isinstance(lim, HumanModel):
        if motion is None:
            raise BadInput("a human model needs a clip: it makes limits for the clip's skeleton")
        lim = lim.limits_for_clip(motion)
    if motion is not None:
        lim.check_skeleton(motion.skeleton, rest=False)
        if retarget_rest:
            lim = lim.retarget_rest(motion.skeleton)
    lim = lim.select(
        split_names(joints), split_names(exclude), motion if motion is not None and motion.num_frames else None, root
    )
    if motion is not None:
        lim.check_skeleton(motion.skeleton)
    return lim


def _nulls(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nulls(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nulls(v) for v in obj]
    return obj


def strict_json(obj: Any, unknown_as_null: bool = False) -> str:
    """JSON that every parser accepts: NaN and infinity are an error (a result that should be a
    number is not), or ``null`` where ``unknown_as_null`` (a quantity that may be unknown)."""
    if unknown_as_null:
        obj = _nulls(obj)
    try:
        return json.dumps(obj, indent=2, allow_nan=False)
    except ValueError:
        raise BadInput(
            "the result holds NaN or infinity (the limits file has extreme or invalid values?); no JSON written"
        ) from None


def check_distinct_outputs(*outs: Path | None) -> None:
    """Two outputs of one command must not be the same file."""
    seen: dict[str, Path] = {}
    for o in outs:
        if o is None:
            continue
        k = os.path.abspath(o)
        if k in seen:
            raise BadInput(f"{o}: given as two different outputs")
        seen[k] = o


def progress(total: int | None = None, desc: str = "", unit: str = "it", disable: bool = False):
    """A tqdm bar on stderr, only on a terminal (so nothing is left before an error line in logs)."""
    from tqdm import tqdm

    tty = getattr(sys.stderr, "isatty", lambda: False)()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=disable or not tty, leave=False)


class OneLineGroup(click.Group):
    """A group whose usage errors (unknown option, missing argument, bad value) are one line with
    exit status 2, like every other error."""

    @staticmethod
    def _one_line(e: click.UsageError) -> BadInput:
        path = e.ctx.command_path if e.ctx is not None else "jointlimits"
        return BadInput(f"{e.format_message()} (see '{path} --help')")

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # bare `jointlimits`: the help text
                raise
            raise self._one_line(e) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            raise self._one_line(e) from None

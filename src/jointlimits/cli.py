"""The ``jointlimits`` command line: a thin layer over the library.

Every command reports a bad input as one line on stderr and exits with status 2.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from .errors import JointLimitsError

EXIT_BAD_INPUT = 2


class BadInput(click.ClickException):
    """One-line error with exit status 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def friendly_errors(fn: Callable) -> Callable:
    """Turn the library's precise exceptions (and missing files) into one-line CLI errors."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except JointLimitsError as e:
            raise BadInput(str(e)) from None
        except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
            raise BadInput(f"{e.filename}: {e.strerror}") from None

    return wrapper


def check_output_path(out: Path, inputs: list[Path], force: bool = False) -> None:
    """Refuse to overwrite an input file unless ``--force`` was given."""
    out_r = out.resolve()
    for p in inputs:
        if p.exists() and p.resolve() == out_r and not force:
            raise BadInput(f"{out}: output would overwrite the input; pass --force to do that on purpose")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jointlimits")
def main() -> None:
    """Joint limits fitted from motion capture, IK that respects them, and pop-free filters."""


@main.command()
@click.argument("clip", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@friendly_errors
def info(clip: Path, as_json: bool) -> None:
    """Print a BVH clip's joints, channels, frames, fps, duration, units and up axis."""
    from . import bvh
    from .units import guess_units, guess_up_axis

    m = bvh.load(clip)
    sk = m.skeleton
    units = guess_units(m)
    up = guess_up_axis(m)
    joints = [
        {"name": n, "parent": (sk.names[p] if p >= 0 else None), "channels": sk.channels[j],
         "offset": sk.offsets[j].tolist()}
        for j, (n, p) in enumerate(zip(sk.names, sk.parents))
    ]
    data = {
        "file": str(clip), "joints": sk.num_joints, "end_sites": len(sk.end_sites),
        "channels": int(sum(len(c) for c in sk.channels)), "frames": m.num_frames,
        "frame_time": m.frame_time, "fps": m.fps, "duration": m.duration,
        "units_guess": units.name, "metres_per_unit": units.metres_per_unit,
        "body_height": units.height, "up_axis_guess": up, "skeleton": joints,
    }
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"{clip}")
    click.echo(f"  {m.num_frames} frames at {m.fps:.4g} fps ({m.duration:.2f} s), "
               f"{data['joints']} joints, {data['end_sites']} end sites, {data['channels']} channels")
    click.echo(f"  up axis guess {up}; units guess {units.name} "
               f"(body height {units.height:.4g} -> {units.height * units.metres_per_unit:.2f} m)")
    depth = sk.depth()
    for j, n in enumerate(sk.names):
        chans = " ".join(c[0] + c[1:4].replace("pos", "p").replace("rot", "r") for c in sk.channels[j])
        click.echo(f"  {'  ' * int(depth[j])}{n}  [{chans}]")


def _register_optional() -> None:
    """Attach commands that live in their own modules (each is a thin layer over a library module)."""
    import importlib

    for module, names in [
        ("jointlimits.cli_limits", ["fit_command", "apply_command", "report_command", "plot_command", "demo_command"]),
        ("jointlimits.cli_springs", ["filter_command", "splice_command"]),
        ("jointlimits.cli_ik", ["footlock_command"]),
        ("jointlimits.cli_view", ["view_command"]),
    ]:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            continue
        for n in names:
            cmd = getattr(mod, n, None)
            if cmd is not None:
                main.add_command(cmd)


_register_optional()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

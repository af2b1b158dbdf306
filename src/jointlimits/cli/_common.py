"""What every command shares: one-line errors with exit status 2, and the output-path check."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

import click

from ..errors import JointLimitsError

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

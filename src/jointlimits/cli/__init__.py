"""The ``jointlimits`` command line: a thin layer over the library, one module per command group.

Every command reports a bad input as one line on stderr and exits with status 2.
"""

from __future__ import annotations

import importlib
import sys

import click

from ._common import (
    EXIT_BAD_INPUT,
    BadInput,
    OneLineGroup,
    check_output_path,
    friendly_errors,
    harden_numeric_options,
)

__all__ = ["main", "BadInput", "EXIT_BAD_INPUT", "check_output_path", "friendly_errors"]

#: (module, command objects): adding a command group is one module and one line here.
COMMANDS = [
    ("info", ["info_command"]),
    ("limits", ["fit_command", "apply_command"]),
    ("report", ["report_command", "plot_command"]),
    ("demo", ["demo_command"]),
    ("filters", ["filter_command", "splice_command"]),
    ("footlock", ["footlock_command"]),
    ("view", ["view_command"]),
    ("resample", ["resample_command", "rename_command"]),
    ("export", ["export_command"]),
    ("recover", ["recover_command"]),
    ("studio", ["studio_command"]),
    ("retarget", ["retarget_command"]),
    ("corpus", ["scan_command", "clean_command"]),
    ("human", ["human_group"]),
]


@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jointlimits")
def main() -> None:
    """Joint limits fitted from motion capture, IK that respects them, and pop-free filters."""


def _register() -> None:
    for module, names in COMMANDS:
        mod = importlib.import_module(f"{__name__}.{module}")
        for n in names:
            main.add_command(getattr(mod, n))
    # every numeric option of every command: plain decimal text, finite, in its range
    harden_numeric_options(main)


_register()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

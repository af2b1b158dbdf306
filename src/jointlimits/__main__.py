"""``python -m jointlimits``: the same command line as ``jointlimits``."""

from jointlimits.cli import main

main(prog_name="jointlimits")

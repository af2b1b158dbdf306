"""MkDocs hook: replace ``<!-- jointlimits-help NAME -->`` in a page with ``jointlimits NAME --help``.

The help text comes from the installed command line itself (click, in process), so the guide's
option lists cannot drift from the code.
"""

from __future__ import annotations

import re

from mkdocs.exceptions import PluginError

MARKER = re.compile(r"<!-- jointlimits-help (\w+) -->")


def _help(name: str) -> str:
    import click

    from jointlimits.cli import main

    cmd = main.commands.get(name)
    if cmd is None:
        raise PluginError(f"no command 'jointlimits {name}' (marker in the docs)")
    with click.Context(cmd, info_name=f"jointlimits {name}", max_content_width=100, terminal_width=100) as ctx:
        return cmd.get_help(ctx)


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(lambda m: f"```text\n$ jointlimits {m.group(1)} --help\n{_help(m.group(1))}\n```", markdown)

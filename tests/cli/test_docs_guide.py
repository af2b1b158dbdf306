"""The docs' command-line guide covers every command: each one's ``--help`` is inserted into a
guide page at build time (docs/hooks/cli_help.py), and every guide page is in the site's nav."""

from __future__ import annotations

import re
from pathlib import Path

from jointlimits.cli import main

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"


def test_every_command_has_its_help_in_the_guide():
    markers = {m for p in GUIDE.glob("*.md") for m in re.findall(r"<!-- jointlimits-help (\w+) -->", p.read_text())}
    assert markers == set(main.commands), set(main.commands) ^ markers


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    missing = sorted(p for p in pages if f": {p}\n" not in nav)
    assert not missing, missing

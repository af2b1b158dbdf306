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


# ------------------------------------------------------------------ #38: docs and help match the tool
def test_the_guide_index_lists_every_command():
    index = (GUIDE / "index.md").read_text()
    table = index[: index.index("## Synopsis")]
    missing = sorted(c for c in main.commands if f"`{c}`" not in table)
    assert not missing, f"docs/guide/index.md's table leaves out {missing}"
    synopsis = index[index.index("## Synopsis") :]
    assert {c for c in main.commands if f"jointlimits {c} " in synopsis} == set(main.commands)
    for target in ("usd", "usd-spherical"):  # the USD export targets
        assert f"`{target}`" in table and f"|{target}" in synopsis, target


#: display name of each reader/writer module of jointlimits.io
FORMAT_NAMES = {"bvh": "BVH", "gltf": "glTF", "usd": "USD", "fbx": "FBX", "amass": "AMASS"}


def test_the_docs_home_and_readme_list_every_format():
    from jointlimits.io import FORMATS, WRITABLE

    assert set(FORMAT_NAMES) == set(FORMATS.values()), "a new format: name it here and on the docs home"
    readable = [FORMAT_NAMES[m] for m in dict.fromkeys(FORMATS.values())]
    writable = [FORMAT_NAMES[FORMATS[e]] for e in WRITABLE]
    for page in (ROOT / "docs" / "index.md", ROOT / "README.md"):
        first = page.read_text().split("\n\n")[1]  # the paragraph under the title
        said_in, said_out = re.search(r"(.*?) in, (.*?) out", first.replace("\n", " ")).groups()
        assert all(n in said_in for n in readable), (page.name, said_in)
        assert all(n in said_out for n in writable) and "AMASS" not in said_out, (page.name, said_out)


#: commands that write a clip with -o: each takes every format io.save writes, by extension
CLIP_WRITERS = ["apply", "filter", "splice", "footlock", "resample", "rename", "recover", "retarget"]


def _option_help(command: str, name: str) -> str:
    return next(p.help or "" for p in main.commands[command].params if name in getattr(p, "opts", []))


def test_help_names_every_format():
    from click.testing import CliRunner

    from jointlimits.io import FORMATS, WRITABLE

    info = CliRunner().invoke(main, ["info", "--help"]).output
    assert all(e in info for e in FORMATS), info  # .usd, .fbx, .npz, ...
    for c in CLIP_WRITERS:
        text = _option_help(c, "-o")
        assert all(e in text for e in WRITABLE), (c, text)
        out = CliRunner().invoke(main, [c, "--help"]).output
        assert "USD" in out.upper() and ".fbx" in out, c


def test_the_link_checker_finds_broken_files_and_anchors(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_links", ROOT / "scripts" / "check_links.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<h2 id="top">x</h2><a href="a/">ok</a><a href="#top">ok</a><a href="a/#here">ok</a>'
        '<a href="https://example.org/#x">external</a><a href="#gone">bad anchor</a><a href="b/">bad page</a>'
        '<a href="0">bad file</a><img src="pic.png">'
    )
    (tmp_path / "a" / "index.html").write_text('<p id="here"></p><a href="../index.html#top">ok</a>')
    bad = mod.broken_links(tmp_path)
    assert sorted(link for _, link in bad) == ["#gone", "0", "b/", "pic.png"]

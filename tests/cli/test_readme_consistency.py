"""One consistent CLI (#14 item 6): help for every option, README's synopsis lists every option,
every output refused when it exists unless --force, -q silent and --json strict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from jointlimits import io
from jointlimits.cli import main
from jointlimits.motion import procedural

README = Path(__file__).resolve().parents[2] / "README.md"


def run(*args) -> click.testing.Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option)]


def test_every_option_has_help():
    missing = [f"{name} {o.opts[0]}" for name, cmd in main.commands.items() for o in _options(cmd) if not o.help]
    assert not missing, missing
    assert all(cmd.help for cmd in main.commands.values())


def test_readme_lists_every_command():
    text = README.read_text()
    block = text[text.index("### Command line") :]
    block = block[block.index("```") + 3 :]
    block = block[: block.index("```")]
    named = set(re.findall(r"[\w-]+", block))
    assert set(main.commands) <= named, set(main.commands) - named


def test_guide_synopsis_lists_every_option():
    # the full synopsis lives in the command-line guide (README keeps a short list, #38)
    text = (README.parent / "docs" / "guide" / "index.md").read_text()
    block = text[text.index("## Synopsis") :]
    block = block[block.index("```") + 3 :]
    block = block[: block.index("```")]
    # a command's synopsis: its lines and their indented continuations
    lines: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        m = re.match(r"jointlimits (\w+)", line)
        if m:
            current = m.group(1)
            lines[current] = lines.get(current, "") + " " + line
        elif line.startswith("    ") and current:
            lines[current] += " " + line
    assert set(lines) == set(main.commands), set(main.commands) ^ set(lines)
    missing = []
    for name, cmd in main.commands.items():
        for o in _options(cmd):
            names = o.opts + o.secondary_opts
            if not any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", lines[name]) for n in names):
                missing.append(f"{name} {names[0]}")
    assert not missing, missing


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    m = procedural.range_of_motion().frames(0, 60)
    clip = d / "clip.bvh"
    io.save(clip, m)
    lim = d / "lim.json"
    assert run("fit", clip, "-o", lim, "-q").exit_code == 0
    return {"dir": d, "clip": clip, "lim": lim}


def _commands(f: dict[str, Path], out: Path) -> dict[str, list]:
    c, lim = f["clip"], f["lim"]
    return {
        "fit": ["fit", c, "-o", out.with_suffix(".json")],
        "apply": ["apply", lim, c, "-o", out],
        "plot": ["plot", lim, c, "--joint", "LeftArm", "-o", out.with_suffix(".png")],
        "view": ["view", lim, "-o", out.with_suffix(".html")],
        "filter": ["filter", c, "-o", out, "--cuts", "10"],
        "splice": ["splice", c, c, "-o", out],
        "footlock": ["footlock", c, "-o", out],
        "resample": ["resample", c, "--fps", "15", "-o", out],
        "rename": ["rename", c, "--to", "lafan1", "-o", out],
        "export": [
            "export",
            lim,
            "--to",
            "godot",
            "-o",
            out.with_suffix(".json"),
            "--random",
            "1000",
            "--samples",
            "100",
        ],
        "recover": ["recover", c, "--skeleton", c, "-o", out],
    }


@pytest.mark.parametrize(
    "name", ["fit", "apply", "plot", "view", "filter", "splice", "footlock", "resample", "rename", "export", "recover"]
)
def test_existing_output_refused_unless_force(files, name, tmp_path):
    out = tmp_path / "out.bvh"
    args = _commands(files, out)[name]
    target = Path(args[args.index("-o") + 1])
    target.write_bytes(b"keep me")
    res = run(*args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "file exists; pass --force" in lines[0] and res.stdout == ""
    assert target.read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # nothing beside it


@pytest.mark.parametrize("name", ["fit", "apply", "resample", "rename", "filter"])
def test_force_replaces_quiet_is_silent_json_is_strict(files, name, tmp_path):
    out = tmp_path / "out.bvh"
    args = _commands(files, out)[name]
    target = Path(args[args.index("-o") + 1])
    target.write_bytes(b"old")
    res = run(*args, "--force", "-q")
    assert res.exit_code == 0 and res.stdout == "" and res.stderr == "", res.output
    assert target.read_bytes() != b"old"
    res = run(*args, "--force", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert isinstance(doc, dict) and doc


def test_info_and_report_json(files):
    doc = json.loads(run("info", files["clip"], "--json").stdout)
    assert doc["frames"] == 60 and doc["body_height"] > 0
    assert run("info", files["clip"], "-q").stdout == ""
    doc = json.loads(run("report", files["lim"], files["clip"], "--json").stdout)
    assert doc["per_clip"][0]["frames"] == 60 and doc["joints"]


@pytest.mark.parametrize("swing_twist", [False, True])
def test_plot_marks_frames_outside(monkeypatch, tmp_path, swing_twist):
    import numpy as np

    from jointlimits.limits.model import JointLimits
    from jointlimits.motion import quat
    from jointlimits.viz import plots

    m = procedural.range_of_motion().frames(0, 120)
    lim = JointLimits.fit(m.frames(0, 60), swing_twist=swing_twist)
    figs = []
    make = plots._figure
    monkeypatch.setattr(plots, "_figure", lambda *a, **k: figs.append(make(*a, **k)) or figs[-1])
    plots.plot_joint_limit(lim, m, "LeftArm", tmp_path / "a.png")
    j = m.skeleton.index("LeftArm")
    n_out = int((~lim.joint(j).contains(m.rotations[:, j])).sum())
    assert n_out > 0
    labels = [h.get_label() for ax in figs[0].axes for h in ax.collections + ax.lines]
    assert f"outside the limit ({n_out} frames)" in labels
    inside = quat.normalize(lim.project(m.rotations))
    figs.clear()
    plots.plot_joint_limit(lim, m.with_rotations(inside), "LeftArm", tmp_path / "b.png")
    assert not any(
        str(l).startswith("outside the limit (") and not l.endswith("(0 frames)")
        for ax in figs[0].axes
        for l in [h.get_label() for h in ax.collections + ax.lines]
    )
    assert np.isfinite(inside).all()


def test_license_file_matches_pyproject():
    tomllib = pytest.importorskip("tomllib")
    root = README.parent
    lic = tomllib.loads((root / "pyproject.toml").read_text())["project"]["license"]
    text = (root / "LICENSE").read_text()
    assert lic == "MIT" and text.startswith("MIT License") and 'THE SOFTWARE IS PROVIDED "AS IS"' in text

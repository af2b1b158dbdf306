"""Help and errors of the cleanup commands (issue #23)."""

from __future__ import annotations

from click.testing import CliRunner

from jointlimits.cli import main


def _help(cmd: str) -> str:
    r = CliRunner().invoke(main, [cmd, "--help"], terminal_width=400)
    assert r.exit_code == 0
    return " ".join(r.output.split())


def test_filter_threshold_is_a_scale_factor():
    assert "Scale factor" in _help("filter").split("--threshold", 1)[1][:200]


def test_footlock_limits_help_names_the_ankle():
    assert "ankle" in _help("footlock").split("--limits", 1)[1][:200]


def test_free_ankle_without_limits_is_an_error(tmp_path):
    r = CliRunner().invoke(
        main, ["footlock", str(tmp_path / "missing.bvh"), "-o", str(tmp_path / "o.bvh"), "--free-ankle"]
    )
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "--free-ankle" in lines[0] and "--limits" in lines[0], r.output
    assert not (tmp_path / "o.bvh").exists()

"""The command line as a user runs it: info, fit, apply, report, plot, demo; one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import JointLimits
from jointlimits.cli import main
from jointlimits.io import bvh

from conftest import MOCAP, needs_shared

WALK = MOCAP / "lafan1" / "walk4_subject1.bvh"
PUSH = MOCAP / "lafan1" / "push1_subject2.bvh"


def run(*args: str) -> click.testing.Result:  # noqa: F821
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _one_line_error(res, code: int = 2) -> str:
    assert res.exit_code == code, res.output
    err = res.stderr if hasattr(res, "stderr") else res.output
    lines = [l for l in err.strip().splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in res.output
    return lines[0]


@needs_shared
def test_info_text_and_json():
    res = run("info", MOCAP / "cmu_cgspeed_max" / "131_01.bvh", "--json")
    assert res.exit_code == 0
    d = json.loads(res.output)
    assert d["frames"] == 994 and d["joints"] == 31 and d["channels"] == 96
    assert d["up_axis_guess"] == "+y" and d["units_guess"] == "CMU/ASF units"
    assert abs(d["fps"] - 120) < 0.01
    res = run("info", WALK)
    assert res.exit_code == 0 and "centimetres" in res.output and "LeftForeArm" in res.output


def test_info_bad_file_is_one_line(tmp_path: Path):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0\n")
    line = _one_line_error(run("info", bad))
    assert "bad.bvh" in line
    _one_line_error(run("info", tmp_path / "missing.bvh"))


@needs_shared
def test_fit_apply_report_plot(tmp_path: Path):
    lim_path = tmp_path / "lim.json"
    res = run(
        "fit", WALK, MOCAP / "lafan1" / "dance1_subject1.bvh", "-o", lim_path, "--shape", "kdop", "--swing-twist", "-q"
    )
    assert res.exit_code == 0, res.output
    lim = JointLimits.load(lim_path)
    assert lim.settings["shape"] == "kdop" and lim.settings["swing_twist"] and len(lim.joints) == 21
    assert lim.skeleton.index("Hips") not in lim.joints  # the root carries the heading: left alone
    out = tmp_path / "out.bvh"
    res = run("apply", lim_path, PUSH, "-o", out, "--soften", "1", "0.1")
    assert res.exit_code == 0, res.output
    limited = bvh.load(out)
    v = lim.violation(limited.rotations)
    assert np.degrees(v.max()) < 0.1 * 180 / np.pi + 1e-6  # softening leaves at most `radius` rad
    res = run("report", lim_path, PUSH, "--json")
    rows = json.loads(res.output)["joints"]
    assert {r["joint"] for r in rows} == set(limited.skeleton.names) - {"Hips"}
    assert any(r["frames_outside"] > 0 for r in rows)
    res = run("report", lim_path, out, "--json")
    after = json.loads(res.output)["joints"]
    assert max(r["max_violation_deg"] for r in after) <= np.degrees(0.1) + 1e-6
    fig = tmp_path / "arm.png"
    res = run("plot", lim_path, PUSH, "--joint", "LeftArm", "-o", fig)
    assert res.exit_code == 0, res.output
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and fig.stat().st_size > 10_000
    fig2 = tmp_path / "chan.png"
    res = run("plot", PUSH, "--after", out, "--joint", "LeftArm", "-o", fig2)
    assert res.exit_code == 0, res.output
    assert fig2.read_bytes()[:4] == b"\x89PNG"


@needs_shared
def test_cli_errors_are_one_line_and_keep_inputs(tmp_path: Path):
    lim_path = tmp_path / "lim.json"
    assert run("fit", WALK, "-o", lim_path, "-q").exit_code == 0
    copy = tmp_path / "clip.bvh"
    copy.write_bytes(PUSH.read_bytes())
    before = copy.read_bytes()
    line = _one_line_error(run("apply", lim_path, copy, "-o", copy))
    assert "overwrite" in line and copy.read_bytes() == before
    other = MOCAP / "cmu_cgspeed_max" / "131_01.bvh"
    assert "another skeleton" in _one_line_error(run("apply", lim_path, other, "-o", tmp_path / "x.bvh"))
    assert not (tmp_path / "x.bvh").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert "not valid JSON" in _one_line_error(run("report", bad, PUSH))
    assert "no joint named" in _one_line_error(run("plot", lim_path, PUSH, "--joint", "Tail", "-o", tmp_path / "t.png"))
    assert not (tmp_path / "t.png").exists()


def test_demo_runs_without_shared_data(tmp_path: Path):
    out = tmp_path / "demo"
    res = run("demo", "--out", out, "-q")
    assert res.exit_code == 0, res.output
    for name in (
        "range_of_motion.bvh",
        "over_rotated.bvh",
        "limited.bvh",
        "limits.json",
        "report.json",
        "violations.png",
    ):
        assert (out / name).is_file(), name
    rep = json.loads((out / "report.json").read_text())
    before = np.mean([r["fraction_outside"] for r in rep["over_rotated"]])
    after = np.mean([r["fraction_outside"] for r in rep["limited"]])
    assert before > 0.3 and after < 0.02
    assert len(list(out.glob("joint_*.png"))) == 3
    lim = JointLimits.load(out / "limits.json")
    assert lim.contains(bvh.load(out / "range_of_motion.bvh").rotations).all()


@needs_shared
@pytest.mark.parametrize(
    "clip", ["bandai_namco/dataset-1_kick_normal_001.bvh", "adelaide/milad.bvh", "cmu_cgspeed_max/131_01.bvh"]
)
def test_demo_on_real_clips(clip: str, tmp_path: Path):
    src = tmp_path / Path(clip).name  # its first 600 frames (the whole clips take 4-7 s each here)
    bvh.save(src, bvh.load(MOCAP / clip)[:600])
    res = run("demo", "--input", src, "--out", tmp_path / "d", "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert (tmp_path / "d" / "limited.bvh").is_file()
    assert bvh.load(tmp_path / "d" / "limited.bvh").num_frames == bvh.load(src).num_frames
    rep = json.loads((tmp_path / "d" / "report.json").read_text())
    # the hard projection puts every joint-frame inside; the printed summary says so
    assert all(r["frames_outside"] == 0 for r in rep["projected"]), rep["projected"]
    assert summary["fraction_outside"]["projected"] == 0.0
    if not clip.startswith("bandai"):
        return
    # a second run into the same folder refuses unless --force; -q prints nothing
    again = run("demo", "--input", src, "--out", tmp_path / "d", "-q")
    assert again.exit_code == 2 and "pass --force" in again.stderr
    again = run("demo", "--input", src, "--out", tmp_path / "d", "-q", "--force")
    assert again.exit_code == 0 and again.stdout == ""


@needs_shared
def test_fit_mirror_flag(tmp_path: Path):
    short = tmp_path / "walk.bvh"
    bvh.save(short, bvh.load(WALK)[:300])
    res = run("fit", short, "-o", tmp_path / "m.json", "--shape", "kdop", "--mirror", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["mirror"] is True
    lim = JointLimits.load(tmp_path / "m.json")
    assert lim.settings["mirror"] is True and lim.settings["clips"] == 1
    res = run("fit", short, "-o", tmp_path / "p.json", "--shape", "kdop", "-q")
    assert res.exit_code == 0 and JointLimits.load(tmp_path / "p.json").settings["mirror"] is False
    # the mirrored data widens the limits: the plain fit's false accepts are a subset
    rng = np.random.default_rng(0)
    q = rng.normal(size=(4000, lim.skeleton.num_joints, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    plain = JointLimits.load(tmp_path / "p.json")
    assert lim.contains(q).sum() > plain.contains(q).sum()
    # a rig whose rest pose is not a mirror image: one line, nothing written
    bandai = MOCAP / "bandai_namco" / "dataset-1_bow_normal_001.bvh"
    line = _one_line_error(run("fit", bandai, "-o", tmp_path / "b.json", "--mirror"))
    assert "not left/right symmetric" in line and not (tmp_path / "b.json").exists()

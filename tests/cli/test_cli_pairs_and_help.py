"""Issue #23 (part b): fit --coupled lists its pairs, rename --to LIMITS.json keeps End Sites,
and help and report texts that say the truth."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from jointlimits import JointLimits
from jointlimits.cli import main
from jointlimits.cli.demo import worst_joints
from jointlimits.cli.report import _fraction
from jointlimits.io import bvh


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_fit_coupled_prints_and_lists_its_pairs(tmp_path, clips):
    src = tmp_path / "c.bvh"
    bvh.save(src, clips[0].frames(0, 40))
    res = run("fit", src, "--shape", "implicit", "--coupled", "-o", tmp_path / "l.json", "--json")
    assert res.exit_code == 0, res.output
    pairs = json.loads(res.output)["pairs"]
    assert len(pairs) >= 8 and ["LeftArm", "LeftForeArm"] in pairs and ["RightUpLeg", "RightLeg"] in pairs
    res = run("fit", src, "--shape", "implicit", "--coupled", "-o", tmp_path / "l.json", "--force")
    assert f"coupled pairs ({len(pairs)}): " in res.output and "LeftArm -> LeftForeArm" in res.output


def test_rename_onto_a_limits_file_keeps_the_end_sites(tmp_path, clips):
    clip = clips[0].frames(0, 30)
    assert clip.skeleton.end_sites
    src = tmp_path / "c.bvh"
    bvh.save(src, clip)
    JointLimits.fit([clip], shape="box").save(tmp_path / "l.json")
    res = run("rename", src, "--to", tmp_path / "l.json", "-o", tmp_path / "out.bvh")
    assert res.exit_code == 0, res.output
    out = bvh.load(tmp_path / "out.bvh").skeleton
    assert (tmp_path / "out.bvh").read_text().count("End Site") == len(clip.skeleton.end_sites)
    for (p, o), (q, u) in zip(clip.skeleton.end_sites, out.end_sites):
        assert p == q and np.allclose(o, u)


def test_help_says_any_format_and_shows_no_backticks():
    for name in ("info", "fit", "apply"):
        text = run(name, "--help").output
        assert "any supported" in text and "BVH clip" not in text and "BVH clips" not in text
    assert "`" not in run("plot", "--help").output


def test_report_fraction_is_not_zero_when_frames_are_outside():
    assert _fraction(0.0) == "0.000" and _fraction(1 / 5000) == "0.0002" and _fraction(0.25) == "0.250"
    assert float(_fraction(3 / 10000)) > 0


def test_demo_draws_the_joints_with_the_largest_violations():
    # a toe a little out in every frame, an arm far out in one: the arm is drawn first
    v = np.zeros((100, 4))
    v[:, 3] = 0.05
    v[40, 1] = 0.6
    v[:50, 2] = 0.2
    assert worst_joints(v, [0, 1, 2, 3], 2) == [1, 2]


def test_names_moved_out_of_cli_limits_still_import_from_it():
    import jointlimits.cli.limits as old
    from jointlimits.cli import demo, report

    assert old.run_demo is demo.run_demo and old.worst_joints is worst_joints and old._fraction is _fraction
    assert old.report_command is report.report_command and old.DEMO_FILES == demo.DEMO_FILES
    try:
        old.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("an unknown name must raise AttributeError")

"""Limits leave the root alone, choose joints, and refuse (or re-express) a foreign rest pose (#14)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import io
from jointlimits.cli import main
from jointlimits.errors import LimitsError
from jointlimits.limits.fit import root_joints
from jointlimits.limits.model import JointLimits
from jointlimits.limits.report import frame_ranges
from jointlimits.limits.rest import rest_directions
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Motion, Skeleton, forward_kinematics

from conftest import MOCAP, needs_shared

BANDAI = MOCAP / "bandai_namco"
PERFUME = MOCAP / "perfume"


def run(*args) -> click.testing.Result:  # noqa: F821
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_line_error(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [l for l in res.stderr.strip().splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


def foreign_rest(m: Motion, seed: int = 0, joints: list[str] | None = None) -> Motion:
    """The same world motion on a skeleton whose joint frames are turned at rest: per joint a
    rotation ``C_j`` (a minimal one where the joint has a single child bone, whose twist the offsets
    cannot show), offsets ``inv(C_parent) o`` and local rotations ``inv(C_parent) q C_j``."""
    sk = m.skeleton.copy()
    rng = np.random.default_rng(seed)
    rd = rest_directions(m.skeleton)
    c = quat.identity((sk.num_joints,))
    for j in range(sk.num_joints):
        if m.skeleton.parents[j] < 0 or (joints is not None and m.skeleton.names[j] not in joints):
            continue
        d = rd[j][np.isfinite(rd[j]).all(-1)]
        if len(d) == 1:
            c[j] = quat.between(rng.normal(size=3), d[0])
        elif len(d) > 1:
            c[j] = quat.normalize(rng.normal(size=4))
    cp = np.array([c[p] if p >= 0 else quat.identity() for p in sk.parents])
    for k in range(1, sk.num_joints):
        sk.offsets[k] = quat.inv_mul_vec(cp[k], sk.offsets[k])
    sk.end_sites = [(p, quat.inv_mul_vec(c[p], o)) for p, o in sk.end_sites]
    rot = quat.mul(quat.inv_mul(cp[None], m.rotations), c[None])
    pos = m.positions.copy()
    pos[:, 1:] = quat.inv_mul_vec(cp[None, 1:], m.positions[:, 1:])
    return Motion(sk, rot, pos, m.frame_time)


def world(m: Motion) -> np.ndarray:
    return forward_kinematics(m)[1]


# --------------------------------------------------------------------------- the root


def test_frame_ranges():
    assert frame_ranges(np.array([0, 1, 1, 0, 1, 0, 0, 1], bool)) == [[1, 2], [4, 4], [7, 7]]
    assert frame_ranges(np.zeros(3, bool)) == []


def test_root_joints_synthetic():
    sk = Skeleton(["ground", "hips", "spine"], [-1, 0, 1], [[0, 0, 0], [0, 90, 0], [0, 10, 0]])
    m = Motion.rest(sk, 4)
    m.positions[:, 1, 0] = np.arange(4)  # the hips carry the root motion below a static ground root
    m.rotations[:, 2] = quat.from_angle_axis(np.linspace(0, 1, 4), [0, 0, 1])
    assert root_joints(m) == [0, 1]
    m.rotations[:, 0] = quat.from_angle_axis(np.linspace(0, 1, 4), [0, 1, 0])  # the root turns: it carries all
    assert root_joints(m) == [0]
    assert root_joints(Motion.rest(sk, 3)) == [0]  # nothing moves: only the root


@needs_shared
def test_bandai_heading_left_alone():
    clips = sorted(BANDAI.glob("*.bvh"))
    fit_on = [io.load(p) for p in clips[:5]]
    lim = JointLimits.fit(fit_on, shape="kdop")
    sk = fit_on[0].skeleton
    assert lim.settings["root_joints"] == ["joint_Root", "Hips"]
    assert sk.index("Hips") not in lim.joints and sk.index("joint_Root") not in lim.joints
    walk = io.load(BANDAI / "dataset-1_walk-left_normal_001.bvh")
    out = lim.apply(walk)
    h = sk.index("Hips")
    g0, g1 = forward_kinematics(walk)[0][:, h], forward_kinematics(out)[0][:, h]
    assert np.degrees(quat.angle(g0, g1)).max() < 1e-9  # heading untouched
    assert np.array_equal(out.rotations[:, h], walk.rotations[:, h])
    # asked for explicitly, the root is limited (and then the heading may move)
    with_root = JointLimits.fit(fit_on, shape="kdop", root=True)
    assert h in with_root.joints
    moved = with_root.apply(walk, root=True)
    assert not np.array_equal(moved.rotations[:, h], walk.rotations[:, h])
    # an older file with a root limit: apply leaves it alone unless --root
    assert np.array_equal(with_root.apply(walk).rotations[:, h], walk.rotations[:, h])


@needs_shared
def test_cli_joints_exclude_root(tmp_path: Path):
    clip = MOCAP / "sfu" / "0005_JumpRope001.bvh"
    other = MOCAP / "sfu" / "0005_SideSkip001.bvh"
    lim_path = tmp_path / "l.json"
    res = run("fit", clip, "-o", lim_path, "--shape", "box", "--exclude", "LeftHand,RightHand", "-q")
    assert res.exit_code == 0, res.output
    lim = JointLimits.load(lim_path)
    names = {lim.skeleton.names[j] for j in lim.joints}
    assert "Hips" not in names and "LeftHand" not in names and "RightHand" not in names and "LeftArm" in names
    m = io.load(other)
    out_path = tmp_path / "o.bvh"
    res = run("apply", lim_path, other, "-o", out_path, "--joints", "LeftArm", "--json")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["joints"] == ["LeftArm"]
    out = io.load(out_path)
    changed = np.any(np.abs(out.rotations - m.rotations) > 1e-6, axis=(0, 2))
    assert set(np.flatnonzero(changed)) <= {m.skeleton.index("LeftArm")}
    assert np.array_equal(out.positions[:, 0], m.positions[:, 0])
    assert "no limit for joint(s) 'LeftHand'" in one_line_error(
        run("apply", lim_path, other, "-o", tmp_path / "x.bvh", "--joints", "LeftHand")
    )
    assert not (tmp_path / "x.bvh").exists()
    # report: per clip, with the frame ranges outside
    res = run("report", lim_path, other, "--exclude", "LeftArm", "--json")
    rep = json.loads(res.stdout)
    rows = rep["per_clip"][0]["joints"]
    assert "LeftArm" not in {r["joint"] for r in rows}
    for r in rows:
        assert sum(b - a + 1 for a, b in r["frame_ranges"]) == r["frames_outside"]
    assert any(r["frame_ranges"] for r in rows)
    text = run("report", lim_path, other).stdout
    assert "frames outside" in text and str(other) in text


# --------------------------------------------------------------------------- the rest pose


@needs_shared
def test_same_convention_clips_share_a_rest_pose():
    # other subjects of one convention (LAFAN1 subjects 1 and 2, Bandai with and without End Site
    # lengths) are accepted; the directions of zero-length bones are not compared
    a, b = io.load(MOCAP / "lafan1" / "walk4_subject1.bvh"), io.load(MOCAP / "lafan1" / "push1_subject2.bvh")
    JointLimits.fit([a.frames(0, 200), b.frames(0, 200)]).check_skeleton(b.skeleton)
    c, d = io.load(BANDAI / "dataset-1_bow_feminine_001.bvh"), io.load(BANDAI / "dataset-1_bow_normal_001.bvh")
    JointLimits.fit([c, d]).apply(io.load(BANDAI / "dataset-1_guide_normal_001.bvh"))


@needs_shared
def test_foreign_rest_pose_refused(tmp_path: Path):
    a = io.load(PERFUME / "A_test.bvh").frames(0, 600)
    b = foreign_rest(io.load(PERFUME / "B_test.bvh").frames(0, 600), joints=["LeftShoulder", "LeftElbow"])
    assert np.abs(world(b) - world(io.load(PERFUME / "B_test.bvh").frames(0, 600))).max() < 1e-9
    assert a.skeleton.fingerprint() == b.skeleton.fingerprint()
    lim = JointLimits.fit(a)
    with pytest.raises(LimitsError, match=r"another rest pose.*LeftElbow \d+\.\d deg"):
        lim.apply(b)
    with pytest.raises(LimitsError, match=r"clip 1 has another rest pose.*Left(Shoulder|Elbow)"):
        JointLimits.fit([a, b])
    # through the CLI: one line, exit 2, nothing written; the limits file keeps the rest directions
    lim_path, b_path, out = tmp_path / "a.json", tmp_path / "b.bvh", tmp_path / "out.bvh"
    lim.save(lim_path)
    io.save(b_path, b)
    assert "rest_directions" in json.loads(lim_path.read_text())["skeleton"]
    msg = one_line_error(run("apply", lim_path, b_path, "-o", out))
    assert "another rest pose" in msg and "LeftElbow" in msg and "--retarget-rest" in msg
    assert not out.exists()
    res = run("apply", lim_path, b_path, "-o", out, "--retarget-rest", "-q")
    assert res.exit_code == 0 and res.stdout == ""
    assert np.abs(world(io.load(out)) - world(lim.apply(io.load(PERFUME / "B_test.bvh").frames(0, 600)))).max() < 1e-4


@needs_shared
def test_retarget_rest_both_ways():
    a = io.load(PERFUME / "A_test.bvh").frames(0, 800)
    a2 = foreign_rest(a, seed=3)
    over = a.copy()
    over.rotations = quat.mul(
        a.rotations,
        quat.from_scaled_angle_axis(np.random.default_rng(1).normal(scale=0.6, size=a.rotations.shape[:-1] + (3,))),
    )
    over2 = foreign_rest(over, seed=3)
    for fitted_on, fitted_over, target, target_over in ((a, over, a2, over2), (a2, over2, a, over)):
        lim = JointLimits.fit(fitted_on, shape="kdop", swing_twist=True)
        moved = lim.retarget_rest(target.skeleton)
        expect = world(lim.apply(fitted_over))
        got = world(moved.apply(target_over))
        assert np.abs(got - expect).max() < 1e-6 * np.abs(expect).max()
        assert (lim.violation(fitted_over.rotations) > 1e-6).any()
        # inside poses come back bit-exact, and the retarget of the retarget is the original
        inside = moved.apply(target)
        assert np.array_equal(inside.rotations, target.rotations)
        back = moved.retarget_rest(fitted_on.skeleton)
        assert all(type(back.joints[j]).__name__ == "FittedLimit" for j in back.joints)
        assert np.abs(back.apply(fitted_over).rotations - lim.apply(fitted_over).rotations).max() < 1e-12


@needs_shared
def test_retargeted_limits_save_and_load(tmp_path: Path):
    a = io.load(PERFUME / "A_test.bvh").frames(0, 400)
    b = foreign_rest(a, seed=5)
    lim = JointLimits.fit(a, shape="ellipsoid").retarget_rest(b.skeleton)
    p = tmp_path / "r.json"
    lim.save(p)
    again = JointLimits.load(p)
    over = b.copy()
    over.rotations = quat.mul(b.rotations, quat.from_angle_axis(0.8, [0.0, 0.0, 1.0]))
    assert np.array_equal(again.apply(over).rotations, lim.apply(over).rotations)
    assert np.array_equal(
        again.project(over.rotations, soften=(1.0, 0.05)), lim.project(over.rotations, soften=(1.0, 0.05))
    )
    again.check_skeleton(b.skeleton)
    with pytest.raises(LimitsError, match="another rest pose"):
        again.check_skeleton(a.skeleton)


def test_corrupt_rest_entries(tmp_path: Path):
    sk = Skeleton(["r", "a", "b"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 1, 0]])
    m = Motion.rest(sk, 5)
    m.rotations[:, 1] = quat.from_angle_axis(np.linspace(0, 0.5, 5), [1, 0, 0])
    d = JointLimits.fit(m).to_dict()
    for bad, what in (
        ([[[0, 1, 0]]], "every joint"),
        ([[[0, 1, 0]], [[0, 2, 0]], []], "unit vector"),
        ([[["x", 1, 0]], [], []], r"\[x, y, z\]"),
        ("no", "every joint"),
    ):
        e = json.loads(json.dumps(d))
        e["skeleton"]["rest_directions"] = bad
        with pytest.raises(LimitsError, match=what):
            JointLimits.from_dict(e)
    e = json.loads(json.dumps(d))
    e["skeleton"]["rest_tolerance_deg"] = "10"
    with pytest.raises(LimitsError, match="rest_tolerance_deg"):
        JointLimits.from_dict(e)
    e = json.loads(json.dumps(d))
    del e["skeleton"]["rest_directions"]  # a file from before they were stored: the offsets' directions
    JointLimits.from_dict(e).check_skeleton(sk)
    e["joints"][0]["limit"] = {
        "kind": "rest-retargeted",
        "pre": [1, 0, 0, 0],
        "post": [0, 0, 0, 0],
        "inner": e["joints"][0]["limit"],
    }
    e["joints"][0].pop("compiled", None)
    with pytest.raises(LimitsError, match="unit quaternion"):
        JointLimits.from_dict(e)

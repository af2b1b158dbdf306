"""Foot locking on the shared LAFAN1 walk: contacts, skating reduction, limits, untouched frames,
BVH output and the ``jointlimits footlock`` command."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from jointlimits import bvh, quat
from jointlimits.footlock import (contact_segments, detect_contacts, find_feet, find_toes, foot_skating, footlock,
                                  measure_skating)
from jointlimits.skeleton import forward_kinematics
from conftest import SHARED_MISSING

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LAFAN = SHARED / "data" / "mocap" / "lafan1"
WALK = "walk4_subject1.bvh"

pytestmark = pytest.mark.skipif(not (LAFAN / WALK).is_file(),
                                reason=SHARED_MISSING)


@pytest.fixture(scope="module")
def data():
    from jointlimits.model import JointLimits

    clips = {p.name: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    walk = clips[WALK]
    limits = JointLimits.fit([m for k, m in clips.items() if k != WALK], shape="ellipsoid")
    out, rep = footlock(walk, limits)
    return walk, limits, rep.contacts, out, rep


def test_feet_found_by_name(data):
    walk = data[0]
    assert [walk.skeleton.names[j] for j in find_feet(walk.skeleton)] == ["LeftFoot", "RightFoot"]


def test_contacts_both_feet_alternating(data):
    walk, _, c, _, _ = data
    assert c.shape == (walk.num_frames, 2)
    segs = contact_segments(c)
    assert all(len(s) >= 20 for s in segs), [len(s) for s in segs]
    # while one foot swings (a gap between two of its contacts) the other one is planted
    for i in range(2):
        other = c[:, 1 - i]
        covered = [other[e:s2].mean() for (_, e), (s2, _) in zip(segs[i][:-1], segs[i][1:])]
        assert np.median(covered) >= 0.9
    assert (c[:, 0] & ~c[:, 1]).any() and (c[:, 1] & ~c[:, 0]).any()


def test_skating_reduced_by_90_percent(data):
    walk, _, c, out, rep = data
    before, after = measure_skating(walk, c), measure_skating(out, c)
    assert before["total_m"] > 0
    assert rep.skating_before["total_m"] == pytest.approx(before["total_m"])
    assert 100.0 * (1.0 - after["total_m"] / before["total_m"]) >= 90.0
    assert rep.reduction_percent >= 90.0
    assert set(before["per_foot"]) == {"LeftFoot", "RightFoot"}


def test_limits_never_violated_and_foot_keeps_its_orientation(data):
    walk, limits, _, out, _ = data
    sk = walk.skeleton
    for name in ("LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg", "LeftFoot", "RightFoot"):
        j = sk.index(name)
        changed = np.any(out.rotations[:, j] != walk.rotations[:, j], axis=-1)
        assert changed.sum() > 100
        assert limits.joint(j).contains(out.rotations[changed, j]).all(), name
    # locking the ankle alone (no toe pivot, no ankle limit) keeps the foot's global orientation
    ankle_only, _ = footlock(walk[:900], toes=False)
    gr0, _ = forward_kinematics(walk[:900])
    gr1, _ = forward_kinematics(ankle_only)
    for name in ("LeftFoot", "RightFoot"):
        j = sk.index(name)
        assert np.max(quat.angle(gr0[:, j], gr1[:, j])) < 1e-6


def test_frames_far_from_contacts_unchanged(data):
    walk = data[0][:1500]
    sk = walk.skeleton
    B = 6  # the default blend_frames
    # contacts in the first half only (a walk's swing is too short to leave frames far from any contact)
    c = detect_contacts(walk)
    toe_idx = find_toes(sk, find_feet(sk))
    tc = detect_contacts(walk, toe_idx)
    c[750:] = False
    tc[750:] = False
    out, rep = footlock(walk, None, c, toe_contacts=tc)
    legs = set()
    for i, j in enumerate(find_feet(sk)):
        chain = [int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j]
        legs.update(chain)
        near = np.zeros(walk.num_frames, bool)
        held = c[:, i] | tc[:, i]  # heel or toe planted (gaps of <= 2 frames are bridged)
        for s, e in contact_segments(held[:, None])[0]:
            near[max(0, s - B - 2):e + B + 2] = True
        assert (~near).sum() > 50, (~near).sum()
        np.testing.assert_array_equal(out.rotations[~near][:, chain], walk.rotations[~near][:, chain])
    others = [j for j in range(sk.num_joints) if j not in legs]
    np.testing.assert_array_equal(out.rotations[:, others], walk.rotations[:, others])
    np.testing.assert_array_equal(out.positions, walk.positions)


def test_bvh_output_has_the_same_skeleton(data, tmp_path):
    walk, _, c, out, _ = data
    p = tmp_path / "locked.bvh"
    bvh.save(p, out)
    back = bvh.load(p)
    assert back.skeleton.fingerprint() == walk.skeleton.fingerprint()
    assert back.skeleton.names == walk.skeleton.names
    assert back.num_frames == walk.num_frames and back.frame_time == pytest.approx(walk.frame_time)
    assert np.max(quat.angle(back.rotations, out.rotations)) < 1e-5
    assert measure_skating(back, c)["total_m"] <= 0.1 * measure_skating(walk, c)["total_m"]


def test_cli_end_to_end(data, tmp_path):
    from click.testing import CliRunner

    from jointlimits.cli import main

    walk, limits, _, _, _ = data
    clip = tmp_path / "walk.bvh"
    bvh.save(clip, walk[:600])
    lim = tmp_path / "limits.json"
    limits.save(lim)
    out = tmp_path / "out.bvh"
    runner = CliRunner()
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(out), "--limits", str(lim), "--blend-frames", "4"])
    assert r.exit_code == 0, r.output
    assert "reduction" in r.output and out.is_file()
    assert bvh.load(out).skeleton.fingerprint() == walk.skeleton.fingerprint()
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(tmp_path / "o.bvh"), "--json"])
    assert r.exit_code == 0, r.output
    import json

    assert json.loads(r.output)["reduction_percent"] >= 90.0
    # refuses to overwrite the input without --force
    before = clip.read_bytes()
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(clip)])
    assert r.exit_code == 2 and "--force" in r.output and clip.read_bytes() == before
    # a bad file: one line, exit code 2
    bad = tmp_path / "bad.bvh"
    bad.write_text("not a bvh\n")
    r = runner.invoke(main, ["footlock", str(bad), "-o", str(tmp_path / "x.bvh")])
    assert r.exit_code == 2 and r.output.strip().startswith("error:") and len(r.output.strip().splitlines()) == 1
    r = runner.invoke(main, ["footlock", str(tmp_path / "missing.bvh"), "-o", str(tmp_path / "x.bvh")])
    assert r.exit_code == 2
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(tmp_path / "x.bvh"), "--height-threshold", "-1"])
    assert r.exit_code == 2


def test_blend_ramps_are_smooth_and_tight_limits_are_kept(data):
    """With tight limits (fitted on the walk itself, no padding, then shrunk) the projection bites
    and CCD refines; every changed hip/knee rotation is still inside."""
    from jointlimits.model import JointLimits

    walk = data[0][:900]
    sk = walk.skeleton
    lim = JointLimits.fit(walk[:300], shape="ellipsoid", padding=0.0)
    out, rep = footlock(walk, lim)
    assert rep.limited > 0
    for name in ("LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg"):
        j = sk.index(name)
        ch = np.any(out.rotations[:, j] != walk.rotations[:, j], axis=-1)
        assert lim.joint(j).contains(out.rotations[ch, j]).all(), name


def test_independent_measure_reported_and_reduced(data):
    """The independent measure (not the detector's contacts) falls by >= 90% for ankles and toes on
    the walk locked without limits, and the report carries it; with the limits fitted on the other
    clips the ankle's limit costs part of the toe's gain (ankles still >= 90% less)."""
    walk, _, _, out, rep = data
    b = foot_skating(walk)
    a = foot_skating(out, reference=walk)
    assert set(b["per_joint"]) == {"LeftFoot", "RightFoot", "LeftToe", "RightToe"}
    assert b["ankle_cm"] > 100 and b["toe_cm"] > 100
    assert rep.independent_before["total_cm"] == pytest.approx(b["total_cm"])
    assert rep.independent_after["total_cm"] == pytest.approx(a["total_cm"])
    assert a["ankle_cm"] <= 0.1 * b["ankle_cm"] and a["toe_cm"] < 0.7 * b["toe_cm"]
    free, rep2 = footlock(walk)
    a2 = foot_skating(free, reference=walk)
    assert a2["ankle_cm"] <= 0.1 * b["ankle_cm"] and a2["toe_cm"] <= 0.1 * b["toe_cm"]
    assert rep2.to_dict()["independent_reduction_percent"]["toe"] >= 90.0


def test_independent_measure_on_synthetic_sliding_foot():
    """A leg standing still except the whole body sliding 1 cm per frame: every low-and-slow frame
    skates 1 cm per ankle and toe; standing still skates 0."""
    from jointlimits.skeleton import Motion, Skeleton

    names = ["Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToe", "Head"]
    parents = np.array([-1, 0, 1, 2, 3, 0])
    offs = np.array([[0, 66, 0], [10, 0, 0], [0, -30, 20], [0, -30, -20], [0, -6, 12], [0, 70, 0]], float)
    sk = Skeleton(names, parents, offs)
    F = 40
    pos = np.repeat(offs[None], F, axis=0)
    still = Motion(sk, quat.identity((F, 6)), pos.copy(), 1 / 30)
    assert foot_skating(still)["total_cm"] == 0.0
    pos[:, 0, 0] += np.arange(F) * 0.5  # 0.5 cm per frame (centimetre clip)
    slide = Motion(sk, quat.identity((F, 6)), pos, 1 / 30)
    s = foot_skating(slide)
    assert s["per_joint"]["LeftFoot"]["frames"] == F - 1
    assert s["ankle_cm"] == pytest.approx(0.5 * (F - 1)) and s["toe_cm"] == pytest.approx(0.5 * (F - 1))
    locked, rep = footlock(slide, blend_frames=0)
    assert rep.toe_contacts[:, 0].all() and rep.contacts[:, 0].all()
    after = foot_skating(locked, reference=slide)
    assert after["ankle_cm"] < 0.05 * s["ankle_cm"] and after["toe_cm"] < 0.05 * s["toe_cm"]


def test_toe_pivot_keeps_the_toe_put():
    """Heel planted, then only the toe: during the toe run the toe stays where it was when the heel
    lifted, while the ankle follows the animated foot about it."""
    from jointlimits.footlock import _planted_offsets

    F = 40
    pa = np.zeros((F, 3))
    pa[:, 0] = np.arange(F) * 0.5  # the animated foot drifts 0.5 per frame
    pt = pa + np.array([0.0, -6.0, 12.0])
    heel = np.zeros(F, bool)
    heel[:20] = True
    toe = np.zeros(F, bool)
    toe[10:30] = True
    o, R, need = _planted_offsets(pa, pt, heel, toe, 4, 1, 1)
    ankle = pa + o
    toe_out = ankle + quat.mul_vec(R, pt - pa)
    np.testing.assert_allclose(ankle[:20, [0, 2]], np.repeat(pa[:1, [0, 2]], 20, axis=0), atol=1e-9)
    np.testing.assert_allclose(toe_out[10:30, [0, 2]], np.repeat(toe_out[10:11, [0, 2]], 20, axis=0), atol=1e-9)
    assert need[30:34].all() and not need[35:].any()
    step = np.linalg.norm(np.diff(ankle, axis=0), axis=-1)
    assert step[:29].max() < 1e-9  # no jump at the heel-to-toe switch (the foot does not turn here)
    assert step[29:].max() < 0.5 * np.linalg.norm(o[29])  # the release is spread over the blend

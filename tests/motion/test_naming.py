"""Joint-name conventions: detection, renaming, the rest-pose check, mapping motions between
skeletons (global rotations of mapped joints preserved), and ``jointlimits rename``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import JointLimits, Motion, Skeleton, forward_kinematics
from jointlimits.cli import main
from jointlimits.errors import SkeletonError
from jointlimits.io import bvh
from jointlimits.motion import naming, quat

from conftest import MOCAP, needs_shared


def rot_err(a: np.ndarray, b: np.ndarray) -> float:
    d = quat.inv_mul(a, b)
    return float(np.max(2 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))))


@pytest.fixture(scope="module")
def clip(clips):
    return clips[0].frames(0, 200)


def test_rename_into_every_convention_and_back(clip):
    sk = clip.skeleton
    assert naming.detect(sk) == "lafan1"
    for conv in naming.CONVENTIONS:
        other = naming.map_names(sk, conv)
        assert np.array_equal(other.parents, sk.parents)
        if conv != "lafan1":
            assert other.names != sk.names
        assert naming.map_names(other, "lafan1", source=conv).names == sk.names
    smpl = naming.map_names(sk, "smpl")
    assert smpl.names[:3] == ["pelvis", "spine1", "spine2"] and "left_elbow" in smpl.names
    assert naming.detect(smpl) == "smpl"


def test_mixamo_prefix_is_recognised(clip):
    names = [
        "mixamorig:" + ("LeftToeBase" if n == "LeftToe" else "RightToeBase" if n == "RightToe" else n)
        for n in clip.skeleton.names
    ]
    sk = clip.skeleton.copy()
    sk.names = names
    assert naming.detect(sk) == "mixamo"
    assert naming.map_names(sk, "lafan1").names == clip.skeleton.names


def test_unknown_names_and_conventions_are_refused(clip):
    sk = Skeleton(["a", "b", "c"], [-1, 0, 1], np.eye(3))
    with pytest.raises(SkeletonError, match="match no known convention"):
        naming.detect(sk)
    with pytest.raises(SkeletonError, match="unknown naming convention 'blender'"):
        naming.map_names(clip.skeleton, "blender")


def _with_extra_joint(sk: Skeleton) -> Skeleton:
    """The skeleton with an unnamed zero-offset joint inserted between Hips and LeftUpLeg."""
    k = sk.names.index("LeftUpLeg")
    names = sk.names[:k] + ["LHipJoint"] + sk.names[k:]
    old = list(range(k)) + [None] + list(range(k, sk.num_joints))
    parents = []
    for o in old:
        if o is None:
            parents.append(int(sk.parents[k]))
        elif o == k:
            parents.append(k)
        else:
            p = int(sk.parents[o])
            parents.append(p if p < k else p + 1)
    offsets = np.insert(sk.offsets, k, 0.0, axis=0)
    return Skeleton(names, parents, offsets)


def test_map_motion_keeps_global_rotations_of_mapped_joints(clip):
    target = _with_extra_joint(naming.map_names(clip.skeleton, "cmu"))
    with pytest.warns(UserWarning, match="LHipJoint"):
        mapped = naming.map_motion(clip, target)
    gr_s, gp_s = forward_kinematics(clip)
    gr_t, gp_t = forward_kinematics(mapped)
    for j, n in enumerate(clip.skeleton.names):
        jt = target.names.index(naming.map_names(clip.skeleton, "cmu").names[j])
        assert rot_err(gr_t[:, jt], gr_s[:, j]) < 1e-9, n
    # same bone lengths here, so positions follow too
    assert np.allclose(gp_t[:, target.names.index("LeftToeBase")], gp_s[:, clip.skeleton.names.index("LeftToe")])
    # and mapping onto the renamed same skeleton is the identity on rotations
    back = naming.map_motion(clip, naming.map_names(clip.skeleton, "smpl"))
    assert rot_err(back.rotations, clip.rotations) < 1e-9


def test_rest_pose_mismatch_names_joints_and_angles(clip):
    sk = clip.skeleton.copy()
    # arms hanging down instead of out to the side
    for n in ("LeftForeArm", "LeftHand"):
        j = sk.names.index(n)
        sk.offsets[j] = [0.0, -np.linalg.norm(sk.offsets[j]), 0.0]
    ang = naming.rest_pose_angles(clip.skeleton, sk)
    assert ang["left_elbow"] == pytest.approx(90, abs=1) and ang["left_knee"] == pytest.approx(0, abs=1e-6)
    with pytest.raises(SkeletonError, match=r"rest poses differ: .*left_(elbow|wrist) 90 deg"):
        naming.map_motion(clip, sk)
    assert naming.check_rest_pose(clip.skeleton, sk, tolerance_deg=95)["left_elbow"] == pytest.approx(90, abs=1)


@needs_shared
def test_conventions_of_the_shared_clips():
    for folder, conv in [
        ("lafan1", "lafan1"),
        ("bandai_namco", "bandai"),
        ("cmu_cgspeed_mb", "cmu"),
        ("cmu_cgspeed_max", "cmu_max"),
    ]:
        sk = bvh.load(sorted((MOCAP / folder).glob("*.bvh"))[0]).frames(0, 1).skeleton
        assert naming.detect(sk) == conv, folder
        assert len(naming.canonical(sk)) == sk.num_joints, folder


@needs_shared
def test_both_cmu_namings_map_onto_each_other():
    mx = bvh.load(MOCAP / "cmu_cgspeed_max" / "131_01.bvh").frames(0, 1).skeleton
    mb = bvh.load(MOCAP / "cmu_cgspeed_mb" / "01_01.bvh").frames(0, 1).skeleton
    renamed = naming.map_names(mx, "cmu")
    assert renamed.names == mb.names and renamed.fingerprint() == mb.fingerprint()
    # but the two releases rest in different poses (arms down vs. a T-pose): the check says so
    with pytest.raises(SkeletonError, match="left_elbow 90 deg"):
        naming.check_rest_pose(mx, mb)


@needs_shared
def test_real_clip_onto_another_convention_and_an_incompatible_one():
    sfu = bvh.load(MOCAP / "sfu" / "0005_Jogging001.bvh").frames(0, 2).skeleton
    perf = bvh.load(MOCAP / "perfume" / "A_test.bvh").frames(0, 200)
    with pytest.warns(UserWarning, match="without a counterpart"):
        mapped = naming.map_motion(perf, sfu)
    gr_s, _ = forward_kinematics(perf)
    gr_t, _ = forward_kinematics(mapped)
    pairs = naming._pairs(sfu, perf.skeleton)
    for c, (jt, js) in pairs.items():
        assert rot_err(gr_t[:, jt], gr_s[:, js]) < 1e-9, c
    lafan = bvh.load(MOCAP / "lafan1" / "walk4_subject1.bvh").frames(0, 10)
    with pytest.raises(SkeletonError, match=r"rest poses differ.*right_(elbow|shoulder|wrist) 180 deg"):
        naming.map_motion(lafan, sfu)


def test_rename_command(tmp_path, clip, clips):
    bvh.save(tmp_path / "clip.bvh", clip)
    r = CliRunner()
    res = r.invoke(main, ["rename", str(tmp_path / "clip.bvh"), "--to", "smpl", "-o", str(tmp_path / "smpl.bvh")])
    assert res.exit_code == 0, res.output
    assert bvh.load(tmp_path / "smpl.bvh").skeleton.names == naming.map_names(clip.skeleton, "smpl").names
    # limits fitted on the original apply to a clip of another convention once mapped onto them
    lim = JointLimits.fit(clip)
    lim.save(tmp_path / "lim.json")
    over = clips[1].frames(0, 200)
    other = Motion(naming.map_names(over.skeleton, "cmu"), over.rotations, over.positions, over.frame_time)
    bvh.save(tmp_path / "other.bvh", other)
    res = r.invoke(main, ["report", str(tmp_path / "lim.json"), str(tmp_path / "other.bvh")])
    assert res.exit_code == 2 and "another skeleton" in res.output
    res = r.invoke(
        main,
        ["rename", str(tmp_path / "other.bvh"), "--to", str(tmp_path / "lim.json"), "-o", str(tmp_path / "mapped.bvh")],
    )
    assert res.exit_code == 0, res.output
    res = r.invoke(main, ["report", str(tmp_path / "lim.json"), str(tmp_path / "mapped.bvh"), "--json"])
    assert res.exit_code == 0, res.output
    rows = {row["joint"]: row for row in json.loads(res.output)["joints"]}
    direct = {row["joint"]: row for row in lim.report(over)}
    assert rows.keys() == direct.keys()
    for k in rows:
        assert rows[k]["frames_outside"] == direct[k]["frames_outside"], k
    # an incompatible rest pose: one line, exit 2, nothing written
    bent = clip.skeleton.copy()
    j = bent.names.index("RightForeArm")
    bent.offsets[j] = -bent.offsets[j]
    bvh.save(
        tmp_path / "bent.bvh",
        Motion(bent, clip.rotations, np.broadcast_to(bent.offsets, clip.positions.shape), clip.frame_time),
    )
    res = r.invoke(
        main, ["rename", str(tmp_path / "bent.bvh"), "--to", str(tmp_path / "lim.json"), "-o", str(tmp_path / "no.bvh")]
    )
    assert res.exit_code == 2 and "rest poses differ" in res.output and "right_elbow 180 deg" in res.output
    assert not (tmp_path / "no.bvh").exists()
    res = r.invoke(main, ["rename", str(tmp_path / "clip.bvh"), "--to", "nothing", "-o", str(tmp_path / "n.bvh")])
    assert res.exit_code == 2 and "not a convention" in res.output


# --------------------------------------------------------------------------- body-part roles
def test_roles_find_body_parts_across_conventions():
    from jointlimits.motion.naming import find_role, is_role, side_of

    names = [
        "Hips",
        "LeftUpLeg",
        "LeftLeg",
        "LeftFoot",
        "LeftToeBase",
        "Foot_R",
        "Toes_R",
        "lFoot",
        "L_Wrist_End",
        "LeftHandThumb",
        "rHand",
        "Head",
        "HeadTop_End",
    ]
    # the ankle joint: foot/ankle names that are not toes, end markers or fingers
    assert [names[j] for j in find_role(names, "foot", exclude=("toe", "end", "finger"))] == [
        "LeftFoot",
        "Foot_R",
        "lFoot",
    ]
    assert [names[j] for j in find_role(names, "toe")] == ["LeftToeBase", "Toes_R"]
    assert [names[j] for j in find_role(names, "hand", side="right")] == ["rHand"]
    assert [names[j] for j in find_role(names, "head", exclude=("end",))] == ["Head"]
    assert [side_of(n) for n in ("LeftArm", "l_hand", "hand_R", "lFoot", "Head", "RightToe")] == [
        "left",
        "left",
        "right",
        "left",
        "",
        "right",
    ]
    assert is_role("LeftForeArm", "forearm") and not is_role("LeftForeArm", "upper_arm")
    assert is_role("LeftArm", "upper_arm") and is_role("RightUpLeg", "thigh") and is_role("RightLeg", "shin")
    assert not is_role("RightUpLeg", "shin")


def test_unknown_role_is_an_error():
    from jointlimits.motion.naming import find_role

    with pytest.raises(SkeletonError, match="unknown body-part role"):
        find_role(["Hips"], "tail")


# one clip per skeleton of ../shared (8 conventions; Adelaide has two skeletons)
SKELETONS = [
    "lafan1/push1_subject2.bvh",
    "bandai_namco/dataset-1_walk-back_normal_001.bvh",
    "cmu_cgspeed_mb/cmu_12_01_walk.bvh",
    "cmu_cgspeed_max/131_01.bvh",
    "cmu_secondlife/60_05_scaled.bvh",
    "sfu/0005_Jogging001.bvh",
    "perfume/A_test.bvh",
    "adelaide/louise.bvh",
    "adelaide/milad.bvh",
]


def _skeleton(name: str) -> Skeleton:
    """The skeleton of a shared clip (its header and first frame only)."""
    with open(MOCAP / name, "rb") as fh:
        head = b""
        while b"Frame Time" not in head:
            head += fh.readline()
        head += fh.readline()
    text = head.decode().replace("\r\n", "\n")
    text = text[: text.index("Frames:")] + "Frames: 1\n" + text[text.index("Frame Time") :]
    return bvh.loads(text).skeleton


@needs_shared
@pytest.mark.parametrize("name", SKELETONS)
def test_body_roles_from_the_topology_on_every_shared_convention(name):
    sk = _skeleton(name)
    roles = naming.body_roles(sk)
    assert roles is not None
    for side in ("left", "right"):
        for role in ("clavicle", "upper_arm", "forearm", "hand", "thigh", "shin", "foot"):
            hits = naming.find_role(sk, role, side=side)
            assert len(hits) == 1, (role, side, [sk.names[j] for j in hits])
        # one limb: each part is the parent of the next
        ch = [naming.find_role(sk, r, side=side)[0] for r in ("clavicle", "upper_arm", "forearm", "hand")]
        assert all(sk.parents[b] == a for a, b in zip(ch, ch[1:]))
        ch = [naming.find_role(sk, r, side=side)[0] for r in ("thigh", "shin", "foot")]
        assert all(sk.parents[b] == a for a, b in zip(ch, ch[1:]))
    assert len(naming.find_role(sk, "head")) == 1 and naming.find_role(sk, "spine")
    from jointlimits.limits.coupled import humanoid_pairs

    assert len(humanoid_pairs(sk)) >= 8


def test_sides_need_a_capital_after_a_one_letter_prefix():
    from jointlimits.motion.naming import side_of

    assert [side_of(n) for n in ("lowerneck", "LHipJoint", "lCollar", "rShldr", "rhand", "Shoulder_L")] == [
        "",
        "left",
        "left",
        "right",
        "",
        "left",
    ]

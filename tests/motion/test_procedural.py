"""The built-in humanoid and the procedural range-of-motion clip."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.errors import JointLimitsError, SkeletonError
from jointlimits.io import bvh
from jointlimits.limits.model import JointLimits
from jointlimits.motion import quat
from jointlimits.motion.procedural import (
    ANATOMICAL_RANGES,
    HUMANOID_JOINTS,
    MOTION_AXES,
    describe_ranges,
    humanoid_skeleton,
    joint_ranges,
    over_rotate,
    range_of_motion,
)
from jointlimits.motion.skeleton import Motion, end_site_positions, forward_kinematics

BIG = ["LeftArm", "RightArm", "LeftForeArm", "RightForeArm", "LeftUpLeg", "RightUpLeg", "LeftLeg", "RightLeg"]


@pytest.fixture(scope="module")
def clip() -> Motion:
    return range_of_motion(seconds=20.0, seed=3)


def test_skeleton_layout():
    sk = humanoid_skeleton()
    assert sk.names == list(HUMANOID_JOINTS) and sk.num_joints == 22
    assert sk.channels[0] == ["Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"]
    assert all(c == ["Zrotation", "Yrotation", "Xrotation"] for c in sk.channels[1:])
    assert sorted(sk.names[p] for p, _ in sk.end_sites) == ["Head", "LeftHand", "LeftToe", "RightHand", "RightToe"]
    assert sk.names[sk.parents[sk.index("LeftArm")]] == "LeftShoulder"
    assert sk.names[sk.parents[sk.index("RightShoulder")]] == "Spine2"
    assert sk.names[sk.parents[sk.index("RightUpLeg")]] == "Hips"
    # T-pose: arms along +/-X (left is +X), legs down, feet forward, about 1.75 m tall in cm
    m = Motion.rest(sk)
    _, gp = forward_kinematics(m)
    ends = end_site_positions(m)[0]
    p = dict(zip(sk.names, gp[0]))
    assert p["LeftHand"][0] > p["LeftForeArm"][0] > p["LeftArm"][0] > 0 > p["RightArm"][0]
    assert abs(p["LeftHand"][1] - p["LeftArm"][1]) < 1e-9
    assert p["LeftFoot"][1] < p["LeftLeg"][1] < p["LeftUpLeg"][1]
    assert p["LeftToe"][2] > p["LeftFoot"][2]
    height = ends[:, 1].max() - min(ends[:, 1].min(), gp[0, :, 1].min())
    assert height == pytest.approx(175.0, rel=0.01)
    assert np.allclose(humanoid_skeleton(1.75, "m").offsets * 100.0, sk.offsets)
    assert np.allclose(humanoid_skeleton(2.0).offsets, sk.offsets * 2.0 / 1.75)


@pytest.mark.parametrize("bad", [dict(units="furlong"), dict(height=0.0), dict(height=float("nan"))])
def test_skeleton_bad_input(bad):
    with pytest.raises(SkeletonError):
        humanoid_skeleton(**bad)


def test_range_table_is_complete_and_mirrored():
    for base, motions in ANATOMICAL_RANGES.items():
        assert set(motions) == set(MOTION_AXES[base]), base
        assert all(v >= 0 for v in motions.values())
    r = joint_ranges()
    assert set(r) == set(HUMANOID_JOINTS)
    for name in HUMANOID_JOINTS:
        if name.startswith("Left"):
            left, right = r[name], r["Right" + name[4:]]
            assert np.allclose(right[0], left[0])  # rotations about X keep their sign
            assert np.allclose(right[1:], -left[1:, ::-1])  # about Y and Z they flip
    # a few literature values, in the skeleton's frame
    assert np.allclose(r["LeftLeg"][0], [0.0, 135.0])  # knee flexion
    assert np.allclose(r["LeftUpLeg"][0], [-120.0, 30.0])  # hip flexion / extension
    assert np.allclose(r["LeftForeArm"][0], [-80.0, 80.0])  # pronation / supination
    assert np.allclose(r["LeftArm"][2], [-90.0, 90.0])  # abduction 0..180 from the side
    spine = sum(r[j][0, 1] for j in ("Spine", "Spine1", "Spine2"))
    assert spine == pytest.approx(80.0)  # trunk flexion shared by 3 segments
    wide = joint_ranges(over_rotation=0.5)
    assert np.allclose(wide["LeftLeg"][0], [-33.75, 168.75])
    assert "LeftArm" in describe_ranges()


def _pose(sk, joint: str, axis: str, degrees: float) -> np.ndarray:
    q = quat.identity((1, sk.num_joints))
    q[0, sk.index(joint)] = quat.from_angle_axis(np.radians(degrees), np.eye(3)["xyz".index(axis)])
    _, gp = forward_kinematics(Motion(sk, q, sk.offsets[None], 1 / 30))
    return gp[0]


@pytest.mark.parametrize(
    "joint,motion,child,direction",
    [
        ("LeftUpLeg", "flexion", "LeftLeg", (0, 0, 1)),  # knee comes forward
        ("RightUpLeg", "flexion", "RightLeg", (0, 0, 1)),
        ("LeftUpLeg", "abduction", "LeftLeg", (1, 0, 0)),  # left leg moves out to the left
        ("RightUpLeg", "abduction", "RightLeg", (-1, 0, 0)),
        ("LeftLeg", "flexion", "LeftFoot", (0, 0, -1)),  # foot goes back
        ("LeftForeArm", "flexion", "LeftHand", (0, 0, 1)),  # forearm comes forward
        ("RightForeArm", "flexion", "RightHand", (0, 0, 1)),
        ("LeftArm", "abduction", "LeftForeArm", (0, 1, 0)),  # arm goes up
        ("RightArm", "flexion", "RightForeArm", (0, 0, 1)),
        ("Spine", "flexion", "Spine1", (0, 0, 1)),  # trunk bends forward
        ("LeftFoot", "plantarflexion", "LeftToe", (0, -1, 0)),  # toes go down
    ],
)
def test_motion_axes_move_limbs_the_anatomical_way(joint, motion, child, direction):
    sk = humanoid_skeleton()
    base = joint.replace("Left", "").replace("Right", "")
    axis, sign, _ = MOTION_AXES[base][motion]
    if joint.startswith("Right") and axis != "x":
        sign = -sign
    rest = _pose(sk, joint, axis, 0.0)
    moved = _pose(sk, joint, axis, 30.0 * sign)
    c = sk.index(child)
    delta = moved[c] - rest[c]
    assert delta @ np.asarray(direction, float) > 0.3 * np.linalg.norm(delta)


def test_deterministic_for_a_seed():
    a, b = range_of_motion(seconds=5.0, seed=7), range_of_motion(seconds=5.0, seed=7)
    assert np.array_equal(a.rotations, b.rotations) and np.array_equal(a.positions, b.positions)
    c = range_of_motion(seconds=5.0, seed=8)
    assert not np.allclose(a.rotations, c.rotations)
    assert a.num_frames == 150 and a.frame_time == pytest.approx(1 / 30)
    o1, o2 = over_rotate(a, 0.5, seed=1), over_rotate(a, 0.5, seed=1)
    assert np.array_equal(o1.rotations, o2.rotations)


@pytest.mark.parametrize("over", [0.0, 0.5])
def test_angles_stay_within_anatomical_ranges(over):
    m = range_of_motion(seconds=20.0, seed=1, over_rotation=over)
    sk = m.skeleton
    ranges = joint_ranges(sk, over)
    stored_q, euler = m.source_euler
    assert np.array_equal(stored_q, m.rotations)
    for j, name in enumerate(sk.names):
        order = sk.rotation_order(j)
        # the stored Euler angles are the ones that made the rotations...
        assert np.allclose(quat.from_euler(euler[:, j], order, degrees=True), m.rotations[:, j], atol=1e-12)
        xyz = euler[:, j, [order.index(a) for a in "xyz"]]
        lo, hi = ranges[name][:, 0], ranges[name][:, 1]
        # ...they stay inside the joint's range and explore most of it
        assert np.all(xyz >= lo - 1e-9) and np.all(xyz <= hi + 1e-9), name
        span = xyz.max(axis=0) - xyz.min(axis=0)
        assert np.all(span >= 0.6 * (hi - lo)), (name, span, hi - lo)
    assert np.ptp(m.positions[:, 0, 0]) > 5.0  # the root moves (cm)


def test_clip_is_smooth(clip):
    step = np.degrees(quat.angle(clip.rotations[1:], clip.rotations[:-1]))
    assert step.max() < 12.0  # degrees per frame at 30 fps
    accel = np.abs(np.diff(clip.source_euler[1], 2, axis=0))
    assert accel.max() < 2.0


@pytest.mark.parametrize("shape,swing_twist", [("ellipsoid", False), ("kdop", False), ("box", True)])
def test_fitted_limits_contain_the_clip(clip, shape, swing_twist):
    lim = JointLimits.fit(clip, shape=shape, swing_twist=swing_twist)
    assert lim.contains(clip.rotations).all()


def test_bvh_round_trip_is_exact(clip, tmp_path):
    path = tmp_path / "rom.bvh"
    bvh.save(path, clip)
    back = bvh.load(path)
    assert back.skeleton.names == clip.skeleton.names
    assert np.array_equal(back.skeleton.parents, clip.skeleton.parents)
    assert np.array_equal(back.skeleton.offsets, clip.skeleton.offsets)
    assert back.skeleton.channels == clip.skeleton.channels
    assert [(p, o.tolist()) for p, o in back.skeleton.end_sites] == [
        (p, o.tolist()) for p, o in clip.skeleton.end_sites
    ]
    assert np.array_equal(back.rotations, clip.rotations)
    assert np.array_equal(back.positions, clip.positions)
    assert back.frame_time == clip.frame_time
    assert bvh.dumps(back) == path.read_text()


def test_over_rotate_leaves_the_fitted_limits(clip):
    over = over_rotate(clip, 0.5)
    assert np.array_equal(over.rotations[:, 0], clip.rotations[:, 0])  # root untouched
    assert np.array_equal(over.positions, clip.positions)
    big = [clip.skeleton.index(n) for n in BIG]
    # the k-DOP hugs the cloud: a clear majority of frames leave it on every big joint
    lim = JointLimits.fit(clip, shape="kdop")
    outside = 1.0 - lim.contains(over.rotations).mean(axis=0)
    assert outside[big].min() > 0.6, dict(zip(BIG, outside[big].round(2)))
    assert outside[1:].mean() > 0.75
    # looser shapes still lose most frames overall
    for shape, swing_twist in (("box", False), ("ellipsoid", True)):
        lim = JointLimits.fit(clip, shape=shape, swing_twist=swing_twist)
        outside = 1.0 - lim.contains(over.rotations).mean(axis=0)
        assert outside[1:].mean() > 0.6, shape
    # the over-rotated clip is the clip spread about its mean pose
    mean = quat.average(clip.rotations, axis=0)
    d0 = quat.angle(mean[None], clip.rotations)[:, 1:]
    d1 = quat.angle(mean[None], over.rotations)[:, 1:]
    assert np.median(d1 / np.maximum(d0, 1e-9)) == pytest.approx(1.5, abs=0.1)


def test_over_rotate_by_zero_is_the_same_clip(clip):
    same = over_rotate(clip, 0.0)
    assert np.allclose(same.rotations, clip.rotations, atol=1e-9)


@pytest.mark.parametrize("factor", [-0.1, float("inf"), float("nan")])
def test_over_rotate_rejects_bad_factors(clip, factor):
    with pytest.raises(JointLimitsError):
        over_rotate(clip, factor)


def test_range_of_motion_on_other_heights_and_bad_skeletons():
    m = range_of_motion(humanoid_skeleton(1.5, "m"), seconds=2.0, fps=24)
    assert m.num_frames == 48 and m.frame_time == pytest.approx(1 / 24)
    sk = humanoid_skeleton()
    sk.names[3] = "Chest"
    with pytest.raises(SkeletonError, match="Chest"):
        range_of_motion(sk, seconds=1.0)
    with pytest.raises(JointLimitsError):
        range_of_motion(seconds=0.0)


def test_default_clip_length():
    m = range_of_motion()
    over_rotate(m, 0.5)
    assert m.num_frames == 1200

"""Left/right mirroring (jointlimits.motion.mirror) and fitting limits with mirrored data."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits.errors import LimitsError, SkeletonError
from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.motion.mirror import (
    mirror_motion,
    mirror_plane,
    reflect_rotations,
    reflect_vectors,
    side_map,
    symmetry_errors,
)
from jointlimits.motion.skeleton import Motion, Skeleton, forward_kinematics

from conftest import MOCAP, SHARED_MISSING


@pytest.fixture(scope="module")
def walk() -> Motion:
    if not (MOCAP / "lafan1").is_dir():
        pytest.skip(SHARED_MISSING)
    return bvh.load(MOCAP / "lafan1" / "walk4_subject1.bvh")[:1200]


def _same_rotation(a: np.ndarray, b: np.ndarray) -> float:
    """Largest component difference between a and b, up to the sign of each quaternion."""
    return float(np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1)).max())


def _toy(names: list[str] | None = None) -> Skeleton:
    """A small symmetric body: root, spine, two arms of two bones, two legs of one (mirror plane x = 0)."""
    names = names or ["Hips", "Spine", "LeftArm", "LeftForeArm", "RightArm", "RightForeArm", "LeftUpLeg", "RightUpLeg"]
    parents = [-1, 0, 1, 2, 1, 4, 0, 0]
    offsets = [[0, 90, 0], [0, 20, 0], [15, 5, 0], [25, 0, 1], [-15, 5, 0], [-25, 0, 1], [9, -5, 0], [-9, -5, 0]]
    return Skeleton(names, parents, offsets)


def _random_motion(sk: Skeleton, frames: int = 50, seed: int = 1) -> Motion:
    rng = np.random.default_rng(seed)
    rot = quat.normalize(rng.normal(size=(frames, sk.num_joints, 4)))
    pos = np.repeat(sk.offsets[None], frames, axis=0)
    pos[:, 0] += rng.normal(scale=30.0, size=(frames, 3))
    return Motion(sk, rot, pos, 1 / 30)


# --------------------------------------------------------------------------- pairs and plane


def test_side_map_pairs_by_name_across_conventions():
    sk = _toy()
    s = side_map(sk)
    n = sk.names
    assert [n[k] for k in s] == [
        "Hips",
        "Spine",
        "RightArm",
        "RightForeArm",
        "LeftArm",
        "LeftForeArm",
        "RightUpLeg",
        "LeftUpLeg",
    ]
    assert np.array_equal(s[s], np.arange(len(s)))  # an involution
    # other spellings of the sides: Bandai's _L/_R, Second Life's lShldr, CMU's LHipJoint, dotted .L
    for left, right in (
        ("UpperArm_L", "UpperArm_R"),
        ("lShldr", "rShldr"),
        ("LHipJoint", "RHipJoint"),
        ("arm.L", "arm.R"),
        ("left_elbow", "right_elbow"),
    ):
        names = ["Hips", "Spine", left, "LeftForeArm", right, "RightForeArm", "LeftUpLeg", "RightUpLeg"]
        s = side_map(_toy(names))
        assert s[2] == 4 and s[4] == 2, (left, right, s)
    # a side marker without its counterpart stays alone
    names = ["Hips", "Spine", "LeftArm", "LeftForeArm", "Arm2", "RightForeArm", "LeftUpLeg", "RightUpLeg"]
    s = side_map(_toy(names))
    assert s[2] == 2 and s[4] == 4 and s[3] == 5


def test_mirror_plane_of_symmetric_and_turned_rigs():
    sk = _toy()
    assert np.array_equal(mirror_plane(sk), [1.0, 0.0, 0.0])
    assert symmetry_errors(sk, [1.0, 0.0, 0.0]).max() == 0.0
    # the same body turned 30 degrees about y at rest: the plane turns with it
    turn = quat.from_angle_axis(np.radians(30.0), [0.0, 1.0, 0.0])
    turned = Skeleton(sk.names, sk.parents, quat.mul_vec(turn, sk.offsets))
    n = mirror_plane(turned)
    assert abs(abs(n @ quat.mul_vec(turn, [1.0, 0.0, 0.0])) - 1.0) < 1e-12


def test_asymmetric_skeleton_raises_with_worst_joint():
    sk = _toy()
    sk.offsets[3] = [29.0, 0.0, 1.0]  # the left forearm 4 units longer than the right one
    with pytest.raises(SkeletonError, match=r"LeftForeArm.*4 .*RightForeArm"):
        mirror_plane(sk)
    mirror_plane(sk, tolerance=0.05)  # within a looser tolerance
    sk = _toy()
    sk.offsets[1] = [6.0, 20.0, 0.0]  # the spine leaves the plane
    with pytest.raises(SkeletonError, match=r"'Spine'.*leaves the mirror plane by 6"):
        mirror_plane(sk)
    with pytest.raises(SkeletonError, match="cannot mirror"):
        mirror_motion(_random_motion(sk))
    with pytest.raises(SkeletonError, match="no left/right joint pairs"):
        mirror_plane(Skeleton(["a", "b", "c"], [-1, 0, 1], np.ones((3, 3))))
    # counterparts whose parents are not counterparts
    sk = _toy()
    sk = Skeleton(sk.names, [-1, 0, 1, 2, 1, 1, 0, 0], sk.offsets)  # RightForeArm hangs off the spine
    with pytest.raises(SkeletonError, match="parents"):
        mirror_plane(sk)


@pytest.mark.skipif(not (MOCAP / "bandai_namco").is_dir(), reason=SHARED_MISSING)
def test_real_rig_with_unmirrored_rest_frames_raises():
    # Bandai's rest pose points the right limbs' bones along -x of frames that the left limbs
    # have along +x: not mirror images, so local rotations cannot be swapped
    m = bvh.load(MOCAP / "bandai_namco" / "dataset-1_bow_normal_001.bvh")
    with pytest.raises(SkeletonError, match="not left/right symmetric"):
        mirror_plane(m.skeleton)


# --------------------------------------------------------------------------- motions


def test_reflections_are_involutions():
    rng = np.random.default_rng(3)
    n = quat.normalize(rng.normal(size=4))[1:]
    n /= np.linalg.norm(n)
    q = quat.normalize(rng.normal(size=(100, 4)))
    v = rng.normal(size=(100, 3))
    assert np.allclose(reflect_rotations(reflect_rotations(q, n), n), q, atol=1e-15)
    assert np.allclose(reflect_vectors(reflect_vectors(v, n), n), v, atol=1e-13)
    # M R M applied to a reflected vector is the reflection of the rotated vector
    m = reflect_rotations(q, n)
    assert np.allclose(quat.mul_vec(m, reflect_vectors(v, n)), reflect_vectors(quat.mul_vec(q, v), n), atol=1e-12)


def test_mirror_twice_gives_the_motion_back_toy():
    sk = _toy()
    turn = quat.from_angle_axis(np.radians(37.0), [0.2, 1.0, 0.1])
    turned = Skeleton(sk.names, sk.parents, quat.mul_vec(turn, sk.offsets))  # a plane off the axes
    for s in (sk, turned):
        m = _random_motion(s)
        back = mirror_motion(mirror_motion(m))
        assert _same_rotation(back.rotations, m.rotations) < 1e-9
        assert np.abs(back.positions - m.positions).max() < 1e-9
        assert back.frame_time == m.frame_time and back.skeleton is m.skeleton


def test_mirrored_fk_is_the_reflected_fk_toy():
    sk = _toy()
    m = _random_motion(sk)
    mm = mirror_motion(m)
    s = side_map(sk)
    gr, gp = forward_kinematics(m)
    mgr, mgp = forward_kinematics(mm)
    n = np.array([1.0, 0.0, 0.0])
    assert np.abs(mgp[:, s] - reflect_vectors(gp, n)).max() < 1e-9
    assert _same_rotation(mgr[:, s], reflect_rotations(gr, n)) < 1e-12
    # not the identity: the left arm really took the right arm's motion
    assert np.abs(mm.rotations[:, 2] - m.rotations[:, 2]).max() > 0.1


def test_mirror_on_real_clip(walk):
    sk = walk.skeleton
    n = mirror_plane(sk)
    assert np.array_equal(n, [0.0, 0.0, 1.0])  # LAFAN1: left and right lie apart along z at rest
    s = side_map(sk)
    assert sk.names[s[sk.index("LeftArm")]] == "RightArm" and sk.names[s[sk.index("Spine1")]] == "Spine1"
    mm = mirror_motion(walk)
    # twice is the motion again
    back = mirror_motion(mm)
    assert _same_rotation(back.rotations, walk.rotations) < 1e-9
    assert np.abs(back.positions - walk.positions).max() < 1e-9
    # the mirrored joints are where the original's counterparts are, reflected (up to the rig's
    # asymmetry: its offsets are mirror images to about 1e-3 cm)
    gr, gp = forward_kinematics(walk)
    mgr, mgp = forward_kinematics(mm)
    assert np.abs(mgp[:, s] - reflect_vectors(gp, n)).max() < 0.02
    assert _same_rotation(mgr[:, s], reflect_rotations(gr, n)) < 1e-12
    # heights stay, the sideways coordinate flips
    assert np.allclose(mgp[:, 0, 1], gp[:, 0, 1]) and np.allclose(mgp[:, 0, 2], -gp[:, 0, 2])
    # joints without position channels keep the skeleton's offsets
    assert np.array_equal(mm.positions[:, 1:], np.broadcast_to(sk.offsets[1:], mm.positions[:, 1:].shape))
    assert mm.source_text is None and mm.source_euler is None


def test_mirror_motion_rejects_a_bad_normal(walk):
    with pytest.raises(SkeletonError, match="unit"):
        mirror_motion(walk[:5], normal=[0.0, 0.0, 2.0])


# --------------------------------------------------------------------------- fitting with mirrored data


@pytest.mark.parametrize("shape,swing_twist", [("kdop", False), ("implicit", False), ("box", True)])
def test_fit_with_mirror_learns_the_other_side(walk, shape, swing_twist):
    clip = walk[:600]
    mirrored = mirror_motion(clip)
    pad = 0.05 if swing_twist else 0.0  # (swing-twist at padding 0 leaves a few training frames out)
    plain = JointLimits.fit(clip, shape=shape, padding=pad, swing_twist=swing_twist)
    both = JointLimits.fit(clip, shape=shape, padding=pad, swing_twist=swing_twist, mirror=True)
    assert plain.settings["mirror"] is False and both.settings["mirror"] is True
    assert both.settings["clips"] == 1 and both.settings["frames"] == 600
    arms = [clip.skeleton.index(n) for n in ("LeftArm", "RightArm", "LeftUpLeg", "RightUpLeg")]
    # the mirrored clip's arm and leg poses: inside the mirror-fitted limits, outside the plain
    # ones for part of the frames
    inside = both.contains(mirrored.rotations, tolerance=1e-6)
    assert inside[:, arms].mean() > 0.999
    assert both.contains(clip.rotations, tolerance=1e-6)[:, arms].mean() > 0.999
    assert plain.contains(mirrored.rotations, tolerance=1e-6)[:, arms].mean() < 0.99


def test_fit_mirror_is_symmetric_and_saved(walk, tmp_path):
    clip = walk[:600]
    lim = JointLimits.fit(clip, shape="kdop", mirror=True)
    # the same limits as fitting the clip and its mirror image as two clips
    other = JointLimits.fit([clip, mirror_motion(clip)], shape="kdop")
    rng = np.random.default_rng(5)
    probe = quat.normalize(clip.rotations[::3] + rng.normal(scale=0.1, size=clip.rotations[::3].shape))
    assert np.array_equal(lim.contains(probe), other.contains(probe))
    assert np.array_equal(lim.project(probe), other.project(probe))
    assert not np.array_equal(lim.contains(probe), JointLimits.fit(clip, shape="kdop").contains(probe))
    path = tmp_path / "m.json"
    lim.save(path)
    assert JointLimits.load(path).settings["mirror"] is True
    assert JointLimits.fit(clip, shape="box").settings["mirror"] is False  # the default is unchanged


def test_fit_mirror_refuses_an_asymmetric_skeleton(walk):
    sk = walk.skeleton.copy()
    sk.offsets[sk.index("LeftForeArm")] *= 1.3
    m = Motion(sk, walk.rotations[:50], walk.positions[:50].copy(), walk.frame_time)
    m.positions[:, sk.index("LeftForeArm")] = sk.offsets[sk.index("LeftForeArm")]
    with pytest.raises(LimitsError, match=r"mirror: .*not left/right symmetric.*ForeArm"):
        JointLimits.fit(m, shape="box", mirror=True)
    JointLimits.fit(m, shape="box")  # without mirroring it fits

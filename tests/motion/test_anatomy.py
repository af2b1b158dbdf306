"""The canonical humanoid: segments and anatomical rotations on any rig."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.errors import SkeletonError
from jointlimits.motion import quat
from jointlimits.motion.anatomy import SEGMENTS, anatomical_angles, anatomical_rotations, anatomy
from jointlimits.motion.naming import map_names
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion
from jointlimits.motion.skeleton import Motion, Skeleton


def test_procedural_humanoid_has_every_segment():
    body = anatomy(humanoid_skeleton())
    assert list(body.segments) == list(SEGMENTS)
    names = humanoid_skeleton().names
    assert [names[j] for j in body.segments["spine"].joints] == ["Spine", "Spine1", "Spine2"]
    assert [names[j] for j in body.segments["left_forearm"].joints] == ["LeftForeArm"]


def test_other_conventions_map_to_the_same_segments():
    sk = humanoid_skeleton()
    for conv in ("mixamo", "smpl", "bandai"):
        other = map_names(sk, conv)
        assert list(anatomy(other).segments) == list(anatomy(sk).segments), conv


def test_heading_does_not_change_anatomical_rotations():
    m = range_of_motion(seconds=2.0)
    a = anatomical_rotations(m, anatomy(m.skeleton, m))
    turned = m.rotations.copy()
    turned[:, 0] = quat.mul(quat.from_angle_axis(1.1, [0.0, 1.0, 0.0]), turned[:, 0])
    m2 = Motion(m.skeleton, turned, m.positions, m.frame_time)
    b = anatomical_rotations(m2, anatomy(m.skeleton, m))
    for k in a:
        assert np.allclose(quat.angle(a[k], b[k]), 0.0, atol=1e-9), k


def test_rest_pose_limbs_have_no_twist_and_clip_does_not_move_frames():
    m = range_of_motion(seconds=4.0)
    body = anatomy(m.skeleton)
    rest = Motion.rest(m.skeleton, 1)
    ang = anatomical_angles(np.stack(list(anatomical_rotations(rest, body).values()))[:, 0])
    limbs = [i for i, n in enumerate(body.segments) if n not in ("spine", "neck")]
    assert np.allclose(ang[limbs, 2], 0.0, atol=1e-6)  # rotation about the bone
    assert np.abs(ang[limbs, :2]).max() > 1.0  # the rest pose is not the canonical T-pose everywhere
    other = anatomy(m.skeleton, m)  # a human-shaped rest: the clip does not change the frames
    for k, s in body.segments.items():
        assert all(np.allclose(a, b) for a, b in zip(s.frames, other.segments[k].frames))


def test_no_body_is_one_clear_error():
    sk = Skeleton(["a", "b", "c"], np.array([-1, 0, 1]), np.zeros((3, 3)) + [0, 1, 0])
    with pytest.raises(SkeletonError, match="humanoid"):
        anatomy(sk)

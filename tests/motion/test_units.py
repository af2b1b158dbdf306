"""Up axis, length unit, body height and stature: analytic answers on the built-in humanoid (any
unit, any up axis) and, per shared convention, the code's answer checked against an independent
measure (a numpy forward kinematics written here)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from jointlimits.motion import quat
from jointlimits.motion.procedural import humanoid_skeleton
from jointlimits.motion.skeleton import Motion, Skeleton
from jointlimits.motion.units import (
    UnitGuess,
    body_height,
    guess_units,
    guess_up_axis,
    stature,
)

from conftest import MOCAP, needs_shared

H = 1.75  # the built-in humanoid's height (metres): top of the head End Site 1.0 H above the toes

# a rotation of the whole body (applied at the root) taking the built-in +Y up to each axis
TO_UP = {
    "+y": quat.identity(),
    "-y": quat.from_angle_axis(np.pi, [1.0, 0, 0]),
    "+z": quat.from_angle_axis(np.pi / 2, [1.0, 0, 0]),  # y -> z
    "-z": quat.from_angle_axis(-np.pi / 2, [1.0, 0, 0]),  # y -> -z
    "+x": quat.from_angle_axis(-np.pi / 2, [0, 0, 1.0]),  # y -> x
    "-x": quat.from_angle_axis(np.pi / 2, [0, 0, 1.0]),  # y -> -x
}


def posed(sk: Skeleton, up: str = "+y", frames: int = 3) -> Motion:
    """The rest pose of ``sk`` turned as a whole so that its up direction is ``up``."""
    m = Motion.rest(sk, frames)
    r = TO_UP[up]
    m.rotations[:, 0] = r
    m.positions[:, 0] = quat.mul_vec(r, sk.offsets[0])
    return m


def test_turn_table_really_sends_y_to_the_named_axis():
    for up, r in TO_UP.items():
        want = np.zeros(3)
        want["xyz".index(up[1])] = 1.0 if up[0] == "+" else -1.0
        np.testing.assert_allclose(quat.mul_vec(r, [0, 1.0, 0]), want, atol=1e-15)


@pytest.mark.parametrize("up", sorted(TO_UP))
def test_humanoid_in_any_orientation_gives_its_up_axis_and_height(up):
    m = posed(humanoid_skeleton(H, "cm"), up)
    assert guess_up_axis(m) == up
    # rest pose: top of the head (End Site) at 1.0 H, toe tips at 0
    assert body_height(m) == pytest.approx(100 * H, abs=1e-9)
    assert stature(m) == pytest.approx(100 * H, abs=1e-9)
    assert guess_units(m) == UnitGuess("centimetres", 0.01, pytest.approx(100 * H, abs=1e-9))


def test_humanoid_in_metres_scaled_by_100_and_z_up_is_centimetres():
    sk = humanoid_skeleton(H, "m")
    big = Skeleton(sk.names, sk.parents, sk.offsets * 100, sk.channels, [(p, o * 100) for p, o in sk.end_sites])
    m = posed(big, "+z")
    assert guess_up_axis(m) == "+z"
    g = guess_units(m)
    assert (g.name, g.metres_per_unit) == ("centimetres", 0.01)
    assert g.height * g.metres_per_unit == pytest.approx(H)
    assert guess_units(posed(sk, "+z")).name == "metres"


@pytest.mark.parametrize(
    "units,name", [("m", "metres"), ("cm", "centimetres"), ("mm", "millimetres"), ("in", "inches")]
)
def test_each_unit_of_the_humanoid_is_recognised(units, name):
    m = posed(humanoid_skeleton(H, units), "-z")
    g = guess_units(m)
    assert g.name == name
    assert g.height * g.metres_per_unit == pytest.approx(H, rel=1e-6)


@pytest.mark.parametrize(
    "height,name",
    [
        (1.7, "metres"),
        (17.0, "decimetres"),
        (170.0, "centimetres"),
        (1700.0, "millimetres"),
        (67.0, "inches"),
        (30.0, "CMU/ASF units"),
        # log-space midpoints: 17 dm vs 30 CMU units is ~22.6; 67 in vs 170 cm ~106.7
        (22.0, "decimetres"),
        (23.0, "CMU/ASF units"),
        (106.0, "inches"),
        (108.0, "centimetres"),
    ],
)
def test_explicit_heights_pick_the_closest_typical_height_in_log_space(height, name):
    g = guess_units(posed(humanoid_skeleton()), height=height)
    assert g.name == name and g.height == height


@pytest.mark.parametrize("height", [0.0, -1.0, float("nan"), float("inf")])
def test_heights_without_a_size_are_unknown(height):
    g = guess_units(posed(humanoid_skeleton()), height=height)
    assert g.name == "unknown" and g.metres_per_unit == 1.0


def test_raised_arms_count_for_body_height_not_for_stature():
    sk = humanoid_skeleton(H, "cm")
    m = posed(sk, "+y")
    # arms along +/-X in the T-pose: turn both to point straight up (left about +Z, right about -Z)
    m.rotations[:, sk.index("LeftArm")] = quat.from_angle_axis(np.pi / 2, [0, 0, 1.0])
    m.rotations[:, sk.index("RightArm")] = quat.from_angle_axis(-np.pi / 2, [0, 0, 1.0])
    # finger tips: shoulder joint at 0.818 H plus arm 0.186 + forearm 0.146 + hand 0.108
    assert body_height(m) == pytest.approx(100 * H * (0.818 + 0.44), abs=1e-6)
    assert stature(m) == pytest.approx(100 * H, abs=1e-6)
    assert guess_up_axis(m) == "+y"


def test_stature_is_the_standing_height_of_a_clip_lying_most_of_the_time():
    sk = humanoid_skeleton(H, "cm")
    m = posed(sk, "+y", frames=100)
    lying = np.arange(100) % 10 != 0  # standing one frame in ten
    m.rotations[lying, 0] = quat.from_angle_axis(np.pi / 2, [1.0, 0, 0])  # on its back, head along +Z
    m.positions[lying, 0] = [0.0, 10.0, 0.0]
    assert stature(m, up="+y") == pytest.approx(100 * H, abs=1e-6)
    # the median frame lies down: body_height is the thickness of a lying body, far below stature
    assert body_height(m, up="+y") < 0.5 * 100 * H


def test_clip_without_frames_has_no_stature():
    m = Motion.rest(humanoid_skeleton(), 0)
    assert math.isnan(stature(m, up="+y"))


def test_without_head_and_foot_names_the_longest_extent_is_up():
    # a vertical chain of anonymous joints with a short sideways arm: 2.0 up, 0.5 across
    names = ["j0", "j1", "j2", "j3", "j4"]
    parents = [-1, 0, 1, 2, 1]
    offsets = [[0, 0, 0], [0, 0, 0.5], [0, 0, 0.75], [0, 0, 0.75], [0.5, 0, 0]]
    m = Motion.rest(Skeleton(names, parents, offsets), 2)
    assert guess_up_axis(m) == "+z"
    assert stature(m) == pytest.approx(2.0)
    assert body_height(m) == pytest.approx(2.0)
    assert guess_units(m).name == "metres"


# --------------------------------------------------------------------------- shared clips

# one clip per convention: (file, expected up axis, expected unit), as the shared README
# documents each convention (all Y-up; cm, CMU/ASF units, inches, rescaled metres)
CONVENTIONS = {
    "adelaide": ("louise.bvh", "+y", "centimetres"),
    "bandai_namco": ("dataset-1_walk-back_normal_001.bvh", "+y", "centimetres"),
    "cmu_cgspeed_max": ("131_01.bvh", "+y", "CMU/ASF units"),
    "cmu_cgspeed_mb": ("cmu_12_01_walk.bvh", "+y", "CMU/ASF units"),
    "cmu_secondlife": ("61_05_scaled.bvh", "+y", "metres"),
    "lafan1": ("push1_subject2.bvh", "+y", "centimetres"),
    "perfume": ("B_test.bvh", "+y", "centimetres"),
    "sfu": ("0005_JumpRope001.bvh", "+y", "inches"),
}


@functools.cache
def _clip(convention: str) -> Motion:
    from jointlimits.io import bvh

    return bvh.load(MOCAP / convention / CONVENTIONS[convention][0])


def _numpy_fk_positions(m: Motion) -> np.ndarray:
    """Global joint positions by a plain loop over joints (parents first)."""
    F, J = m.num_frames, m.num_joints
    gr, gp = np.empty((F, J, 4)), np.empty((F, J, 3))
    for j, p in enumerate(m.skeleton.parents):
        if p < 0:
            gr[:, j], gp[:, j] = m.rotations[:, j], m.positions[:, j]
        else:
            gr[:, j] = quat.mul(gr[:, p], m.rotations[:, j])
            gp[:, j] = gp[:, p] + quat.mul_vec(gr[:, p], m.positions[:, j])
    return gp


def _head_over_feet(m: Motion) -> np.ndarray:
    """Per frame, the head joint minus the lowest foot-like joint (by height along the clip's up):
    independent of units.py (its own names, its own FK, no End Sites)."""
    names = [n.lower() for n in m.skeleton.names]
    head = next(j for j, n in enumerate(names) if n in ("head", "head_end"))
    feet = [j for j, n in enumerate(names) if any(k in n for k in ("foot", "toe", "ankle"))]
    gp = _numpy_fk_positions(m)
    low = np.argmin(gp[:, feet, 1], axis=1)  # every convention here is Y-up (see the README)
    return gp[:, head] - gp[np.arange(len(gp)), np.asarray(feet)[low]]


@needs_shared
@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_shared_clip_up_axis_and_unit_match_the_convention(convention):
    _, up, unit = CONVENTIONS[convention]
    m = _clip(convention)
    assert guess_up_axis(m) == up
    g = guess_units(m)
    assert g.name == unit
    # independently: over 60 frames spread over the clip, the head is above the feet along +Y
    # (the largest component) and the standing head height in metres is a person's (the Second
    # Life avatar is a small one, ~1.1 m)
    d = _head_over_feet(m[:: max(1, m.num_frames // 60)])
    assert np.argmax(np.abs(np.median(d, axis=0))) == 1 and np.median(d[:, 1]) > 0
    head_m = np.percentile(d[:, 1], 90) * g.metres_per_unit
    assert 1.0 < head_m < 1.9
    # stature (head End Sites and feet End Sites included) is the same height, a little more
    s = stature(m)
    assert 0.95 * np.percentile(d[:, 1], 90) < s < 1.25 * np.percentile(d[:, 1], 90)

"""Whole poses through the compiled PoseLimits of JointLimits: the same results as joint by joint,
new limits for every change (the joint table is read-only), and apply's single pass that limits
and measures at once."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits.errors import LimitsError
from jointlimits.limits.model import FittedLimit, fit_shape
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Skeleton

J = 6


def _skeleton() -> Skeleton:
    return Skeleton(
        names=[f"j{k}" for k in range(J)],
        parents=np.array([-1, 0, 1, 2, 1, 4]),
        offsets=np.tile([0.0, 1.0, 0.0], (J, 1)),
    )


def _limit(kind: str, seed: int, swing_twist: bool = False) -> FittedLimit:
    rng = np.random.default_rng(seed)
    cloud = rng.normal(0, 0.4, (500, 3)) * [1.0, 0.7, 0.4]
    ref = quat.normalize(rng.normal(size=4))
    axis = np.array([0.0, 1.0, 0.0])
    if swing_twist:
        along = (cloud @ axis)[:, None] * axis
        return FittedLimit(ref, axis, swing=fit_shape(cloud - along, kind), twist=fit_shape(along, kind))
    return FittedLimit(ref, axis, shape=fit_shape(cloud, kind))


@pytest.fixture
def limits() -> JointLimits:
    joints = {
        1: _limit("box", 1),
        2: _limit("ellipsoid", 2, True),
        3: _limit("kdop", 3),
        5: _limit("oriented-box", 5, True),
    }
    return JointLimits(_skeleton(), joints)


def _one_by_one(lim: JointLimits, q: np.ndarray, soften) -> np.ndarray:
    out = q.copy()
    for j in lim.active():
        out[..., j, :] = lim.joints[j].project(q[..., j, :], soften)
    return out


@pytest.mark.parametrize("soften", [None, (1.0, 0.1)])
def test_pose_equals_joint_by_joint(limits, soften):
    q = quat.normalize(np.random.default_rng(0).normal(size=(50, J, 4)))
    got = limits.project(q, soften)
    np.testing.assert_array_equal(got, _one_by_one(limits, q, soften))
    np.testing.assert_array_equal(limits.project(q[7], soften), got[7])  # one pose [J, 4]
    assert np.array_equal(got[:, [0, 4]], q[:, [0, 4]])  # joints without a limit untouched
    v = limits.violation(q)
    for j in limits.active():
        np.testing.assert_allclose(v[:, j], limits.joints[j].violation(q[:, j]), atol=0)
    assert np.all(v[:, [0, 4]] == 0.0)
    np.testing.assert_array_equal(limits.contains(q, 1e-6), v <= 1e-6)


def test_changes_make_new_limits(limits):
    q = quat.normalize(np.random.default_rng(1).normal(size=(20, J, 4)))
    before = limits.project(q)
    off = limits.with_enabled(["j1"], False)
    assert np.array_equal(off.project(q)[:, 1], q[:, 1])
    np.testing.assert_array_equal(off.with_enabled(["j1"]).project(q), before)
    np.testing.assert_array_equal(limits.project(q), before)  # the original is unchanged
    new = _limit("ellipsoid", 9)
    swapped = limits.with_limit("j4", new)
    np.testing.assert_array_equal(swapped.project(q)[:, 4], new.project(q[:, 4]))
    assert np.array_equal(limits.with_limit("j4", None).project(q)[:, 4], q[:, 4])
    np.testing.assert_array_equal(limits.project(q), before)


def test_the_joint_table_is_read_only(limits):
    with pytest.raises(TypeError):
        limits.joints[4] = _limit("kdop", 10)  # type: ignore[index]
    with pytest.raises(TypeError):
        del limits.joints[4]  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        limits.enabled[3] = False


def test_pose_errors(limits):
    with pytest.raises(LimitsError, match="NaN or infinite"):
        limits.project(np.full((2, J, 4), np.nan))
    with pytest.raises(LimitsError, match=r"\[\.\.\., 6, 4\]"):
        limits.project(np.ones((2, J + 1, 4)))
    with pytest.raises(LimitsError):
        limits.project(quat.normalize(np.ones((J, 4))), soften=(1.0, -1.0))


def _motion(frames: int, seed: int):
    from jointlimits.motion.skeleton import Motion

    q = quat.normalize(np.random.default_rng(seed).normal(size=(frames, J, 4)))
    return Motion(_skeleton(), q, np.zeros((frames, J, 3)), 1 / 30)


@pytest.mark.parametrize("frames", [1, 3, 4, 57])
@pytest.mark.parametrize("soften", [None, (1.0, 0.1), (2.0, 0.3)])
def test_apply_and_measure_is_apply_and_violation_in_one_pass(limits, frames, soften):
    # a reach-window joint (no compiled pose form) rides along: its violation comes from its own limit
    from jointlimits.limits.reach import ReachWindowLimit

    m = _motion(frames, 7)
    rng = np.random.default_rng(8)
    reach = ReachWindowLimit.fit(quat.normalize(rng.normal([1, 0, 0, 0], 0.3, (300, 4))), np.array([0.0, 1, 0]))
    for lim in (limits, limits.with_limit("j4", reach)):
        out, v = lim.apply_and_measure(m, soften=soften, root=True)
        np.testing.assert_array_equal(out.rotations, lim.apply(m, soften=soften, root=True).rotations)
        np.testing.assert_array_equal(v, lim.violation(m.rotations))
        assert v[:, lim.active()].max() > 0.1  # random rotations: far outside somewhere


def test_the_pose_pass_writes_the_unsoftened_result_beside_the_limited(limits):
    core, fast, _ = limits._pose_core()
    for frames in (1, 3, 4, 40):
        q = quat.normalize(np.random.default_rng(frames).normal(size=(frames, J, 4)))
        soft, hard = np.empty_like(q), np.empty_like(q)
        assert core.project(q, True, 1.0, 0.1, soft, hard)
        np.testing.assert_array_equal(soft, limits.project(q, (1.0, 0.1)))
        np.testing.assert_array_equal(hard, limits.project(q))
        assert not np.array_equal(soft, hard)
    with pytest.raises(ValueError, match="its own"):
        core.project(q, True, 1.0, 0.1, soft, soft)
    with pytest.raises(ValueError, match="size of q"):
        core.project(q, True, 1.0, 0.1, soft, np.empty((1, J, 4)))


def test_apply_refuses_a_smoother_that_is_not_a_function(limits):
    with pytest.raises(LimitsError, match="smooth takes a function"):
        limits.apply(_motion(5, 1), smooth=True)  # the former boolean


def test_enabled_flags_need_one_per_joint(limits):
    with pytest.raises(LimitsError, match="one flag per joint"):
        JointLimits(_skeleton(), dict(limits.joints), enabled=[True, False])

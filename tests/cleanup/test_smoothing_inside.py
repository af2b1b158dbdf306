"""``JointLimits.apply(smooth=smooth_switches)`` ends inside the limits and adds no one-frame jump
beyond the input's local largest (the old smoothing left coupled poses outside)."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits.cleanup.smoothing import smooth_switches
from jointlimits.motion.steps import local_step_bound, rotation_steps


@pytest.mark.parametrize("shape, kw", [("implicit", {"coupled": True}), ("box", {})])
def test_smoothed_output_is_inside_and_adds_no_jump(clips, shape, kw):
    clip, wild = clips
    lim = JointLimits.fit(clip, shape=shape, **kw)
    out = lim.apply(wild, smooth=smooth_switches, root=True)
    assert lim.contains(out.rotations).all()
    bound = local_step_bound(wild.rotations, wild.frame_time, 0.25, 2.0)
    assert np.all(rotation_steps(out.rotations) <= bound + 1e-9)


def test_settle_leaves_inside_joint_frames_bit_for_bit(clips):
    clip, _ = clips
    lim = JointLimits.fit(clip, shape="ellipsoid")
    q = lim.project(clip.rotations)
    assert np.array_equal(lim.settle(q, clip.rotations, clip.frame_time), q)

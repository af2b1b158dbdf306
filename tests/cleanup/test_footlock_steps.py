"""Foot locking with the CLI's step bound adds no step beyond the input's local largest + 2 deg."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.cleanup.footlock import STEP_MARGIN_DEGREES, footlock
from jointlimits.io import bvh
from jointlimits.motion.steps import local_step_bound, rotation_steps

from conftest import MOCAP, needs_shared


@needs_shared
@pytest.mark.parametrize("clip", ["lafan1/dance1_subject1.bvh", "sfu/0005_Jogging001.bvh"])
def test_footlock_adds_no_step_beyond_the_bound(clip):
    m = bvh.load(MOCAP / clip)[:500]
    free, _ = footlock(m)
    out, _ = footlock(m, step_margin=STEP_MARGIN_DEGREES)
    bound = local_step_bound(m.rotations, m.frame_time, 0.25, 2.0)
    assert np.all(rotation_steps(out.rotations) <= bound + 1e-9)
    assert np.any(out.rotations != m.rotations)  # it still locks
    assert np.any(rotation_steps(free.rotations) > bound)  # (unbounded, this clip steps too fast)

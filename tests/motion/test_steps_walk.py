"""The bounded walks of motion.steps: the bound holds, frames far from a jump stay bit for bit."""

import numpy as np
import pytest

from jointlimits.motion import quat
from jointlimits.motion.steps import WALKERS, rotation_steps


def _target() -> np.ndarray:
    # still, a 40 degree jump at frame 20, still again
    ang = np.where(np.arange(40) < 20, 0.0, np.radians(40.0))
    return quat.from_angle_axis(ang, np.array([0.0, 0.0, 1.0]))


@pytest.mark.parametrize("name", sorted(WALKERS))
def test_walk_keeps_bound_and_far_frames(name: str) -> None:
    tq = _target()
    bound = np.full(40, np.radians(5.0))
    out = WALKERS[name](tq, bound)
    assert rotation_steps(out)[1:].max() <= np.radians(5.0) + 1e-9
    assert np.array_equal(out[:5], tq[:5]) and np.array_equal(out[-5:], tq[-5:])

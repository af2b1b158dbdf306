"""Up axis: the one parser of up-axis strings (and what it returns for the shared clips' guesses)."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.errors import FormatError, JointLimitsError
from jointlimits.motion.procedural import humanoid_skeleton
from jointlimits.motion.skeleton import Motion
from jointlimits.motion.units import UP_AXES, guess_up_axis, parse_up_axis, up_axis_index, up_vector


@pytest.mark.parametrize("text, want", [("y", "+y"), ("+y", "+y"), ("-Z", "-z"), ("  x ", "+x"), ("+z", "+z")])
def test_parse_up_axis(text, want):
    assert parse_up_axis(text) == want and want in UP_AXES


@pytest.mark.parametrize("bad", ["up", "", "w", "+yz", None])
def test_parse_up_axis_rejects(bad):
    with pytest.raises(JointLimitsError, match="up axis must be one of x, y, z"):
        parse_up_axis(bad)
    with pytest.raises(FormatError):
        parse_up_axis(bad, FormatError)


def test_index_and_vector():
    assert up_axis_index("-z") == (2, -1.0) and up_axis_index("y") == (1, 1.0)
    np.testing.assert_array_equal(up_vector("-x"), [-1.0, 0.0, 0.0])


def test_guess_is_a_parsed_axis():
    sk = humanoid_skeleton()
    m = Motion(sk, np.tile([1.0, 0.0, 0.0, 0.0], (2, sk.num_joints, 1)), np.repeat(sk.offsets[None], 2, 0), 1 / 30)
    up = guess_up_axis(m)
    assert up == "+y" and parse_up_axis(up) == up

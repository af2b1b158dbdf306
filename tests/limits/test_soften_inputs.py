"""Projection never returns NaN for finite input: softening parameters are checked, extremes work."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimits import JointLimits, LimitsError
from jointlimits.motion import procedural

_M = procedural.range_of_motion(seconds=2.0)
_OVER = procedural.over_rotate(_M, 0.5).rotations[::7]
_LIMS = {s: JointLimits.fit(_M, shape=s) for s in ("ellipsoid", "kdop")}


@pytest.mark.parametrize(
    "soften",
    [
        (float("nan"), 0.1),
        (1.0, float("nan")),
        (1.0, 1e300),
        (-1.0, 0.1),
        (1.0, -0.1),
        (float("inf"), 0.1),
        ("a", 0.1),
        (1.0,),
    ],
)
def test_bad_soften_is_a_precise_error(soften):
    with pytest.raises(LimitsError, match="soften"):
        _LIMS["ellipsoid"].project(_OVER, soften=soften)


@settings(max_examples=25, deadline=None)
@given(falloff=st.floats(0.0, 1e300), radius=st.floats(0.0, 4.0 * np.pi), shape=st.sampled_from(sorted(_LIMS)))
def test_finite_soften_gives_unit_rotations(falloff, radius, shape):
    out = _LIMS[shape].project(_OVER, soften=(falloff, radius))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-9)

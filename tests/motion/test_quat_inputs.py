"""Quaternion functions on finite input: never NaN or infinity; extreme values give the right
answer or a precise error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from jointlimits.errors import JointLimitsError, QuatError
from jointlimits.motion import quat

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
# components spanning every magnitude, tiny and huge alike
wide = st.one_of(finite, st.floats(min_value=-1e-300, max_value=1e-300), st.sampled_from([0.0, -0.0, 5e-324, 1e308]))
quats = arrays(np.float64, (3, 4), elements=wide)
vecs = arrays(np.float64, (3, 3), elements=wide)
SETTINGS = settings(max_examples=150, deadline=None)


def _finite(*xs):
    return all(np.isfinite(np.asarray(x)).all() for x in xs)


@SETTINGS
@given(quats)
def test_normalize_is_unit_and_keeps_the_direction(q):
    n = quat.normalize(q)
    assert _finite(n)
    assert np.allclose(np.linalg.norm(n, axis=-1), 1.0, atol=1e-12)
    for qi, ni in zip(q, n):
        m = np.max(np.abs(qi))
        if m > 0:  # same direction as q (compare after scaling q itself)
            s = qi / m
            assert np.allclose(ni, s / np.linalg.norm(s), atol=1e-12)
        else:
            assert ni.tolist() == [1.0, 0.0, 0.0, 0.0]


@SETTINGS
@given(quats, quats, st.floats(-2.0, 3.0))
def test_unit_quaternion_functions_stay_finite(a, b, t):
    a, b = quat.normalize(a), quat.normalize(b)
    outs = [
        quat.mul(a, b),
        quat.inv(a),
        quat.inv_mul(a, b),
        quat.mul_vec(a, np.ones(3)),
        quat.abs(a),
        quat.angle(a, b),
        quat.to_scaled_angle_axis(a),
        quat.log(a),
        quat.exp(quat.log(a)),
        quat.to_matrix(a),
        quat.from_matrix(quat.to_matrix(a)),
        quat.slerp(a, b, t),
        quat.to_euler(a, "zyx"),
        quat.average(a),
        *quat.swing_twist(a, np.array([0.0, 1.0, 0.0])),
    ]
    assert _finite(*outs)
    assert np.allclose(np.abs(quat.dot(quat.from_matrix(quat.to_matrix(a)), a)), 1.0, atol=1e-9)


@SETTINGS
@given(vecs, vecs)
def test_between_of_any_finite_vectors_is_a_unit_rotation_taking_u_to_v(u, v):
    q = quat.between(u, v)
    assert _finite(q)
    assert np.allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-12)
    for ui, vi, qi in zip(u, v, q):
        mu, mv = np.max(np.abs(ui)), np.max(np.abs(vi))
        if mu == 0 or mv == 0:
            assert qi.tolist() == [1.0, 0.0, 0.0, 0.0]  # no direction: no rotation
            continue
        du, dv = ui / mu, vi / mv
        du, dv = du / np.linalg.norm(du), dv / np.linalg.norm(dv)
        assert np.allclose(quat.mul_vec(qi, du), dv, atol=1e-9)


@SETTINGS
@given(arrays(np.float64, (3, 3), elements=st.floats(-1e300, 1e300)))
def test_scaled_angle_axis_round_trip_is_finite(v):
    q = quat.from_scaled_angle_axis(v)
    assert _finite(q)
    assert np.allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-9)
    assert _finite(quat.to_scaled_angle_axis(q))


def test_extremes_named_in_the_audit():
    assert quat.normalize([1e200, 0, 0, 0]).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert np.allclose(quat.normalize([0, 1e-320, 0, 0]), [0, 1, 0, 0])
    expected = [np.sqrt(0.5), 0, 0, np.sqrt(0.5)]
    assert np.allclose(quat.between([1e-200, 0, 0], [0, 1e-200, 0]), expected)
    assert np.allclose(quat.between([1e200, 0, 0], [0, 3e200, 0]), expected)
    assert np.allclose(quat.to_scaled_angle_axis([0, 1e200, 0, 0]), [np.pi, 0, 0])


@pytest.mark.parametrize(
    "q,msg",
    [
        ([0, 0, 0, 0], "zero length"),
        ([np.nan, 0, 0, 1], "not finite"),
        ([[1, 0, 0, 0], [0, np.inf, 0, 0]], r"quaternion \(1,\) is not finite"),
    ],
)
def test_to_euler_of_zero_or_nan_is_a_precise_error(q, msg):
    with pytest.raises(QuatError, match=msg) as ei:
        quat.to_euler(q)
    assert isinstance(ei.value, JointLimitsError) and isinstance(ei.value, ValueError)


def test_to_euler_of_scaled_quaternion_is_that_rotation():
    q = quat.from_euler([0.3, -0.2, 1.1], "zyx")
    assert np.allclose(quat.to_euler(q * 1e-200, "zyx"), [0.3, -0.2, 1.1])
    assert np.allclose(quat.to_euler(q * 1e200, "zyx"), [0.3, -0.2, 1.1])

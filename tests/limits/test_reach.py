"""Reach-window + twist limits: projection invariants, fast accept, fitting, serialisation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimits.errors import LimitsError
from jointlimits.limits.reach import ReachWindow, ReachWindowLimit
from jointlimits.motion import quat

X = np.array([1.0, 0.0, 0.0])
SQUARE = [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]


def _square_limit(twist=(-0.4, 0.6)) -> ReachWindowLimit:
    # window on the plane x = 1 with 2D axes (y, z)
    return ReachWindowLimit(quat.identity(()), X, [ReachWindow(X, SQUARE, e1=[0, 1, 0])], twist)


def _random_quats(n, seed=0):
    return quat.normalize(np.random.default_rng(seed).normal(size=(n, 4)))


@pytest.fixture(scope="module")
def fitted() -> tuple[ReachWindowLimit, np.ndarray]:
    rng = np.random.default_rng(7)
    N = 4000
    sw = rng.normal(size=(N, 3)) * [0.0, 0.5, 0.25]
    q = quat.mul(quat.from_scaled_angle_axis(sw), quat.from_angle_axis(rng.uniform(-0.5, 0.3, N), X))
    ref = quat.from_euler([0.1, -0.2, 0.3])
    q = quat.mul(ref, q)
    return ReachWindowLimit.fit(q, X, reference=ref, padding=0.05, max_vertices=10), q


def test_projection_invariants(fitted):
    lim, train = fitted
    q = np.concatenate([_random_quats(20000), train[:2000]])
    inside = lim.contains(q)
    assert 0.02 < inside.mean() < 0.98  # both sides exercised
    p = lim.project(q)
    assert np.all(lim.contains(p)), "projected rotations must be inside"
    assert np.all(lim.contains(p, tolerance=0.0))
    assert np.array_equal(p[inside], q[inside]), "inside rotations must come back unchanged"
    assert np.array_equal(lim.project(p), p), "projection must be idempotent"
    np.testing.assert_allclose(np.linalg.norm(p, axis=-1), 1.0, atol=1e-12)
    v = lim.violation(q)
    assert np.all(v[inside] == 0) and np.all(v[~inside] > 0)
    assert np.all(lim.violation(p) == 0)


def test_fast_accept_agrees_with_exact_test(fitted):
    lim, train = fitted
    q = np.concatenate([_random_quats(20000, 1), train])
    fast = lim.fast_accept(q)
    exact = lim.contains(q, tolerance=0.0)
    assert fast.sum() > 100  # the inscribed cone accepts a good share of the data
    assert not np.any(fast & ~exact), "fast accept must imply the exact test"
    # the exact test itself, without the fast path, on the fast-accepted rows
    d, _ = lim.swing_twist(q[fast])
    assert np.all(lim._swing_inside(d, 0.0))


def test_fit_contains_training_data_and_respects_max_vertices(fitted):
    lim, train = fitted
    assert lim.kind == "reach-window"
    assert np.all(lim.contains(train))
    assert all(len(w.vertices) <= 10 for w in lim.windows)
    lo, hi = lim.twist_range
    assert -0.6 < lo < -0.45 and 0.3 < hi < 0.4  # observed [-0.5, 0.3] widened by 0.05


def test_twist_clamp_and_closest_point_on_window():
    lim = _square_limit()
    # pure twist beyond tmax clamps to tmax, swing untouched
    p = lim.project(quat.from_angle_axis(np.array(1.5), X))
    d, phi = lim.swing_twist(p)
    assert phi == pytest.approx(0.6, abs=1e-9)
    np.testing.assert_allclose(d, X, atol=1e-12)
    # bone pointing at plane point (1.0, 0.2): closest point of the square is (0.5, 0.2)
    target = np.array([1.0, 1.0, 0.2])
    q = quat.between(X, target / np.linalg.norm(target))
    d, phi = lim.swing_twist(lim.project(q))
    np.testing.assert_allclose(d[1:] / d[0], [0.5, 0.2], atol=1e-8)
    assert abs(phi) < 1e-9
    # a direction behind the window (pointing backwards) still lands on the window
    back = quat.from_angle_axis(np.array(3.0), np.array([0.0, 0.0, 1.0]))
    assert lim.contains(lim.project(back))
    assert not lim.contains(back)


def test_twist_range_across_pi_and_multiple_windows():
    ref = quat.identity(())
    w1 = ReachWindow(X, SQUARE)
    w2 = ReachWindow([0.0, 1.0, 0.0], SQUARE)  # a second window around +y
    lim = ReachWindowLimit(ref, X, [w1, w2], (2.8, 3.6))  # arc through ±pi
    tw = quat.from_angle_axis(np.array([3.0, -3.0, np.pi, 0.0, 2.0]), X)
    assert lim.contains(tw).tolist() == [True, True, True, False, False]
    y = quat.mul(quat.between(X, np.array([0.0, 1.0, 0.0])), quat.from_angle_axis(np.array(3.0), X))
    assert lim.contains(y)  # +y passes through the second window
    z = quat.mul(quat.between(X, np.array([0.0, 0.0, 1.0])), quat.from_angle_axis(np.array(3.0), X))
    assert not lim.contains(z)
    pz = lim.project(z)
    assert lim.contains(pz)


def test_serialisation_round_trip(fitted):
    lim, _ = fitted
    d = lim.to_dict()
    assert d["kind"] == "reach-window"
    back = ReachWindowLimit.from_dict(d)
    q = _random_quats(3000, 3)
    np.testing.assert_allclose(back.project(q), lim.project(q), atol=1e-12)
    assert np.mean(back.contains(q) == lim.contains(q)) > 0.999
    with pytest.raises(LimitsError):
        ReachWindowLimit.from_dict({**d, "kind": "ellipsoid"})


def test_batched_shapes():
    lim = _square_limit()
    q = _random_quats(24, 4).reshape(2, 3, 4, 4)
    assert lim.project(q).shape == q.shape
    assert lim.contains(q).shape == (2, 3, 4)
    assert lim.violation(q).shape == (2, 3, 4)


def test_invalid_windows_raise():
    with pytest.raises(LimitsError, match="convex"):
        ReachWindow(X, [[0, 0], [1, 0], [0.2, 0.2], [0, 1]])
    with pytest.raises(LimitsError, match="zero area"):
        ReachWindow(X, [[0, 0], [1, 0], [2, 0]])
    with pytest.raises(LimitsError, match="unit quaternion"):
        ReachWindowLimit([2.0, 0, 0, 0], X, [])
    with pytest.raises(LimitsError, match="tmin <= tmax"):
        ReachWindowLimit(quat.identity(()), X, [], (1.0, -1.0))
    with pytest.raises(LimitsError, match="at least 3"):
        ReachWindowLimit.fit(quat.identity(2), X)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda v: np.linalg.norm(v) > 1e-3),
    st.floats(-np.pi, np.pi),
    st.floats(0.0, 2.5),
)
def test_projection_property(v, tmin, width):
    lim = _square_limit((tmin, tmin + width))
    q = quat.normalize(np.asarray(v))
    p = lim.project(q)
    assert lim.contains(p)
    assert np.array_equal(lim.project(p), p)
    if lim.contains(q, tolerance=0.0):
        assert np.array_equal(p, q)

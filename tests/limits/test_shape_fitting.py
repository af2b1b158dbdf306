"""Fitting, soften, subsample and error handling of jointlimits.limits' shape functions,
without the golden data (the projections' properties: test_shape_functions.py).

Fits enclose their clouds and are batched over leading axes; subsample equals the naive
greedy loop (hypothesis, including exact distance ties); non-finite points, empty clouds,
negative padding and invalid limits raise one clear error.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jointlimits import limits as L
from jointlimits.errors import JointLimitsError, LimitsError
from jointlimits.limits import _subsample_naive_kernel

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

coord = st.floats(-8.0, 8.0, allow_nan=False, allow_infinity=False, width=64)


# ---------------------------------------------------------------------------
# fitting
# ---------------------------------------------------------------------------


def test_fit_box_negative_cloud_keeps_true_max():
    cloud = -1.0 - np.random.default_rng(6).random((50, 3))
    lo, hi = L.fit_box(cloud, 0.05)
    np.testing.assert_allclose(hi, cloud.max(axis=0) + 0.05)
    np.testing.assert_allclose(lo, cloud.min(axis=0) - 0.05)
    assert np.all(hi < 0)


@SETTINGS
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 30), st.just(3)), elements=coord))
def test_fit_orientation_is_a_proper_principal_frame(cloud):
    pos, rot = L.fit_orientation(cloud)
    np.testing.assert_allclose(pos, cloud.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(rot.T @ rot, np.eye(3), atol=1e-12)
    assert abs(np.linalg.det(rot) - 1) < 1e-12
    d = rot.T @ np.cov(cloud.T, bias=True).reshape(3, 3) @ rot
    scale = max(np.abs(d).max(), 1e-300)
    assert np.abs(d - np.diag(np.diag(d))).max() <= 1e-9 * scale + 1e-12
    assert d[0, 0] >= d[1, 1] - 1e-9 * scale and d[1, 1] >= d[2, 2] - 1e-9 * scale
    for k in (0, 1):  # sign convention: largest-magnitude component positive
        assert rot[np.argmax(np.abs(rot[:, k])), k] > 0
    # box fitted in this frame contains the cloud
    lo, hi = L.fit_oriented_box(cloud, pos, rot, 0.0)
    assert L.contains_box(cloud, lo, hi, pos, rot, tol=1e-9).all()


def test_fit_orientation_degenerate_clouds():
    rng = np.random.default_rng(7)
    _, rot = L.fit_orientation(np.tile([0.31, -0.42, 0.57], (300, 1)))
    np.testing.assert_array_equal(rot, np.eye(3))
    a = np.array([0.3, 0.9, -0.3]) / np.linalg.norm([0.3, 0.9, -0.3])
    line = np.outer(rng.uniform(-0.6, 1.4, 200), a)
    _, rot = L.fit_orientation(line)
    assert abs(abs(rot[:, 0] @ a) - 1) < 1e-12 and abs(np.linalg.det(rot) - 1) < 1e-12
    # deterministic: same input, same output; sign flip of the data does not flip axes' convention
    _, rot2 = L.fit_orientation(line)
    np.testing.assert_array_equal(rot, rot2)
    _, rot3 = L.fit_orientation(-line)
    np.testing.assert_allclose(rot3[:, 0], rot[:, 0], atol=1e-12)


def test_fit_ellipsoid_zero_extent_and_encloses():
    line = np.c_[np.linspace(-1, 2, 50), np.zeros(50), np.zeros(50)]
    scale = L.fit_ellipsoid(line, np.zeros(3), np.eye(3), 0.0)
    np.testing.assert_array_equal(scale, [2.0, 0.0, 0.0])
    scale = L.fit_ellipsoid(np.zeros((3, 3)), np.zeros(3), np.eye(3), 0.0)
    np.testing.assert_array_equal(scale, [0.0, 0.0, 0.0])
    rng = np.random.default_rng(8)
    cloud = rng.normal(size=(400, 3)) * [1.0, 0.3, 0.1]
    pos, rot = L.fit_orientation(cloud)
    scale = L.fit_ellipsoid(cloud, pos, rot, 0.05)
    assert L.contains_ellipsoid(cloud, scale, pos, rot, tol=1e-9).all()
    np.testing.assert_array_equal(L.project_ellipsoid(cloud, scale, pos, rot), cloud)


def test_fit_kdop_encloses_and_axes():
    axes = L.kdop_axes()
    assert axes.shape == (13, 3)
    np.testing.assert_allclose(np.linalg.norm(axes, axis=1), 1.0, atol=1e-15)
    rng = np.random.default_rng(9)
    cloud = rng.normal(size=(300, 3))
    pos, rot = L.fit_orientation(cloud)
    mins, maxs = L.fit_kdop(cloud, pos, rot, axes, 0.0)
    assert L.contains_kdop(cloud, mins, maxs, pos, rot, axes, tol=1e-12).all()
    local = (cloud - pos) @ rot
    np.testing.assert_allclose(maxs, (local @ axes.T).max(axis=0), atol=1e-12)


def test_fits_are_batched_over_leading_axes():
    rng = np.random.default_rng(10)
    clouds = rng.normal(size=(2, 3, 40, 3))
    lo, hi = L.fit_box(clouds, 0.1)
    pos, rot = L.fit_orientation(clouds)
    assert lo.shape == (2, 3, 3) and rot.shape == (2, 3, 3, 3)
    olo, ohi = L.fit_oriented_box(clouds, pos, rot, 0.1)
    scale = L.fit_ellipsoid(clouds, pos, rot, 0.1)
    mins, maxs = L.fit_kdop(clouds, pos, rot, L.kdop_axes(), 0.1)
    for i in range(2):
        for j in range(3):
            c = clouds[i, j]
            p1, r1 = L.fit_orientation(c)
            np.testing.assert_allclose(rot[i, j], r1, atol=1e-12)
            np.testing.assert_allclose(lo[i, j], L.fit_box(c, 0.1)[0])
            np.testing.assert_allclose(ohi[i, j], L.fit_oriented_box(c, p1, r1, 0.1)[1], atol=1e-12)
            np.testing.assert_allclose(scale[i, j], L.fit_ellipsoid(c, p1, r1, 0.1), atol=1e-12)
            np.testing.assert_allclose(mins[i, j], L.fit_kdop(c, p1, r1, L.kdop_axes(), 0.1)[0], atol=1e-12)


# ---------------------------------------------------------------------------
# soften
# ---------------------------------------------------------------------------


def test_soften_formula():
    o = np.array([[3.0, 0, 0], [1.0, 1.0, 1.0], [0.5, 0, 0]])
    p = np.array([[1.0, 0, 0], [1.0, 1.0, 1.0 + 1e-6], [0.0, 0, 0]])
    s = L.soften(o, p, falloff=2.0, radius=0.3)
    np.testing.assert_allclose(s[0], [1.0 + np.tanh(4.0) * 0.3, 0, 0], atol=1e-15)
    np.testing.assert_array_equal(s[1], p[1])  # below eps: unchanged
    np.testing.assert_allclose(s[2], [np.tanh(1.0) * 0.3, 0, 0], atol=1e-15)
    assert s.shape == o.shape


# ---------------------------------------------------------------------------
# subsample
# ---------------------------------------------------------------------------


@SETTINGS
@given(
    hnp.arrays(np.int64, st.tuples(st.integers(0, 120), st.just(3)), elements=st.integers(-3, 3)),
    st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.5]),
    st.floats(0.01, 0.3),
)
def test_subsample_equals_naive_loop_with_exact_ties(lattice, spacing_in_d, distance):
    # lattice points at multiples of `distance` (exact ties at the threshold) plus jitter
    pts = lattice * distance + spacing_in_d * distance * np.sin(np.arange(lattice.size)).reshape(lattice.shape)
    idx = L.subsample(pts, distance)
    if len(pts):
        np.testing.assert_array_equal(idx, _subsample_naive_kernel(np.ascontiguousarray(pts), distance))
    else:
        assert idx.shape == (0,)


def test_subsample_special_thresholds_and_duplicates():
    rng = np.random.default_rng(11)
    pts = np.repeat(rng.normal(size=(50, 3)), 4, axis=0)
    np.testing.assert_array_equal(L.subsample(pts, 0.0), np.arange(200))
    idx = L.subsample(pts, 1e-9)
    np.testing.assert_array_equal(idx, np.arange(0, 200, 4))
    np.testing.assert_array_equal(L.subsample(pts, np.inf), [0])
    big = rng.normal(size=(3000, 3)) * 1e6
    np.testing.assert_array_equal(L.subsample(big, 1e-4), _subsample_naive_kernel(big, 1e-4))


def test_subsample_of_a_trajectory_matches_the_naive_loop():
    """A mocap-like trajectory (the speed against the naive loop is measured in bench_projection.py)."""
    rng = np.random.default_rng(12)
    pts = np.pi * np.tanh(np.cumsum(rng.normal(size=(5000, 3)) * 0.02, axis=0) / np.pi)
    np.testing.assert_array_equal(L.subsample(pts, 0.05), _subsample_naive_kernel(pts, 0.05))


# ---------------------------------------------------------------------------
# errors, dtypes, shapes
# ---------------------------------------------------------------------------

BOX = (np.array([-1.0, -1, -1]), np.array([1.0, 1, 1]))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(
    "fn",
    [
        lambda p: L.project_box(p, *BOX),
        lambda p: L.project_box(p, *BOX, np.zeros(3), np.eye(3)),
        lambda p: L.project_ellipsoid(p, [1, 1, 1]),
        lambda p: L.project_kdop(p, -np.ones(13), np.ones(13)),
        lambda p: L.project_kdop(p, -np.ones(13), np.ones(13), exact=True),
    ],
)
def test_projection_rejects_non_finite_points(fn, bad):
    pts = np.zeros((4, 5, 3))
    pts[2, 3, 1] = bad
    with pytest.raises(LimitsError, match=r"non-finite.*\(2, 3\)"):
        fn(pts)


@pytest.mark.parametrize(
    "fn",
    [
        lambda c: L.fit_box(c),
        lambda c: L.fit_orientation(c),
        lambda c: L.fit_oriented_box(c, np.zeros(3), np.eye(3)),
        lambda c: L.fit_ellipsoid(c, np.zeros(3), np.eye(3)),
        lambda c: L.fit_kdop(c, np.zeros(3), np.eye(3), L.kdop_axes()),
        lambda c: L.subsample(c, 0.05),
    ],
)
def test_fit_rejects_nan_and_bad_shapes(fn):
    cloud = np.zeros((10, 3))
    cloud[4, 2] = np.nan
    with pytest.raises(LimitsError, match="non-finite"):
        fn(cloud)
    with pytest.raises(LimitsError, match=r"shape"):
        fn(np.zeros((10, 2)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda c, pad: L.fit_box(c, pad),
        lambda c, pad: L.fit_oriented_box(c, np.zeros(3), np.eye(3), pad),
        lambda c, pad: L.fit_ellipsoid(c, np.zeros(3), np.eye(3), pad),
        lambda c, pad: L.fit_kdop(c, np.zeros(3), np.eye(3), L.kdop_axes(), pad),
    ],
)
def test_fit_rejects_empty_cloud_and_negative_padding(fn):
    with pytest.raises(LimitsError, match="empty cloud"):
        fn(np.zeros((0, 3)), 0.05)
    with pytest.raises(LimitsError, match="padding must be >= 0"):
        fn(np.ones((5, 3)), -0.1)
    with pytest.raises(LimitsError, match="padding must be finite"):
        fn(np.ones((5, 3)), np.nan)


def test_invalid_limits_raise():
    p = np.zeros((2, 3))
    with pytest.raises(LimitsError, match=r"lo\[1\]"):
        L.project_box(p, [0, 1, 0], [1, 0, 1])
    with pytest.raises(LimitsError, match="scale must be >= 0"):
        L.project_ellipsoid(p, [1, -1, 1])
    with pytest.raises(LimitsError, match="mins"):
        L.project_kdop(p, np.ones(13), np.zeros(13))
    with pytest.raises(LimitsError, match="rotation"):
        L.project_box(p, *BOX, np.zeros(3), np.eye(4))
    with pytest.raises(LimitsError, match="rotation"):
        L.project_box(p, *BOX, np.zeros(3), np.full((3, 3), np.nan))
    with pytest.raises(LimitsError, match="distance must be >= 0"):
        L.subsample(p, -1.0)
    with pytest.raises(LimitsError, match="points must have shape"):
        L.project_ellipsoid(np.zeros((3, 4)), [1, 1, 1])
    # it is a ValueError and a JointLimitsError
    with pytest.raises(ValueError):
        L.fit_box(np.zeros((0, 3)))
    with pytest.raises(JointLimitsError):
        L.fit_box(np.zeros((0, 3)))


def test_distance_helpers():
    pts = np.array([[3.0, 0, 0], [0.0, 0, 0]])
    np.testing.assert_allclose(L.distance_box(pts, *BOX), [2.0, 0.0])
    np.testing.assert_allclose(L.distance_ellipsoid(pts, [2.0, 1.0, 1.0]), [1.0, 0.0])
    mins, maxs = -np.ones(13), np.ones(13)
    np.testing.assert_allclose(L.distance_kdop(pts, mins, maxs), [2.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(L.contains_ellipsoid(pts, [2.0, 1, 1]), [False, True])

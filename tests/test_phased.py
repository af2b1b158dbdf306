"""The phased limit step (large batches) against the fused scalar step and the quaternion exp."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimits import quat
from jointlimits.fused import _fitted_kernel, project_fitted
from jointlimits.model import FittedLimit, fit_shape
from jointlimits.phased import CHUNK, _exp_tan, project_phased

import numba

REF = quat.normalize(np.array([0.9, 0.1, 0.2, 0.1]))
AXIS = np.array([0.0, 0.6, 0.8])


def fused(limit: FittedLimit, q: np.ndarray, soften, want_hard: bool):
    mode, covers, twist, a, b = limit._packed
    out = np.empty_like(q)
    hard = np.empty_like(q) if want_hard else out[:0]
    on = soften is not None
    _fitted_kernel(q, limit.reference, limit.twist_axis, mode, covers, on, want_hard, *(soften or (0.0, 0.0)),
                   twist[0], twist[1], *a, *b, out, hard)
    return out, (hard if want_hard else None)


def phased(limit: FittedLimit, q: np.ndarray, soften, want_hard: bool):
    mode, covers, twist, a, _ = limit._packed
    out = np.empty_like(q)
    hard = np.empty_like(q) if want_hard else None
    project_phased(q, limit.reference, limit.twist_axis, mode, covers, soften, a, twist, out, hard)
    return out, hard


def make_limit(kind: str, swing_twist: bool, spread: float, seed: int = 0, exact: bool = True) -> FittedLimit:
    rng = np.random.default_rng(seed)
    cloud = rng.normal(0, spread, (3000, 3)) * [1.0, 0.7, 0.4]
    if not swing_twist:
        shape = fit_shape(cloud, kind)
        if kind == "kdop":
            shape.exact = exact
        return FittedLimit(REF, AXIS, shape=shape)
    along = (cloud @ AXIS)[:, None] * AXIS
    return FittedLimit(REF, AXIS, swing=fit_shape(cloud - along, kind), twist=fit_shape(along, kind))


CASES = [(kind, st_, spread) for kind in ("box", "oriented-box", "ellipsoid", "kdop")
         for st_ in (False, True) for spread in (0.4, 1.6)]


@pytest.mark.parametrize("kind,swing_twist,spread", CASES)
@pytest.mark.parametrize("soften,want_hard", [((1.0, 0.1), False), (None, False), ((2.0, 0.3), True)])
def test_phased_matches_fused(kind, swing_twist, spread, soften, want_hard):
    limit = make_limit(kind, swing_twist, spread)
    if spread > 1.0 and not swing_twist:
        assert limit._packed[1] and limit.shape.radius() > np.pi  # the long-cover branch runs
    n = 2 * CHUNK + 37  # two full chunks and a partial one
    q = quat.normalize(np.random.default_rng(1).normal(size=(n, 4)))
    o1, h1 = fused(limit, q, soften, want_hard)
    o2, h2 = phased(limit, q, soften, want_hard)
    np.testing.assert_allclose(o2, o1, rtol=0, atol=2e-14)
    if want_hard:
        np.testing.assert_allclose(h2, h1, rtol=0, atol=2e-14)
    # rows the limit leaves alone are bit-identical copies in both
    inside = np.all(o1 == q, axis=1)
    assert inside.any() and (~inside).any()
    assert np.array_equal(o2[inside], q[inside])


def test_project_fitted_dispatch_agrees_across_the_threshold():
    limit = make_limit("ellipsoid", True, 0.5)
    q = quat.normalize(np.random.default_rng(2).normal(size=(1000, 4)))
    big = limit.project(q, (1.0, 0.2))  # phased
    small = np.concatenate([limit.project(q[i:i + 50], (1.0, 0.2)) for i in range(0, 1000, 50)])  # fused
    np.testing.assert_allclose(big, small, rtol=0, atol=2e-14)


def test_quirks_mode_is_not_phased():
    limit = FittedLimit(REF, AXIS, swing=fit_shape(np.random.default_rng(0).normal(0, 0.3, (100, 3)), "box"),
                        twist=fit_shape(np.random.default_rng(1).normal(0, 0.3, (100, 3)), "box"),
                        reference_quirks=True)
    mode, covers, twist, a, _ = limit._packed
    q = quat.normalize(np.random.default_rng(3).normal(size=(10, 4)))
    with pytest.raises(ValueError, match="modes 0 and 1"):
        project_phased(q, REF, AXIS, mode, covers, None, a, twist, np.empty_like(q), None)
    # project_fitted still handles it (on the fused kernel) for any batch size
    out, _ = project_fitted(np.tile(q, (30, 1)), REF, AXIS, mode, covers, None, a, limit._packed[4], twist)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)


@numba.njit
def _exp_tan_rows(S):  # pragma: no cover - compiled
    out = np.empty((S.shape[0], 4))
    A = np.empty((1, S.shape[0]))
    for i in range(S.shape[0]):
        A[0, i] = 0.25 * np.sqrt(S[i, 0] ** 2 + S[i, 1] ** 2 + S[i, 2] ** 2)
    TT = np.tan(A)
    S3 = S.reshape(1, S.shape[0], 3)
    for i in range(S.shape[0]):
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = _exp_tan(S3, A, TT, 0, i)
    return out


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 2.0 * np.pi + 0.5), st.tuples(*[st.floats(-1, 1)] * 3))
def test_exp_tan_is_the_quaternion_exp(angle, direction):
    d = np.array(direction)
    if np.linalg.norm(d) < 1e-3:
        d = np.array([0.0, 0.0, 1.0])
    s = (angle * d / np.linalg.norm(d))[None]
    np.testing.assert_allclose(_exp_tan_rows(s), quat.from_scaled_angle_axis(s), rtol=0, atol=1e-14)

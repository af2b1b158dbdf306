"""The compiled batch kernels of motion.quat give numpy's results (the numpy path, still taken for
other dtypes and shapes, is the reference) within 1e-12, and scipy's where scipy has the op."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as R

from jointlimits.errors import QuatError
from jointlimits.motion import quat


def _unit(n, seed=0):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _edge_quats():
    q = _unit(300)
    special = [
        [1, 0, 0, 0],
        [-1, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 0, -1],
        [np.sqrt(0.5), 0, np.sqrt(0.5), 0],  # gimbal lock of xyz
        [np.sqrt(0.5), 0, -np.sqrt(0.5), 0],
        [0.5, 0.5, 0.5, 0.5],
        [1, 1e-12, 0, 0],
    ]
    q = np.concatenate([q, -q, special])  # both covers
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


Q = _edge_quats()
Q2 = np.roll(Q, 7, axis=0)
V = np.random.default_rng(1).normal(size=(Q.shape[0], 3))
T = np.random.default_rng(2).uniform(-0.5, 1.5, Q.shape[0])
E = np.random.default_rng(3).uniform(-4, 4, (Q.shape[0], 3))

OPS = {
    "mul": lambda: quat.mul(Q, Q2),
    "inv": lambda: quat.inv(Q),
    "inv_mul": lambda: quat.inv_mul(Q, Q2),
    "mul_vec": lambda: quat.mul_vec(Q, V),
    "to_matrix": lambda: quat.to_matrix(Q),
    "from_matrix": lambda: quat.from_matrix(quat.to_matrix(Q)),
    "normalize": lambda: quat.normalize(3.0 * Q),
    "log": lambda: quat.log(Q),
    "to_scaled_angle_axis": lambda: quat.to_scaled_angle_axis(Q),
    "exp": lambda: quat.exp(0.5 * quat.log(Q)),
    "from_scaled_angle_axis": lambda: quat.from_scaled_angle_axis(E),
    "slerp": lambda: quat.slerp(Q, Q2, T),
    "slerp scalar t": lambda: quat.slerp(Q, Q2, 0.3),
    "from_euler": lambda: quat.from_euler(E, "zxy"),
    "from_euler degrees": lambda: quat.from_euler(100 * E, "yzx", degrees=True),
    "to_euler": lambda: quat.to_euler(Q, "xyz"),
    "to_euler degrees": lambda: quat.to_euler(Q, "zyx", degrees=True),
}


@pytest.fixture(scope="module")
def numpy_results():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(quat, "_f64", lambda *a: False)  # the numpy path
        return {k: f() for k, f in OPS.items()}


@pytest.mark.parametrize("op", list(OPS))
def test_compiled_equals_numpy(op, numpy_results):
    got = OPS[op]()
    ref = numpy_results[op]
    assert got.shape == ref.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_the_exact_ops_keep_numpys_bits(numpy_results):
    exact = ["mul", "inv", "inv_mul", "mul_vec", "to_matrix", "from_matrix", "normalize"]
    x = E.reshape(-1)
    if all(np.sin(x) == [math.sin(v) for v in x]) and all(np.cos(x) == [math.cos(v) for v in x]):
        # numpy's sin and cos are the C library's here (the kernel calls those): same bits too
        exact += ["from_euler", "from_euler degrees"]
    for op in exact:
        assert OPS[op]().tobytes() == numpy_results[op].tobytes(), op


def test_scipy_agrees():
    s = R.from_quat(Q, scalar_first=True)
    np.testing.assert_allclose(quat.to_matrix(Q), s.as_matrix(), atol=1e-12)
    w = np.abs(Q[:, 0]) > 1e-9  # at w = 0 both covers are w >= 0
    np.testing.assert_allclose(quat.from_matrix(s.as_matrix())[w], quat.abs(Q)[w], atol=1e-12)
    np.testing.assert_allclose(quat.to_scaled_angle_axis(quat.abs(Q))[w], s.as_rotvec()[w], atol=1e-12)
    np.testing.assert_allclose(quat.mul_vec(Q, V), s.apply(V), atol=1e-12)
    with pytest.warns(UserWarning):  # gimbal lock rows
        ref = s.as_euler("XYZ")
    np.testing.assert_allclose(quat.to_euler(Q, "xyz"), ref, atol=1e-12)


def test_zero_length_non_contiguous_float32_and_broadcast():
    assert quat.mul(np.zeros((0, 4)), np.zeros((0, 4))).shape == (0, 4)
    assert quat.to_matrix(np.zeros((2, 0, 4))).shape == (2, 0, 3, 3)
    assert quat.to_euler(np.zeros((0, 4))).shape == (0, 3)
    assert quat.slerp(np.zeros((0, 4)), np.zeros((0, 4)), np.zeros(0)).shape == (0, 4)
    wide = np.repeat(Q, 2, axis=1)[:, ::2]  # a strided view
    assert not wide.flags.c_contiguous
    np.testing.assert_array_equal(quat.to_matrix(wide), quat.to_matrix(Q))
    np.testing.assert_array_equal(quat.mul(wide, Q2.T.copy().T), quat.mul(Q, Q2))
    f = Q.astype(np.float32)
    assert quat.mul(f, f).dtype == np.float32 and quat.to_matrix(f).dtype == np.float32
    np.testing.assert_allclose(quat.mul(Q[0], Q2), quat.mul(np.broadcast_to(Q[0], Q2.shape), Q2), atol=1e-15)
    q3 = Q[:300].reshape(10, 30, 4)
    np.testing.assert_array_equal(quat.to_matrix(q3).reshape(-1, 3, 3), quat.to_matrix(Q[:300]))


def test_out_of_range_norms_and_bad_rows_take_the_checked_path():
    big = 1e200 * Q[:5]
    np.testing.assert_allclose(quat.normalize(big), Q[:5], atol=1e-15)
    np.testing.assert_allclose(quat.to_euler(1e-200 * Q[:5]), quat.to_euler(Q[:5]), atol=1e-12)
    np.testing.assert_allclose(quat.log(1e200 * Q[:5]), quat.log(Q[:5]), atol=1e-12)
    np.testing.assert_allclose(quat.exp(np.full((2, 3), 1e-200)), [[1, 1e-200, 1e-200, 1e-200]] * 2, rtol=1e-15)
    bad = Q[:4].copy()
    bad[1] = 0.0
    bad[2, 0] = np.nan
    with pytest.raises(QuatError, match=r"\(2,\) is not finite"):
        quat.to_euler(bad)
    bad[2, 0] = 1.0
    with pytest.raises(QuatError, match=r"\(1,\) has zero length"):
        quat.to_euler(bad)
    assert np.isnan(quat.mul(np.full((2, 4), np.nan), Q[:2])).all()

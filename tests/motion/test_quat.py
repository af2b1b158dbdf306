"""Quaternion algebra: golden vectors from the C++ reference, analytic answers and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation

from jointlimits.motion import quat

from conftest import assert_golden, f32, golden

# --------------------------------------------------------------------------- golden vectors


def _case(data: dict, name: str) -> tuple[int, dict]:
    for i, c in enumerate(data["cases"]):
        if c["name"] == name:
            return i, c
    raise KeyError(name)


def test_golden_quat_ops_products():
    d = golden("quat_ops.json")
    i, c = _case(d, "quat_abs")
    assert_golden(quat.abs(f32(c["inputs"]["q"])), c["outputs"]["q_abs"], "quat_ops.json", f"cases/{i}/outputs/q_abs")
    i, c = _case(d, "quat_mul")
    q, p = f32(c["inputs"]["q"]), f32(c["inputs"]["p"])
    assert_golden(quat.mul(q, p), c["outputs"]["qp"], "quat_ops.json", f"cases/{i}/outputs/qp")
    # the reference's quat_inv is -conj(q): its inv_mul / mul_inv are the negated standard products
    i, c = _case(d, "quat_inv_mul")
    q, p = f32(c["inputs"]["q"]), f32(c["inputs"]["p"])
    assert_golden(-quat.inv_mul(q, p), c["outputs"]["q_inv_p"], "quat_ops.json", f"cases/{i}/outputs/q_inv_p")
    i, c = _case(d, "quat_mul_inv")
    q, p = f32(c["inputs"]["q"]), f32(c["inputs"]["p"])
    assert_golden(-quat.mul_inv(q, p), c["outputs"]["q_p_inv"], "quat_ops.json", f"cases/{i}/outputs/q_p_inv")
    i, c = _case(d, "quat_mul_vec3")
    assert_golden(
        quat.mul_vec(f32(c["inputs"]["q"]), f32(c["inputs"]["v"])),
        c["outputs"]["qv"],
        "quat_ops.json",
        f"cases/{i}/outputs/qv",
    )


def test_golden_scaled_angle_axis():
    d = golden("quat_ops.json")
    i, c = _case(d, "quat_to_scaled_angle_axis")
    # We use atan2(|xyz|, w) (accurate near identity, and for non-unit float32 input); the
    # reference's acos(w) differs by up to ~2e-5 on these rows (golden README), so atol 5e-5.
    assert_golden(
        quat.to_scaled_angle_axis(f32(c["inputs"]["q"])),
        c["outputs"]["v"],
        "quat_ops.json",
        f"cases/{i}/outputs/v",
        atol=5e-5,
    )
    i, c = _case(d, "quat_from_scaled_angle_axis")
    assert_golden(
        quat.from_scaled_angle_axis(f32(c["inputs"]["v"])), c["outputs"]["q"], "quat_ops.json", f"cases/{i}/outputs/q"
    )


def test_golden_between_fixes_antiparallel():
    d = golden("quat_ops.json")
    i, c = _case(d, "quat_between")
    p, q = f32(c["inputs"]["p"]), f32(c["inputs"]["q"])
    out = quat.between(p, q)
    # row 0 is antiparallel: the reference returns (0,0,0,0); we return a valid half turn
    exp = f32(c["outputs"]["q"])
    assert_golden(out[1:], exp[1:], "quat_ops.json", f"cases/{i}/outputs/q")
    assert np.allclose(exp[0], 0.0)
    np.testing.assert_allclose(np.linalg.norm(out[0]), 1.0, atol=1e-12)
    pn, qn = p[0] / np.linalg.norm(p[0]), q[0] / np.linalg.norm(q[0])
    np.testing.assert_allclose(quat.mul_vec(out[0], pn), qn, atol=1e-6)


def test_golden_unroll():
    d = golden("unroll.json")
    for i, c in enumerate(d["cases"]):
        rot = f32(c["inputs"]["rotations"])
        if c["function"] == "quat_unroll_ranges_inplace":
            ranges = list(zip(c["inputs"]["range_starts"], c["inputs"]["range_stops"]))
            out = quat.unroll(rot, axis=0, ranges=ranges)
        elif rot.ndim == 3:  # [S, T, 4]: each sequence unrolled along T
            out = quat.unroll(rot, axis=1)
        else:
            out = quat.unroll(rot, axis=0)
        assert_golden(out, c["outputs"]["rotations"], "unroll.json", f"cases/{i}/outputs/rotations")


def test_golden_swing_twist():
    d = golden("swing_twist.json")
    i, c = _case(d, "quat_swing_twist")
    q, axis = f32(c["inputs"]["q"]), f32(c["inputs"]["axis"])
    swing, twist = quat.swing_twist(q, axis)
    exp_t = f32(c["outputs"]["twist"])
    ok = np.linalg.norm(exp_t, axis=-1) > 0.5  # the reference returns zeros for its degenerate rows
    assert (~ok).sum() >= 1
    for key, ours in (("swing", swing), ("twist", twist)):
        assert_golden(ours[ok], np.asarray(c["outputs"][key])[ok], "swing_twist.json", f"cases/{i}/outputs/{key}")
    # degenerate rows (w = 0, xyz orthogonal to the axis): fixed to twist = identity, swing = q
    np.testing.assert_allclose(twist[~ok], quat.identity(int((~ok).sum())), atol=1e-12)
    np.testing.assert_allclose(quat.mul(swing, twist), q, atol=1e-6)
    # limit space (of the w >= 0 cover): the reference's acos(w) and our atan2(|xyz|, w) agree on unit input; the
    # hand-picked non-unit rows (|q| = 0.905) have no single right answer, so they are left out
    unit = ok & (np.abs(np.linalg.norm(q, axis=-1) - 1) < 1e-4)
    assert unit.sum() > 1900
    for key, ours in (("swing_limit_space", swing), ("twist_limit_space", twist)):
        assert_golden(
            quat.to_scaled_angle_axis(quat.abs(ours[unit])),
            np.asarray(c["outputs"][key])[unit],
            "swing_twist.json",
            f"cases/{i}/outputs/{key}",
        )


def test_golden_twist_axes():
    from jointlimits.motion.skeleton import Skeleton

    d = golden("swing_twist.json")
    i, c = _case(d, "synthetic_skeleton")
    parents = np.asarray(c["inputs"]["bone_parents"])
    offs = f32(c["inputs"]["reference_positions"])
    names = [f"j{k}" for k in range(len(parents))]
    sk = Skeleton(names, parents, offs)
    axes = sk.bone_directions(default=f32(c["params"]["default_twist_axis"]))
    assert_golden(axes, c["outputs"]["twist_axes"], "swing_twist.json", f"cases/{i}/outputs/twist_axes")


# --------------------------------------------------------------------------- analytic answers


def test_euler_matches_scipy_all_orders():
    rng = np.random.default_rng(1)
    ang = rng.uniform(-np.pi, np.pi, (500, 3))
    for order in quat.EULER_ORDERS:
        q = quat.from_euler(ang, order)
        ref = Rotation.from_euler(order.upper(), ang).as_quat()[:, [3, 0, 1, 2]]
        np.testing.assert_allclose(quat.abs(q), quat.abs(ref), atol=1e-12)


def test_unroll_makes_sequence_continuous_and_restarts():
    rng = np.random.default_rng(2)
    base = quat.from_scaled_angle_axis(np.cumsum(rng.normal(0, 0.05, (200, 3)), axis=0))
    flips = np.where(rng.random(200) < 0.5, -1.0, 1.0)[:, None]
    un = quat.unroll(base * flips)
    assert np.all(np.sum(un[1:] * un[:-1], -1) > 0)
    assert un[0, 0] >= 0
    np.testing.assert_allclose(quat.abs(un * np.sign(un[:, :1])), quat.abs(base), atol=1e-12)
    r = quat.unroll(base * flips, ranges=[(10, 50)])
    np.testing.assert_array_equal(r[:10], (base * flips)[:10])
    assert np.all(np.sum(r[11:50] * r[10:49], -1) > 0)


def test_scaled_angle_axis_near_identity_and_pi():
    tiny = np.array([[1e-12, 0, 0], [0, 1e-9, 0], [0, 0, 1e-7]])
    np.testing.assert_allclose(quat.to_scaled_angle_axis(quat.from_scaled_angle_axis(tiny)), tiny, rtol=1e-9, atol=0)
    near_pi = np.array([[np.pi - 1e-9, 0, 0], [0, 0, np.pi]])
    np.testing.assert_allclose(quat.to_scaled_angle_axis(quat.from_scaled_angle_axis(near_pi)), near_pi, atol=1e-9)


def test_between_and_matrix():
    rng = np.random.default_rng(3)
    u, v = rng.normal(size=(100, 3)), rng.normal(size=(100, 3))
    q = quat.between(u, v)
    un, vn = u / np.linalg.norm(u, axis=-1, keepdims=True), v / np.linalg.norm(v, axis=-1, keepdims=True)
    np.testing.assert_allclose(quat.mul_vec(q, un), vn, atol=1e-12)
    # shortest arc: rotation axis perpendicular to both
    np.testing.assert_allclose(np.sum(q[:, 1:] * un, -1), 0, atol=1e-12)
    r = quat.from_euler(rng.uniform(-3, 3, (100, 3)), "zxy")
    np.testing.assert_allclose(quat.to_matrix(r), Rotation.from_quat(r[:, [1, 2, 3, 0]]).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(quat.from_matrix(quat.to_matrix(r)), quat.abs(r), atol=1e-12)


def test_average_and_slerp():
    a = quat.from_angle_axis(np.array(0.2), np.array([0.0, 0.0, 1.0]))
    b = quat.from_angle_axis(np.array(0.6), np.array([0.0, 0.0, 1.0]))
    mid = quat.from_angle_axis(np.array(0.4), np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(quat.slerp(a, -b, 0.5), mid, atol=1e-12)  # cover of b ignored
    np.testing.assert_allclose(quat.average(np.stack([a, -b])), mid, atol=1e-12)


# --------------------------------------------------------------------------- properties

unit_quats = (
    arrays(np.float64, (4,), elements=st.floats(-1, 1, allow_nan=False))
    .filter(lambda q: np.linalg.norm(q) > 1e-3)
    .map(lambda q: q / np.linalg.norm(q))
)
vectors = arrays(np.float64, (3,), elements=st.floats(-10, 10, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(unit_quats, unit_quats)
def test_mul_inverse_and_norm(a, b):
    ab = quat.mul(a, b)
    assert abs(np.linalg.norm(ab) - 1) < 1e-12
    np.testing.assert_allclose(quat.mul(quat.inv(a), ab), b, atol=1e-12)
    np.testing.assert_allclose(quat.mul_inv(ab, b), a, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(unit_quats, vectors)
def test_mul_vec_matches_matrix(q, v):
    np.testing.assert_allclose(quat.mul_vec(q, v), quat.to_matrix(q) @ v, atol=1e-10)
    np.testing.assert_allclose(quat.inv_mul_vec(q, quat.mul_vec(q, v)), v, atol=1e-10)


@settings(max_examples=200, deadline=None)
@given(unit_quats)
def test_log_exp_round_trip(q):
    q = quat.abs(q)
    np.testing.assert_allclose(quat.exp(quat.log(q)), q, atol=1e-12)
    v = quat.to_scaled_angle_axis(q)
    assert np.linalg.norm(v) <= np.pi + 1e-12
    np.testing.assert_allclose(quat.from_scaled_angle_axis(v), q, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(unit_quats, vectors.filter(lambda v: np.linalg.norm(v) > 1e-6))
def test_swing_twist_recomposes(q, axis):
    axis = axis / np.linalg.norm(axis)
    swing, twist = quat.swing_twist(q, axis)
    np.testing.assert_allclose(quat.mul(swing, twist), q, atol=1e-10)
    assert abs(np.linalg.norm(twist) - 1) < 1e-10 and abs(np.linalg.norm(swing) - 1) < 1e-10
    np.testing.assert_allclose(np.cross(twist[1:], axis), 0, atol=1e-10)  # twist about the axis
    # the swing has no component about the axis
    assert abs(np.dot(swing[1:], axis)) < 1e-9


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, (3,), elements=st.floats(-3.1, 3.1)), st.sampled_from(quat.EULER_ORDERS), st.booleans())
def test_euler_round_trip(ang, order, degrees):
    ang = ang.copy()
    ang[1] = np.clip(ang[1], -1.5, 1.5)  # away from gimbal lock, inside the principal range
    a = np.rad2deg(ang) if degrees else ang
    back = quat.to_euler(quat.from_euler(a, order, degrees), order, degrees)
    np.testing.assert_allclose(back, a, atol=1e-8)


def test_normalize_zero_is_identity_and_order_errors():
    np.testing.assert_array_equal(quat.normalize(np.zeros(4)), [1, 0, 0, 0])
    with pytest.raises(ValueError, match="Euler order"):
        quat.from_euler(np.zeros(3), "xxy")

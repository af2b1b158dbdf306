"""A compiled shape registered from this file alone: a toy ``Ball`` Shape whose ``compile()`` returns
an existing ``_core`` shape (an ellipsoid with equal radii), one registry line, then fitted,
projected, saved and loaded through ``JointLimits`` and checked against the analytic answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from jointlimits import JointLimits, Motion, Skeleton, _core, quat
from jointlimits.limits import registry
from jointlimits.limits.compiled import core_shape
from jointlimits.limits.joint import FittedLimit, to_limit_space
from jointlimits.limits.shape import Shape


@dataclass(eq=False)
class Ball(Shape):
    """|v - centre| <= r in limit space."""

    centre: np.ndarray = field(default_factory=lambda: np.zeros(3))
    r: float = 0.5
    kind: str = "ball"

    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05) -> Ball:
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        c = pts.mean(axis=0)
        return cls(c, float(np.linalg.norm(pts - c, axis=1).max()) + padding)

    def project(self, points):
        p = np.asarray(points, np.float64)
        d = p - self.centre
        n = np.linalg.norm(d, axis=-1, keepdims=True)
        return np.where(n <= self.r, p, self.centre + d * (self.r / np.where(n > 0, n, 1.0)))

    def contains(self, points, tolerance: float = 1e-9):
        return np.linalg.norm(np.asarray(points, np.float64) - self.centre, axis=-1) <= self.r + tolerance

    def radius(self) -> float:
        return float(np.linalg.norm(self.centre) + self.r)

    def compile(self):
        f = np.zeros(16)
        f[0:3], f[3:12], f[12:15], f[15] = self.centre, np.eye(3).reshape(-1), self.r, self.radius()
        return core_shape("ellipsoid", f)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "centre": np.asarray(self.centre).tolist(), "r": self.r}

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> Ball:
        return cls(np.asarray(d["centre"], np.float64), float(d["r"]))


@pytest.fixture
def ball():
    registry.register_shape("ball", Ball)  # the one registry line
    yield Ball
    registry.SHAPE_CLASSES.pop("ball")


def _motion(rng) -> Motion:
    """Two joints, the child swinging in a small cone about a tilted rest."""
    sk = Skeleton(["Root", "Arm", "Hand"], [-1, 0, 1], [[0, 0, 0], [10, 0, 0], [10, 0, 0]])
    n = 400
    rest = quat.normalize(np.array([0.95, 0.1, 0.2, 0.05]))
    v = rng.normal(size=(n, 3)) * 0.2
    q = np.tile(quat.identity(()), (n, 3, 1))
    q[:, 1] = quat.mul(rest, quat.from_scaled_angle_axis(v))
    return Motion(sk, q, np.zeros((n, 3, 3)) + sk.offsets, 1.0 / 30.0)


def test_ball_through_joint_limits(ball, tmp_path):
    rng = np.random.default_rng(0)
    lim = JointLimits.fit(_motion(rng), shape="ball", joints=["Arm"])
    arm = lim.joint("Arm")
    assert isinstance(arm, FittedLimit) and isinstance(arm.shape, Ball)
    assert arm.compiled() is not None and arm.compiled().a.kind == "ellipsoid"

    q = np.tile(quat.identity(()), (2000, 3, 1))
    q[:, 1] = quat.normalize(rng.normal(size=(2000, 4)))
    out = lim.project(q)
    v_in = to_limit_space(q[:, 1], arm.reference)
    v_out = to_limit_space(out[:, 1], arm.reference)
    c, r = arm.shape.centre, arm.shape.r
    inside = np.linalg.norm(v_in - c, axis=1) <= r
    assert 0 < inside.sum() < len(q)
    np.testing.assert_array_equal(out[inside], q[inside])  # bit for bit
    np.testing.assert_allclose(np.linalg.norm(v_out[~inside] - c, axis=1), r, rtol=0, atol=1e-9)
    np.testing.assert_allclose(v_out[~inside], arm.shape.project(v_in[~inside]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(lim.project(out), out, rtol=0, atol=1e-12)  # idempotent
    assert lim.contains(out).all()

    path = tmp_path / "ball.json"
    lim.save(path)
    loaded = JointLimits.load(path)
    assert isinstance(loaded.joint("Arm").shape, Ball)
    np.testing.assert_array_equal(loaded.project(q), out)


def test_ball_compiled_shape_queries(ball):
    b = Ball(np.array([0.1, -0.2, 0.3]), 0.4)
    cs = b.compile()
    p = np.random.default_rng(1).normal(size=(500, 3)) * 0.5
    h = cs.project(p)
    inside = np.linalg.norm(p - b.centre, axis=1) <= b.r
    np.testing.assert_array_equal(h[inside], p[inside])
    np.testing.assert_allclose(np.linalg.norm(h[~inside] - b.centre, axis=1), b.r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cs.project(h), h, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cs.distance(p), np.maximum(np.linalg.norm(p - b.centre, axis=1) - b.r, 0), atol=1e-12)
    np.testing.assert_array_equal(cs.contains(p, 1e-9), b.contains(p))


def test_compiled_shape_validates_its_arrays():
    with pytest.raises(ValueError, match="unknown compiled shape kind"):
        core_shape("sphere", np.zeros(16))
    with pytest.raises(ValueError, match="3 mins and 3 maxs"):
        core_shape("box", np.zeros(16), mins=np.zeros(2), maxs=np.ones(2))
    with pytest.raises(ValueError, match="one min and max per axis"):
        core_shape("slabs", np.zeros(16), axes=np.eye(3), mins=np.zeros(2), maxs=np.ones(2))
    with pytest.raises(ValueError, match="polygon needs vertices"):
        core_shape("polygon", np.zeros(16))
    with pytest.raises(ValueError, match="f has 16"):
        core_shape("ellipsoid", np.zeros(15))
    empty = core_shape("slabs", np.zeros(16))
    with pytest.raises(ValueError, match="unknown limit mode"):
        _core.CompiledLimit(3, True, 0.0, 0.0, np.array([1.0, 0, 0, 0]), np.array([1.0, 0, 0]), empty, empty)

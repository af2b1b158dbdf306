"""A conservative export never locks a joint silently: each joint with a range under 5 deg is named
in the loss report (JSON and text) with the reason."""

from __future__ import annotations

import math

import numpy as np

from jointlimits import JointLimits, Motion, Skeleton
from jointlimits.export import export_limits
from jointlimits.export.swingtwist import sample_inside, split
from jointlimits.motion import quat


class _Box:
    """Swing components within ``(sin(ay/2), sin(az/2))`` ellipse and twist in [lo, hi] about x."""

    kind = "test"

    def __init__(self, ay: float, az: float, lo: float, hi: float):
        self.reference = np.array([1.0, 0.0, 0.0, 0.0])
        self.twist_axis = np.array([1.0, 0.0, 0.0])
        self.ay, self.az, self.lo, self.hi = ay, az, lo, hi

    def contains(self, q, tolerance=1e-6):
        s, tau = split(quat.abs(np.asarray(q, float)))
        inside = (s[..., 2] / math.sin(self.ay / 2)) ** 2 + (s[..., 3] / math.sin(self.az / 2)) ** 2 <= 1
        return inside & (tau >= self.lo) & (tau <= self.hi)


def _export(limit: _Box, engine: str):
    sk = Skeleton(["root", "arm"], [-1, 0], [[0, 0, 0], [0.3, 0, 0]], end_sites=[(1, np.array([0.4, 0, 0]))])
    lim = JointLimits(sk).with_limit("arm", limit)
    q = sample_inside(limit, limit.reference, 1500, np.random.default_rng(1))
    rot = np.tile([1.0, 0, 0, 0], (q.shape[0], 2, 1))
    rot[:, 1] = q
    clip = Motion(sk, rot, np.repeat(sk.offsets[None], q.shape[0], axis=0), 1 / 30)
    return export_limits(lim, engine, clips=[clip], random=5000, seed=2)


def test_spherical_conservative_cone_names_the_locked_joint_and_why():
    ex = _export(_Box(1.4, 0.7, -0.5, 0.9), "usd-spherical")
    (je,) = ex.joints
    con = je.parameters["conservative"]
    locked = je.report["conservative"]["locked"]
    assert min(con["physics:coneAngle0Limit"], con["physics:coneAngle1Limit"]) < 5
    assert "cannot limit the twist" in locked["reason"] and min(locked["ranges_deg"].values()) < 5
    assert "locked" not in je.report["covering"]  # the covering cone is wide
    assert ex.summary["conservative"]["locked"] == ["arm"] and ex.summary["covering"]["locked"] == []
    text = ex.table()
    assert "conservative: 1 of 1 joints (nearly) locked" in text and "arm (swing_" in text


def test_a_joint_that_barely_moves_is_named_in_every_variant():
    ex = _export(_Box(0.06, 0.05, -0.02, 0.02), "physx")
    (je,) = ex.joints
    for v in ("conservative", "covering"):
        assert "move less than 5 deg" in je.report[v]["locked"]["reason"]
        assert set(je.report[v]["locked"]["ranges_deg"]) == {"swing_y", "swing_z", "twist"}


def test_a_wide_joint_is_not_named():
    ex = _export(_Box(1.4, 0.7, -0.5, 0.9), "physx")
    assert all("locked" not in r for r in ex.joints[0].report.values())
    assert "locked" not in ex.table()

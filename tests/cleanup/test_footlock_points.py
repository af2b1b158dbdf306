"""Foot locking judged per foot point: the low-and-slow skating in the report, the toe end sites of
rigs without toe joints, and no foot point left with more skating than the input."""

from __future__ import annotations

import numpy as np

from jointlimits.cleanup.contacts import find_feet
from jointlimits.cleanup.footlock import STEP_MARGIN_DEGREES, footlock
from jointlimits.cleanup.footlock._measure import foot_points, keep_no_worse, low_slow_skating
from jointlimits.io import bvh
from jointlimits.motion import quat

from conftest import MOCAP, needs_shared


@needs_shared
def test_second_life_toe_end_sites_are_locked():
    m = bvh.load(MOCAP / "cmu_secondlife" / "60_05_scaled.bvh").frames(0, 600)
    feet = find_feet(m.skeleton)
    kinds = [(kind, p) for _, kind, _, p in foot_points(m, feet)]
    assert [k for k, _ in kinds].count("toe") == 2 and all(p < 0 for k, p in kinds if k == "toe")  # end sites
    out, rep = footlock(m, step_margin=STEP_MARGIN_DEGREES)
    assert rep.toe_contacts is not None and rep.toe_contacts.sum(0).min() > 50
    red = rep.low_slow_reduction
    assert red["toe"] is not None and red["toe"] > 80 and red["ankle"] > 80
    before, after = low_slow_skating(m), low_slow_skating(out)
    assert after["toe_cm"] < 0.2 * before["toe_cm"]
    assert all(after["per_point"][n]["cm"] <= v["cm"] + 1e-9 for n, v in before["per_point"].items())


@needs_shared
def test_a_leg_run_that_adds_skating_is_put_back():
    m = bvh.load(MOCAP / "lafan1" / "walk4_subject1.bvh").frames(0, 300)
    feet = find_feet(m.skeleton)
    sk = m.skeleton
    chains = [(int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j) for j in feet]
    rot = m.rotations.copy()
    # shake the left hip over frames 100-139: its foot slides where it was planted
    wob = quat.from_angle_axis(np.radians(6.0) * np.sin(np.arange(40) * 1.3), np.array([0.0, 1.0, 0.0]))
    rot[100:140, chains[0][0]] = quat.mul(rot[100:140, chains[0][0]], wob)
    # and change the right leg without adding skating (the same rotations, a sign flip)
    rot[200:210, chains[1][1]] = -rot[200:210, chains[1][1]]
    assert low_slow_skating(m.with_rotations(rot))["total_cm"] > low_slow_skating(m)["total_cm"]
    touched = keep_no_worse(m, rot, chains, feet)
    assert touched == [0]
    assert np.array_equal(rot[:, list(chains[0])], m.rotations[:, list(chains[0])])
    assert np.array_equal(rot[200:210, chains[1][1]], -m.rotations[200:210, chains[1][1]])

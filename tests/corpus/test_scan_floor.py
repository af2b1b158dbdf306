"""scan's floor is the clip's own: a clip standing a few centimetres above height 0 is not airborne,
and a jump's flight still is."""

from __future__ import annotations

import copy

from jointlimits.corpus.scan import airborne, measure
from jointlimits.io import bvh

from conftest import MOCAP, needs_shared


@needs_shared
def test_a_clip_raised_5cm_stands_on_its_own_floor():
    m = bvh.load(MOCAP / "lafan1" / "walk4_subject1.bvh").frames(0, 600)
    raised = copy.deepcopy(m)
    raised.positions[:, 0, 1] += 5.0  # centimetres, y up
    for clip in (m, raised):
        row = measure(clip)
        assert row["airborne_frames"] == 0 and row["airborne_s"] == 0.0
    assert abs(measure(raised)["floor_m"] - measure(m)["floor_m"] - 0.05) < 1e-6


@needs_shared
def test_jump_rope_flights_are_airborne():
    m = bvh.load(MOCAP / "sfu" / "0005_JumpRope001.bvh")
    air = airborne(m)
    # the root's height peaks mid-flight in each jump (frames from its free fall, own FK)
    for a, b in [(140, 167), (388, 419), (900, 941)]:
        assert air[a:b].any()
    assert not air.all() and 0.2 < air.mean() < 0.8

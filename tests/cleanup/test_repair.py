"""Pop repair per joint (:func:`jointlimits.cleanup.repair.repair_pops`, ``filter --detect``): only
the popped joint changes, bit for bit elsewhere; planted feet stay; positions are scored whatever
``k_edge`` is."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cleanup.pops import PopParams, pop_scores
from jointlimits.cleanup.repair import repair_pops
from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.motion.skeleton import forward_kinematics

from conftest import MOCAP, needs_shared

CLIP = "bandai_namco/dataset-1_walk_normal_001.bvh"


@pytest.fixture(scope="module")
def walk():
    return bvh.load(MOCAP / CLIP)[:240]


def _pop(m, joint: str, start: int, frames: int, angle_deg: float, axis=(0.3, 0.9, 0.2)):
    j = m.skeleton.index(joint)
    rot = m.rotations.copy()
    ax = np.asarray(axis, float) / np.linalg.norm(axis)
    rot[start : start + frames, j] = quat.mul(
        quat.from_scaled_angle_axis(ax * np.radians(angle_deg)), rot[start : start + frames, j]
    )
    return m.with_rotations(rot, m.positions), j


@needs_shared
def test_a_clean_clip_is_returned_bit_for_bit(walk):
    out, rep = repair_pops(walk)
    assert rep.cuts == []
    assert np.array_equal(out.rotations, walk.rotations) and np.array_equal(out.positions, walk.positions)


@needs_shared
def test_only_the_popped_joints_change(walk):
    m, j = _pop(walk, "Hand_R", 60, 4, 40.0)
    m, k = _pop(m, "LowerArm_L", 150, 1, 180.0, axis=(1.0, 0.0, 0.0))
    out, rep = repair_pops(m)
    for e in (60, 64, 150, 151):
        assert min(abs(c - e) for c in rep.cuts) <= 2, (e, rep.cuts)
    others = [i for i in range(m.num_joints) if i not in (j, k)]
    # every other joint, every frame: the input's bits (the old filter moved every joint at a cut)
    assert np.array_equal(out.rotations[:, others], m.rotations[:, others])
    assert np.array_equal(out.positions, m.positions)
    # the popped joints are back near the clip before the pops, and only near the pops
    for jj, lo, hi in ((j, 58, 66), (k, 148, 153)):
        err = np.degrees(quat.angle(out.rotations[lo:hi, jj], walk.rotations[lo:hi, jj]))
        assert err.max() < 3.0, err
        far = np.r_[0 : lo - 10, hi + 10 : m.num_frames]
        assert np.array_equal(out.rotations[far, jj], m.rotations[far, jj])


@needs_shared
def test_a_planted_foot_stays_through_a_knee_repair(walk):
    sk = walk.skeleton
    toe = sk.index("Toes_R")
    _, g = forward_kinematics(walk)
    h = g[:, toe, 1]
    speed = np.r_[0.0, np.linalg.norm(np.diff(g[:, toe], axis=0), axis=-1)]
    planted = np.nonzero((h - h.min() < 5.0) & (speed < 0.5))[0]
    s = int(planted[len(planted) // 2]) - 2
    m, _ = _pop(walk, "LowerLeg_R", s, 5, 30.0)
    out, _ = repair_pops(m)
    _, g1 = forward_kinematics(out)
    d = g1[s - 10 : s + 15, toe] - g[s - 10 : s + 15, toe]
    assert np.hypot(d[:, 0], d[:, 2]).max() < 1.0  # cm


@needs_shared
def test_positions_are_scored_when_k_edge_is_one(walk):
    pos = walk.positions.copy()
    hips = walk.skeleton.index("Hips")
    pos[100:104, hips] += np.array([30.0, 0.0, 0.0])
    m = walk.with_rotations(walk.rotations, pos)
    _, ps = pop_scores(m, PopParams(k_edge=1.0))
    assert ps[:, hips].max() > 1.0


@needs_shared
def test_cli_filter_detect_writes_other_joints_unchanged(walk, tmp_path):
    from jointlimits.cli import main

    m, j = _pop(walk, "Head", 100, 3, 35.0)
    src = tmp_path / "in.bvh"
    bvh.save(src, m)
    out = tmp_path / "out.bvh"
    r = CliRunner().invoke(main, ["filter", str(src), "--detect", "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    a, b = bvh.load(src), bvh.load(out)
    others = [i for i in range(a.num_joints) if i != j]
    assert np.array_equal(a.rotations[:, others], b.rotations[:, others])
    assert not np.array_equal(a.rotations[:, j], b.rotations[:, j])

"""One pop repair everywhere (issue #34): ``clean --detect`` (the corpus chain) runs the per-joint
repair of ``filter --detect`` and writes the same file; flips (a local rotation step over 90 deg in
one frame) are repaired even where the pop score stays low (a twist of a bone with no child)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cleanup.repair import FLIP_DEGREES, flip_frames, repair_pops
from jointlimits.corpus.clean import CleanSettings, clean_motion
from jointlimits.io import bvh
from jointlimits.motion import quat

from conftest import MOCAP, needs_shared

CLIP = "bandai_namco/dataset-1_walk_normal_001.bvh"


@pytest.fixture(scope="module")
def walk():
    return bvh.load(MOCAP / CLIP)[:240]


def _turn(m, joint: str, start: int, frames: int, angle_deg: float, axis) -> tuple:
    j = m.skeleton.index(joint)
    rot = m.rotations.copy()
    ax = np.asarray(axis, float) / np.linalg.norm(axis)
    rot[start : start + frames, j] = quat.mul(
        rot[start : start + frames, j], quat.from_scaled_angle_axis(ax * np.radians(angle_deg))
    )
    return m.with_rotations(rot, m.positions), j


def _steps(m) -> np.ndarray:
    q = quat.normalize(m.rotations)
    return np.degrees(quat.angle(q[1:], q[:-1]))


def _leaf(m) -> str:
    sk = m.skeleton
    return next(sk.names[j] for j in range(m.num_joints) if not sk.children(j) and "Hand" in sk.names[j])


def test_flip_frames_lists_steps_over_the_bound():
    rot = quat.identity((5, 2))
    rot[3, 1] = quat.from_scaled_angle_axis(np.array([np.radians(FLIP_DEGREES + 1.0), 0.0, 0.0]))
    assert flip_frames(rot) == [(3, 1), (4, 1)]
    assert flip_frames(rot, degrees=120.0) == []


@needs_shared
def test_a_twist_flip_of_a_leaf_joint_is_repaired_and_nothing_else_changes(walk):
    name = _leaf(walk)
    # a leaf's rotation moves no joint position: its pop score stays low whatever the turn
    m, j = _turn(walk, name, 100, 3, 175.0, axis=(1.0, 0.1, 0.0))
    assert (_steps(m)[:, j] > FLIP_DEGREES).sum() == 2
    out, rep = repair_pops(m)
    assert (_steps(out) > FLIP_DEGREES).sum() == 0
    assert 100 in rep.cuts and name in rep.rotations[100]
    others = [i for i in range(m.num_joints) if i != j]
    assert np.array_equal(out.rotations[:, others], m.rotations[:, others])
    err = np.degrees(quat.angle(out.rotations[95:108, j], walk.rotations[95:108, j]))
    assert err.max() < 5.0, err


@needs_shared
def test_clean_chain_runs_the_repair_of_filter(walk):
    m, _ = _turn(walk, "LowerArm_L", 150, 2, 60.0, axis=(0.2, 1.0, 0.1))
    a = clean_motion(m, CleanSettings(detect=True))
    b, rep = repair_pops(m)
    assert rep.cuts
    assert np.array_equal(a.rotations, b.rotations) and np.array_equal(a.positions, b.positions)


@needs_shared
def test_cli_clean_detect_and_filter_detect_write_the_same_file(walk, tmp_path):
    from jointlimits.cli import main

    m, _ = _turn(walk, "Head", 100, 3, 40.0, axis=(0.3, 0.9, 0.2))
    src = tmp_path / "in" / "clip.bvh"
    src.parent.mkdir()
    bvh.save(src, m)
    one = tmp_path / "filtered.bvh"
    r = CliRunner().invoke(main, ["filter", str(src), "--detect", "-o", str(one), "-q"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        main, ["clean", str(src.parent), "--detect", "--out", str(tmp_path / "out"), "--workers", "1"]
    )
    assert r.exit_code == 0, r.output
    two = next((tmp_path / "out").rglob("clip.bvh"))
    assert one.read_bytes() == two.read_bytes()
    assert one.read_bytes() != src.read_bytes()

"""``recover`` on noisy positions (issue #34): no joint flips frame to frame, a rig whose root stays
still (Bandai Namco: translation on Hips) keeps it still, and exact positions are solved as before."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.ik.recover import position_noise, recover
from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.motion.skeleton import forward_kinematics

from conftest import MOCAP, needs_shared


def _noisy(m, cm: float, seed: int = 0):
    _, g = forward_kinematics(m)
    unit = 1.0  # these clips are in centimetres
    return g, g + np.random.default_rng(seed).normal(size=g.shape) * (cm * unit / np.sqrt(3.0))


def _fast(m) -> np.ndarray:
    q = quat.normalize(m.rotations)
    return np.degrees(quat.angle(q[1:], q[:-1])) / m.frame_time > 3000.0


@needs_shared
def test_position_noise_is_zero_for_exact_positions_and_close_to_the_added_noise():
    m = bvh.load(MOCAP / "lafan1/walk4_subject1.bvh")[:200]
    g, noisy = _noisy(m, 1.0)
    assert position_noise(g, m.skeleton, m.positions[0]) < 1e-6
    assert position_noise(noisy, m.skeleton, m.positions[0]) == pytest.approx(1.0 / np.sqrt(3.0), rel=0.15)


@needs_shared
def test_a_still_root_stays_still_and_the_hips_carry_the_motion():
    m = bvh.load(MOCAP / "bandai_namco/dataset-1_walk_normal_001.bvh")[:120]
    g, noisy = _noisy(m, 1.0)
    out, rep = recover(noisy, m)
    assert rep.extra["translation_joint"] == "Hips"
    assert np.ptp(out.positions[:, 0], axis=0).max() < 1e-9
    _, go = forward_kinematics(out)
    assert np.linalg.norm(go - g, axis=-1).mean() < 1.5  # cm, under 1 cm of noise (11.5 cm before)


@needs_shared
def test_noisy_positions_with_a_millimetre_bone_do_not_spin_the_hips():
    # SFU: Spine sits 1 mm above Hips; its noisy direction used to set the hips' pitch per frame
    m = bvh.load(MOCAP / "sfu/0005_Jogging001.bvh")[:240]
    g, noisy = _noisy(m, 1.0)
    out, rep = recover(noisy, m)
    assert rep.extra["smooth_halflife"] is not None  # noisy: smoothed by itself
    assert not _fast(out).any(), np.argwhere(_fast(out))[:5]
    _, go = forward_kinematics(out)
    assert np.linalg.norm(go - g, axis=-1).mean() < 1.5


@needs_shared
def test_exact_positions_are_not_smoothed():
    m = bvh.load(MOCAP / "lafan1/walk4_subject1.bvh")[:60]
    g, _ = _noisy(m, 0.0)
    _, rep = recover(g, m)
    assert rep.extra["smooth_halflife"] is None and rep.extra["position_noise"] < 1e-6

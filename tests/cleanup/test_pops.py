"""Pop detector (jointlimits.cleanup.pops via tracking.detect_discontinuities): injected pops are found, the
quaternion cover does not matter, clean real clips give no cuts, `filter --detect` leaves a clean
clip alone and `filter` without --cuts/--detect is refused."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cleanup import tracking as TR
from jointlimits.cleanup.pops import detect_pops, one_frame_outliers, pop_scores
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Motion, Skeleton

from conftest import MOCAP, needs_shared


def _smooth(T: int = 400, J: int = 6, seed: int = 0) -> Motion:
    rng = np.random.default_rng(seed)
    offsets = np.tile([0.0, 10.0, 0.0], (J, 1))
    sk = Skeleton([f"j{k}" for k in range(J)], np.arange(-1, J - 1), offsets)
    t = np.arange(T) / 30.0
    aa = np.stack([0.8 * np.sin(t[:, None] * (0.7 + 0.4 * k) + rng.uniform(0, 6, size=3)) for k in range(J)], axis=1)
    pos = np.repeat(sk.offsets[None], T, axis=0)
    pos[:, 0] = np.stack([40 * t, 90 + 3 * np.sin(4 * t), 5 * np.cos(t)], axis=-1)
    return Motion(sk, quat.from_scaled_angle_axis(aa), pos, 1 / 30)


def _burst(m: Motion, j: int, s: int, k: int, degrees: float, axis=(0.3, 0.9, 0.3)) -> Motion:
    rot = m.rotations.copy()
    a = np.asarray(axis, float)
    r = quat.from_scaled_angle_axis(a / np.linalg.norm(a) * np.radians(degrees))
    rot[s : s + k, j] = quat.mul(r, rot[s : s + k, j])
    return m.with_rotations(rot)


def _near(cuts, frames, w: int = 2) -> bool:
    cuts = np.asarray(cuts)
    return all(cuts.size and np.min(np.abs(cuts - f)) <= w for f in frames)


def test_smooth_motion_has_no_cuts() -> None:
    m = _smooth()
    assert TR.detect_discontinuities(m).size == 0
    assert TR.discontinuity_scores(m).max() < 0.5


@pytest.mark.parametrize("k", [1, 2, 5, 10])
@pytest.mark.parametrize("degrees", [20.0, 45.0, 90.0])
def test_bursts_found_at_both_ends(k: int, degrees: float) -> None:
    m = _burst(_smooth(), 3, 200, k, degrees)
    cuts = TR.detect_discontinuities(m)
    assert _near(cuts, [200, 200 + k], 1), cuts
    assert np.all((np.abs(cuts - 200) <= 2) | (np.abs(cuts - 200 - k) <= 2)), cuts


def test_shared_spikes_and_clip_edges_need_more() -> None:
    # one joint jumping 25 degrees is a pop; two joints jumping together on the same frame are a
    # movement of the body and must jump further; a jump at the clip's first frames likewise
    one = _burst(_smooth(), 3, 200, 4, 25.0)
    assert _near(TR.detect_discontinuities(one), [200, 204], 1)
    both = _burst(one, 4, 200, 4, 25.0)
    assert TR.detect_discontinuities(both).size == 0
    big = _burst(_burst(_smooth(), 3, 200, 4, 60.0), 4, 200, 4, 60.0)
    assert _near(TR.detect_discontinuities(big), [200, 204], 1)
    edge = _burst(_smooth(), 3, 1, 3, 25.0)
    assert not np.any(TR.detect_discontinuities(edge) <= 3)
    assert _near(TR.detect_discontinuities(_burst(_smooth(), 3, 1, 3, 60.0)), [1, 4], 1)


def test_one_frame_flip_of_180_degrees_is_found() -> None:
    # the velocity out and back is the same rotation, only the midway outlier sees it
    m = _burst(_smooth(), 2, 150, 1, 180.0, axis=(0, 1, 0))
    assert np.degrees(one_frame_outliers(m.rotations)[150, 2]) > 150
    assert _near(TR.detect_discontinuities(m), [150, 151], 1)


def test_quaternion_cover_is_not_a_pop() -> None:
    m = _smooth()
    rot = m.rotations.copy()
    rot[100:104, 2] *= -1.0
    rot[250, 4] *= -1.0
    assert TR.detect_discontinuities(m.with_rotations(rot)).size == 0


def test_root_jump_found_and_positions_scored_in_metres() -> None:
    m = _smooth()
    pos = m.positions.copy()
    pos[300:, 0, 0] += 20.0  # 20 cm (centimetre clip) that stays
    cuts = TR.detect_discontinuities(m.with_rotations(m.rotations, pos))
    assert _near(cuts, [300], 1) and cuts.size <= 2
    _, ps = pop_scores(m.with_rotations(m.rotations, pos))
    assert ps[300, 0] > 1 and ps[:, 1:].max() == 0


def test_threshold_is_a_leniency_factor() -> None:
    m = _burst(_smooth(), 3, 200, 3, 30.0)
    s = TR.discontinuity_scores(m)
    assert TR.detect_discontinuities(m, threshold=float(s.max()) * 1.01).size == 0
    assert detect_pops(m).tolist() == TR.detect_discontinuities(m).tolist()


# ---------------------------------------------------------------------------------------------- real clips

CLEAN = [
    "bandai_namco/dataset-1_slash_normal_001.bvh",
    "perfume/A_test.bvh",
    "perfume/B_test.bvh",
    "cmu_cgspeed_mb/cmu_12_01_walk.bvh",
    "lafan1/walk4_subject1.bvh",
]


@pytest.fixture(scope="module")
def real():
    from jointlimits.io import bvh

    return {n: bvh.load(MOCAP / n) for n in CLEAN}


@needs_shared
@pytest.mark.parametrize("name", CLEAN)
def test_clean_real_clips_give_no_cuts(real, name) -> None:
    m = real[name]
    cuts = TR.detect_discontinuities(m)
    # Perfume and CMU start with another pose (a T-pose) on frame 0: the jump into frame 1 is real
    if name.startswith(("perfume", "cmu")):
        assert cuts.tolist() == [1]
        assert np.sum(np.degrees(quat.angle(m.rotations[0], m.rotations[1])) > 30) >= 2
        cuts = TR.detect_discontinuities(m[1:])
    assert cuts.size == 0, cuts


@needs_shared
@pytest.mark.parametrize("name", CLEAN[:2])
def test_injected_pops_found_in_real_clips(real, name) -> None:
    m = real[name][1:]
    rng = np.random.default_rng(7)
    F = m.num_frames
    found = 0
    trials = 12
    for _ in range(trials):
        s = int(rng.integers(20, F - 20))
        k = int(rng.integers(1, 11))
        j = int(rng.integers(0, m.num_joints))
        ax = rng.normal(size=3)
        mm = _burst(m, j, s, k, 45.0, axis=ax)
        found += _near(TR.detect_discontinuities(mm), [s, s + k])
    assert found >= trials - 1, (found, trials)


@needs_shared
def test_filter_detect_on_a_clean_clip_changes_nothing(tmp_path) -> None:
    from jointlimits.cli.filters import filter_command
    from jointlimits.io import bvh

    src = MOCAP / CLEAN[0]
    out = tmp_path / "f.bvh"
    r = CliRunner().invoke(filter_command, [str(src), "-o", str(out), "--detect"])
    assert r.exit_code == 0, r.output
    assert "0 frames changed" in r.output
    a, b = bvh.load(src), bvh.load(out)
    np.testing.assert_array_equal(a.rotations, b.rotations)
    np.testing.assert_array_equal(a.positions, b.positions)


def test_filter_without_cuts_or_detect_is_an_error(tmp_path) -> None:
    from jointlimits.cli.filters import filter_command
    from jointlimits.io import bvh

    clip = tmp_path / "a.bvh"
    bvh.save(clip, _smooth(T=60))
    out = tmp_path / "o.bvh"
    r = CliRunner().invoke(filter_command, [str(clip), "-o", str(out)])
    assert r.exit_code == 2 and "--detect" in r.output and len(r.output.strip().splitlines()) == 1
    assert not out.exists()

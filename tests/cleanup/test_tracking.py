"""Tests of jointlimits.cleanup.tracking (motion filter, splice, detector) and the filter/splice CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cleanup import tracking as TR
from jointlimits.errors import JointLimitsError
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Motion, Skeleton

from conftest import SHARED_MISSING

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
LAFAN = SHARED / "data" / "mocap" / "lafan1"
needs_lafan = pytest.mark.skipif(not (LAFAN / "walk4_subject1.bvh").exists(), reason=SHARED_MISSING)


@pytest.fixture(scope="module")
def clips() -> dict[str, Motion]:
    from jointlimits.io import bvh

    return {"walk": bvh.load(LAFAN / "walk4_subject1.bvh"), "dance": bvh.load(LAFAN / "dance1_subject1.bvh")}


def _synthetic(T: int = 300, J: int = 4, seed: int = 0) -> Motion:
    rng = np.random.default_rng(seed)
    sk = Skeleton([f"j{k}" for k in range(J)], np.arange(-1, J - 1), rng.normal(size=(J, 3)))
    t = np.arange(T) / 30.0
    aa = np.stack([0.6 * np.sin(t[:, None] * (1 + k) + rng.uniform(0, 6, size=3)) for k in range(J)], axis=1)
    rot = quat.from_scaled_angle_axis(aa)
    pos = np.repeat(sk.offsets[None], T, axis=0)
    pos[:, 0] = np.stack([30 * t, 90 + 2 * np.sin(3 * t), np.cos(t)], axis=-1)
    return Motion(sk, rot, pos, 1 / 30)


def _with_pop(m: Motion, at: int, angle: float = 1.0, shift: float = 15.0) -> Motion:
    rot = m.rotations.copy()
    rot[at:] = quat.mul(quat.from_scaled_angle_axis(np.array([0.0, angle, 0.0])), rot[at:])
    pos = m.positions.copy()
    pos[at:, 0] += shift
    return m.with_rotations(rot, pos)


# ----------------------------------------------------------------------------------------------
# synthetic


def test_no_cuts_returns_input_exactly() -> None:
    m = _synthetic()
    out = TR.filter_motion(m)
    np.testing.assert_array_equal(out.rotations, m.rotations)
    np.testing.assert_array_equal(out.positions, m.positions)
    assert out is not m and out.rotations is not m.rotations


def test_pop_is_removed_and_clean_frames_untouched() -> None:
    m = _with_pop(_synthetic(), 150)
    out = TR.filter_motion(m, cuts=[150])
    np.testing.assert_array_equal(out.rotations[:150], m.rotations[:150])
    np.testing.assert_array_equal(out.positions[:150], m.positions[:150])
    # far after the cut the filter has converged and snapped back onto the input
    np.testing.assert_array_equal(out.rotations[260:], m.rotations[260:])
    np.testing.assert_array_equal(out.positions[260:], m.positions[260:])
    raw_jump = TR.angular_speeds(m.rotations)[150].max()
    new_jump = TR.angular_speeds(out.rotations)[148:160].max()
    assert raw_jump > 0.9 and new_jump < 0.25 * raw_jump
    root_step = np.linalg.norm(np.diff(out.positions[145:160, 0], axis=0), axis=-1)
    assert root_step.max() < 5.0  # the 15-unit shift is spread over many frames (walk speed is 1/frame)
    np.testing.assert_allclose(np.linalg.norm(out.rotations, axis=-1), 1.0, atol=1e-12)


def test_double_cover_does_not_matter() -> None:
    m = _with_pop(_synthetic(seed=3), 120)
    rng = np.random.default_rng(5)
    flips = np.where(rng.random(m.rotations.shape[:2]) < 0.3, -1.0, 1.0)
    flipped = m.with_rotations(m.rotations * flips[..., None])
    a = TR.track_rotations(m.rotations, [120], m.frame_time)
    b = TR.track_rotations(flipped.rotations, [120], m.frame_time)
    np.testing.assert_allclose(np.abs(np.sum(a * b, axis=-1)), 1.0, atol=1e-10)
    # the output stays on the input's hemisphere
    assert np.all(np.sum(b * flipped.rotations, axis=-1) > 0)


def test_track_positions_batched_shapes_and_converges() -> None:
    T = 200
    p = np.cumsum(np.ones((T, 2, 3)), axis=0)
    p[100:] += 10.0
    out = TR.track_positions(p, [100], 1 / 30)
    assert out.shape == p.shape
    np.testing.assert_array_equal(out[:100], p[:100])
    assert np.max(np.abs(np.diff(out, axis=0) - 1.0)) < 5.0
    assert np.max(np.abs(out[195:] - p[195:])) < 1e-9


def test_clipping_tames_unknown_jumps() -> None:
    m = _with_pop(_synthetic(), 150)
    out = TR.filter_motion(m, v_max=8.0, a_max=200.0, position_v_max=100.0, position_a_max=3000.0)
    assert TR.angular_speeds(out.rotations)[150].max() < 0.5 * TR.angular_speeds(m.rotations)[150].max()
    assert np.all(np.isfinite(out.rotations))


def test_detector_finds_synthetic_pop_only() -> None:
    m = _synthetic(T=400)
    assert TR.detect_discontinuities(m).size == 0
    popped = _with_pop(m, 222, angle=0.5, shift=0.0)
    np.testing.assert_array_equal(TR.detect_discontinuities(popped), [222])
    out = TR.filter_motion(popped, detect=True)
    assert TR.angular_speeds(out.rotations)[222].max() < 0.5 * TR.angular_speeds(popped.rotations)[222].max()


@pytest.mark.parametrize(
    "call",
    [
        lambda m: TR.filter_motion(m, cuts=[10_000]),
        lambda m: TR.filter_motion(m, cuts=[-1]),
        lambda m: TR.filter_motion(m, cuts=[1.5]),
        lambda m: TR.filter_motion(m, cuts=[3], halflife=-1.0),
        lambda m: TR.detect_discontinuities(m, threshold=0.0),
        lambda m: TR.track_rotations(np.zeros((5, 2, 3)), [1]),
        lambda m: TR.track_rotations(np.full((5, 2, 4), np.nan), [1]),
        lambda m: TR.track_rotations(m.rotations, [1], dt=0.0),
        lambda m: TR.track_positions(np.array([[0.0], [np.nan]]), [1]),
        lambda m: TR.splice(m, m, at=0),
        lambda m: TR.splice(
            m,
            Motion(
                Skeleton(["x"], [-1], np.zeros((1, 3))), np.tile([1.0, 0, 0, 0], (3, 1, 1)), np.zeros((3, 1, 3)), 1 / 30
            ),
        ),
    ],
)
def test_bad_input_raises_library_error(call) -> None:
    with pytest.raises(JointLimitsError) as ei:
        call(_synthetic(T=20))
    assert isinstance(ei.value, ValueError)


# ----------------------------------------------------------------------------------------------
# real clips


@needs_lafan
@pytest.mark.parametrize("pair", [("walk", 0, 600, "dance", 1000, 1600), ("dance", 0, 900, "walk", 2000, 2600)])
def test_splice_real_clips(clips, pair) -> None:
    na, a0, a1, nb, b0, b1 = pair
    a, b = clips[na][a0:a1], clips[nb][b0:b1]
    at = a.num_frames
    raw = TR.splice(a, b, smooth=False)
    out = TR.splice(a, b, smooth=True)
    assert out.num_frames == a.num_frames + b.num_frames
    p99 = np.percentile(
        np.concatenate([TR.angular_speeds(a.rotations)[1:].ravel(), TR.angular_speeds(b.rotations)[1:].ravel()]), 99
    )
    raw_jump = TR.angular_speeds(raw.rotations)[at].max()
    new_jump = TR.angular_speeds(out.rotations)[at : at + 2].max()
    assert raw_jump > p99, "the raw join should be a visible pop"
    assert new_jump < p99, (new_jump, p99)
    # frames far from the join equal the input bit for bit (before: A, after: the aligned B)
    np.testing.assert_array_equal(out.rotations[:at], a.rotations)
    np.testing.assert_array_equal(out.positions[:at], a.positions)
    far = at + int(round(5.0 / a.frame_time))
    np.testing.assert_array_equal(out.rotations[far:], raw.rotations[far:])
    np.testing.assert_array_equal(out.positions[far:], raw.positions[far:])
    np.testing.assert_allclose(np.linalg.norm(out.rotations, axis=-1), 1.0, atol=1e-12)
    # the detector finds the raw join
    assert at in TR.detect_discontinuities(raw).tolist()


@needs_lafan
@pytest.mark.parametrize("name", ["walk", "dance"])
def test_clean_clip_is_returned_unchanged(clips, name) -> None:
    m = clips[name]
    assert TR.detect_discontinuities(m).size == 0  # no false positives on clean capture
    out = TR.filter_motion(m, detect=True)
    np.testing.assert_allclose(out.rotations, m.rotations, atol=1e-6, rtol=0)
    np.testing.assert_allclose(out.positions, m.positions, atol=1e-6, rtol=0)


@needs_lafan
def test_cut_on_clean_clip_converges_back(clips) -> None:
    """A cut where nothing jumps perturbs the spring briefly; after convergence it tracks within 1e-6."""
    m = clips["walk"][:900]
    out = TR.filter_motion(m, cuts=[300])
    np.testing.assert_array_equal(out.rotations[:300], m.rotations[:300])
    d = np.abs(out.rotations - m.rotations).max(axis=(1, 2))
    assert d[300:310].max() > 0  # the cut frame really was handled differently
    assert d[300 + int(3.0 / m.frame_time) :].max() <= 1e-6


# ----------------------------------------------------------------------------------------------
# CLI


@pytest.fixture()
def bvh_files(tmp_path: Path) -> tuple[Path, Path]:
    from jointlimits.io import bvh

    m = _synthetic(T=200)
    a, b = tmp_path / "a.bvh", tmp_path / "b.bvh"
    bvh.save(a, m[:120])
    bvh.save(b, _with_pop(m, 0, angle=0.8)[120:])
    return a, b


def test_cli_splice_and_filter(bvh_files, tmp_path: Path, monkeypatch) -> None:
    from jointlimits.cli.filters import filter_command, splice_command
    from jointlimits.io import bvh

    a, b = bvh_files
    runner = CliRunner()
    out = tmp_path / "s.bvh"
    fig = tmp_path / "s.png"
    from jointlimits.viz import plots

    figs = []
    make = plots._figure
    monkeypatch.setattr(plots, "_figure", lambda *a, **k: figs.append(make(*a, **k)) or figs[-1])
    r = runner.invoke(splice_command, [str(a), str(b), "-o", str(out), "--at", "100", "--plot", str(fig)])
    assert r.exit_code == 0, r.output
    s = bvh.load(out)
    assert s.num_frames == 100 + 80
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for ax in figs[0].axes[:2]:  # the rotation and speed panels span the whole result (#38)
        x0, x1 = ax.get_xlim()
        assert x0 <= 0 and x1 >= s.num_frames - 1, (x0, x1)
        assert max(line.get_xdata()[-1] for line in ax.get_lines()) == s.num_frames - 1
    raw = tmp_path / "raw.bvh"
    assert runner.invoke(splice_command, [str(a), str(b), "-o", str(raw), "--no-smooth", "-q"]).exit_code == 0
    f = tmp_path / "f.bvh"
    r = runner.invoke(filter_command, [str(raw), "-o", str(f), "--cuts", "120", "--halflife", "0.3"])
    assert r.exit_code == 0, r.output
    fm, rm = bvh.load(f), bvh.load(raw)
    assert TR.angular_speeds(fm.rotations)[120].max() < 0.5 * TR.angular_speeds(rm.rotations)[120].max()
    r = runner.invoke(filter_command, [str(raw), "-o", str(tmp_path / "d.bvh"), "--detect"])
    assert r.exit_code == 0 and "detected 1" in r.output


def test_cli_errors_exit_2_and_never_overwrite_input(bvh_files, tmp_path: Path) -> None:
    from jointlimits.cli.filters import filter_command, splice_command

    a, b = bvh_files
    before = a.read_bytes()
    runner = CliRunner()
    r = runner.invoke(filter_command, [str(a), "-o", str(a), "--cuts", "5"])
    assert r.exit_code == 2 and a.read_bytes() == before
    r = runner.invoke(filter_command, [str(a), "-o", str(tmp_path / "x.bvh"), "--cuts", "5,zz"])
    assert r.exit_code == 2 and "--cuts" in r.output
    r = runner.invoke(filter_command, [str(a), "-o", str(tmp_path / "x.bvh"), "--cuts", "99999"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    r = runner.invoke(splice_command, [str(a), str(tmp_path / "missing.bvh"), "-o", str(tmp_path / "y.bvh")])
    assert r.exit_code == 2
    assert not (tmp_path / "x.bvh").exists() and not (tmp_path / "y.bvh").exists()
    r = runner.invoke(filter_command, [str(a), "-o", str(a), "--cuts", "5", "--force"])
    assert r.exit_code == 0  # on purpose


def test_plot_channel_before_after(tmp_path: Path) -> None:
    from jointlimits.cli.filters import plot_channel_before_after

    m = _with_pop(_synthetic(), 150)
    out = TR.filter_motion(m, cuts=[150])
    p = plot_channel_before_after(m, out, "j1", tmp_path / "p.png", frames=(100, 250), cuts=[150])
    assert p.stat().st_size > 5000 and p.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(JointLimitsError):
        plot_channel_before_after(m, out, "nope", tmp_path / "q.png")

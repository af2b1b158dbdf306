"""Resampling: exact at the source rate and on its divisors, slerp between frames, the CLI."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation, Slerp

from jointlimits import io as motion_io
from jointlimits.cli import main
from jointlimits.errors import SkeletonError
from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.motion.resample import resample, sample_times

from conftest import MOCAP, needs_shared


def rot_err(a: np.ndarray, b: np.ndarray) -> float:
    d = quat.inv_mul(a, b)
    return float(np.max(2 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))))


@pytest.fixture(scope="module")
def clip(clips):
    return clips[0].frames(0, 91)  # 30 fps, 3 s


def test_same_rate_is_unchanged_and_divisors_pick_frames(clip):
    same = resample(clip, clip.fps)
    assert np.array_equal(same.rotations, clip.rotations) and np.array_equal(same.positions, clip.positions)
    half = resample(clip, clip.fps / 3)
    assert half.num_frames == 31 and half.frame_time == pytest.approx(3 * clip.frame_time)
    assert np.array_equal(half.rotations, clip.rotations[::3])
    assert np.array_equal(half.positions, clip.positions[::3])


def test_upsampling_slerps_like_scipy(clip):
    up = resample(clip, 75.0)
    t_src = np.arange(clip.num_frames) * clip.frame_time
    t = sample_times(clip, 75.0)
    assert up.num_frames == t.size and t[-1] <= t_src[-1] + 1e-12
    for j in (0, 3, 7):
        ref = Slerp(t_src, Rotation.from_quat(clip.rotations[:, j][:, [1, 2, 3, 0]]))(t).as_quat()[:, [3, 0, 1, 2]]
        assert rot_err(up.rotations[:, j], ref) < 1e-9
    for k in range(3):
        assert np.allclose(up.positions[:, 0, k], np.interp(t, t_src, clip.positions[:, 0, k]))
    assert np.allclose(np.linalg.norm(up.rotations, axis=-1), 1.0)


@settings(max_examples=30, deadline=None)
@given(st.floats(1.0, 240.0))
def test_any_rate_stays_on_the_arc_between_neighbours(fps):
    rng = np.random.default_rng(0)
    from jointlimits import Motion, Skeleton

    sk = Skeleton(["a", "b"], [-1, 0], [[0, 0, 0], [0, 1, 0]])
    q = quat.normalize(rng.normal(size=(12, 2, 4)))
    m = Motion(sk, q, np.zeros((12, 2, 3)), 0.1)
    r = resample(m, fps)
    t = sample_times(m, fps)
    i = np.minimum((t / 0.1 + 1e-9).astype(int), 10)
    # on the shortest arc: angle to the two neighbours adds up to the angle between them
    a, b = m.rotations[i], m.rotations[i + 1]
    assert np.allclose(quat.angle(a, r.rotations) + quat.angle(r.rotations, b), quat.angle(a, b), atol=1e-7)


def test_bad_rate_is_refused(clip):
    for fps in (0.0, -5.0, float("nan"), float("inf")):
        with pytest.raises(SkeletonError, match="fps"):
            resample(clip, fps)


def test_resample_command(tmp_path, clip):
    bvh.save(tmp_path / "in.bvh", clip)
    r = CliRunner()
    res = r.invoke(main, ["resample", str(tmp_path / "in.bvh"), "--fps", "10", "-o", str(tmp_path / "out.glb")])
    assert res.exit_code == 0, res.output
    assert "91 frames at 30 fps -> 31 frames at 10 fps" in res.output
    out = motion_io.load(tmp_path / "out.glb")
    assert out.num_frames == 31 and out.fps == pytest.approx(10)
    assert rot_err(out.rotations, clip.rotations[::3]) < 1e-6
    res = r.invoke(main, ["resample", str(tmp_path / "in.bvh"), "--fps", "-1", "-o", str(tmp_path / "x.bvh")])
    assert res.exit_code == 2 and "fps" in res.output and not (tmp_path / "x.bvh").exists()
    res = r.invoke(main, ["resample", str(tmp_path / "in.bvh"), "--fps", "10", "-o", str(tmp_path / "in.bvh")])
    assert res.exit_code == 2 and "--force" in res.output


@needs_shared
def test_real_clip_120_to_30_and_back_keeps_shape():
    m = bvh.load(MOCAP / "cmu_cgspeed_mb" / "01_01.bvh").frames(0, 481)
    down = resample(m, 30.0)
    back = resample(down, m.fps)
    n = min(back.num_frames, m.num_frames)
    # frames kept by both are (nearly) unchanged; in-between frames follow the motion within a few degrees
    err = quat.angle(back.rotations[:n], m.rotations[:n])
    assert np.median(err) < np.radians(2.0)
    assert down.fps == 30.0 and abs(down.duration - m.duration) < 2 * down.frame_time

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


def _cut(src, dst, n: int):
    """The first n frames of a shared clip, byte for byte (header, line endings, number style)."""
    raw = src.read_bytes()
    head, rest = raw.split(b"Frames:", 1)
    count_line, rest = rest.split(b"\n", 1)
    ft_line, rest = rest.split(b"\n", 1)
    rows = rest.splitlines(keepends=True)[:n]
    eol = b"\r\n" if count_line.endswith(b"\r") else b"\n"
    dst.write_bytes(head + b"Frames: %d" % n + eol + ft_line + b"\n" + b"".join(rows))
    return dst


# rounded frame times (0.033333, 0.0083333, 0.008333), CRLF and LF, several conventions
REAL = [
    "lafan1/walk4_subject1.bvh",
    "cmu_cgspeed_mb/01_01.bvh",
    "sfu/0005_Jogging001.bvh",
    "bandai_namco/dataset-1_bow_normal_001.bvh",
]


@needs_shared
@pytest.mark.parametrize("name", REAL)
def test_real_clip_at_its_own_rate_is_the_same_file_and_half_rate_every_second_frame(tmp_path, name):
    src = _cut(MOCAP / name, tmp_path / "in.bvh", 121)
    m = bvh.load(src)
    fps = round(m.fps)
    assert fps in (30, 120) and m.fps != fps  # the frame time is written rounded
    bvh.save(tmp_path / "same.bvh", resample(m, fps), round_new=True)
    assert (tmp_path / "same.bvh").read_bytes() == src.read_bytes()
    bvh.save(tmp_path / "half.bvh", resample(m, fps / 2), round_new=True)
    raw, half = src.read_bytes(), (tmp_path / "half.bvh").read_bytes()
    head_rows = raw.split(b"Frame Time:")[1].splitlines(keepends=True)
    rows = head_rows[1:]
    rows_half = half.split(b"Frame Time:")[1].splitlines(keepends=True)
    assert rows_half[1:] == rows[::2] and len(rows_half) - 1 == 61
    # the frame time in the file's style: as many decimals, the half rate when read back
    tok, tok_half = head_rows[0].split()[0], rows_half[0].split()[0]
    assert len(tok_half.split(b".")[1]) == len(tok.split(b".")[1]) and round(1 / float(tok_half)) == fps // 2
    assert rows_half[0].endswith(b"\r\n") == head_rows[0].endswith(b"\r\n")
    assert half.split(b"MOTION")[0] == raw.split(b"MOTION")[0]  # the hierarchy's own bytes


@needs_shared
def test_interpolated_clip_keeps_crlf_and_the_files_decimals(tmp_path):
    src = _cut(MOCAP / "lafan1/walk4_subject1.bvh", tmp_path / "in.bvh", 61)
    res = CliRunner().invoke(main, ["resample", str(src), "--fps", "24", "-o", str(tmp_path / "out.bvh")])
    assert res.exit_code == 0, res.output
    assert "61 frames at 30 fps -> 49 frames at 24 fps" in res.output
    out = (tmp_path / "out.bvh").read_bytes()
    assert out.count(b"\n") == out.count(b"\r\n") and b"Frame Time: 0.041667\r\n" in out
    values = out.split(b"Frame Time:")[1].split()[1:]
    assert {len(v.split(b".")[1]) for v in values} == {6}  # the file's style: 6 decimals
    back = bvh.load(tmp_path / "out.bvh")
    ref = resample(bvh.load(src), 24)
    assert back.num_frames == 49 and rot_err(back.rotations, ref.rotations) < 1e-6


def test_nominal_rate_of_rounded_frame_times():
    from jointlimits.motion.resample import nominal_fps

    assert nominal_fps(1 / 0.033333) == 30.0 and nominal_fps(1 / 0.0083333) == 120.0
    assert nominal_fps(1 / 0.008333) == 120.0 and nominal_fps(1 / 0.008) == 125.0
    assert nominal_fps(29.97) == 29.97 and nominal_fps(0.5) == 0.5

"""Exact text (#14 item 5): unchanged values keep their tokens, the header and line endings stay,
changed values take the file's number style and stay near the original angles."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.io import bvh
from jointlimits.motion import quat

from conftest import MOCAP, needs_shared

#: one clip per skeleton convention of ../shared (the smaller ones)
ONE_PER_CONVENTION = [
    "adelaide/louise.bvh",
    "bandai_namco/dataset-1_bow_normal_001.bvh",
    "cmu_cgspeed_max/131_02.bvh",
    "cmu_cgspeed_mb/cmu_12_01_walk.bvh",
    "cmu_secondlife/61_05_scaled.bvh",
    "lafan1/push1_subject2.bvh",
    "perfume/B_test.bvh",
    "sfu/0005_SideSkip001.bvh",
]

TEXT = (
    "HIERARCHY\r\nROOT Hips\r\n{\r\n  OFFSET 0.000000 90.000000 0.000000\r\n"
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\r\n"
    "  JOINT Arm\r\n  {\r\n    OFFSET 10.000000 0.000000 0.000000\r\n    CHANNELS 3 Zrotation Yrotation Xrotation\r\n"
    "    End Site\r\n    {\r\n      OFFSET 10.000000 0.000000 0.000000\r\n    }\r\n  }\r\n}\r\n"
    "MOTION\r\nFrames: 4\r\nFrame Time: 0.033333\r\n"
    "0.000000 90.000000 -0.000027 -0 42.372200 179.500000  10.000000\t0.000000 -0.000000\r\n"
    "0.100000 90.000000 0.000000 0.000000 42.372200 -179.500000  12.000000\t0.000000 -0.000000\r\n"
    "\r\n"
    "0.200000 90.000000 0.000000 0.000000 42.372200 179.900000  14.000000\t0.000000 0.000000\r\n"
    "0.300000 90.000000 0.000000 0.000000 42.372200 -179.900000  16.000000\t0.000000 0.000000\r\n\r\n"
)


def test_unchanged_text_comes_back_byte_for_byte(tmp_path: Path):
    p = tmp_path / "a.bvh"
    p.write_bytes(TEXT.encode())
    m = bvh.load(p)
    out = tmp_path / "b.bvh"
    bvh.save(out, m)
    assert out.read_bytes() == p.read_bytes()
    assert bvh.dumps(bvh.loads(TEXT)) == TEXT


def test_changed_values_take_the_file_style(tmp_path: Path):
    p = tmp_path / "a.bvh"
    p.write_bytes(TEXT.encode())
    m = bvh.load(p)
    m.rotations[:, 1] = quat.mul(m.rotations[:, 1], quat.from_angle_axis(0.1, [0.0, 0.0, 1.0]))
    out = tmp_path / "b.bvh"
    bvh.save(out, m)
    text = out.read_bytes().decode()
    src_rows = [l for l in TEXT.split("\r\n") if re.match(r"-?[0-9]", l)]
    rows = [l for l in text.split("\r\n") if re.match(r"-?[0-9]", l)]
    assert "\n" not in text.replace("\r\n", "")  # CRLF kept everywhere
    assert text.split("MOTION")[0] == TEXT.split("MOTION")[0]  # header verbatim
    for a, b in zip(src_rows, rows):
        ta, tb = a.split(), b.split()
        assert ta[:6] == tb[:6]  # the root's tokens as they were (-0.000027, -0, 42.372200, ...)
        assert tb[6] != ta[6] and re.fullmatch(r"-?[0-9]+\.[0-9]{6,}", tb[6])  # changed: fixed, >= 6 decimals
        assert "\t" in b  # separators copied
    back = bvh.load(out)
    np.testing.assert_allclose(back.rotations, m.rotations, atol=1e-12)  # Euler angles read back exactly
    np.testing.assert_array_equal(bvh.channel_data(back), bvh.channel_data(m))


def test_changed_euler_angles_stay_near_the_original():
    m = bvh.loads(TEXT)
    before = bvh.channel_data(m)
    # the root's X rotation crosses +-180 in the file; a small change keeps the file's own wraps
    m.rotations[:, 0] = quat.mul(m.rotations[:, 0], quat.from_angle_axis(0.05, [0.0, 1.0, 0.0]))
    after = bvh.channel_data(m)
    assert np.abs(after[:, 3:6] - before[:, 3:6]).max() < 10.0
    assert np.abs(after[:, 3:6]).max() <= 180.0 + 10.0


@needs_shared
@pytest.mark.parametrize("clip", ONE_PER_CONVENTION)
def test_shared_clips_round_trip_and_own_limits_change_nothing(clip: str, tmp_path: Path):
    src = MOCAP / clip
    m = bvh.load(src)
    out = tmp_path / "rt.bvh"
    bvh.save(out, m)
    assert out.read_bytes() == src.read_bytes()
    # fit with the defaults and apply to the same clip: a byte-identical file
    lim, limited = tmp_path / "l.json", tmp_path / "o.bvh"
    r = CliRunner().invoke(main, ["fit", str(src), "-o", str(lim), "-q"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["apply", str(lim), str(src), "-o", str(limited), "--json"])
    assert r.exit_code == 0, r.output
    assert limited.read_bytes() == src.read_bytes()


@needs_shared
def test_line_endings_of_the_file(tmp_path: Path):
    lf = (MOCAP / "lafan1" / "push1_subject2.bvh").read_bytes()  # CRLF
    assert b"\r\n" in lf
    for name, data in (("lf.bvh", lf.replace(b"\r\n", b"\n")), ("crlf.bvh", lf)):
        p = tmp_path / name
        p.write_bytes(data)
        m = bvh.load(p)[:50]  # a slice keeps the rows' own text
        m.rotations[:, 3] = quat.mul(m.rotations[:, 3], quat.from_angle_axis(0.2, [1.0, 0.0, 0.0]))
        out = tmp_path / ("o" + name)
        bvh.save(out, m)
        text = out.read_bytes()
        assert (b"\r\n" in text) == (name == "crlf.bvh")
        assert bvh.load(out).num_frames == 50
        np.testing.assert_allclose(bvh.load(out).rotations, m.rotations, atol=1e-12)


def test_a_source_changed_on_disk_is_not_used(tmp_path: Path):
    p = tmp_path / "a.bvh"
    p.write_bytes(TEXT.encode())
    m = bvh.load(p)
    p.write_bytes(TEXT.replace("42.372200", "40.000000").encode())
    os.utime(p, ns=(1, 1))
    out = tmp_path / "b.bvh"
    bvh.save(out, m)
    back = bvh.load(out)
    # the original tokens are gone: the rotations are written from the quaternions (same rotations)
    assert np.all(np.abs(np.sum(back.rotations * m.rotations, -1)) > 1 - 1e-12)
    assert "40.000000" not in out.read_text()


def test_splice_and_resample_of_a_clip_whose_file_changed(tmp_path: Path):
    from jointlimits.cleanup.tracking import splice
    from jointlimits.motion.resample import resample

    p = tmp_path / "a.bvh"
    p.write_bytes(TEXT.encode())
    m = bvh.load(p)
    p.write_bytes(TEXT.replace("42.372200", "40.000000").encode())
    os.utime(p, ns=(1, 1))
    joined = splice(m, m, smooth=False, align=False)  # the original angles are gone: from the rotations
    assert joined.source_euler is None and joined.num_frames == 8
    np.testing.assert_array_equal(joined.rotations[:4], m.rotations)
    same = resample(m, m.fps)
    assert same.source_euler is None
    np.testing.assert_array_equal(same.rotations, m.rotations)

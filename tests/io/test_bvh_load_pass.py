"""The compiled load pass (text straight into positions, quaternions, fingerprints and row ranges)
gives the clip the checked block-by-block path gives, bit for bit, for every kind of joint."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits._native import _core
from jointlimits.io import bvh
from jointlimits.io.bvh import _read
from jointlimits.io.bvh._source import _qhash
from jointlimits.motion import quat

from conftest import MOCAP, needs_shared

# a root with positions and three rotations, a joint of two rotation axes, one of two axes and
# a position between them, one of a single axis, and one without channels
_TEXT = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT A
  {
    OFFSET 1 2 3
    CHANNELS 2 Xrotation Zrotation
    JOINT B
    {
      OFFSET 0 1 0
      CHANNELS 3 Zrotation Xposition Yrotation
      JOINT C
      {
        OFFSET 0 1 0
        CHANNELS 1 Yrotation
        JOINT D
        {
          OFFSET 0 0.5 0
          CHANNELS 0
          End Site
          {
            OFFSET 0 1 0
          }
        }
      }
    }
  }
}
MOTION
Frames: 40
Frame Time: 0.0333333
"""


def _text() -> str:
    rng = np.random.default_rng(5)
    rows = [" ".join(f"{v:.4f}" for v in rng.uniform(-400, 400, 12)) for _ in range(40)]
    return _TEXT + "\n".join(rows) + "\n"


def _checked_only(monkeypatch):
    monkeypatch.setattr(_read._MotionBuilder, "add_text", lambda self, block, base, max_rows: None)


def _same(a, b):
    assert a.rotations.tobytes() == b.rotations.tobytes()
    assert a.positions.tobytes() == b.positions.tobytes()
    sa, sb = a.source_text, b.source_text
    assert sa is not None and sb is not None
    assert np.array_equal(sa.rows, sb.rows)
    assert np.array_equal(sa.hashes, sb.hashes)


def test_every_kind_of_joint_equals_the_checked_path(monkeypatch):
    text = _text()
    fast = bvh.loads(text)
    _checked_only(monkeypatch)
    slow = bvh.loads(text)
    _same(fast, slow)
    assert bvh.dumps(fast) == text  # unchanged channels keep the file's own text


@needs_shared
def test_clips_of_every_convention_equal_the_checked_path(monkeypatch):
    clips = [min(d.glob("*.bvh"), key=lambda p: p.stat().st_size) for d in sorted(MOCAP.iterdir()) if d.is_dir()]
    fast = [bvh.load(p) for p in clips]
    _checked_only(monkeypatch)
    for p, f in zip(clips, fast):
        _same(f, bvh.load(p))


def test_fingerprint_is_the_python_one():
    q = np.random.default_rng(2).normal(size=(50, 4))
    q[0] = (1.0, 0.0, 0.0, 0.0)
    out = np.empty((50, 1, 4))
    hashes = np.empty((50, 1), np.uint64)
    ranges = np.empty((50, 2), np.int64)
    # a single 3-axis joint whose angles come back as the quaternions above
    ang = quat.to_euler(q / np.linalg.norm(q, axis=-1, keepdims=True), "zxy", degrees=True)
    text = "".join(" ".join(repr(float(v)) for v in row) + "\n" for row in ang).encode()
    i64 = np.int64
    rows, lines = _core.bvh_load_rows(
        text, 3, np.zeros((1, 3)), np.zeros(0, i64), np.zeros(0, i64), np.array([0], i64),
        np.array([0, 1, 2], i64), np.array([2, 0, 1], i64), np.zeros(0, i64),
        np.empty((50, 1, 3)), out, hashes, ranges, np.empty((50, 0)), 0, 50, 7,
    )  # fmt: skip
    assert (rows, lines) == (50, 50)
    assert np.array_equal(hashes[:, 0], _qhash(out[:, 0]))
    assert out[:, 0].tobytes() == quat.from_euler_axes(ang, "zxy", degrees=True).tobytes()
    assert ranges[0, 0] == 7 and ranges[-1, 1] == 7 + len(text)


@pytest.mark.parametrize("max_rows", [0, 39])
def test_more_rows_than_allowed_go_to_the_checked_path(max_rows):
    body = _text().split("Frame Time: 0.0333333\n")[1].encode()
    i64 = np.int64
    rows, _ = _core.bvh_load_rows(
        body, 12, np.zeros((5, 3)), np.zeros(0, i64), np.zeros(0, i64), np.zeros(0, i64), np.zeros(0, i64),
        np.zeros(0, i64), np.zeros(0, i64), np.empty((40, 5, 3)), np.empty((40, 5, 4)),
        np.empty((40, 5), np.uint64), np.empty((40, 2), np.int64), np.empty((40, 0)), 0, max_rows, 0,
    )  # fmt: skip
    assert rows == -1


def test_degree_sines_match_radians():
    a = np.concatenate(
        [np.random.default_rng(3).uniform(-1e4, 1e4, (20000, 3)), np.arange(-720, 721, 15.0)[:, None].repeat(3, 1)]
    )
    q = quat.from_euler_axes(a, "xyz", degrees=True)
    r = quat.from_euler_axes(np.deg2rad(a), "xyz")
    assert np.abs(q - r).max() < 1e-12
    # exact at the quadrant angles
    e = quat.from_euler_axes(np.array([[180.0, 0.0, 0.0]]), "xyz", degrees=True)[0]
    assert e[0] == 0.0 and e[1] == 1.0

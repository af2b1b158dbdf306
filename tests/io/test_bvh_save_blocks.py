"""save_blocks writes, block by block, exactly the file save writes for the whole transformed clip
(the Euler unwrapping carried across blocks), and declines what it cannot write that way."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jointlimits.io import bvh
from jointlimits.io.bvh import _write
from jointlimits.motion import quat

from conftest import MOCAP, needs_shared


def _turn(m):
    """A per-frame change: large turns (past 180 degrees from the source) that depend on each
    frame's own rotations, with the frames where the hips face forward left exact."""
    q = m.rotations
    ang = np.deg2rad(400.0 * q[..., 1:2] + 200.0 * q[..., 2:3])
    axis = np.array([0.0, 0.6, 0.8])
    r = quat.mul(q, quat.from_angle_axis(ang[..., 0], np.broadcast_to(axis, q.shape[:-1] + (3,))))
    keep = np.abs(q[:, :1, 0]) > 0.9  # [F, 1]
    return m.with_rotations(np.where(keep[..., None], q, r))


@needs_shared
@pytest.mark.parametrize("conv", ["lafan1", "bandai_namco", "cmu_cgspeed_max"])
def test_blocks_equal_the_whole_save(tmp_path, monkeypatch, conv):
    src = sorted((MOCAP / conv).glob("*.bvh"))[0]
    raw = src.read_bytes()
    clip = tmp_path / "clip.bvh"
    clip.write_bytes(raw)
    m = bvh.load(clip).frames(0, 700)
    bvh.save(clip, m)  # a 700-frame file of the convention's own number style
    m = bvh.load(clip)
    monkeypatch.setattr(_write, "_ROWS_PER_WRITE", 64)
    bvh.save(tmp_path / "whole.bvh", _turn(m))
    for block in (64, 128, 704):
        assert bvh.save_blocks(tmp_path / "blocks.bvh", m, _turn, block_frames=block)
        assert (tmp_path / "blocks.bvh").read_bytes() == (tmp_path / "whole.bvh").read_bytes(), block
    assert bvh.save_blocks(tmp_path / "same.bvh", m, lambda b: b, block_frames=128)
    assert (tmp_path / "same.bvh").read_bytes() == clip.read_bytes()


def test_declines_what_it_cannot_write_blockwise(tmp_path):
    from jointlimits.motion.procedural import range_of_motion

    m = range_of_motion(seconds=1.0, fps=30)
    assert not bvh.save_blocks(tmp_path / "a.bvh", m, lambda b: b)  # no source file
    clip = tmp_path / "c.bvh"
    bvh.save(clip, m)
    m = bvh.load(clip)
    assert not bvh.save_blocks(tmp_path / "b.bvh", m, lambda b: b.frames(0, 1))  # not per frame
    assert not bvh.save_blocks(tmp_path / "b.bvh", m, lambda b: dataclasses.replace(b, frame_time=0.5))
    assert not bvh.save_blocks(tmp_path / "b.bvh", m, lambda b: dataclasses.replace(b, source_text=None))
    assert not (tmp_path / "b.bvh").exists()

"""Readers refuse what the audit of #25 found, each with its own error class (the fuzzers,
scripts/fuzz_*.py, run thousands more)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from jointlimits._native import _core
from jointlimits.errors import BVHError, FormatError, LimitsError
from jointlimits.io import amass, bvh, gltf
from jointlimits.limits import JointLimits
from jointlimits.motion import procedural


@pytest.fixture(scope="module")
def clip():
    return procedural.range_of_motion(seconds=1.0)


def test_coupled_weights_of_a_nan_point_index_an_existing_cell():
    # a NaN parent reference made this index cells[] out of bounds (SIGSEGV)
    cells = np.arange(8, dtype=np.int64).reshape(2, 2, 2)
    vp = np.array([[np.nan, 0.0, 0.0], [np.inf, -np.inf, 1e308]])
    ids, ws = np.empty((2, 8), np.int64), np.empty((2, 8))
    _core.coupled_weights(vp, np.zeros(3), 0.1, cells, ids, ws)
    assert ids.min() >= 0 and ids.max() < 8
    with pytest.raises(ValueError, match="cell"):
        _core.coupled_weights(vp, np.zeros(3), 5e-324, cells, ids, ws)


def test_limits_files_out_of_proportion_are_refused(tmp_path, clip):
    path = tmp_path / "l.json"
    JointLimits.fit(clip, shape="kdop").save(path)
    d = json.loads(path.read_text())
    e = next(e for e in d["joints"] if e["limit"].get("shape", {}).get("kind") == "kdop")
    e.pop("compiled")
    e["limit"]["shape"].update(axes=[[1.0, 0, 0]] * 150, mins=[-1.0] * 150, maxs=[1.0] * 150)
    (tmp_path / "k.json").write_text(json.dumps(d))
    with pytest.raises(LimitsError, match="k-DOP axes"):
        JointLimits.load(tmp_path / "k.json")
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(LimitsError, match="not a regular file"):
        JointLimits.load(tmp_path / "fifo.json")


def test_gltf_cycles_and_bad_indices_are_format_errors(tmp_path, clip):
    gltf.save(tmp_path / "c.gltf", clip[:5])
    d = json.loads((tmp_path / "c.gltf").read_text())
    d["nodes"][1]["children"] = [0]
    (tmp_path / "cycle.gltf").write_text(json.dumps(d))
    with pytest.raises(FormatError, match="parent|cycle"):
        gltf.load(tmp_path / "cycle.gltf")
    d = json.loads((tmp_path / "c.gltf").read_text())
    d["accessors"][0]["bufferView"] = 99
    (tmp_path / "bv.gltf").write_text(json.dumps(d))
    with pytest.raises(FormatError, match="bufferView"):
        gltf.load(tmp_path / "bv.gltf")


def test_truncated_amass_npz_is_a_format_error(tmp_path):
    np.savez(tmp_path / "a.npz", poses=np.zeros((4, 156)), trans=np.zeros((4, 3)), mocap_framerate=120.0)
    data = (tmp_path / "a.npz").read_bytes()
    (tmp_path / "t.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError, match="not a readable .npz"):
        amass.load(tmp_path / "t.npz")
    np.savez(tmp_path / "n.npz", poses=np.zeros((4, 156)), trans=np.full((4, 3), np.nan), mocap_framerate=120.0)
    with pytest.raises(FormatError, match="trans"):
        amass.load(tmp_path / "n.npz")


def test_bvh_with_cr_only_line_ends_reads_like_lf(tmp_path, clip):
    bvh.save(tmp_path / "lf.bvh", clip[:3])
    (tmp_path / "cr.bvh").write_bytes((tmp_path / "lf.bvh").read_bytes().replace(b"\n", b"\r"))
    a, b = bvh.load(tmp_path / "lf.bvh"), bvh.load(tmp_path / "cr.bvh")
    assert np.array_equal(a.rotations, b.rotations) and a.skeleton.names == b.skeleton.names


def test_bvh_offset_of_1e308_is_refused():
    text = (
        "HIERARCHY\nROOT a\n{\nOFFSET 1e308 0 0\nCHANNELS 3 Xposition Yposition Zposition\n}\n"
        "MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0\n"
    )
    with pytest.raises(BVHError, match="offset"):
        bvh.loads(text)

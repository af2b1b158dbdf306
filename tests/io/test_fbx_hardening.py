"""#39: what the FBX fuzzer (scripts/fuzz_fbx.py) found, checked without Blender: binary records
whose counts or array lengths Blender's parser would trust (gigabytes allocated before it fails),
a malformed ``jointlimits`` property, a frame rate of 0, a FIFO; each is a one-line FormatError."""

from __future__ import annotations

import json
import os
import struct
import sys

import numpy as np
import pytest

from jointlimits.errors import FormatError
from jointlimits.io import fbx

MAGIC = b"Kaydara FBX Binary  \x00\x1a\x00"


def _record(name: bytes, props: bytes, nprops: int, kids: bytes = b"", start: int = 27, lie: int = 0) -> bytes:
    """One FBX 7400 node record at byte ``start`` (``lie`` is added to its end offset)."""
    body = name + props + (kids + bytes(13) if kids else b"")
    end = start + 13 + len(body) + lie
    return struct.pack("<IIIB", end, nprops, len(props), len(name)) + body


def _file(records: bytes) -> bytes:
    return MAGIC + struct.pack("<I", 7400) + records + bytes(13) + bytes(160)


def _array(code: bytes, n: int, values: bytes) -> bytes:
    return code + struct.pack("<III", n, 0, len(values)) + values


def test_valid_records_pass(tmp_path):
    f = tmp_path / "a.fbx"
    props = b"I" + struct.pack("<i", 7) + _array(b"d", 2, struct.pack("<2d", 1.0, 2.0))
    f.write_bytes(_file(_record(b"Node", props, 2)))
    fbx.check_binary(f)
    (tmp_path / "t.fbx").write_text("; FBX 7.4.0 project file (ASCII: left to Blender's own message)\n")
    fbx.check_binary(tmp_path / "t.fbx")


@pytest.mark.parametrize(
    "what,data,match",
    [
        ("property count", _file(_record(b"N", b"I\0\0\0\0", 2**31 + 7)), "declares 2147483655 properties"),
        ("end offset past the file", _file(_record(b"N", b"I\0\0\0\0", 1, lie=10**6)), "end lies outside"),
        ("end offset before its properties", _file(_record(b"N", b"I\0\0\0\0", 1, lie=-3)), "end lies outside"),
        ("array length", _file(_record(b"N", _array(b"d", 2**31, b"\0" * 16), 1)), "memory budget"),
        ("unknown type", _file(_record(b"N", b"Q\0\0\0\0", 1)), "unknown property type"),
        ("string length", _file(_record(b"N", b"S" + struct.pack("<I", 2**30) + b"ab", 1)), "runs past"),
        ("cut in the header", MAGIC[:21] + b"\x1a", "ends inside its header"),
        ("cut in a record", _file(_record(b"N", b"I\0\0\0\0", 1))[:35], "runs past the end"),
    ],
)
def test_records_that_lie_are_refused_before_blender(tmp_path, what, data, match):
    f = tmp_path / "a.fbx"
    f.write_bytes(data)
    with pytest.raises(FormatError, match=match) as e:
        fbx.check_binary(f)
    assert "\n" not in str(e.value) and str(f) in str(e.value), what


def _arrays(custom: str = "", fps: float = 30.0) -> dict:
    J, F = 3, 4
    rest = np.tile(np.eye(4), (J, 1, 1))
    rest[1:, 1, 3] = [1.0, 2.0]
    pose = np.tile(rest, (F, 1, 1, 1))
    return {
        "names": ["a", "b", "c"],
        "parents": np.array([-1, 0, 1]),
        "rest": rest,
        "global_pose": pose,
        "fps": fps,
        "custom": custom,
    }


GOOD = {
    "frame_time": 0.05,
    "channels": [["Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"]]
    + [["Zrotation", "Yrotation", "Xrotation"]] * 2,
    "end_sites": [[2, [0.0, 1.0, 0.0]]],
    "names": ["A", "B", "C"],
}


def test_the_custom_property_is_used_when_well_formed():
    m = fbx.motion_from_arrays(_arrays(json.dumps(GOOD)))
    assert m.skeleton.names == ["A", "B", "C"] and m.frame_time == 0.05 and len(m.skeleton.end_sites) == 1
    for text in ["", "{", "[1, 2]", '"x"', "12", "[" * 5000 + "]" * 5000]:  # not a JSON object: ignored
        m = fbx.motion_from_arrays(_arrays(text))
        assert m.skeleton.names == ["a", "b", "c"] and m.frame_time == pytest.approx(1 / 30)


@pytest.mark.parametrize(
    "key,value",
    [
        ("frame_time", ""),
        ("frame_time", [1]),
        ("frame_time", True),
        ("channels", [["Xrotation"], 5, ["Zrotation"]]),
        ("end_sites", [[2]]),
        ("end_sites", [[9, [0, 0, 0]]]),
        ("end_sites", [[1, [0, "x", 0]]]),
        ("end_sites", "abc"),
        ("names", [1, 2, 3]),
    ],
)
def test_a_malformed_custom_property_is_a_format_error(key, value):
    bad = dict(GOOD, **{key: value})
    with pytest.raises(FormatError, match=f"malformed '{key}'"):
        fbx.motion_from_arrays(_arrays(json.dumps(bad)))


@pytest.mark.parametrize("fps", [0.0, -24.0, float("nan"), float("inf")])
def test_a_frame_rate_that_is_not_positive_is_a_format_error(fps):
    with pytest.raises(FormatError, match="frame rate"):
        fbx.motion_from_arrays(_arrays(fps=fps))


def test_a_frame_time_of_zero_in_the_property_is_a_format_error(tmp_path, monkeypatch):
    """Skeleton's own error (frame time 0) comes out of fbx.load as FormatError."""
    f = tmp_path / "a.fbx"
    f.write_bytes(_file(_record(b"N", b"I\0\0\0\0", 1)))
    monkeypatch.setattr(fbx, "_read_arrays", lambda p, b: _arrays(json.dumps(dict(GOOD, frame_time=0.0))))
    monkeypatch.setattr(fbx, "in_process", lambda: True)
    with pytest.raises(FormatError, match="frame_time"):
        fbx.load(f)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_at_once(tmp_path, monkeypatch):
    fifo = tmp_path / "a.fbx"
    os.mkfifo(fifo)
    monkeypatch.setenv(fbx.ENV, sys.executable)  # a Python is named: the file's own checks run
    monkeypatch.setitem(sys.modules, "bpy", None)
    with pytest.raises(FormatError, match="not a regular file"):
        fbx.load(fifo)

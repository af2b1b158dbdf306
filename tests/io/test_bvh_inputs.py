"""BVH reader and writer under hostile input: parser edges, deep nesting, size, and a fuzz sample."""

from __future__ import annotations

import importlib.util
import random
import time
from pathlib import Path

import numpy as np
import pytest

from jointlimits.cleanup.tracking import splice
from jointlimits.errors import BVHError
from jointlimits.io import bvh

from conftest import MOCAP, needs_shared

ROOT = Path(__file__).resolve().parents[2]

LAYOUT = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
\tJOINT Arm
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.0333333
1 2 3 10 20 30 4 5 6
-1.5 0.25 3 0 0 0 7.5 -8 9
"""


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_utf8_bom_is_accepted(tmp_path):
    p = tmp_path / "bom.bvh"
    p.write_bytes(b"\xef\xbb\xbf" + LAYOUT.encode())
    assert bvh.load(p).num_frames == 2
    assert bvh.loads("\ufeff" + LAYOUT).num_frames == 2


@pytest.mark.parametrize("value", ["\u0661\u0662\u0663.\u0665", "1_000", "\uff11\uff12", "0x10", "1d3", "nan", "-inf"])
def test_frame_values_need_ascii_number_syntax(value):
    bad = LAYOUT.replace("7.5 -8 9", f"7.5 {value} 9")
    with pytest.raises(BVHError) as ei:
        bvh.loads(bad, "x.bvh")
    assert ei.value.line == _line_of(bad, "-1.5 0.25")
    assert "frame 1" in str(ei.value) and repr(value) in str(ei.value)


@pytest.mark.parametrize("value", ["1_000", "\u0661", "\uff11", "nan"])
def test_offsets_need_ascii_number_syntax(value):
    bad = LAYOUT.replace("OFFSET 0 10 0", f"OFFSET 0 {value} 0")
    with pytest.raises(BVHError) as ei:
        bvh.loads(bad)
    assert ei.value.line == _line_of(bad, "OFFSET 0 " + value)


@pytest.mark.parametrize("count", ["+3", "\u0663", "3.0", "03x"])
def test_channel_count_is_plain_digits(count):
    bad = LAYOUT.replace("CHANNELS 3 Zrotation", f"CHANNELS {count} Zrotation")
    with pytest.raises(BVHError, match="channel count"):
        bvh.loads(bad)


def test_plain_ascii_number_spellings_still_load():
    text = LAYOUT.replace("7.5 -8 9", "+7.5 -8E0 .9e1").replace("1 2 3 10", "1. 2 3 1e1")
    m = bvh.loads(text)
    assert bvh.channel_data(m)[1, 6:].tolist() == [7.5, -8.0, 9.0]


@pytest.mark.parametrize("sep", ["\x0c", "\x85", "\u2028", "\x1c"])
def test_line_numbers_count_newlines_only(sep):
    # a form feed or NEL inside a line does not start a new line for the error's line number
    bad = LAYOUT.replace("JOINT Arm", f"JOINT Arm{sep}").replace("CHANNELS 3 Zrotation", "CHANNELS 3 Wrotation")
    with pytest.raises(BVHError) as ei:
        bvh.loads(bad)
    assert ei.value.line == _line_of(bad, "CHANNELS 3 Wrotation")


@pytest.mark.parametrize("ft", ["1e-320", "1e-7", "0"])
def test_tiny_frame_time_is_rejected(ft):
    with pytest.raises(BVHError, match="Frame Time") as ei:
        bvh.loads(LAYOUT.replace("0.0333333", ft))
    assert "inf" not in str(ei.value).split("Frame Time")[0]


@pytest.mark.parametrize("frames", ["+2", "2.0", "1e3", "\u0662"])
def test_frames_count_is_plain_digits(frames):
    with pytest.raises(BVHError, match="Frames"):
        bvh.loads(LAYOUT.replace("Frames: 2", f"Frames: {frames}"))


def test_huge_frames_header_does_not_allocate():
    with pytest.raises(BVHError, match="holds 2 frames"):
        bvh.loads(LAYOUT.replace("Frames: 2", "Frames: 999999999999999"))


def _deep(depth: int) -> str:
    lines = ["HIERARCHY", "ROOT J0", "{", "OFFSET 0 0 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    for d in range(1, depth):
        lines += [f"JOINT J{d}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    lines += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * depth
    lines += ["MOTION", "Frames: 2", "Frame Time: 0.01", " ".join(["1.5"] * 3 * depth), " ".join(["-2"] * 3 * depth)]
    return "\n".join(lines) + "\n"


def test_deep_nesting_loads_and_saves_without_recursion(tmp_path):
    text = _deep(1100)
    m = bvh.loads(text)
    assert m.num_joints == 1100 and m.skeleton.parents[-1] == 1098
    p = tmp_path / "deep.bvh"
    bvh.save(p, m)
    back = bvh.load(p)
    assert back.skeleton.parents.tolist() == m.skeleton.parents.tolist()
    assert np.array_equal(bvh.channel_data(back), bvh.channel_data(m))


def test_bad_last_row_costs_one_block_not_the_file():
    """A large clip with a broken last row is reported at that row, about as fast as a good load."""
    rows = [" ".join(["1.25", "-2.5", "3", "10.5", "20", "30", "4", "5", "6"])] * 60000
    good = LAYOUT.split("MOTION")[0] + f"MOTION\nFrames: {len(rows)}\nFrame Time: 0.01\n" + "\n".join(rows) + "\n"
    bad = good[: good.rstrip().rindex("\n") + 1] + "1 2 3 4 5 6 7 8 x9\n"
    t = time.perf_counter()
    bvh.loads(good)
    t_good = time.perf_counter() - t
    t = time.perf_counter()
    with pytest.raises(BVHError) as ei:
        bvh.loads(bad)
    t_bad = time.perf_counter() - t
    assert ei.value.line == bad.count("\n") and f"frame {len(rows) - 1}" in str(ei.value)
    assert t_bad < 3 * t_good + 0.2, (t_bad, t_good)


def test_zero_frame_clip_round_trips(tmp_path):
    m = bvh.loads(
        LAYOUT.replace("Frames: 2", "Frames: 0").split("Frame Time: 0.0333333\n")[0] + "Frame Time: 0.0333333\n"
    )
    assert m.num_frames == 0
    p = tmp_path / "z.bvh"
    bvh.save(p, m)
    assert bvh.load(p).num_frames == 0


def test_writer_gives_back_the_exact_values():
    rng = np.random.default_rng(3)
    m = bvh.loads(LAYOUT)
    for data in (
        np.round(rng.uniform(-400, 400, (50, 9)), 6),
        rng.uniform(-400, 400, (50, 9)),
        np.array([[0.0, -0.0, 1e-6, -1e-6, 0.5, -10.0, 1e8, 123456.789, 1e-300]]),
    ):
        text = bvh._format_rows(data).decode()
        back = np.loadtxt(text.split("\n"), ndmin=2)
        assert np.array_equal(back, data) and "-0 " not in " " + text
    assert bvh._format_rows(np.array([[0.5, -10.0, 0.000001]])) == b"0.5 -10 0.000001\n"
    assert bvh.dumps(m).count("\n") == LAYOUT.count("\n")


def test_loaded_rotations_are_not_stored_twice_but_behave_like_an_array():
    m = bvh.loads(LAYOUT)
    src_q, euler = m.source_euler
    assert src_q.shape == m.rotations.shape
    assert np.array_equal(np.asarray(src_q), m.rotations)
    assert np.array_equal(np.asarray(m[1:].source_euler[0]), m.rotations[1:])
    joined = splice(m, m, smooth=False, align=False)
    assert bvh.channel_data(joined)[2:].tolist() == bvh.channel_data(m).tolist()
    m.rotations[0, 1] = [0.0, 1.0, 0.0, 0.0]  # edited in place: written from the quaternion
    back = bvh.loads(bvh.dumps(m))
    assert np.allclose(np.abs(back.rotations[0, 1]), [0, 1, 0, 0], atol=1e-12)
    assert np.array_equal(back.rotations[1], m.rotations[1])


@needs_shared
def test_real_clips_round_trip_bit_equal():
    for p in sorted(MOCAP.glob("*/*.bvh"))[::6]:
        m = bvh.load(p)
        back = bvh.loads(bvh.dumps(m))
        assert np.array_equal(bvh.channel_data(back), bvh.channel_data(m)), p


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("fuzz_bvh", ROOT / "scripts" / "fuzz_bvh.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@needs_shared
def test_fuzz_sample_only_bvh_error_escapes_and_accepted_files_round_trip():
    """A CI-sized sample of scripts/fuzz_bvh.py (the full run is >= 5,000 mutations)."""
    fz = _fuzz_module()
    counts = fz.run(80, seed=20261123, frames=4, verbose=False)
    assert set(counts) <= {"accepted", "rejected"}, counts
    assert counts["accepted"] > 0 and counts["rejected"] > 0


def test_fuzz_of_the_builtin_layout():
    fz = _fuzz_module()
    rng = random.Random(5)
    for _ in range(80):
        assert fz.check(fz.mutate(LAYOUT, rng)) in ("accepted", "rejected")

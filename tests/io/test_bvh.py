"""BVH reading/writing: every shared clip, every layout quirk, every malformed-input case."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from jointlimits.errors import BVHError, JointLimitsError
from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.motion.skeleton import forward_kinematics

from conftest import MOCAP, mocap_files, needs_shared

CLIPS = mocap_files()
CLIP_IDS = [f"{p.parent.name}/{p.name}" for p in CLIPS]


def independent_parse(text: str):
    """A deliberately naive BVH reader (names, parents, offsets, channels, raw values)."""
    toks = text.split()
    i = 0
    names, parents, offsets, channels, stack = [], [], [], [], []
    end_depth = 0
    while toks[i] != "MOTION":
        t = toks[i]
        if t in ("ROOT", "JOINT"):
            names.append(toks[i + 1])
            parents.append(stack[-1] if stack else -1)
            i += 2
        elif t == "End":
            end_depth = 1
            i += 2
        elif t == "{":
            if end_depth == 1:
                end_depth = 2
            else:
                stack.append(len(names) - 1)
            i += 1
        elif t == "}":
            if end_depth == 2:
                end_depth = 0
            else:
                stack.pop()
            i += 1
        elif t == "OFFSET":
            if end_depth == 0:
                offsets.append([float(x) for x in toks[i + 1 : i + 4]])
            i += 4
        elif t == "CHANNELS":
            n = int(toks[i + 1])
            channels.append(toks[i + 2 : i + 2 + n])
            i += 2 + n
        else:
            i += 1
    n_frames = int(toks[i + 2])
    values = np.array([float(x) for x in toks[i + 6 :]]).reshape(n_frames, -1)
    return names, parents, np.array(offsets), channels, values


def scipy_fk(text: str):
    """Global positions by scipy rotation matrices, straight from the raw channel values."""
    names, parents, offsets, channels, values = independent_parse(text)
    F = values.shape[0]
    R = [None] * len(names)
    P = [None] * len(names)
    col = 0
    for j, chans in enumerate(channels):
        pos = np.repeat(offsets[j][None], F, 0)
        rot_axes, rot_vals = "", []
        for c in chans:
            if c.endswith("position"):
                pos[:, "XYZ".index(c[0])] = values[:, col]
            else:
                rot_axes += c[0]
                rot_vals.append(values[:, col])
            col += 1
        local = (
            Rotation.from_euler(rot_axes, np.stack(rot_vals, -1), degrees=True).as_matrix()
            if rot_axes
            else np.repeat(np.eye(3)[None], F, 0)
        )
        p = parents[j]
        if p < 0:
            R[j], P[j] = local, pos
        else:
            R[j] = R[p] @ local
            P[j] = P[p] + np.einsum("fij,fj->fi", R[p], pos)
    return np.stack(P, 1)


# --------------------------------------------------------------------------- real clips


@needs_shared
@pytest.mark.parametrize("path", CLIPS, ids=CLIP_IDS)
def test_real_clip_load_fk_round_trip(path: Path, tmp_path: Path):
    text = path.read_text()
    m = bvh.load(path)
    names, parents, offsets, channels, values = independent_parse(text)
    assert m.skeleton.names == names
    assert m.skeleton.parents.tolist() == parents
    assert m.num_frames == values.shape[0]
    # quaternions are unit, FK finite and equal to an independent scipy FK
    np.testing.assert_allclose(np.linalg.norm(m.rotations, axis=-1), 1.0, atol=1e-12)
    gr, gp = forward_kinematics(m)
    assert np.isfinite(gp).all() and np.isfinite(gr).all()
    ref = scipy_fk(text)
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(gp, ref, atol=1e-6 * scale, rtol=0)
    # lossless round trip: same channel values (bit-exact), hierarchy, end sites, frame time
    out = tmp_path / "out.bvh"
    bvh.save(out, m)
    m2 = bvh.load(out)
    np.testing.assert_array_equal(bvh.channel_data(m2), values)
    assert m2.skeleton.channels == m.skeleton.channels
    assert len(m2.skeleton.end_sites) == len(m.skeleton.end_sites) == text.count("End Site")
    for (p1, o1), (p2, o2) in zip(m.skeleton.end_sites, m2.skeleton.end_sites):
        assert p1 == p2 and np.array_equal(o1, o2)
    np.testing.assert_array_equal(m2.skeleton.offsets, offsets)
    assert m2.frame_time == m.frame_time


@needs_shared
@pytest.mark.parametrize(
    "rel",
    [
        "cmu_cgspeed_max/131_01.bvh",
        "bandai_namco/dataset-1_kick_normal_001.bvh",
        "adelaide/milad.bvh",
        "sfu/0005_JumpRope001.bvh",
    ],
)
def test_round_trip_through_quaternions_only(rel: str, tmp_path: Path):
    """Dropping the remembered Euler values still writes the same rotations, as continuous curves
    (no 360-degree wraps or gimbal-twin flips beyond what the input itself had)."""
    path = MOCAP / rel
    m = bvh.load(path)
    values = bvh.channel_data(m)
    m.source_euler = m.source_text = None
    out = tmp_path / "o.bvh"
    bvh.save(out, m)
    m2 = bvh.load(out)
    d = np.abs(np.sum(m2.rotations * m.rotations, -1))
    assert np.all(d > 1 - 1e-12)
    v2 = bvh.channel_data(m2)
    rot_cols = [k for k, c in enumerate(sum(m.skeleton.channels, [])) if c.endswith("rotation")]
    jump_in = np.abs(np.diff(values[:, rot_cols], axis=0)).max(axis=0)
    jump_out = np.abs(np.diff(v2[:, rot_cols], axis=0)).max(axis=0)
    # (near gimbal lock a twin may trade one channel's jump for another's, never a 360 wrap)
    assert np.all(jump_out <= np.maximum(jump_in, 180.0) + 1e-6)
    # the first frame is written in the principal range, equal to the input where that was too
    first_ok = np.isclose(v2[0], values[0], rtol=1e-9, atol=1e-9)
    assert first_ok.mean() > 0.9


@needs_shared
def test_changed_rotations_stay_continuous(tmp_path: Path):
    m = bvh.load(MOCAP / "lafan1" / "walk4_subject1.bvh")[:300]
    spin = quat.from_angle_axis(np.linspace(0, 6 * np.pi, m.num_frames), np.array([0.0, 1.0, 0.0]))
    m.rotations[:, 0] = quat.mul(spin, m.rotations[:, 0])
    bvh.save(tmp_path / "s.bvh", m)
    v = bvh.channel_data(bvh.load(tmp_path / "s.bvh"))
    # no 360-degree jumps between consecutive frames in any rotation channel
    assert np.abs(np.diff(v[:, 3:6], axis=0)).max() < 90


# --------------------------------------------------------------------------- layouts

LAYOUT = """HIERARCHY
ROOT Hips
{
\tOFFSET 1 2 3
\tCHANNELS 3 Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 6 Zrotation Xrotation Yrotation Zposition Xposition Yposition
\t\tJOINT Head
\t\t{
\t\t\tOFFSET 0 5.0e0 0
\t\t\tCHANNELS 1 Xrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 0 3 0
\t\t\t}
\t\t}
\t\tJOINT Arm
\t\t{
\t\t\tOFFSET 4 0 0
\t\t\tCHANNELS 2 Yrotation Zrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 2 0 0
\t\t\t}
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.0333333

10 20 30 1 2 3 7 8 9 45 30 -60
-1.5e1 0 0 0 0 0 0 10 0 0 0 0
"""


def test_layout_quirks_are_read():
    text = LAYOUT.replace("\n", "\r\n")
    m = bvh.loads(text)
    sk = m.skeleton
    assert sk.names == ["Hips", "Spine", "Head", "Arm"]
    assert sk.rotation_order("Hips") == "zxy" and sk.rotation_order("Arm") == "yz"
    # root with 3 channels keeps its non-zero OFFSET as its position
    np.testing.assert_array_equal(m.positions[:, 0], [[1, 2, 3], [1, 2, 3]])
    # position channels after rotation channels, in Z X Y order, replace the OFFSET
    np.testing.assert_array_equal(m.positions[0, 1], [8, 9, 7])
    np.testing.assert_array_equal(m.positions[1, 1], [10, 0, 0])
    np.testing.assert_allclose(m.rotations[0, 0], quat.from_euler([10, 20, 30], "zxy", degrees=True), atol=1e-15)
    np.testing.assert_allclose(m.rotations[0, 2], quat.from_euler([45, 0, 0], "xyz", degrees=True), atol=1e-15)
    exp_arm = quat.mul(
        quat.from_angle_axis(np.deg2rad(30.0), np.array([0, 1.0, 0])),
        quat.from_angle_axis(np.deg2rad(-60.0), np.array([0, 0, 1.0])),
    )
    np.testing.assert_allclose(m.rotations[0, 3], exp_arm, atol=1e-15)
    np.testing.assert_allclose(m.rotations[1, 0], quat.from_euler([-15, 0, 0], "zxy", degrees=True), atol=1e-15)
    assert m.frame_time == 0.0333333
    # lossless write, also for 1- and 2-channel joints when the rotations were recomputed
    again = bvh.loads(bvh.dumps(m))
    np.testing.assert_array_equal(bvh.channel_data(again), bvh.channel_data(m))
    m.source_euler = m.source_text = None
    np.testing.assert_allclose(
        bvh.channel_data(bvh.loads(bvh.dumps(m))),
        np.array([[10, 20, 30, 1, 2, 3, 7, 8, 9, 45, 30, -60], [-15, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0]]),
        atol=1e-9,
    )


def test_blank_lines_and_tabs_anywhere():
    text = LAYOUT.replace("MOTION\n", "\n\n\tMOTION\n\n").replace("Frame Time:", "\nFrame Time:")
    text = text.replace("10 20 30", "10\t20   30") + "\n\n"
    m = bvh.loads(text)
    assert m.num_frames == 2


# --------------------------------------------------------------------------- errors


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    "mutate,msg,line_of",
    [
        (lambda t: t[: t.index("MOTION")], "missing MOTION", None),
        (
            lambda t: t.replace(
                "Frames: 2\nFrame Time: 0.0333333\n\n10 20 30 1 2 3 7 8 9 45 30 -60\n-1.5e1 0 0 0 0 0 0 10 0 0 0 0\n",
                "",
            ),
            "truncated after MOTION",
            None,
        ),
        (lambda t: t.replace("45 30 -60\n", "45 30\n"), "expected 12 channel values", "10 20 30"),
        (lambda t: t.replace("45 30 -60", "45 abc -60"), "non-numeric", "10 20 30"),
        (lambda t: t.replace("CHANNELS 1 Xrotation", "CHANNELS 1 Wrotation"), "unknown channel name", "Wrotation"),
        (lambda t: t.replace("Frames: 2", "Frames: 3"), "Frames: 3", None),
        (lambda t: t.replace("-1.5e1 0 0 0", "nan 0 0 0"), "not finite", "nan 0 0"),
        (lambda t: t.replace("-1.5e1 0 0 0", "inf 0 0 0"), "not finite", "inf 0 0"),
        (lambda t: t.replace("\t\t\t}\n\t\t}\n\t\tJOINT Arm", "\t\t\t}\n\t\tJOINT Arm", 1), "unbalanced", None),
        (lambda t: t.replace("}\nMOTION", "}\n}\nMOTION"), "unbalanced", None),
        (lambda t: t.replace("OFFSET 0 10 0", "OFFSET 0 ten 0"), "expected a number", "OFFSET 0 ten"),
        (lambda t: t.replace("Frame Time: 0.0333333", "Frame Time: -1"), "Frame Time must be positive", "Frame Time"),
        (lambda t: "", "empty file", None),
    ],
)
def test_malformed_input_names_the_line(mutate, msg, line_of):
    bad = mutate(LAYOUT)
    with pytest.raises(BVHError) as ei:
        bvh.loads(bad, "bad.bvh")
    assert msg.lower() in str(ei.value).lower(), str(ei.value)
    assert ei.value.line is not None and ei.value.line >= 1
    if line_of is not None:
        assert ei.value.line == _line_of(bad, line_of), str(ei.value)
    assert str(ei.value).startswith("bad.bvh:")


def test_extra_rows_and_unclosed_joint_lines():
    bad = LAYOUT + "1 2 3 4 5 6 7 8 9 10 11 12\n"
    with pytest.raises(BVHError, match="Frames: 2 but the file holds 3"):
        bvh.loads(bad)
    # a joint never closed before MOTION: reported at the MOTION line's end of hierarchy
    bad = LAYOUT.replace("\t\t}\n\t}\n}\nMOTION", "\t\t}\nMOTION")
    with pytest.raises(BVHError, match="unbalanced braces") as ei:
        bvh.loads(bad)
    assert ei.value.line == _line_of(bad, "MOTION")


def test_save_is_atomic_and_never_clobbers(tmp_path: Path):
    m = bvh.loads(LAYOUT)
    out = tmp_path / "a.bvh"
    out.write_text("precious")
    with pytest.raises(BVHError, match="exists"):
        bvh.save(out, m, overwrite=False)
    assert out.read_text() == "precious"
    broken = m.copy()
    broken.rotations[1, 2] = np.nan
    with pytest.raises(JointLimitsError):
        bvh.save(out, broken)
    assert out.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["a.bvh"]  # no temp file left behind
    bvh.save(out, m)
    assert bvh.loads(out.read_text()).num_frames == 2


def test_missing_file_is_bvh_error(tmp_path: Path):
    with pytest.raises(BVHError, match="cannot read"):
        bvh.load(tmp_path / "nope.bvh")


# --------------------------------------------------------------------------- fuzz


def _fuzz_source() -> str:
    p = MOCAP / "cmu_cgspeed_max" / "131_01.bvh"
    if p.is_file():
        lines = p.read_text().splitlines()
        head = lines[: lines.index("MOTION") + 3]
        return "\n".join(head[:-3] + ["MOTION", "Frames: 5", head[-1]] + lines[len(head) : len(head) + 5]) + "\n"
    return LAYOUT


FUZZ_TEXT = _fuzz_source()
FUZZ_TOKENS = [
    "{",
    "}",
    "JOINT",
    "End Site",
    "ROOT",
    "MOTION",
    "Frames:",
    "nan",
    "-",
    "1e999",
    "x",
    "CHANNELS 7",
    "Xrotation",
    "\t",
    "\n",
    "\r\n",
    "0.5",
    "OFFSET",
    "\x00",
    "é",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**9), st.sampled_from(["del", "ins", "dup", "swap", "cut"]), st.sampled_from(FUZZ_TOKENS)
        ),
        min_size=1,
        max_size=4,
    )
)
def test_fuzz_mutations_raise_only_bvh_error(ops):
    text = FUZZ_TEXT
    for pos, op, tok in ops:
        k = pos % max(1, len(text))
        if op == "del":
            text = text[:k] + text[k + 1 + pos % 7 :]
        elif op == "ins":
            text = text[:k] + tok + text[k:]
        elif op == "dup":
            text = text[:k] + text[k : k + 40] + text[k:]
        elif op == "swap":
            lines = text.split("\n")
            a, b = pos % len(lines), (pos // 7) % len(lines)
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        else:
            text = text[:k]
    try:
        m = bvh.loads(text)
    except BVHError as e:
        assert e.line is None or e.line >= 1
        return
    # anything accepted must be a consistent, finite motion
    assert np.isfinite(m.rotations).all() and np.isfinite(m.positions).all()
    assert m.rotations.shape[1] == m.skeleton.num_joints


def test_fuzz_random_byte_flips():
    rng = random.Random(7)
    raw = FUZZ_TEXT.encode()
    for _ in range(300):
        b = bytearray(raw)
        for _ in range(rng.randint(1, 5)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            bvh.loads(b.decode("latin-1"))
        except BVHError:
            pass


def test_written_files_get_the_usual_permissions(tmp_path: Path):
    """Atomic writes go through mkstemp (0o600); results must get what a plain open would give."""
    import os

    m = bvh.loads(LAYOUT)
    old = os.umask(0o022)
    try:
        new = tmp_path / "new.bvh"
        bvh.save(new, m)
        assert new.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.bvh"
        kept.write_text("x")
        kept.chmod(0o640)
        bvh.save(kept, m)
        assert kept.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)

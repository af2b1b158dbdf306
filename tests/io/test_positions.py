"""Joint positions files: .npz/.csv round trips (bit for bit, NaN gaps kept), .npy in a skeleton's
joint order, the forward kinematics of a .bvh, and bad files refused with one PositionsError
naming the file, a failed save leaving no (partial) file behind."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.errors import JointLimitsError
from jointlimits.io.positions import (
    JointPositions,
    PositionsError,
    load_positions,
    save_positions,
)
from jointlimits.motion import quat
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion
from jointlimits.motion.skeleton import Skeleton

RNG = np.random.default_rng(5)
NAMES = ["Hips", "Spine", "Left Hand", "mixamorig:Head", "a,b.c"]  # a space, a colon, a comma and a dot


def gappy(F: int = 7, J: int = len(NAMES)) -> np.ndarray:
    """Positions with awkward values (tiny, huge, negative zero, 0.1) and NaN gaps (whole joints)."""
    p = RNG.normal(size=(F, J, 3)) * 100.0
    p[0, 0] = [1e-300, -0.0, 0.1]
    p[1, 1] = [1e300, 1 / 3, -2.5e-8]
    p[2, 2] = np.nan  # an occluded joint
    p[3:5, 4] = np.nan
    return p


def assert_same(a: np.ndarray, b: np.ndarray) -> None:
    """Equal bit for bit, NaN where NaN (and the sign of zero kept)."""
    assert a.shape == b.shape
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.array_equal(a.view(np.uint64)[~np.isnan(a)], b.view(np.uint64)[~np.isnan(b)])


def raises_one_message(path, match: str, **kw) -> str:
    """load_positions(path) raises PositionsError: one line, naming the file, matching ``match``."""
    with pytest.raises(PositionsError, match=match) as e:
        load_positions(path, **kw)
    msg = str(e.value)
    assert msg.startswith(str(path)) and "\n" not in msg
    assert isinstance(e.value, JointLimitsError) and isinstance(e.value, ValueError)
    return msg


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("ext", [".npz", ".csv"])
@pytest.mark.parametrize("fps", [None, 30.0, 29.97])
def test_round_trip_bit_for_bit_with_names_gaps_and_fps(tmp_path, ext, fps):
    p = gappy()
    path = tmp_path / f"pos{ext}"
    save_positions(path, p, NAMES, fps)
    back = load_positions(path)
    assert back.names == NAMES and back.fps == fps
    assert_same(back.positions, p)
    assert np.array_equal(back.observed(), np.isfinite(p).all(-1))
    assert not back.observed()[2, 2] and not back.observed()[3:5, 4].any()


@pytest.mark.parametrize(
    "ext",
    [
        ".npz",
        ".csv",
    ],
)
def test_round_trip_of_zero_frames(tmp_path, ext):
    save_positions(tmp_path / f"e{ext}", np.zeros((0, 2, 3)), ["a", "b"])
    back = load_positions(tmp_path / f"e{ext}")
    assert back.positions.shape == (0, 2, 3) and back.names == ["a", "b"]


def test_header_only_csv_is_zero_frames(tmp_path):
    (tmp_path / "e.csv").write_text("frame,a.x,a.y,a.z\n")
    back = load_positions(tmp_path / "e.csv")
    assert back.positions.shape == (0, 1, 3) and back.names == ["a"]


def test_csv_keeps_the_fps_of_a_bvh_frame_time(tmp_path):
    fps = 1 / 0.0083333
    save_positions(tmp_path / "p.csv", np.zeros((2, 1, 3)), ["a"], fps)
    assert load_positions(tmp_path / "p.csv").fps == fps


def test_npy_reads_in_the_skeleton_joint_order(tmp_path):
    sk = humanoid_skeleton()
    p = gappy(4, sk.num_joints)
    np.save(tmp_path / "p.npy", p)
    back = load_positions(tmp_path / "p.npy", skeleton=sk)
    assert back.names == sk.names and back.fps is None
    assert_same(back.positions, p)


def test_npz_without_names_follows_the_skeleton(tmp_path):
    sk = humanoid_skeleton()
    p = gappy(3, sk.num_joints)
    np.savez(tmp_path / "p.npz", positions=p, fps=np.float64(50))
    back = load_positions(tmp_path / "p.npz", skeleton=sk)
    assert back.names == sk.names and back.fps == 50.0
    assert_same(back.positions, p)


def test_bvh_gives_the_forward_kinematics_of_the_clip(tmp_path):
    from jointlimits.io import bvh

    clip = range_of_motion(seconds=0.5, fps=40, seed=3)
    bvh.save(tmp_path / "c.bvh", clip)
    back = load_positions(tmp_path / "c.bvh")
    m = bvh.load(tmp_path / "c.bvh")
    assert back.names == m.skeleton.names and back.fps == pytest.approx(40.0, rel=1e-6)
    # a plain loop over joints, parents first
    gr, gp = np.empty_like(m.rotations), np.empty_like(m.positions)
    for j, par in enumerate(m.skeleton.parents):
        if par < 0:
            gr[:, j], gp[:, j] = m.rotations[:, j], m.positions[:, j]
        else:
            gr[:, j] = quat.mul(gr[:, par], m.rotations[:, j])
            gp[:, j] = gp[:, par] + quat.mul_vec(gr[:, par], m.positions[:, j])
    np.testing.assert_allclose(back.positions, gp, atol=1e-9)
    assert back.observed().all()
    # and it saves on as positions
    save_positions(tmp_path / "c.csv", back.positions, back.names, back.fps)
    assert_same(load_positions(tmp_path / "c.csv").positions, back.positions)


def test_csv_without_frame_column_with_empty_and_nan_cells(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("# fps: 25\nA.x,A.y,A.z,B.X,B.Y,B.Z\n1,2,3,,,\n4,5,6, nan ,NaN,7.5\n")
    back = load_positions(path)
    assert back.names == ["A", "B"] and back.fps == 25.0
    assert_same(back.positions, np.array([[[1, 2, 3], [np.nan] * 3], [[4, 5, 6], [np.nan, np.nan, 7.5]]]))
    assert back.observed().tolist() == [[True, False], [True, False]]


def test_csv_with_a_byte_order_mark_reads_like_one_without(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("frame,Hips.x,Hips.y,Hips.z\n0,1,2,3\n", encoding="utf-8-sig")
    assert load_positions(path).names == ["Hips"]


def test_for_skeleton_reorders_and_fills_missing_joints_with_nan():
    sk = Skeleton(["root", "a", "b"], [-1, 0, 1], np.zeros((3, 3)))
    jp = JointPositions(np.arange(12.0).reshape(2, 2, 3), ["b", "root"])
    out = jp.for_skeleton(sk)
    assert np.array_equal(out[:, 2], jp.positions[:, 0]) and np.array_equal(out[:, 0], jp.positions[:, 1])
    assert np.isnan(out[:, 1]).all()
    with pytest.raises(PositionsError, match="joints not in the skeleton: c"):
        JointPositions(np.zeros((1, 1, 3)), ["c"]).for_skeleton(sk)


# --------------------------------------------------------------------------- bad files


def _npz(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize(
    "case,match",
    [
        ("no positions", r"no 'positions' array \(found: names\)"),
        ("fewer names", "2 joint names for 3 joints"),
        ("duplicate names", r"duplicate joint names \['a'\]"),
        ("flat", r"positions must be \[frames, joints, 3\], got shape \(4, 9\)"),
        ("four coordinates", r"got shape \(4, 3, 4\)"),
        ("infinite", "position of 'b' at frame 1 is infinite"),
        ("zero fps", "fps must be a positive number"),
        ("truncated", "not a readable .npz file"),
        ("not numpy at all", "not a readable .npz file"),
        ("pickled objects", "not a readable .npz file"),
    ],
)
def test_bad_npz_files_raise_one_message(tmp_path, case, match):
    path = tmp_path / "bad.npz"
    good = np.zeros((4, 3, 3))
    if case == "no positions":
        _npz(path, names=np.array(["a", "b", "c"]))
    elif case == "fewer names":
        _npz(path, positions=good, names=np.array(["a", "b"]))
    elif case == "duplicate names":
        _npz(path, positions=good, names=np.array(["a", "b", "a"]))
    elif case == "flat":
        _npz(path, positions=np.zeros((4, 9)), names=np.array(["a", "b", "c"]))
    elif case == "four coordinates":
        _npz(path, positions=np.zeros((4, 3, 4)), names=np.array(["a", "b", "c"]))
    elif case == "infinite":
        bad = good.copy()
        bad[1, 1, 2] = -np.inf
        _npz(path, positions=bad, names=np.array(["a", "b", "c"]))
    elif case == "zero fps":
        _npz(path, positions=good, names=np.array(["a", "b", "c"]), fps=np.float64(0))
    elif case == "truncated":
        save_positions(path, np.zeros((50, 4, 3)), list("abcd"))
        path.write_bytes(path.read_bytes()[:-10])
    elif case == "not numpy at all":
        path.write_bytes(b"hello")
    else:
        _npz(path, positions=np.array([{"x": 1}], dtype=object))
    raises_one_message(path, match)


@pytest.mark.parametrize(
    "case,match",
    [
        ("no skeleton", "no joint names in the file: give the skeleton"),
        ("wrong joint count", "4 joints without names, but the skeleton has 3"),
        ("two dimensions", r"got shape \(5, 9\)"),
        ("four dimensions", r"got shape \(2, 5, 3, 3\)"),
        ("garbage", "not a readable .npy file"),
    ],
)
def test_bad_npy_files_raise_one_message(tmp_path, case, match):
    path = tmp_path / "bad.npy"
    sk = Skeleton(["root", "a", "b"], [-1, 0, 1], np.zeros((3, 3)))
    arr = {
        "no skeleton": np.zeros((5, 3, 3)),
        "wrong joint count": np.zeros((5, 4, 3)),
        "two dimensions": np.zeros((5, 9)),
        "four dimensions": np.zeros((2, 5, 3, 3)),
    }.get(case)
    if arr is None:
        path.write_bytes(b"\x93NUMPY nonsense")
    else:
        np.save(path, arr)
    raises_one_message(path, match, **({} if case == "no skeleton" else {"skeleton": sk}))


@pytest.mark.parametrize(
    "text,match",
    [
        ("frame,A.x,A.y,A.z\n0,1,two,3\n", r"line 2: A.y = 'two' is not a number"),
        ("# fps: 30\nframe,A.x,A.y,A.z\n0,1,2,3\n1,1,2,3,4\n", "line 4: 5 values, the header has 4"),
        ("frame,A.x,A.y,A.z\n0,1,2\n", "line 2: 3 values, the header has 4"),
        ("frame,A.x,A.y\n0,1,2\n", "line 1: expected three columns NAME.x, NAME.y, NAME.z per joint, got 2"),
        ("A.x,A.y,B.z\n1,2,3\n", "line 1: columns A.x, A.y, B.z are not NAME.x, NAME.y, NAME.z"),
        ("A.x,A.z,A.y\n1,2,3\n", "are not NAME.x, NAME.y, NAME.z"),
        ("x,y,z\n1,2,3\n", "are not NAME.x"),
        ("frame\n0\n", "got 0"),
        ("# fps: fast\nA.x,A.y,A.z\n1,2,3\n", "line 1: fps 'fast' is not a number"),
        ("", "empty CSV file"),
        ("# fps: 30\n", "empty CSV file"),
        ("A.x,A.y,A.z,A.x,A.y,A.z\n1,2,3,4,5,6\n", r"duplicate joint names \['A'\]"),
        ("A.x,A.y,A.z\n1,inf,3\n", "position of 'A' at frame 0 is infinite"),
    ],
)
def test_bad_csv_files_raise_one_message(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    raises_one_message(path, match)


def test_binary_csv_unknown_extension_and_missing_file_raise(tmp_path):
    path = tmp_path / "bin.csv"
    path.write_bytes(b"\xff\xfe\x00\x81 binary")
    raises_one_message(path, "not a text CSV file")
    (tmp_path / "p.txt").write_text("1,2,3\n")
    raises_one_message(tmp_path / "p.txt", r"unknown positions file type '.txt' \(known: .npz, .npy, .csv, .bvh\)")
    raises_one_message(tmp_path / "none.npz", "no such file")


# --------------------------------------------------------------------------- failed saves


def _listing(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("ext", [".npz", ".csv"])
@pytest.mark.parametrize(
    "positions,names,fps,match",
    [
        (np.zeros((2, 3, 3)), ["a", "b"], None, "2 joint names for 3 joints"),
        (np.zeros((2, 3)), ["a", "b", "c"], None, r"must be \[F, J, 3\]"),
        (np.zeros((2, 2, 3)), ["a", "a"], None, "duplicate joint names"),
        (np.full((2, 1, 3), np.inf), ["a"], None, "infinite"),
        (np.zeros((2, 1, 3)), ["a"], -30.0, "fps must be a positive number"),
    ],
)
def test_a_refused_save_writes_nothing_and_keeps_the_old_file(tmp_path, ext, positions, names, fps, match):
    new = tmp_path / f"new{ext}"
    with pytest.raises(PositionsError, match=match):
        save_positions(new, positions, names, fps)
    assert _listing(tmp_path) == []  # no file, no temporary file
    old = tmp_path / f"old{ext}"
    save_positions(old, np.ones((1, 1, 3)), ["keep"])
    before = old.read_bytes()
    with pytest.raises(PositionsError, match=match):
        save_positions(old, positions, names, fps)
    assert old.read_bytes() == before and _listing(tmp_path) == [old.name]


@pytest.mark.parametrize("ext", [".npy", ".bvh", ".txt", ""])
def test_save_to_a_type_it_cannot_write_refuses_and_writes_nothing(tmp_path, ext):
    with pytest.raises(PositionsError, match="can write .npz or .csv positions"):
        save_positions(tmp_path / f"p{ext}", np.zeros((1, 1, 3)), ["a"])
    assert _listing(tmp_path) == []

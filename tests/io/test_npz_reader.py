"""The checked ``.npz`` reader (``jointlimits.io._npz``) shared by the AMASS and positions readers:
limits found by scripts/fuzz_amass.py (#38)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from jointlimits.errors import FormatError
from jointlimits.io import _npz, amass


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def test_a_zip_listing_more_arrays_than_read_is_refused_before_its_directory_is_read(tmp_path):
    # a 55 MB zip listing a million entries took zipfile 20 s or more to open and numpy ~1 ms an
    # entry to parse: the end record's count is checked first
    p = tmp_path / "many.npz"
    one = _npy(np.zeros(1))
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("poses.npy", _npy(np.zeros((3, 156))))
        for i in range(_npz.MAX_MEMBERS):
            zf.writestr(f"k{i}.npy", one)
    with pytest.raises(FormatError, match=rf"many\.npz: its zip directory lists {_npz.MAX_MEMBERS + 1} entries"):
        amass.load(p)


def test_a_zip_directory_of_more_bytes_than_read_is_refused(tmp_path):
    p = tmp_path / "long.npz"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("poses.npy", _npy(np.zeros((3, 156))))
        for i in range(20):  # 20 names of 60 KB: a directory of 1.2 MB
            zf.writestr(f"{i:02d}" + "x" * 60_000 + ".npy", _npy(np.zeros(1)))
    with pytest.raises(FormatError, match=r"long\.npz: its zip directory lists 21 entries in \d+ bytes"):
        _npz.read_npz(p, FormatError)


def test_an_ordinary_npz_still_reads(tmp_path):
    p = tmp_path / "ok.npz"
    np.savez_compressed(p, poses=np.ones((2, 156)), mocap_framerate=np.array(60.0))
    d = _npz.read_npz(p, FormatError)
    assert sorted(d) == ["mocap_framerate", "poses"] and d["poses"].sum() == 312

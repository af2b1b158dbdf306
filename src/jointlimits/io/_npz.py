"""Reading ``.npz`` / ``.npy`` files as untrusted input: only regular files, every member's
declared size checked against a cap before it is read, no pickled objects, and every failure
(a truncated zip, a bad header, a corrupt stream) raised as the caller's error class."""

from __future__ import annotations

import os
import tokenize
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .._atomic import check_input_file
from .._budget import Budget
from ..errors import JointLimitsError

__all__ = ["MAX_ARRAY_BYTES", "MAX_DIRECTORY_BYTES", "MAX_MEMBERS", "read_npz", "read_npy"]

#: Most bytes of stored values of all arrays read from one file; besides this cap, every value
#: counts at its float64 size against the readers' memory budget (``jointlimits._budget``).
MAX_ARRAY_BYTES = 256 * 1024 * 1024
#: Most arrays of one ``.npz``, and most bytes of its zip directory: zipfile reads the whole
#: directory when it opens a file (a 55 MB zip listing a million entries took it 20 s or more,
#: and numpy's header parse of each listed array about 1 ms). Motion files hold a few dozen.
MAX_MEMBERS = 1024
MAX_DIRECTORY_BYTES = 1 << 20

# what numpy's and zipfile's readers raise on a malformed file (numpy parses the .npy header as a
# Python literal: a garbled one is a SyntaxError or tokenize.TokenError)
_READ_ERRORS = (
    ValueError,
    TypeError,
    OverflowError,
    OSError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    KeyError,
    NotImplementedError,
    SyntaxError,
    tokenize.TokenError,
)


def _header(fh, what: str, fail: Callable[[str], Exception]) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of an .npy stream, its position left at the data."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
    elif version in ((2, 0), (3, 0)):
        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
    else:
        raise fail(f"{what}: unsupported .npy version {version})")
    if dtype.hasobject or dtype.kind not in "biufcUS":
        raise fail(f"{what}: holds {dtype} values; only numbers or strings are read)")
    return tuple(int(s) for s in shape), dtype


def _check_directory(fh, what: str, fail: Callable[[str], Exception]) -> None:
    """Refuse a zip whose end record declares more than ``MAX_MEMBERS`` entries or a directory of
    more than ``MAX_DIRECTORY_BYTES``, before zipfile reads that directory (the record is found
    by zipfile's own search, so both read the same one; a zip without one is left to zipfile)."""
    find = getattr(zipfile, "_EndRecData", None)
    if find is None:  # pragma: no cover - every CPython 3 has it
        return
    end = find(fh)
    fh.seek(0)
    if end is None:
        return
    # zipfile's indices of the total entry count and the directory's size in the record
    entries, size = end[getattr(zipfile, "_ECD_ENTRIES_TOTAL", 4)], end[getattr(zipfile, "_ECD_SIZE", 5)]
    if entries > MAX_MEMBERS or size > MAX_DIRECTORY_BYTES:
        raise fail(
            f"{what}: its zip directory lists {entries} entries in {size} bytes, more than the "
            f"{MAX_MEMBERS} arrays ({MAX_DIRECTORY_BYTES} bytes) read"
        )


def read_npz(
    path: str | os.PathLike, fail: Callable[[str], Exception], max_bytes: int = MAX_ARRAY_BYTES
) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` (name -> array), at most ``max_bytes`` of values in all;
    ``fail(message)`` is the exception raised for any bad file (message names ``path``)."""
    p = Path(path)
    try:
        check_input_file(p)
        out: dict[str, np.ndarray] = {}
        total = 0
        budget = Budget(str(p), fail)
        with open(p, "rb") as raw:
            _check_directory(raw, str(p), fail)
            with zipfile.ZipFile(raw) as zf:
                for info in zf.infolist():
                    name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                    with zf.open(info) as fh:
                        shape, dtype = _header(fh, f"{p}: not a readable .npz file (array {name!r}", fail)
                        n = int(np.prod(shape, dtype=object))
                        total += n * dtype.itemsize
                        if total > max_bytes:
                            raise fail(f"{p}: its arrays declare more than {max_bytes} bytes")
                        budget.take(n * (2 if dtype.kind == "c" else 1), f"its arrays (up to {name!r})")
                    with zf.open(info) as fh:
                        out[name] = np.lib.format.read_array(fh, allow_pickle=False)
        return out
    except _READ_ERRORS as e:
        if isinstance(e, JointLimitsError):  # fail()'s own, from a check above
            raise
        if isinstance(e, OSError) and e.errno is not None:
            raise fail(f"{p}: cannot read ({e.strerror or e})") from None
        raise fail(f"{p}: not a readable .npz file ({type(e).__name__}: {e})") from None


def read_npy(path: str | os.PathLike, fail: Callable[[str], Exception], max_bytes: int = MAX_ARRAY_BYTES) -> np.ndarray:
    """The array of an ``.npy`` file (at most ``max_bytes`` of values), as :func:`read_npz`."""
    p = Path(path)
    try:
        check_input_file(p, max_bytes + 65536)
        with open(p, "rb") as fh:
            shape, dtype = _header(fh, f"{p}: not a readable .npy file (the array", fail)
            n = int(np.prod(shape, dtype=object))
            if n * dtype.itemsize > max_bytes:
                raise fail(f"{p}: the array declares more than {max_bytes} bytes")
            Budget(str(p), fail).take(n * (2 if dtype.kind == "c" else 1), "the array")
            fh.seek(0)
            return np.lib.format.read_array(fh, allow_pickle=False)
    except _READ_ERRORS as e:
        if isinstance(e, JointLimitsError):
            raise
        if isinstance(e, OSError) and e.errno is not None:
            raise fail(f"{p}: cannot read ({e.strerror or e})") from None
        raise fail(f"{p}: not a readable .npy file ({type(e).__name__}: {e})") from None

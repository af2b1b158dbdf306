"""Lossless BVH reading and writing.

``load`` accepts any per-joint channel layout (rotation orders mixed per joint, position channels
anywhere in the list and in any order, 1 to 6 channels, position channels on non-root joints),
CRLF/LF, tabs, blank lines and exponents, and raises :class:`~jointlimits.errors.BVHError` with
the line number on malformed input. ``save`` writes back the same hierarchy and channel layout;
rotations that were not changed since loading are written with the exact values read.

A loaded clip remembers where its text came from (:class:`BVHSource`: the file, or the string
given to ``loads``, and where each frame's row is). Saving it again writes every unchanged value
with its original token, the original header where the hierarchy is unchanged, and the file's
line endings; changed values are written in the file's number style (fixed notation with at
least its number of decimals, as many more as the value needs to read back exactly). Euler
angles of changed rotations are the equivalent nearest the original angles of that frame.
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write
from .._native import _core
from ..errors import BVHError
from ..motion import quat
from ..motion.skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Motion, Skeleton

__all__ = ["load", "loads", "save", "dumps", "channel_data", "CHANNEL_NAMES", "BVHSource"]

CHANNEL_NAMES = POSITION_CHANNELS + ROTATION_CHANNELS
_TOKEN = re.compile(r"[{}]|[^\s{}]+")
#: ASCII number syntax (``float`` alone would take '1_000', Arabic-Indic or fullwidth digits)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_UINT = re.compile(r"[0-9]+", re.ASCII)
#: bytes a frame row may hold: anything else is reported before any number is parsed
_ROW_BYTES = b"0123456789+-.eE \t\r\n"
#: shortest Frame Time accepted (1 MHz): below it the frame rate is meaningless or infinite
MIN_FRAME_TIME = 1e-6
#: file bytes read per block of frame rows (bounds the memory of parsing and the cost of a bad row)
_BLOCK_BYTES = 1 << 17


class _Tokens:
    """Header tokens with their 1-based line numbers."""

    def __init__(self, lines: Sequence[str], path: str | None):
        self.toks: list[tuple[str, int]] = []
        self.path = path
        self.motion_line = None
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped.upper() == "MOTION" or stripped.upper().startswith("MOTION "):
                self.motion_line = i
                break
            for t in _TOKEN.findall(line):
                self.toks.append((t, i + 1))
        self.pos = 0
        # where a hierarchy that ends too early is reported: the MOTION line, or the file's end
        self.last_line = len(lines) if self.motion_line is None else self.motion_line + 1

    def err(self, msg: str, line: int | None = None) -> BVHError:
        if line is None:
            line = self.toks[self.pos][1] if self.pos < len(self.toks) else self.last_line
        return BVHError(msg, line, self.path)

    def peek(self) -> str | None:
        return self.toks[self.pos][0] if self.pos < len(self.toks) else None

    def next(self, what: str) -> tuple[str, int]:
        if self.pos >= len(self.toks):
            raise self.err(f"unexpected end of hierarchy, expected {what}")
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def expect(self, word: str) -> int:
        t, line = self.next(repr(word))
        if t.upper() != word.upper():
            raise BVHError(f"expected {word!r}, found {t!r}", line, self.path)
        return line

    def number(self, what: str) -> float:
        t, line = self.next(what)
        if not _FLOAT.fullmatch(t):
            if t.lower().lstrip("+-") in ("nan", "inf", "infinity"):
                raise BVHError(f"{what} is not finite ({t})", line, self.path)
            raise BVHError(f"expected a number for {what}, found {t!r}", line, self.path)
        v = float(t)
        if not math.isfinite(v):
            raise BVHError(f"{what} is not finite ({t})", line, self.path)
        return v

    def rest_of_line(self, line: int) -> list[str]:
        out = []
        while self.pos < len(self.toks) and self.toks[self.pos][1] == line and self.toks[self.pos][0] not in "{}":
            out.append(self.toks[self.pos][0])
            self.pos += 1
        return out


def _parse_hierarchy(tk: _Tokens):
    """The joint tree, read with an explicit stack (any nesting depth, no recursion)."""
    names: list[str] = []
    seen: set[str] = set()
    parents: list[int] = []
    offsets: list[list[float]] = []
    channels: list[list[str]] = []
    end_sites: list[tuple[int, np.ndarray]] = []

    tk.expect("HIERARCHY")
    t, line = tk.next("ROOT")
    if t.upper() != "ROOT":
        raise BVHError(f"expected 'ROOT', found {t!r}", line, tk.path)

    def open_joint(parent: int, line: int) -> int:
        name_parts = tk.rest_of_line(line)
        if not name_parts:
            raise BVHError("joint without a name", line, tk.path)
        name = " ".join(name_parts)
        if name in seen:
            raise BVHError(f"duplicate joint name {name!r}", line, tk.path)
        tk.expect("{")
        tk.expect("OFFSET")
        off = [tk.number("OFFSET x"), tk.number("OFFSET y"), tk.number("OFFSET z")]
        tk.expect("CHANNELS")
        n_tok, n_line = tk.next("the channel count")
        if not _UINT.fullmatch(n_tok):
            raise BVHError(f"expected a channel count, found {n_tok!r}", n_line, tk.path)
        n = int(n_tok)
        if not 0 <= n <= 6:
            raise BVHError(f"channel count must be 0..6, found {n}", n_line, tk.path)
        chans = []
        for _ in range(n):
            c, cl = tk.next("a channel name")
            canon = next((k for k in CHANNEL_NAMES if k.lower() == c.lower()), None)
            if canon is None:
                raise BVHError(f"unknown channel name {c!r} (expected one of {', '.join(CHANNEL_NAMES)})", cl, tk.path)
            if canon in chans:
                raise BVHError(f"channel {canon} listed twice for joint {name!r}", cl, tk.path)
            chans.append(canon)
        names.append(name)
        seen.add(name)
        parents.append(parent)
        offsets.append(off)
        channels.append(chans)
        return len(names) - 1

    stack = [open_joint(-1, line)]  # joints whose '}' is still to come
    while stack:
        j = stack[-1]
        if tk.peek() is None:
            raise tk.err(f"unbalanced braces: joint {names[j]!r} is not closed before MOTION")
        tok, tl = tk.next("JOINT, End Site or '}'")
        up = tok.upper()
        if up == "}":
            stack.pop()
        elif up == "JOINT":
            stack.append(open_joint(j, tl))
        elif up == "END":
            site = tk.rest_of_line(tl)
            if [s.upper() for s in site] != ["SITE"]:
                raise BVHError(f"expected 'End Site', found {' '.join(['End'] + site)!r}", tl, tk.path)
            tk.expect("{")
            tk.expect("OFFSET")
            eo = np.array([tk.number("OFFSET x"), tk.number("OFFSET y"), tk.number("OFFSET z")])
            tk.expect("}")
            end_sites.append((j, eo))
        else:
            raise BVHError(f"expected JOINT, End Site or '}}', found {tok!r}", tl, tk.path)

    if tk.peek() is not None:
        tok, tl = tk.next("MOTION")
        if tok.upper() == "ROOT":
            raise BVHError("more than one ROOT is not supported", tl, tk.path)
        raise BVHError(f"expected MOTION after the hierarchy, found {tok!r} (unbalanced braces?)", tl, tk.path)
    return Skeleton(names, np.array(parents), np.array(offsets), channels, end_sites)


def _header_value(line: str, key: str, lineno: int, path: str | None) -> str:
    m = re.match(r"\s*" + key + r"\s*:?\s*(\S+)\s*$", line, re.IGNORECASE)
    if not m:
        raise BVHError(f"expected '{key}: <value>', found {line.strip()!r}", lineno, path)
    return m.group(1)


def _parse_rows_slow(lines: Sequence[str], first_line: int, n_ch: int, path: str | None) -> NDArray[np.float64]:
    rows: list[list[float]] = []
    for i, line in enumerate(lines):
        toks = line.split()
        if not toks:
            continue
        ln = first_line + i
        if len(toks) != n_ch:
            raise BVHError(f"expected {n_ch} channel values on frame {len(rows)}, found {len(toks)}", ln, path)
        vals = []
        for t in toks:
            try:
                v = float(t)
            except ValueError:
                raise BVHError(f"non-numeric channel value {t!r} on frame {len(rows)}", ln, path) from None
            if not math.isfinite(v):
                raise BVHError(f"channel value {t!r} on frame {len(rows)} is not finite", ln, path)
            vals.append(v)
        rows.append(vals)
    return np.array(rows, dtype=np.float64).reshape(len(rows), n_ch)


def _parse_block(lines: Sequence[str], first_line: int, n_ch: int, path: str | None) -> NDArray[np.float64]:
    """The number-parsing hot path: rows of ``n_ch`` ASCII numbers (blank lines skipped) -> ``[rows, n_ch]``.

    ``lines`` hold only the bytes in ``_ROW_BYTES`` (checked by the caller). Any malformed row
    raises :class:`BVHError` with its line (1-based, ``first_line`` is ``lines[0]``'s) and its frame
    (0-based within the block). A compiled parser may replace this body; the signature stays.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # loadtxt warns on empty input; counts are checked by the caller
            flat = np.loadtxt(lines, dtype=np.float64, comments=None, ndmin=2)
        if flat.shape[1:] == (n_ch,) and np.isfinite(flat).all():
            return flat
        if flat.size == 0 and not any(l.strip() for l in lines):
            return np.zeros((0, n_ch))
    except ValueError:
        pass
    return _parse_rows_slow(lines, first_line, n_ch, path)


class _EulerRotations:
    """``source_euler[0]`` of a loaded clip: the rotations its Euler angles produced, computed when
    asked for instead of stored (a stored copy would cost as much memory as the rotations).

    Behaves like the ``[F, J, 4]`` array for what Motion and splicing do with it: ``shape``,
    slicing frames, ``np.asarray``/``np.concatenate``.
    """

    ndim = 3
    dtype = np.dtype(np.float64)

    def __init__(self, orders: list[str], euler: NDArray[np.float64]):
        self._orders = orders  # per joint: its rotation axes ('' for none)
        self._euler = euler

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self._euler.shape[0], self._euler.shape[1], 4)

    def __len__(self) -> int:
        return self._euler.shape[0]

    def joint(self, j: int) -> NDArray[np.float64]:
        """``[F, 4]`` rotations of joint j, bit-identical to those computed when loading."""
        axes = self._orders[j]
        if not axes:
            out = np.zeros((self._euler.shape[0], 4))
            out[:, 0] = 1.0
            return out
        return quat.from_euler_axes(self._euler[:, j:j + 1, :len(axes)], axes, degrees=True)[:, 0]

    def __array__(self, dtype=None, copy=None) -> NDArray[np.float64]:
        out = np.empty(self.shape)
        for j in range(self.shape[1]):
            out[:, j] = self.joint(j)
        return out if dtype is None else out.astype(dtype)

    def copy(self) -> NDArray[np.float64]:
        return np.asarray(self)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _EulerRotations(self._orders, self._euler[key])
        return np.asarray(self)[key]

    def __eq__(self, other):  # elementwise, like the array it stands for
        return np.asarray(self) == other

    __hash__ = None  # type: ignore[assignment]


_H = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9),
      np.uint64(0x27D4EB2F165667C5))


def _qhash(q: NDArray[np.float64]) -> NDArray[np.uint64]:
    """64-bit fingerprints of quaternions ``[..., 4]`` (their exact bits): how a save tells an
    unchanged rotation from a changed one without keeping the Euler angles it was read from."""
    u = np.ascontiguousarray(q, np.float64).view(np.uint64)
    with np.errstate(over="ignore"):  # wrapping multiplication is the point
        h = u[..., 0] * _H[0]
        for k in (1, 2, 3):
            h = (h ^ (h >> np.uint64(29))) * _H[k] + u[..., k]
        h ^= h >> np.uint64(32)
        return h * _H[0]


class _LazyEuler:
    """``source_euler[1]`` of a loaded clip: the ``[F, J, 3]`` Euler angles of its file, read from
    the file again when first needed (keeping them from the load would cost a third of the
    clip's memory). Raises BVHError if the file changed or is gone by then."""

    ndim = 3
    dtype = np.dtype(np.float64)

    def __init__(self, source: BVHSource):
        self._source = source
        self._cache: NDArray[np.float64] | None = None

    @property
    def shape(self) -> tuple[int, int, int]:
        return (len(self._source), self._source.skeleton.num_joints, 3)

    def _get(self) -> NDArray[np.float64]:
        if self._cache is None:
            self._cache = self._source.euler()
        return self._cache

    def __array__(self, dtype=None, copy=None) -> NDArray[np.float64]:
        a = self._get()
        return a if dtype is None else a.astype(dtype)

    def copy(self) -> NDArray[np.float64]:
        return self._get().copy()

    def __len__(self) -> int:
        return len(self._source)

    def __getitem__(self, key):
        if isinstance(key, slice) and self._cache is None:
            return _LazyEuler(self._source[key])
        return self._get()[key]


class BVHSource:
    """The text a clip was loaded from: the file (re-read when saving, checked unchanged by size
    and modification time) or the bytes given to :func:`loads`; the header's end, each frame
    row's byte range (``rows[F, 2]``, line ending included), the bytes after the last row, the
    line ending, the usual number of decimals and the parsed skeleton, frame count and frame time."""

    def __init__(self, path: str | None, stat: tuple[int, int] | None, data: bytes | None, header_end: int,
                 motion_end: int, rows: NDArray[np.int64], tail_start: int, eol: bytes, decimals: int,
                 skeleton: Skeleton, n_frames: int, frame_time: float, frame_time_token: bytes,
                 hashes: NDArray[np.uint64]):
        self.path, self.stat, self.data = path, stat, data
        self.hashes = hashes  # [F, J]: _qhash of each rotation as loaded
        self.header_end, self.motion_end, self.rows, self.tail_start = header_end, motion_end, rows, tail_start
        self.eol, self.decimals = eol, decimals
        self.skeleton, self.n_frames, self.frame_time, self.frame_time_token = (skeleton, n_frames, frame_time,
                                                                              frame_time_token)

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def __getitem__(self, sl: slice) -> BVHSource:
        out = BVHSource.__new__(BVHSource)
        out.__dict__.update(self.__dict__)
        out.rows = self.rows[sl]
        out.hashes = self.hashes[sl]
        return out

    @property
    def shape(self) -> tuple[int, ...]:  # lets Motion treat it like the per-frame arrays it slices with
        return (len(self),)

    def whole(self) -> bool:
        """Whether the rows are all the source's rows, in order."""
        return len(self) == self.n_frames and (len(self) == 0 or (
            self.rows[0, 0] == self.header_end and self.rows[-1, 1] == self.tail_start
            and bool(np.all(self.rows[1:, 0] >= self.rows[:-1, 1]))))

    def read(self) -> bytes | None:
        """The source's bytes, or None if its file is gone or changed since it was loaded."""
        if self.data is not None:
            return self.data
        assert self.path is not None  # a source holds its bytes or its file's path
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if (st.st_size, st.st_mtime_ns) != self.stat:
                    return None
                return fh.read()
        except OSError:
            return None

    def values(self, raw: bytes | None = None) -> NDArray[np.float64] | None:
        """``[F, C]`` channel values of the rows, parsed from the source again (None if it changed)."""
        raw = self.read() if raw is None else raw
        if raw is None:
            return None
        n_ch = sum(len(c) for c in self.skeleton.channels)
        out = np.empty((len(self), n_ch))
        for a in range(0, len(self), _ROWS_PER_WRITE):
            rows = self.rows[a:a + _ROWS_PER_WRITE]
            chunk, _, _ = _row_bytes(raw, rows)
            try:
                v = _parse_rows(chunk if chunk.endswith(b"\n") else chunk + b"\n", 1, 0, n_ch, None)
            except BVHError:
                return None
            if v.shape != (rows.shape[0], n_ch):
                return None
            out[a:a + rows.shape[0]] = v
        return out

    def euler(self) -> NDArray[np.float64]:
        """``[F, J, 3]`` Euler angles of the rows as read (BVHError if the source changed)."""
        v = self.values()
        if v is None:
            raise BVHError("changed or removed since the clip was loaded: its original values are gone", None,
                           self.path)
        out = np.zeros((len(self), self.skeleton.num_joints, 3))
        col = 0
        for j, chans in enumerate(self.skeleton.channels):
            k = 0
            for c in chans:
                if c in ROTATION_CHANNELS:
                    out[:, j, k] = v[:, col]
                    k += 1
                col += 1
        return out

    def same_skeleton(self, sk: Skeleton) -> bool:
        a = self.skeleton
        return (a.names == sk.names and np.array_equal(a.parents, sk.parents) and np.array_equal(a.offsets, sk.offsets)
                and [list(c) for c in a.channels] == [list(c) for c in sk.channels]
                and len(a.end_sites) == len(sk.end_sites)
                and all(p == q and np.array_equal(o, u) for (p, o), (q, u) in zip(a.end_sites, sk.end_sites)))


def _row_bytes(raw: bytes, rows: NDArray[np.int64]) -> tuple[bytes, NDArray[np.int64], NDArray[np.int64]]:
    """The bytes of some source rows and each row's (start, end) in them: one slice when the
    rows are in file order (blank lines between rows go with the next row), else joined."""
    if rows.shape[0] and bool(np.all(rows[1:, 0] >= rows[:-1, 1])):
        a = int(rows[0, 0])
        ends = rows[:, 1] - a
        return raw[a:int(rows[-1, 1])], np.concatenate([[0], ends[:-1]]).astype(np.int64), ends.astype(np.int64)
    parts = [raw[int(x):int(y)] for x, y in rows]
    ends = np.cumsum([len(q) for q in parts]).astype(np.int64) if parts else np.zeros(0, np.int64)
    return b"".join(parts), np.concatenate([[0], ends[:-1]]).astype(np.int64), ends


_DECIMALS = re.compile(rb"[0-9]\.([0-9]*)")


def _row_ranges(block: bytes) -> NDArray[np.int64]:
    """``[n, 2]`` byte ranges (line ending included) of the non-blank lines of a block."""
    out: list[int] = []
    pos, size = 0, len(block)
    for line in block.split(b"\n"):
        end = pos + len(line) + 1
        if line.strip():
            out += (pos, min(end, size))
        pos = end
    return np.array(out, np.int64).reshape(-1, 2)


def _decimals(block: bytes) -> int:
    """The most common number of decimals among the first values of a block of rows."""
    counts = [len(m) for m in _DECIMALS.findall(block[:8192])]
    if not counts:
        return 0
    vals, n = np.unique(counts, return_counts=True)
    return int(min(20, vals[np.argmax(n)]))


class _MotionBuilder:
    """Fills a clip's arrays block by block of channel rows (no ``[F, C]`` copy of the whole data)."""

    def __init__(self, skeleton: Skeleton, capacity: int):
        J = skeleton.num_joints
        self.skeleton = skeleton
        self.positions = np.empty((capacity, J, 3))
        self.positions[:] = skeleton.offsets[None]
        self.rotations = np.zeros((capacity, J, 4))
        self.rotations[..., 0] = 1.0
        self.hashes = np.full((capacity, J), _qhash(np.array([1.0, 0.0, 0.0, 0.0]))[()], np.uint64)
        self.pos_cols: list[tuple[int, int, int]] = []  # (joint, axis, column)
        groups: dict[str, tuple[list[int], list[list[int]]]] = {}
        self.orders: list[str] = []
        col = 0
        for j, chans in enumerate(skeleton.channels):
            rot_cols = []
            for c in chans:
                if c in POSITION_CHANNELS:
                    self.pos_cols.append((j, POSITION_CHANNELS.index(c), col))
                else:
                    rot_cols.append(col)
                col += 1
            axes = "".join(c[0].lower() for c in chans if c in ROTATION_CHANNELS)
            self.orders.append(axes)
            if axes:
                g = groups.setdefault(axes, ([], []))
                g[0].append(j)
                g[1].append(rot_cols)
        self.groups = [(axes, np.array(js), np.array(cols)) for axes, (js, cols) in groups.items()]
        self.n = 0

    def add(self, data: NDArray[np.float64]) -> None:
        a, b = self.n, self.n + data.shape[0]
        for j, k, col in self.pos_cols:
            self.positions[a:b, j, k] = data[:, col]
        for axes, js, cols in self.groups:
            ang = data[:, cols]  # [rows, Jg, n]
            q = quat.from_euler_axes(ang, axes, degrees=True)
            self.rotations[a:b, js] = q
            self.hashes[a:b, js] = _qhash(q)
        self.n = b

    def motion(self, frame_time: float, source: BVHSource | None = None) -> Motion:
        euler = None if source is None else _LazyEuler(source)
        return Motion(self.skeleton, self.rotations, self.positions, frame_time,
                      # the two stand in for the [F, J, 4] and [F, J, 3] arrays Motion takes
                      source_euler=None if euler is None else (_EulerRotations(self.orders, euler), euler),  # type: ignore[arg-type]
                      source_text=source)


def _first_bad_byte(block: bytes) -> int | None:
    rest = block.translate(None, _ROW_BYTES)
    if not rest:
        return None
    bad = rest[0]
    return block.index(bytes([bad]))


def _strict_error(line: str, lineno: int, frame: int, n_ch: int, path: str | None) -> BVHError:
    """The error for a row holding a byte no ASCII number has."""
    if "\x00" in line:
        return BVHError("binary data (NUL byte) in file: not a BVH text file", lineno, path)
    toks = line.split()
    if len(toks) != n_ch:
        return BVHError(f"expected {n_ch} channel values on frame {frame}, found {len(toks)}", lineno, path)
    for t in toks:
        if not _FLOAT.fullmatch(t):
            if t.lower().lstrip("+-") in ("nan", "inf", "infinity"):
                return BVHError(f"channel value {t!r} on frame {frame} is not finite", lineno, path)
            return BVHError(f"non-numeric channel value {t!r} on frame {frame}", lineno, path)
    return BVHError(f"unexpected character in frame {frame}: {line.strip()!r}", lineno, path)


_FRAME_IN_MSG = re.compile(r"on frame (\d+)")


def _parse_rows(block: bytes, first_line: int, first_frame: int, n_ch: int, path: str | None) -> NDArray[np.float64]:
    """Check a block of rows for stray bytes, then parse it; errors give the file's line and frame."""
    lines = block.decode("latin-1").split("\n")
    bad = _first_bad_byte(block)
    stop = len(lines) if bad is None else block.count(b"\n", 0, bad)
    try:
        data = _parse_block(lines[:stop], first_line, n_ch, path)
    except BVHError as e:
        if first_frame:
            raise BVHError(_FRAME_IN_MSG.sub(lambda m: f"on frame {int(m.group(1)) + first_frame}", e.reason),
                           e.line, path) from None
        raise
    if bad is not None:
        raw = block.split(b"\n")[stop]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.decode("latin-1")
        raise _strict_error(line, first_line + stop, first_frame + data.shape[0], n_ch, path)
    return data


def _read_header(fh: IO[bytes], path: str | None) -> tuple[list[str], int]:
    """The lines up to and including MOTION (split on \\n only, decoded as UTF-8 or else Latin-1)."""
    raw: list[bytes] = []
    for line in fh:
        raw.append(line)
        st = line.strip().upper()
        if st == b"MOTION" or st.startswith(b"MOTION "):
            break
    if raw and raw[0].startswith(b"\xef\xbb\xbf"):
        raw[0] = raw[0][3:]  # UTF-8 byte order mark
    for i, line in enumerate(raw):
        if b"\x00" in line:
            raise BVHError("binary data (NUL byte) in file: not a BVH text file", i + 1, path)
    head = b"".join(raw)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = head.decode("latin-1")
    lines = [l[:-1] if l.endswith("\r") else l for l in text.split("\n")]
    if lines and lines[-1] == "" and head.endswith(b"\n"):
        lines.pop()
    return lines, len(raw)


def _next_nonblank(fh: IO[bytes], lineno: int) -> tuple[str | None, int]:
    for line in fh:
        lineno += 1
        if line.strip():
            return line.decode("latin-1"), lineno
    return None, lineno


def _read(fh: IO[bytes], size: int, path: str | None, data: bytes | None = None,
          stat: tuple[int, int] | None = None, source_path: str | None = None) -> Motion:
    lines, n_head = _read_header(fh, path)
    motion_end = fh.tell()
    tk = _Tokens(lines, path)
    if not tk.toks and tk.motion_line is None:
        raise BVHError("empty file: expected HIERARCHY", 1, path)
    skeleton = _parse_hierarchy(tk)
    if tk.motion_line is None:
        raise BVHError("missing MOTION section (file truncated?)", max(1, len(lines)), path)
    line, ln = _next_nonblank(fh, n_head)
    if line is None:
        raise BVHError("truncated after MOTION: expected 'Frames: <count>'", max(1, ln), path)
    fv = _header_value(line, "Frames", ln, path)
    if not _UINT.fullmatch(fv):
        if fv.startswith("-") and _UINT.fullmatch(fv[1:]):
            raise BVHError(f"Frames count must not be negative, found {fv}", ln, path)
        raise BVHError(f"Frames count must be an integer, found {fv!r}", ln, path)
    n_frames = int(fv)
    line, ln = _next_nonblank(fh, ln)
    if line is None:
        raise BVHError("truncated: expected 'Frame Time: <seconds>'", max(1, ln), path)
    tv = _header_value(line, "Frame Time", ln, path)
    if not _FLOAT.fullmatch(tv):
        raise BVHError(f"Frame Time must be a number, found {tv!r}", ln, path)
    frame_time = float(tv)
    ft_token = tv.encode("latin-1")
    if not (math.isfinite(frame_time) and frame_time > 0):
        raise BVHError(f"Frame Time must be positive and finite, found {tv!r}", ln, path)
    if frame_time < MIN_FRAME_TIME:
        raise BVHError(f"Frame Time {tv} is below {MIN_FRAME_TIME:g} s (more than a million frames per second)",
                       ln, path)
    n_ch = sum(len(c) for c in skeleton.channels)
    first_line = ln + 1
    remaining = max(0, size - fh.tell()) if size >= 0 else 0
    if n_ch > 0:
        # each frame takes at least 2 bytes per channel: a header count beyond that cannot be right
        capacity = min(n_frames, remaining // (2 * n_ch) + 1)
    else:
        capacity = n_frames
        if n_frames * max(1, skeleton.num_joints) > 10**8:
            raise BVHError(f"Frames: {n_frames} is too many for a clip without channels", ln - 1, path)
    builder = _MotionBuilder(skeleton, capacity)
    held = 0  # rows found, also past the header's count
    carry = b""
    line_no = first_line
    data_start = fh.tell()
    block_at = data_start  # file offset of the block being parsed
    rows: list[NDArray[np.int64]] = []
    decimals = None
    while True:
        chunk = fh.read(_BLOCK_BYTES)
        block = carry + chunk
        if not chunk:
            carry = b""
        else:
            cut = block.rfind(b"\n")
            if cut < 0:
                carry = block
                continue
            block, carry = block[:cut + 1], block[cut + 1:]
        if block:
            if n_ch == 0:
                nz = [k for k, l in enumerate(block.split(b"\n")) if l.strip()]
                if nz:
                    raise BVHError("frame data given but no joint has channels", line_no + nz[0], path)
            elif held >= n_frames:
                held += sum(1 for l in block.split(b"\n") if l.strip())
            else:
                values = _parse_rows(block, line_no, held, n_ch, path)
                take = min(values.shape[0], n_frames - held)
                if take > capacity - builder.n:
                    take = capacity - builder.n
                builder.add(values[:take])
                ranges = _row_ranges(block)
                if ranges.shape[0] == values.shape[0]:
                    rows.append(ranges[:take] + block_at)
                if decimals is None:
                    decimals = _decimals(block)
                held += values.shape[0]
            line_no += block.count(b"\n")
            block_at += len(block)
        if not chunk:
            break
    if held != n_frames:
        raise BVHError(f"header says Frames: {n_frames} but the file holds {held} frames "
                       "(truncated or extra rows)", max(1, line_no - 1), path)
    source = None
    row_ranges = np.concatenate(rows) if rows else np.zeros((0, 2), np.int64)
    if row_ranges.shape[0]:
        row_ranges[0, 0] = data_start  # blank lines before the first row go with it
    if row_ranges.shape[0] == builder.n == n_frames and (source_path is not None or data is not None):
        eol = b"\r\n" if _crlf_header(data, source_path) else b"\n"
        tail = int(row_ranges[-1, 1]) if n_frames else data_start
        source = BVHSource(
            None if data is not None else source_path,
            stat,
            data,
            data_start,
            motion_end,
            row_ranges,
            tail,
            eol,
            decimals or 0,
            skeleton.copy(),
            n_frames,
            frame_time,
            ft_token,
            builder.hashes[:n_frames],
        )
    return builder.motion(frame_time, source)


def _crlf_header(data: bytes | None, path: str | None) -> bool:
    """Whether the file's first line ends with CRLF."""
    if data is not None:
        head = data[:4096]
    else:
        assert path is not None  # called with the bytes or the path
        try:
            with open(path, "rb") as fh:
                head = fh.read(4096)
        except OSError:
            return False
    i = head.find(b"\n")
    return i > 0 and head[i - 1:i] == b"\r"


def loads(text: str, path: str | None = None) -> Motion:
    """Parse BVH text into a Motion (see :func:`load`)."""
    raw = text.encode("utf-8", "surrogateescape")
    return _read(io.BytesIO(raw), len(raw), path, data=raw)


def load(path: str | os.PathLike) -> Motion:
    """Read a BVH file into a :class:`Motion` (float64, local rotations as quaternions).

    Memory: the clip's arrays plus one block of rows; the file's text is never held whole.
    """
    p = Path(path)
    try:
        fh = open(p, "rb")
    except OSError as e:
        raise BVHError(f"cannot read file: {e.strerror or e}", None, str(p)) from None
    with fh:
        try:
            st = os.fstat(fh.fileno())
            return _read(fh, st.st_size, str(p), stat=(st.st_size, st.st_mtime_ns), source_path=os.path.abspath(p))
        except OSError as e:
            raise BVHError(f"cannot read file: {e.strerror or e}", None, str(p)) from None


def _check_fixed_positions(motion: Motion) -> None:
    """BVHError if a joint moves along an axis it has no position channel for."""
    sk = motion.skeleton
    for j, chans in enumerate(sk.channels):
        missing = [k for k in range(3) if POSITION_CHANNELS[k] not in chans]
        if missing:
            dev = np.abs(motion.positions[:, j, missing] - sk.offsets[j, missing])
            if dev.size and np.max(dev) > 1e-9 * max(1.0, float(np.max(np.abs(sk.offsets[j])))):
                raise BVHError(f"joint {sk.names[j]!r} moves along axes without position channels; "
                               "add position channels to the skeleton to save it")


def _text_source(motion: Motion) -> BVHSource | None:
    """The motion's source text if its rows are the motion's frames in the same channel layout."""
    src = motion.source_text
    if not isinstance(src, BVHSource) or len(src) != motion.num_frames:
        return None
    if [list(c) for c in src.skeleton.channels] != [list(c) for c in motion.skeleton.channels]:
        return None
    return src


def channel_data(motion: Motion) -> NDArray[np.float64]:
    """The ``[F, C]`` channel values (degrees, file units) that represent ``motion`` in BVH order."""
    return _channel_data(motion)[0]


def _channel_data(motion: Motion) -> tuple[NDArray[np.float64], NDArray[np.float64] | None, bytes | None]:
    """(channel values, the source rows' values or None, the source's bytes or None)."""
    sk = motion.skeleton
    F = motion.num_frames
    motion.check_finite()
    cols: list[NDArray[np.float64]] = []
    text = _text_source(motion)
    raw = text.read() if text is not None else None
    old = text.values(raw) if raw is not None else None  # type: ignore[union-attr]  # raw is text's bytes
    src = motion.source_euler
    if src is not None and (old is not None or src[0].shape != motion.rotations.shape
                            or isinstance(src[1], _LazyEuler) and src[1]._cache is None):
        src = None  # the text's own values serve (or the text is gone: nothing to read them from)
    if old is not None and text is not None and np.array_equal(_qhash(motion.rotations), text.hashes):
        pos_cols = [
            (c, j, POSITION_CHANNELS.index(ch))
            for c, (j, ch) in enumerate((j, ch) for j, chans in enumerate(sk.channels) for ch in chans)
            if ch in POSITION_CHANNELS
        ]
        if all(np.array_equal(old[:, c], motion.positions[:, j, k]) for c, j, k in pos_cols):
            _check_fixed_positions(motion)
            return old, old, raw  # nothing changed since loading
    col = 0
    for j, chans in enumerate(sk.channels):
        axes = "".join(c[0].lower() for c in chans if c in ROTATION_CHANNELS)
        has_pos = [POSITION_CHANNELS.index(c) for c in chans if c in POSITION_CHANNELS]
        missing_pos = [k for k in range(3) if k not in has_pos]
        if missing_pos:
            dev = np.abs(motion.positions[:, j, missing_pos] - sk.offsets[j, missing_pos])
            if dev.size and np.max(dev) > 1e-9 * max(1.0, float(np.max(np.abs(sk.offsets[j])))):
                raise BVHError(f"joint {sk.names[j]!r} moves along axes without position channels; "
                               "add position channels to the skeleton to save it")
        rot = None
        if axes:
            q = motion.rotations[:, j]
            n = len(axes)
            hint = None
            exact = None
            if old is not None:
                assert text is not None  # old holds the text's values
                hint = old[:, [col + k for k, c in enumerate(chans) if c in ROTATION_CHANNELS]]
                exact = _qhash(q) == text.hashes[:, j]
            elif src is not None:
                hint = src[1][:, j, :n].copy()
                src_q = src[0].joint(j) if isinstance(src[0], _EulerRotations) else src[0][:, j]
                exact = np.all(src_q == q, axis=-1)
            if exact is not None and exact.all():
                rot = hint
            else:
                rot = quat.to_euler_axes(quat.normalize(q), axes, hint, exact)
        k = 0
        for c in chans:
            if c in POSITION_CHANNELS:
                cols.append(motion.positions[:, j, POSITION_CHANNELS.index(c)])
            else:
                cols.append(rot[:, k])  # type: ignore[index]  # set where chans has rotations
                k += 1
        col += len(chans)
    return (np.stack(cols, axis=-1) if cols else np.zeros((F, 0))), old, raw


def _fmt(x: float) -> str:
    r = repr(float(x))
    return "0" if r in ("0.0", "-0.0") else (r[:-2] if r.endswith(".0") else r)


_ROWS_PER_WRITE = 4096


def _format_rows(data: NDArray[np.float64], decimals: int = 0, eol: bytes = b"\n") -> bytes:
    """Rows of channel values as BVH text that parses back to exactly the same values: each the
    shortest fixed-notation decimal with at least ``decimals`` places (compiled)."""
    if data.shape[0] == 0 or data.shape[1] == 0:
        return b""
    flat = np.ascontiguousarray(data, np.float64).reshape(-1)
    out = np.empty(flat.size * (64 + len(eol)) + 1, np.uint8)
    n = _core.format_rows(flat, data.shape[1], int(decimals), eol, out)
    return out[:n].tobytes()


def _merge_rows(data: NDArray[np.float64], old: NDArray[np.float64], rows: NDArray[np.int64], raw: bytes,
                decimals: int, eol: bytes) -> bytes | None:
    """The source rows ``rows`` (byte ranges of ``raw``, holding the values ``old``) with the values
    that differ in ``data`` replaced, everything else copied byte for byte; None if a row does not
    hold its values."""
    n, n_ch = data.shape
    chunk, starts, ends = _row_bytes(raw, rows)
    if old is data:
        return chunk
    same = (old == data).view(np.uint8)
    if same.all():
        return chunk
    flat = np.ascontiguousarray(data).reshape(-1)
    out = np.empty(len(chunk) + n * len(eol) + int(flat.size - same.sum()) * 64 + 1, np.uint8)
    k = _core.merge_rows(chunk, np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(ends, np.int64),
                         n_ch, np.ascontiguousarray(same).reshape(-1), flat, int(decimals), eol, out)
    return None if k < 0 else out[:k].tobytes()


def _hierarchy_lines(sk: Skeleton) -> list[str]:
    """The HIERARCHY section, written with an explicit stack (any nesting depth, no recursion)."""
    out = ["HIERARCHY"]
    kids: dict[int, list[int]] = {}
    for j, p in enumerate(sk.parents):
        kids.setdefault(int(p), []).append(j)
    ends: dict[int, list[NDArray[np.float64]]] = {}
    for p, o in sk.end_sites:
        ends.setdefault(p, []).append(o)
    # (joint, depth, opened): a joint is written when first met and closed when met again
    stack: list[tuple[int, int, bool]] = [(0, 0, False)]
    while stack:
        j, depth, opened = stack.pop()
        ind = "\t" * depth
        if opened:
            for o in ends.get(j, []):
                out.append(f"{ind}\tEnd Site")
                out.append(f"{ind}\t{{")
                out.append(f"{ind}\t\tOFFSET {' '.join(_fmt(v) for v in o)}")
                out.append(f"{ind}\t}}")
            out.append(f"{ind}}}")
            continue
        out.append(f"{ind}{'ROOT' if sk.parents[j] < 0 else 'JOINT'} {sk.names[j]}")
        out.append(f"{ind}{{")
        out.append(f"{ind}\tOFFSET {' '.join(_fmt(v) for v in sk.offsets[j])}")
        out.append(f"{ind}\tCHANNELS {len(sk.channels[j])}{''.join(' ' + c for c in sk.channels[j])}")
        stack.append((j, depth, True))
        for c in reversed(kids.get(j, [])):
            stack.append((c, depth + 1, False))
    return out


def _header(motion: Motion, src: BVHSource | None, raw: bytes | None) -> bytes:
    """The header: the source's own bytes where its hierarchy (and frame count and time) are
    unchanged, else written anew with the source's line ending."""
    sk = motion.skeleton
    F = motion.num_frames
    if src is not None and raw is not None and src.same_skeleton(sk):
        if F == src.n_frames and motion.frame_time == src.frame_time:
            return raw[:src.header_end]
        ft = src.frame_time_token if motion.frame_time == src.frame_time else _fmt(motion.frame_time).encode()
        return raw[:src.motion_end] + b"Frames: %d" % F + src.eol + b"Frame Time: " + ft + src.eol
    eol = (src.eol if src is not None else b"\n").decode()
    lines = _hierarchy_lines(sk) + ["MOTION", f"Frames: {F}", f"Frame Time: {_fmt(motion.frame_time)}"]
    return (eol.join(lines) + eol).encode("utf-8", "surrogateescape")


def _write(fh: IO[bytes], motion: Motion, data: NDArray[np.float64] | None = None,
           old: NDArray[np.float64] | None = None, raw: bytes | None = None) -> None:
    if data is None:
        data, old, raw = _channel_data(motion)
    src = _text_source(motion)
    if old is None:
        raw = None
    src_rows = src.rows if raw is not None else None  # type: ignore[union-attr]  # raw is src's bytes
    eol = src.eol if src is not None else b"\n"
    decimals = src.decimals if src is not None else 0
    fh.write(_header(motion, src, raw))
    F = data.shape[0]
    for a in range(0, F, _ROWS_PER_WRITE):
        block = data[a:a + _ROWS_PER_WRITE]
        text = None
        if src_rows is not None and block.shape[1]:
            assert old is not None and raw is not None  # src_rows is set only with raw, raw only with old
            text = _merge_rows(block, old[a:a + _ROWS_PER_WRITE], src_rows[a:a + _ROWS_PER_WRITE], raw, decimals, eol)
        if text is None:
            text = _format_rows(block, decimals, eol)
        if a + _ROWS_PER_WRITE < F and text and not text.endswith(b"\n"):
            text += eol
        fh.write(text)
    if src is not None and raw is not None and src.whole():
        fh.write(raw[src.tail_start:])


def dumps(motion: Motion) -> str:
    """BVH text for a motion (same hierarchy and channel layout as its skeleton)."""
    buf = io.BytesIO()
    _write(buf, motion)
    return buf.getvalue().decode("utf-8", "surrogateescape")


def save(path: str | os.PathLike, motion: Motion, *, overwrite: bool = True) -> None:
    """Write ``motion`` to ``path`` atomically (temporary file in the same folder, then rename).

    With ``overwrite=False`` an existing file is never replaced. Nothing is written if the motion
    cannot be represented (NaN values, moving joints without position channels).
    """
    p = Path(path)
    if not overwrite and p.exists():
        raise BVHError("file exists (not overwriting it)", None, str(p))
    data, old, raw = _channel_data(motion)  # raises before a file is opened if the motion cannot be written
    with atomic_write(p, binary=True) as fh:
        _write(fh, motion, data, old, raw)

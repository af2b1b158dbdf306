"""Reading BVH: the header and hierarchy, then the frame rows block by block into a clip's arrays,
remembering the source text (:class:`~._source.BVHSource`) for a lossless save."""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import NDArray

from ..._atomic import check_input_file
from ..._budget import Budget
from ..._native import _core
from ...errors import BVHError
from ...motion import quat
from ...motion.skeleton import MAX_FRAME_TIME, MAX_OFFSET, POSITION_CHANNELS, ROTATION_CHANNELS, Motion, Skeleton
from ._parse import (
    _BLOCK_BYTES,
    _FLOAT,
    _UINT,
    MIN_FRAME_TIME,
    _decimals,
    _header_value,
    _next_nonblank,
    _parse_hierarchy,
    _parse_rows_ranges,
    _read_header,
    _Tokens,
)
from ._source import BVHSource, _EulerRotations, _LazyEuler, _qhash

_AXIS = {"x": 0, "y": 1, "z": 2}


class _MotionBuilder:
    """Fills a clip's arrays block by block of channel rows (no ``[F, C]`` copy of the whole data)."""

    def __init__(self, skeleton: Skeleton, capacity: int):
        J = skeleton.num_joints
        self.skeleton = skeleton
        # every row is written whole (defaults included) by add or add_text: no fill here
        self.positions = np.empty((capacity, J, 3))
        self.rotations = np.empty((capacity, J, 4))
        self.hashes = np.empty((capacity, J), np.uint64)
        self.ranges = np.empty((capacity, 2), np.int64)  # each row's byte range in the file
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
        self.n_ch = col
        # the compiled pass: positions, three-axis Euler joints; other rotations through "extra"
        i64 = np.int64
        self._pos_col = np.array([c for _, _, c in self.pos_cols], i64)
        self._pos_dst = np.array([3 * j + k for j, k, _ in self.pos_cols], i64)
        three = [(axes, js, cols) for axes, js, cols in self.groups if len(axes) == 3 and len(set(axes)) == 3]
        self._rot_joint = np.array([j for _, js, _ in three for j in js], i64)
        self._rot_col = np.array([c for _, _, cols in three for row in cols for c in row], i64)
        self._rot_axes = np.array([_AXIS[a] for axes, js, _ in three for _ in js for a in axes], i64)
        self._other = [
            (axes, js, cols) for axes, js, cols in self.groups if not (len(axes) == 3 and len(set(axes)) == 3)
        ]
        self._extra_col = np.array([c for _, _, cols in self._other for c in cols.ravel()], i64)
        self._extra = np.empty((capacity, self._extra_col.size))
        self._offsets = np.ascontiguousarray(skeleton.offsets, np.float64)
        self._ident = _qhash(np.array([1.0, 0.0, 0.0, 0.0]))[()]
        self.n = 0

    def add(self, data: NDArray[np.float64], ranges: NDArray[np.int64] | None) -> None:
        """Rows parsed by the checked path (``ranges``: their byte ranges in the file, if known)."""
        a, b = self.n, self.n + data.shape[0]
        self.positions[a:b] = self.skeleton.offsets[None]
        self.rotations[a:b] = (1.0, 0.0, 0.0, 0.0)
        self.hashes[a:b] = self._ident
        for j, k, col in self.pos_cols:
            self.positions[a:b, j, k] = data[:, col]
        for axes, js, cols in self.groups:
            ang = data[:, cols]  # [rows, Jg, n]
            q = quat.from_euler_axes(ang, axes, degrees=True)
            self.rotations[a:b, js] = q
            self.hashes[a:b, js] = _qhash(q)
        if ranges is not None:
            self.ranges[a:b] = ranges
        self.n = b

    def add_text(self, block: bytes, base: int, max_rows: int) -> tuple[int, int] | None:
        """Rows of a block straight from text in one compiled pass: (rows, line endings), or None
        if the block is not plain rows of numbers or holds more than max_rows (the checked path
        then reads it, and reports what is wrong)."""
        a = self.n
        rows, lines = _core.bvh_load_rows(
            block,
            self.n_ch,
            self._offsets,
            self._pos_col,
            self._pos_dst,
            self._rot_joint,
            self._rot_col,
            self._rot_axes,
            self._extra_col,
            self.positions,
            self.rotations,
            self.hashes,
            self.ranges,
            self._extra,
            a,
            max_rows,
            base,
        )
        if rows < 0:
            return None
        b = a + rows
        at = 0
        for axes, js, cols in self._other:  # rotations of one, two or repeated axes (rare)
            w = cols.size
            ang = self._extra[a:b, at : at + w].reshape(rows, len(js), -1)
            q = quat.from_euler_axes(ang, axes, degrees=True)
            self.rotations[a:b, js] = q
            self.hashes[a:b, js] = _qhash(q)
            at += w
        self.n = b
        return rows, lines

    def motion(self, frame_time: float, source: BVHSource | None = None) -> Motion:
        euler = None if source is None else _LazyEuler(source)
        return Motion(
            self.skeleton,
            self.rotations,
            self.positions,
            frame_time,
            # the two stand in for the [F, J, 4] and [F, J, 3] arrays Motion takes
            source_euler=None if euler is None else (_EulerRotations(self.orders, euler), euler),  # type: ignore[arg-type]
            source_text=source,
        )


def _read(
    fh: IO[bytes],
    size: int,
    path: str | None,
    data: bytes | None = None,
    stat: tuple[int, int] | None = None,
    source_path: str | None = None,
) -> Motion:
    if _cr_only(fh, data):
        # classic Mac OS line ends: read as LF (the rows are found by \n); saved with LF
        data = (data if data is not None else fh.read()).replace(b"\r", b"\n")
        fh, size, stat, source_path = io.BytesIO(data), len(data), None, None
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
    if frame_time > MAX_FRAME_TIME:
        raise BVHError(f"Frame Time {tv} is above {MAX_FRAME_TIME:g} s (less than one frame an hour)", ln, path)
    if frame_time < MIN_FRAME_TIME:
        raise BVHError(
            f"Frame Time {tv} is below {MIN_FRAME_TIME:g} s (more than a million frames per second)", ln, path
        )
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
    # checked before allocation: the values the frames declare, and the positions, rotations and
    # hashes (8 values a frame) of every joint without channels, which no byte of the file pays for
    static = sum(1 for c in skeleton.channels if not c)
    Budget("the clip", lambda m: BVHError(m, ln - 1, path)).take(
        capacity * (n_ch + 8 * static), f"{capacity} frames of {skeleton.num_joints} joints"
    )
    builder = _MotionBuilder(skeleton, capacity)
    held = 0  # rows found, also past the header's count
    carry = b""
    line_no = first_line
    data_start = fh.tell()
    block_at = data_start  # file offset of the block being parsed
    ranges_known = True  # every row's byte range is in builder.ranges
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
            block, carry = block[: cut + 1], block[cut + 1 :]
        if block:
            fast = None
            if n_ch > 0 and held < n_frames:
                fast = builder.add_text(block, block_at, min(n_frames - held, capacity - builder.n))
            if fast is not None:
                held += fast[0]
                line_no += fast[1]
            else:
                if n_ch == 0:
                    nz = [k for k, l in enumerate(block.split(b"\n")) if l.strip()]
                    if nz:
                        raise BVHError("frame data given but no joint has channels", line_no + nz[0], path)
                elif held >= n_frames:
                    held += sum(1 for l in block.split(b"\n") if l.strip())
                else:
                    values, ranges = _parse_rows_ranges(block, line_no, held, n_ch, path)
                    take = min(values.shape[0], n_frames - held, capacity - builder.n)
                    known = ranges.shape[0] == values.shape[0]
                    ranges_known &= known
                    builder.add(values[:take], ranges[:take] + block_at if known else None)
                    held += values.shape[0]
                line_no += block.count(b"\n")
            if decimals is None and n_ch > 0:
                decimals = _decimals(block)
            block_at += len(block)
        if not chunk:
            break
    if held != n_frames:
        raise BVHError(
            f"header says Frames: {n_frames} but the file holds {held} frames (truncated or extra rows)",
            max(1, line_no - 1),
            path,
        )
    source = None
    row_ranges = builder.ranges[: builder.n]
    if row_ranges.shape[0]:
        row_ranges[0, 0] = data_start  # blank lines before the first row go with it
    if ranges_known and builder.n == n_frames and (source_path is not None or data is not None):
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
    big = np.abs(builder.positions[: builder.n]) > MAX_OFFSET  # NaN stays (the clip's checks name it)
    if np.any(big):
        f, j = (int(i) for i in np.argwhere(big)[0][:2])
        raise BVHError(
            f"frame {f}: joint {skeleton.names[j]!r} position is beyond +-{MAX_OFFSET:g} (file units)", None, path
        )
    return builder.motion(frame_time, source)


def _cr_only(fh: IO[bytes], data: bytes | None) -> bool:
    """Whether the file's lines end with CR alone (no LF in its first 64 KB, a CR there)."""
    if data is not None:
        head = data[:65536]
    else:
        at = fh.tell()
        head = fh.read(65536)
        fh.seek(at)
    return b"\r" in head and b"\n" not in head


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
    return i > 0 and head[i - 1 : i] == b"\r"


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
        check_input_file(p)  # a FIFO would block, /dev/zero never end
        fh = open(p, "rb")
    except ValueError as e:
        raise BVHError(f"cannot read file: {e}", None, str(p)) from None
    except OSError as e:
        raise BVHError(f"cannot read file: {e.strerror or e}", None, str(p)) from None
    with fh:
        try:
            st = os.fstat(fh.fileno())
            return _read(fh, st.st_size, str(p), stat=(st.st_size, st.st_mtime_ns), source_path=os.path.abspath(p))
        except OSError as e:
            raise BVHError(f"cannot read file: {e.strerror or e}", None, str(p)) from None

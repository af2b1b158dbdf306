"""What a loaded clip remembers of its text, so that saving it again is lossless: the file (or
bytes) and each frame row's byte range (:class:`BVHSource`), fingerprints of the rotations as
loaded (:func:`_qhash`), and the Euler angles they came from, computed or re-read only when asked
for (:class:`_EulerRotations`, :class:`_LazyEuler`)."""

from __future__ import annotations

import os

import numpy as np
from numpy.typing import NDArray

from ...errors import BVHError
from ...motion import quat
from ...motion.skeleton import ROTATION_CHANNELS, Skeleton
from ._parse import _parse_rows

#: frame rows handled per block when re-reading or writing
_ROWS_PER_WRITE = 4096


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
        return quat.from_euler_axes(self._euler[:, j : j + 1, : len(axes)], axes, degrees=True)[:, 0]

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


_H = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
    np.uint64(0x27D4EB2F165667C5),
)


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

    def __init__(
        self,
        path: str | None,
        stat: tuple[int, int] | None,
        data: bytes | None,
        header_end: int,
        motion_end: int,
        rows: NDArray[np.int64],
        tail_start: int,
        eol: bytes,
        decimals: int,
        skeleton: Skeleton,
        n_frames: int,
        frame_time: float,
        frame_time_token: bytes,
        hashes: NDArray[np.uint64],
    ):
        self.path, self.stat, self.data = path, stat, data
        self.hashes = hashes  # [F, J]: _qhash of each rotation as loaded
        self.header_end, self.motion_end, self.rows, self.tail_start = header_end, motion_end, rows, tail_start
        self.eol, self.decimals = eol, decimals
        self.skeleton, self.n_frames, self.frame_time, self.frame_time_token = (
            skeleton,
            n_frames,
            frame_time,
            frame_time_token,
        )

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
        return len(self) == self.n_frames and (
            len(self) == 0
            or (
                self.rows[0, 0] == self.header_end
                and self.rows[-1, 1] == self.tail_start
                and bool(np.all(self.rows[1:, 0] >= self.rows[:-1, 1]))
            )
        )

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
            rows = self.rows[a : a + _ROWS_PER_WRITE]
            chunk, _, _ = _row_bytes(raw, rows)
            try:
                v = _parse_rows(chunk if chunk.endswith(b"\n") else chunk + b"\n", 1, 0, n_ch, None)
            except BVHError:
                return None
            if v.shape != (rows.shape[0], n_ch):
                return None
            out[a : a + rows.shape[0]] = v
        return out

    def euler(self) -> NDArray[np.float64]:
        """``[F, J, 3]`` Euler angles of the rows as read (BVHError if the source changed)."""
        v = self.values()
        if v is None:
            raise BVHError(
                "changed or removed since the clip was loaded: its original values are gone", None, self.path
            )
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
        return (
            a.names == sk.names
            and np.array_equal(a.parents, sk.parents)
            and np.array_equal(a.offsets, sk.offsets)
            and [list(c) for c in a.channels] == [list(c) for c in sk.channels]
            and len(a.end_sites) == len(sk.end_sites)
            and all(p == q and np.array_equal(o, u) for (p, o), (q, u) in zip(a.end_sites, sk.end_sites))
        )


def _row_bytes(raw: bytes, rows: NDArray[np.int64]) -> tuple[bytes, NDArray[np.int64], NDArray[np.int64]]:
    """The bytes of some source rows and each row's (start, end) in them: one slice when the
    rows follow each other in the file (blank lines between rows go with the next row), else
    joined (a stepped slice skips rows: those must not come along)."""
    if rows.shape[0] and _consecutive(raw, rows):
        a = int(rows[0, 0])
        ends = rows[:, 1] - a
        return raw[a : int(rows[-1, 1])], np.concatenate([[0], ends[:-1]]).astype(np.int64), ends.astype(np.int64)
    parts = [raw[int(x) : int(y)] for x, y in rows]
    ends = np.cumsum([len(q) for q in parts]).astype(np.int64) if parts else np.zeros(0, np.int64)
    return b"".join(parts), np.concatenate([[0], ends[:-1]]).astype(np.int64), ends


def _consecutive(raw: bytes, rows: NDArray[np.int64]) -> bool:
    """Whether each row starts where the one before ends, or after only blank space."""
    gap = rows[1:, 0] - rows[:-1, 1]
    if bool(np.any(gap < 0)):
        return False
    return all(not raw[int(rows[k, 1]) : int(rows[k + 1, 0])].strip() for k in np.flatnonzero(gap))

"""3D joint positions (markerless capture, pose estimators, retargeting): read, write, align.

Positions are not motions (no hierarchy, no rotations), so this module is not in the motion
``FORMATS`` registry. Every reader returns a :class:`JointPositions`: ``positions[F, J, 3]`` in
the file's units, the joint ``names`` and ``fps`` (None when the file does not say). NaN means
"no observation" (an occluded joint).

Layouts:

* ``.npz``: ``positions`` ``[F, J, 3]`` (required), ``names`` (``J`` strings; default: the
  skeleton's joint order), ``fps`` (a scalar, optional).
* ``.npy``: one ``[F, J, 3]`` array in the skeleton's joint order.
* ``.csv``: a header ``frame,Hips.x,Hips.y,Hips.z,Spine.x,...`` (the ``frame`` column is
  optional; three columns ``NAME.x``, ``NAME.y``, ``NAME.z`` per joint), one row per frame; an
  empty cell or ``nan`` is a missing value. An optional first line ``# fps: 30`` gives the rate.
* ``.bvh``: the global joint positions of a BVH clip (forward kinematics), with its frame rate.
"""

from __future__ import annotations

import array
import codecs
import csv
import io as _io
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._atomic import atomic_write, read_input_bytes
from .._budget import ENV_VAR, memory_budget
from ..errors import JointLimitsError
from ..motion.skeleton import MAX_FRAME_TIME, MIN_FRAME_TIME, Skeleton
from ._npz import read_npy, read_npz

__all__ = ["JointPositions", "PositionsError", "load_positions", "save_positions", "EXTENSIONS"]

EXTENSIONS = (".npz", ".npy", ".csv", ".bvh")
#: The largest CSV read (bytes): its rows are parsed into Python strings many times its size.
MAX_CSV_BYTES = 128 * 1024 * 1024


class PositionsError(JointLimitsError, ValueError):
    """A positions file is missing, malformed or does not match the skeleton."""


@dataclass
class JointPositions:
    """Global joint positions ``[F, J, 3]`` (NaN = not observed), joint ``names`` and ``fps``."""

    positions: NDArray[np.float64]
    names: list[str]
    fps: float | None = None

    def __post_init__(self) -> None:
        self.positions = np.asarray(self.positions, np.float64)
        self.names = [str(n) for n in self.names]
        if self.positions.ndim != 3 or self.positions.shape[2] != 3:
            raise PositionsError(f"positions must be [F, J, 3], got {self.positions.shape}")
        if self.positions.shape[1] != len(self.names):
            raise PositionsError(f"{len(self.names)} joint names for {self.positions.shape[1]} joints of positions")
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise PositionsError(f"duplicate joint names {dup}")
        if np.any(np.isinf(self.positions)):
            f, j = np.argwhere(np.isinf(self.positions).any(-1))[0]
            raise PositionsError(f"position of {self.names[j]!r} at frame {f} is infinite (use NaN for missing)")
        if self.fps is not None and not (
            isinstance(self.fps, (int, float, np.integer, np.floating)) and math.isfinite(self.fps) and self.fps > 0
        ):
            raise PositionsError(f"fps must be a positive number, got {self.fps!r}")
        if self.fps is not None and not 1 / MAX_FRAME_TIME <= self.fps <= 1 / MIN_FRAME_TIME:
            raise PositionsError(
                f"fps {self.fps!r} is outside [{1 / MAX_FRAME_TIME:.6g}, {1 / MIN_FRAME_TIME:g}] "
                f"(a frame time of {MIN_FRAME_TIME:g} to {MAX_FRAME_TIME:g} s, as for clips)"
            )

    @property
    def num_frames(self) -> int:
        return int(self.positions.shape[0])

    def observed(self) -> NDArray[np.bool_]:
        """``[F, J]``: whether each joint is observed in each frame."""
        return np.all(np.isfinite(self.positions), axis=-1)

    def for_skeleton(self, skeleton: Skeleton) -> NDArray[np.float64]:
        """Positions ``[F, J_skeleton, 3]`` in the skeleton's joint order; skeleton joints the file
        does not have are NaN. Raises PositionsError for names the skeleton does not have."""
        unknown = [n for n in self.names if n not in skeleton.names]
        if unknown:
            raise PositionsError(
                f"joints not in the skeleton: {', '.join(map(_shown, unknown[:8]))}"
                f"{' ...' if len(unknown) > 8 else ''} (skeleton joints: {', '.join(skeleton.names)})"
            )
        out = np.full((self.num_frames, skeleton.num_joints, 3), np.nan)
        for k, n in enumerate(self.names):
            out[:, skeleton.names.index(n)] = self.positions[:, k]
        return out


def _shown(text: str) -> str:
    """``text`` as it is when printable, else quoted with escapes (a message stays one line)."""
    return text if text.isprintable() else repr(text)


def _where(path: Path, msg: str) -> PositionsError:
    return PositionsError(f"{path}: {msg}")


def _fail(msg: str) -> PositionsError:
    return PositionsError(msg)


def _names_of(p: Path, a: np.ndarray) -> list[str]:
    if a.ndim != 1 or a.dtype.kind not in "US":
        raise _where(p, f"'names' must be a 1-D array of strings, got {a.dtype} of shape {a.shape}")
    return [n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n) for n in a.tolist()]


def _fps_of(p: Path, a: np.ndarray) -> float:
    if a.size != 1 or a.dtype.kind not in "biuf":
        raise _where(p, f"'fps' must be one real number, got {a.dtype} of shape {a.shape}")
    return float(a.reshape(()))


def _load_npz(p: Path, skeleton: Skeleton | None) -> JointPositions:
    z = read_npz(p, _fail)
    if "positions" not in z:
        raise _where(p, f"no 'positions' array (found: {', '.join(sorted(z)) or 'nothing'})")
    pos = z["positions"]
    if pos.dtype.kind not in "biuf":
        raise _where(p, f"positions must be real numbers, got {pos.dtype}")
    names = _names_of(p, z["names"]) if "names" in z else None
    fps = _fps_of(p, z["fps"]) if "fps" in z else None
    return _finish(p, np.asarray(pos, np.float64), names, fps, skeleton)


def _load_npy(p: Path, skeleton: Skeleton | None) -> JointPositions:
    pos = read_npy(p, _fail)
    if pos.dtype.kind not in "biuf":
        raise _where(p, f"positions must be real numbers, got {pos.dtype}")
    return _finish(p, np.asarray(pos, np.float64), None, None, skeleton)


def _finish(
    p: Path, pos: NDArray, names: list[str] | None, fps: float | None, skeleton: Skeleton | None
) -> JointPositions:
    if pos.ndim != 3 or pos.shape[2] != 3:
        raise _where(p, f"positions must be [frames, joints, 3], got shape {pos.shape}")
    if names is None:
        if skeleton is None:
            raise _where(p, "no joint names in the file: give the skeleton whose joint order it follows")
        if pos.shape[1] != skeleton.num_joints:
            raise _where(p, f"{pos.shape[1]} joints without names, but the skeleton has {skeleton.num_joints}")
        names = list(skeleton.names)
    try:
        return JointPositions(pos, names, fps)
    except PositionsError as e:
        raise _where(p, str(e)) from None


def _mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:.4g} MB"


def _check_utf8(raw: bytes, block: int = 1 << 20) -> None:
    """Raise UnicodeDecodeError unless ``raw`` is UTF-8 (decoded a block at a time, kept nowhere)."""
    dec = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    for at in range(0, len(raw), block):
        dec.decode(view[at : at + block])
    dec.decode(b"", final=True)


def _lines(raw: bytes) -> Iterator[str]:
    """``raw.decode("utf-8").splitlines()`` one line at a time (the text is never held whole).
    Each line the text wrapper gives ends at one ``\\n``, ``\\r`` or ``\\r\\n``; splitting it
    again splits at the other line ends ``splitlines`` knows, and keeps its final empty piece."""
    with _io.TextIOWrapper(_io.BytesIO(raw), encoding="utf-8", newline="") as fh:
        for chunk in fh:
            yield from chunk.splitlines()


def _csv_input(lines: Iterator[str]) -> Iterator[str]:
    """The lines as ``io.StringIO("\\n".join(lines))`` iterates them: each with ``\\n`` but the
    last, and no empty last line."""
    prev = None
    for line in lines:
        if prev is not None:
            yield prev + "\n"
        prev = line
    if prev:
        yield prev


def _load_csv(p: Path) -> JointPositions:
    try:
        raw = read_input_bytes(p, MAX_CSV_BYTES)
        _check_utf8(raw)  # before any row is read
    except UnicodeDecodeError:
        raise _where(p, "not a text CSV file") from None
    except ValueError as e:  # not a regular file, or too big
        raise _where(p, str(e)) from None
    lines = _lines(raw[3:] if raw.startswith(codecs.BOM_UTF8) else raw)  # the byte-order mark spreadsheets write
    first_line = next(lines, None)
    fps = None
    start = 0
    if first_line is not None and first_line.startswith("#"):
        head = first_line[1:].strip()
        key, _, val = head.partition(":")
        if key.strip().lower() == "fps":
            try:
                fps = float(val)
            except ValueError:
                raise _where(p, f"line 1: fps {val.strip()!r} is not a number") from None
        start = 1
    elif first_line is not None:
        lines = itertools.chain([first_line], lines)
    reader = csv.reader(_csv_input(lines))
    try:
        header = next(reader, None)
        if header is None:
            raise _where(p, "empty CSV file (expected a header frame,Joint.x,Joint.y,Joint.z,...)")
        header = [h.strip() for h in header]
        cols = header[1:] if header and header[0].lower() == "frame" else header
        first = len(header) - len(cols)
        if not cols or len(cols) % 3:
            raise _where(
                p, f"line {start + 1}: expected three columns NAME.x, NAME.y, NAME.z per joint, got {len(cols)}"
            )
        names = []
        for k in range(0, len(cols), 3):
            trip = cols[k : k + 3]
            base = [c.rsplit(".", 1)[0] for c in trip]
            axes = [c.rsplit(".", 1)[1].lower() if "." in c else "" for c in trip]
            if axes != ["x", "y", "z"] or len(set(base)) != 1 or not base[0]:
                raise _where(
                    p, f"line {start + 1}: columns {', '.join(map(_shown, trip))} are not NAME.x, NAME.y, NAME.z"
                )
            names.append(base[0])
        # the values are counted against the memory budget as rows arrive (every 4096 rows)
        limit = memory_budget() // 8
        flat = array.array("d")
        nan = float("nan")
        n = 0
        for i, row in enumerate(reader):
            if len(row) != len(header):
                raise _where(p, f"line {start + i + 2}: {len(row)} values, the header has {len(header)}")
            n = i + 1
            if not n % 4096 and len(flat) > limit:
                raise _where(
                    p,
                    f"its first {n} rows hold more than {_mb(limit * 8)} of values (as float64), "
                    f"the memory budget ({ENV_VAR} raises it)",
                )
            cells = row[first:] if first else row
            at = len(flat)
            try:  # float() strips the same white space as str.strip(); "" and bad cells go one by one
                flat.extend(map(float, cells))
                continue
            except ValueError:
                del flat[at:]
            vals = []
            for k, cell in enumerate(cells):
                c = cell.strip()
                if c == "" or c.lower() == "nan":
                    vals.append(nan)
                    continue
                try:
                    vals.append(float(c))
                except ValueError:
                    raise _where(p, f"line {start + i + 2}: {header[first + k]} = {c!r} is not a number") from None
            flat.extend(vals)
        if len(flat) > limit:
            raise _where(
                p,
                f"its {n} rows hold more than {_mb(limit * 8)} of values (as float64), "
                f"the memory budget ({ENV_VAR} raises it)",
            )
        data = np.frombuffer(flat, np.float64) if n else np.full((0,), np.nan)
    except csv.Error as e:  # a cell past csv's field size limit, a NUL byte
        raise _where(p, f"not a readable CSV file ({e})") from None
    try:
        return JointPositions(data.reshape(n, len(names), 3), names, fps)
    except PositionsError as e:
        raise _where(p, str(e)) from None


def _load_bvh(p: Path) -> JointPositions:
    from ..motion.skeleton import forward_kinematics
    from . import bvh

    m = bvh.load(p)
    _, gp = forward_kinematics(m)
    return JointPositions(gp, m.skeleton.names, m.fps)


def load_positions(path: str | os.PathLike, skeleton: Skeleton | None = None) -> JointPositions:
    """Read joint positions from ``.npz``, ``.npy``, ``.csv`` or ``.bvh`` (see the module
    docstring); ``skeleton`` gives the joint order of files without names."""
    p = Path(path)
    ext = p.suffix.lower()
    if ext not in EXTENSIONS:
        raise PositionsError(f"{p}: unknown positions file type {ext or '(none)'!r} (known: {', '.join(EXTENSIONS)})")
    if not p.exists():
        raise PositionsError(f"{p}: no such file")
    if not p.is_file():
        raise PositionsError(f"{p}: not a regular file (a folder, device, FIFO or socket)")
    if ext == ".npz":
        return _load_npz(p, skeleton)
    if ext == ".npy":
        return _load_npy(p, skeleton)
    if ext == ".csv":
        return _load_csv(p)
    return _load_bvh(p)


def save_positions(path: str | os.PathLike, positions: ArrayLike, names: list[str], fps: float | None = None) -> None:
    """Write positions ``[F, J, 3]`` as ``.npz`` or ``.csv`` (atomically; NaN stays missing)."""
    jp = JointPositions(np.asarray(positions, np.float64), list(names), fps)
    p = Path(path)
    ext = p.suffix.lower()
    if ext == ".npz":
        buf = _io.BytesIO()
        extra = {} if fps is None else {"fps": np.float64(fps)}
        np.savez(buf, positions=jp.positions, names=np.array(jp.names), **extra)
        with atomic_write(p, binary=True) as fh:
            fh.write(buf.getvalue())
        return
    if ext == ".csv":
        out = _io.StringIO()
        if fps is not None:
            out.write(f"# fps: {float(fps)!r}\n")  # every digit: a BVH frame time's rate reads back the same
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["frame"] + [f"{n}.{a}" for n in jp.names for a in "xyz"])
        flat = jp.positions.reshape(jp.num_frames, 3 * len(jp.names))
        for f in range(jp.num_frames):
            w.writerow([f] + ["" if not np.isfinite(v) else repr(float(v)) for v in flat[f]])
        with atomic_write(p) as fh:
            fh.write(out.getvalue())
        return
    raise PositionsError(f"{p}: can write .npz or .csv positions, not {ext or '(none)'!r}")

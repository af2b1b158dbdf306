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

import csv
import io as _io
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._atomic import atomic_write
from ..errors import JointLimitsError
from ..motion.skeleton import Skeleton

__all__ = ["JointPositions", "PositionsError", "load_positions", "save_positions", "EXTENSIONS"]

EXTENSIONS = (".npz", ".npy", ".csv", ".bvh")


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
        if self.fps is not None and not (math.isfinite(self.fps) and self.fps > 0):
            raise PositionsError(f"fps must be a positive number, got {self.fps!r}")

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
                f"joints not in the skeleton: {', '.join(unknown[:8])}"
                f"{' ...' if len(unknown) > 8 else ''} (skeleton joints: {', '.join(skeleton.names)})"
            )
        out = np.full((self.num_frames, skeleton.num_joints, 3), np.nan)
        for k, n in enumerate(self.names):
            out[:, skeleton.names.index(n)] = self.positions[:, k]
        return out


def _where(path: Path, msg: str) -> PositionsError:
    return PositionsError(f"{path}: {msg}")


def _load_npz(p: Path, skeleton: Skeleton | None) -> JointPositions:
    try:
        with np.load(p, allow_pickle=False) as z:
            keys = set(z.files)
            if "positions" not in keys:
                raise _where(p, f"no 'positions' array (found: {', '.join(sorted(keys)) or 'nothing'})")
            pos = np.asarray(z["positions"], np.float64)
            names = [str(n) for n in z["names"]] if "names" in keys else None
            fps = float(np.asarray(z["fps"]).reshape(())) if "fps" in keys else None
    except (ValueError, OSError, EOFError) as e:
        if isinstance(e, PositionsError):
            raise
        raise _where(p, f"not a readable .npz file ({e})") from None
    return _finish(p, pos, names, fps, skeleton)


def _load_npy(p: Path, skeleton: Skeleton | None) -> JointPositions:
    try:
        pos = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise _where(p, f"not a readable .npy file ({e})") from None
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


def _load_csv(p: Path) -> JointPositions:
    try:
        text = p.read_text()
    except UnicodeDecodeError:
        raise _where(p, "not a text CSV file") from None
    lines = text.splitlines()
    fps = None
    start = 0
    if lines and lines[0].startswith("#"):
        head = lines[0][1:].strip()
        key, _, val = head.partition(":")
        if key.strip().lower() == "fps":
            try:
                fps = float(val)
            except ValueError:
                raise _where(p, f"line 1: fps {val.strip()!r} is not a number") from None
        start = 1
    rows = list(csv.reader(_io.StringIO("\n".join(lines[start:]))))
    if not rows:
        raise _where(p, "empty CSV file (expected a header frame,Joint.x,Joint.y,Joint.z,...)")
    header = [h.strip() for h in rows[0]]
    cols = header[1:] if header and header[0].lower() == "frame" else header
    first = len(header) - len(cols)
    if not cols or len(cols) % 3:
        raise _where(p, f"line {start + 1}: expected three columns NAME.x, NAME.y, NAME.z per joint, got {len(cols)}")
    names = []
    for k in range(0, len(cols), 3):
        trip = cols[k : k + 3]
        base = [c.rsplit(".", 1)[0] for c in trip]
        axes = [c.rsplit(".", 1)[1].lower() if "." in c else "" for c in trip]
        if axes != ["x", "y", "z"] or len(set(base)) != 1 or not base[0]:
            raise _where(p, f"line {start + 1}: columns {', '.join(trip)} are not NAME.x, NAME.y, NAME.z")
        names.append(base[0])
    data = np.full((len(rows) - 1, len(cols)), np.nan)
    for i, row in enumerate(rows[1:]):
        line = start + i + 2
        if len(row) != len(header):
            raise _where(p, f"line {line}: {len(row)} values, the header has {len(header)}")
        for k, cell in enumerate(row[first:]):
            c = cell.strip()
            if c == "" or c.lower() == "nan":
                continue
            try:
                data[i, k] = float(c)
            except ValueError:
                raise _where(p, f"line {line}: {header[first + k]} = {c!r} is not a number") from None
    try:
        return JointPositions(data.reshape(len(rows) - 1, len(names), 3), names, fps)
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
    if not p.is_file():
        raise PositionsError(f"{p}: no such file")
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
            out.write(f"# fps: {fps:g}\n")
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["frame"] + [f"{n}.{a}" for n in jp.names for a in "xyz"])
        flat = jp.positions.reshape(jp.num_frames, -1)
        for f in range(jp.num_frames):
            w.writerow([f] + ["" if not np.isfinite(v) else repr(float(v)) for v in flat[f]])
        with atomic_write(p) as fh:
            fh.write(out.getvalue())
        return
    raise PositionsError(f"{p}: can write .npz or .csv positions, not {ext or '(none)'!r}")

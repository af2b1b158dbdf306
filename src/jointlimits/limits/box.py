"""Box limits: axis-aligned in limit space (``box``) or in the cloud's principal frame
(``oriented-box``), fitted as the padded extent of the cloud, projected by clamping."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._native import _core
from ..errors import LimitsError
from . import cloud
from ._checks import (
    _EYE3,
    _ZERO3,
    _cloud,
    _flat_points,
    _frame,
    _local,
    _local_points,
    _out_array,
    _padding,
    _points,
    _raise_bad_point,
    _vec,
    filled,
)
from .compiled import core_shape
from .kdop import SlabShape

__all__ = ["Box", "OrientedBox", "fit_box", "fit_oriented_box", "project_box", "contains_box", "distance_box"]


def fit_box(points, padding: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned box around a cloud in limit space.

    ``points`` ``[..., N, 3]`` (limit space).  Returns ``(lo, hi)`` ``[..., 3]``: the
    per-axis min/max of the cloud minus/plus ``padding``.  Unlike the reference
    (``fit_rectangular_limits_basic``), the max starts at ``-inf``, so clouds lying
    entirely on the negative side of an axis keep their true maximum.
    """
    pts = _cloud(points)
    pad = _padding(padding)
    return pts.min(axis=-2) - pad, pts.max(axis=-2) + pad


def fit_oriented_box(points, position, rotation, padding: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Box in the limit frame ``(position, rotation)`` around a cloud.

    ``points`` ``[..., N, 3]`` in limit space; returns ``(lo, hi)`` ``[..., 3]`` in the
    local frame (``R^T (x - position)``), padded by ``padding``.  Max starts at ``-inf``
    (the reference's ``FLT_MIN`` start is fixed).
    """
    pts = _cloud(points)
    pad = _padding(padding)
    local = _local(pts, position, rotation)
    return local.min(axis=-2) - pad, local.max(axis=-2) + pad


def _box_limits(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    lo = _vec(lo, "lo")
    hi = _vec(hi, "hi")
    if np.any(lo > hi):
        k = int(np.argmax(lo > hi))
        raise LimitsError(f"empty box: lo[{k}] = {lo[k]} > hi[{k}] = {hi[k]}")
    return lo, hi


def project_box(points, lo, hi, position=None, rotation=None, *, always_map: bool = False, out=None) -> np.ndarray:
    """Closest point of the (optionally oriented) box ``lo <= local <= hi``.

    ``points`` ``[..., 3]`` in limit space.  Without a frame the box is axis-aligned in
    limit space (the reference's ``apply_rectangular_limit_basic``); with
    ``position``/``rotation`` the box lives in the local frame ``R^T (x - position)``
    (``apply_rectangular_limit``) and clamped points are mapped back with ``R``.  Points
    inside are returned unchanged (bit-exact).  ``always_map=True`` reproduces the
    reference quirk of mapping every point (inside ones too) through
    ``R clamp(R^T (x - p)) + p``, which moves inside points by rounding or by the
    non-orthonormality of a power-iteration ``R``; use it only to match reference data.
    Returns float64 ``[..., 3]``; ``out``
    (float64, same shape, C-contiguous) may be given to avoid an allocation and may be
    the input itself. For the axis-aligned box ``out`` may be float32 instead: then the clamp
    runs in float32 (half the memory traffic of this memory-bound loop).
    """
    try:  # arrays already right: checked once in the compiled call (None: take the checked path)
        if position is None and rotation is None:
            fast = (
                _core.project_box_f32_fast(points, lo, hi, out)
                if type(out) is np.ndarray and out.dtype == np.float32
                else _core.project_box_fast(points, lo, hi, out)
            )
        else:
            fast = _core.project_box_oriented_fast(
                points,
                lo,
                hi,
                _ZERO3 if position is None else position,
                _EYE3 if rotation is None else rotation,
                bool(always_map),
                out,
            )
        if isinstance(fast, np.ndarray):
            return fast
    except TypeError:  # not float64 (float32) C-contiguous arrays
        pass
    if type(out) is np.ndarray and out.dtype == np.float32 and position is None and rotation is None:
        return _project_box_aa_f32(points, lo, hi, out)
    flat, shape = _flat_points(points)
    lo, hi = _box_limits(lo, hi)
    res = _out_array(out, shape)
    res_flat = res.reshape(-1, 3)
    if position is None and rotation is None:
        finite = _core.project_box_aa(flat, lo, hi, res_flat)
    else:
        pos, rot = _frame(position, rotation)
        finite = _core.project_box_oriented(flat, lo, hi, pos, rot, bool(always_map), res_flat)
    if not finite:
        _raise_bad_point(int(np.argmin(np.isfinite(flat).all(axis=1))), flat, shape)
    return res


def _project_box_aa_f32(points, lo, hi, out: np.ndarray) -> np.ndarray:
    """The axis-aligned clamp in float32 into the float32 ``out``."""
    p = points if type(points) is np.ndarray and points.dtype == np.float32 else _points(points).astype(np.float32)
    if p.ndim == 0 or p.shape[-1] != 3:
        raise LimitsError(f"points must have shape [..., 3], got {p.shape}")
    if out.shape != p.shape or not out.flags.c_contiguous:
        raise LimitsError(f"out must be a C-contiguous array of shape {p.shape}")
    lo64, hi64 = _box_limits(lo, hi)
    flat = np.ascontiguousarray(p).reshape(-1, 3)
    if not _core.project_box_aa_f32(flat, lo64.astype(np.float32), hi64.astype(np.float32), out.reshape(-1, 3)):
        _raise_bad_point(int(np.argmin(np.isfinite(flat).all(axis=1))), flat, p.shape)
    return out


def contains_box(points, lo, hi, position=None, rotation=None, tol: float = 0.0) -> np.ndarray:
    """Bool ``[...]``: ``lo - tol <= local <= hi + tol`` on every axis."""
    lo, hi = _box_limits(lo, hi)
    local, _ = _local_points(points, position, rotation)
    return np.all((local >= lo - tol) & (local <= hi + tol), axis=-1)


def distance_box(points, lo, hi, position=None, rotation=None) -> np.ndarray:
    """Euclidean distance ``[...]`` from each point to the box (0 inside)."""
    p = _points(points)
    return np.linalg.norm(project_box(p, lo, hi, position, rotation) - p, axis=-1)


@dataclass(eq=False)
class Box(SlabShape):
    """``lo <= v <= hi`` in limit space."""

    kind: str = "box"
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    _FIELDS: ClassVar[tuple[str, ...]] = ("lo", "hi")

    def __post_init__(self) -> None:
        self._check()
        self.lo, self.hi = _box_limits(self.lo, self.hi)

    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05) -> Box:
        lo, hi = fit_box(points, padding)
        return cls(lo=lo, hi=hi)

    def _frame_args(self) -> tuple[()] | tuple[np.ndarray, np.ndarray]:
        return ()

    def project(self, points):
        return project_box(points, self.lo, self.hi, *self._frame_args())

    def contains(self, points, tolerance: float = 1e-9):
        position, rotation = self._frame_args() or (None, None)
        return contains_box(points, self.lo, self.hi, position, rotation, tol=tolerance)

    def radius(self) -> float:
        lo, hi = filled(self.lo, "lo"), filled(self.hi, "hi")
        corner = np.maximum(np.abs(lo), np.abs(hi))
        c = self.position if self.kind == "oriented-box" else np.zeros(3)
        return float(np.linalg.norm(c) + np.linalg.norm(corner))

    def slabs(self):
        return np.zeros(3), np.eye(3), np.eye(3), self.lo, self.hi

    def compile(self):
        f = np.zeros(16)
        pos, rot = (self.position, self.rotation) if self._frame_args() else (np.zeros(3), np.eye(3))
        f[0:3], f[3:12] = pos, rot.reshape(-1)
        f[15] = self.radius()
        return core_shape("box", f, mins=self.lo, maxs=self.hi)


@dataclass(eq=False)
class OrientedBox(Box):
    """``lo <= R^T (v - position) <= hi``: a box in the cloud's principal frame."""

    kind: str = "oriented-box"

    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05) -> OrientedBox:
        pos, rot = cloud.fit_frame(points, subsample)
        pts = np.asarray(points, np.float64)
        lo, hi = fit_oriented_box(pts, pos, rot, padding)
        return cls(position=pos, rotation=rot, lo=lo, hi=hi)

    def _frame_args(self) -> tuple[()] | tuple[np.ndarray, np.ndarray]:
        return (self.position, self.rotation)

    def slabs(self):
        return self.position, self.rotation, np.eye(3), self.lo, self.hi

"""Implicit-surface limits (Herda et al., "Hierarchical implicit surface joint limits").

The limit-space cloud is voxelised in its principal frame; every occupied voxel holds a
soft-object metaball (compact support, ``(1 - r^2 / R^2)^3`` as in Bittar, Tsingos and Cani's
soft objects) and the limit is where their summed field reaches the iso threshold. The field is
sampled once on the voxel grid (nodes at voxel centres) and read by trilinear interpolation, so
``contains`` is one interpolation per point. Holes inside the cloud are filled and every fitted
point is made to lie inside.

Projection follows the field's gradient from an outside point until the field reaches the
threshold and finds the crossing between the last two steps by bisection, as the seed does, sped
up by false-position steps (Illinois rule; every fourth step halves the bracket): a few field
reads instead of 20. Where the field and its gradient vanish (beyond every metaball's support,
or at a bump below the threshold) the point is instead taken toward the nearest inside grid node
and the crossing on that segment is found the same way. Results are inside, so projection is
idempotent; inside points come back unchanged, bit for bit.

The kernels take a stack of fields with per-point blend weights: one field for a plain limit,
the neighbouring parent cells' fields for a coupled (parent-conditioned) child limit.
"""

from __future__ import annotations

import base64
import math
import operator
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._budget import charge
from .._native import _core
from .._optional import require
from ..errors import LimitsError
from . import cloud
from ._checks import LIMIT_SPACE_BOUND, MAX_GRID_NODES, MAX_PADDING, _points, check_grid, filled
from .shape import Shape

__all__ = ["Implicit", "fit_field", "grid_field", "encode_grid", "decode_grid"]

Array = NDArray[np.float64]

THRESHOLD = 0.5  # iso value of the summed field
RADIUS_CELLS = 1.5  # metaball radius in cells before padding: neighbours' balls overlap
MARCH_STEP = 0.5  # gradient-march step, in cells
MARCH_STEPS = 64
BISECTIONS = 20  # the crossing's bracket shrinks to 2^-20 of a step at most
SAFETY = 1e-7  # results read at least threshold * (1 + SAFETY)


# --------------------------------------------------------------------------- fitting


def iso_fraction(threshold: float = THRESHOLD) -> float:
    """Where a lone metaball of radius R reads ``threshold``: at R * this (so a ball reaches a
    padding p past its voxel's usual radius when R grows by p / this)."""
    return math.sqrt(1.0 - threshold ** (1.0 / 3.0))


def choose_cell(points: Array, subsample: float | None = 0.05) -> float:
    """A voxel size from the cloud's density: the median nearest-neighbour spacing of the
    subsampled cloud, kept between 1/64 and 1/4 of its largest extent (and >= 0.02 rad)."""
    from scipy.spatial import cKDTree

    pts = np.asarray(points, np.float64)
    d = subsample or 0.05
    sub = pts[cloud.subsample(pts, d)]
    extent = float(np.max(pts.max(0) - pts.min(0))) if len(pts) else 0.0
    if len(sub) >= 2:
        nn = cKDTree(sub).query(sub, k=2)[0][:, 1]
        h = float(np.median(nn))
    else:
        h = 4.0 * d
    lo = max(0.02, extent / 64.0)
    hi = max(lo, extent / 4.0, 0.1)
    return float(min(max(h, lo), hi))


def fit_field(
    local: Array,
    origin: Array,
    dims: tuple[int, int, int],
    cell: float,
    radius: float,
    threshold: float = THRESHOLD,
    fill_holes: bool = True,
    flat: bool = False,
) -> NDArray[np.float32]:
    """The metaball field of local points ``[N, 3]`` on a grid (nodes at ``origin + i * cell``):
    one ball of ``radius`` (cells) per occupied voxel, holes filled, every point inside."""
    g = (np.asarray(local, np.float64) - origin) / cell
    return grid_field(g, dims, radius, threshold, fill_holes, flat)


def grid_field(
    g: Array,
    dims: tuple[int, int, int],
    radius: float,
    threshold: float = THRESHOLD,
    fill_holes: bool = True,
    flat: bool = False,
) -> NDArray[np.float32]:
    """:func:`fit_field` of points given in grid coordinates ``[N, 3]`` (node units)."""
    from scipy import ndimage

    F = np.zeros(dims, np.float64)
    if len(g):
        v = np.clip(np.rint(g), 0, np.array(dims) - 1).astype(np.int64)
        occupied = np.zeros(dims, np.bool_)
        occupied[v[:, 0], v[:, 1], v[:, 2]] = True
        _core.implicit_splat(np.ascontiguousarray(np.argwhere(occupied), np.int64), float(radius), F)
    if fill_holes:
        inside = F >= threshold
        filled = ndimage.binary_fill_holes(inside)
        if flat:  # a planar cloud (a swing): its holes open along the normal, fill them in-plane
            for k in range(dims[2]):
                filled[:, :, k] = ndimage.binary_fill_holes(filled[:, :, k])
        F[filled & ~inside] = threshold
    F32 = F.astype(np.float32)
    if len(g):
        F64 = F32.astype(np.float64)
        # a little above the threshold: the points must read inside however their grid
        # coordinates are rounded later
        if _core.implicit_lift_points(np.ascontiguousarray(g), threshold * (1.0 + 1e-5), F64):
            F32 = F64.astype(np.float32)
    return F32


def nearest_inside(F: NDArray[np.float32], threshold: float) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
    """Per node: distance (cells) to the nearest inside node and that node's flat index."""
    from scipy import ndimage

    inside = F >= threshold
    dist, idx = ndimage.distance_transform_edt(~inside, return_indices=True)
    flat = (idx[0] * F.shape[1] + idx[1]) * F.shape[2] + idx[2]
    return dist.astype(np.float32), flat.astype(np.int32)


# --------------------------------------------------------------------------- files


ENCODING = "zlib-base64-float32-le"  # also read: "base64-float32-le" (uncompressed)


def encode_grid(F: NDArray[np.float32]) -> str:
    """A float32 grid (little-endian, C order), zlib-compressed (mostly zeros), as base64."""
    return base64.b64encode(zlib.compress(np.ascontiguousarray(F, "<f4").tobytes(), 6)).decode("ascii")


def decode_grid(
    text: Any, dims: Any, what: str = "implicit limit grid", encoding: Any = ENCODING, max_values: int | None = None
) -> NDArray[np.float32]:
    """The grid of :func:`encode_grid` (LimitsError if it is not a finite grid of ``dims``, three
    integers >= 2 of at most ``max_values`` values in all, default ``MAX_GRID_NODES``); the data
    is never decompressed past that size."""
    try:
        shape = tuple(operator.index(d) for d in dims)
    except TypeError:
        try:
            shape = tuple(int(d) for d in dims if float(d).is_integer())
        except (TypeError, ValueError, OverflowError):
            raise LimitsError(f"{what}: dims must be three integers, got {dims!r}") from None
    cap = MAX_GRID_NODES if max_values is None else max_values
    if len(shape) != 3 or min(shape) < 2 or math.prod(shape) > cap:
        raise LimitsError(f"{what}: dims must be three integers >= 2, at most {cap} values in all, got {dims!r}")
    if not isinstance(text, str):
        raise LimitsError(f"{what}: the field must be a base64 string")
    # each float32 node counts twice at float64 size: the grid and what is derived from it (its
    # nearest-inside distances and indices); a limits file's grids share its memory budget
    charge(2 * math.prod(shape), f"its grids (up to {what})")
    if encoding not in (ENCODING, "base64-float32-le"):
        raise LimitsError(f"{what}: unknown grid encoding {encoding!r}")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise LimitsError(f"{what}: the field is not valid base64") from None
    if encoding == ENCODING:
        try:
            # at most one value more than dims need: a small file may not inflate to gigabytes
            z = zlib.decompressobj()
            raw = z.decompress(raw, 4 * math.prod(shape) + 4)
        except zlib.error:
            raise LimitsError(f"{what}: the field is not valid zlib data") from None
        if not z.eof or z.unconsumed_tail:  # cut short (its checksum unread), or longer than dims
            raise LimitsError(f"{what}: the field is not complete zlib data of dims {list(shape)}")
    if len(raw) != 4 * math.prod(shape):
        raise LimitsError(f"{what}: the field holds {len(raw) // 4} values, dims {list(shape)} need {math.prod(shape)}")
    F = np.frombuffer(raw, "<f4").reshape(shape).astype(np.float32)
    if not np.all(np.isfinite(F)) or np.any(F < 0):
        raise LimitsError(f"{what}: the field has negative or non-finite values")
    return F


# --------------------------------------------------------------------------- the shape


def cell_maxima(F: NDArray[np.float32]) -> NDArray[np.float32]:
    """Per grid cell ``[nx-1, ny-1, nz-1]`` of fields ``F [K, nx, ny, nz]``: the largest value of any
    field at any corner of the cell. A blend of the fields there is at most that, so the compiled
    lookups settle most points outside a limit from this one value (0: the blend is 0)."""
    top = np.max(F, axis=0)
    a, b = slice(None, -1), slice(1, None)
    out = np.zeros(tuple(n - 1 for n in top.shape), np.float32)
    for x in (a, b):
        for y in (a, b):
            for z in (a, b):
                np.maximum(out, top[x, y, z], out=out)
    return np.ascontiguousarray(out)


@dataclass(eq=False)
class Implicit(Shape):
    """A metaball iso-surface limit on a grid in the cloud's principal frame.

    ``grid`` ``[nx, ny, nz]`` float32 samples the summed metaballs at nodes
    ``origin + (i, j, k) * cell`` of the local frame ``R^T (v - position)``; inside is
    ``grid >= threshold``. ``normal`` (non-zero only for a swing section) keeps projections in
    the plane through the origin perpendicular to it.
    """

    kind: str = "implicit"
    position: Array = field(default_factory=lambda: np.zeros(3))
    rotation: Array = field(default_factory=lambda: np.eye(3))
    origin: Array = field(default_factory=lambda: np.zeros(3))
    cell: float = 0.1
    grid: NDArray[np.float32] | None = None
    threshold: float = THRESHOLD
    normal: Array = field(default_factory=lambda: np.zeros(3))
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind != "implicit":
            raise LimitsError(f"an Implicit is an 'implicit' limit, not {self.kind!r}")
        self.position = np.ascontiguousarray(np.asarray(self.position, np.float64).reshape(3))
        self.rotation = np.ascontiguousarray(np.asarray(self.rotation, np.float64).reshape(3, 3))
        self.origin = np.ascontiguousarray(np.asarray(self.origin, np.float64).reshape(3))
        self.normal = np.ascontiguousarray(np.asarray(self.normal, np.float64).reshape(3))
        self.cell = float(self.cell)
        self.threshold = float(self.threshold)
        for name in ("position", "rotation", "origin", "normal"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise LimitsError(f"implicit limit: {name} is not finite")
        if not np.all(np.abs(self.position) <= LIMIT_SPACE_BOUND):
            raise LimitsError(f"implicit limit: position must be within +-{LIMIT_SPACE_BOUND:.4g} radians")
        nn = float(self.normal @ self.normal)
        if not (nn == 0.0 or abs(nn - 1.0) < 1e-6):
            raise LimitsError("implicit limit: normal must be a unit vector or zero")
        if not (math.isfinite(self.threshold) and self.threshold > 0):
            raise LimitsError(f"implicit limit: threshold must be > 0, got {self.threshold}")
        if not np.allclose(self.rotation.T @ self.rotation, np.eye(3), atol=1e-6):
            raise LimitsError("implicit limit: rotation is not orthonormal")
        F = np.asarray(self.grid if self.grid is not None else np.zeros((0, 0, 0)), np.float32)
        if F.ndim != 3 or min(F.shape) < 2 or not np.all(np.isfinite(F)):
            raise LimitsError(
                f"implicit limit: the field must be a finite [nx, ny, nz] grid (each >= 2), got shape {F.shape}"
            )
        if not (self.threshold < 1e30):
            raise LimitsError(f"implicit limit: threshold must be finite, got {self.threshold}")
        check_grid(self.origin, self.cell, F.shape, "implicit limit")
        self.grid = np.ascontiguousarray(F)
        if not np.any(F >= self.threshold):
            raise LimitsError("implicit limit: the field is nowhere above its threshold (an empty limit)")
        self._F = np.ascontiguousarray(F[None], np.float32)  # read as float32 (exact in double arithmetic)
        self._cmax = cell_maxima(self._F)
        self._near: tuple | None = None  # nearest_inside, computed at the first projection
        self._ids, self._ws = np.zeros((1, 1), np.int64), np.ones((1, 1))
        g = np.argwhere(F >= self.threshold).astype(np.float64)
        local = self.origin + g * self.cell
        self._radius = float(np.max(np.linalg.norm(local @ self.rotation.T + self.position, axis=1)) + self.cell)

    def _nearest(self) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
        """Each node's distance to the inside and its nearest inside node (projection's fallback far
        from every metaball), ``[1, ...]``; computed once, when first needed."""
        if self._near is None:
            D, NEAR = nearest_inside(filled(self.grid, "grid"), self.threshold)
            self._near = D[None], NEAR[None]
        return self._near

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(
        cls,
        points,
        padding: float = 0.05,
        subsample: float | None = 0.05,
        cell: float | None = None,
        radius_cells: float = RADIUS_CELLS,
        threshold: float = THRESHOLD,
        fill_holes: bool = True,
    ) -> Implicit:
        """Metaballs on the voxelised cloud ``[N, 3]``: voxel ``cell`` from the data's density
        unless given; each ball reaches ``padding`` past its voxel."""
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        if not (math.isfinite(padding) and 0 <= padding <= MAX_PADDING):
            raise LimitsError(f"padding must be >= 0 and at most {MAX_PADDING} radians, got {padding}")
        pos, rot = cloud.fit_frame(pts, subsample)
        local = (pts - pos) @ rot
        h = float(cell) if cell is not None else choose_cell(pts, subsample)
        if not (math.isfinite(h) and h > 0):
            raise LimitsError(f"implicit limit: cell must be > 0, got {cell}")
        radius = radius_cells + padding / (iso_fraction(threshold) * h)  # cells
        margin = math.ceil(radius) + 1
        lo = np.floor(local.min(0) / h) * h - margin * h
        hi = local.max(0) + margin * h
        nx, ny, nz = (int(d) for d in np.maximum(np.ceil((hi - lo) / h).astype(int) + 1, 2))
        dims = (nx, ny, nz)
        flat = bool(np.ptp(local[:, 2]) < 1e-9) if len(local) else False
        F = fit_field(local, lo, dims, h, radius, threshold, fill_holes, flat)
        return cls(
            position=pos,
            rotation=rot,
            origin=lo,
            cell=h,
            grid=F,
            threshold=threshold,
            settings={"padding": float(padding), "radius_cells": float(radius_cells), "points": int(len(pts))},
        )

    # ------------------------------------------------------------------ queries
    def _args(self) -> tuple[Array, Array, Array, float]:
        return self.position, self.rotation, self.origin, self.cell

    def value(self, points: Array) -> Array:
        """Field and gradient ``[..., 4]`` (value, d/dx, d/dy, d/dz in limit space)."""
        p = _points(points)
        flat = np.ascontiguousarray(p.reshape(-1, 3))
        out = np.empty((len(flat), 4))
        _core.implicit_field(flat, *self._args(), self._F, self._cmax, self._ids, self._ws, out)
        return out.reshape(p.shape[:-1] + (4,))

    def contains(self, points: Array, tolerance: float = 1e-9) -> NDArray[np.bool_]:
        p = _points(points)
        flat = np.ascontiguousarray(p.reshape(-1, 3))
        out = np.empty(len(flat), np.bool_)
        _core.implicit_contains(
            flat, *self._args(), self.threshold, self._F, self._cmax, self._ids, self._ws, float(tolerance), out
        )
        return out.reshape(p.shape[:-1])

    def project(self, points: Array) -> Array:
        p = _points(points)
        flat = np.ascontiguousarray(p.reshape(-1, 3))
        if not np.all(np.isfinite(flat)):
            raise LimitsError("points contain NaN or infinite values")
        out = np.empty_like(flat)
        _core.implicit_project(
            flat,
            *self._args(),
            self.threshold,
            self._F,
            self._cmax,
            *self._nearest(),
            self._ids,
            self._ws,
            self.normal,
            out,
        )
        return out.reshape(p.shape)

    def radius(self) -> float:
        return self._radius

    # ------------------------------------------------------------------ swing-twist
    def swing_section(self, axis: Array) -> Implicit:
        a = np.asarray(axis, np.float64)
        return Implicit(
            position=self.position,
            rotation=self.rotation,
            origin=self.origin,
            cell=self.cell,
            grid=self.grid,
            threshold=self.threshold,
            normal=a / np.linalg.norm(a),
            settings=self.settings,
        )

    def twist_interval(self, axis: Array) -> tuple[float, float]:
        a = np.asarray(axis, np.float64)
        a = a / np.linalg.norm(a)
        r = self.radius()
        t = np.linspace(-r, r, max(64, int(8 * r / self.cell)))
        inside = self.contains(t[:, None] * a, 0.0)
        if not inside.any():
            k = int(np.argmax(self.value(t[:, None] * a)[:, 0]))
            return float(t[k]), float(t[k])
        return float(t[inside].min()), float(t[inside].max())

    def compile_section(self, axis: Array) -> None:
        return None  # no compiled form: FittedLimit uses project() on batches

    # ------------------------------------------------------------------ drawing
    def surface(self, step: int = 1) -> tuple[Array, NDArray[np.int64]]:
        """The iso-surface as a triangle mesh in limit space (marching cubes on the grid):
        (vertices [V, 3], triangles [T, 3])."""
        marching_cubes = require("skimage.measure", "implicit-draw", "drawing implicit limits").marching_cubes

        F = np.pad(filled(self.grid, "grid"), 1)  # closed surfaces where the inside touches the grid's edge
        v, t, _, _ = marching_cubes(F, level=self.threshold, step_size=step, allow_degenerate=False)
        local = self.origin + (v - 1.0) * self.cell
        return local @ self.rotation.T + self.position, np.asarray(t, np.int64)

    def outline(self, e1: Array, e2: Array, samples: int | None = None) -> Array | None:
        """The longest closed iso-line of the field in the plane spanned by unit e1, e2 (through
        the origin), in (e1, e2) coordinates (marching squares, then Newton steps onto it), or None."""
        find_contours = require("skimage.measure", "implicit-draw", "drawing implicit limits").find_contours

        r = self.radius()
        if samples is None:
            samples = int(min(max(160, 3.0 * r / self.cell), 800))
        t = np.linspace(-r, r, samples)
        P = t[:, None, None] * np.asarray(e1) + t[None, :, None] * np.asarray(e2)
        f = self.value(P.reshape(-1, 3))[:, 0].reshape(samples, samples)
        cs = find_contours(np.pad(f, 1), self.threshold)
        if not cs:
            return None
        c = max(cs, key=len) - 1.0
        y = np.interp(c, np.arange(samples), t)
        E = np.stack([np.asarray(e1, np.float64), np.asarray(e2, np.float64)])
        for _ in range(3):  # Newton steps in the plane onto the interpolated field's iso-line
            fg = self.value(y @ E)
            g = fg[:, 1:] @ E.T
            gg = np.einsum("ij,ij->i", g, g)
            step = np.where(gg > 1e-18, (self.threshold - fg[:, 0]) / np.maximum(gg, 1e-18), 0.0)[:, None] * g
            n = np.linalg.norm(step, axis=1, keepdims=True)
            y = y + step * np.minimum(1.0, 0.5 * self.cell / np.maximum(n, 1e-300))
        return np.vstack([y, y[:1]]) if not np.array_equal(y[0], y[-1]) else y

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "position": self.position.tolist(),
            "rotation": self.rotation.tolist(),
            "origin": self.origin.tolist(),
            "cell": self.cell,
            "threshold": self.threshold,
            "normal": self.normal.tolist(),
            "dims": list(filled(self.grid, "grid").shape),
            "encoding": ENCODING,
            "grid": encode_grid(filled(self.grid, "grid")),
            "settings": dict(self.settings),
        }

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> Implicit:
        F = decode_grid(d["grid"], d["dims"], encoding=d.get("encoding", ENCODING))
        return cls(
            position=d["position"],
            rotation=d["rotation"],
            origin=d["origin"],
            cell=d["cell"],
            grid=F,
            threshold=d.get("threshold", THRESHOLD),
            normal=d.get("normal", [0.0, 0.0, 0.0]),
            settings=dict(d.get("settings", {})),
        )

"""Coupled (parent-conditioned) implicit limits, after Herda et al.'s hierarchical joint limits.

The parent's limit space (scaled angle axis relative to its reference, short cover) is cut into
a coarse grid of cells, sized from the parent's range (a third of it, at most 0.5 rad), so a
parent that moves little (a clavicle, a spine joint) still conditions its child. Every cell near
the data gets its own metaball field for the child, fitted to the child rotations seen while the
parent was within one cell of the cell's centre (where its blend weight is not zero, so every
training pose stays inside however it is blended); where that window holds too few frames it
grows a cell at a time (up to ``GROW`` cells) until it does, and cells still without enough data
(or with no frame within a cell) use the child's own (uncoupled) field. The conditioned fields
are padded a little more than the child's own (a parent rotation seen with few child rotations
says less about the child's range).
A pose's child limit is the blend of the eight neighbouring cells' fields with trilinear
weights of the parent's rotation: the fields morph smoothly between cells. All fields share one
grid, so blending is a weighted sum of lookups; it is twice as coarse as the child's own (there
are hundreds of fields; the balls keep their size), with the child's own field resampled on it
for the cells without data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._native import _core
from ..errors import LimitsError
from ..motion import quat
from ..motion.naming import find_role
from ..motion.skeleton import Skeleton
from ._checks import (
    LIMIT_SPACE_BOUND,
    MAX_FIELDS,
    MAX_FIELDS_NODES,
    MIN_GRID_CELL,
    check_dims,
    check_grid,
    check_soften,
    filled,
)
from .implicit import (
    ENCODING,
    Implicit,
    cell_maxima,
    decode_grid,
    encode_grid,
    grid_field,
    iso_fraction,
    nearest_inside,
)
from .joint import FittedLimit, _project_batched, to_limit_space

__all__ = ["CoupledLimit", "humanoid_pairs", "parent_cell_size"]

Array = NDArray[np.float64]

PARENT_CELL = 0.5  # radians: the largest cell of the parent's grid
PARENT_CELLS = 3.0  # cells across the parent's range (1st to 99th percentile, widest axis)
MIN_PARENT_CELL = 0.05  # radians
MIN_FRAMES = 120  # a parent cell's window needs this many training frames for its own child field
GROW = 2  # a sparse cell's window grows up to this many cells from its centre
COARSEN = 2.0  # the conditioned fields' grid cell, in the child's own grid cells
CONDITION_PADDING = 0.03  # radians added to the padding of the parent-conditioned fields
#: (parent role, child roles) of the coupled pairs (roles: jointlimits.motion.naming.ROLES)
MAX_PARENT_CELL = 1e3  # radians: one cell past rotation space is one cell holding every parent rotation
MAX_PARENT_CELLS = 1 << 16  # most cells of a parent grid (fitted ones have tens: they cover the data)
COUPLED_ROLES = [
    ("clavicle", ("upper_arm",)),
    ("upper_arm", ("forearm",)),
    ("thigh", ("shin",)),
    ("spine", ("spine", "neck")),
    ("neck", ("head",)),
]


def humanoid_pairs(skeleton: Skeleton | Sequence[str], parents: Sequence[int] | None = None) -> list[tuple[str, str]]:
    """(parent, child) joint pairs of a humanoid whose limits are coupled (:data:`COUPLED_ROLES`):
    clavicle -> upper arm, upper arm -> forearm, thigh -> shin, along the spine, spine -> neck
    and neck -> head, with the body-part roles read from the skeleton's topology
    (:func:`jointlimits.motion.naming.body_roles`; from the names when it shows no body, or when
    given names and parents). (Forearm -> hand and shin -> foot were measured and left out: on
    LAFAN1 their coupled limits admit no less than the uncoupled ones at the same held-out
    recall.)"""
    if not isinstance(skeleton, Skeleton):
        if parents is None:
            raise LimitsError("humanoid_pairs: give a Skeleton, or joint names and parents")
        skeleton = Skeleton(list(skeleton), np.asarray(parents, np.int64), np.zeros((len(skeleton), 3)))
    names, P = skeleton.names, skeleton.parents
    roles: dict[str, set[int]] = {}
    for a, b in COUPLED_ROLES:
        for r in (a, *b):
            roles.setdefault(r, set(find_role(skeleton, r)))
    return [
        (names[p], names[c])
        for c, p in enumerate(int(x) for x in P)
        if p >= 0 and any(p in roles[a] and any(c in roles[r] for r in b) for a, b in COUPLED_ROLES)
    ]


def parent_cell_size(parent_points: Array) -> float:
    """The parent grid's cell (radians): a third of the parent's range along its widest axis
    (1st to 99th percentile), between 0.05 and 0.5."""
    vp = np.asarray(parent_points, np.float64).reshape(-1, 3)
    if len(vp) == 0:
        return PARENT_CELL
    ext = float(np.max(np.percentile(vp, 99, axis=0) - np.percentile(vp, 1, axis=0)))
    return float(min(PARENT_CELL, max(MIN_PARENT_CELL, ext / PARENT_CELLS)))


def _window(
    vp: Array,
    c: NDArray[np.int64],
    porigin: Array,
    pcell: float,
    pdims: NDArray[np.int64],
    counts: NDArray[np.int64],
    order: NDArray[np.int64],
    bounds: NDArray[np.int64],
    min_frames: int,
    grow: int,
) -> NDArray[np.int64] | None:
    """Sorted frames whose parent lies within r cells of cell ``c``'s centre (per axis), for the
    smallest r <= grow that gives at least ``min_frames`` (None: none does)."""
    centre = porigin + (c + 0.5) * pcell
    lo, hi = np.maximum(c - 1, 0), np.minimum(c + 1, pdims - 1)
    if not counts[lo[0] : hi[0] + 1, lo[1] : hi[1] + 1, lo[2] : hi[2] + 1].any():
        return None  # no frame near: the parent's limit hardly reaches the cell
    for r in range(1, grow + 1):
        lo, hi = np.maximum(c - r, 0), np.minimum(c + r, pdims - 1)
        if counts[lo[0] : hi[0] + 1, lo[1] : hi[1] + 1, lo[2] : hi[2] + 1].sum() < min_frames:
            continue
        nb = np.stack(np.meshgrid(*[np.arange(a, b + 1) for a, b in zip(lo, hi)], indexing="ij"), -1)
        ids = np.ravel_multi_index(tuple(nb.reshape(-1, 3).T), tuple(pdims))
        cand = np.sort(np.concatenate([order[bounds[i] : bounds[i + 1]] for i in ids]))
        near = cand[np.all(np.abs(vp[cand] - centre) < r * pcell, axis=1)]
        if len(near) >= min_frames:
            return near
    return None


def _cell_field(local: Array, shape: _Grid, radius: float, flat: bool) -> NDArray[np.float32]:
    """``fit_field`` of local points on the fields' grid, computed on the sub-grid they reach (the
    rest of the grid is 0: a ball reaches ``radius`` cells, hole filling stays inside the
    balls' hull) and placed in a grid of zeros."""
    dims = np.array(shape.grid.shape)
    g = (local - shape.origin) / shape.cell
    m = int(math.ceil(radius)) + 2
    lo = np.clip(np.floor(g.min(0)).astype(int) - m, 0, dims - 2)
    hi = np.clip(np.ceil(g.max(0)).astype(int) + m + 1, lo + 2, dims)
    # g - lo is exact (0 <= lo <= g), so the sub-grid sees the same voxels and weights
    nx, ny, nz = (int(x) for x in hi - lo)
    sub = grid_field(g - lo, (nx, ny, nz), radius, shape.threshold, True, flat)
    F = np.zeros(shape.grid.shape, np.float32)
    F[lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]] = sub
    return F


@dataclass
class _Grid:
    """Where a coupled limit's fields live: the child's limit frame, grid origin and cell."""

    position: Array
    rotation: Array
    origin: Array
    cell: float
    grid: NDArray[np.float32]  # a field of the grid's shape
    threshold: float
    normal: Array = field(default_factory=lambda: np.zeros(3))


class _Blend:
    """The child's blended field for given parent rotations, as a shape FittedLimit's batched
    path can use (one row of blend weights per point)."""

    def __init__(self, limit: CoupledLimit, ids: NDArray[np.int64], ws: Array):
        self.limit, self.ids, self.ws = limit, ids, ws
        self._last: tuple | None = None

    def _rows(self, n: int) -> tuple[NDArray[np.int64], Array]:
        if n != len(self.ids):
            raise LimitsError("internal: blend weights do not match the points")
        return self.ids, self.ws

    def project(self, points: Array) -> Array:
        s, lim = self.limit.frame, self.limit
        flat = np.ascontiguousarray(points, np.float64).reshape(-1, 3)
        out = np.empty_like(flat)
        ids, ws = self._rows(len(flat))
        _core.implicit_project(
            flat,
            s.position,
            s.rotation,
            s.origin,
            s.cell,
            s.threshold,
            lim._F,
            lim._cmax,
            *lim._nearest(),
            ids,
            ws,
            s.normal,
            out,
        )
        return out

    def contains(self, points: Array, tolerance: float = 0.0) -> NDArray[np.bool_]:
        s, lim = self.limit.frame, self.limit
        flat = np.ascontiguousarray(points, np.float64).reshape(-1, 3)
        out = np.empty(len(flat), np.bool_)
        ids, ws = self._rows(len(flat))
        _core.implicit_contains(
            flat,
            s.position,
            s.rotation,
            s.origin,
            s.cell,
            s.threshold,
            lim._F,
            lim._cmax,
            ids,
            ws,
            float(tolerance),
            out,
        )
        return out

    def radius(self) -> float:
        return self.limit.base_shape.radius()


@dataclass
class _BlendLimit:
    """The child's limit for given parent rotations, as the batched step reads a FittedLimit."""

    reference: Array
    twist_axis: Array
    shape: _Blend
    swing_twist: bool = False


@dataclass(eq=False)
class CoupledLimit:
    """A child joint's implicit limit conditioned on its parent joint's rotation."""

    base: FittedLimit  # the child's own implicit limit (cells without data fall back to it)
    parent: str
    parent_reference: Array
    porigin: Array  # the parent grid: cell centres at porigin + (i + 0.5) * pcell
    pcell: float
    cells: NDArray[np.int64]  # [pdims] index into fields (0: the child's own field)
    fields: NDArray[np.float32]  # [K, nx, ny, nz]; fields[0] is the child's own field on the fields' grid
    kind: str = "coupled"
    settings: dict = field(default_factory=dict)
    forigin: Array | None = None  # the fields' grid in the child's limit frame (None: the base shape's)
    fcell: float | None = None

    def __post_init__(self) -> None:
        s = self.base.shape if isinstance(self.base, FittedLimit) else None
        if not isinstance(s, Implicit):
            raise LimitsError("a coupled limit needs an implicit (not swing-twist) child limit")
        self._base_shape = s
        pref = np.asarray(self.parent_reference, np.float64).reshape(4)
        if not (np.all(np.isfinite(pref)) and 1e-6 < float(pref @ pref) < 1e6):
            raise LimitsError(
                f"coupled limit: parent_reference must be a finite non-zero quaternion, got {pref.tolist()}"
            )
        self.parent_reference = quat.normalize(pref)
        self.porigin = np.asarray(self.porigin, np.float64).reshape(3)
        self.pcell = float(self.pcell)
        self.cells = np.asarray(self.cells, np.int64)
        if self.cells.ndim != 3 or self.cells.size == 0 or self.cells.size > MAX_PARENT_CELLS:
            raise LimitsError(f"coupled limit: cells must be [nx, ny, nz], at most {MAX_PARENT_CELLS} in all")
        # the grid must meet rotation space: its origin within a grid's width of it
        reach = LIMIT_SPACE_BOUND + self.pcell * np.asarray(self.cells.shape)
        if not (MIN_GRID_CELL <= self.pcell <= MAX_PARENT_CELL and np.all(np.abs(self.porigin) <= reach)):
            raise LimitsError(
                f"coupled limit: the parent grid is not finite or out of proportion with rotation space (cell in "
                f"[{MIN_GRID_CELL:g}, {MAX_PARENT_CELL:g}] radians, origin within a grid's width of +-"
                f"{LIMIT_SPACE_BOUND:.4g})"
            )
        F = np.asarray(self.fields, np.float32)
        forigin = np.asarray(s.origin if self.forigin is None else self.forigin, np.float64).reshape(3)
        fcell = float(s.cell if self.fcell is None else self.fcell)
        self.forigin, self.fcell = forigin, fcell
        if not (np.all(np.isfinite(forigin)) and math.isfinite(fcell) and fcell > 0):
            raise LimitsError("coupled limit: the fields' grid is not finite")
        if F.ndim != 4 or len(F) < 1 or min(F.shape[1:]) < 2:
            raise LimitsError(f"coupled limit: fields must be [K, nx, ny, nz] (each >= 2), got {F.shape}")
        if len(F) > MAX_FIELDS or F.size > MAX_FIELDS_NODES:
            raise LimitsError(f"coupled limit: {len(F)} fields of {F[0].size} nodes, more than supported")
        check_grid(forigin, fcell, F.shape[1:], "coupled limit fields")
        if self.cells.ndim != 3 or self.cells.min() < 0 or self.cells.max() >= len(F):
            raise LimitsError("coupled limit: the parent cells index fields that do not exist")
        if not (math.isfinite(self.pcell) and self.pcell > 0 and np.all(np.isfinite(self.porigin))):
            raise LimitsError("coupled limit: the parent grid is not finite")
        if not np.all(np.isfinite(F)) or np.any(F < 0):
            raise LimitsError("coupled limit: a field has negative or non-finite values")
        for k in range(len(F)):
            if not np.any(F[k] >= s.threshold):
                raise LimitsError(f"coupled limit: field {k} is nowhere above its threshold")
        self.fields = F
        self._F = np.ascontiguousarray(F, np.float32)  # read as float32 (exact in double arithmetic)
        self._cmax = cell_maxima(self._F)
        self._near: tuple | None = None  # nearest_inside of every field, computed at the first projection
        self.frame = _Grid(s.position, s.rotation, forigin, fcell, F[0], s.threshold)

    def _nearest(self) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
        """Per field: each node's distance to the inside and its nearest inside node (projection's
        fallback far from every metaball); computed once, when first needed."""
        if self._near is None:
            D, NEAR = zip(*(nearest_inside(f, self._base_shape.threshold) for f in self.fields))
            self._near = np.ascontiguousarray(np.stack(D)), np.ascontiguousarray(np.stack(NEAR))
        return self._near

    @property
    def base_shape(self) -> Implicit:
        return self._base_shape

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(
        cls,
        parent_points: Array,
        child_points: Array,
        child_rotations_ref: Array,
        child_axis: Array,
        parent_reference: Array,
        parent: str,
        padding: float = 0.05,
        subsample: float | None = 0.05,
        parent_cell: float | None = None,
        min_frames: int | None = None,
        grow: int | None = None,
        condition_padding: float | None = None,
    ) -> CoupledLimit:
        """From per-frame parent limit-space points ``[N, 3]`` (short cover) and the child's
        limit-space points ``[N, 3]`` of the same frames. ``parent_cell`` None: from the parent's
        range (:func:`parent_cell_size`); the others None: the module's ``MIN_FRAMES``, ``GROW``,
        ``CONDITION_PADDING``."""
        min_frames = MIN_FRAMES if min_frames is None else min_frames
        grow = GROW if grow is None else grow
        condition_padding = CONDITION_PADDING if condition_padding is None else float(condition_padding)
        vp = np.asarray(parent_points, np.float64).reshape(-1, 3)
        vc = np.asarray(child_points, np.float64).reshape(-1, 3)
        if len(vp) != len(vc) or not (np.all(np.isfinite(vp)) and np.all(np.isfinite(vc))):
            raise LimitsError(f"coupled limit: {len(vp)} parent and {len(vc)} child points, all finite, are needed")
        if len(vp) and np.max(np.einsum("ij,ij->i", vp, vp)) > (np.pi + 1e-6) ** 2:
            raise LimitsError("coupled limit: parent points must be short-cover limit-space points (|v| <= pi)")
        if not (math.isfinite(condition_padding) and condition_padding >= 0):
            raise LimitsError(f"condition_padding must be a finite number >= 0, got {condition_padding}")
        if int(grow) < 1 or int(min_frames) < 1:
            raise LimitsError(f"grow and min_frames must be >= 1, got {grow} and {min_frames}")
        shape = Implicit.fit(vc, padding, subsample)
        base = FittedLimit(child_rotations_ref, child_axis, shape=shape)
        pcell = parent_cell_size(vp) if parent_cell is None else float(parent_cell)
        if not (math.isfinite(pcell) and pcell > 0):
            raise LimitsError(f"parent_cell must be > 0, got {parent_cell}")
        lo, hi = vp.min(0), vp.max(0)
        pdims = np.maximum(np.ceil((hi - lo) / pcell).astype(int), 1)
        porigin = 0.5 * (lo + hi) - 0.5 * pdims * pcell
        cidx = np.clip(np.floor((vp - porigin) / pcell).astype(int), 0, pdims - 1)
        local = (vc - shape.position) @ shape.rotation
        cells = np.zeros(tuple(pdims), np.int64)
        flat = bool(len(local) and np.ptp(local[:, 2]) < 1e-9)
        own_field = filled(shape.grid, "grid")
        own = grid = _Grid(shape.position, shape.rotation, shape.origin, shape.cell, own_field, shape.threshold)
        fields = [own_field]
        rc, iso = shape.settings["radius_cells"], iso_fraction(shape.threshold)
        # the parent cells' frame windows first (they do not depend on the fields' grid)
        windows: list[NDArray[np.int64]] = []
        if pdims.prod() > 1:
            # frames by cell (sorted once): a window's candidates are the frames of its cells
            fid = np.ravel_multi_index(tuple(cidx.T), tuple(pdims))
            order = np.argsort(fid, kind="stable")
            bounds = np.searchsorted(fid[order], np.arange(int(pdims.prod()) + 1))
            counts = np.diff(bounds).reshape(tuple(pdims))
            seen: dict[bytes, int] = {}
            for c in np.ndindex(*pdims):
                near = _window(
                    vp, np.array(c), porigin, pcell, pdims, counts, order, bounds, int(min_frames), int(grow)
                )
                if near is None:
                    continue
                key = near.tobytes()
                if key not in seen:
                    seen[key] = len(windows) + 1
                    windows.append(near)
                cells[c] = seen[key]
        if pdims.prod() > 1 and COARSEN != 1.0:
            # the conditioned fields on a coarser grid (memory: they are many), balls of the same size;
            # coarser still when that many fields would pass the size a limits file may hold
            rb = rc * shape.cell + padding / iso
            coarsen = COARSEN
            while True:
                H = shape.cell * coarsen
                m = math.ceil(rb / H) + 1
                glo = np.floor(local.min(0) / H) * H - m * H
                dims = tuple(int(d) for d in np.maximum(np.ceil((local.max(0) + m * H - glo) / H).astype(int) + 1, 2))
                if (len(windows) + 1) * math.prod(dims) <= MAX_FIELDS_NODES:
                    break
                coarsen *= 1.25
            grid = _Grid(shape.position, shape.rotation, glo, H, np.zeros(dims, np.float32), shape.threshold)
            fields = [_cell_field(local, grid, rb / H, flat)]
        radius = (rc * shape.cell + (padding + condition_padding) / iso) / grid.cell
        fields += [_cell_field(local[near], grid, radius, flat) for near in windows]
        if len(fields) == 1:  # no cell has its own field: the child's own, on its own grid
            grid, fields = own, [own_field]
        settings = {
            "padding": float(padding),
            "parent_cell": pcell,
            "min_frames": int(min_frames),
            "grow": int(grow),
            "condition_padding": float(condition_padding),
            "cells_with_data": int((cells > 0).sum()),
            "fields": len(fields) - 1,
        }
        return cls(
            base,
            parent,
            parent_reference,
            porigin,
            pcell,
            cells,
            np.stack(fields),
            forigin=grid.origin,
            fcell=grid.cell,
            settings=settings,
        )

    # ------------------------------------------------------------------ blending
    def weights(self, parent_rotations: Array) -> tuple[NDArray[np.int64], Array]:
        """Per rotation the 8 neighbouring parent cells' fields and trilinear weights ``[N, 8]``."""
        vp = to_limit_space(np.asarray(parent_rotations, np.float64).reshape(-1, 4), self.parent_reference)
        ids = np.empty((len(vp), 8), np.int64)
        ws = np.empty((len(vp), 8))
        _core.coupled_weights(vp, self.porigin, self.pcell, np.ascontiguousarray(self.cells), ids, ws)
        return ids, ws

    def _proxy(self, parent_rotations: Array | None, n: int) -> _BlendLimit:
        if parent_rotations is None:  # no parent given: the child's own limit
            ids, ws = np.zeros((n, 1), np.int64), np.ones((n, 1))
        else:
            ids, ws = self.weights(parent_rotations)
            if len(ids) != n:
                raise LimitsError(f"coupled limit: {len(ids)} parent rotations for {n} child rotations")
        return _BlendLimit(self.base.reference, self.base.twist_axis, _Blend(self, ids, ws))

    # ------------------------------------------------------------------ queries
    def project(
        self, rotations: Array, soften: tuple[float, float] | None = None, parent: Array | None = None
    ) -> Array:
        """Limited child rotations ``[..., 4]`` for the parent's rotations ``parent`` ``[..., 4]``
        (the projected ones when projecting a pose; None: the child's own limit)."""
        q = np.asarray(rotations, np.float64)
        n = q.reshape(-1, 4).shape[0]
        return _project_batched(self._proxy(parent, n), q, check_soften(soften), False)[0]

    def contains(self, rotations: Array, tolerance: float = 1e-6, parent: Array | None = None) -> NDArray[np.bool_]:
        q = np.asarray(rotations, np.float64)
        flat = q.reshape(-1, 4)
        if parent is not None:  # one compiled pass, no per-rotation blend arrays
            pf = np.asarray(parent, np.float64).reshape(-1, 4)
            if len(pf) != len(flat):
                raise LimitsError(f"coupled limit: {len(pf)} parent rotations for {len(flat)} child rotations")
            s = self._base_shape
            out = np.empty(len(flat), np.bool_)
            _core.coupled_contains(
                np.ascontiguousarray(flat),
                self.base.reference,
                np.ascontiguousarray(pf),
                self.parent_reference,
                self.porigin,
                self.pcell,
                self.cells,
                s.position,
                s.rotation,
                self.frame.origin,  # forigin and fcell, filled in
                self.frame.cell,
                s.threshold,
                self._F,
                self._cmax,
                float(tolerance),
                bool(s.radius() > np.pi),
                out,
            )
            return out.reshape(q.shape[:-1])
        shape = self._proxy(parent, len(flat)).shape
        v = to_limit_space(flat, self.base.reference)
        inside = shape.contains(v, tolerance)
        if shape.radius() > np.pi:
            n = np.linalg.norm(v, axis=1, keepdims=True)
            inside |= shape.contains(v * np.where(n > 1e-12, 1 - 2 * np.pi / np.maximum(n, 1e-12), 0.0), tolerance)
        return inside.reshape(q.shape[:-1])

    def violation(self, rotations: Array, parent: Array | None = None) -> Array:
        return quat.angle(rotations, self.project(rotations, None, parent))

    def compiled(self) -> None:
        """No compiled form: poses and IK call project()."""
        return None

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "base": self.base.to_dict(),
            "parent": self.parent,
            "parent_reference": self.parent_reference.tolist(),
            "porigin": self.porigin.tolist(),
            "pcell": self.pcell,
            "cells": self.cells.tolist(),
            "dims": list(self.fields.shape),
            "encoding": ENCODING,
            "fields": encode_grid(self.fields),
            "fields_origin": self.frame.origin.tolist(),
            "fields_cell": self.fcell,
            "settings": dict(self.settings),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CoupledLimit:
        try:
            dims = d["dims"]
            if not (isinstance(dims, list) and len(dims) == 4):
                raise LimitsError(f"coupled limit: dims must be [K, nx, ny, nz], got {dims!r}")
            K = dims[0]
            if not (type(K) is int and 1 <= K <= MAX_FIELDS):
                raise LimitsError(f"coupled limit: dims[0] (fields) must be an integer in [1, {MAX_FIELDS}], got {K!r}")
            grid = check_dims(dims[1:], "coupled limit fields")
            enc = d.get("encoding", ENCODING)
            F = decode_grid(
                d["fields"], [K * grid[0], grid[1], grid[2]], "coupled limit fields", enc, max_values=MAX_FIELDS_NODES
            )
            cells = d["cells"]
            if not (isinstance(cells, list) and np.size(cells) <= MAX_PARENT_CELLS):
                raise LimitsError(f"coupled limit: cells must be a nested list of at most {MAX_PARENT_CELLS} integers")
            return cls(
                FittedLimit.from_dict(d["base"]),
                str(d["parent"]),
                d["parent_reference"],
                d["porigin"],
                d["pcell"],
                np.asarray(cells, np.int64),
                F.reshape((K, *grid)),
                settings=dict(d.get("settings", {})),
                forigin=d.get("fields_origin"),
                fcell=d.get("fields_cell"),
            )
        except KeyError as e:
            raise LimitsError(f"corrupt coupled limit entry: missing {e}") from None
        except (TypeError, ValueError, OverflowError, IndexError) as e:
            raise LimitsError(f"corrupt coupled limit entry: {e}") from None

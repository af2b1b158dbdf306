"""Coupled (parent-conditioned) implicit limits, after Herda et al.'s hierarchical joint limits.

The parent's limit space (scaled angle axis relative to its reference, short cover) is cut into
a coarse grid of cells. In every cell with enough data the child gets its own metaball field,
fitted to the child rotations seen while the parent was within one cell of its centre (where
its blend weight is not zero, so every training pose stays inside however it is blended); cells with too little data
use the child's own (uncoupled) field. A pose's child limit is the blend of the eight
neighbouring cells' fields with trilinear weights of the parent's rotation: the fields morph
smoothly between cells. All fields share one grid, so blending is a weighted sum of lookups.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from ._checks import check_soften
from .. import _core, quat
from ..errors import LimitsError
from .implicit import (ENCODING, Implicit, cell_maxima, decode_grid, encode_grid, fit_field,
                       nearest_inside)
from .joint import FittedLimit, _project_batched, to_limit_space

__all__ = ["CoupledLimit", "humanoid_pairs"]

Array = NDArray[np.float64]

PARENT_CELL = 0.5  # radians: the coarse grid of the parent's limit space
MIN_FRAMES = 60  # a parent cell needs this many training frames for its own child field


def humanoid_pairs(names: Sequence[str], parents: Sequence[int]) -> list[tuple[str, str]]:
    """(parent, child) joint pairs of a humanoid whose limits are coupled: clavicle -> shoulder,
    shoulder -> elbow, hip -> knee, along the spine (found by name)."""
    rules = [
        (r"(shoulder|clavicle|collar)", r"(?<!fore)(?<!lower)(arm|upperarm|humerus)$"),
        (r"(?<!fore)(?<!lower)(arm|upperarm|humerus)$", r"(forearm|lowerarm|elbow)"),
        (r"(upleg|upperleg|thigh|hip)$", r"((?<!up)(?<!upper)leg|knee|shin|calf|lowerleg)$"),
        (r"(spine\d*|chest|abdomen)$", r"(spine\d*|chest|neck)$"),
    ]
    out = []
    for c, p in enumerate(parents):
        if p < 0:
            continue
        pn, cn = names[p].lower(), names[c].lower()
        if any(re.search(a, pn) and re.search(b, cn) for a, b in rules):
            out.append((names[p], names[c]))
    return out


class _Blend:
    """The child's blended field for given parent rotations, as a shape FittedLimit's batched
    path can use (one row of blend weights per point)."""

    def __init__(self, limit: "CoupledLimit", ids: NDArray[np.int64], ws: Array):
        self.limit, self.ids, self.ws = limit, ids, ws
        self._last: tuple | None = None

    def _rows(self, n: int) -> tuple[NDArray[np.int64], Array]:
        if n != len(self.ids):
            raise LimitsError("internal: blend weights do not match the points")
        return self.ids, self.ws

    def project(self, points: Array) -> Array:
        s, lim = self.limit.base_shape, self.limit
        flat = np.ascontiguousarray(points, np.float64).reshape(-1, 3)
        out = np.empty_like(flat)
        ids, ws = self._rows(len(flat))
        _core.implicit_project(flat, s.position, s.rotation, s.origin, s.cell, s.threshold, lim._F, lim._cmax, *lim._nearest(),
                               ids, ws, s.normal, out)
        return out

    def contains(self, points: Array, tolerance: float = 0.0) -> NDArray[np.bool_]:
        s, lim = self.limit.base_shape, self.limit
        flat = np.ascontiguousarray(points, np.float64).reshape(-1, 3)
        out = np.empty(len(flat), np.bool_)
        ids, ws = self._rows(len(flat))
        _core.implicit_contains(flat, s.position, s.rotation, s.origin, s.cell, s.threshold, lim._F, lim._cmax, ids, ws,
                                float(tolerance), out)
        return out

    def radius(self) -> float:
        return self.limit.base_shape.radius()


@dataclass(eq=False)
class CoupledLimit:
    """A child joint's implicit limit conditioned on its parent joint's rotation."""

    base: FittedLimit  # the child's own implicit limit (cells without data fall back to it)
    parent: str
    parent_reference: Array
    porigin: Array  # the parent grid: cell centres at porigin + (i + 0.5) * pcell
    pcell: float
    cells: NDArray[np.int64]  # [pdims] index into fields (0: the child's own field)
    fields: NDArray[np.float32]  # [K, nx, ny, nz]; fields[0] is the base shape's grid
    kind: str = "coupled"
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.base, FittedLimit) and isinstance(self.base.shape, Implicit)):
            raise LimitsError("a coupled limit needs an implicit (not swing-twist) child limit")
        self.parent_reference = quat.normalize(np.asarray(self.parent_reference, np.float64).reshape(4))
        self.porigin = np.asarray(self.porigin, np.float64).reshape(3)
        self.pcell = float(self.pcell)
        self.cells = np.asarray(self.cells, np.int64)
        F = np.asarray(self.fields, np.float32)
        s = self.base.shape
        if F.ndim != 4 or F.shape[1:] != s.grid.shape or len(F) < 1:
            raise LimitsError(f"coupled limit: fields must be [K, {', '.join(map(str, s.grid.shape))}], got {F.shape}")
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

    def _nearest(self) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
        """Per field: each node's distance to the inside and its nearest inside node (projection's
        fallback far from every metaball); computed once, when first needed."""
        if self._near is None:
            D, NEAR = zip(*(nearest_inside(f, self.base.shape.threshold) for f in self.fields))
            self._near = np.ascontiguousarray(np.stack(D)), np.ascontiguousarray(np.stack(NEAR))
        return self._near

    @property
    def base_shape(self) -> Implicit:
        return self.base.shape

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(cls, parent_points: Array, child_points: Array, child_rotations_ref: Array, child_axis: Array,
            parent_reference: Array, parent: str, padding: float = 0.05, subsample: float | None = 0.05,
            parent_cell: float = PARENT_CELL, min_frames: int = MIN_FRAMES) -> "CoupledLimit":
        """From per-frame parent limit-space points ``[N, 3]`` (short cover) and the child's
        limit-space points ``[N, 3]`` of the same frames."""
        vp = np.asarray(parent_points, np.float64)
        vc = np.asarray(child_points, np.float64)
        shape = Implicit.fit(vc, padding, subsample)
        base = FittedLimit(child_rotations_ref, child_axis, shape=shape)
        lo, hi = vp.min(0), vp.max(0)
        pdims = np.maximum(np.ceil((hi - lo) / parent_cell).astype(int), 1)
        porigin = 0.5 * (lo + hi) - 0.5 * pdims * parent_cell
        cidx = np.clip(np.floor((vp - porigin) / parent_cell).astype(int), 0, pdims - 1)
        local = (vc - shape.position) @ shape.rotation
        radius = shape.settings["radius_cells"] + padding / (math.sqrt(1.0 - shape.threshold ** (1 / 3)) * shape.cell)
        cells = np.zeros(tuple(pdims), np.int64)
        fields = [shape.grid]
        # frames by cell (sorted once): a cell's candidates are its own and its 26 neighbours' frames
        fid = np.ravel_multi_index(tuple(cidx.T), tuple(pdims)) if len(vp) else np.zeros(0, np.int64)
        order = np.argsort(fid, kind="stable")
        bounds = np.searchsorted(fid[order], np.arange(int(pdims.prod()) + 1))
        counts = np.diff(bounds).reshape(tuple(pdims))
        flat = bool(len(local) and np.ptp(local[:, 2]) < 1e-9)
        for c in np.argwhere(counts >= min_frames):
            if pdims.prod() == 1:
                break
            lo_c, hi_c = np.maximum(c - 1, 0), np.minimum(c + 1, pdims - 1)
            nb = np.stack(np.meshgrid(*[np.arange(a, b + 1) for a, b in zip(lo_c, hi_c)], indexing="ij"), -1)
            ids = np.ravel_multi_index(tuple(nb.reshape(-1, 3).T), tuple(pdims))
            cand = np.sort(np.concatenate([order[bounds[i]:bounds[i + 1]] for i in ids]))
            centre = porigin + (c + 0.5) * parent_cell
            near = cand[np.all(np.abs(vp[cand] - centre) < parent_cell, axis=1)]  # every frame its weight reaches
            cells[tuple(c)] = len(fields)
            fields.append(fit_field(local[near], shape.origin, shape.grid.shape, shape.cell, radius, shape.threshold,
                                    True, flat))
        return cls(base, parent, parent_reference, porigin, float(parent_cell), cells, np.stack(fields),
                   settings={"padding": float(padding), "parent_cell": float(parent_cell),
                             "min_frames": int(min_frames), "cells_with_data": len(fields) - 1})

    # ------------------------------------------------------------------ blending
    def weights(self, parent_rotations: Array) -> tuple[NDArray[np.int64], Array]:
        """Per rotation the 8 neighbouring parent cells' fields and trilinear weights ``[N, 8]``."""
        vp = to_limit_space(np.asarray(parent_rotations, np.float64).reshape(-1, 4), self.parent_reference)
        ids = np.empty((len(vp), 8), np.int64)
        ws = np.empty((len(vp), 8))
        _core.coupled_weights(vp, self.porigin, self.pcell, np.ascontiguousarray(self.cells), ids, ws)
        return ids, ws

    def _proxy(self, parent_rotations: Array | None, n: int) -> SimpleNamespace:
        if parent_rotations is None:  # no parent given: the child's own limit
            ids, ws = np.zeros((n, 1), np.int64), np.ones((n, 1))
        else:
            ids, ws = self.weights(parent_rotations)
            if len(ids) != n:
                raise LimitsError(f"coupled limit: {len(ids)} parent rotations for {n} child rotations")
        return SimpleNamespace(reference=self.base.reference, twist_axis=self.base.twist_axis, swing_twist=False,
                               shape=_Blend(self, ids, ws))

    # ------------------------------------------------------------------ queries
    def project(self, rotations: Array, soften: tuple[float, float] | None = None,
                parent: Array | None = None) -> Array:
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
            s = self.base.shape
            out = np.empty(len(flat), np.bool_)
            _core.coupled_contains(np.ascontiguousarray(flat), self.base.reference, np.ascontiguousarray(pf),
                                   self.parent_reference, self.porigin, self.pcell, self.cells, s.position, s.rotation,
                                   s.origin, s.cell, s.threshold, self._F, self._cmax, float(tolerance),
                                   bool(s.radius() > np.pi),
                                   out)
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

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict:
        return {"kind": self.kind, "base": self.base.to_dict(), "parent": self.parent,
                "parent_reference": self.parent_reference.tolist(), "porigin": self.porigin.tolist(),
                "pcell": self.pcell, "cells": self.cells.tolist(), "dims": list(self.fields.shape),
                "encoding": ENCODING, "fields": encode_grid(self.fields), "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CoupledLimit":
        try:
            dims = d["dims"]
            if not (isinstance(dims, list) and len(dims) == 4):
                raise LimitsError(f"coupled limit: dims must be [K, nx, ny, nz], got {dims!r}")
            enc = d.get("encoding", ENCODING)
            F = decode_grid(d["fields"], dims[1:], "coupled limit fields", enc) if dims[0] == 1 else \
                decode_grid(d["fields"], [dims[0] * dims[1], dims[2], dims[3]], "coupled limit fields", enc)
            return cls(FittedLimit.from_dict(d["base"]), str(d["parent"]), d["parent_reference"], d["porigin"],
                       d["pcell"], np.asarray(d["cells"], np.int64), F.reshape([int(x) for x in dims]),
                       settings=dict(d.get("settings", {})))
        except KeyError as e:
            raise LimitsError(f"corrupt coupled limit entry: missing {e}") from None
        except (TypeError, ValueError) as e:
            raise LimitsError(f"corrupt coupled limit entry: {e}") from None

"""Operations on limit-space point clouds that every shape uses: the principal frame of a
cloud, greedy subsampling (the reference's ``subsample_naive``, on a hash grid) and softening
a projection (the article's ``projection_soften``)."""

from __future__ import annotations

import math

import numpy as np

from .._native import _core
from ..errors import LimitsError
from ._checks import _check_finite, _cloud, _points

__all__ = ["CloudStats", "extreme_points", "fit_orientation", "fit_frame", "soften", "subsample"]


def fit_orientation(points) -> tuple[np.ndarray, np.ndarray]:
    """Mean and principal axes of a cloud in limit space.

    ``points`` ``[..., N, 3]``.  Returns ``(position [..., 3], rotation [..., 3, 3])``:
    ``position`` is the mean; the COLUMNS of ``rotation`` are the eigenvectors of the
    covariance ``sum((x - mean)(x - mean)^T) / N`` in order of decreasing variance.
    ``rotation`` is always a proper rotation (``det = +1``).  Sign convention: the
    largest-magnitude component of the first two columns is positive (first such
    component on ties); the third column is their cross product.  For rank-deficient
    clouds (a line, a plane, identical points) the null-space axes are an arbitrary but
    deterministic orthonormal completion (identical points give the identity).
    """
    pts = _cloud(points)
    mean = pts.mean(axis=-2)
    d = pts - mean[..., None, :]
    n = pts.shape[-2]
    cov = np.einsum("...ni,...nj->...ij", d, d) / n
    cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    # spreads at the rounding level of the centring are no spread at all (identical
    # points then give exactly the identity frame)
    noise = (64.0 * np.finfo(np.float64).eps * np.abs(pts).max(axis=(-2, -1))) ** 2
    cov = np.where(np.abs(cov) <= noise[..., None, None], 0.0, cov)
    vals, vecs = np.linalg.eigh(cov)  # ascending eigenvalues
    order = np.argsort(-vals, axis=-1, kind="stable")  # descending, ties keep eigh order
    vecs = np.take_along_axis(vecs, order[..., None, :], axis=-1)
    a0 = vecs[..., :, 0]
    a1 = vecs[..., :, 1]
    a0 = a0 * _sign_of_largest(a0)[..., None]
    a1 = a1 * _sign_of_largest(a1)[..., None]
    a2 = np.cross(a0, a1)
    a2 = a2 / np.linalg.norm(a2, axis=-1, keepdims=True)
    rot = np.stack([a0, a1, a2], axis=-1)
    return mean, rot


def _sign_of_largest(v: np.ndarray) -> np.ndarray:
    idx = np.argmax(np.abs(v), axis=-1)
    comp = np.take_along_axis(v, idx[..., None], axis=-1)[..., 0]
    return np.where(comp < 0.0, -1.0, 1.0)


def soften(original, projected, falloff: float = 1.0, radius: float = 0.1, eps: float = 1e-5) -> np.ndarray:
    """The article's ``projection_soften``: leave some leeway toward the original point.

    For each point with ``d = |projected - original| > eps`` returns
    ``projected + normalize(original - projected) * tanh(falloff * d) * radius``,
    otherwise ``projected`` unchanged.  ``[..., 3]`` arrays in limit space.
    """
    o = _points(original, "original")
    p = _points(projected, "projected")
    if o.shape != p.shape:
        raise LimitsError(f"original {o.shape} and projected {p.shape} must have the same shape")
    try:
        falloff = float(falloff)
        radius = float(radius)
        eps = float(eps)
    except (TypeError, ValueError) as exc:
        raise LimitsError(f"falloff, radius and eps must be real numbers ({exc})") from exc
    for name, val in (("falloff", falloff), ("radius", radius), ("eps", eps)):
        if not math.isfinite(val) or val < 0.0:
            raise LimitsError(f"{name} must be finite and >= 0, got {val}")
    res = np.empty(o.shape)
    if not _core.soften(
        np.ascontiguousarray(o).reshape(-1, 3),
        np.ascontiguousarray(p).reshape(-1, 3),
        falloff,
        radius,
        eps,
        res.reshape(-1, 3),
    ):
        _check_finite(o, "original")
        _check_finite(p, "projected")
    return res


def _subsample_naive_kernel(pts: np.ndarray, distance: float) -> np.ndarray:
    """The reference's O(N*M) greedy loop (compiled; used for checks and benchmarks)."""
    return _core.subsample_naive(np.ascontiguousarray(pts, np.float64), float(distance))


def subsample(points, distance: float = 0.05) -> np.ndarray:
    """Greedy, order-dependent subsampling of a cloud in limit space.

    Point ``i`` (in input order) is kept unless an already kept point is STRICTLY
    closer than ``distance`` -- exactly the reference ``subsample_naive``.  Returns the
    int64 indices of the kept points (increasing; ``points[indices]`` is the
    subsampled cloud).  Uses a spatial hash grid with cells slightly larger than
    ``2 * distance`` (at most 8 neighbouring cells are searched), so it runs in ~O(N).
    ``distance == 0`` keeps every point; duplicates are dropped for ``distance > 0``.
    ``points`` ``[N, 3]``; an empty cloud returns no indices.
    """
    arr = _points(points)
    if arr.ndim != 2:
        raise LimitsError(f"points must have shape [N, 3], got {arr.shape}")
    _check_finite(arr, "points")
    try:
        d = float(distance)
    except (TypeError, ValueError) as exc:
        raise LimitsError(f"distance must be a real number, got {distance!r}") from exc
    if math.isnan(d) or d < 0.0:
        raise LimitsError(f"distance must be >= 0, got {d}")
    n = arr.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if d == 0.0:
        return np.arange(n, dtype=np.int64)
    if math.isinf(d):
        return np.zeros(1, dtype=np.int64)
    pts = np.ascontiguousarray(arr)
    maxabs = float(np.abs(pts).max())
    # `margin` dominates the rounding of x -/+ distance (so the searched cell range always
    # contains the cell of every point closer than `distance`); the cell is bounded below
    # so cell coordinates stay far from int64 overflow for tiny distances.
    margin = 1e-6 * d + 1e-13 * maxabs
    cell = max(2.0 * (d + margin) * (1.0 + 1e-9), maxabs * 1e-9)
    return _core.subsample_grid(pts, d, margin, cell)


def fit_frame(points, distance: float | None = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The frame of a fitted shape, as in the seed: mean and principal axes of the cloud
    subsampled at ``distance`` (so dense regions do not dominate it; None: every point)."""
    if isinstance(points, CloudStats):
        return fit_orientation(points.frame_points(distance))
    pts = np.asarray(points, np.float64)
    sub = pts[subsample(pts, distance)] if distance else pts
    return fit_orientation(sub)


def extreme_points(points: np.ndarray) -> np.ndarray:
    """Indices (increasing) of a subset of a cloud ``[N, 3]`` with the same convex hull (to
    rounding: a direction spanned below 1e-12 of the cloud's size counts as flat) that also holds
    the first minimum and maximum of every coordinate. Any convex function of the points (an
    extent in any frame, an ellipsoid's radius) has the same maximum over the subset."""
    from scipy.spatial import ConvexHull, QhullError

    pts = np.asarray(points, np.float64).reshape(-1, 3)
    n = len(pts)
    if n <= 16:
        return np.arange(n, dtype=np.int64)
    keep = [pts.argmin(0), pts.argmax(0)]
    d = pts - pts.mean(0)
    _, sv, vt = np.linalg.svd(d, full_matrices=False)
    rank = int(np.sum(sv > 1e-13 * sv[0])) if sv[0] > 0 else 0
    try:
        if rank == 1:
            t = d @ vt[0]
            keep.append(np.array([t.argmin(), t.argmax()]))
        elif rank >= 2:
            h = ConvexHull(pts if rank == 3 else d @ vt[:2].T, qhull_options="Qc")
            keep += [h.vertices, h.coplanar[:, 0]]
    except (QhullError, ValueError):
        return np.arange(n, dtype=np.int64)
    return np.unique(np.concatenate([np.asarray(k, np.int64).ravel() for k in keep]))


class CloudStats:
    """Statistics of a limit-space cloud that clips add to one at a time, in order, and that a
    convex shape fits from exactly as from every point (:func:`fit_frame` reads them):

    * ``kept``: the greedy :func:`subsample` of every point added so far, in order. Folding clips
      in is ``subsample(kept + clips)``: kept points are pairwise at least ``distance`` apart, so
      greedy keeps them all and then decides the new points as on the whole cloud;
    * ``extreme``: points with the cloud's convex hull (:func:`extreme_points`), the array the
      object stands for (``np.asarray``): the shapes' extents are maxima of convex functions.

    Added points wait in a buffer of at most ``FLUSH`` points (plus one clip) before they are
    folded in. With ``keep_all`` (shapes that need every point: implicit, coupled; or no
    subsampling) it keeps every row instead and stands for all of them."""

    #: points waiting to be folded in (a bound on the memory besides kept and extreme)
    FLUSH = 4096

    def __init__(self, distance: float | None = 0.05, keep_all: bool = False):
        self.distance = distance
        self.keep_all = bool(keep_all or not distance)
        self.count = 0
        self._parts: list[np.ndarray] = []
        self._pending = 0
        self._kept = np.zeros((0, 3))
        self._extreme = np.zeros((0, 3))

    @property
    def kept(self) -> np.ndarray:
        """The greedy subsample of every point added, in order."""
        self._fold()
        return self._kept

    @property
    def extreme(self) -> np.ndarray:
        """Points of every point's convex hull (with each coordinate's extremes)."""
        self._fold()
        return self._extreme

    def add(self, points: np.ndarray) -> None:
        """Add the next clip's rows (points ``[N, 3]``; with keep_all any rows, e.g. rotations)."""
        pts = np.asarray(points, np.float64)
        self.count += len(pts)
        if not self.keep_all:
            pts = pts.reshape(-1, 3)
            _check_finite(pts, "points")
            self._pending += len(pts)
        if len(pts):
            self._parts.append(pts)
        if not self.keep_all and self._pending >= self.FLUSH:
            self._fold()

    def _fold(self) -> None:
        if self.keep_all or not self._parts:
            return
        both = np.concatenate([self._kept, *self._parts])
        self._kept = both[subsample(both, float(self.distance or 0.0))]
        both = np.concatenate([self._extreme, *self._parts])
        self._extreme = both[extreme_points(both)]
        self._parts, self._pending = [], 0

    def frame_points(self, distance: float | None) -> np.ndarray:
        """The points a shape's frame is fitted to (:func:`fit_frame`)."""
        if self.keep_all:
            pts = self.points()
            return pts[subsample(pts, distance)] if distance else pts
        if distance != self.distance:
            raise LimitsError(f"these statistics subsample at {self.distance}, not {distance}")
        return self.kept

    def points(self) -> np.ndarray:
        """Every point (keep_all) or the extreme points."""
        if not self.keep_all:
            return self.extreme
        if len(self._parts) != 1:
            self._parts = [np.concatenate(self._parts) if self._parts else np.zeros((0, 3))]
        return self._parts[0]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        pts = self.points()
        return pts if dtype is None else pts.astype(dtype, copy=False)

    def __len__(self) -> int:
        return len(self.points())

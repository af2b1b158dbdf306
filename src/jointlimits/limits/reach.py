"""Reach-window + twist joint limits (Blow, "Inverse Kinematics with Quaternion Joint Limits").

A joint's local rotation ``q`` is first taken relative to a reference rotation, ``r = ref⁻¹ q``,
and factored as ``r = S T``: the swing ``S`` is the simple rotation taking the bone axis ``a`` to
the direction ``d = r a`` the bone now points in, and the twist ``T`` turns about ``a`` by ``φ``.

* Reach: ``d`` must pass through one of a few convex polygonal *reach windows*, each lying on
  the plane ``{x : x.n = 1}`` at unit distance from the joint (2D coordinates along ``e1, e2``).
  With ``p = (d.e1, d.e2) / d.n`` the test is point-in-convex-polygon, which is ``d.g_i <= 0``
  for one precomputed plane ``g_i = a_i,x e1 + a_i,y e2 - b_i n`` per edge ``a_i.p <= b_i``.
* Twist: ``φ`` must lie in ``[tmin, tmax]`` (an arc of the circle, so ranges across ±π work).

Projection (the closest valid rotation, per Blow): the twist angle is clamped to the range; a
direction outside every window moves to the closest point of the window polygon (in its plane)
and back onto the sphere, choosing the window whose candidate is nearest to ``d``. Inside
rotations are returned unchanged. Fast accept tests: a cone inscribed in each window
(``d.u_c >= cos β``) and the twist cosine ``cos(φ - mid) >= cos(half)``, both trig free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._native import _core
from ..errors import LimitsError
from ..motion import quat
from ._checks import filled

__all__ = ["ReachWindow", "ReachWindowLimit"]

Array = NDArray[np.float64]
_SLACK = 1e-9  # rotations within this (radians / plane sine) of the limit count as inside for project()


def _plane_basis(n: Array) -> tuple[Array, Array]:
    """A deterministic right-handed basis (e1, e2) of the plane perpendicular to unit n."""
    k = int(np.argmin(np.abs(n)))
    e = np.zeros(3)
    e[k] = 1.0
    e1 = e - np.dot(e, n) * n
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    return e1, e2


@dataclass
class ReachWindow:
    """One convex reach window: the polygon ``vertices`` ``[K, 2]`` (counter-clockwise about
    ``normal``) on the plane ``x.normal = 1``; a 2D point (u, v) is the 3D point
    ``normal + u e1 + v e2`` (``e1``/``e2`` default to a fixed basis perpendicular to ``normal``)."""

    normal: Array
    vertices: Array
    e1: Array | None = None

    def __post_init__(self) -> None:
        n = np.asarray(self.normal, np.float64).reshape(-1)
        if n.shape != (3,) or not np.all(np.isfinite(n)) or not 1e-12 < np.max(np.abs(n)) < 1e12:
            raise LimitsError(f"reach window normal must be a finite non-zero 3-vector, got {self.normal!r}")
        n = n / np.max(np.abs(n))  # no overflow of the norm for any finite normal
        self.normal = n / np.linalg.norm(n)
        if self.e1 is None:
            self.e1, _ = _plane_basis(self.normal)
        else:
            e1 = np.asarray(self.e1, np.float64).reshape(3)
            if not (np.all(np.isfinite(e1)) and 1e-12 < np.max(np.abs(e1)) < 1e12):
                raise LimitsError(f"reach window e1 must be a finite non-zero 3-vector, got {self.e1!r}")
            e1 = e1 / np.max(np.abs(e1))
            e1 = e1 - np.dot(e1, self.normal) * self.normal
            if np.linalg.norm(e1) < 1e-9:
                raise LimitsError("reach window e1 must not be parallel to its normal")
            self.e1 = e1 / np.linalg.norm(e1)
        v = np.asarray(self.vertices, np.float64)
        if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] < 3 or not np.all(np.isfinite(v)):
            raise LimitsError(f"reach window vertices must be a finite [K>=3, 2] array, got shape {v.shape}")
        if v.shape[0] > MAX_WINDOW_VERTICES or not np.all(np.abs(v) <= MAX_WINDOW_COORD):
            raise LimitsError(
                f"reach window vertices: at most {MAX_WINDOW_VERTICES}, within +-{MAX_WINDOW_COORD:g} plane units "
                "(a window wider than a hemisphere is out of proportion)"
            )
        area2 = np.sum(v[:, 0] * np.roll(v[:, 1], -1) - np.roll(v[:, 0], -1) * v[:, 1])
        if abs(area2) < 1e-14:
            raise LimitsError("reach window polygon has zero area")
        if area2 < 0:
            v = v[::-1].copy()
        e = np.roll(v, -1, axis=0) - v
        turn = e[:, 0] * np.roll(e, -1, axis=0)[:, 1] - e[:, 1] * np.roll(e, -1, axis=0)[:, 0]
        if np.any(turn < -1e-12 * max(1.0, float(np.max(np.abs(v))) ** 2)):
            raise LimitsError("reach window polygon must be convex")
        self.vertices = v

    @property
    def e2(self) -> Array:
        return np.cross(self.normal, filled(self.e1, "e1"))

    def lines(self) -> tuple[Array, Array]:
        """Edge half-planes ``a_i . p <= b_i`` with unit outward normals ``a_i``."""
        v = self.vertices
        e = np.roll(v, -1, axis=0) - v
        a = np.stack([e[:, 1], -e[:, 0]], axis=-1)
        a /= np.linalg.norm(a, axis=-1, keepdims=True)
        return a, np.sum(a * v, axis=-1)

    def to_dict(self) -> dict:
        return {
            "normal": self.normal.tolist(),
            "e1": filled(self.e1, "e1").tolist(),
            "vertices": self.vertices.tolist(),
        }


# --------------------------------------------------------------------------- the limit
#: Bounds of a reach window table: windows per joint, vertices per window, and |u|, |v| on the
#: window's plane (tan of the angle from its centre: 1e6 is 89.99994 degrees).
MAX_WINDOWS, MAX_WINDOW_VERTICES, MAX_WINDOW_COORD = 64, 256, 1e6


def _wrap(x: ArrayLike) -> Array:
    return (np.asarray(x) + np.pi) % (2.0 * np.pi) - np.pi


class ReachWindowLimit:
    """Reach windows + twist range of one joint, relative to ``reference`` and bone ``axis``.

    ``reference`` ``[4]``: the rotation the limits are measured from (``r = reference⁻¹ q``).
    ``axis`` ``[3]``: the bone direction in the joint's local frame (toward its child).
    ``windows``: :class:`ReachWindow` objects or dicts ``{"normal", "vertices"[, "e1"]}``; the bone
    direction ``r axis`` (in the reference frame) must pass through one of them (empty: free swing).
    ``twist_range``: ``(tmin, tmax)`` radians about the axis, ``tmax - tmin <= 2π`` (``None``: free).
    """

    kind = "reach-window"

    def __init__(
        self,
        reference: ArrayLike,
        axis: ArrayLike,
        windows: Sequence[ReachWindow | dict],
        twist_range: tuple[float, float] | None = None,
    ) -> None:
        ref = np.asarray(reference, np.float64).reshape(-1)
        if ref.shape != (4,) or not np.all(np.isfinite(ref)) or abs(np.linalg.norm(ref) - 1.0) > 1e-6:
            raise LimitsError(f"reference must be a unit quaternion [4], got {reference!r}")
        ax = np.asarray(axis, np.float64).reshape(-1)
        if ax.shape != (3,) or not np.all(np.isfinite(ax)) or np.linalg.norm(ax) < 1e-12:
            raise LimitsError(f"axis must be a finite non-zero 3-vector, got {axis!r}")
        self.reference = ref / np.linalg.norm(ref)
        self.axis = ax / np.linalg.norm(ax)
        if not isinstance(windows, Sequence) or isinstance(windows, str) or len(windows) > MAX_WINDOWS:
            raise LimitsError(f"windows must be a list of at most {MAX_WINDOWS} reach windows")
        try:
            self.windows = [w if isinstance(w, ReachWindow) else ReachWindow(**w) for w in windows]
        except TypeError as e:
            raise LimitsError(f"corrupt reach window: {e}") from None
        if twist_range is None:
            tmin, tmax = -np.pi, np.pi
        else:
            tmin, tmax = (float(x) for x in twist_range)
            if not (np.isfinite(tmin) and np.isfinite(tmax)) or tmax < tmin:
                raise LimitsError(f"twist_range must be finite with tmin <= tmax, got {twist_range!r}")
        self.twist_range = (tmin, tmax)
        self._tmid = 0.5 * (tmin + tmax)
        self._thalf = min(0.5 * (tmax - tmin), np.pi)
        self._pack()

    # -- packed arrays (shared with the CCD kernel)
    def _pack(self) -> None:
        W = len(self.windows)
        self._wn = np.zeros((W, 3))
        self._we1 = np.zeros((W, 3))
        self._we2 = np.zeros((W, 3))
        self._wc = np.zeros((W, 2))
        self._cone_u = np.zeros((W, 3))
        self._cone_cos = np.ones(W) * 2.0
        self._wvs = np.zeros(W + 1, np.int64)
        verts, gs = [], []
        for w, win in enumerate(self.windows):
            n, e1, e2 = win.normal, filled(win.e1, "e1"), win.e2
            a, b = win.lines()
            g = a[:, :1] * e1 + a[:, 1:] * e2 - b[:, None] * n
            g /= np.linalg.norm(g, axis=-1, keepdims=True)
            c = win.vertices.mean(axis=0)
            rho = float(np.min(b - a @ c))  # inscribed circle about the vertex centroid
            self._wn[w], self._we1[w], self._we2[w], self._wc[w] = n, e1, e2, c
            u = n + c[0] * e1 + c[1] * e2
            self._cone_u[w] = u / np.linalg.norm(u)
            if rho > 0:
                th = np.linspace(0.0, 2 * np.pi, 721)[:-1]
                pts = n + (c[0] + rho * np.cos(th))[:, None] * e1 + (c[1] + rho * np.sin(th))[:, None] * e2
                pts /= np.linalg.norm(pts, axis=-1, keepdims=True)
                beta = float(np.min(np.arccos(np.clip(pts @ self._cone_u[w], -1.0, 1.0)))) * 0.995
                self._cone_cos[w] = np.cos(beta)
            verts.append(win.vertices)
            gs.append(g)
            self._wvs[w + 1] = self._wvs[w] + len(win.vertices)
        self._verts = np.concatenate(verts) if verts else np.zeros((0, 2))
        self._eg = np.concatenate(gs) if gs else np.zeros((0, 3))
        self._edge_window = np.repeat(np.arange(W), np.diff(self._wvs))
        self._core = _core.ReachLimit(
            self.reference,
            self.axis,
            self._tmid,
            self._thalf,
            self._wn,
            self._we1,
            self._we2,
            self._wc,
            self._wvs,
            self._verts,
            self._eg,
        )

    def __getstate__(self) -> dict:  # the core's copy is rebuilt, not pickled
        return {k: v for k, v in self.__dict__.items() if k != "_core"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._pack()

    # -- decomposition
    def relative(self, q: ArrayLike) -> Array:
        """``reference⁻¹ q`` with the cover ``w >= 0``."""
        return quat.abs(quat.inv_mul(self.reference, np.asarray(q, np.float64)))

    def swing_twist(self, q: ArrayLike) -> tuple[Array, Array]:
        """Bone direction ``d = r a`` ``[..., 3]`` and twist angle ``φ = 2 atan2(r_v.a, r_w)`` ``[...]``."""
        r = self.relative(q)
        d = quat.mul_vec(r, self.axis)
        phi = 2.0 * np.arctan2(r[..., 1:] @ self.axis, r[..., 0])
        return d, phi

    # -- tests
    def _twist_inside(self, r: Array, slack: float) -> NDArray[np.bool_]:
        if self._thalf >= np.pi:
            return np.ones(r.shape[:-1], bool)
        w = r[..., 0]
        s = r[..., 1:] @ self.axis
        n2 = w * w + s * s
        safe = np.where(n2 > 0, n2, 1.0)
        cphi = np.where(n2 > 0, (w * w - s * s) / safe, 1.0)
        sphi = np.where(n2 > 0, 2.0 * w * s / safe, 0.0)
        # cos(φ - mid) >= cos(half + slack): no trig per rotation
        cm, sm = np.cos(self._tmid), np.sin(self._tmid)
        return cphi * cm + sphi * sm >= np.cos(min(self._thalf + slack, np.pi))

    def _swing_inside(self, d: Array, slack: float) -> NDArray[np.bool_]:
        W = len(self.windows)
        if W == 0:
            return np.ones(d.shape[:-1], bool)
        front = d @ self._wn.T > 0.0  # [..., W]
        over = d @ self._eg.T > slack  # [..., E]
        bad = np.zeros(d.shape[:-1] + (W,), bool)
        for w in range(W):  # loop over windows, vectorised over rotations
            bad[..., w] = np.any(over[..., self._wvs[w] : self._wvs[w + 1]], axis=-1)
        return np.any(front & ~bad, axis=-1)

    def fast_accept(self, q: ArrayLike) -> NDArray[np.bool_]:
        """Cheap sufficient test (no trig, no polygon): ``d`` inside a window's inscribed cone
        (``d.u_c >= cos β``) and the twist cosine test. True implies :meth:`contains`."""
        r = self.relative(q)
        d = quat.mul_vec(r, self.axis)
        if len(self.windows):
            cone = np.any(d @ self._cone_u.T >= self._cone_cos, axis=-1)
        else:
            cone = np.ones(d.shape[:-1], bool)
        return cone & self._twist_inside(r, 0.0)

    def contains(self, q: ArrayLike, tolerance: float = 1e-6) -> NDArray[np.bool_]:
        """Whether local rotations ``[..., 4]`` respect the limit (each edge plane and the twist
        range are tested with slack ``tolerance`` radians). Fast-accepted rotations skip the polygon test."""
        q = np.asarray(q, np.float64)
        r = self.relative(q)
        d = quat.mul_vec(r, self.axis)
        out = np.asarray(self._twist_inside(r, tolerance))
        if len(self.windows):
            fast = np.any(d @ self._cone_u.T >= self._cone_cos, axis=-1)
            todo = out & ~fast
            if np.any(todo):
                slack = np.sin(min(tolerance, np.pi / 2))
                if out.ndim == 0:
                    return np.asarray(self._swing_inside(d, slack))
                out = out.copy()
                out[todo] = self._swing_inside(d[todo], slack)
        return out

    def project(self, q: ArrayLike) -> Array:
        """Closest valid rotation per Blow: twist clamped to its range, swing direction moved to the
        closest point of the nearest window polygon; rotations inside come back unchanged."""
        q = np.asarray(q, np.float64)
        if q.shape[-1:] != (4,):
            raise LimitsError(f"rotations must be [..., 4], got shape {q.shape}")
        flat = np.ascontiguousarray(q.reshape(-1, 4))
        out = np.empty_like(flat)
        self._core.project(flat, _SLACK, out)
        return out.reshape(q.shape)

    def violation(self, q: ArrayLike) -> Array:
        """Rotation angle (radians) between q and its projection: 0 inside."""
        q = np.asarray(q, np.float64)
        p = self.project(q)
        return np.where(np.all(p == q, axis=-1), 0.0, quat.angle(q, p))

    def compiled(self) -> _core.ReachLimit:
        """The ``_core.ReachLimit`` IK projects this joint with (built once)."""
        return self._core

    # -- serialisation
    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "reference": self.reference.tolist(),
            "axis": self.axis.tolist(),
            "windows": [w.to_dict() for w in self.windows],
            "twist_range": list(self.twist_range),
        }

    @classmethod
    def from_dict(cls, d: dict) -> ReachWindowLimit:
        if d.get("kind", cls.kind) != cls.kind:
            raise LimitsError(f"not a reach-window limit: kind {d.get('kind')!r}")
        try:
            return cls(d["reference"], d["axis"], d["windows"], d.get("twist_range"))
        except KeyError as e:
            raise LimitsError(f"reach-window limit dict is missing {e}") from None

    def __repr__(self) -> str:
        tw = np.degrees(self.twist_range)
        return (
            f"ReachWindowLimit({len(self.windows)} window(s), "
            f"{[len(w.vertices) for w in self.windows]} vertices, twist [{tw[0]:.1f}, {tw[1]:.1f}] deg)"
        )

    # -- fitting
    @classmethod
    def fit(
        cls,
        local_rotations: ArrayLike,
        axis: ArrayLike,
        reference: ArrayLike | None = None,
        padding: float = 0.05,
        max_vertices: int = 12,
        twist_padding: float | None = None,
        max_windows: int = 4,
        min_cos: float = 0.2,
    ) -> ReachWindowLimit:
        """Fit windows and a twist range to observed local rotations ``[F, 4]`` of one joint.

        Directions ``d = r a`` are centrally projected on the plane through their mean direction,
        wrapped in a convex hull (``scipy.spatial.ConvexHull``), simplified to ``max_vertices``
        by removing edges while still containing every point, then each edge is pushed out by
        ``padding`` (plane units ≈ radians near the centre). Directions that spread beyond
        ``acos(min_cos)`` of their mean are split into up to ``max_windows`` windows (spherical
        k-means). The twist range is the shortest arc covering every ``φ``, widened by
        ``twist_padding`` (default ``padding``) each side. ``reference`` defaults to the mean rotation.
        """
        from scipy.spatial import ConvexHull, QhullError

        q = np.asarray(local_rotations, np.float64).reshape(-1, 4)
        if q.shape[0] < 3:
            raise LimitsError(f"need at least 3 rotations to fit a reach window, got {q.shape[0]}")
        if not np.all(np.isfinite(q)):
            raise LimitsError("local_rotations contain NaN or infinite values")
        if padding < 0 or (twist_padding is not None and twist_padding < 0):
            raise LimitsError("padding must be >= 0")
        if max_vertices < 3:
            raise LimitsError("max_vertices must be >= 3")
        q = quat.normalize(q)
        ref = quat.average(q) if reference is None else np.asarray(reference, np.float64)
        tmp = cls(ref, axis, [], None)
        d, phi = tmp.swing_twist(q)

        # --- windows
        labels: NDArray[np.intp] = np.zeros(len(d), np.intp)
        centres = _unit(d.mean(axis=0, keepdims=True))
        for k in range(1, max_windows + 1):
            if k > 1:
                centres, labels = _spherical_kmeans(d, k)
            worst = min(float(np.min(d[labels == c] @ centres[c])) for c in range(k) if np.any(labels == c))
            if worst >= min_cos:
                break
        windows = []
        for c in range(len(centres)):
            dc = d[labels == c]
            if len(dc) == 0:
                continue
            n = centres[c]
            e1, e2 = _plane_basis(n)
            dn = np.maximum(dc @ n, 1e-3)
            p = np.stack([dc @ e1 / dn, dc @ e2 / dn], axis=-1)
            try:
                hull = ConvexHull(p)
                poly = p[hull.vertices]
            except (QhullError, ValueError):
                poly = None
            if poly is None or len(poly) < 3:
                lo, hi = p.min(axis=0) - 1e-6, p.max(axis=0) + 1e-6
                poly = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]])
            poly = _simplify_outer(poly, max_vertices)
            poly = _offset_polygon(poly, padding + 1e-9)
            windows.append(ReachWindow(n, poly, e1))

        # --- twist: shortest arc covering all angles
        tp = padding if twist_padding is None else twist_padding
        s = np.sort(_wrap(phi))
        gaps = np.diff(np.concatenate([s, s[:1] + 2 * np.pi]))
        g = int(np.argmax(gaps))
        start = s[(g + 1) % len(s)]
        length = 2 * np.pi - gaps[g]
        if length + 2 * tp >= 2 * np.pi:
            twist = None
        else:
            twist = (float(start - tp), float(start + length + tp))
        return cls(ref, axis, windows, twist)


def _unit(v: Array) -> Array:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _spherical_kmeans(d: Array, k: int, iters: int = 30) -> tuple[Array, NDArray[np.intp]]:
    """k-means on the unit sphere (cosine similarity) with farthest-point initialisation."""
    seeds = [d[0]]
    for _ in range(1, k):
        sim = np.max(d @ np.stack(seeds).T, axis=-1)
        seeds.append(d[int(np.argmin(sim))])
    c = np.stack(seeds)
    labels: NDArray[np.intp] = np.zeros(len(d), np.intp)
    for _ in range(iters):
        labels = np.argmax(d @ c.T, axis=-1)
        new = np.stack([d[labels == j].sum(axis=0) if np.any(labels == j) else c[j] for j in range(k)])
        new = _unit(new)
        if np.allclose(new, c):
            break
        c = new
    return c, labels


def _line_intersect(a1: Array, b1: float, a2: Array, b2: float) -> Array | None:
    det = a1[0] * a2[1] - a1[1] * a2[0]
    if abs(det) < 1e-12:
        return None
    return np.array([(b1 * a2[1] - a1[1] * b2) / det, (a1[0] * b2 - b1 * a2[0]) / det])


def _lines_of(v: Array) -> tuple[Array, Array]:
    e = np.roll(v, -1, axis=0) - v
    a = np.stack([e[:, 1], -e[:, 0]], axis=-1)
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    return a, np.sum(a * v, axis=-1)


def _simplify_outer(v: Array, max_vertices: int) -> Array:
    """Drop edges of a CCW convex polygon, extending both neighbours to meet, cheapest added
    area first, until at most ``max_vertices`` remain (the result contains the input)."""
    v = np.asarray(v, np.float64)
    if np.sum(v[:, 0] * np.roll(v[:, 1], -1) - np.roll(v[:, 0], -1) * v[:, 1]) < 0:
        v = v[::-1]
    while len(v) > max_vertices:
        a, b = _lines_of(v)
        K = len(v)
        best, best_i = np.inf, -1
        best_p: Array | None = None
        for i in range(K):  # edge i runs v[i] -> v[i+1]; neighbours are edges i-1 and i+1
            p = _line_intersect(a[i - 1], b[i - 1], a[(i + 1) % K], b[(i + 1) % K])
            if p is None or a[i] @ p <= b[i]:
                continue  # neighbours diverge: the edge cannot be dropped
            p0, p1 = v[i], v[(i + 1) % K]
            area = 0.5 * abs((p1[0] - p0[0]) * (p[1] - p0[1]) - (p1[1] - p0[1]) * (p[0] - p0[0]))
            if area < best:
                best, best_i, best_p = area, i, p
        if best_i < 0 or best_p is None:  # (best_p is set with best_i)
            break
        v = _replace_edge(v, best_i, best_p)
    return v


def _replace_edge(v: Array, i: int, p: Array) -> Array:
    K = len(v)
    j = (i + 1) % K
    out = []
    for k in range(K):
        if k == i:
            out.append(p)
        elif k != j:
            out.append(v[k])
    return np.array(out)


def _offset_polygon(v: Array, pad: float) -> Array:
    """Push every edge of a CCW convex polygon outward by ``pad``."""
    a, b = _lines_of(v)
    b = b + pad
    K = len(v)
    out = []
    for i in range(K):
        p = _line_intersect(a[i - 1], b[i - 1], a[i], b[i])
        out.append(v[i] + pad * a[i] if p is None else p)
    return np.array(out)

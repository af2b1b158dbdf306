"""Data-driven joint limits for a whole skeleton: fit from clips, project, soften, save.

Per joint, a rotation ``q`` is taken relative to a reference pose, ``r = inv(ref) q``, put on
the ``w >= 0`` cover and mapped to limit space ``v = scaled_angle_axis(r)`` (with swing-twist:
``r = swing twist`` about the joint's twist axis and one limit for each part). A limit is a shape
in that space (box, oriented box, ellipsoid, k-DOP) and projecting a rotation means projecting
``v`` onto the shape and mapping back. Fitting follows the seed: per clip, relative rotations are
put on the short cover at the first frame and unrolled, subsampled, and the shape is fitted.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

import numba
import numpy as np
from numpy.typing import NDArray

from . import limits as L
from . import quat
from ._atomic import atomic_write
from .errors import LimitsError
from .fused import _exp2, _log2, _qmul, pack_limit, project_fitted
from .skeleton import Motion, Skeleton

__all__ = ["JointLimits", "JointLimit", "FittedLimit", "Shape", "SHAPES", "fit_shape", "to_limit_space",
           "from_limit_space"]

SHAPES = ("box", "oriented-box", "ellipsoid", "kdop")
SCHEMA = "jointlimits/limits"
SCHEMA_VERSION = 1
Array = NDArray[np.float64]


@runtime_checkable
class JointLimit(Protocol):
    """What every per-joint limit offers, on local rotations ``[..., 4]``."""

    kind: str

    def project(self, rotations: Array) -> Array: ...

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]: ...

    def violation(self, rotations: Array) -> Array: ...

    def to_dict(self) -> dict: ...


# --------------------------------------------------------------------------- limit space


@numba.njit(cache=True, nogil=True)
def _to_ls_kernel(q, ref, out):  # pragma: no cover - compiled
    for i in range(q.shape[0]):
        w, x, y, z = _qmul(ref[0], -ref[1], -ref[2], -ref[3], q[i, 0], q[i, 1], q[i, 2], q[i, 3])
        if w < 0.0:
            w, x, y, z = -w, -x, -y, -z
        out[i, 0], out[i, 1], out[i, 2] = _log2(w, x, y, z)


@numba.njit(cache=True, nogil=True)
def _from_ls_kernel(v, ref, out):  # pragma: no cover - compiled
    for i in range(v.shape[0]):
        bw, bx, by, bz = _exp2(v[i, 0], v[i, 1], v[i, 2])
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = _qmul(ref[0], ref[1], ref[2], ref[3], bw, bx, by, bz)


def to_limit_space(rotations: Array, reference: Array) -> Array:
    """Scaled angle axis of abs(inv(reference) q) for q ``[..., 4]`` (one reference ``[4]``)."""
    q = np.asarray(rotations, np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    out = np.empty((flat.shape[0], 3))
    _to_ls_kernel(flat, np.asarray(reference, np.float64), out)
    return out.reshape(q.shape[:-1] + (3,))


def from_limit_space(points: Array, reference: Array) -> Array:
    """reference * exp(v / 2) for limit-space points ``[..., 3]``."""
    v = np.asarray(points, np.float64)
    flat = np.ascontiguousarray(v.reshape(-1, 3))
    out = np.empty((flat.shape[0], 4))
    _from_ls_kernel(flat, np.asarray(reference, np.float64), out)
    return out.reshape(v.shape[:-1] + (4,))


# --------------------------------------------------------------------------- shapes in limit space


@dataclass
class Shape:
    """A convex region of limit space with its frame (``rotation`` columns are its axes)."""

    kind: str
    position: Array = field(default_factory=lambda: np.zeros(3))
    rotation: Array = field(default_factory=lambda: np.eye(3))
    lo: Array | None = None
    hi: Array | None = None
    scale: Array | None = None
    axes: Array | None = None
    mins: Array | None = None
    maxs: Array | None = None
    exact: bool = True  # k-DOP: true closest point (False: the reference's sequential slab clamps)

    def __post_init__(self) -> None:
        if self.kind not in SHAPES:
            raise LimitsError(f"unknown limit shape {self.kind!r}; expected one of {', '.join(SHAPES)}")
        self.position = np.asarray(self.position, np.float64).reshape(3)
        self.rotation = np.asarray(self.rotation, np.float64).reshape(3, 3)
        for name in ("lo", "hi", "scale", "mins", "maxs"):
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, np.asarray(v, np.float64).reshape(-1))
        if self.axes is not None:
            self.axes = np.asarray(self.axes, np.float64).reshape(-1, 3)
        need = {"box": ("lo", "hi"), "oriented-box": ("lo", "hi"), "ellipsoid": ("scale",),
                "kdop": ("axes", "mins", "maxs")}[self.kind]
        for name in need:
            v = getattr(self, name)
            if v is None or not np.all(np.isfinite(v)):
                raise LimitsError(f"{self.kind} limit needs finite {name!r}")
        if not (np.all(np.isfinite(self.position)) and np.all(np.isfinite(self.rotation))):
            raise LimitsError(f"{self.kind} limit frame is not finite")

    def project(self, points: Array) -> Array:
        """Closest point of the shape (points inside are returned unchanged)."""
        if self.kind == "box":
            return L.project_box(points, self.lo, self.hi)
        if self.kind == "oriented-box":
            return L.project_box(points, self.lo, self.hi, self.position, self.rotation)
        if self.kind == "ellipsoid":
            return L.project_ellipsoid(points, self.scale, self.position, self.rotation)
        return L.project_kdop(points, self.mins, self.maxs, self.position, self.rotation, self.axes,
                              exact=self.exact)

    def contains(self, points: Array, tolerance: float = 1e-9) -> NDArray[np.bool_]:
        if self.kind == "box":
            return L.contains_box(points, self.lo, self.hi, tol=tolerance)
        if self.kind == "oriented-box":
            return L.contains_box(points, self.lo, self.hi, self.position, self.rotation, tol=tolerance)
        if self.kind == "ellipsoid":
            return L.contains_ellipsoid(points, self.scale, self.position, self.rotation, tol=tolerance)
        return L.contains_kdop(points, self.mins, self.maxs, self.position, self.rotation, self.axes, tol=tolerance)

    def radius(self) -> float:
        """An upper bound of |v| over the shape (used to know whether it reaches past pi)."""
        if self.kind in ("box", "oriented-box"):
            corner = np.maximum(np.abs(self.lo), np.abs(self.hi))
            c = self.position if self.kind == "oriented-box" else np.zeros(3)
            return float(np.linalg.norm(c) + np.linalg.norm(corner))
        if self.kind == "ellipsoid":
            return float(np.linalg.norm(self.position) + np.max(self.scale))
        ext = np.maximum(np.abs(self.mins), np.abs(self.maxs))
        return float(np.linalg.norm(self.position) + math.sqrt(3.0) * np.max(ext))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"kind": self.kind, "position": self.position.tolist(),
                             "rotation": self.rotation.tolist()}
        for name in ("lo", "hi", "scale", "axes", "mins", "maxs"):
            v = getattr(self, name)
            if v is not None:
                d[name] = v.tolist()
        if self.kind == "kdop":
            d["exact"] = bool(self.exact)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Shape":
        try:
            return cls(**{k: d[k] for k in ("kind", "position", "rotation", "lo", "hi", "scale", "axes", "mins",
                                             "maxs", "exact") if k in d})
        except (TypeError, ValueError) as e:
            if isinstance(e, LimitsError):
                raise
            raise LimitsError(f"corrupt shape entry: {e}") from None


def fit_shape(points: Array, kind: str, padding: float = 0.05, subsample: float | None = 0.05) -> Shape:
    """Fit a shape of ``kind`` to limit-space points ``[N, 3]``.

    As in the seed, the frame (mean and principal axes) is fitted to the subsampled cloud so dense
    regions do not dominate it; the extents are then fitted to every point, so every training
    rotation is inside its limit."""
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    if pts.shape[0] == 0:
        raise LimitsError("cannot fit a limit to an empty point cloud")
    if not np.all(np.isfinite(pts)):
        raise LimitsError("cannot fit a limit: the point cloud contains NaN or infinite values")
    if kind not in SHAPES:
        raise LimitsError(f"unknown limit shape {kind!r}; expected one of {', '.join(SHAPES)}")
    if kind == "box":
        lo, hi = L.fit_box(pts, padding)
        return Shape("box", lo=lo, hi=hi)
    sub = pts[L.subsample(pts, subsample)] if subsample else pts
    pos, rot = L.fit_orientation(sub)
    if kind == "oriented-box":
        lo, hi = L.fit_oriented_box(pts, pos, rot, padding)
        return Shape("oriented-box", pos, rot, lo=lo, hi=hi)
    if kind == "ellipsoid":
        return Shape("ellipsoid", pos, rot, scale=L.fit_ellipsoid(pts, pos, rot, padding))
    axes = L.kdop_axes()
    mins, maxs = L.fit_kdop(pts, pos, rot, axes, padding)
    return Shape("kdop", pos, rot, axes=axes, mins=mins, maxs=maxs)


# --------------------------------------------------------------------------- one joint


def _slabs(shape: Shape) -> tuple[Array, Array, Array, Array, Array]:
    """A box, oriented box or k-DOP as slabs: (position, rotation, local axes, mins, maxs)."""
    if shape.kind == "box":
        return np.zeros(3), np.eye(3), np.eye(3), shape.lo, shape.hi
    if shape.kind == "oriented-box":
        return shape.position, shape.rotation, np.eye(3), shape.lo, shape.hi
    if shape.kind == "kdop":
        return shape.position, shape.rotation, shape.axes, shape.mins, shape.maxs
    raise LimitsError(f"a {shape.kind} limit has no slabs")


def swing_section(shape: Shape, axis: Array) -> Shape:
    """The part of ``shape`` in the plane through the origin perpendicular to ``axis``: where a
    swing's limit-space point lives (its rotation axis is perpendicular to the twist axis)."""
    a = np.asarray(axis, np.float64)
    if shape.kind != "ellipsoid":
        pos, rot, ax, mins, maxs = _slabs(shape)
        n = rot.T @ a  # the plane a.x = 0 in the shape's local frame: n.l = -a.pos
        b = -float(a @ pos)
        return Shape("kdop", pos, rot, axes=np.vstack([ax, n]), mins=np.append(mins, b), maxs=np.append(maxs, b))
    # ellipse (x - c)^T M (x - c) <= 1 restricted to x = P y
    e1 = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
    e1 /= np.linalg.norm(e1)
    P = np.stack([e1, np.cross(a, e1)], axis=1)
    s = np.maximum(shape.scale, 1e-12)
    M = shape.rotation @ np.diag(1.0 / s**2) @ shape.rotation.T
    A = P.T @ M @ P
    y0 = np.linalg.solve(A, P.T @ M @ shape.position)
    rhs = 1.0 - shape.position @ M @ shape.position + y0 @ A @ y0
    w, V = np.linalg.eigh(A)
    radii = np.sqrt(np.maximum(rhs, 0.0) / w)
    R2 = np.column_stack([P @ V[:, 0], P @ V[:, 1], a])
    if np.linalg.det(R2) < 0:
        R2[:, 1] = -R2[:, 1]
    return Shape("ellipsoid", P @ y0, R2, scale=np.array([radii[0], radii[1], 0.0]))


def twist_interval(shape: Shape, axis: Array) -> tuple[float, float]:
    """The range of t for which t * axis lies in ``shape`` (where a twist's point lives)."""
    a = np.asarray(axis, np.float64)
    if shape.kind == "ellipsoid":
        s = np.maximum(shape.scale, 1e-12)
        M = shape.rotation @ np.diag(1.0 / s**2) @ shape.rotation.T
        c = shape.position
        qa, qb, qc = a @ M @ a, a @ M @ c, c @ M @ c - 1.0
        disc = qb * qb - qa * qc
        mid = qb / qa
        if disc <= 0:
            return float(mid), float(mid)
        h = math.sqrt(disc) / qa
        return float(mid - h), float(mid + h)
    pos, rot, ax, mins, maxs = _slabs(shape)
    m = ax @ (rot.T @ a)  # slab k: mins_k <= t m_k - ax_k.(R^T pos) <= maxs_k
    off = ax @ (rot.T @ (-pos))
    lo, hi = -np.inf, np.inf
    for mk, ok, mn, mx in zip(m, off, mins, maxs):
        if abs(mk) < 1e-12:
            continue
        t1, t2 = (mn - ok) / mk, (mx - ok) / mk
        lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
    if lo > hi:
        lo = hi = 0.5 * (lo + hi)
    return float(lo), float(hi)


@dataclass
class FittedLimit:
    """A data-fitted limit of one joint: reference rotation, twist axis, shape(s)."""

    reference: Array
    twist_axis: Array
    shape: Shape | None = None
    swing: Shape | None = None
    twist: Shape | None = None
    # True reproduces the reference: short cover only, swing and twist each projected onto its
    # whole 3D shape (which is not idempotent once the parts are recomposed)
    reference_quirks: bool = False
    kind: str = "fitted"

    def __post_init__(self) -> None:
        self.reference = quat.normalize(np.asarray(self.reference, np.float64).reshape(4))
        ax = np.asarray(self.twist_axis, np.float64).reshape(3)
        n = np.linalg.norm(ax)
        if not (np.all(np.isfinite(self.reference)) and np.isfinite(n) and n > 0):
            raise LimitsError("a fitted limit needs a finite reference rotation and a non-zero twist axis")
        self.twist_axis = ax / n
        if self.shape is None and (self.swing is None or self.twist is None):
            raise LimitsError("a fitted limit needs either a shape or both swing and twist shapes")
        self._packed = pack_limit(self)  # for the compiled step (jointlimits.fused)

    @property
    def swing_twist(self) -> bool:
        return self.shape is None

    def limit_space(self, rotations: Array) -> Array | tuple[Array, Array]:
        """Limit-space points of local rotations (a (swing, twist) pair with swing-twist)."""
        if not self.swing_twist:
            return to_limit_space(rotations, self.reference)
        r = quat.inv_mul(self.reference, rotations)
        s, t = quat.swing_twist(r, self.twist_axis)
        return quat.to_scaled_angle_axis(quat.abs(s)), quat.to_scaled_angle_axis(quat.abs(t))

    def _project(self, rotations: Array, soften: tuple[float, float] | None, want_hard: bool = False
                 ) -> tuple[Array, Array | None]:
        """(softened, hard) projections, each on the caller's cover."""
        mode, covers, twist, a, b = self._packed
        return project_fitted(rotations, self.reference, self.twist_axis, mode, covers, soften, a, b, twist,
                              want_hard)

    def project(self, rotations: Array, soften: tuple[float, float] | None = None) -> Array:
        """Limited local rotations ``[..., 4]`` (same cover as the input's nearest)."""
        return self._project(rotations, soften)[0]

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]:
        """Whether each rotation is inside the limit (either cover), within ``tolerance`` radians."""
        return self.violation(rotations) <= tolerance

    def violation(self, rotations: Array) -> Array:
        """Angle in radians between each rotation and its projection (0 inside)."""
        hard = self._project(rotations, None)[0]
        return quat.angle(rotations, hard)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"kind": self.kind, "reference": self.reference.tolist(),
                             "twist_axis": self.twist_axis.tolist(), "reference_quirks": self.reference_quirks}
        if self.swing_twist:
            d["swing"] = self.swing.to_dict()
            d["twist"] = self.twist.to_dict()
        else:
            d["shape"] = self.shape.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FittedLimit":
        try:
            quirks = bool(d.get("reference_quirks", False))
            if "shape" in d:
                return cls(d["reference"], d["twist_axis"], shape=Shape.from_dict(d["shape"]), reference_quirks=quirks)
            return cls(d["reference"], d["twist_axis"], swing=Shape.from_dict(d["swing"]),
                       twist=Shape.from_dict(d["twist"]), reference_quirks=quirks)
        except KeyError as e:
            raise LimitsError(f"corrupt joint limit entry: missing {e}") from None


def _limit_from_dict(d: Mapping[str, Any]) -> JointLimit:
    kind = d.get("kind")
    if kind == "fitted":
        return FittedLimit.from_dict(d)
    if kind == "reach-window":
        from .reach import ReachWindowLimit

        return ReachWindowLimit.from_dict(d)
    raise LimitsError(f"unknown joint limit kind {kind!r}")


# --------------------------------------------------------------------------- the model


def _as_motions(motions: Motion | Iterable[Motion]) -> list[Motion]:
    ms = [motions] if isinstance(motions, Motion) else list(motions)
    if not ms:
        raise LimitsError("no motions to fit limits to")
    fp = ms[0].skeleton.fingerprint()
    for k, m in enumerate(ms[1:], 1):
        if m.skeleton.fingerprint() != fp:
            raise LimitsError(f"clip {k} has a different skeleton (joint names/parents) than clip 0")
    for k, m in enumerate(ms):
        if m.num_frames == 0:
            raise LimitsError(f"clip {k} has no frames")
        bad = ~np.isfinite(m.rotations).all(axis=-1)
        if bad.any():
            f, j = np.argwhere(bad)[0]
            raise LimitsError(f"clip {k}: rotation of joint {m.skeleton.names[j]!r} at frame {f} is NaN/inf")
    return ms


def _reference_pose(ms: list[Motion], reference: Any) -> Array:
    if isinstance(reference, Motion):
        if reference.skeleton.fingerprint() != ms[0].skeleton.fingerprint():
            raise LimitsError("the reference motion's skeleton does not match the clips")
        return quat.normalize(reference.rotations[0])
    if isinstance(reference, str):
        if reference == "first":
            return quat.normalize(ms[0].rotations[0])
        if reference == "mean":
            allq = np.concatenate([m.rotations for m in ms], axis=0)
            return quat.average(allq, axis=0)
        raise LimitsError(f"reference must be 'mean', 'first', a frame index or a Motion, not {reference!r}")
    if isinstance(reference, (int, np.integer)):
        n = ms[0].num_frames
        if not -n <= int(reference) < n:
            raise LimitsError(f"reference frame {reference} is outside the first clip (0..{n - 1})")
        return quat.normalize(ms[0].rotations[int(reference)])
    ref = np.asarray(reference, np.float64)
    if ref.shape != (ms[0].num_joints, 4):
        raise LimitsError(f"a reference pose array must be [J, 4] = [{ms[0].num_joints}, 4], got {ref.shape}")
    return quat.normalize(ref)


def relative_clouds(ms: Sequence[Motion], joint: int, reference: Array, twist_axis: Array | None = None
                    ) -> Array | tuple[Array, Array]:
    """Limit-space points of one joint over clips: relative to ``reference``, short cover at each
    clip's first frame, unrolled within (never across) clips. With ``twist_axis``: (swing, twist)."""
    qs = np.concatenate([m.rotations[:, joint] for m in ms], axis=0)
    bounds = np.cumsum([0] + [m.num_frames for m in ms])
    ranges = list(zip(bounds[:-1], bounds[1:]))
    rel = quat.inv_mul(reference, qs)
    if twist_axis is None:
        return quat.to_scaled_angle_axis(quat.unroll(rel, ranges=ranges))
    s, t = quat.swing_twist(rel, twist_axis)
    return (quat.to_scaled_angle_axis(quat.unroll(s, ranges=ranges)),
            quat.to_scaled_angle_axis(quat.unroll(t, ranges=ranges)))


def side_switches(limited: Array, original: Array, threshold: float = 0.25) -> NDArray[np.int64]:
    """Frames where a projection jumped (switched sides of its limit): the limited rotation moved
    more than ``threshold`` radians further between two frames than the input did."""
    jump_out = quat.angle(limited[1:], limited[:-1])
    jump_in = quat.angle(original[1:], original[:-1])
    hit = np.any(jump_out - jump_in > threshold, axis=tuple(range(1, jump_out.ndim)))
    return np.nonzero(hit)[0] + 1


def smooth_switches(limited: Array, original: Array, frame_time: float, halflife: float = 0.25,
                    threshold: float = 0.25) -> Array:
    """Remove the pops of projections that switch sides with a tracking spring; frames the spring
    does not touch are returned exactly as projected."""
    from .tracking import track_rotations

    cuts = side_switches(limited, original, threshold)
    if cuts.size == 0:
        return limited
    return track_rotations(limited, cuts, frame_time, halflife=halflife)


class JointLimits:
    """Per-joint limits of one skeleton, fitted from motion capture.

    Use :meth:`fit` to build one, :meth:`project` / :meth:`apply` to enforce it, :meth:`contains`
    and :meth:`violation` to measure, :meth:`save` / :meth:`load` to keep it.
    """

    def __init__(self, skeleton: Skeleton, joints: Mapping[int, JointLimit] | None = None,
                 enabled: Sequence[bool] | None = None, settings: Mapping[str, Any] | None = None):
        self.skeleton = skeleton
        self.joints: dict[int, JointLimit] = dict(joints or {})
        self.enabled = np.ones(skeleton.num_joints, bool) if enabled is None else np.asarray(enabled, bool).copy()
        self.settings: dict[str, Any] = dict(settings or {})

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(cls, motions: Motion | Iterable[Motion], shape: str = "ellipsoid", swing_twist: bool = False,
            padding: float = 0.05, reference: Any = "mean", subsample: float | None = 0.05,
            shapes: Mapping[str, str] | None = None, joints: Iterable[str] | None = None,
            progress: Callable[[int, int, str], None] | None = None) -> "JointLimits":
        """Fit limits for every joint with rotation channels (or the named ``joints``).

        ``shape`` is one of ``box``, ``oriented-box``, ``ellipsoid``, ``kdop``; ``shapes`` overrides
        it per joint name (also ``"reach-window"`` for a swing window plus twist range).
        ``reference`` is ``"mean"`` (eigen-mean of all frames), ``"first"``, a frame index of the
        first clip, a Motion (its first frame) or a ``[J, 4]`` array.
        """
        if shape not in SHAPES:
            raise LimitsError(f"unknown limit shape {shape!r}; expected one of {', '.join(SHAPES)}")
        if not (np.isfinite(padding) and padding >= 0):
            raise LimitsError(f"padding must be a finite number >= 0, got {padding}")
        ms = _as_motions(motions)
        sk = ms[0].skeleton
        ref = _reference_pose(ms, reference)
        axes = sk.bone_directions()
        shapes = dict(shapes or {})
        for name, kind in shapes.items():
            sk.index(name)
            if kind not in SHAPES + ("reach-window",):
                raise LimitsError(f"unknown limit shape {kind!r} for joint {name!r}")
        if joints is None:
            todo = [j for j in range(sk.num_joints) if sk.rotation_order(j)]
        else:
            todo = [sk.index(n) for n in joints]
        out: dict[int, JointLimit] = {}
        for k, j in enumerate(todo):
            name = sk.names[j]
            if progress is not None:
                progress(k, len(todo), name)
            kind = shapes.get(name, shape)
            if kind == "reach-window":
                from .reach import ReachWindowLimit

                qs = np.concatenate([m.rotations[:, j] for m in ms], axis=0)
                out[j] = ReachWindowLimit.fit(qs, axes[j], reference=ref[j], padding=padding)
                continue
            try:
                if swing_twist:
                    ps, pt = relative_clouds(ms, j, ref[j], axes[j])
                    out[j] = FittedLimit(ref[j], axes[j], swing=fit_shape(ps, kind, padding, subsample),
                                         twist=fit_shape(pt, kind, padding, subsample))
                else:
                    pts = relative_clouds(ms, j, ref[j])
                    out[j] = FittedLimit(ref[j], axes[j], shape=fit_shape(pts, kind, padding, subsample))
            except LimitsError as e:
                raise LimitsError(f"joint {name!r}: {e}") from None
        if progress is not None:
            progress(len(todo), len(todo), "")
        settings = {"shape": shape, "swing_twist": bool(swing_twist), "padding": float(padding),
                    "reference": reference if isinstance(reference, (str, int)) else "custom",
                    "subsample": subsample, "clips": len(ms), "frames": int(sum(m.num_frames for m in ms))}
        return cls(sk, out, settings=settings)

    # ------------------------------------------------------------------ per joint
    def joint(self, joint: str | int) -> JointLimit:
        """The limit of one joint (raises LimitsError if it has none)."""
        j = self.skeleton.index(joint)
        if j not in self.joints:
            raise LimitsError(f"joint {self.skeleton.names[j]!r} has no limit")
        return self.joints[j]

    def set_joint(self, joint: str | int, limit: JointLimit | None) -> None:
        """Replace (or with None remove) one joint's limit; any object with project/contains/violation."""
        j = self.skeleton.index(joint)
        if limit is None:
            self.joints.pop(j, None)
        else:
            self.joints[j] = limit

    def enable(self, *joints: str | int) -> None:
        for n in joints:
            self.enabled[self.skeleton.index(n)] = True

    def disable(self, *joints: str | int) -> None:
        for n in joints:
            self.enabled[self.skeleton.index(n)] = False

    def active(self) -> list[int]:
        """Indices of joints that have a limit and are enabled."""
        return [j for j in sorted(self.joints) if self.enabled[j]]

    # ------------------------------------------------------------------ whole poses
    def _check(self, rotations: Array) -> Array:
        q = np.asarray(rotations, np.float64)
        if q.ndim < 2 or q.shape[-2:] != (self.skeleton.num_joints, 4):
            raise LimitsError(f"rotations must be [..., {self.skeleton.num_joints}, 4], got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise LimitsError("rotations contain NaN or infinite values")
        return q

    def project(self, rotations: Array, soften: tuple[float, float] | None = None) -> Array:
        """Limited local rotations ``[..., J, 4]``; ``soften=(falloff, radius)`` leaves some leeway."""
        q = self._check(rotations)
        out = q.copy()
        for j in self.active():
            lim = self.joints[j]
            out[..., j, :] = lim.project(q[..., j, :], soften) if isinstance(lim, FittedLimit) \
                else lim.project(q[..., j, :])
        return out

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]:
        """``bool[..., J]``: inside the limit (joints without an active limit count as inside)."""
        q = self._check(rotations)
        out = np.ones(q.shape[:-1], bool)
        for j in self.active():
            out[..., j] = self.joints[j].contains(q[..., j, :], tolerance)
        return out

    def violation(self, rotations: Array) -> Array:
        """Radians ``[..., J]`` between each rotation and its projection (0 when inside)."""
        q = self._check(rotations)
        out = np.zeros(q.shape[:-1])
        for j in self.active():
            out[..., j] = self.joints[j].violation(q[..., j, :])
        return out

    def apply(self, motion: Motion, soften: tuple[float, float] | None = None, smooth: bool = False,
              halflife: float = 0.25) -> Motion:
        """A copy of ``motion`` with every frame limited. With ``smooth`` a tracking spring removes
        the jumps a projection makes when it switches sides, leaving other frames as projected."""
        self.check_skeleton(motion.skeleton)
        out = motion.copy()
        out.rotations = self.project(motion.rotations, soften)
        if smooth:
            out.rotations = smooth_switches(out.rotations, motion.rotations, motion.frame_time, halflife=halflife)
        return out

    def report(self, motions: Motion | Iterable[Motion], tolerance: float = 1e-6) -> list[dict[str, Any]]:
        """Per limited joint: frames outside, fraction outside, mean and max violation (degrees)
        over the frames of all ``motions``."""
        ms = [motions] if isinstance(motions, Motion) else list(motions)
        for m in ms:
            self.check_skeleton(m.skeleton)
        v = np.concatenate([self.violation(m.rotations) for m in ms], axis=0)
        rows = []
        for j in self.active():
            vj = v[:, j]
            out = vj > tolerance
            rows.append({
                "joint": self.skeleton.names[j], "frames": int(vj.size), "frames_outside": int(out.sum()),
                "fraction_outside": float(out.mean()) if vj.size else 0.0,
                "mean_violation_deg": float(np.degrees(vj[out].mean())) if out.any() else 0.0,
                "max_violation_deg": float(np.degrees(vj.max())) if vj.size else 0.0,
            })
        return rows

    # ------------------------------------------------------------------ files
    def check_skeleton(self, skeleton: Skeleton) -> None:
        """Raise LimitsError unless ``skeleton`` has the joints (names and parents) these limits were fitted on."""
        if skeleton.fingerprint() != self.skeleton.fingerprint():
            mine, theirs = set(self.skeleton.names), set(skeleton.names)
            detail = ""
            if mine != theirs:
                detail = f" (missing {sorted(mine - theirs)[:5]}, unexpected {sorted(theirs - mine)[:5]})"
            raise LimitsError(f"these limits were fitted on another skeleton{detail}")

    def to_dict(self) -> dict:
        sk = self.skeleton
        return {
            "schema": SCHEMA, "version": SCHEMA_VERSION,
            "skeleton": {"names": sk.names, "parents": sk.parents.tolist(), "fingerprint": sk.fingerprint(),
                         "offsets": sk.offsets.tolist()},
            "settings": self.settings,
            "joints": [{"name": sk.names[j], "enabled": bool(self.enabled[j]), "limit": self.joints[j].to_dict()}
                       for j in sorted(self.joints)],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "limits") -> "JointLimits":
        if not isinstance(d, Mapping) or d.get("schema") != SCHEMA:
            raise LimitsError(f"{source}: not a jointlimits limits file (schema {SCHEMA!r} expected)")
        v = d.get("version")
        if v != SCHEMA_VERSION:
            raise LimitsError(f"{source}: limits file version {v!r} is not supported (this is version {SCHEMA_VERSION})")
        try:
            skd = d["skeleton"]
            names, parents = list(skd["names"]), np.asarray(skd["parents"], np.int64)
            offsets = np.asarray(skd.get("offsets", np.zeros((len(names), 3))), np.float64)
            sk = Skeleton(names, parents, offsets)
            if skd.get("fingerprint") not in (None, sk.fingerprint()):
                raise LimitsError(f"{source}: skeleton fingerprint does not match its joint list (edited by hand?)")
            joints: dict[int, JointLimit] = {}
            enabled = np.ones(len(names), bool)
            for e in d["joints"]:
                j = sk.index(e["name"])
                joints[j] = _limit_from_dict(e["limit"])
                enabled[j] = bool(e.get("enabled", True))
        except LimitsError as e:
            msg = str(e)
            raise LimitsError(msg if msg.startswith(source) else f"{source}: {msg}") from None
        except (KeyError, TypeError, ValueError) as e:
            raise LimitsError(f"{source}: corrupt limits file ({type(e).__name__}: {e})") from None
        return cls(sk, joints, enabled, d.get("settings", {}))

    def save(self, path: str | os.PathLike) -> None:
        """Write the limits as JSON, atomically."""
        p = Path(path)
        text = json.dumps(self.to_dict(), indent=1)
        with atomic_write(p) as fh:
            fh.write(text)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "JointLimits":
        """Read a limits file; raises LimitsError if it is missing, corrupt or of another version."""
        p = Path(path)
        try:
            d = json.loads(p.read_text())
        except OSError as e:
            raise LimitsError(f"{p}: cannot read limits file ({e.strerror or e})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise LimitsError(f"{p}: corrupt limits file (not valid JSON: {e})") from None
        return cls.from_dict(d, str(p))

    def __repr__(self) -> str:
        return (f"JointLimits({len(self.joints)} joints of {self.skeleton.num_joints}, "
                f"shape={self.settings.get('shape')!r}, swing_twist={self.settings.get('swing_twist')})")

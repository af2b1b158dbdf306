"""One joint's data-fitted limit: reference rotation, twist axis, covers, swing-twist.

A rotation ``q`` is taken relative to the reference, ``r = inv(ref) q``, put on the ``w >= 0``
cover and mapped to limit space ``v = scaled_angle_axis(r)`` (with swing-twist: ``r = swing
twist`` about the twist axis, one limit for each part: the swing's section in the plane
perpendicular to the axis, the twist's interval on it). The shape in limit space is any
registered :class:`~jointlimits.limits.shape.Shape`; this module knows none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from .._native import _core
from ..errors import LimitsError
from ..motion import quat
from ._checks import check_soften
from ._kernels.fused import compile_limit, pack_limit, step
from .registry import JOINT_KINDS, joint_limit_class
from .shape import Shape, shape_type

if TYPE_CHECKING:
    from .cloud import CloudStats

__all__ = [
    "JointLimit",
    "ParentedLimit",
    "SoftenableLimit",
    "FittedLimit",
    "fit_shape",
    "to_limit_space",
    "from_limit_space",
    "swing_section",
    "twist_interval",
    "limit_from_dict",
]

Array = NDArray[np.float64]


@runtime_checkable
class JointLimit(Protocol):
    """What every per-joint limit offers, on local rotations ``[..., 4]``."""

    kind: str

    def project(self, rotations: Array) -> Array: ...

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]: ...

    def violation(self, rotations: Array) -> Array: ...

    def to_dict(self) -> dict: ...

    def compiled(self) -> Any:
        """The ``_core`` object the compiled back ends (pose projection, IK) run this limit with,
        or None when it has no compiled form."""
        ...


@runtime_checkable
class ParentedLimit(Protocol):
    """A per-joint limit conditioned on its parent joint's rotation (a coupled limit): each query
    takes the parent's local rotations too."""

    kind: str
    parent: str  # the parent joint's name

    def project(
        self, rotations: Array, soften: tuple[float, float] | None = None, parent: Array | None = None
    ) -> Array: ...

    def contains(self, rotations: Array, tolerance: float = 1e-6, parent: Array | None = None) -> NDArray[np.bool_]: ...

    def violation(self, rotations: Array, parent: Array | None = None) -> Array: ...


class SoftenableLimit(Protocol):
    """A per-joint limit whose projection takes ``soften=(falloff, radius)`` (it says so with a
    true ``softenable`` attribute, or is a :class:`FittedLimit`)."""

    def project(self, rotations: Array, soften: tuple[float, float] | None = None) -> Array: ...


# --------------------------------------------------------------------------- limit space


def to_limit_space(rotations: Array, reference: Array) -> Array:
    """Scaled angle axis of abs(inv(reference) q) for q ``[..., 4]`` (one reference ``[4]``)."""
    q = np.asarray(rotations, np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    out = np.empty((flat.shape[0], 3))
    _core.to_limit_space(flat, np.ascontiguousarray(reference, np.float64), out)
    return out.reshape(q.shape[:-1] + (3,))


def from_limit_space(points: Array, reference: Array) -> Array:
    """reference * exp(v / 2) for limit-space points ``[..., 3]``."""
    v = np.asarray(points, np.float64)
    flat = np.ascontiguousarray(v.reshape(-1, 3))
    out = np.empty((flat.shape[0], 4))
    _core.from_limit_space(flat, np.ascontiguousarray(reference, np.float64), out)
    return out.reshape(v.shape[:-1] + (4,))


def fit_shape(points: Array | CloudStats, kind: str, padding: float = 0.05, subsample: float | None = 0.05) -> Shape:
    """Fit a shape of ``kind`` (a name in the registry) to limit-space points ``[N, 3]``.

    As in the seed, a shape's frame is fitted to the subsampled cloud so dense regions do not
    dominate it; its extents are fitted to every point, so every training rotation is inside.
    ``points`` may be a :class:`~jointlimits.limits.cloud.CloudStats` of the cloud."""
    from .cloud import CloudStats

    if isinstance(points, CloudStats) and not points.keep_all:
        if points.count == 0:
            raise LimitsError("cannot fit a limit to an empty point cloud")
        return shape_type(kind).fit(points, padding, subsample)
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    if pts.shape[0] == 0:
        raise LimitsError("cannot fit a limit to an empty point cloud")
    if not np.all(np.isfinite(pts)):
        raise LimitsError("cannot fit a limit: the point cloud contains NaN or infinite values")
    return shape_type(kind).fit(pts, padding, subsample)


def swing_section(shape: Shape, axis: Array) -> Shape:
    """The part of ``shape`` in the plane through the origin perpendicular to ``axis``: where a
    swing's limit-space point lives (its rotation axis is perpendicular to the twist axis)."""
    return shape.swing_section(axis)


def twist_interval(shape: Shape, axis: Array) -> tuple[float, float]:
    """The range of t for which t * axis lies in ``shape`` (where a twist's point lives)."""
    return shape.twist_interval(axis)


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
        r = np.asarray(self.reference, np.float64).reshape(4)
        if not (np.all(np.isfinite(r)) and np.linalg.norm(r) > 1e-12):
            raise LimitsError(f"a fitted limit needs a finite, non-zero reference rotation, got {r.tolist()}")
        # unit values are kept as given (normalising twice moves the last bit), so a saved and
        # loaded limit projects bit-equal to the one fitted
        self.reference = r.copy() if abs(float(r @ r) - 1.0) < 1e-12 else quat.normalize(r)
        ax = np.asarray(self.twist_axis, np.float64).reshape(3)
        n = np.linalg.norm(ax)
        if not (np.all(np.isfinite(self.reference)) and np.isfinite(n) and n > 0):
            raise LimitsError("a fitted limit needs a finite reference rotation and a non-zero twist axis")
        self.twist_axis = ax.copy() if abs(n - 1.0) < 1e-12 else ax / n
        if self.shape is None and (self.swing is None or self.twist is None):
            raise LimitsError("a fitted limit needs either a shape or both swing and twist shapes")
        # shapes with a compiled form run the C++ step (_kernels.fused); others (implicit) the
        # batched path below over their own project()
        self._build()
        if self._packed is None:
            if self.reference_quirks:
                raise LimitsError("reference_quirks needs shapes with a compiled form (box, ellipsoid, kdop)")
            if self.swing_twist:
                swing, twist = self._parts()
                self._section: Shape = swing.swing_section(self.twist_axis)
                self._interval: tuple[float, float] = twist.twist_interval(self.twist_axis)

    def _parts(self) -> tuple[Shape, Shape]:
        """(swing, twist) of a swing-twist limit (both set whenever ``shape`` is None)."""
        if self.swing is None or self.twist is None:
            raise LimitsError("a fitted limit needs either a shape or both swing and twist shapes")
        return self.swing, self.twist

    def _shape(self) -> Shape:
        """The one shape of a limit without swing-twist."""
        if self.shape is None:
            raise LimitsError("a swing-twist limit has no single shape")
        return self.shape

    def _build(self) -> None:
        """The compiled shapes (``_packed``) and limit (``_compiled``), or None for both when a
        shape has no compiled form."""
        parts = (self.shape,) if self.shape is not None else self._parts()
        self._packed: tuple[int, bool, tuple[float, float], Any, Any] | None = None
        self._compiled: _core.CompiledLimit | None = None
        if not all(p.has_compiled_form() for p in parts):
            return
        packed = self._packed = pack_limit(self)
        mode, covers, twist, a, b = packed
        self._compiled = compile_limit(self.reference, self.twist_axis, mode, covers, a, b, twist)

    @property
    def swing_twist(self) -> bool:
        return self.shape is None

    def compiled(self) -> Any:
        """The ``_core.CompiledLimit`` the compiled step runs (None: a shape without a compiled form)."""
        return self._compiled

    def __getstate__(self) -> dict:  # the compiled limit is rebuilt, not pickled
        return {k: v for k, v in self.__dict__.items() if k not in ("_compiled", "_packed")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._build()

    def limit_space(self, rotations: Array) -> Array | tuple[Array, Array]:
        """Limit-space points of local rotations (a (swing, twist) pair with swing-twist)."""
        if not self.swing_twist:
            return to_limit_space(rotations, self.reference)
        r = quat.inv_mul(self.reference, rotations)
        s, t = quat.swing_twist(r, self.twist_axis)
        return quat.to_scaled_angle_axis(quat.abs(s)), quat.to_scaled_angle_axis(quat.abs(t))

    def _project(
        self, rotations: Array, soften: tuple[float, float] | None, want_hard: bool = False
    ) -> tuple[Array, Array | None]:
        """(softened, hard) projections, each on the caller's cover."""
        if soften is not None:
            soften = check_soften(soften)
        if self._compiled is None:
            return _project_batched(self, rotations, soften, want_hard)
        return step(self._compiled, rotations, soften, want_hard)

    def project(self, rotations: Array, soften: tuple[float, float] | None = None) -> Array:
        """Limited local rotations ``[..., 4]`` (same cover as the input's nearest)."""
        c = self._compiled
        if c is not None and type(rotations) is np.ndarray and rotations.ndim:
            # the per-call path of interactive tools: one C++ call, no temporaries (other dtypes and
            # layouts are converted by the binding)
            if soften is None:
                return c.project(rotations, False, 0.0, 0.0)
            falloff, radius = check_soften(soften)
            return c.project(rotations, True, falloff, radius)
        return self._project(rotations, soften)[0]

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]:
        """Whether each rotation is inside the limit (either cover), within ``tolerance`` radians."""
        if self._compiled is None:
            return _contains_batched(self, rotations, tolerance)
        return self.violation(rotations) <= tolerance

    def violation(self, rotations: Array) -> Array:
        """Angle in radians between each rotation and its projection (0 inside)."""
        hard = self._project(rotations, None)[0]
        return quat.angle(rotations, hard)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "kind": self.kind,
            "reference": self.reference.tolist(),
            "twist_axis": self.twist_axis.tolist(),
            "reference_quirks": self.reference_quirks,
        }
        if self.swing_twist:
            swing, twist = self._parts()
            d["swing"] = swing.to_dict()
            d["twist"] = twist.to_dict()
        else:
            d["shape"] = self._shape().to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FittedLimit:
        try:
            quirks = bool(d.get("reference_quirks", False))
            if "shape" in d:
                return cls(d["reference"], d["twist_axis"], shape=Shape.from_dict(d["shape"]), reference_quirks=quirks)
            return cls(
                d["reference"],
                d["twist_axis"],
                swing=Shape.from_dict(d["swing"]),
                twist=Shape.from_dict(d["twist"]),
                reference_quirks=quirks,
            )
        except KeyError as e:
            raise LimitsError(f"corrupt joint limit entry: missing {e}") from None


# --------------------------------------------------------------------------- shapes without a compiled form


def _log(r: Array) -> Array:
    """Scaled angle axis of unit quaternions ``[N, 4]`` (as the compiled step's ``_log2``)."""
    n = np.sqrt(np.einsum("ij,ij->i", r[:, 1:], r[:, 1:]))
    big = n > 1e-8
    k = np.where(big, 2.0 * np.arctan2(n, r[:, 0]) / np.where(big, n, 1.0), 2.0)
    return r[:, 1:] * k[:, None]


def _exp(v: Array) -> Array:
    """exp(v / 2) for limit-space points ``[N, 3]`` (as the compiled step's ``_exp2``)."""
    a = 0.5 * np.sqrt(np.einsum("ij,ij->i", v, v))
    big = a > 1e-8
    k = np.where(big, np.sin(a) / np.where(big, a, 1.0), 1.0 - a * a / 6.0)
    return np.concatenate([np.cos(a)[:, None], 0.5 * v * k[:, None]], axis=1)


def _long_cover(v: Array) -> Array:
    n = np.sqrt(np.einsum("ij,ij->i", v, v))
    k = np.where(n > 1e-12, 1.0 - 2.0 * np.pi / np.where(n > 1e-12, n, 1.0), 0.0)
    return v * k[:, None]


def _nearest_projection(shape: Region, v: Array, covers: bool, radius: float) -> tuple[Array, Array]:
    """(point, projection) on the cover whose projection is shorter (limits reaching past pi)."""
    h = shape.project(v)
    if covers and radius > np.pi:
        v2 = _long_cover(v)
        h2 = shape.project(v2)
        pick = np.einsum("ij,ij->i", h2 - v2, h2 - v2) < np.einsum("ij,ij->i", h - v, h - v)
        v, h = np.where(pick[:, None], v2, v), np.where(pick[:, None], h2, h)
    return v, h


def _soften_points(v: Array, h: Array, falloff: float, radius: float) -> Array:
    d = np.sqrt(np.einsum("ij,ij->i", v - h, v - h))
    far = d > 1e-5
    k = np.where(far, np.tanh(falloff * d) * radius / np.where(far, d, 1.0), 0.0)
    return h + (v - h) * k[:, None]


def _relative(limit: BatchedLimit, flat: Array) -> Array:
    r = quat.inv_mul(limit.reference, flat)
    return np.where(r[:, :1] < 0.0, -r, r)


def _swing_twist(limit: FittedLimit, r: Array) -> tuple[Array, Array]:
    """Swing and twist limit-space points (each on its short cover) of relative rotations."""
    a = limit.twist_axis
    d = r[:, 1:] @ a
    tw = np.concatenate([r[:, :1], d[:, None] * a], axis=1)
    tn = np.sqrt(np.einsum("ij,ij->i", tw, tw))
    ok = tn > 1e-12
    tw = np.where(ok[:, None], tw / np.where(ok, tn, 1.0)[:, None], np.array([1.0, 0, 0, 0]))
    sw = quat.mul_inv(r, tw)
    sw = np.where(sw[:, :1] < 0.0, -sw, sw)
    tw = np.where(tw[:, :1] < 0.0, -tw, tw)
    return _log(sw), _log(tw)


def _twist_clamp(limit: FittedLimit, vt: Array, covers: bool) -> tuple[Array, Array]:
    """(twist angle, clamped twist angle), on the cover nearer the interval."""
    tlo, thi = limit._interval
    t = vt @ limit.twist_axis
    p = np.clip(t, tlo, thi)
    if covers and max(-tlo, thi) > np.pi:
        t2 = np.where(t >= 0, t - 2.0 * np.pi, t + 2.0 * np.pi)
        p2 = np.clip(t2, tlo, thi)
        pick = np.abs(p2 - t2) < np.abs(p - t)
        t, p = np.where(pick, t2, t), np.where(pick, p2, p)
    return t, p


class Region(Protocol):
    """What the batched step calls of a limit-space shape (a Shape, or a coupled limit's blend)."""

    def project(self, points: Array) -> Array: ...

    def contains(self, points: Array, tolerance: float = ...) -> NDArray[np.bool_]: ...

    def radius(self) -> float: ...


class BatchedLimit(Protocol):
    """What the batched step reads of a limit: a :class:`FittedLimit`, or a coupled limit's blend
    for given parent rotations (one region, no swing-twist)."""

    @property
    def reference(self) -> Array: ...

    @property
    def twist_axis(self) -> Array: ...

    @property
    def shape(self) -> Region | None: ...


def _project_batched(
    limit: BatchedLimit, rotations: Array, soften: tuple[float, float] | None, want_hard: bool
) -> tuple[Array, Array | None]:
    """The compiled step's math over whole batches in numpy, with the shape's own project()."""
    q = np.asarray(rotations, np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    r = _relative(limit, flat)
    falloff, radius = (float(soften[0]), float(soften[1])) if soften is not None else (0.0, 0.0)
    shape = limit.shape
    if shape is not None:  # (a FittedLimit without a shape is swing-twist)
        v, h = _nearest_projection(shape, _log(r), True, shape.radius())
        moved = np.any(h != v, axis=1)
        soft = _exp(_soften_points(v, h, falloff, radius) if soften is not None else h)
        hard = _exp(h) if want_hard and soften is not None else soft
    else:
        if not isinstance(limit, FittedLimit):
            raise LimitsError("a swing-twist limit is a FittedLimit")
        vs, vt = _swing_twist(limit, r)
        vs, hs = _nearest_projection(limit._section, vs, True, limit._section.radius())
        t, p = _twist_clamp(limit, vt, True)
        u = p[:, None] * limit.twist_axis
        moved = np.any(hs != vs, axis=1) | (np.abs(u - vt).sum(1) > 1e-15 * (1.0 + np.abs(vt).sum(1)))
        if soften is not None:
            d = np.abs(p - t)
            st = np.where(d > 1e-5, p + np.sign(t - p) * np.tanh(falloff * d) * radius, p)
            soft = quat.mul(_exp(_soften_points(vs, hs, falloff, radius)), _exp(st[:, None] * limit.twist_axis))
        else:
            soft = quat.mul(_exp(hs), _exp(u))
        hard = quat.mul(_exp(hs), _exp(u)) if want_hard and soften is not None else soft
    outs = []
    for a in (soft, hard) if want_hard else (soft,):
        o = quat.mul(limit.reference, a)
        o = np.where(np.einsum("ij,ij->i", o, flat)[:, None] < 0.0, -o, o)  # the caller's cover
        o[~moved] = flat[~moved]
        outs.append(o.reshape(q.shape))
    return outs[0], (outs[1] if want_hard else None)


def _contains_batched(limit: FittedLimit, rotations: Array, tolerance: float) -> NDArray[np.bool_]:
    """Inside test on limit-space points (either cover), without projecting."""
    q = np.asarray(rotations, np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    if not limit.swing_twist:
        v = to_limit_space(flat, limit.reference)
        shape = limit._shape()
        inside = shape.contains(v, tolerance)
    else:
        vs, vt = _swing_twist(limit, _relative(limit, flat))
        shape, v = limit._section, vs
        t, p = _twist_clamp(limit, vt, True)
        inside = shape.contains(vs, tolerance) & (np.abs(p - t) <= tolerance)
    if shape.radius() > np.pi:
        v2 = _long_cover(v)
        inside |= (
            shape.contains(v2, tolerance)
            if not limit.swing_twist
            else shape.contains(v2, tolerance) & (np.abs(p - t) <= tolerance)
        )
    return inside.reshape(q.shape[:-1])


def limit_from_dict(d: Mapping[str, Any]) -> JointLimit:
    """The per-joint limit of a limits-file entry, by its ``kind`` (see the registry)."""
    if not isinstance(d, Mapping):
        raise LimitsError(f"corrupt joint limit entry: expected an object, got {type(d).__name__}")
    return limit_class(d.get("kind")).from_dict(d)


class JointLimitClass(Protocol):
    """A per-joint limit class: built from its limits-file entry."""

    def from_dict(self, d: Mapping[str, Any], /) -> JointLimit: ...


class RotationLimitClass(JointLimitClass, Protocol):
    """A per-joint limit kind fitted from the joint's local rotations (:data:`~.registry.JOINT_KINDS`)."""

    def fit(self, local_rotations: Any, axis: Any, reference: Any = None, padding: float = 0.05) -> JointLimit: ...


def limit_class(kind: object) -> JointLimitClass:
    """:func:`~.registry.joint_limit_class` typed: the class of a per-joint limit kind."""
    return cast(JointLimitClass, joint_limit_class(kind))


def rotation_limit_class(kind: str) -> RotationLimitClass:
    """The class of a per-joint limit kind fitted from rotations (one of ``JOINT_KINDS``)."""
    if kind not in JOINT_KINDS:
        raise LimitsError(f"{kind!r} is not fitted from rotations; expected one of {', '.join(JOINT_KINDS)}")
    return cast(RotationLimitClass, joint_limit_class(kind))

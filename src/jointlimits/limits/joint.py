"""One joint's data-fitted limit: reference rotation, twist axis, covers, swing-twist.

A rotation ``q`` is taken relative to the reference, ``r = inv(ref) q``, put on the ``w >= 0``
cover and mapped to limit space ``v = scaled_angle_axis(r)`` (with swing-twist: ``r = swing
twist`` about the twist axis, one limit for each part: the swing's section in the plane
perpendicular to the axis, the twist's interval on it). The shape in limit space is any
registered :class:`~jointlimits.limits.shape.Shape`; this module knows none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, runtime_checkable

import numba
import numpy as np
from numpy.typing import NDArray

from .. import quat
from ..errors import LimitsError
from ._kernels.fused import _exp2, _log2, _qmul, pack_limit, project_fitted
from .registry import joint_limit_class, shape_class
from .shape import Shape

__all__ = ["JointLimit", "FittedLimit", "fit_shape", "to_limit_space", "from_limit_space", "swing_section",
           "twist_interval", "limit_from_dict"]

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



def fit_shape(points: Array, kind: str, padding: float = 0.05, subsample: float | None = 0.05) -> Shape:
    """Fit a shape of ``kind`` (a name in the registry) to limit-space points ``[N, 3]``.

    As in the seed, a shape's frame is fitted to the subsampled cloud so dense regions do not
    dominate it; its extents are fitted to every point, so every training rotation is inside."""
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    if pts.shape[0] == 0:
        raise LimitsError("cannot fit a limit to an empty point cloud")
    if not np.all(np.isfinite(pts)):
        raise LimitsError("cannot fit a limit: the point cloud contains NaN or infinite values")
    return shape_class(kind).fit(pts, padding, subsample)


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



def limit_from_dict(d: Mapping[str, Any]) -> JointLimit:
    """The per-joint limit of a limits-file entry, by its ``kind`` (see the registry)."""
    if not isinstance(d, Mapping):
        raise LimitsError(f"corrupt joint limit entry: expected an object, got {type(d).__name__}")
    return joint_limit_class(d.get("kind")).from_dict(d)

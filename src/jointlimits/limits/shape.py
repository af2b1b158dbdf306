"""The interface every limit-space shape implements.

A shape is a region of limit space (the scaled angle axis of a joint rotation relative to its
reference). Each family lives in its own module and is listed in :mod:`.registry`;
``Shape(kind, ...)`` and ``Shape.from_dict`` build the registered class of ``kind``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ._checks import LIMIT_SPACE_BOUND
from .registry import shape_class

if TYPE_CHECKING:
    from .cloud import CloudStats

__all__ = ["Shape"]

Array = NDArray[np.float64]


def shape_type(kind: object) -> type[Shape]:
    """:func:`~.registry.shape_class` typed: the registered Shape subclass of ``kind``."""
    return cast("type[Shape]", shape_class(kind))


class Shape:
    """A region of limit space. Subclasses implement the methods below on ``[..., 3]`` points."""

    kind: str = ""  # the registered name (a dataclass field of each subclass)

    def __new__(cls, *args: Any, **kwargs: Any) -> Shape:
        if cls is Shape:  # Shape("kdop", ...) is the registered class of that kind
            cls = shape_type(args[0] if args else kwargs.get("kind"))
        return object.__new__(cls)

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(cls, points: Array | CloudStats, padding: float = 0.05, subsample: float | None = 0.05) -> Shape:
        """The shape fitted to limit-space points ``[N, 3]``; every point is inside it (convex
        shapes also fit from a :class:`~jointlimits.limits.cloud.CloudStats` of the points)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ queries
    def project(self, points: Array) -> Array:
        """Closest point of the shape (points inside come back unchanged, bit for bit)."""
        raise NotImplementedError

    def contains(self, points: Array, tolerance: float = 1e-9) -> NDArray[np.bool_]:
        """Whether each point is inside the shape (within ``tolerance``)."""
        raise NotImplementedError

    def distance(self, points: Array) -> Array:
        """Distance ``[...]`` from each point to the shape (0 inside): the violation in limit space."""
        p = np.asarray(points, np.float64)
        return np.linalg.norm(self.project(p) - p, axis=-1)

    def radius(self) -> float:
        """An upper bound of |v| over the shape (whether it reaches past pi, where covers matter)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ swing-twist
    def swing_section(self, axis: Array) -> Shape:
        """The part of the shape in the plane through the origin perpendicular to ``axis``
        (where a swing's point lives)."""
        raise NotImplementedError

    def twist_interval(self, axis: Array) -> tuple[float, float]:
        """The range of t for which ``t * axis`` lies in the shape (where a twist's point lives)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ compiled step
    def compile(self) -> Any:
        """The shape as a ``_core.CompiledShape`` for the compiled step (built with
        :func:`.compiled.core_shape`), or None when it projects with its own batched code."""
        return None

    def has_compiled_form(self) -> bool:
        """Whether the shape's class compiles (overrides :meth:`compile`)."""
        return type(self).compile is not Shape.compile

    def compile_section(self, axis: Array) -> Any:
        """The compiled swing section for ``axis`` (None: no compiled form)."""
        return self.swing_section(axis).compile()

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Shape:
        """The shape of a limits-file entry (LimitsError if corrupt)."""
        if not isinstance(d, Mapping):
            raise LimitsError(f"corrupt shape entry: expected an object, got {type(d).__name__}")
        klass = shape_type(d.get("kind")) if cls is Shape else cls
        try:
            return klass._from_dict(d)
        except LimitsError:
            raise
        except (TypeError, ValueError, KeyError) as e:
            raise LimitsError(f"corrupt shape entry: {e}") from None

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> Shape:
        raise NotImplementedError


class ConvexShape(Shape):
    """A convex shape with a frame (``rotation`` columns are its axes, ``position`` its centre)."""

    position: Array
    rotation: Array
    _FIELDS: ClassVar[tuple[str, ...]] = ()  # the arrays of this shape besides the frame

    def _check(self) -> None:
        if self.kind and self.kind != type(self).kind:
            raise LimitsError(f"a {type(self).__name__} is a {type(self).kind!r} limit, not {self.kind!r}")
        for name, shape in (("position", (3,)), ("rotation", (3, 3))):
            try:
                setattr(self, name, np.asarray(getattr(self, name), np.float64).reshape(shape))
            except (TypeError, ValueError):
                raise LimitsError(
                    f"{self.kind} limit: {name!r} must be {' x '.join(map(str, shape))} numbers"
                ) from None
        for name in self._FIELDS:
            v = getattr(self, name)
            if v is not None:
                try:
                    v = np.asarray(v, np.float64).reshape((-1, 3) if name == "axes" else (-1,))
                except (TypeError, ValueError):
                    raise LimitsError(f"{self.kind} limit: {name!r} must be an array of numbers") from None
                setattr(self, name, v)
            if v is None or not np.all(np.isfinite(v)):
                raise LimitsError(f"{self.kind} limit needs finite {name!r}")
            if name == "scale" and not np.all(np.abs(v) <= 2 * LIMIT_SPACE_BOUND):
                raise LimitsError(f"{self.kind} limit: {name!r} out of proportion with rotation space")
        if not (np.all(np.isfinite(self.position)) and np.all(np.isfinite(self.rotation))):
            raise LimitsError(f"{self.kind} limit frame is not finite")
        if not np.all(np.abs(self.position) <= LIMIT_SPACE_BOUND):
            raise LimitsError(f"{self.kind} limit: position must be within +-{LIMIT_SPACE_BOUND:.4g} radians")
        if not np.allclose(self.rotation.T @ self.rotation, np.eye(3), rtol=0.0, atol=1e-3):
            raise LimitsError(f"{self.kind} limit: rotation is not orthonormal")

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"kind": self.kind, "position": self.position.tolist(), "rotation": self.rotation.tolist()}
        for name in self._FIELDS:
            d[name] = getattr(self, name).tolist()
        return d

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> Shape:
        keys = ("kind", "position", "rotation") + cls._FIELDS + getattr(cls, "_OPTIONS", ())
        return cls(**{k: d[k] for k in keys if k in d})

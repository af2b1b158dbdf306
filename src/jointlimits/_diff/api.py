"""The public functions of :mod:`jointlimits.torch` and :mod:`jointlimits.jax`, once.

Each backend subclasses :class:`DiffLimits` with three hooks: its :class:`~.graph.Backend`, how
the anchors of a batch are computed (directly, or through a host callback that ``jit`` and
``vmap`` can trace), and how a numpy constant becomes an array of the input's dtype and device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LimitsError
from .anchor import JointPlan, anchors, plan
from .graph import Backend, project_graph, reduce, to_quaternion, violation_graph

__all__ = ["DiffLimits", "FORMATS"]

#: the rotation formats the functions take (the last axis: 4, 3 or 6 numbers per joint)
FORMATS = {"quat": 4, "axis-angle": 3, "6d": 6}


class DiffLimits:
    """A :class:`~jointlimits.limits.model.JointLimits` made ready for one array library: the
    joints' plans and their references, twist axes and modes as arrays (built once)."""

    backend: Backend

    def __init__(self, limits: Any):
        self.limits = limits
        self.plans: list[JointPlan] = plan(limits)
        self.num_joints = len(self.plans)
        self._ref = np.stack([p.reference for p in self.plans])
        self._axis = np.stack([p.axis for p in self.plans])
        self._mode = np.array([p.mode for p in self.plans], np.int64)

    # ------------------------------------------------------------------ backend hooks
    def constant(self, a: np.ndarray, like: Any) -> Any:
        raise NotImplementedError

    def anchor(self, q: Any, projected_parents: bool = False) -> tuple[Any, ...]:
        """The anchor arrays of unit quaternions ``[N, J, 4]`` (no gradient flows through them);
        with ``projected_parents`` a coupled limit reads its parent's projected rotation (as
        :meth:`JointLimits.project` does), else its input rotation (as ``violation`` does)."""
        raise NotImplementedError

    def _numpy_anchor(self, q: np.ndarray, projected_parents: bool = False) -> tuple[np.ndarray, ...]:
        return anchors(self.plans, q, self.limits.project if projected_parents else None)

    # ------------------------------------------------------------------ the functions
    def _quats(self, rotations: Any, fmt: str) -> tuple[Any, tuple[int, ...]]:
        xp = self.backend.xp
        if fmt not in FORMATS:
            raise LimitsError(f"unknown rotation format {fmt!r}; expected one of {', '.join(FORMATS)}")
        shape = tuple(rotations.shape)
        if len(shape) < 2 or shape[-2:] != (self.num_joints, FORMATS[fmt]):
            raise LimitsError(f"{fmt} rotations must be [..., {self.num_joints}, {FORMATS[fmt]}], got {list(shape)}")
        if not xp.isdtype(rotations.dtype, "real floating"):
            raise LimitsError(f"rotations must be floating point, got {rotations.dtype}")
        q = to_quaternion(xp, rotations, fmt)
        return xp.reshape(q, (-1, self.num_joints, 4)), shape[:-1]

    def _args(self, q: Any, projected_parents: bool = False) -> tuple[Any, Any, Any, tuple[Any, ...]]:
        an = self.anchor(self.backend.stop(q), projected_parents)
        return (
            self.constant(self._ref, q),
            self.constant(self._axis, q),
            self.constant(self._mode, q),
            an,
        )

    def project(self, rotations: Any, rotation_format: str = "quat") -> Any:
        """The nearest admitted rotations, as unit quaternions ``[..., J, 4]`` (w, x, y, z)."""
        q, lead = self._quats(rotations, rotation_format)
        out = project_graph(self.backend, q, *self._args(q, projected_parents=True))
        return self.backend.xp.reshape(out, lead + (4,))

    def violation(self, rotations: Any, rotation_format: str = "quat") -> Any:
        """Radians ``[..., J]`` between each rotation and its projection: 0 inside (gradient 0),
        growing outside with a unit-size gradient; the compiled core's ``JointLimits.violation``."""
        q, lead = self._quats(rotations, rotation_format)
        out = violation_graph(self.backend, q, *self._args(q))
        return self.backend.xp.reshape(out, lead)

    def loss(self, rotations: Any, reduction: str = "mean", rotation_format: str = "quat", power: float = 2.0) -> Any:
        """``violation ** power`` reduced by ``"mean"``, ``"sum"`` or ``"none"`` (power 2: smooth
        at the boundary, so the limit acts as a soft wall in a training loop)."""
        if reduction not in ("mean", "sum", "none"):
            raise LimitsError(f"unknown reduction {reduction!r}; expected 'mean', 'sum' or 'none'")
        if not power > 0:
            raise LimitsError(f"power must be > 0, got {power}")
        v = self.violation(rotations, rotation_format)
        return reduce(self.backend.xp, v**power if power != 1 else v, reduction)

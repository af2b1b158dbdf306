"""Fitted joint limits as differentiable JAX functions (the ``[jax]`` extra).

The same functions as :mod:`jointlimits.torch` (one implementation, :mod:`jointlimits._diff`):
``violation``, ``project`` and ``loss`` on ``[..., J, 4]`` quaternions, axis-angle or 6D. They
``jit``, ``vmap`` and differentiate (forward and reverse mode); where each projection lands is a
host callback (``jax.pure_callback``) into the compiled core, without gradient. Build the limits
once with ``limits.to_jax()`` (or :func:`prepare`). Use float64 (``jax_enable_x64``) to match the
core to 1e-9 radians.
"""

from __future__ import annotations

from typing import Any

try:
    import jax
    import jax.numpy as jnp
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("jointlimits.jax needs JAX: pip install 'jointlimits[jax]'") from e

import numpy as np

from .._diff.anchor import ANCHOR_FIELDS
from .._diff.api import FORMATS, DiffLimits
from .._diff.graph import Backend

__all__ = ["JaxLimits", "prepare", "violation", "project", "loss", "FORMATS"]

_TAIL = {"moved": (), "cover": (), "h": (3,), "jac": (3, 3), "tshift": (), "tproj": (), "tgrad": ()}


class JaxLimits(DiffLimits):
    """Joint limits ready for JAX (:meth:`JointLimits.to_jax`)."""

    def __init__(self, limits: Any):
        super().__init__(limits)
        self.backend = Backend(jnp, jax.lax.stop_gradient)

    def constant(self, a: np.ndarray, like: Any) -> Any:
        return jnp.asarray(a, dtype=jnp.int32 if a.dtype.kind == "i" else like.dtype)

    def anchor(self, q: Any, projected_parents: bool = False) -> tuple[Any, ...]:
        n, J = q.shape[0], q.shape[1]
        shapes = tuple(jax.ShapeDtypeStruct((n, J) + _TAIL[f], q.dtype) for f in ANCHOR_FIELDS)
        dtype = np.dtype(q.dtype)

        def host(x: Any) -> tuple[np.ndarray, ...]:
            x = np.asarray(x)
            flat = x.reshape((-1,) + x.shape[-2:])
            out = self._numpy_anchor(flat, projected_parents)
            return tuple(a.reshape(x.shape[:-1] + a.shape[2:]).astype(dtype) for a in out)

        return tuple(jax.pure_callback(host, shapes, q, vmap_method="expand_dims"))


def prepare(limits: Any) -> JaxLimits:
    """:class:`JaxLimits` of a :class:`~jointlimits.limits.model.JointLimits` (or itself)."""
    if isinstance(limits, JaxLimits):
        return limits
    return JaxLimits(limits)


def violation(limits: Any, rotations: Any, rotation_format: str = "quat") -> Any:
    """Radians ``[..., J]`` outside each joint's limit (0 inside), differentiable."""
    return prepare(limits).violation(rotations, rotation_format)


def project(limits: Any, rotations: Any, rotation_format: str = "quat") -> Any:
    """The nearest admitted rotations as quaternions ``[..., J, 4]``, differentiable."""
    return prepare(limits).project(rotations, rotation_format)


def loss(
    limits: Any, rotations: Any, reduction: str = "mean", rotation_format: str = "quat", power: float = 2.0
) -> Any:
    """``violation ** power`` reduced by ``"mean"``, ``"sum"`` or ``"none"``."""
    return prepare(limits).loss(rotations, reduction, rotation_format, power)

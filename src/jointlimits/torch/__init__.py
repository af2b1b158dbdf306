"""Fitted joint limits as differentiable PyTorch functions (the ``[torch]`` extra).

``violation``, ``project`` and ``loss`` take rotations ``[..., J, 4]`` quaternions (w, x, y, z),
``[..., J, 3]`` axis-angle or ``[..., J, 6]`` 6D and give the compiled core's values with
gradients. Build the limits once with ``limits.to_torch(device)`` (or :func:`prepare`)::

    lim = limits.to_torch("cpu")
    loss = jointlimits.torch.loss(lim, q)          # mean of violation ** 2
    loss.backward()

Every shape is covered: box, oriented box, ellipsoid, k-DOP, implicit, coupled and
swing-twist. Where each rotation's projection lands (and the shape's Jacobian there) is computed
by the compiled core on the host, without gradient; the rest runs on the tensors' device. A
coupled limit reads its parent joint's input rotation and passes no gradient to it.
"""

from __future__ import annotations

from typing import Any

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("jointlimits.torch needs PyTorch: pip install 'jointlimits[torch]'") from e

import array_api_compat
import numpy as np

from .._diff.api import FORMATS, DiffLimits
from .._diff.graph import Backend

__all__ = ["TorchLimits", "prepare", "violation", "project", "loss", "FORMATS"]


class TorchLimits(DiffLimits):
    """Joint limits ready for PyTorch (:meth:`JointLimits.to_torch`)."""

    def __init__(self, limits: Any, device: Any = "cpu"):
        super().__init__(limits)
        self.device = torch.device(device)
        self.backend = Backend(array_api_compat.array_namespace(torch.zeros(1)), lambda x: x.detach())
        self._consts: dict[tuple, torch.Tensor] = {}

    def constant(self, a: np.ndarray, like: Any) -> Any:
        dtype = torch.int64 if a.dtype.kind == "i" else like.dtype
        key = (id(a), dtype, like.device)
        t = self._consts.get(key)
        if t is None:
            t = self._consts[key] = torch.as_tensor(a, dtype=dtype, device=like.device)
        return t

    def anchor(self, q: Any, projected_parents: bool = False) -> tuple[Any, ...]:
        arrays = self._numpy_anchor(q.to("cpu", torch.float64).numpy(), projected_parents)
        return tuple(torch.as_tensor(a, dtype=q.dtype).to(q.device, non_blocking=True) for a in arrays)


def prepare(limits: Any, device: Any = "cpu") -> TorchLimits:
    """:class:`TorchLimits` of a :class:`~jointlimits.limits.model.JointLimits` (or itself)."""
    if isinstance(limits, TorchLimits):
        return limits
    return TorchLimits(limits, device)


def violation(limits: Any, rotations: torch.Tensor, rotation_format: str = "quat") -> torch.Tensor:
    """Radians ``[..., J]`` outside each joint's limit (0 inside), differentiable."""
    return prepare(limits).violation(rotations, rotation_format)


def project(limits: Any, rotations: torch.Tensor, rotation_format: str = "quat") -> torch.Tensor:
    """The nearest admitted rotations as quaternions ``[..., J, 4]``, differentiable."""
    return prepare(limits).project(rotations, rotation_format)


def loss(
    limits: Any, rotations: torch.Tensor, reduction: str = "mean", rotation_format: str = "quat", power: float = 2.0
) -> torch.Tensor:
    """``violation ** power`` reduced by ``"mean"``, ``"sum"`` or ``"none"``."""
    return prepare(limits).loss(rotations, reduction, rotation_format, power)

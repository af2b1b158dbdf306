"""The per-joint limit step: quaternion -> limit space -> project -> soften -> quaternion.

One pass per rotation in the C++ core (``_core.limit_step``, cpp/include/jointlimits/step.hpp),
the same at every batch size. The math is exactly :class:`jointlimits.limits.joint.FittedLimit`'s:
relative to the reference, short cover (and the long cover for limits reaching past pi), swing in
its plane and twist on its axis. This module packs limits for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._native import _core
from .codes import SLABS

__all__ = ["pack_shape", "pack_swing_section", "pack_limit", "compile_limit", "project_fitted", "EMPTY_SHAPE"]


def _contiguous(packed: tuple) -> tuple:
    return tuple(np.ascontiguousarray(x, np.float64) if isinstance(x, np.ndarray) else x for x in packed)


def pack_shape(shape: Any) -> tuple:
    """A Shape as flat arrays for the step: (code, f[16] = pos, rot, scale, radius, axes, mins,
    maxs, G, bnd); each shape module packs its own (``Shape.pack``)."""
    packed = shape.pack()
    if packed is None:
        raise ValueError(f"a {shape.kind} limit has no compiled form")
    return _contiguous(packed)


def pack_swing_section(shape: Any, axis: np.ndarray) -> tuple:
    """The swing section of a shape (its part in the plane perpendicular to ``axis``) packed for
    the step: a convex polygon for boxes and k-DOPs, an ellipse for ellipsoids."""
    packed = shape.pack_section(axis)
    if packed is None:
        raise ValueError(f"a {shape.kind} limit has no compiled form")
    return _contiguous(packed)


EMPTY_SHAPE = (SLABS, np.zeros(16), np.zeros((0, 3)), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros(0))


def pack_limit(limit: Any) -> tuple[int, bool, tuple[float, float], tuple, tuple]:
    """A FittedLimit for the step: (mode, covers, twist interval, shape a, shape b).

    mode 0: one shape; 1: swing section (shape a) and twist interval; 2: reference quirks (swing
    shape a and twist shape b, each in 3D)."""
    if not limit.swing_twist:
        return 0, not limit.reference_quirks, (0.0, 0.0), pack_shape(limit.shape), EMPTY_SHAPE
    if limit.reference_quirks:
        return 2, False, (0.0, 0.0), pack_shape(limit.swing), pack_shape(limit.twist)
    # swing points lie in the plane perpendicular to the twist axis and twist points on the axis,
    # so each part is limited by its section: the composed rotation then decomposes back into
    # the same parts (projection is idempotent)
    return (1, True, limit.twist.twist_interval(limit.twist_axis),
            pack_swing_section(limit.swing, limit.twist_axis), EMPTY_SHAPE)


def compile_limit(ref: np.ndarray, axis: np.ndarray, mode: int, covers: bool, a: tuple, b: tuple,
                  twist: tuple[float, float]) -> _core.PackedLimit:
    """The C++ form of a packed limit (built once per limit, reused by every call)."""
    return _core.PackedLimit(int(mode), bool(covers), float(twist[0]), float(twist[1]),
                             np.ascontiguousarray(ref, np.float64), np.ascontiguousarray(axis, np.float64),
                             _contiguous(a), _contiguous(b))


def step(packed: _core.PackedLimit, q: np.ndarray, soften: tuple[float, float] | None,
         want_hard: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """(softened, hard) limited rotations ``[..., 4]`` of a compiled limit (hard is None unless
    ``want_hard``); ``soften`` already checked."""
    flat = np.ascontiguousarray(q, np.float64).reshape(-1, 4)
    out = np.empty(flat.shape)
    hard = np.empty(flat.shape) if want_hard else None
    if soften is None:
        _core.limit_step(packed, flat, False, 0.0, 0.0, out, hard)
    else:
        _core.limit_step(packed, flat, True, soften[0], soften[1], out, hard)
    shape = np.shape(q)
    return out.reshape(shape), (hard.reshape(shape) if want_hard else None)


def project_fitted(q: np.ndarray, ref: np.ndarray, axis: np.ndarray, mode: int, covers: bool,
                   soften: tuple[float, float] | None, a: tuple, b: tuple, twist: tuple[float, float],
                   want_hard: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """(softened, hard) limited rotations ``[..., 4]`` for one joint's packed limit (hard is None
    unless ``want_hard``). Packs on every call: hold a :func:`compile_limit` to project often."""
    q = np.asarray(q, np.float64)
    soft = None if soften is None else (float(soften[0]), float(soften[1]))
    return step(compile_limit(ref, axis, mode, covers, a, b, twist), q, soft, want_hard)

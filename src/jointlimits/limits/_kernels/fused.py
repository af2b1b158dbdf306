"""The per-joint limit step: quaternion -> limit space -> project -> soften -> quaternion.

One pass per rotation in the C++ core (``_core.limit_step``, cpp/include/jointlimits/step.hpp),
the same at every batch size. The math is exactly :class:`jointlimits.limits.joint.FittedLimit`'s:
relative to the reference, short cover (and the long cover for limits reaching past pi), swing in
its plane and twist on its axis. This module builds the ``_core.CompiledLimit`` it runs on from
the shapes' :meth:`~jointlimits.limits.shape.Shape.compile`.
"""

from __future__ import annotations

import atexit
from typing import Any

import numpy as np

from ..._native import _core
from ..compiled import core_shape

__all__ = ["pack_shape", "pack_swing_section", "pack_limit", "compile_limit", "project_fitted", "EMPTY_SHAPE"]


def pack_shape(shape: Any) -> _core.CompiledShape:
    """A Shape's compiled form (``Shape.compile``); ValueError if it has none."""
    compiled = shape.compile()
    if compiled is None:
        raise ValueError(f"a {shape.kind} limit has no compiled form")
    return compiled


def pack_swing_section(shape: Any, axis: np.ndarray) -> _core.CompiledShape:
    """The compiled swing section of a shape (its part in the plane perpendicular to ``axis``): a
    convex polygon for boxes and k-DOPs, an ellipse for ellipsoids; ValueError if it has none."""
    compiled = shape.compile_section(axis)
    if compiled is None:
        raise ValueError(f"a {shape.kind} limit has no compiled form")
    return compiled


EMPTY_SHAPE = core_shape("slabs", np.zeros(16))  # the unused second shape of modes 0 and 1


@atexit.register
def _release_empty_shape() -> None:
    """Let the module-level shape go before the interpreter ends: the core's module can be gone
    before this one's globals are cleared, and nanobind then reports the shape as leaked."""
    global EMPTY_SHAPE
    del EMPTY_SHAPE


def pack_limit(limit: Any) -> tuple[int, bool, tuple[float, float], Any, Any]:
    """A FittedLimit for the step: (mode, covers, twist interval, shape a, shape b), the shapes
    compiled.

    mode 0: one shape; 1: swing section (shape a) and twist interval; 2: reference quirks (swing
    shape a and twist shape b, each in 3D)."""
    if not limit.swing_twist:
        return 0, not limit.reference_quirks, (0.0, 0.0), pack_shape(limit.shape), EMPTY_SHAPE
    if limit.reference_quirks:
        return 2, False, (0.0, 0.0), pack_shape(limit.swing), pack_shape(limit.twist)
    # swing points lie in the plane perpendicular to the twist axis and twist points on the axis,
    # so each part is limited by its section: the composed rotation then decomposes back into
    # the same parts (projection is idempotent)
    return (
        1,
        True,
        limit.twist.twist_interval(limit.twist_axis),
        pack_swing_section(limit.swing, limit.twist_axis),
        EMPTY_SHAPE,
    )


def compile_limit(
    ref: np.ndarray, axis: np.ndarray, mode: int, covers: bool, a: Any, b: Any, twist: tuple[float, float]
) -> _core.CompiledLimit:
    """The C++ limit of compiled shapes a, b (built once per limit, reused by every call)."""
    return _core.CompiledLimit(
        int(mode),
        bool(covers),
        float(twist[0]),
        float(twist[1]),
        np.ascontiguousarray(ref, np.float64),
        np.ascontiguousarray(axis, np.float64),
        a,
        b,
    )


def step(
    packed: _core.CompiledLimit, q: np.ndarray, soften: tuple[float, float] | None, want_hard: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
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
    return out.reshape(shape), (hard.reshape(shape) if hard is not None else None)


def project_fitted(
    q: np.ndarray,
    ref: np.ndarray,
    axis: np.ndarray,
    mode: int,
    covers: bool,
    soften: tuple[float, float] | None,
    a: tuple,
    b: tuple,
    twist: tuple[float, float],
    want_hard: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """(softened, hard) limited rotations ``[..., 4]`` for one joint's compiled shapes (hard is None
    unless ``want_hard``). Builds the limit on every call: hold a :func:`compile_limit` to project often."""
    q = np.asarray(q, np.float64)
    soft = None if soften is None else (float(soften[0]), float(soften[1]))
    return step(compile_limit(ref, axis, mode, covers, a, b, twist), q, soft, want_hard)

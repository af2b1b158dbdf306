"""Which shapes and per-joint limit kinds exist: the one list the model, the JSON loader and the
CLI read. Adding a shape is a module implementing :class:`~jointlimits.limits.shape.Shape` plus
one line in ``SHAPE_CLASSES`` (or, from outside the package, one :func:`register_shape` call)."""

from __future__ import annotations

import importlib

from ..errors import LimitsError

__all__ = [
    "SHAPE_CLASSES",
    "SHAPES",
    "JOINT_LIMIT_CLASSES",
    "JOINT_KINDS",
    "shape_class",
    "joint_limit_class",
    "register_shape",
    "shape_kinds",
]

# limit-space shape kind -> "module:Class" in this package, "package.module:Class", or the class
SHAPE_CLASSES: dict[str, str | type] = {
    "box": "box:Box",
    "oriented-box": "box:OrientedBox",
    "ellipsoid": "ellipsoid:Ellipsoid",
    "kdop": "kdop:KDop",
    "implicit": "implicit:Implicit",
}
# per-joint limit kind (the "kind" of a joint entry in a limits file) -> "module:Class"
JOINT_LIMIT_CLASSES: dict[str, str] = {
    "fitted": "joint:FittedLimit",
    "reach-window": "reach:ReachWindowLimit",
    "coupled": "coupled:CoupledLimit",
    "rest-retargeted": "rest:RestRetargetedLimit",
}

SHAPES: tuple[str, ...] = tuple(SHAPE_CLASSES)  # the built-in shapes (register_shape adds to SHAPE_CLASSES)
# limits fitted per joint from rotations rather than from a shape in limit space
JOINT_KINDS: tuple[str, ...] = tuple(
    k for k in JOINT_LIMIT_CLASSES if k not in ("fitted", "coupled", "rest-retargeted")
)


def _load(table: dict, kind: object, what: str) -> type:
    if not isinstance(kind, str) or kind not in table:
        raise LimitsError(f"unknown {what} {kind!r}; expected one of {', '.join(table)}")
    target = table[kind]
    if isinstance(target, type):
        return target
    module, name = target.split(":")
    return getattr(importlib.import_module(module if "." in module else f"{__package__}.{module}"), name)


def register_shape(kind: str, target: str | type) -> None:
    """Make limit-space shape ``kind`` available to fitting and limits files: ``target`` is a
    :class:`~jointlimits.limits.shape.Shape` subclass or ``"package.module:Class"``."""
    SHAPE_CLASSES[kind] = target


def shape_kinds() -> tuple[str, ...]:
    """Every registered limit-space shape kind, built in or registered."""
    return tuple(SHAPE_CLASSES)


def shape_class(kind: object) -> type:
    """The class implementing limit-space shape ``kind`` (LimitsError if there is none)."""
    return _load(SHAPE_CLASSES, kind, "limit shape")


def joint_limit_class(kind: object) -> type:
    """The class of a per-joint limit kind (``"fitted"``, ``"reach-window"``)."""
    return _load(JOINT_LIMIT_CLASSES, kind, "joint limit kind")

"""Which shapes and per-joint limit kinds exist: the one list the model, the JSON loader and the
CLI read. Adding a shape is a module implementing :class:`~jointlimits.limits.shape.Shape` plus
one line in ``SHAPE_CLASSES``."""

from __future__ import annotations

import importlib

from ..errors import LimitsError

__all__ = ["SHAPE_CLASSES", "SHAPES", "JOINT_LIMIT_CLASSES", "JOINT_KINDS", "shape_class", "joint_limit_class"]

# limit-space shape kind -> "module:Class" in this package
SHAPE_CLASSES: dict[str, str] = {
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

SHAPES: tuple[str, ...] = tuple(SHAPE_CLASSES)
# limits fitted per joint from rotations rather than from a shape in limit space
JOINT_KINDS: tuple[str, ...] = tuple(
    k for k in JOINT_LIMIT_CLASSES if k not in ("fitted", "coupled", "rest-retargeted")
)


def _load(table: dict[str, str], kind: object, what: str) -> type:
    if not isinstance(kind, str) or kind not in table:
        raise LimitsError(f"unknown {what} {kind!r}; expected one of {', '.join(table)}")
    module, name = table[kind].split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)


def shape_class(kind: object) -> type:
    """The class implementing limit-space shape ``kind`` (LimitsError if there is none)."""
    return _load(SHAPE_CLASSES, kind, "limit shape")


def joint_limit_class(kind: object) -> type:
    """The class of a per-joint limit kind (``"fitted"``, ``"reach-window"``)."""
    return _load(JOINT_LIMIT_CLASSES, kind, "joint limit kind")

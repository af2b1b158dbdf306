"""Imports that work on the package layout before and after the restructuring, so that one runner
measures both in the same session (benchmarks only: ``src/`` never imports this).

New layout (tried first): ``jointlimits.motion.{quat,skeleton,units,procedural,...}``,
``jointlimits.cleanup.{springs,tracking,pops,footlock,smoothing}``, ``jointlimits.ik.recover``,
``jointlimits._native._core``. Old layout (fallback): the same modules at the top level
(``jointlimits.quat``, ``jointlimits.springs``, ``jointlimits.recover``, ``jointlimits._core``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

#: new dotted path (under jointlimits) -> old one, for the modules the restructuring moved
_OLD = {
    "motion.quat": "quat",
    "motion.skeleton": "skeleton",
    "motion.units": "units",
    "motion.naming": "naming",
    "motion.mirror": "mirror",
    "motion.resample": "resample",
    "motion.procedural": "procedural",
    "cleanup.springs": "springs",
    "cleanup.tracking": "tracking",
    "cleanup.pops": "pops",
    "cleanup.footlock": "footlock",
    "ik.recover": "recover",
    "viz.plots": "plots",
    "limits.model": "model",
}


def mod(new: str) -> ModuleType:
    """``jointlimits.<new>``, or its pre-restructuring location when the new one does not exist."""
    try:
        return importlib.import_module(f"jointlimits.{new}")
    except ModuleNotFoundError as e:
        old = _OLD.get(new)
        if old is None or not (e.name or "").startswith("jointlimits"):
            raise
        return importlib.import_module(f"jointlimits.{old}")


def layout() -> str:
    """ "new" (layers as folders) or "old" (flat modules), from where ``quat`` lives."""
    try:
        importlib.import_module("jointlimits.motion.quat")
        return "new"
    except ModuleNotFoundError:
        return "old"


def core() -> ModuleType:
    """The compiled core (``jointlimits._native._core``; before: ``jointlimits._core``)."""
    try:
        return importlib.import_module("jointlimits._native")._core
    except (ModuleNotFoundError, AttributeError):
        return importlib.import_module("jointlimits._core")


def smooth_arg() -> Any:
    """What ``JointLimits.apply(smooth=...)`` takes to smooth the switches: the smoother function
    (``cleanup.smoothing.smooth_switches``; before: ``True``)."""
    try:
        return importlib.import_module("jointlimits.cleanup.smoothing").smooth_switches
    except (ModuleNotFoundError, AttributeError):
        return True


def euler_to_quat_degrees(angles, axes: str):
    """Euler angles (degrees) in the BVH channel order -> quaternions: ``quat.from_euler_axes``
    (before: the BVH reader's private ``_euler_to_quat``, the same computation)."""
    q = mod("motion.quat")
    if hasattr(q, "from_euler_axes"):
        return q.from_euler_axes(angles, axes, degrees=True)
    return importlib.import_module("jointlimits.io.bvh")._euler_to_quat(angles, axes)


#: the same imports for code run in a fresh interpreter (the start-up and BVH-size children)
CHILD_IMPORTS = """
try:
    from jointlimits.motion import procedural, quat
except ModuleNotFoundError:
    from jointlimits import procedural, quat
"""

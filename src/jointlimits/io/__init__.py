"""Reading and writing motion files: one module per format, chosen by file extension.

``load(path)`` and ``save(path, motion)`` pick the format from the registry below; adding a format
is one module (with ``load``/``save``) and one line in ``FORMATS``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from ..errors import JointLimitsError
from ..motion.skeleton import Motion

__all__ = ["FORMATS", "WRITABLE", "format_for", "load", "save"]

#: File extension (lower case) -> module of this package with ``load(path)`` and ``save(path, motion)``.
FORMATS: dict[str, str] = {
    ".bvh": "bvh",
    ".gltf": "gltf",
    ".glb": "gltf",
    ".npz": "amass",
    ".usd": "usd",
    ".usda": "usd",
    ".usdc": "usd",
    ".fbx": "fbx",
}

#: Extensions :func:`save` writes (AMASS ``.npz`` is read only).
WRITABLE: tuple[str, ...] = (".bvh", ".glb", ".gltf", ".usd", ".usda", ".usdc", ".fbx")


def format_for(path: str | Path) -> ModuleType:
    """The format module for ``path``'s extension; ``JointLimitsError`` for an unknown one."""
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise JointLimitsError(f"{path}: unknown motion file type {ext or '(none)'!r} (known: {known})")
    return importlib.import_module(f"{__name__}.{FORMATS[ext]}")


def load(path: str | Path, **kwargs) -> Motion:
    """Load a motion file of any registered format."""
    return format_for(path).load(path, **kwargs)


def save(path: str | Path, motion: Motion, **kwargs) -> None:
    """Save a motion in the format given by ``path``'s extension (atomically)."""
    format_for(path).save(path, motion, **kwargs)

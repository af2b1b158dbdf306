"""Reading and writing motion files: one module per format, chosen by file extension.

``load(path)`` and ``save(path, motion)`` pick the format from the registry below; adding a format
is one module (with ``load``/``save``) and one line in ``FORMATS``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np

from ..errors import JointLimitsError, SkeletonError
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
    """Save a motion in the format given by ``path``'s extension (atomically).

    Refuses (``SkeletonError``, nothing written) rotations that are not finite unit quaternions
    (norm within 1e-6 of 1): a scaled or zero quaternion is no rotation a file can hold."""
    fmt = format_for(path)
    rotations = getattr(motion, "rotations", None)  # (not a Motion: the format's save says so)
    q = np.asarray(rotations if rotations is not None else np.zeros((0, 0, 4)), np.float64)
    if q.size:
        n2 = np.einsum("...i,...i->...", q, q)
        bad = ~(np.abs(n2 - 1.0) <= 2e-6)  # NaN and infinity fail too
        if np.any(bad):
            f, j = (int(i) for i in np.argwhere(bad)[0][:2])
            raise SkeletonError(
                f"{path}: not saved: the rotation of joint {motion.skeleton.names[j]!r} at frame {f} is not a finite "
                f"unit quaternion ({q[f, j].tolist()})"
            )
    fmt.save(path, motion, **kwargs)

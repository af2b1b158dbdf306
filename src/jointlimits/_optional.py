"""Packages that only one feature needs (the extras in pyproject.toml): imported when that feature
is used, never by ``import jointlimits`` or the demo's default path. A missing one is a
MissingExtraError naming the extra to install (the CLI prints it as its usual one-line error)."""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

#: extra -> (import name, distribution name) of the packages it adds; pyproject.toml lists the same
EXTRAS = {
    "studio": ("viser", "viser"),
    "gltf": ("pygltflib", "pygltflib"),
    "implicit-draw": ("skimage", "scikit-image"),
    "mink": ("mink", "mink"),
    "usd": ("pxr", "usd-core"),
    "blender": ("bpy", "bpy"),
    "corpus": ("distributed", "dask[distributed]"),
    "torch": ("torch", "torch"),
    "jax": ("jax", "jax"),
}


def require(module: str, extra: str, feature: str) -> ModuleType:
    """``import module`` (e.g. ``skimage.measure``) for ``feature``, or MissingExtraError telling
    how to install ``extra``."""
    top, dist = EXTRAS[extra]
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if e.name is None or e.name.split(".")[0] == top:
            why = "which is not installed"
        else:  # the package is there but one of its own imports failed
            why = f"which failed to import ({e})"
        raise MissingExtraError(
            f"{feature} needs the optional package {dist}, {why}: "
            f"pip install 'jointlimits[{extra}]' (in a checkout: pip install -e '.[{extra}]')"
        ) from None

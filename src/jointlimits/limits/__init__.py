"""Joint limits: shapes in *limit space*, one joint's limit, and the whole skeleton's.

Limit space is the scaled angle axis (``angle * unit_axis``) of a joint rotation relative to its
reference pose, so the shape functions work on plain 3-vectors: ``points`` are arrays of shape
``[..., 3]`` (float64 by default; float32 and other real inputs are accepted and computed in
float64, results are float64).

Layout (one module per shape family, one interface, one registry; data flows downwards):

* :mod:`.shape` -- the :class:`Shape` interface (fit, project, contains, distance, radius, the
  swing section and twist interval for swing-twist, ``compile()`` to the core's shape, to/from dict);
* :mod:`.box` (box, oriented box), :mod:`.ellipsoid`, :mod:`.kdop` -- the shapes and their
  functions (``fit_box``, ``project_ellipsoid``, ...); :mod:`.reach` -- reach windows, a
  per-joint limit on swing directions and twist;
* :mod:`.registry` -- which shapes and per-joint limit kinds exist (the model, the JSON loader and
  the CLI read it);
* :mod:`.cloud` -- principal frames, subsampling and softening shared by the shapes;
* :mod:`.joint` -- :class:`FittedLimit`, one joint's limit (reference, twist axis, covers,
  swing-twist) over any shape; :mod:`.model` -- :class:`JointLimits` for a skeleton;
* :mod:`.compiled` -- building ``_core`` shapes, and their form in limits files;
* :mod:`._kernels` -- the compiled per-joint step over ``_core.CompiledLimit`` (``fused``).

Shapes (their *local frame* and how a point moves between frames):

* ``position`` ``[3]`` and ``rotation`` ``[3, 3]``: the limit frame. ``rotation``'s
  COLUMNS are the limit axes; a point goes to limit-local coordinates as
  ``local = rotation.T @ (x - position)`` and back as ``x = rotation @ local + position``.
* box: ``lo``, ``hi`` ``[3]`` (in the local frame, or in limit space if no frame is given).
* ellipsoid: ``scale`` ``[3]``, the semi-axes in the local frame.
* k-DOP: ``axes`` ``[K, 3]`` unit directions in the local frame, ``mins``/``maxs`` ``[K]``.

Fitting functions take clouds ``[..., N, 3]`` and reduce over the ``N`` axis (leading
axes are independent clouds).  Projection functions take ``[..., 3]`` points and one
limit.  Projections return points that are inside the limit *unchanged, bit for bit*
(converted to float64), and never return NaN: malformed input (NaN/inf, empty clouds,
wrong shapes, negative padding, empty limits) raises :class:`jointlimits.errors.LimitsError`.

The formulas follow Daniel Holden's "Joint Limits" article and demo
(orangeduck/Joint-Limits). Deliberate differences from that reference:

* fits start the running maximum at ``-inf`` (the reference starts at ``FLT_MIN``, so an
  axis whose data is all negative got ``max = padding``);
* ``fit_orientation`` uses a symmetric eigen-decomposition instead of power iteration
  (proper rotation, descending variance, deterministic signs);
* projections do not map inside points through the frame (the reference always maps
  back through ``R``, which moves inside points by rounding);
* ``project_ellipsoid`` projects onto the true ``scale`` surface by default (``eps=0``);
  ``eps=1e-5`` reproduces the reference's ``scale**2 + 1e-5`` surface;
* ``project_kdop(exact=True)`` is a true Euclidean closest point (the reference's single
  pass of slab clamps is ``exact=False``);
* ``subsample`` gives exactly the indices of the reference's greedy ``subsample_naive``
  but uses a spatial hash grid.
"""

from __future__ import annotations

from typing import Any

from .box import Box, OrientedBox, contains_box, distance_box, fit_box, fit_oriented_box, project_box
from .cloud import _subsample_naive_kernel, fit_frame, fit_orientation, soften, subsample  # noqa: F401
from .ellipsoid import Ellipsoid, contains_ellipsoid, distance_ellipsoid, fit_ellipsoid, project_ellipsoid
from .kdop import KDop, contains_kdop, distance_kdop, fit_kdop, kdop_axes, project_kdop
from .registry import SHAPES, shape_class
from .shape import Shape

__all__ = [
    "fit_box",
    "fit_orientation",
    "fit_oriented_box",
    "fit_ellipsoid",
    "fit_kdop",
    "kdop_axes",
    "project_box",
    "project_ellipsoid",
    "project_kdop",
    "soften",
    "subsample",
    "contains_box",
    "contains_ellipsoid",
    "contains_kdop",
    "distance_box",
    "distance_ellipsoid",
    "distance_kdop",
    "Shape",
    "Box",
    "OrientedBox",
    "Ellipsoid",
    "KDop",
    "SHAPES",
    "shape_class",
    "FittedLimit",
    "JointLimits",
    "FitOptions",
    "fit_shape",
]

_LAZY = {"FittedLimit": "joint", "fit_shape": "joint", "JointLimits": "model", "FitOptions": "options"}


def __getattr__(name: str) -> Any:
    # the per-joint and skeleton limits pull in the compiled step; load them on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

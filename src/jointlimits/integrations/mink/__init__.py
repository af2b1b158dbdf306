"""Fitted joint limits as a mink limit, and retargeting a clip onto an exported MJCF humanoid.

:class:`FittedLimits` has the interface of mink's ``ConfigurationLimit``: each step it returns
linear inequalities ``G dq <= h`` on the tangent-space displacement ``dq`` (``nv``) that
``mink.solve_ik`` adds to its QP. Per limited joint (a ball joint or three hinges of the MJCF
that ``jointlimits export --to mujoco`` / ``mujoco-ball`` wrote, matched by body name) the limit
gives rows ``s_k(q)`` in limit space, each ``<= 0`` inside (a polytope's faces, an ellipsoid's or
an implicit field's first-order distance, a swing-twist limit's swing rows and twist interval);
their gradient is taken in the joint's tangent space (the body's rotation relative to its parent,
``q exp(w)``, ``w`` in the body frame) and mapped through the joint's columns of the configuration
velocity: ``grad_w(s_k)^T R^T J_rel dq <= gain (-margin - s_k)``. ``gain`` and ``margin`` act as
mink's ``gain`` and ``min_distance_from_limits`` (radians, in limit space). A coupled child's rows
use its parent's current rotation.

The rows' tangent gradients are central differences of the limit's own functions over the seven
rotations ``q exp(+-eps e_i)`` (one batched evaluation for all plain ellipsoid limits, one call
per joint for the others), so every shape family, cover and swing-twist decomposition is
differentiated the same way.

https://kevinzakka.github.io/mink/ (Limit, ConfigurationLimit, solve_ik)
https://mujoco.readthedocs.io/en/stable/APIreference/APItypes.html#mjdata (cdof, xquat, xmat)
"""

from __future__ import annotations

# The package: a limit's rows and their gradients (._rows, numpy only), the mink limit (._limit)
# and retargeting (._retarget); ._limit imports mink and mujoco (the optional extra [mink]), so
# importing this module without them fails with the extra's name, as it did before it was a package.
# The public names in the order they had in the module (the API page lists them in import order):
# isort: off
from ._rows import IntegrationError, tangent_rows
from ._limit import FittedLimits, local_rotations
from ._retarget import (
    RetargetSettings,
    RetargetResult,
    retarget,
    qpos_to_motion,
    tracking_errors,
    load_model,
    Run,
    RUNS,
    make_limits,
    run_one,
    run_three,
)

# isort: on
# and the module's other names, private ones included, stay importable from it
from ._limit import _batchable, _body_id, _EllipsoidBatch, _Limit, mink, mujoco  # noqa: F401
from ._retarget import ACTIVE_BAND, RETARGET_MARGIN, RETARGET_MAX_STEP, _world_frame  # noqa: F401
from ._rows import (  # noqa: F401
    _QL,
    EPS,
    Array,
    _curvature,
    _ellipsoid_rows,
    _field_rows,
    _Joint,
    _limit_curvature,
    _limit_rows,
    _perturbations,
    _qmul,
    _shape_rows,
    _slab_rows,
)

__all__ = [
    "FittedLimits",
    "IntegrationError",
    "tangent_rows",
    "local_rotations",
    "RetargetSettings",
    "RetargetResult",
    "retarget",
    "qpos_to_motion",
    "tracking_errors",
    "load_model",
    "make_limits",
    "Run",
    "RUNS",
    "run_one",
    "run_three",
]

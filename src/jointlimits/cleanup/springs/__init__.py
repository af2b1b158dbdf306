"""Dampers, exact spring-dampers and tracking springs, batched over any number of channels.

This module follows "Perfect Tracking with Springs" (D. Holden) and the helpers of its companion
code. Every function takes numpy arrays (or scalars) that broadcast against each other and returns
new arrays; nothing is modified in place. Arithmetic is float64, except that the one-step functions
(``spring_damper_exact`` and the ``tracking_spring_update*`` families) compute in float32 and return
float32 when every numpy input is float32 (Python numbers adapt, as in numpy), and accept
``out=(x_out, v_out)``: preallocated C-contiguous arrays of the broadcast shape and result dtype,
filled and returned (their contents are unspecified if the call raises).

Two flavours of the transcendental parts exist:

* ``approx=False`` (default): exact ``exp`` and a numerically stable closed form of the damped
  spring (no ``atan``, no division by the damped frequency, continuous across the three regimes).
* ``approx=True``: the reference's approximations :func:`fast_negexp` and :func:`fast_atan` and
  its exact per-branch formulas (including its small ``eps`` terms), so outputs can be compared
  with data produced by the reference code.

Tracking springs come in three families with the reference's names:

* lerp gains: :func:`tracking_spring_update` (+ ``_no_acceleration``, ``_no_velocity_acceleration``)
* half-lives: :func:`tracking_spring_update_improved` (+ ``tracking_spring_update_no_acceleration_improved``,
  ``tracking_spring_update_no_velocity_acceleration_improved``)
* dt-invariant: :func:`tracking_spring_update_exact` (+ ``tracking_spring_update_no_acceleration_exact``,
  ``tracking_spring_update_no_velocity_acceleration_exact``)

and :func:`track_signal` runs any of them over a whole ``[T, ...]`` signal (vectorised over the
channels) with discontinuities and optional target clipping.

The package: :mod:`._one_step` (building blocks and the exact spring-damper), :mod:`._family`
(the tracking spring family, one step), :mod:`._filters` (whole signals); :mod:`._base` holds the
constants, :class:`SpringError` and the input checks.
"""

from __future__ import annotations

from ._base import LN2, MODE_FULL, MODE_POSITION, MODE_VELOCITY, SpringError
from ._family import (
    tracking_spring_update,
    tracking_spring_update_exact,
    tracking_spring_update_improved,
    tracking_spring_update_no_acceleration,
    tracking_spring_update_no_acceleration_exact,
    tracking_spring_update_no_acceleration_improved,
    tracking_spring_update_no_velocity_acceleration,
    tracking_spring_update_no_velocity_acceleration_exact,
    tracking_spring_update_no_velocity_acceleration_improved,
)
from ._filters import track_errors, track_signal, tracking_modes, tracking_target_acceleration, tracking_target_velocity  # noqa: F401
from ._one_step import (
    critical_frequency,
    critical_halflife,
    damper_exact,
    damping_ratio_to_damping,
    damping_ratio_to_stiffness,
    damping_to_halflife,
    fast_atan,
    fast_negexp,
    frequency_to_stiffness,
    gain_to_halflife,
    halflife_to_damping,
    halflife_to_gain,
    lerp,
    spring_damper_exact,
    spring_damper_exact_coefficients,
    spring_damper_exact_stiffness_damping,
    stiffness_to_frequency,
)

__all__ = [
    "SpringError",
    "LN2",
    "fast_negexp",
    "fast_atan",
    "lerp",
    "halflife_to_damping",
    "damping_to_halflife",
    "frequency_to_stiffness",
    "stiffness_to_frequency",
    "critical_halflife",
    "critical_frequency",
    "damping_ratio_to_stiffness",
    "damping_ratio_to_damping",
    "halflife_to_gain",
    "gain_to_halflife",
    "damper_exact",
    "spring_damper_exact",
    "spring_damper_exact_stiffness_damping",
    "spring_damper_exact_coefficients",
    "tracking_spring_update",
    "tracking_spring_update_no_acceleration",
    "tracking_spring_update_no_velocity_acceleration",
    "tracking_spring_update_improved",
    "tracking_spring_update_no_acceleration_improved",
    "tracking_spring_update_no_velocity_acceleration_improved",
    "tracking_spring_update_exact",
    "tracking_spring_update_no_acceleration_exact",
    "tracking_spring_update_no_velocity_acceleration_exact",
    "tracking_target_velocity",
    "tracking_target_acceleration",
    "tracking_modes",
    "track_signal",
    "MODE_POSITION",
    "MODE_VELOCITY",
    "MODE_FULL",
]

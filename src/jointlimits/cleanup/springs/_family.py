"""The tracking spring family, one step: lerp gains, half-lives (improved) and dt-invariant (exact),
each with its no-acceleration and no-velocity-acceleration variants."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._native import _core
from ._base import Array, Out, _flat, _invalid, _outputs, _result_dtype

# ----------------------------------------------------------------------------------------------
# tracking springs, one step (lerp gains)


def _tracking(
    values: tuple, has_v: bool, has_a: bool, halflives: bool, approx: bool = False, out: Out = None
) -> tuple[Array, Array]:
    # values: x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt (absent terms as 0.0)
    dtype = _result_dtype(values)
    shape, flat = _flat(values, dtype)
    xo, vo = _outputs(out, shape, dtype)
    x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt = flat
    kernel = _core.tracking_update_f32 if dtype is np.float32 else _core.tracking_update
    if not kernel(
        x,
        v,
        x_goal,
        v_goal,
        a_goal,
        x_gain,
        v_gain,
        a_gain,
        dt,
        has_v,
        has_a,
        halflives,
        approx,
        xo.reshape(-1),
        vo.reshape(-1),
    ):
        kind = "nonneg" if halflives else "finite"
        raise _invalid(
            list(
                zip(
                    (
                        "x",
                        "v",
                        "x_goal",
                        "v_goal",
                        "a_goal",
                        "x_halflife" if halflives else "x_gain",
                        "v_halflife" if halflives else "v_gain",
                        "a_halflife" if halflives else "a_gain",
                        "dt",
                    ),
                    values,
                    ("finite",) * 5 + (kind,) * 3 + ("positive",),
                )
            )
        )
    return xo, vo


def tracking_spring_update(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    v_goal: ArrayLike,
    a_goal: ArrayLike,
    x_gain: ArrayLike,
    v_gain: ArrayLike,
    a_gain: ArrayLike,
    dt: ArrayLike,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """v <- lerp(v, v + a_goal dt, a_gain); v <- lerp(v, v_goal, v_gain);
    v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v."""
    return _tracking((x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt), True, True, False, out=out)


def tracking_spring_update_no_acceleration(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    v_goal: ArrayLike,
    x_gain: ArrayLike,
    v_gain: ArrayLike,
    dt: ArrayLike,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """v <- lerp(v, v_goal, v_gain); v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v."""
    return _tracking((x, v, x_goal, v_goal, 0.0, x_gain, v_gain, 0.0, dt), True, False, False, out=out)


def tracking_spring_update_no_velocity_acceleration(
    x: ArrayLike, v: ArrayLike, x_goal: ArrayLike, x_gain: ArrayLike, dt: ArrayLike, *, out: Out = None
) -> tuple[Array, Array]:
    """v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v."""
    return _tracking((x, v, x_goal, 0.0, 0.0, x_gain, 0.0, 0.0, dt), False, False, False, out=out)


# tracking springs, one step (half-lives)


def tracking_spring_update_improved(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    v_goal: ArrayLike,
    a_goal: ArrayLike,
    x_halflife: ArrayLike,
    v_halflife: ArrayLike,
    a_halflife: ArrayLike,
    dt: ArrayLike,
    approx: bool = False,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """tracking_spring_update with each lerp replaced by damper_exact(., ., halflife, dt)."""
    return _tracking(
        (x, v, x_goal, v_goal, a_goal, x_halflife, v_halflife, a_halflife, dt), True, True, True, approx, out=out
    )


def tracking_spring_update_no_acceleration_improved(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    v_goal: ArrayLike,
    x_halflife: ArrayLike,
    v_halflife: ArrayLike,
    dt: ArrayLike,
    approx: bool = False,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """tracking_spring_update_no_acceleration with dampers (half-lives) instead of lerp gains."""
    return _tracking((x, v, x_goal, v_goal, 0.0, x_halflife, v_halflife, 0.0, dt), True, False, True, approx, out=out)


def tracking_spring_update_no_velocity_acceleration_improved(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    x_halflife: ArrayLike,
    dt: ArrayLike,
    approx: bool = False,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """tracking_spring_update_no_velocity_acceleration with a damper (half-life) instead of a lerp gain."""
    return _tracking((x, v, x_goal, 0.0, 0.0, x_halflife, 0.0, 0.0, dt), False, False, True, approx, out=out)


# tracking springs, one step (dt-invariant)


def _tracking_exact(values: tuple, has_v: bool, has_a: bool, approx: bool, out: Out = None) -> tuple[Array, Array]:
    # values: x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt, gain_dt (absent terms as 0.0)
    dtype = _result_dtype(values)
    shape, flat = _flat(values, dtype)
    xo, vo = _outputs(out, shape, dtype)
    x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt, gain_dt = flat
    kernel = _core.tracking_update_exact_f32 if dtype is np.float32 else _core.tracking_update_exact
    if not kernel(
        x,
        v,
        x_goal,
        v_goal,
        a_goal,
        x_gain,
        v_gain,
        a_gain,
        dt,
        gain_dt,
        has_v,
        has_a,
        approx,
        1e-5,
        xo.reshape(-1),
        vo.reshape(-1),
    ):
        raise _invalid(
            list(
                zip(
                    ("x", "v", "x_goal", "v_goal", "a_goal", "x_gain", "v_gain", "a_gain", "dt", "gain_dt"),
                    values,
                    ("finite",) * 5 + ("gain",) * 3 + ("positive",) * 2,
                )
            )
        )
    return xo, vo


def tracking_spring_update_exact(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    v_goal: ArrayLike,
    a_goal: ArrayLike,
    x_gain: ArrayLike,
    v_gain: ArrayLike,
    a_gain: ArrayLike,
    dt: ArrayLike,
    gain_dt: ArrayLike,
    approx: bool = False,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """spring_damper_exact with s = xg/gdt^2, d = (1 - (1-vg)(1-xg))/gdt, goal x_goal, velocity goal
    (vg(1-xg)/gdt v_goal + ag(1-vg)(1-xg) a_goal)/d."""
    return _tracking_exact(
        (x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt, gain_dt), True, True, approx, out=out
    )


def tracking_spring_update_no_acceleration_exact(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    v_goal: ArrayLike,
    x_gain: ArrayLike,
    v_gain: ArrayLike,
    dt: ArrayLike,
    gain_dt: ArrayLike,
    approx: bool = False,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """tracking_spring_update_exact without the acceleration term (velocity goal vg(1-xg)/gdt v_goal / d)."""
    return _tracking_exact((x, v, x_goal, v_goal, 0.0, x_gain, v_gain, 0.0, dt, gain_dt), True, False, approx, out=out)


def tracking_spring_update_no_velocity_acceleration_exact(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    x_gain: ArrayLike,
    dt: ArrayLike,
    gain_dt: ArrayLike,
    approx: bool = False,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """spring_damper_exact with s = xg/gdt^2, d = xg/gdt, velocity goal 0."""
    return _tracking_exact((x, v, x_goal, 0.0, 0.0, x_gain, 0.0, 0.0, dt, gain_dt), False, False, approx, out=out)

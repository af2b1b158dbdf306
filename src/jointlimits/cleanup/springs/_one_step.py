"""The one-step building blocks: fast approximations, half-life/damping/stiffness conversions, the
exact damper and the exact spring-damper."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..._native import _core
from ._base import LN2, Array, Out, SpringError, _arr, _dt, _flat, _invalid, _nonneg, _outputs, _result_dtype

# ----------------------------------------------------------------------------------------------
# building blocks


def fast_negexp(x: ArrayLike) -> Array:
    """exp(-x) ~= 1 / (1 + x + 0.48 x^2 + 0.235 x^3) (the reference's approximation, for x >= 0)."""
    x = np.asarray(x, dtype=np.float64)
    return 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x)


def fast_atan(x: ArrayLike) -> Array:
    """atan(x) ~= sign(x) [pi/4 w - w (w-1)(0.2447 + 0.0663 w)], w = min(|x|, 1/|x|), reflected for |x| > 1."""
    x = np.asarray(x, dtype=np.float64)
    z = np.abs(x)
    big = z > 1.0
    w = np.where(big, 1.0 / np.where(big, z, 1.0), z)
    y = (math.pi / 4.0) * w - w * (w - 1.0) * (0.2447 + 0.0663 * w)
    return np.copysign(np.where(big, math.pi / 2.0 - y, y), x)


def lerp(x: ArrayLike, y: ArrayLike, a: ArrayLike) -> Array:
    """(1 - a) x + a y."""
    x, y, a = (np.asarray(v, dtype=np.float64) for v in (x, y, a))
    return (1.0 - a) * x + a * y


def halflife_to_damping(halflife: ArrayLike, eps: float = 1e-5) -> Array:
    """damping = 4 ln2 / (halflife + eps)."""
    return (4.0 * LN2) / (_nonneg(halflife, "halflife") + eps)


def damping_to_halflife(damping: ArrayLike, eps: float = 1e-5) -> Array:
    """halflife = 4 ln2 / (damping + eps)."""
    return (4.0 * LN2) / (_nonneg(damping, "damping") + eps)


def frequency_to_stiffness(frequency: ArrayLike) -> Array:
    """stiffness = (2 pi f)^2."""
    return np.square(2.0 * math.pi * _nonneg(frequency, "frequency"))


def stiffness_to_frequency(stiffness: ArrayLike) -> Array:
    """f = sqrt(stiffness) / (2 pi)."""
    return np.sqrt(_nonneg(stiffness, "stiffness")) / (2.0 * math.pi)


def critical_halflife(frequency: ArrayLike, eps: float = 1e-5) -> Array:
    """Half-life making a spring of this frequency critically damped: damping_to_halflife(sqrt(4 s))."""
    return damping_to_halflife(np.sqrt(frequency_to_stiffness(frequency) * 4.0), eps)


def critical_frequency(halflife: ArrayLike, eps: float = 1e-5) -> Array:
    """Frequency making a spring of this half-life critically damped: stiffness_to_frequency(d^2 / 4)."""
    return stiffness_to_frequency(np.square(halflife_to_damping(halflife, eps)) / 4.0)


def damping_ratio_to_stiffness(ratio: ArrayLike, damping: ArrayLike) -> Array:
    """stiffness = (damping / (2 ratio))^2 (ratio 1 = critical, < 1 under-, > 1 over-damped)."""
    r = _arr(ratio, "ratio")
    if np.any(r <= 0.0):
        raise SpringError("damping ratio must be > 0")
    return np.square(_nonneg(damping, "damping") / (2.0 * r))


def damping_ratio_to_damping(ratio: ArrayLike, stiffness: ArrayLike) -> Array:
    """damping = 2 ratio sqrt(stiffness)."""
    return 2.0 * _nonneg(ratio, "ratio") * np.sqrt(_nonneg(stiffness, "stiffness"))


def halflife_to_gain(halflife: ArrayLike, dt: ArrayLike, eps: float = 1e-5, approx: bool = False) -> Array:
    """Per-step lerp gain of a damper: 1 - exp(-ln2 dt / (halflife + eps)) (0 half-life -> gain 1)."""
    h = _nonneg(halflife, "halflife")
    z = (LN2 * _dt(dt)) / (h + eps)
    return 1.0 - (fast_negexp(z) if approx else np.exp(-z))


def gain_to_halflife(gain: ArrayLike, dt: ArrayLike) -> Array:
    """Half-life whose damper moves a fraction ``gain`` of the way per dt: -ln2 dt / ln(1 - gain)."""
    g = _arr(gain, "gain")
    if np.any((g <= 0.0) | (g > 1.0)):
        raise SpringError("gain must be in (0, 1]")
    with np.errstate(divide="ignore"):
        return np.where(g >= 1.0, 0.0, -math.log(2.0) * _dt(dt) / np.log1p(-np.minimum(g, 1.0 - 1e-300)))


def damper_exact(
    x: ArrayLike, g: ArrayLike, halflife: ArrayLike, dt: ArrayLike, eps: float = 1e-5, approx: bool = False
) -> Array:
    """x + (g - x) (1 - exp(-ln2 dt / (halflife + eps))): exponential decay toward g with a half-life."""
    x, g = _arr(x, "x"), _arr(g, "g")
    return lerp(x, g, halflife_to_gain(halflife, dt, eps, approx))


# ----------------------------------------------------------------------------------------------
# exact spring-damper


def spring_damper_exact(
    x: ArrayLike,
    v: ArrayLike,
    x_goal: ArrayLike,
    v_goal: ArrayLike,
    stiffness: ArrayLike,
    damping: ArrayLike,
    dt: ArrayLike,
    eps: float = 1e-5,
    approx: bool = False,
    *,
    out: Out = None,
) -> tuple[Array, Array]:
    """Closed-form step of x'' = stiffness (x_goal - x) + damping (v_goal - v) over dt -> (x, v).

    Under-, critically and over-damped elements are selected per element. With ``approx=False``
    the solution is exact (stable at the regime boundaries, ``stiffness == 0`` allowed); with
    ``approx=True`` it is the reference's version (fast_negexp/fast_atan, eps in the goal offset
    ``c = x_goal + damping v_goal / (stiffness + eps)``). float32 inputs compute in float32;
    ``out=(x_out, v_out)`` receives the result (see the module docstring).
    """
    values = (x, v, x_goal, v_goal, stiffness, damping, dt)
    dtype = _result_dtype(values)
    shape, flat = _flat(values, dtype)
    xo, vo = _outputs(out, shape, dtype)
    fx, fv, fx_goal, fv_goal, fstiffness, fdamping, fdt = flat
    kernel = _core.spring_damper_exact_f32 if dtype is np.float32 else _core.spring_damper_exact
    if not kernel(
        fx, fv, fx_goal, fv_goal, fstiffness, fdamping, fdt, bool(approx), float(eps), xo.reshape(-1), vo.reshape(-1)
    ):
        raise _invalid(
            list(
                zip(
                    ("x", "v", "x_goal", "v_goal", "stiffness", "damping", "dt"),
                    values,
                    ("finite",) * 4 + ("nonneg", "nonneg", "positive"),
                )
            )
        )
    return xo, vo


#: The reference's name for :func:`spring_damper_exact` (stiffness/damping parametrisation).
spring_damper_exact_stiffness_damping = spring_damper_exact


def spring_damper_exact_coefficients(stiffness: ArrayLike, damping: ArrayLike, dt: ArrayLike) -> Array:
    """The exact step is linear: [x', v'] = M @ [x, v, x_goal, v_goal]; returns M with shape [..., 2, 4]."""
    s, d, t = _nonneg(stiffness, "stiffness"), _nonneg(damping, "damping"), _dt(dt)
    shape = np.broadcast_shapes(s.shape, d.shape, t.shape)
    m = np.empty(shape + (2, 4))
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1.0
        x, v, x_goal, v_goal = (np.full(shape, e[j]) for j in range(4))
        xs, vs = spring_damper_exact(x, v, x_goal, v_goal, s, d, t)
        m[..., 0, i], m[..., 1, i] = xs, vs
    return m

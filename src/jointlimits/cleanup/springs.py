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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._native import _core
from ..errors import JointLimitsError

__all__ = [
    "SpringError", "LN2", "fast_negexp", "fast_atan", "lerp",
    "halflife_to_damping", "damping_to_halflife", "frequency_to_stiffness", "stiffness_to_frequency",
    "critical_halflife", "critical_frequency", "damping_ratio_to_stiffness", "damping_ratio_to_damping",
    "halflife_to_gain", "gain_to_halflife",
    "damper_exact", "spring_damper_exact", "spring_damper_exact_stiffness_damping",
    "spring_damper_exact_coefficients",
    "tracking_spring_update", "tracking_spring_update_no_acceleration",
    "tracking_spring_update_no_velocity_acceleration",
    "tracking_spring_update_improved", "tracking_spring_update_no_acceleration_improved",
    "tracking_spring_update_no_velocity_acceleration_improved",
    "tracking_spring_update_exact", "tracking_spring_update_no_acceleration_exact",
    "tracking_spring_update_no_velocity_acceleration_exact",
    "tracking_target_velocity", "tracking_target_acceleration", "tracking_modes",
    "track_signal", "MODE_POSITION", "MODE_VELOCITY", "MODE_FULL",
]

Array = NDArray[np.float64]
#: ``out=`` of the one-step functions: (x_out, v_out) or None for new arrays.
Out = tuple[np.ndarray, np.ndarray] | None

#: ln(2) with the digits the reference uses (0.69314718056).
LN2 = 0.69314718056
#: Per-frame modes of a tracking spring around a discontinuity (see :func:`tracking_modes`).
MODE_POSITION = 0  # discontinuity frame: position target only (``*_no_velocity_acceleration``)
MODE_VELOCITY = 1  # frame after it: position and velocity targets (``*_no_acceleration``)
MODE_FULL = 2      # normal frame: position, velocity and acceleration targets


class SpringError(JointLimitsError, ValueError):
    """Invalid input to a spring function (NaN, non-positive dt, shapes that do not match, ...)."""


# ----------------------------------------------------------------------------------------------
# validation helpers


def _arr(x: ArrayLike, name: str) -> Array:
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise SpringError(f"{name} contains NaN or infinite values")
    return a


def _dt(dt: ArrayLike, name: str = "dt") -> Array:
    a = _arr(dt, name)
    if np.any(a <= 0.0):
        raise SpringError(f"{name} must be > 0, got min {float(np.min(a))!r}")
    return a


def _nonneg(x: ArrayLike, name: str) -> Array:
    a = _arr(x, name)
    if np.any(a < 0.0):
        raise SpringError(f"{name} must be >= 0, got min {float(np.min(a))!r}")
    return a



def _result_dtype(values: Sequence[ArrayLike]) -> type:
    """float32 when every numpy input (array or numpy scalar) is float32 and there is one, else float64.
    Python numbers take the other inputs' type; anything else (lists, other dtypes) means float64."""
    f32 = False
    for v in values:
        if isinstance(v, (np.ndarray, np.generic)):
            if v.dtype != np.float32:
                return np.float64
            f32 = True
        elif not isinstance(v, (float, int)):
            return np.float64
    return np.float32 if f32 else np.float64


def _flat(values: Sequence[ArrayLike], dtype: type = np.float64) -> tuple[tuple[int, ...], list[Array]]:
    """The broadcast shape of ``values`` and each as a flat ``dtype`` array of 1 or n elements (no
    copy for scalars and arrays already of that shape and dtype)."""
    arrs = [np.asarray(v, dtype=dtype) for v in values]
    shape = arrs[0].shape
    if any(a.shape != shape for a in arrs):
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrs))
        except ValueError as exc:
            raise SpringError(f"shapes do not broadcast: {[a.shape for a in arrs]}") from exc
    n = math.prod(shape)
    flat = []
    for a in arrs:
        if a.size == 1 and n != 1:
            flat.append(a.reshape(1))
        elif a.shape == shape:
            flat.append(np.ascontiguousarray(a).reshape(-1))
        else:
            flat.append(np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1))
    return shape, flat


def _outputs(out: Out, shape: tuple[int, ...],
             dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """(x_out, v_out): new arrays, or ``out`` checked (shape, dtype, C order, writeable, distinct)."""
    if out is None:
        return np.empty(shape, dtype), np.empty(shape, dtype)
    if not isinstance(out, tuple) or len(out) != 2:
        raise SpringError("out must be a tuple (x_out, v_out) of two arrays")
    for name, a in zip(("x_out", "v_out"), out):
        if not isinstance(a, np.ndarray):
            raise SpringError(f"out: {name} must be a numpy array, got {type(a).__name__}")
        if a.dtype != dtype or a.shape != shape:
            raise SpringError(f"out: {name} must have shape {shape} and dtype {np.dtype(dtype).name}, "
                              f"got {a.shape} {a.dtype.name}")
        if not (a.flags.c_contiguous and a.flags.writeable):
            raise SpringError(f"out: {name} must be C-contiguous and writeable")
    if np.may_share_memory(out[0], out[1]):
        raise SpringError("out: x_out and v_out must not share memory")
    return out


def _invalid(checks: Sequence[tuple[str, ArrayLike, str]]) -> SpringError:
    """The precise error for the first invalid input (kind: 'finite', 'nonneg', 'positive', 'gain')."""
    for name, value, kind in checks:
        if kind == "positive":
            _dt(value, name)
        elif kind == "nonneg":
            _nonneg(value, name)
        else:
            a = _arr(value, name)
            if kind == "gain" and np.any((a < 0.0) | (a > 1.0)):
                return SpringError(f"{name} must be in [0, 1]")
    return SpringError("invalid spring input")


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


def damper_exact(x: ArrayLike, g: ArrayLike, halflife: ArrayLike, dt: ArrayLike, eps: float = 1e-5,
                 approx: bool = False) -> Array:
    """x + (g - x) (1 - exp(-ln2 dt / (halflife + eps))): exponential decay toward g with a half-life."""
    x, g = _arr(x, "x"), _arr(g, "g")
    return lerp(x, g, halflife_to_gain(halflife, dt, eps, approx))


# ----------------------------------------------------------------------------------------------
# exact spring-damper


def spring_damper_exact(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike, v_goal: ArrayLike,
                        stiffness: ArrayLike, damping: ArrayLike, dt: ArrayLike, eps: float = 1e-5,
                        approx: bool = False, *, out: Out = None
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
    kernel = _core.spring_damper_exact_f32 if dtype is np.float32 else _core.spring_damper_exact
    if not kernel(*flat, bool(approx), float(eps), xo.reshape(-1), vo.reshape(-1)):
        raise _invalid(list(zip(("x", "v", "x_goal", "v_goal", "stiffness", "damping", "dt"), values,
                                ("finite",) * 4 + ("nonneg", "nonneg", "positive"))))
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
        xs, vs = spring_damper_exact(*(np.full(shape, e[j]) for j in range(4)), s, d, t)
        m[..., 0, i], m[..., 1, i] = xs, vs
    return m


# ----------------------------------------------------------------------------------------------
# tracking springs, one step (lerp gains)


def _tracking(values: tuple, has_v: bool, has_a: bool, halflives: bool, approx: bool = False,
              out: Out = None) -> tuple[Array, Array]:
    # values: x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt (absent terms as 0.0)
    dtype = _result_dtype(values)
    shape, flat = _flat(values, dtype)
    xo, vo = _outputs(out, shape, dtype)
    kernel = _core.tracking_update_f32 if dtype is np.float32 else _core.tracking_update
    if not kernel(*flat, has_v, has_a, halflives, approx, xo.reshape(-1), vo.reshape(-1)):
        kind = "nonneg" if halflives else "finite"
        raise _invalid(list(zip(("x", "v", "x_goal", "v_goal", "a_goal", "x_halflife" if halflives else "x_gain",
                                 "v_halflife" if halflives else "v_gain", "a_halflife" if halflives else "a_gain",
                                 "dt"), values, ("finite",) * 5 + (kind,) * 3 + ("positive",))))
    return xo, vo


def tracking_spring_update(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike, v_goal: ArrayLike, a_goal: ArrayLike,
                           x_gain: ArrayLike, v_gain: ArrayLike, a_gain: ArrayLike,
                           dt: ArrayLike, *, out: Out = None) -> tuple[Array, Array]:
    """v <- lerp(v, v + a_goal dt, a_gain); v <- lerp(v, v_goal, v_gain);
    v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v."""
    return _tracking((x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt), True, True, False, out=out)


def tracking_spring_update_no_acceleration(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike, v_goal: ArrayLike,
                                           x_gain: ArrayLike, v_gain: ArrayLike,
                                           dt: ArrayLike, *, out: Out = None) -> tuple[Array, Array]:
    """v <- lerp(v, v_goal, v_gain); v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v."""
    return _tracking((x, v, x_goal, v_goal, 0.0, x_gain, v_gain, 0.0, dt), True, False, False, out=out)


def tracking_spring_update_no_velocity_acceleration(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike,
                                                    x_gain: ArrayLike, dt: ArrayLike, *,
                                                    out: Out = None) -> tuple[Array, Array]:
    """v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v."""
    return _tracking((x, v, x_goal, 0.0, 0.0, x_gain, 0.0, 0.0, dt), False, False, False, out=out)


# tracking springs, one step (half-lives)


def tracking_spring_update_improved(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike, v_goal: ArrayLike,
                                    a_goal: ArrayLike, x_halflife: ArrayLike, v_halflife: ArrayLike,
                                    a_halflife: ArrayLike, dt: ArrayLike,
                                    approx: bool = False, *, out: Out = None) -> tuple[Array, Array]:
    """tracking_spring_update with each lerp replaced by damper_exact(., ., halflife, dt)."""
    return _tracking((x, v, x_goal, v_goal, a_goal, x_halflife, v_halflife, a_halflife, dt), True, True, True,
                     approx, out=out)


def tracking_spring_update_no_acceleration_improved(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike,
                                                    v_goal: ArrayLike, x_halflife: ArrayLike,
                                                    v_halflife: ArrayLike, dt: ArrayLike,
                                                    approx: bool = False, *, out: Out = None) -> tuple[Array, Array]:
    """tracking_spring_update_no_acceleration with dampers (half-lives) instead of lerp gains."""
    return _tracking((x, v, x_goal, v_goal, 0.0, x_halflife, v_halflife, 0.0, dt), True, False, True, approx, out=out)


def tracking_spring_update_no_velocity_acceleration_improved(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike,
                                                             x_halflife: ArrayLike, dt: ArrayLike,
                                                             approx: bool = False, *,
                                                             out: Out = None) -> tuple[Array, Array]:
    """tracking_spring_update_no_velocity_acceleration with a damper (half-life) instead of a lerp gain."""
    return _tracking((x, v, x_goal, 0.0, 0.0, x_halflife, 0.0, 0.0, dt), False, False, True, approx, out=out)


# tracking springs, one step (dt-invariant)


def _tracking_exact(values: tuple, has_v: bool, has_a: bool, approx: bool,
                    out: Out = None) -> tuple[Array, Array]:
    # values: x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt, gain_dt (absent terms as 0.0)
    dtype = _result_dtype(values)
    shape, flat = _flat(values, dtype)
    xo, vo = _outputs(out, shape, dtype)
    kernel = _core.tracking_update_exact_f32 if dtype is np.float32 else _core.tracking_update_exact
    if not kernel(*flat, has_v, has_a, approx, 1e-5, xo.reshape(-1), vo.reshape(-1)):
        raise _invalid(list(zip(("x", "v", "x_goal", "v_goal", "a_goal", "x_gain", "v_gain", "a_gain", "dt",
                                 "gain_dt"), values, ("finite",) * 5 + ("gain",) * 3 + ("positive",) * 2)))
    return xo, vo


def tracking_spring_update_exact(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike, v_goal: ArrayLike,
                                 a_goal: ArrayLike, x_gain: ArrayLike, v_gain: ArrayLike, a_gain: ArrayLike,
                                 dt: ArrayLike, gain_dt: ArrayLike, approx: bool = False, *,
                                 out: Out = None) -> tuple[Array, Array]:
    """spring_damper_exact with s = xg/gdt^2, d = (1 - (1-vg)(1-xg))/gdt, goal x_goal,
    velocity goal (vg(1-xg)/gdt v_goal + ag(1-vg)(1-xg) a_goal)/d."""
    return _tracking_exact((x, v, x_goal, v_goal, a_goal, x_gain, v_gain, a_gain, dt, gain_dt), True, True, approx,
                           out=out)


def tracking_spring_update_no_acceleration_exact(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike,
                                                 v_goal: ArrayLike, x_gain: ArrayLike, v_gain: ArrayLike,
                                                 dt: ArrayLike, gain_dt: ArrayLike,
                                                 approx: bool = False, *, out: Out = None) -> tuple[Array, Array]:
    """tracking_spring_update_exact without the acceleration term (velocity goal vg(1-xg)/gdt v_goal / d)."""
    return _tracking_exact((x, v, x_goal, v_goal, 0.0, x_gain, v_gain, 0.0, dt, gain_dt), True, False, approx, out=out)


def tracking_spring_update_no_velocity_acceleration_exact(x: ArrayLike, v: ArrayLike, x_goal: ArrayLike,
                                                          x_gain: ArrayLike, dt: ArrayLike,
                                                          gain_dt: ArrayLike,
                                                          approx: bool = False, *,
                                                          out: Out = None) -> tuple[Array, Array]:
    """spring_damper_exact with s = xg/gdt^2, d = xg/gdt, velocity goal 0."""
    return _tracking_exact((x, v, x_goal, 0.0, 0.0, x_gain, 0.0, 0.0, dt, gain_dt), False, False, approx, out=out)


# ----------------------------------------------------------------------------------------------
# whole signals


def _signal(x: ArrayLike, name: str = "signal") -> Array:
    a = _arr(x, name)
    if a.ndim == 0 or a.shape[0] == 0:
        raise SpringError(f"{name} must have shape [T, ...] with T >= 1, got {a.shape}")
    return a


def _frame_dt(dt: ArrayLike, T: int) -> Array:
    d = _dt(dt)
    if d.ndim == 0:
        return np.full(T, float(d))
    if d.shape != (T,):
        raise SpringError(f"dt must be a scalar or have shape [{T}], got {d.shape}")
    return d


def _bshape(d: Array, ndim: int) -> Array:
    return d.reshape(d.shape + (1,) * (ndim - 1))


def _cut_array(cuts: Sequence[int] | NDArray[np.integer] | None, T: int) -> NDArray[np.int64]:
    if cuts is None:
        return np.zeros(0, np.int64)
    c = np.asarray(cuts)
    if c.size and c.dtype.kind not in "iu":
        if not np.all(np.isfinite(c)) or np.any(c != np.round(c)):
            raise SpringError(f"discontinuity frames must be integers, got {cuts!r}")
    c = np.unique(c.astype(np.int64).reshape(-1))
    if c.size and (c[0] < 0 or c[-1] >= T):
        raise SpringError(f"discontinuity frames must be in [0, {T - 1}], got {c.tolist()}")
    return c


def tracking_target_velocity(x: ArrayLike, dt: ArrayLike, cuts: Sequence[int] | None = None) -> Array:
    """v[i] = (x[i] - x[i-1]) / dt[i] along axis 0, with x[-1] = x[0]; 0 at discontinuity frames ``cuts``."""
    x = _signal(x, "x")
    d = _bshape(_frame_dt(dt, x.shape[0]), x.ndim)
    prev = np.concatenate([x[:1], x[:-1]], axis=0)
    v = (x - prev) / d
    c = _cut_array(cuts, x.shape[0])
    if c.size:
        v[c] = 0.0
    return v


def tracking_target_acceleration(x: ArrayLike, dt: ArrayLike, cuts: Sequence[int] | None = None,
                                 per_frame_dt: bool = False) -> Array:
    """a[i] = ((x[i] - x[i-1])/dt[i] - (x[i-1] - x[i-2])/dt[i]) / dt[i], with x[-2] = x[-1] = x[0];
    0 at cuts and the frame after.

    The reference divides both differences by dt[i]; ``per_frame_dt=True`` divides the older one by
    dt[i-1] instead (the consistent difference when dt varies).
    """
    x = _signal(x, "x")
    dd = _frame_dt(dt, x.shape[0])
    d = _bshape(dd, x.ndim)
    d_prev = _bshape(np.concatenate([dd[:1], dd[:-1]]), x.ndim) if per_frame_dt else d
    p1 = np.concatenate([x[:1], x[:-1]], axis=0)
    p2 = np.concatenate([x[:1], x[:1], x[:-2]], axis=0)[: x.shape[0]]
    a = ((x - p1) / d - (p1 - p2) / d_prev) / d
    c = _cut_array(cuts, x.shape[0])
    if c.size:
        a[c] = 0.0
        a[c[c + 1 < x.shape[0]] + 1] = 0.0
    return a


def tracking_modes(num_frames: int, cuts: Sequence[int] | NDArray[np.integer] | None = None) -> NDArray[np.int8]:
    """Per-frame mode: 0 at discontinuity frames, 1 on the frame after (unless it is one too), 2 elsewhere."""
    if num_frames < 0:
        raise SpringError("num_frames must be >= 0")
    m = np.full(num_frames, MODE_FULL, np.int8)
    c = _cut_array(cuts, max(num_frames, 1)) if num_frames else np.zeros(0, np.int64)
    nxt = c + 1
    m[nxt[nxt < num_frames]] = MODE_VELOCITY
    m[c] = MODE_POSITION
    return m


def track_errors(vt: ArrayLike, dt: ArrayLike, x_gain: ArrayLike, v_gain: ArrayLike, a_gain: ArrayLike = 1.0, *,
                 modes: ArrayLike | None = None, adt: ArrayLike | None = None, e0: ArrayLike = 0.0,
                 ev0: ArrayLike = 0.0, v_max: float | None = None, a_max: float | None = None,
                 snap: float = 0.0) -> tuple[Array, Array]:
    """Lerp tracking spring in error form: returns (e, ev) with x = goal + e and v = vt + ev per frame.

    ``vt[i] = (goal[i] - goal[i-1]) / dt[i]`` (``vt`` of frame -1 is 0) are the velocity targets and
    the exact increments of the tracked signal, ``adt`` (default ``vt[i] - vt[i-1]``) the acceleration
    targets times dt, gains are scalars or per frame ``[T]``. Exactly the lerp-family recursion of the
    seed, written so that a converged state stays exactly zero (bit-exact tracking); ``snap`` > 0 sets
    states with |e| and |ev dt| below it to exactly zero.
    """
    vt = _signal(vt, "vt")
    T = vt.shape[0]
    flat = vt.reshape(T, -1)
    C = flat.shape[1]
    h = _frame_dt(dt, T)
    gains = []
    for name, g in (("x_gain", x_gain), ("v_gain", v_gain), ("a_gain", a_gain)):
        a = _arr(g, name)
        if np.any((a < 0.0) | (a > 1.0)):
            raise SpringError(f"{name} must be in [0, 1]")
        if a.ndim == 0:
            a = np.full(T, float(a))
        elif a.shape != (T,):
            raise SpringError(f"{name} must be a scalar or have shape [{T}], got {a.shape}")
        gains.append(np.ascontiguousarray(a))
    m = np.full(T, MODE_FULL, np.int8) if modes is None else np.asarray(modes, np.int8)
    if m.shape != (T,) or np.any((m < 0) | (m > 2)):
        raise SpringError(f"modes must be [{T}] values in 0..2")
    if adt is None:
        adt_flat, use_adt = np.zeros((1, 1)), False
    else:
        adt_flat, use_adt = np.ascontiguousarray(_arr(adt, "adt").reshape(T, -1)), True
        if adt_flat.shape != flat.shape:
            raise SpringError(f"adt must have the shape of vt {vt.shape}")
    e0a = np.ascontiguousarray(np.broadcast_to(_arr(e0, "e0"), vt.shape[1:]).reshape(C))
    ev0a = np.ascontiguousarray(np.broadcast_to(_arr(ev0, "ev0"), vt.shape[1:]).reshape(C))
    vmax = math.inf if v_max is None else float(v_max)
    amax = math.inf if a_max is None else float(a_max)
    if not (vmax > 0 and amax > 0):
        raise SpringError("v_max and a_max must be > 0")
    out_e = np.empty((T, C))
    out_ev = np.empty((T, C))
    _core.track_errors(e0a, ev0a, np.ascontiguousarray(flat), adt_flat, use_adt, np.ascontiguousarray(m),
                       gains[0], gains[1], gains[2], np.ascontiguousarray(h), vmax, amax, float(snap), out_e, out_ev)
    return out_e.reshape(vt.shape), out_ev.reshape(vt.shape)


def track_signal(goal: ArrayLike, dt: ArrayLike, *, method: str = "improved",
                 x_gain: float = 0.01, v_gain: float = 0.2, a_gain: float = 1.0,
                 x_halflife: float = 1.0, v_halflife: float = 0.05, a_halflife: float = 0.0,
                 gain_dt: float = 1.0 / 60.0, cuts: Sequence[int] | None = None, modes: ArrayLike | None = None,
                 v_goal: ArrayLike | None = None, a_goal: ArrayLike | None = None,
                 v_max: float | None = None, a_max: float | None = None,
                 x0: ArrayLike | None = None, v0: ArrayLike | None = None, approx: bool = False,
                 snap: float = 0.0) -> tuple[Array, Array]:
    """Run a tracking spring over a signal ``goal[T, ...]`` frame by frame (vectorised over channels) -> (x, v).

    ``method``: ``"lerp"`` (gains per frame), ``"improved"`` (half-lives) or ``"exact"`` (gains emulated at
    ``gain_dt``, dt-invariant). Targets default to :func:`tracking_target_velocity` /
    :func:`tracking_target_acceleration` of ``goal``. Discontinuities: ``cuts`` (frames where a new
    segment starts) or explicit per-frame ``modes`` (see :func:`tracking_modes`); on those frames the
    velocity/acceleration targets are skipped. ``v_max`` / ``a_max`` clip the targets. The spring starts
    at ``x0`` (default ``goal[0]``) with velocity ``v0`` (default 0).
    """
    g = _signal(goal, "goal")
    T = g.shape[0]
    h = _frame_dt(dt, T)
    hb = _bshape(h, g.ndim)
    vt = tracking_target_velocity(g, h) if v_goal is None else _arr(v_goal, "v_goal")
    at = tracking_target_acceleration(g, h) if a_goal is None else _arr(a_goal, "a_goal")
    if vt.shape != g.shape or at.shape != g.shape:
        raise SpringError(f"v_goal/a_goal must have the shape of goal {g.shape}")
    if modes is not None and cuts is not None:
        raise SpringError("give either cuts or modes, not both")
    m = tracking_modes(T, cuts) if modes is None else np.asarray(modes, np.int8)
    if m.shape != (T,):
        raise SpringError(f"modes must have shape [{T}]")
    x_init = g[0] if x0 is None else np.broadcast_to(_arr(x0, "x0"), g.shape[1:])
    v_init = np.zeros(g.shape[1:]) if v0 is None else np.broadcast_to(_arr(v0, "v0"), g.shape[1:])
    if method in ("lerp", "improved"):
        if method == "lerp":
            xg, vg, ag = x_gain, v_gain, a_gain
        else:
            xg, vg, ag = (halflife_to_gain(hl, h, approx=approx) for hl in (x_halflife, v_halflife, a_halflife))
        # error state relative to the exact finite differences of the goal (vt of frame -1 is 0)
        exact_vt = tracking_target_velocity(g, h)
        e, ev = track_errors(exact_vt, h, xg, vg, ag, modes=m, adt=at * hb, e0=x_init - g[0], ev0=v_init,
                             v_max=v_max, a_max=a_max, snap=snap)
        if v_goal is not None:
            # velocity targets differ from the exact differences: fold the difference into the blend
            if not np.array_equal(vt, exact_vt):
                return _track_loop(g, vt, at, h, m, method, xg, vg, ag, x_init, v_init, v_max, a_max, gain_dt,
                                   approx)
        return g + e, exact_vt + ev
    if method == "exact":
        return _track_loop(g, vt, at, h, m, method, x_gain, v_gain, a_gain, x_init, v_init, v_max, a_max, gain_dt,
                           approx)
    raise SpringError(f"method must be 'lerp', 'improved' or 'exact', got {method!r}")


def _track_loop(g: Array, vt: Array, at: Array, h: Array, m: NDArray[np.int8], method: str,
                xg: ArrayLike, vg: ArrayLike, ag: ArrayLike, x: Array, v: Array, v_max: float | None,
                a_max: float | None, gain_dt: float, approx: bool) -> tuple[Array, Array]:
    # Plain frame loop on the absolute state (vectorised over channels).
    T = g.shape[0]
    xs, vs = np.empty_like(g), np.empty_like(g)
    xg, vg, ag = (np.broadcast_to(np.asarray(a, np.float64), (T,)) for a in (xg, vg, ag))
    if v_max is not None:
        vt = np.clip(vt, -v_max, v_max)
    if a_max is not None:
        at = np.clip(at, -a_max, a_max)
    x, v = np.array(x, np.float64), np.array(v, np.float64)
    for i in range(T):
        if method == "exact":
            if m[i] == MODE_FULL:
                x, v = tracking_spring_update_exact(x, v, g[i], vt[i], at[i], xg[i], vg[i], ag[i], h[i], gain_dt,
                                                    approx=approx)
            elif m[i] == MODE_VELOCITY:
                x, v = tracking_spring_update_no_acceleration_exact(x, v, g[i], vt[i], xg[i], vg[i], h[i], gain_dt,
                                                                    approx=approx)
            else:
                x, v = tracking_spring_update_no_velocity_acceleration_exact(x, v, g[i], xg[i], h[i], gain_dt,
                                                                             approx=approx)
        else:
            if m[i] == MODE_FULL:
                x, v = tracking_spring_update(x, v, g[i], vt[i], at[i], xg[i], vg[i], ag[i], h[i])
            elif m[i] == MODE_VELOCITY:
                x, v = tracking_spring_update_no_acceleration(x, v, g[i], vt[i], xg[i], vg[i], h[i])
            else:
                x, v = tracking_spring_update_no_velocity_acceleration(x, v, g[i], xg[i], h[i])
        xs[i], vs[i] = x, v
    return xs, vs

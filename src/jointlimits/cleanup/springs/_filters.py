"""Tracking springs over whole signals: target velocities and accelerations, per-frame modes around
discontinuities, tracking errors and :func:`track_signal`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._native import _core
from ._base import MODE_FULL, MODE_POSITION, MODE_VELOCITY, Array, SpringError, _arr, _dt
from ._family import (
    tracking_spring_update,
    tracking_spring_update_exact,
    tracking_spring_update_no_acceleration,
    tracking_spring_update_no_acceleration_exact,
    tracking_spring_update_no_velocity_acceleration,
    tracking_spring_update_no_velocity_acceleration_exact,
)
from ._one_step import halflife_to_gain

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


def tracking_target_acceleration(
    x: ArrayLike, dt: ArrayLike, cuts: Sequence[int] | None = None, per_frame_dt: bool = False
) -> Array:
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


def track_errors(
    vt: ArrayLike,
    dt: ArrayLike,
    x_gain: ArrayLike,
    v_gain: ArrayLike,
    a_gain: ArrayLike = 1.0,
    *,
    modes: ArrayLike | None = None,
    adt: ArrayLike | None = None,
    e0: ArrayLike = 0.0,
    ev0: ArrayLike = 0.0,
    v_max: float | None = None,
    a_max: float | None = None,
    snap: float = 0.0,
) -> tuple[Array, Array]:
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
    _core.track_errors(
        e0a,
        ev0a,
        np.ascontiguousarray(flat),
        adt_flat,
        use_adt,
        np.ascontiguousarray(m),
        gains[0],
        gains[1],
        gains[2],
        np.ascontiguousarray(h),
        vmax,
        amax,
        float(snap),
        out_e,
        out_ev,
    )
    return out_e.reshape(vt.shape), out_ev.reshape(vt.shape)


def track_signal(
    goal: ArrayLike,
    dt: ArrayLike,
    *,
    method: str = "improved",
    x_gain: float = 0.01,
    v_gain: float = 0.2,
    a_gain: float = 1.0,
    x_halflife: float = 1.0,
    v_halflife: float = 0.05,
    a_halflife: float = 0.0,
    gain_dt: float = 1.0 / 60.0,
    cuts: Sequence[int] | None = None,
    modes: ArrayLike | None = None,
    v_goal: ArrayLike | None = None,
    a_goal: ArrayLike | None = None,
    v_max: float | None = None,
    a_max: float | None = None,
    x0: ArrayLike | None = None,
    v0: ArrayLike | None = None,
    approx: bool = False,
    snap: float = 0.0,
) -> tuple[Array, Array]:
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
        xg: ArrayLike
        vg: ArrayLike
        ag: ArrayLike
        if method == "lerp":
            xg, vg, ag = x_gain, v_gain, a_gain
        else:
            xg, vg, ag = (halflife_to_gain(hl, h, approx=approx) for hl in (x_halflife, v_halflife, a_halflife))
        # error state relative to the exact finite differences of the goal (vt of frame -1 is 0)
        exact_vt = tracking_target_velocity(g, h)
        e, ev = track_errors(
            exact_vt,
            h,
            xg,
            vg,
            ag,
            modes=m,
            adt=at * hb,
            e0=x_init - g[0],
            ev0=v_init,
            v_max=v_max,
            a_max=a_max,
            snap=snap,
        )
        if v_goal is not None:
            # velocity targets differ from the exact differences: fold the difference into the blend
            if not np.array_equal(vt, exact_vt):
                return _track_loop(g, vt, at, h, m, method, xg, vg, ag, x_init, v_init, v_max, a_max, gain_dt, approx)
        return g + e, exact_vt + ev
    if method == "exact":
        return _track_loop(
            g, vt, at, h, m, method, x_gain, v_gain, a_gain, x_init, v_init, v_max, a_max, gain_dt, approx
        )
    raise SpringError(f"method must be 'lerp', 'improved' or 'exact', got {method!r}")


def _track_loop(
    g: Array,
    vt: Array,
    at: Array,
    h: Array,
    m: NDArray[np.int8],
    method: str,
    xg: ArrayLike,
    vg: ArrayLike,
    ag: ArrayLike,
    x: Array,
    v: Array,
    v_max: float | None,
    a_max: float | None,
    gain_dt: float,
    approx: bool,
) -> tuple[Array, Array]:
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
                x, v = tracking_spring_update_exact(
                    x, v, g[i], vt[i], at[i], xg[i], vg[i], ag[i], h[i], gain_dt, approx=approx
                )
            elif m[i] == MODE_VELOCITY:
                x, v = tracking_spring_update_no_acceleration_exact(
                    x, v, g[i], vt[i], xg[i], vg[i], h[i], gain_dt, approx=approx
                )
            else:
                x, v = tracking_spring_update_no_velocity_acceleration_exact(
                    x, v, g[i], xg[i], h[i], gain_dt, approx=approx
                )
        else:
            if m[i] == MODE_FULL:
                x, v = tracking_spring_update(x, v, g[i], vt[i], at[i], xg[i], vg[i], ag[i], h[i])
            elif m[i] == MODE_VELOCITY:
                x, v = tracking_spring_update_no_acceleration(x, v, g[i], vt[i], xg[i], vg[i], h[i])
            else:
                x, v = tracking_spring_update_no_velocity_acceleration(x, v, g[i], xg[i], h[i])
        xs[i], vs[i] = x, v
    return xs, vs

"""Tests of the float32 kernels, ``out=`` and the scalar-parameter fast path of jointlimits.cleanup.springs.

The one-step functions compute in float32 when every numpy input is float32, write into ``out``
when given, and take a fast path (coefficients once per call) when stiffness, damping, dt and gains
are scalars; the per-element path handles array parameters (mixed regimes). These tests hold the
paths to each other: float32 against float64 at float32 tolerance, fast path against per-element
path at 1e-12 in float64 across the three damping regimes and their boundaries.
"""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.cleanup import springs as S

N = 4000
RNG = np.random.default_rng(7)
X, V, G, Q, A = (RNG.normal(size=N) for _ in range(5))


def _scale(*arrays: np.ndarray) -> float:
    return 1.0 + max(float(np.max(np.abs(a))) for a in arrays)


# regimes for (stiffness, damping): d^2 exact in float32 so that "critical" is critical in both types
REGIMES = {
    "under": (100.0, 4.0),
    "critical": (16.0, 8.0),
    "over": (1.0, 10.0),
    "just under critical": (16.0 * (1 + 1e-9), 8.0),
    "just over critical": (16.0 * (1 - 1e-9), 8.0),
    "no stiffness": (0.0, 3.0),
    "undamped": (9.0, 0.0),
    "tiny stiffness": (1e-13, 2.0),
}


def _tracking_calls(dtype, gains_as_arrays: bool, approx: bool):
    """(name, thunk(out)) for every one-step tracking function on inputs of ``dtype``."""
    x, v, g, q, a = (arr.astype(dtype) for arr in (X, V, G, Q, A))
    lift = (lambda c: np.full(N, c, dtype)) if gains_as_arrays else (lambda c: c)
    dt, gdt = lift(1 / 60), lift(1 / 30)
    kx, kv, ka = lift(0.05), lift(0.3), lift(0.8)
    hx, hv, ha = lift(0.2), lift(0.05), lift(0.0)
    return [
        ("lerp", lambda out=None: S.tracking_spring_update(x, v, g, q, a, kx, kv, ka, dt, out=out)),
        ("lerp no_acc", lambda out=None: S.tracking_spring_update_no_acceleration(x, v, g, q, kx, kv, dt, out=out)),
        (
            "lerp no_vel_acc",
            lambda out=None: S.tracking_spring_update_no_velocity_acceleration(x, v, g, kx, dt, out=out),
        ),
        (
            "improved",
            lambda out=None: S.tracking_spring_update_improved(x, v, g, q, a, hx, hv, ha, dt, approx=approx, out=out),
        ),
        (
            "improved no_acc",
            lambda out=None: S.tracking_spring_update_no_acceleration_improved(
                x, v, g, q, hx, hv, dt, approx=approx, out=out
            ),
        ),
        (
            "improved no_vel_acc",
            lambda out=None: S.tracking_spring_update_no_velocity_acceleration_improved(
                x, v, g, hx, dt, approx=approx, out=out
            ),
        ),
        (
            "exact",
            lambda out=None: S.tracking_spring_update_exact(x, v, g, q, a, kx, kv, ka, dt, gdt, approx=approx, out=out),
        ),
        (
            "exact no_acc",
            lambda out=None: S.tracking_spring_update_no_acceleration_exact(
                x, v, g, q, kx, kv, dt, gdt, approx=approx, out=out
            ),
        ),
        (
            "exact no_vel_acc",
            lambda out=None: S.tracking_spring_update_no_velocity_acceleration_exact(
                x, v, g, kx, dt, gdt, approx=approx, out=out
            ),
        ),
    ]


# ----------------------------------------------------------------------------------------------
# fast path (scalar parameters) == per-element path (array parameters), float64


@pytest.mark.parametrize("approx", [False, True])
@pytest.mark.parametrize("regime", list(REGIMES))
def test_spring_fast_path_equals_per_element(regime: str, approx: bool) -> None:
    s, d = REGIMES[regime]
    for dt in (1 / 60, 0.37):
        fast = S.spring_damper_exact(X, V, G, Q, s, d, dt, approx=approx)
        slow = S.spring_damper_exact(X, V, G, Q, np.full(N, s), np.full(N, d), np.full(N, dt), approx=approx)
        scale = _scale(X, V, G, Q) * (1 + d + np.sqrt(s))
        if approx:  # the reference's goal offset c = x_goal + d v_goal / (s + eps) cancels against x
            scale *= 1 + d / (s + 1e-5)
        for f, p in zip(fast, slow):
            assert np.all(np.isfinite(f))
            np.testing.assert_allclose(f, p, rtol=1e-12, atol=1e-12 * scale, err_msg=f"{regime} approx={approx}")


@pytest.mark.parametrize("approx", [False, True])
def test_tracking_fast_path_equals_per_element(approx: bool) -> None:
    fast = _tracking_calls(np.float64, False, approx)
    slow = _tracking_calls(np.float64, True, approx)
    for (name, f), (_, p) in zip(fast, slow):
        (xf, vf), (xp, vp) = f(), p()
        np.testing.assert_allclose(xf, xp, rtol=1e-12, atol=1e-12 * _scale(xp), err_msg=name)
        np.testing.assert_allclose(vf, vp, rtol=1e-12, atol=1e-12 * _scale(vp), err_msg=name)


def test_fast_path_differs_from_a_wrong_formula() -> None:
    """The comparison above can fail: a perturbed damping changes the result beyond its tolerance."""
    a = S.spring_damper_exact(X, V, G, Q, 100.0, 4.0, 1 / 60)[0]
    b = S.spring_damper_exact(X, V, G, Q, np.full(N, 100.0), np.full(N, 4.0 * (1 + 1e-6)), 1 / 60)[0]
    assert not np.allclose(a, b, rtol=1e-12, atol=1e-12 * _scale(a))


# ----------------------------------------------------------------------------------------------
# float32 == float64 within float32 tolerance


def _mixed_params(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    d = rng.integers(2, 80, n) / 2.0  # d^2 / 4 exact in float32: critical stays critical
    s = d * d / 4 * rng.choice([0.25, 1.0, 4.0], n)
    s[:10], d[10:20] = 0.0, 0.0
    return s, d


@pytest.mark.parametrize("approx", [False, True])
@pytest.mark.parametrize("params", ["scalar", "per element"])
def test_spring_float32_matches_float64(params: str, approx: bool) -> None:
    # approx with s = 0 and d > 0: the reference's c = x_goal + d v_goal / eps (~1e5) cancels against
    # x, hopeless in float32 (the reference's own behaviour); the exact form has no such offset
    if params == "scalar":
        cases = [REGIMES[r] for r in ("under", "critical", "over", "undamped") + (() if approx else ("no stiffness",))]
    else:
        s, d = _mixed_params(N)
        if approx:
            s[:10] = 1.0
        cases = [(s, d)]
    for s, d in cases:
        ref = S.spring_damper_exact(X, V, G, Q, s, d, 1 / 60, approx=approx)
        got = S.spring_damper_exact(
            *(a.astype(np.float32) for a in (X, V, G, Q)),
            np.float32(s) if params == "scalar" else s.astype(np.float32),
            np.float32(d) if params == "scalar" else d.astype(np.float32),
            1 / 60,
            approx=approx,
        )
        assert got[0].dtype == np.float32 and got[1].dtype == np.float32
        scale = _scale(X, V, G, Q) * (1 + np.max(d) + np.sqrt(np.max(s)))
        for g32, g64 in zip(got, ref):
            np.testing.assert_allclose(g32, g64, rtol=1e-5, atol=2e-6 * scale)


@pytest.mark.parametrize("approx", [False, True])
@pytest.mark.parametrize("gains_as_arrays", [False, True])
def test_tracking_float32_matches_float64(gains_as_arrays: bool, approx: bool) -> None:
    for (name, f32), (_, f64) in zip(
        _tracking_calls(np.float32, gains_as_arrays, approx), _tracking_calls(np.float64, gains_as_arrays, approx)
    ):
        (x32, v32), (x64, v64) = f32(), f64()
        assert x32.dtype == np.float32 and v32.dtype == np.float32, name
        np.testing.assert_allclose(x32, x64, rtol=1e-5, atol=1e-5 * _scale(x64), err_msg=name)
        np.testing.assert_allclose(v32, v64, rtol=1e-5, atol=1e-5 * _scale(v64), err_msg=name)


def test_float32_vectorised_per_element_path_matches_scalar_loop() -> None:
    """Array parameters in float32 run a branch-free loop (every regime computed, one selected); with
    outputs aliasing the inputs the scalar loop runs instead. Large dt (sincos arguments beyond the
    series' reduction range) redo their block with the scalar loop."""
    s, d = _mixed_params(N)
    dt = np.full(N, 1 / 60)
    dt[-600:] = 5e3  # w dt up to ~1e5: beyond the float32 reduction range
    args32 = [a.astype(np.float32) for a in (X, V, G, Q, s, d, dt)]
    for approx in (False, True):
        x1, v1 = S.spring_damper_exact(*args32, approx=approx)
        xa, va = args32[0].copy(), args32[1].copy()
        x2, v2 = S.spring_damper_exact(xa, va, *args32[2:], approx=approx, out=(xa, va))
        assert x2 is xa and v2 is va
        ok = np.isfinite(x2)  # the reference's formulas overflow for some huge-dt elements: same in both
        np.testing.assert_array_equal(np.isfinite(x1), ok)
        scale = _scale(X, V, G, Q) * (1 + d + np.sqrt(s)) * np.maximum(1.0, dt)
        if approx:  # the reference's c = x_goal + d v_goal / (s + eps) cancels against x (s = 0: ~1e5)
            scale = scale * (1 + d / (s + 1e-5))
        assert np.all(np.abs(x1 - x2)[ok] <= (1e-5 * scale)[ok])
        assert np.all(np.abs(v1 - v2)[ok] <= (1e-4 * scale * (1 + d + np.sqrt(s)))[ok])


# ----------------------------------------------------------------------------------------------
# dtype rules


def test_result_dtype_rules() -> None:
    x32 = X[:5].astype(np.float32)
    assert S.spring_damper_exact(x32, x32, 0.5, 0.0, 10.0, 2.0, 1 / 60)[0].dtype == np.float32
    assert S.spring_damper_exact(x32, x32, np.float32(0.5), 0.0, 10, 2, 1 / 60)[1].dtype == np.float32
    assert S.spring_damper_exact(x32, X[:5], 0.5, 0.0, 10.0, 2.0, 1 / 60)[0].dtype == np.float64
    assert S.spring_damper_exact(x32, x32, np.float64(0.5), 0.0, 10.0, 2.0, 1 / 60)[0].dtype == np.float64
    assert S.spring_damper_exact(x32, x32.astype(np.float16), 0.5, 0.0, 10.0, 2.0, 1 / 60)[0].dtype == np.float64
    assert S.spring_damper_exact(x32, [0.0] * 5, 0.5, 0.0, 10.0, 2.0, 1 / 60)[0].dtype == np.float64
    assert S.spring_damper_exact(1.0, 2.0, 0.5, 0.0, 10.0, 2.0, 1 / 60)[0].dtype == np.float64
    assert S.tracking_spring_update(x32, x32, x32, 0.0, 0.0, 0.1, 0.2, 1.0, 1 / 60)[0].dtype == np.float32


# ----------------------------------------------------------------------------------------------
# out=


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out_is_written_and_returned(dtype) -> None:
    x, v, g, q = (a.astype(dtype) for a in (X, V, G, Q))
    s, d = _mixed_params(N)
    for params in ((100.0, 4.0), (s.astype(dtype), d.astype(dtype))):
        ref = S.spring_damper_exact(x, v, g, q, *params, 1 / 60)
        out = (np.full(N, np.nan, dtype), np.full(N, np.nan, dtype))
        got = S.spring_damper_exact(x, v, g, q, *params, 1 / 60, out=out)
        assert got[0] is out[0] and got[1] is out[1]
        np.testing.assert_array_equal(out[0], ref[0])
        np.testing.assert_array_equal(out[1], ref[1])
    for name, f in _tracking_calls(dtype, False, False):
        ref = f()
        out = (np.full(N, np.nan, dtype), np.full(N, np.nan, dtype))
        got = f(out=out)
        assert got[0] is out[0] and got[1] is out[1], name
        np.testing.assert_array_equal(out[0], ref[0], err_msg=name)
        np.testing.assert_array_equal(out[1], ref[1], err_msg=name)


def test_out_may_be_the_state_arrays() -> None:
    """out=(x, v) updates the state in place (the kernels read an element before writing it)."""
    for params in ((100.0, 4.0), _mixed_params(N)):
        for approx in (False, True):
            ref = S.spring_damper_exact(X, V, G, Q, *params, 1 / 60, approx=approx)
            x, v = X.copy(), V.copy()
            S.spring_damper_exact(x, v, G, Q, *params, 1 / 60, approx=approx, out=(x, v))
            np.testing.assert_allclose(x, ref[0], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(v, ref[1], rtol=1e-12, atol=1e-12)
    x, v = X.copy(), V.copy()
    ref = S.tracking_spring_update(X, V, G, Q, A, 0.1, 0.2, 1.0, 1 / 60)
    S.tracking_spring_update(x, v, G, Q, A, 0.1, 0.2, 1.0, 1 / 60, out=(x, v))
    np.testing.assert_allclose(x, ref[0], rtol=1e-12, atol=1e-12 * _scale(ref[0]))
    np.testing.assert_allclose(v, ref[1], rtol=1e-12, atol=1e-12 * _scale(ref[1]))


def test_out_2d_broadcast_shape() -> None:
    x = np.zeros((3, 4), np.float32)
    out = (np.empty((3, 4), np.float32), np.empty((3, 4), np.float32))
    xo, vo = S.spring_damper_exact(x, np.float32(1.0), np.arange(4, dtype=np.float32), 0.0, 10.0, 2.0, 0.1, out=out)
    assert xo is out[0] and xo.shape == (3, 4)
    np.testing.assert_allclose(
        xo,
        S.spring_damper_exact(x.astype(np.float64), 1.0, np.arange(4.0), 0.0, 10.0, 2.0, 0.1)[0],
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "bad",
    [
        "wrong shape",
        "wrong dtype",
        "not contiguous",
        "read-only",
        "not a tuple",
        "one array",
        "list",
        "shared",
    ],
)
def test_out_invalid_raises(bad: str) -> None:
    x = X[:8].astype(np.float32)
    good = np.empty(8, np.float32)
    out = {
        "wrong shape": (np.empty(7, np.float32), good),
        "wrong dtype": (np.empty(8, np.float64), good),
        "not contiguous": (np.empty(16, np.float32)[::2], good),
        "read-only": (np.empty(8, np.float32), good),
        "not a tuple": [np.empty(8, np.float32), good],
        "one array": (good,),
        "list": ([0.0] * 8, good),
        "shared": (good, good),
    }[bad]
    if bad == "read-only":
        out[0].flags.writeable = False
    with pytest.raises(S.SpringError):
        S.spring_damper_exact(x, x, x, 0.0, 10.0, 2.0, 1 / 60, out=out)
    with pytest.raises(S.SpringError):
        S.tracking_spring_update_exact(x, x, x, 0.0, 0.0, 0.1, 0.2, 1.0, 1 / 60, 1 / 30, out=out)
    # float64 inputs want float64 outputs
    with pytest.raises(S.SpringError):
        S.spring_damper_exact(x.astype(np.float64), x, x, 0.0, 10.0, 2.0, 1 / 60, out=(good, np.empty(8, np.float32)))


# ----------------------------------------------------------------------------------------------
# validation inside the kernels (fast path checks outputs, then the inputs of a flagged block)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", ["x", "x_goal", "v_goal"])
def test_nan_input_raises_on_every_path(dtype, where: str) -> None:
    for s, d in ((100.0, 4.0), (0.0, 3.0), (16.0, 8.0)):  # incl. no stiffness: x_goal unused there
        for approx in (False, True):
            args = {k: a.astype(dtype).copy() for k, a in (("x", X), ("x_goal", G), ("v_goal", Q))}
            args[where][N // 2] = np.nan
            with pytest.raises(S.SpringError, match=where):
                S.spring_damper_exact(
                    args["x"], V.astype(dtype), args["x_goal"], args["v_goal"], s, d, 1 / 60, approx=approx
                )
    xs = X.astype(dtype).copy()
    xs[-1] = np.inf
    with pytest.raises(S.SpringError, match="x"):
        S.tracking_spring_update(xs, V.astype(dtype), G.astype(dtype), 0.0, 0.0, 0.1, 0.2, 1.0, 1 / 60)


def test_huge_finite_inputs_overflow_without_error() -> None:
    """A non-finite output from finite inputs (float32 overflow) is not an input error."""
    x = np.full(64, 3e38, np.float32)
    xo, vo = S.tracking_spring_update(x, x, -x, 0.0, 0.0, 0.5, 0.0, 0.0, np.float32(1e-3))
    assert xo.dtype == np.float32 and not np.all(np.isfinite(vo))

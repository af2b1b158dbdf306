"""jointlimits.jax: the same functions as jointlimits.torch from one implementation: values equal
the compiled core (float64 and float32), ``check_grads`` passes (forward and reverse mode) inside,
outside and within 1e-4 rad of the boundary, and the functions ``jit`` and ``vmap``."""

from __future__ import annotations

import os

import numpy as np
import pytest

# XLA compiles every function anew (about 55 CPU seconds here): .ci/run runs this module after the
# suite with JL_JAX_TESTS=1, so README's test command keeps its time
if os.environ.get("JL_JAX_TESTS") != "1":
    pytest.skip("the JAX tests need JL_JAX_TESTS=1 (.ci/run sets it)", allow_module_level=True)

jax = pytest.importorskip("jax", reason="needs the [jax] extra: pip install -e '.[jax]'")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from _cases import CASES, IDS, limits_of, points, special  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

from jointlimits.motion import quat  # noqa: E402

#: JAX runs these op by op (slow): every case with JOINTLIMITS_DIFF_FULL=1, else four
QUICK = {"box", "ellipsoid", "kdop-st", "implicit-coupled"}
GRAD_CASES = [c for c, i in zip(CASES, IDS, strict=True) if os.environ.get("JOINTLIMITS_DIFF_FULL") or i in QUICK]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[IDS[CASES.index(c)] for c in GRAD_CASES])
def test_values_equal_the_core(case):
    lim, rot = limits_of(*case)
    rng = np.random.default_rng(1)
    q = np.concatenate([quat.normalize(rng.normal(size=(200, 3, 4))), rot[::10], special(lim, rot)[:40]])
    jl = lim.to_jax()
    v64 = np.asarray(jl.violation(jnp.asarray(q)))
    assert np.abs(v64 - lim.violation(q)).max() <= 1e-9
    assert quat.angle(np.asarray(jl.project(jnp.asarray(q))), lim.project(q)).max() <= 1e-9
    v32 = np.asarray(jl.violation(jnp.asarray(q, jnp.float32)))
    assert v32.dtype == np.float32 and np.abs(v32 - lim.violation(q.astype(np.float32))).max() <= 1e-5
    assert np.all(np.isfinite(np.asarray(jax.grad(lambda x: jl.loss(x, reduction="sum"))(jnp.asarray(q)))))


#: check_grads compiles every function anew (10-15 s a case on two cores): one case by default, so
#: that the suite keeps its time; the torch gradchecks cover every shape
CHECK_CASES = GRAD_CASES if os.environ.get("JOINTLIMITS_DIFF_FULL") else [c for c in GRAD_CASES if c[0] == "ellipsoid"]


@pytest.mark.parametrize("case", CHECK_CASES, ids=[IDS[CASES.index(c)] for c in CHECK_CASES])
def test_check_grads(case):
    lim, rot = limits_of(*case)
    jl = lim.to_jax()
    pts = points(lim, rot, n=1)
    if case[0] == "implicit":  # (as in test_torch: the metaball projection is piecewise smooth)
        pts = {k: v for k, v in pts.items() if not k.startswith("near")}
    q0 = np.concatenate(list(pts.values()))  # rows are independent: one check for every kind of point
    if case[2]:  # the coupled child's column (no gradient to the parent)
        rest = jnp.asarray(q0[:, :2])
        fs = [
            lambda c: jl.violation(jnp.concatenate([rest, c], 1)),
            lambda c: jl.project(jnp.concatenate([rest, c], 1)),
        ]
        x = jnp.asarray(q0[:, 2:])
    else:
        fs, x = [jl.violation, jl.project], jnp.asarray(q0)
    for f in fs:
        check_grads(jax.jit(f), (x,), order=1, modes=("fwd", "rev"), eps=1e-7, atol=1e-5, rtol=1e-3)


def test_jit_and_vmap():
    lim, rot = limits_of("kdop", True, False)
    jl = lim.to_jax()
    q = jnp.asarray(points(lim, rot, n=4)["outside"])
    v = jl.violation(q)
    # (XLA may fuse the arithmetic differently: equal to rounding)
    assert np.allclose(np.asarray(jax.jit(jl.violation)(q)), np.asarray(v), rtol=0, atol=1e-12)
    assert np.allclose(np.asarray(jax.vmap(jl.violation)(q[:, None])[:, 0]), np.asarray(v), rtol=0, atol=1e-12)
    g = jax.jit(jax.grad(lambda x: jl.loss(x)))(q)
    assert np.all(np.isfinite(np.asarray(g))) and float(jnp.abs(g).max()) > 0
    batched = jax.vmap(jax.grad(lambda x: jl.loss(x, reduction="sum")))(q[:, None])
    assert np.allclose(np.asarray(batched[:, 0]), np.asarray(jax.grad(lambda x: jl.loss(x, reduction="sum"))(q)))


def test_same_numbers_as_torch():
    torch = pytest.importorskip("torch", reason="needs the [torch] extra: pip install -e '.[torch]'")
    lim, rot = limits_of("ellipsoid", True, False)
    q = points(lim, rot, n=4)["outside"]
    a = np.asarray(jax.grad(lambda x: lim.to_jax().loss(x, reduction="sum"))(jnp.asarray(q)))
    x = torch.tensor(q, requires_grad=True)
    lim.to_torch().loss(x, reduction="sum").backward()
    assert np.abs(a - x.grad.numpy()).max() <= 1e-12

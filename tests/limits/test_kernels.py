"""The compiled per-joint step (C++, one loop at every batch size) against the independent numpy
implementation of the same math, across batch sizes, and its Python entry point."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from jointlimits.limits._kernels.fused import project_fitted
from jointlimits.limits.joint import _project_batched
from jointlimits.limits.model import FittedLimit, fit_shape
from jointlimits.motion import quat

REF = quat.normalize(np.array([0.9, 0.1, 0.2, 0.1]))
AXIS = np.array([0.0, 0.6, 0.8])


def make_limit(kind: str, swing_twist: bool, spread: float, seed: int = 0, exact: bool = True) -> FittedLimit:
    rng = np.random.default_rng(seed)
    cloud = rng.normal(0, spread, (3000, 3)) * [1.0, 0.7, 0.4]
    if not swing_twist:
        shape = fit_shape(cloud, kind)
        if kind == "kdop":
            shape.exact = exact
        return FittedLimit(REF, AXIS, shape=shape)
    along = (cloud @ AXIS)[:, None] * AXIS
    return FittedLimit(REF, AXIS, swing=fit_shape(cloud - along, kind), twist=fit_shape(along, kind))


CASES = [
    (kind, st_, spread)
    for kind in ("box", "oriented-box", "ellipsoid", "kdop")
    for st_ in (False, True)
    for spread in (0.4, 1.6)
]


def numpy_step(limit: FittedLimit, q: np.ndarray, soften, want_hard: bool):
    """The same step in numpy over the shape's own project() (the path of shapes without a C++ form)."""
    if limit.swing_twist:
        limit._section = limit.swing.swing_section(limit.twist_axis)
        limit._interval = limit.twist.twist_interval(limit.twist_axis)
    return _project_batched(limit, q, soften, want_hard)


@pytest.mark.parametrize("kind,swing_twist,spread", CASES)
@pytest.mark.parametrize("soften,want_hard", [((1.0, 0.1), False), (None, False), ((2.0, 0.3), True)])
def test_compiled_step_matches_numpy(kind, swing_twist, spread, soften, want_hard):
    limit = make_limit(kind, swing_twist, spread)
    if spread > 1.0 and not swing_twist:
        assert limit._packed[1] and limit.shape.radius() > np.pi  # the long-cover branch runs
    n = 2 * 64 + 37  # two full chunks of the C++ step and a partial one
    q = quat.normalize(np.random.default_rng(1).normal(size=(n, 4)))
    o1, h1 = limit._project(q, soften, want_hard)
    o2, h2 = numpy_step(limit, q, soften, want_hard)
    if kind == "kdop" and swing_twist:  # the swing section: a polygon in C++, the k-DOP's own solver in numpy
        o1, o2 = quat.angle(o1, o2), np.zeros(n)
        np.testing.assert_allclose(o1, o2, atol=1e-9)
    else:
        np.testing.assert_allclose(o1, o2, rtol=0, atol=1e-13)
        if want_hard:
            np.testing.assert_allclose(h1, h2, rtol=0, atol=1e-13)
    # rows the limit leaves alone are bit-identical copies
    out = limit._project(q, soften, False)[0]
    inside = np.all(out == q, axis=1)
    assert inside.any() and (~inside).any()


@pytest.mark.parametrize("kind,swing_twist", [("ellipsoid", True), ("kdop", False), ("box", True)])
def test_every_batch_size_gives_the_same_bits(kind, swing_twist):
    limit = make_limit(kind, swing_twist, 0.5)
    q = quat.normalize(np.random.default_rng(2).normal(size=(1000, 4)))
    big = limit.project(q, (1.0, 0.2))
    for size in (1, 7, 64, 127, 128, 129):
        small = np.concatenate([limit.project(q[i : i + size], (1.0, 0.2)) for i in range(0, 1000, size)])
        assert np.array_equal(big, small), size


def test_hard_equals_unsoftened_projection():
    limit = make_limit("ellipsoid", True, 0.5)
    q = quat.normalize(np.random.default_rng(3).normal(size=(300, 4)))
    soft, hard = limit._project(q, (2.0, 0.3), True)
    np.testing.assert_array_equal(hard, limit.project(q))
    assert not np.array_equal(soft, hard)


def test_fused_entry_point():
    limit = make_limit("box", False, 0.4)
    mode, covers, twist, a, b = limit._packed
    q = quat.normalize(np.random.default_rng(4).normal(size=(2053, 4)))
    ref, axis = limit.reference, limit.twist_axis
    o2, _ = project_fitted(q, ref, axis, mode, covers, (1.0, 0.1), a, b, twist)
    np.testing.assert_array_equal(o2, limit.project(q, (1.0, 0.1)))
    quirks = FittedLimit(
        REF,
        AXIS,
        swing=fit_shape(np.random.default_rng(0).normal(0, 0.3, (100, 3)), "box"),
        twist=fit_shape(np.random.default_rng(1).normal(0, 0.3, (100, 3)), "box"),
        reference_quirks=True,
    )
    m2, c2, t2, a2, b2 = quirks._packed
    out2, _ = project_fitted(np.tile(q, (3, 1)), REF, AXIS, m2, c2, None, a2, b2, t2)
    assert np.allclose(np.linalg.norm(out2, axis=1), 1.0)


def test_compiled_limits_survive_pickle_and_copy():
    limit = make_limit("kdop", True, 0.5)
    q = quat.normalize(np.random.default_rng(5).normal(size=(50, 4)))
    want = limit.project(q, (1.0, 0.1))
    for other in (pickle.loads(pickle.dumps(limit)), copy.deepcopy(limit)):
        np.testing.assert_array_equal(other.project(q, (1.0, 0.1)), want)


def test_no_module_imports_numba():
    """The compiled core replaced numba: importing every module of the package loads no JIT."""
    import subprocess
    import sys

    code = (
        "import sys, pkgutil, importlib, importlib.util, jointlimits; "
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages(jointlimits.__path__, 'jointlimits.') "
        "if not m.name.endswith('__main__') "
        # the extras' own packages (jointlimits.torch, jointlimits.jax) when that library is absent
        "and not (m.name.split('.')[1] in ('torch', 'jax') "
        "and importlib.util.find_spec(m.name.split('.')[1]) is None)]; "
        "print(sorted(m for m in ('numba', 'llvmlite') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"

"""Properties of the projections of jointlimits.limits that do not need the golden data.

Invariants (hypothesis): inside points unchanged bit for bit, projected points inside
(within 1e-9), idempotence (a second projection moves nothing by more than 1e-9), the
exact k-DOP projection agrees with SLSQP and an exhaustive active-set search.  Plus
batching, dtypes and far points.  Fitting, soften, subsample (equal to the naive greedy
loop, including exact distance ties) and error handling: test_shape_fitting.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import minimize

from jointlimits import limits as L
from jointlimits.errors import LimitsError

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------

coord = st.floats(-8.0, 8.0, allow_nan=False, allow_infinity=False, width=64)
points_st = hnp.arrays(np.float64, st.tuples(st.integers(1, 40), st.just(3)), elements=coord)


@st.composite
def rotations(draw):
    q = draw(hnp.arrays(np.float64, 4, elements=st.floats(-1, 1, allow_nan=False)))
    assume(np.linalg.norm(q) > 1e-3)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


@st.composite
def frames(draw):
    pos = draw(hnp.arrays(np.float64, 3, elements=st.floats(-2, 2, allow_nan=False)))
    return pos, draw(rotations())


@st.composite
def boxes(draw):
    a = draw(hnp.arrays(np.float64, 3, elements=st.floats(-3, 3, allow_nan=False)))
    ext = draw(hnp.arrays(np.float64, 3, elements=st.floats(0, 4, allow_nan=False)))
    return a, a + ext


radius_st = st.one_of(st.floats(0.0, 4.0, allow_nan=False), st.sampled_from([0.0, 1e-12, 1e-9, 1e-6]))


@st.composite
def kdops(draw):
    """A k-DOP fitted to a random small cloud (always non-empty), padding 0 or not."""
    n = draw(st.integers(1, 12))
    cloud = draw(hnp.arrays(np.float64, (n, 3), elements=st.floats(-2, 2, allow_nan=False)))
    pad = draw(st.sampled_from([0.0, 0.01, 0.2]))
    mins, maxs = L.fit_kdop(cloud, np.zeros(3), np.eye(3), L.kdop_axes(), pad)
    return mins, maxs


def random_rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 2] = -q[:, 2]
    return q


def kdop_violation(x, mins, maxs, pos, rot, axes=None):
    axes = L.kdop_axes() if axes is None else axes
    d = ((x - pos) @ rot) @ axes.T
    return np.maximum(d - maxs, mins - d).max(axis=-1)


# ---------------------------------------------------------------------------
# box
# ---------------------------------------------------------------------------


@SETTINGS
@given(points_st, boxes(), st.one_of(st.none(), frames()))
def test_box_invariants(pts, box, frame):
    lo, hi = box
    pos, rot = frame if frame is not None else (None, None)
    out = L.project_box(pts, lo, hi, pos, rot)
    p0 = np.zeros(3) if pos is None else pos
    r0 = np.eye(3) if rot is None else rot
    inside = L.contains_box(pts, lo, hi, pos, rot)  # same arithmetic as the kernel
    np.testing.assert_array_equal(out[inside], pts[inside])
    assert L.contains_box(out, lo, hi, pos, rot, tol=1e-9).all()
    again = L.project_box(out, lo, hi, pos, rot)
    assert np.abs(again - out).max() <= 1e-9
    # closest point: the local clamp, mapped back
    expect = np.clip((pts - p0) @ r0, lo, hi) @ r0.T + p0
    np.testing.assert_allclose(out[~inside], expect[~inside], atol=1e-12, rtol=0)


def test_box_axis_aligned_is_clamp_and_out_inplace():
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(1000, 3)) * 3
    lo, hi = np.array([-1.0, -0.5, 0.0]), np.array([1.0, 2.0, 0.0])
    ref = np.clip(pts, lo, hi)
    np.testing.assert_array_equal(L.project_box(pts, lo, hi), ref)
    buf = pts.copy()
    res = L.project_box(buf, lo, hi, out=buf)
    assert res is buf
    np.testing.assert_array_equal(buf, ref)


# ---------------------------------------------------------------------------
# ellipsoid
# ---------------------------------------------------------------------------


@SETTINGS
@given(points_st, hnp.arrays(np.float64, 3, elements=radius_st), st.one_of(st.none(), frames()))
def test_ellipsoid_invariants(pts, scale, frame):
    pos, rot = frame if frame is not None else (None, None)
    out = L.project_ellipsoid(pts, scale, pos, rot)
    assert np.isfinite(out).all()
    p0 = np.zeros(3) if pos is None else pos
    r0 = np.eye(3) if rot is None else rot
    local = (pts - p0) @ r0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(scale > 0, local / np.where(scale > 0, scale, 1), np.where(local == 0, 0, np.inf))
        inside = (ratio**2).sum(axis=1) <= 1.0 - 1e-12  # margin: kernel rounds differently
    np.testing.assert_array_equal(out[inside], pts[inside])
    # lands inside/on: within 1e-9 of the ellipsoid, per axis within the radius
    lo = (out - p0) @ r0
    assert np.all(np.abs(lo) <= scale * (1 + 1e-9) + 1e-9)
    assert L.distance_ellipsoid(out, scale, pos, rot).max() <= 1e-9
    again = L.project_ellipsoid(out, scale, pos, rot)
    assert np.abs(again - out).max() <= 1e-9
    # never farther than the closest of many surface samples (closest-point property)
    if np.all(scale > 1e-3) and (~inside).any():
        rng = np.random.default_rng(1)
        d = rng.normal(size=(4000, 3))
        surf = (d / np.linalg.norm(d, axis=1, keepdims=True)) * scale
        i = int(np.argmax(~inside))
        best = np.linalg.norm(surf - local[i], axis=1).min()
        assert np.linalg.norm(lo[i] - local[i]) <= best + 1e-9


def test_ellipsoid_exact_matches_optimizer():
    rng = np.random.default_rng(2)
    scale = np.array([1.5, 0.4, 0.05])
    rot = random_rotation(rng)
    pos = rng.normal(size=3) * 0.2
    pts = rng.normal(size=(40, 3)) * 2
    out = L.project_ellipsoid(pts, scale, pos, rot)
    for p, x in zip(pts, out):
        lp = (p - pos) @ rot
        if ((lp / scale) ** 2).sum() <= 1:
            continue
        res = minimize(
            lambda y, lp=lp: ((y - lp) ** 2).sum(),
            lp / np.linalg.norm(lp / scale),
            method="SLSQP",
            constraints=[{"type": "eq", "fun": lambda y: ((y / scale) ** 2).sum() - 1}],
            options={"ftol": 1e-15, "maxiter": 500},
        )
        assert np.linalg.norm((x - pos) @ rot - lp) <= np.linalg.norm(res.x - lp) + 1e-7


def test_ellipsoid_degenerate_scales():
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(500, 3)) * 3
    # flat (zero radius) axis: flattened onto the disc
    out = L.project_ellipsoid(pts, [1.0, 2.0, 0.0])
    assert np.isfinite(out).all() and np.all(out[:, 2] == 0)
    assert np.all((out[:, 0] / 1.0) ** 2 + (out[:, 1] / 2.0) ** 2 <= 1 + 1e-12)
    # all-zero scale: everything goes to the centre
    np.testing.assert_array_equal(L.project_ellipsoid(pts, [0, 0, 0], [1, 2, 3]), np.tile([1.0, 2, 3], (500, 1)))
    # tiny radii
    out = L.project_ellipsoid(pts, [1e-12, 1.0, 1e-300])
    assert np.isfinite(out).all() and np.all(np.abs(out[:, 0]) <= 1e-12 * (1 + 1e-9))


def test_ellipsoid_reference_eps_variant_is_slightly_larger():
    pts = np.array([[3.0, 0.0, 0.0], [0.0, 0.0, 0.5]])
    exact = L.project_ellipsoid(pts, [1.0, 1.0, 0.1])
    ref = L.project_ellipsoid(pts, [1.0, 1.0, 0.1], eps=1e-5, iterations=8)
    np.testing.assert_allclose(exact, [[1.0, 0, 0], [0, 0, 0.1]], atol=1e-14)
    np.testing.assert_allclose(ref, [[np.sqrt(1 + 1e-5), 0, 0], [0, 0, np.sqrt(0.01 + 1e-5)]], atol=1e-12)


# ---------------------------------------------------------------------------
# k-DOP
# ---------------------------------------------------------------------------


@SETTINGS
@given(points_st, kdops(), st.one_of(st.none(), frames()))
def test_kdop_exact_invariants(pts, kdop, frame):
    mins, maxs = kdop
    pos, rot = frame if frame is not None else (np.zeros(3), np.eye(3))
    out = L.project_kdop(pts, mins, maxs, pos, rot, exact=True)
    inside = L.contains_kdop(pts, mins, maxs, pos, rot)
    np.testing.assert_array_equal(out[inside], pts[inside])
    assert kdop_violation(out, mins, maxs, pos, rot).max() <= 1e-9
    again = L.project_kdop(out, mins, maxs, pos, rot, exact=True)
    assert np.abs(again - out).max() <= 1e-9
    # never farther than the slab-clamp result whenever that one is feasible
    slab = L.project_kdop(pts, mins, maxs, pos, rot)
    np.testing.assert_array_equal(slab[inside], pts[inside])
    ok = kdop_violation(slab, mins, maxs, pos, rot) <= 1e-9
    d_exact = np.linalg.norm(out - pts, axis=1)
    d_slab = np.linalg.norm(slab - pts, axis=1)
    assert np.all(d_exact[ok] <= d_slab[ok] + 1e-9)


def _brute_force_kdop(p, mins, maxs, axes):
    """Closest point by enumerating active sets of <= 3 planes (pure numpy)."""
    G = np.concatenate([axes, -axes])
    b = np.concatenate([maxs, -mins])
    if np.all(G @ p <= b + 1e-12):
        return p
    best, best_x = np.inf, None
    m = len(G)
    import itertools

    for k in (1, 2, 3):
        for act in itertools.combinations(range(m), k):
            N = G[list(act)]
            gram = N @ N.T
            if abs(np.linalg.det(gram)) < 1e-10:
                continue
            lam = np.linalg.solve(gram, N @ p - b[list(act)])
            x = p - N.T @ lam
            d = np.linalg.norm(x - p)
            if d < best and np.all(G @ x <= b + 1e-9):
                best, best_x = d, x
    return best_x


def test_kdop_exact_matches_slsqp_and_brute_force():
    rng = np.random.default_rng(4)
    axes = L.kdop_axes()
    for trial in range(3):
        cloud = rng.normal(size=(200, 3)) * rng.uniform(0.1, 1.0, 3)
        pos, rot = L.fit_orientation(cloud)
        mins, maxs = L.fit_kdop(cloud, pos, rot, axes, [0.0, 0.05, 0.1][trial])
        pts = rng.normal(size=(10, 3)) * 2.5
        out = L.project_kdop(pts, mins, maxs, pos, rot, axes, exact=True)
        G = np.concatenate([axes, -axes])
        b = np.concatenate([maxs, -mins])
        for p, x in zip(pts, out):
            lp = (p - pos) @ rot
            res = minimize(
                lambda y, lp=lp: 0.5 * ((y - lp) ** 2).sum(),
                lp,
                jac=lambda y, lp=lp: y - lp,
                method="SLSQP",
                constraints=[{"type": "ineq", "fun": lambda y, b=b, G=G: b - G @ y, "jac": lambda y, G=G: -G}],
                options={"ftol": 1e-12, "maxiter": 300},
            )
            assert res.success
            np.testing.assert_allclose((x - pos) @ rot, res.x, atol=1e-6)
            np.testing.assert_allclose((x - pos) @ rot, _brute_force_kdop(lp, mins, maxs, axes), atol=1e-9)


def _kkt_residual(p, x, G, b):
    """Independent optimality certificate of x = closest point of {G y <= b} to p: x's violation,
    and how far p - x is from the cone of the normals of the planes x lies on (non-negative least
    squares)."""
    from scipy.optimize import nnls

    s = G @ x - b
    act = s > -1e-9
    if not act.any():
        return s.max(), float(np.linalg.norm(p - x))
    lam, res = nnls(G[act].T, p - x)
    return s.max(), res


@pytest.mark.parametrize("kind", ["fitted", "cube", "flat"])
def test_kdop_exact_is_optimal_on_faces_edges_and_vertices(kind):
    """Thousands of points whose closest points lie on faces, edges and vertices (a cube's corners
    are met by seven of the 26 planes; a flat k-DOP has parallel and coplanar normals), in the
    batch projection: each result satisfies the optimality conditions."""
    rng = np.random.default_rng(11)
    axes = L.kdop_axes()
    if kind == "cube":
        pos, rot = np.zeros(3), np.eye(3)
        corner = np.abs(axes).sum(1)  # the cube [-1, 1]^3's extent along each axis
        mins, maxs = -corner, corner
    else:
        cloud = rng.normal(size=(500, 3)) * ([1.0, 0.6, 0.3] if kind == "fitted" else [1.0, 0.8, 1e-3])
        pos, rot = L.fit_orientation(cloud)
        mins, maxs = L.fit_kdop(cloud, pos, rot, axes, 0.05)
    pts = rng.normal(size=(4000, 3)) * rng.uniform(0.2, 4.0, (4000, 1))
    out = L.project_kdop(pts, mins, maxs, pos, rot, axes, exact=True)
    G = np.concatenate([axes, -axes])
    b = np.concatenate([maxs, -mins])
    counts = np.zeros(4, int)  # answers by the rank of the normals there: inside, face, edge, vertex
    for p, x in zip(pts, out):
        lp, lx = (p - pos) @ rot, (x - pos) @ rot
        viol, res = _kkt_residual(lp, lx, G, b)
        assert viol <= 1e-9 and res <= 1e-9, (p, x, viol, res)
        act = G @ lx - b > -1e-9
        counts[np.linalg.matrix_rank(G[act], tol=1e-6) if act.any() else 0] += 1
    assert counts.min() > 100, counts  # every kind of answer
    np.testing.assert_array_equal(L.project_kdop(out, mins, maxs, pos, rot, axes, exact=True), out)


def test_kdop_slab_matches_sequential_reference_loop():
    rng = np.random.default_rng(5)
    axes = L.kdop_axes()
    cloud = rng.normal(size=(300, 3)) * [1.0, 0.5, 0.2]
    pos, rot = L.fit_orientation(cloud)
    mins, maxs = L.fit_kdop(cloud, pos, rot, axes, 0.05)
    pts = rng.normal(size=(300, 3)) * 2
    out = L.project_kdop(pts, mins, maxs, pos, rot, axes, always_map=True)
    for p, o in zip(pts, out):
        x = rot.T @ (p - pos)
        for a, lo, hi in zip(axes, mins, maxs):
            t0 = (x - lo * a) @ a
            t1 = (x - hi * a) @ a
            x = x - min(t0, 0.0) * a
            x = x - max(t1, 0.0) * a
        np.testing.assert_allclose(o, rot @ x + pos, atol=1e-12)


def test_kdop_slab_is_not_a_projection_but_exact_is():
    """Two interacting slabs: one pass of clamps is not inside, the exact one is."""
    axes = np.array([[1.0, 0.0, 0.0], [np.sqrt(0.5), np.sqrt(0.5), 0.0], [0.0, 0.0, 1.0]])
    mins = np.array([-1.0, -1.0, -1.0])
    maxs = np.array([1.0, 0.0, 1.0])
    p = np.array([[0.0, 3.0, 0.0], [5.0, 5.0, 0.0]])
    slab = L.project_kdop(p, mins, maxs, axes=axes)
    exact = L.project_kdop(p, mins, maxs, axes=axes, exact=True)
    assert kdop_violation(slab, mins, maxs, np.zeros(3), np.eye(3), axes).max() > 0.1
    assert kdop_violation(exact, mins, maxs, np.zeros(3), np.eye(3), axes).max() <= 1e-12
    np.testing.assert_allclose(exact, [[-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(slab[0], [-1.5, 1.5, 0.0], atol=1e-12)


def test_kdop_empty_polytope_raises():
    axes = L.kdop_axes()
    mins = np.r_[0, 0, 0, 5, np.zeros(9)]
    maxs = np.r_[1, 1, 1, 6, np.ones(9)]
    with pytest.raises(LimitsError, match="do not intersect"):
        L.project_kdop(np.full((2, 3), 9.0), mins, maxs, axes=axes, exact=True)


# ---------------------------------------------------------------------------
# batching, dtypes, far points
# ---------------------------------------------------------------------------

BOX = (np.array([-1.0, -1, -1]), np.array([1.0, 1, 1]))


def test_float32_and_batched_projection():
    rng = np.random.default_rng(13)
    pts = rng.normal(size=(4, 6, 3)) * 2
    rot = random_rotation(rng)
    pos = rng.normal(size=3)
    scale = np.array([1.0, 0.5, 0.2])
    mins, maxs = L.fit_kdop(rng.normal(size=(50, 3)), np.zeros(3), np.eye(3), L.kdop_axes())
    for fn in (
        lambda x: L.project_box(x, *BOX, pos, rot),
        lambda x: L.project_ellipsoid(x, scale, pos, rot),
        lambda x: L.project_kdop(x, mins, maxs, pos, rot),
        lambda x: L.project_kdop(x, mins, maxs, pos, rot, exact=True),
    ):
        full = fn(pts)
        assert full.shape == pts.shape and full.dtype == np.float64
        np.testing.assert_array_equal(full.reshape(-1, 3), fn(pts.reshape(-1, 3)))
        p32 = pts.astype(np.float32)
        np.testing.assert_array_equal(fn(p32), fn(p32.astype(np.float64)))
    assert L.project_box(np.zeros((0, 3)), *BOX).shape == (0, 3)
    assert L.project_box(np.zeros(3), *BOX).shape == (3,)


@pytest.mark.parametrize("scale", [1e160, 1e200, 1e300])
def test_ellipsoid_projection_of_far_points_is_not_the_origin(scale):
    # |p|^2 overflows past 1e154: the root bracket is taken on the scaled point (issue #15 item 10)
    s = np.array([0.5, 1.0, 2.0])
    d = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0], [-3.0, 0.5, 2.0]])
    out = L.project_ellipsoid(d * scale, s)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.sum((out / s) ** 2, axis=1), 1.0, rtol=1e-9)  # on the surface
    # from far away the closest point is where the outward normal points along the direction
    normal = out / s**2
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    u = d / np.linalg.norm(d, axis=1, keepdims=True)
    np.testing.assert_allclose(normal, u, atol=1e-9)
    np.testing.assert_allclose(
        L.project_ellipsoid(d * scale, s, [0.1, 0.2, 0.3], np.eye(3)), out + [0.1, 0.2, 0.3], atol=1e-9
    )


@pytest.mark.parametrize("n", [1, 7, 1001, 800_000])
def test_axis_aligned_box_into_float32(n) -> None:
    """A float32 ``out`` runs the axis-aligned clamp in float32 (the 800,000-point case writes with
    non-temporal stores): the clamp of every value, inside points bit for bit; without ``out`` the
    result stays float64."""
    rng = np.random.default_rng(n)
    p = (rng.normal(size=(n, 3)) * 0.8).astype(np.float32)
    lo, hi = np.array([-0.5, -1.0, -0.3]), np.array([0.5, 1.0, 0.3])
    out = np.full_like(p, 7.0)
    got = L.project_box(p, lo, hi, out=out)
    assert got is out and got.dtype == np.float32
    assert np.array_equal(got, np.clip(p, lo.astype(np.float32), hi.astype(np.float32)))
    inside = np.all((p >= lo) & (p <= hi), axis=1)
    assert np.array_equal(got[inside], p[inside])
    ref = L.project_box(p, lo, hi)
    assert ref.dtype == np.float64 and np.allclose(ref, got, atol=1e-7)
    assert np.array_equal(L.project_box(p.astype(np.float64), lo, hi, out=np.empty_like(p)), got)
    with pytest.raises(LimitsError, match="shape"):
        L.project_box(p, lo, hi, out=np.empty((n + 1, 3), np.float32))
    p[n // 2, 1] = np.nan
    with pytest.raises(LimitsError, match="non-finite"):
        L.project_box(p, lo, hi, out=out)

"""Implicit-surface (metaball) limits: analytic sphere, gradient, projection invariants, files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits.errors import LimitsError
from jointlimits.limits import Shape
from jointlimits.limits.implicit import THRESHOLD, Implicit, fit_field
from jointlimits.limits.joint import FittedLimit
from jointlimits.motion import quat

from conftest import two_joint_limits

RNG = np.random.default_rng(7)


def one_ball(radius_cells: float = 6.0, cell: float = 0.05, n: int = 25) -> Implicit:
    """One metaball of ``radius_cells`` at the centre node of an n^3 grid (no lifting/filling)."""
    origin = -np.full(3, (n - 1) / 2 * cell)
    local = np.zeros((1, 3))
    F = fit_field(local, origin, (n, n, n), cell, radius_cells, fill_holes=False)
    return Implicit(origin=origin, cell=cell, grid=F)


def cloud(n: int = 1500) -> np.ndarray:
    return RNG.normal(0.0, 0.35, (n, 3)) * [1.0, 0.6, 0.4] + [0.2, -0.1, 0.05]


CLOUD = cloud()


@pytest.fixture(scope="module")
def blob() -> Implicit:
    return Implicit.fit(CLOUD, padding=0.05)


def test_one_metaball_is_a_sphere_and_projection_lands_on_it():
    ball = one_ball()
    r_iso = 6.0 * 0.05 * math.sqrt(1.0 - THRESHOLD ** (1.0 / 3.0))  # (1 - r^2/R^2)^3 = T
    d = quat.normalize(RNG.normal(size=(400, 4)))[:, 1:]
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    # trilinear sampling of a smooth ball: within a small fraction of a cell of the analytic radius
    assert np.all(ball.contains(d * (r_iso - 0.01), 0.0))
    assert not np.any(ball.contains(d * (r_iso + 0.01), 0.0))
    far = d * RNG.uniform(0.15, 3.0, (400, 1))  # near (gradient) and beyond the support (fallback)
    p = ball.project(far)
    assert np.abs(np.linalg.norm(p, axis=1) - r_iso).max() < 0.01
    cosang = np.einsum("ij,ij->i", p, far) / np.linalg.norm(p, axis=1) / np.linalg.norm(far, axis=1)
    near = np.linalg.norm(far, axis=1) < 0.28  # within the ball's support: up the gradient
    assert cosang[near].min() > 0.99  # toward the centre: the sphere's closest point
    # beyond the support the point goes to the nearest inside node seen from where it enters the
    # grid: on the sphere, not exactly the closest point
    assert cosang[~near].min() > 0.85
    excess = np.linalg.norm(p - far, axis=1) - (np.linalg.norm(far, axis=1) - r_iso)
    assert np.median(excess) < 0.01


def test_gradient_points_to_the_centre_of_a_ball():
    ball = one_ball()
    x = np.array([[0.113, 0.047, -0.031], [-0.082, 0.011, 0.121]])  # inside cells, not on nodes
    g = ball.value(x)[:, 1:]
    cos = np.einsum("ij,ij->i", g, -x) / np.linalg.norm(g, axis=1) / np.linalg.norm(x, axis=1)
    assert np.all(cos > 0.98)
    h = 1e-4  # and it is the field's derivative
    num = (ball.value(x + [h, 0, 0])[:, 0] - ball.value(x - [h, 0, 0])[:, 0]) / (2 * h)
    np.testing.assert_allclose(num, g[:, 0], rtol=0.05)


def test_fitted_points_inside_inside_unchanged_projection_idempotent(blob):
    pts = CLOUD
    assert blob.contains(pts, 0.0).all()
    assert np.array_equal(blob.project(pts), pts)  # bit-exact
    x = RNG.uniform(-3.5, 3.5, (3000, 3))
    p = blob.project(x)
    assert blob.contains(p, 0.0).all()
    assert np.array_equal(blob.project(p), p)
    inside = blob.contains(x, 0.0)
    assert np.array_equal(p[inside], x[inside])


def test_projection_of_far_points_is_finite_and_near_the_surface(blob):
    x = RNG.normal(size=(500, 3)) * 50.0  # far beyond every metaball's support
    p = blob.project(x)
    assert np.all(np.isfinite(p)) and blob.contains(p, 0.0).all()
    f = blob.value(p)[:, 0]
    assert np.all(f < 2.0 * blob.threshold)  # on the boundary, not deep inside


_limits = two_joint_limits


@pytest.mark.parametrize("swing_twist", [False, True])
def test_joint_limit_invariants_both_covers_unit_outputs(swing_twist):
    lim, rot = _limits("implicit", swing_twist)
    assert lim.contains(rot).all()
    assert np.array_equal(lim.project(rot), rot)
    q = quat.normalize(RNG.normal(size=(2000, 3, 4)))
    p = lim.project(q)
    np.testing.assert_allclose(np.linalg.norm(p, axis=-1), 1.0, atol=1e-12)
    assert lim.contains(p).all()
    np.testing.assert_allclose(lim.project(p), p, atol=1e-12)
    # q and -q: the same rotation, the same limited rotation (each on its caller's cover)
    pn = lim.project(-q)
    np.testing.assert_allclose(pn, -p, atol=1e-12)
    assert np.array_equal(lim.contains(-q), lim.contains(q))
    s = lim.project(q, soften=(1.0, 0.1))
    np.testing.assert_allclose(np.linalg.norm(s, axis=-1), 1.0, atol=1e-12)


def test_limits_past_pi_use_the_long_cover():
    # a cloud straddling the antipode: angles up to ~pi + 0.3 around x
    ang = np.linspace(2.6, math.pi + 0.3, 300)
    pts = np.column_stack([ang, 0.05 * np.sin(7 * ang), 0.05 * np.cos(5 * ang)])
    shape = Implicit.fit(pts, 0.05)
    assert shape.radius() > math.pi
    lim = FittedLimit([1.0, 0, 0, 0], [1.0, 0, 0], shape=shape)
    q = quat.from_scaled_angle_axis(pts)  # their rotations: the short cover of those past pi is the other side
    assert lim.contains(q).all()
    assert np.array_equal(lim.project(q), q)


def test_save_load_round_trip(tmp_path):
    for st in (False, True):
        lim, rot = _limits("implicit", st)
        path = tmp_path / f"l{st}.json"
        lim.save(path)
        d = json.loads(path.read_text())
        grid = d["joints"][0]["limit"]["shape" if not st else "swing"]
        assert grid["encoding"] == "zlib-base64-float32-le" and isinstance(grid["grid"], str)
        back = JointLimits.load(path)
        q = quat.normalize(RNG.normal(size=(300, 3, 4)))
        np.testing.assert_allclose(back.project(q), lim.project(q), atol=1e-9)
        assert np.array_equal(back.contains(q), lim.contains(q))


@pytest.mark.parametrize(
    "edit", ["truncated", "not base64", "not zlib", "nan", "negative", "dims", "empty", "encoding"]
)
def test_corrupt_grids_raise_limits_error(tmp_path, edit):
    lim, _ = _limits("implicit", False)
    d = lim.to_dict()
    sh = d["joints"][0]["limit"]["shape"]
    import base64
    import zlib

    F = np.frombuffer(zlib.decompress(base64.b64decode(sh["grid"])), "<f4").copy()
    enc = lambda a: base64.b64encode(zlib.compress(a.astype("<f4").tobytes())).decode()  # noqa: E731
    if edit == "truncated":
        sh["grid"] = enc(F[:-3])
    elif edit == "not base64":
        sh["grid"] = "@@@" + sh["grid"]
    elif edit == "nan":
        F[5] = np.nan
        sh["grid"] = enc(F)
    elif edit == "negative":
        F[5] = -1.0
        sh["grid"] = enc(F)
    elif edit == "not zlib":
        sh["grid"] = base64.b64encode(F.astype("<f4").tobytes()).decode()
    elif edit == "encoding":
        sh["encoding"] = "base85"
    elif edit == "dims":
        sh["dims"] = [2, 2]
    else:
        sh["grid"] = enc(np.zeros_like(F))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(LimitsError, match="bad.json"):
        JointLimits.load(path)


def test_shape_registry_builds_implicit_from_its_dict(blob):
    back = Shape.from_dict(json.loads(json.dumps(blob.to_dict())))
    assert isinstance(back, Implicit)
    x = RNG.uniform(-2, 2, (500, 3))
    assert np.array_equal(back.project(x), blob.project(x))


def test_surface_mesh_lies_on_the_iso_level(blob):
    v, t = blob.surface()
    assert len(t) > 100
    f = blob.value(v)[:, 0]
    assert np.abs(f - blob.threshold).max() < 1e-3


# --------------------------------------------------------------------------- coupled limits


def test_coupled_needs_implicit_and_real_pairs():
    with pytest.raises(LimitsError, match="implicit"):
        _limits("kdop", False, coupled=True)
    with pytest.raises(LimitsError, match="parent"):
        _limits("implicit", False, coupled=True, pairs=[("root", "b")])


def test_cli_fit_coupled_report_plot(tmp_path, clips):
    from click.testing import CliRunner

    from jointlimits.cli import main
    from jointlimits.io import bvh
    from jointlimits.limits.coupled import CoupledLimit

    clip, _ = clips
    src = tmp_path / "rom.bvh"
    bvh.save(src, clip)
    out = tmp_path / "lim.json"
    r = CliRunner().invoke(main, ["fit", str(src), "-o", str(out), "--shape", "implicit", "--coupled", "-q"])
    assert r.exit_code == 0, r.output
    lim = JointLimits.load(out)
    kids = [lim.skeleton.names[j] for j, x in lim.joints.items() if isinstance(x, CoupledLimit)]
    assert kids and all(lim.contains(clip.rotations).all(axis=0))
    png = tmp_path / "j.png"
    r = CliRunner().invoke(main, ["plot", str(out), str(src), "--joint", kids[0], "-o", str(png)])
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = CliRunner().invoke(main, ["fit", str(src), "-o", str(tmp_path / "x.json"), "--shape", "kdop", "--coupled"])
    assert r.exit_code == 2 and "implicit" in r.output


def test_uncompressed_grids_still_load(blob):
    import base64

    d = blob.to_dict()
    d["encoding"] = "base64-float32-le"
    d["grid"] = base64.b64encode(blob.grid.astype("<f4").tobytes()).decode()
    back = Shape.from_dict(d)
    assert np.array_equal(back.grid, blob.grid)


def test_cell_maxima_bound_every_blend():
    from jointlimits.limits.implicit import cell_maxima

    F = RNG.random((3, 5, 4, 6)).astype(np.float32) * (RNG.random((3, 5, 4, 6)) > 0.6)
    M = cell_maxima(F)
    assert M.shape == (4, 3, 5) and M.dtype == np.float32
    for i, j, k in np.ndindex(*M.shape):
        assert M[i, j, k] == F[:, i : i + 2, j : j + 2, k : k + 2].max()


def test_projection_lands_just_inside_the_iso_level(blob):
    """Outside points, near (gradient climb) and far (nearest inside node): the result reads the
    field at or a hair above the threshold (most within 1e-6 of it; where the field is nearly flat
    up to 2.4e-4), for a plain limit and a coupled child's blend. A crossing left where the climb
    first stepped inside (up to half a cell in) reads up to 0.6 above it here."""
    from jointlimits._native import _core
    from jointlimits.limits.joint import to_limit_space

    x = RNG.uniform(-2.5, 2.5, (4000, 3))
    out = ~blob.contains(x, 0.0)
    f = blob.value(blob.project(x[out]))[:, 0]
    assert out.sum() > 2000
    assert f.min() >= blob.threshold and f.max() <= blob.threshold * (1 + 1e-3)
    assert np.median(f) <= blob.threshold * (1 + 1e-6)

    lim, _ = _limits("implicit", False, coupled=True, pairs=[("a", "b")])
    child = lim.joint("b")
    q = quat.normalize(RNG.normal(size=(3000, 4)))
    par = lim.joint("a").project(quat.normalize(RNG.normal(size=(3000, 4))))
    keep = ~child.contains(q, 0.0, parent=par)
    p = child.project(q[keep], parent=par[keep])
    ids, ws = child.weights(par[keep])
    v = to_limit_space(p, child.base.reference)
    s, val = child.frame, np.empty((len(v), 4))
    _core.implicit_field(
        np.ascontiguousarray(v), s.position, s.rotation, s.origin, s.cell, child._F, child._cmax, ids, ws, val
    )
    # the short cover's value (a result on the long cover reads 0 here: none in this limit)
    assert keep.sum() > 1000 and child.base.shape.radius() < np.pi
    assert val[:, 0].min() >= s.threshold and val[:, 0].max() <= s.threshold * (1 + 1e-3)
    assert np.median(val[:, 0]) <= s.threshold * (1 + 1e-6)

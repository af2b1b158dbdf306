"""jointlimits.limits against the reference golden vectors in ../shared/golden.

Tolerances come from manifest.json (``|impl - golden| <= atol + rtol*|golden|``, integer
arrays exact).  Documented deviations from the reference (see golden README) are tested
explicitly: the FLT_MIN max initialisation (compared with the ``nonref_`` corrected
values), inside points not being mapped through a non-orthonormal ``R``, the exact
ellipsoid projection (atol 1e-4) and the power-iteration frame (compared geometrically).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from jointlimits import limits as L

from conftest import SHARED_MISSING

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
GOLDEN = SHARED / "golden"

pytestmark = pytest.mark.skipif(
    not (GOLDEN / "manifest.json").is_file(),
    reason=SHARED_MISSING,
)


@cache
def load(name: str) -> dict:
    with open(GOLDEN / name) as fh:
        return json.load(fh)


@cache
def tolerances(name: str) -> dict:
    return {o["path"]: o["tolerance"] for o in load("manifest.json")["files"][name]["outputs"]}


def f32(x) -> np.ndarray:
    """Golden numbers -> exact float32 reference bits (then used as float64)."""
    return np.asarray(x, dtype=np.float32)


def assert_golden(actual, golden, file: str, path: str, atol: float | None = None) -> None:
    tol = tolerances(file)[path]
    golden = f32(golden).astype(np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    assert actual.shape == golden.shape, (path, actual.shape, golden.shape)
    if tol.get("exact"):
        np.testing.assert_array_equal(actual, golden, err_msg=path)
        return
    a = tol["atol"] if atol is None else atol
    excess = np.abs(actual - golden) - (a + tol["rtol"] * np.abs(golden))
    worst = np.unravel_index(np.argmax(excess), excess.shape) if excess.size else ()
    assert not np.any(excess > 0), (
        f"{file}:{path} exceeds atol={a} rtol={tol['rtol']} at {worst}: impl {actual[worst]} golden {golden[worst]}"
    )


# ---------------------------------------------------------------------------
# projections.json
# ---------------------------------------------------------------------------

PROJ = "projections.json"


def _proj_case_index(name: str) -> int:
    for i, c in enumerate(load(PROJ)["cases"]):
        if c["name"] == name:
            return i
    raise KeyError(name)


def _proj_limits():
    lim = {k: f32(v) for k, v in load(PROJ)["limits"].items() if k != "notes"}
    return lim, f32(load(PROJ)["points"])


def _reference_projection(name: str, pts, lim):
    """The library call reproducing reference case `name` (reference quirks enabled)."""
    pos, rot, axes = lim["limit_position"], lim["limit_rotation"], lim["kdop_axes"]
    if name == "apply_rectangular_limit_basic":
        return L.project_box(pts, lim["aabb_min"], lim["aabb_max"])
    if name == "apply_rectangular_limit":
        return L.project_box(pts, lim["rect_min"], lim["rect_max"], pos, rot, always_map=True)
    if name == "apply_ellipsoid_limit":
        return L.project_ellipsoid(pts, lim["ellipsoid_scale"], pos, rot, iterations=8, eps=1e-5)
    if name == "apply_ellipsoid_limit/iterations_32":
        return L.project_ellipsoid(pts, lim["ellipsoid_scale"], pos, rot, iterations=32, eps=1e-5)
    if name == "apply_ellipsoid_limit/axis_aligned":
        return L.project_ellipsoid(pts, lim["axis_aligned_ellipsoid_scale"], iterations=8, eps=1e-5)
    if name == "apply_kdop_limit":
        return L.project_kdop(pts, lim["kdop_mins"], lim["kdop_maxs"], pos, rot, axes, always_map=True)
    if name == "apply_kdop_limit/axis_aligned":
        return L.project_kdop(pts, lim["axis_aligned_kdop_mins"], lim["axis_aligned_kdop_maxs"], None, None, axes)
    raise KeyError(name)


PROJECTION_CASES = [
    "apply_rectangular_limit_basic",
    "apply_rectangular_limit",
    "apply_ellipsoid_limit",
    "apply_ellipsoid_limit/iterations_32",
    "apply_ellipsoid_limit/axis_aligned",
    "apply_kdop_limit",
    "apply_kdop_limit/axis_aligned",
]


@pytest.mark.parametrize("name", PROJECTION_CASES)
def test_projection_matches_reference(name):
    lim, pts = _proj_limits()
    i = _proj_case_index(name)
    out = _reference_projection(name, pts, lim)
    assert out.dtype == np.float64 and out.shape == pts.shape
    assert_golden(out, load(PROJ)["cases"][i]["outputs"]["projected"], PROJ, f"cases/{i}/outputs/projected")


@pytest.mark.parametrize("name,kind", [("apply_rectangular_limit", "box"), ("apply_kdop_limit", "kdop")])
def test_default_projection_keeps_inside_points_and_matches_outside(name, kind):
    """Default mode: outside points match the reference; inside points are returned
    unchanged while the reference moves them by R R^T != I (documented quirk)."""
    lim, pts = _proj_limits()
    i = _proj_case_index(name)
    golden = f32(load(PROJ)["cases"][i]["outputs"]["projected"]).astype(np.float64)
    pos, rot = lim["limit_position"], lim["limit_rotation"]
    if kind == "box":
        out = L.project_box(pts, lim["rect_min"], lim["rect_max"], pos, rot)
        inside = L.contains_box(pts, lim["rect_min"], lim["rect_max"], pos, rot)
    else:
        out = L.project_kdop(pts, lim["kdop_mins"], lim["kdop_maxs"], pos, rot, lim["kdop_axes"])
        inside = L.contains_kdop(pts, lim["kdop_mins"], lim["kdop_maxs"], pos, rot, lim["kdop_axes"])
    assert 100 < inside.sum() < len(pts) - 100
    np.testing.assert_array_equal(out[inside], pts[inside].astype(np.float64))
    tol = tolerances(PROJ)[f"cases/{i}/outputs/projected"]
    excess = np.abs(out[~inside] - golden[~inside]) - (tol["atol"] + tol["rtol"] * np.abs(golden[~inside]))
    assert excess.max() <= 0
    # the reference's inside outputs are R R^T (x - p) + p, not x
    p64, r64 = pos.astype(np.float64), rot.astype(np.float64)
    quirk = (pts[inside] - p64) @ r64 @ r64.T + p64
    np.testing.assert_allclose(golden[inside], quirk, atol=2e-6, rtol=0)
    assert np.abs(golden[inside] - pts[inside]).max() > 1e-5  # so the quirk is real here


def test_exact_ellipsoid_projection_within_readme_allowance():
    lim, pts = _proj_limits()
    i = _proj_case_index("apply_ellipsoid_limit")
    out = L.project_ellipsoid(pts, lim["ellipsoid_scale"], lim["limit_position"], lim["limit_rotation"])
    assert_golden(out, load(PROJ)["cases"][i]["outputs"]["projected"], PROJ, f"cases/{i}/outputs/projected", atol=1e-4)
    # and it lands on the true surface (|local/scale| == 1) for moved points; this R is
    # not exactly orthonormal (|R^T R - I| ~ 2e-5), so undo the mapping with R^-1
    rot = lim["limit_rotation"].astype(np.float64)
    local = np.linalg.solve(rot, (out - lim["limit_position"].astype(np.float64)).T).T
    moved = np.any(out != pts, axis=1)
    level = np.sqrt(((local[moved] / lim["ellipsoid_scale"]) ** 2).sum(axis=1))
    assert moved.sum() > 100
    np.testing.assert_allclose(level, 1.0, atol=1e-9)


@pytest.mark.parametrize(
    "i",
    [i for i, c in enumerate(load(PROJ)["cases"]) if c["function"] == "projection_soften"]
    if (GOLDEN / PROJ).is_file()
    else [],
)
def test_soften_matches_reference(i):
    case = load(PROJ)["cases"][i]
    p = case["params"]
    pts = f32(load(PROJ)["points"])
    projected = f32(case["inputs"]["projected_position"])
    out = L.soften(pts, projected, p["falloff"], p["radius"], p["eps"])
    assert_golden(out, case["outputs"]["softened"], PROJ, f"cases/{i}/outputs/softened")
    # softening moves some points back toward the original position
    assert np.any(np.abs(out - projected) > 1e-3)


# ---------------------------------------------------------------------------
# fitting.json
# ---------------------------------------------------------------------------

FIT = "fitting.json"


def _fit_cases(function: str):
    if not (GOLDEN / FIT).is_file():
        return []
    return [(i, c["name"]) for i, c in enumerate(load(FIT)["cases"]) if c["function"] == function]


def _cloud(case) -> np.ndarray:
    return f32(load(FIT)["clouds"][case["name"].split("/")[0]]["points"])


@pytest.mark.parametrize("i,name", _fit_cases("fit_rectangular_limits_basic"))
def test_fit_box(i, name):
    case = load(FIT)["cases"][i]
    lo, hi = L.fit_box(_cloud(case), case["params"]["padding"])
    assert_golden(lo, case["outputs"]["limit_min"], FIT, f"cases/{i}/outputs/limit_min")
    # FLT_MIN bug fixed: compare the max with the corrected (-FLT_MAX start) values
    fixed = case["outputs"]["nonref_limit_max_if_initialised_with_neg_flt_max"]
    assert_golden(hi, fixed, FIT, f"cases/{i}/outputs/limit_max")


def test_fit_box_fixes_flt_min_bug():
    """Where the reference's FLT_MIN start bites (all-negative axis), we differ from it."""
    hits = 0
    for i, _name in _fit_cases("fit_rectangular_limits_basic"):
        case = load(FIT)["cases"][i]
        ref_max = f32(case["outputs"]["limit_max"]).astype(np.float64)
        fixed = f32(case["outputs"]["nonref_limit_max_if_initialised_with_neg_flt_max"]).astype(np.float64)
        _, hi = L.fit_box(_cloud(case), case["params"]["padding"])
        buggy = np.abs(ref_max - fixed) > 1e-3
        hits += buggy.sum()
        if buggy.any():
            assert np.all(np.abs(hi[buggy] - ref_max[buggy]) > 1e-3)
            assert np.all(hi[buggy] < case["params"]["padding"])
    assert hits >= 3  # negative_octant (3 axes) and degenerate_identical (y)


@pytest.mark.parametrize("i,name", _fit_cases("fit_rectangular_limits"))
def test_fit_oriented_box(i, name):
    case = load(FIT)["cases"][i]
    inp = case["inputs"]
    lo, hi = L.fit_oriented_box(
        _cloud(case), f32(inp["limit_position"]), f32(inp["limit_rotation"]), case["params"]["padding"]
    )
    assert_golden(lo, case["outputs"]["limit_min"], FIT, f"cases/{i}/outputs/limit_min")
    # the FLT_MIN start only matters for degenerate (zero-extent) directions here, where
    # the fixed value differs by the rounding of the centring (< atol)
    assert_golden(hi, case["outputs"]["limit_max"], FIT, f"cases/{i}/outputs/limit_max")


@pytest.mark.parametrize("i,name", _fit_cases("fit_ellipsoid_limits"))
def test_fit_ellipsoid(i, name):
    case = load(FIT)["cases"][i]
    inp = case["inputs"]
    scale = L.fit_ellipsoid(
        _cloud(case), f32(inp["limit_position"]), f32(inp["limit_rotation"]), case["params"]["padding"]
    )
    assert_golden(scale, case["outputs"]["limit_scale"], FIT, f"cases/{i}/outputs/limit_scale")


@pytest.mark.parametrize("i,name", _fit_cases("fit_kdop_limits"))
def test_fit_kdop(i, name):
    case = load(FIT)["cases"][i]
    inp = case["inputs"]
    mins, maxs = L.fit_kdop(
        _cloud(case),
        f32(inp["limit_position"]),
        f32(inp["limit_rotation"]),
        f32(inp["kdop_axes"]),
        case["params"]["padding"],
    )
    assert_golden(mins, case["outputs"]["limit_mins"], FIT, f"cases/{i}/outputs/limit_mins")
    assert_golden(maxs, case["outputs"]["limit_maxs"], FIT, f"cases/{i}/outputs/limit_maxs")


def test_kdop_axes_match_reference():
    np.testing.assert_allclose(L.kdop_axes(), f32(load(FIT)["kdop_axes"]), atol=1e-7, rtol=0)
    np.testing.assert_allclose(L.kdop_axes(), f32(load(PROJ)["limits"]["kdop_axes"]), atol=1e-7, rtol=0)


def _angle_deg(a, b) -> float:
    c = abs(float(a @ b)) / (np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.degrees(np.arccos(min(1.0, c))))


@pytest.mark.parametrize("i,name", _fit_cases("fit_limit_orientations"))
def test_fit_orientation_geometry(i, name):
    """Mean at tolerance; axes compared with the reference up to column sign, with the
    README's allowances for the power iteration (0.3 deg; swing_plane's first two axes
    swapped; null-space axes of rank-deficient clouds arbitrary)."""
    case = load(FIT)["cases"][i]
    cloud_name = name.split("/")[0]
    pos, rot = L.fit_orientation(_cloud(case))
    assert_golden(pos, case["outputs"]["limit_position"], FIT, f"cases/{i}/outputs/limit_position")
    np.testing.assert_allclose(rot.T @ rot, np.eye(3), atol=1e-12)
    assert abs(np.linalg.det(rot) - 1.0) < 1e-12
    ref = f32(case["outputs"]["limit_rotation"]).astype(np.float64)
    inner = f32(case["outputs"]["inner_product"]).astype(np.float64)
    # our columns diagonalise the covariance, variance descending
    cloud = _cloud(case).astype(np.float64)
    cov = np.cov(cloud.T, bias=True)
    d = rot.T @ cov @ rot
    scale = max(np.abs(cov).max(), 1e-300)
    assert np.abs(d - np.diag(np.diag(d))).max() <= 1e-9 * scale
    assert d[0, 0] >= d[1, 1] - 1e-9 * scale and d[1, 1] >= d[2, 2] - 1e-9 * scale
    if cloud_name not in ("degenerate_identical", "twist_line"):
        # ... also the reference's float32 inner product (its null space is noise otherwise)
        dr = rot.T @ inner @ rot
        assert np.abs(dr - np.diag(np.diag(dr))).max() <= 1e-5 * np.abs(inner).max()
    if cloud_name in ("anisotropic", "negative_octant"):
        for k in range(3):
            assert _angle_deg(rot[:, k], ref[:, k]) < 0.3
    elif cloud_name == "twist_line":
        assert _angle_deg(rot[:, 0], ref[:, 0]) < 0.01
        assert d[1, 1] < 1e-12 * scale and d[2, 2] < 1e-12 * scale
    elif cloud_name == "swing_plane":
        # reference returns the in-plane axes in ascending order (power-iteration quirk)
        assert _angle_deg(rot[:, 0], ref[:, 1]) < 2.0
        assert _angle_deg(rot[:, 1], ref[:, 0]) < 2.0
        assert _angle_deg(rot[:, 2], ref[:, 2]) < 0.01
        assert d[2, 2] < 1e-12 * scale
    elif cloud_name == "degenerate_identical":
        np.testing.assert_array_equal(rot, np.eye(3))
    else:  # pragma: no cover - new golden clouds
        pytest.fail(f"unknown cloud {cloud_name}")


@pytest.mark.parametrize("i,name", _fit_cases("fit_limit_orientations"))
def test_fit_own_frame_box_volume_close_to_reference(i, name):
    """Fit + oriented box in our own frame encloses the cloud as tightly as the
    reference frame (volumes within 5%, or our box is smaller)."""
    case = load(FIT)["cases"][i]
    cloud = _cloud(case)
    pos, rot = L.fit_orientation(cloud)
    lo, hi = L.fit_oriented_box(cloud, pos, rot, 0.05)
    ref_pos = f32(case["outputs"]["limit_position"])
    ref_rot = f32(case["outputs"]["limit_rotation"])
    rlo, rhi = L.fit_oriented_box(cloud, ref_pos, ref_rot, 0.05)
    ours = np.prod(hi - lo)
    theirs = np.prod(rhi - rlo)
    assert ours <= theirs * 1.05
    assert L.contains_box(cloud, lo, hi, pos, rot).all()


@pytest.mark.parametrize(
    "i,name",
    _fit_cases("apply_rectangular_limit_basic, apply_rectangular_limit, apply_ellipsoid_limit, apply_kdop_limit"),
)
def test_probe_projections(i, name):
    case = load(FIT)["cases"][i]
    P = {k: f32(v) for k, v in case["inputs"].items() if k != "probes"}
    probes = f32(load(FIT)["clouds"][name.split("/")[0]]["probes"])
    pos, rot = P["limit_position"], P["limit_rotation"]
    outs = {
        "rect_basic": L.project_box(probes, P["aabb_min"], P["aabb_max"]),
        "rect": L.project_box(probes, P["rect_min"], P["rect_max"], pos, rot, always_map=True),
        "ellipsoid": L.project_ellipsoid(probes, P["ellipsoid_scale"], pos, rot, iterations=8, eps=1e-5),
        "kdop": L.project_kdop(probes, P["kdop_mins"], P["kdop_maxs"], pos, rot, P["kdop_axes"], always_map=True),
    }
    for key, out in outs.items():
        assert_golden(out, case["outputs"][key], FIT, f"cases/{i}/outputs/{key}")


# ---------------------------------------------------------------------------
# subsample.json
# ---------------------------------------------------------------------------

SUB = "subsample.json"


@pytest.mark.parametrize("i", range(4) if (GOLDEN / SUB).is_file() else [])
def test_subsample_indices_exact(i):
    case = load(SUB)["cases"][i]
    pts = f32(case["inputs"]["points"])
    idx = L.subsample(pts, case["params"]["distance_threshold"])
    assert idx.dtype == np.int64
    assert len(idx) == case["outputs"]["count"]
    np.testing.assert_array_equal(idx, np.asarray(case["outputs"]["indices"]))
    assert_golden(pts[idx], case["outputs"]["subsampled"], SUB, f"cases/{i}/outputs/subsampled")


# ---------------------------------------------------------------------------
# joint_limit_pipeline.json: the limit-space stages (subsample, fits, apply)
# ---------------------------------------------------------------------------

PIPE = "joint_limit_pipeline.json"
SPACES = ("full", "swing", "twist")


@pytest.mark.parametrize("j", range(2) if (GOLDEN / PIPE).is_file() else [])
def test_pipeline_subsample_and_fits(j):
    joint = load(PIPE)["joints"][j]
    axes = f32(joint["inputs"]["kdop_axes"])
    for space in SPACES:
        fo = joint["fit_outputs"][space]
        base = f"joints/{j}/fit_outputs/{space}"
        idx = L.subsample(f32(fo["limit_space_rotations"]), joint["params"]["subsample_distance_threshold"])
        assert len(idx) == fo["subsample_count"]
        np.testing.assert_array_equal(idx, np.asarray(fo["subsample_indices"]))
        sub = f32(fo["subsampled"])
        pos, rot = f32(fo["limit_position"]), f32(fo["limit_rotation"])
        our_pos, _ = L.fit_orientation(sub)
        assert_golden(our_pos, fo["limit_position"], PIPE, f"{base}/limit_position")
        lo, hi = L.fit_oriented_box(sub, pos, rot)
        assert_golden(lo, fo["rectangular_limit_min"], PIPE, f"{base}/rectangular_limit_min")
        assert_golden(hi, fo["rectangular_limit_max"], PIPE, f"{base}/rectangular_limit_max")
        assert_golden(
            L.fit_ellipsoid(sub, pos, rot), fo["ellipsoid_limit_scale"], PIPE, f"{base}/ellipsoid_limit_scale"
        )
        mins, maxs = L.fit_kdop(sub, pos, rot, axes)
        assert_golden(mins, fo["kdop_limit_mins"], PIPE, f"{base}/kdop_limit_mins")
        assert_golden(maxs, fo["kdop_limit_maxs"], PIPE, f"{base}/kdop_limit_maxs")


def _apply(kind: str, x, lim, axes):
    pos, rot = lim["limit_position"], lim["limit_rotation"]
    if kind == "rectangular":
        return L.project_box(x, lim["rectangular_limit_min"], lim["rectangular_limit_max"], pos, rot, always_map=True)
    if kind == "ellipsoid":
        return L.project_ellipsoid(x, lim["ellipsoid_limit_scale"], pos, rot, iterations=8, eps=1e-5)
    return L.project_kdop(x, lim["kdop_limit_mins"], lim["kdop_limit_maxs"], pos, rot, axes, always_map=True)


@pytest.mark.parametrize("j", range(2) if (GOLDEN / PIPE).is_file() else [])
def test_pipeline_apply_in_limit_space(j):
    """apply_joint_limit's limit-space step (project, then soften) from the stored
    limit-space rotations, for every limit type / swing-twist / soften combination."""
    joint = load(PIPE)["joints"][j]
    axes = f32(joint["inputs"]["kdop_axes"])
    limits = {
        k: {kk: f32(vv) for kk, vv in v.items()} for k, v in joint["apply_inputs"].items() if k.startswith("limits_")
    }
    checked = 0
    for c, case in enumerate(joint["apply_cases"]):
        parts = [("swing", "limits_swing"), ("twist", "limits_twist")] if case["swing_twist"] else [("", "limits_full")]
        for suffix, lim_key in parts:
            key_in = "limit_space_rotation" + (f"_{suffix}" if suffix else "")
            key_out = "limit_space_rotation_projected" + (f"_{suffix}" if suffix else "")
            x = f32(case["outputs"][key_in])
            if case["projection_enabled"]:
                y = _apply(case["limit_type_name"], x, limits[lim_key], axes)
                if case["projection_soften_enabled"]:
                    y = L.soften(x, y, case["projection_soften_falloff"], case["projection_soften_radius"])
            else:
                y = x.astype(np.float64)
            assert_golden(y, case["outputs"][key_out], PIPE, f"joints/{j}/apply_cases/{c}/outputs/{key_out}")
            checked += 1
    assert checked == 36

"""CCD IK with joint limits and restarts: synthetic chains, both back ends, and the LAFAN1 arm protocol."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jointlimits.errors import IKError
from jointlimits.ik import CCDSolver, ccd, precompute_start_poses, solve_ccd
from jointlimits.ik.ccd import _chain_fk
from jointlimits.limits.reach import ReachWindow, ReachWindowLimit
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Motion, Skeleton, forward_kinematics

from conftest import SHARED_MISSING

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
LAFAN = SHARED / "data" / "mocap" / "lafan1"
TEST_CLIP = "dance1_subject1.bvh"
ARM = ["LeftShoulder", "LeftArm", "LeftForeArm"]
X = np.array([1.0, 0.0, 0.0])


def _arm() -> Skeleton:
    return Skeleton(
        ["Root", "Clav", "Arm", "Fore", "Hand"],
        [-1, 0, 1, 2, 3],
        [[0, 0, 0], [0, 0, 0], [15, 0, 0], [30, 0, 0], [25, 0, 0]],
    )


def _window(half: float) -> ReachWindow:
    h = np.tan(half)
    return ReachWindow(X, [[-h, -h], [h, -h], [h, h], [-h, h]])


def _limits():
    return [
        ReachWindowLimit(quat.identity(()), X, [_window(0.3)], (-0.1, 0.1)),
        ReachWindowLimit(quat.identity(()), X, [_window(1.2)], (-0.8, 0.8)),
        ReachWindowLimit(
            quat.identity(()), X, [ReachWindow(X, [[0, -0.2], [4.0, -0.2], [4.0, 0.2], [0, 0.2]])], (-0.5, 0.5)
        ),
    ]


def _reachable_targets(n, seed, lims=None):
    """Effector positions of random poses (inside ``lims`` when given): reachable by construction."""
    rng = np.random.default_rng(seed)
    q = quat.normalize(quat.identity((n, 3)) + 0.5 * rng.normal(size=(n, 3, 4)))
    if lims is not None:
        q = np.stack([l.project(q[:, k]) for k, l in enumerate(lims)], 1)
    off = _arm().offsets[1:]
    _, P = _chain_fk(quat.identity(()), np.zeros(3), off, q)
    return P[:, 3], off


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
def test_free_chain_reaches_targets(backend):
    t, off = _reachable_targets(200, 0)
    res = ccd(
        quat.identity((200,)),
        np.zeros((200, 3)),
        off,
        t,
        quat.identity(3),
        tolerance=1e-3,
        max_iterations=500,
        backend=backend,
    )
    assert res.success.mean() > 0.97
    _, P = _chain_fk(quat.identity(()), np.zeros(3), off, res.rotations)
    np.testing.assert_allclose(np.linalg.norm(P[:, 3] - t, axis=-1), res.error, atol=1e-9)
    assert np.all(res.error[res.success] <= 1e-3)


def test_limits_never_violated_and_back_ends_agree():
    lims = _limits()
    rng = np.random.default_rng(1)
    t_ok, off = _reachable_targets(150, 2, lims)
    t_far = rng.normal(size=(150, 3)) * 60  # many unreachable or outside the limits
    t = np.concatenate([t_ok, t_far])
    N = len(t)
    sp = precompute_start_poses(
        quat.normalize(quat.identity((400, 3)) + 0.4 * rng.normal(size=(400, 3, 4))), off, count=4, limits=lims
    )
    out = {}
    for backend in ("compiled", "numpy"):
        res = ccd(
            quat.identity((N,)),
            np.zeros((N, 3)),
            off,
            t,
            quat.identity(3),
            lims,
            start_poses=sp,
            tolerance=0.05,
            max_iterations=1000,
            stall_ratio=1e-4,
            stall_iterations=20,
            backend=backend,
        )
        for k, lim in enumerate(lims):
            assert np.all(lim.contains(res.rotations[:, k])), f"{backend}: joint {k} outside its limit"
        out[backend] = res
    a, b = out["compiled"], out["numpy"]
    assert a.success[:150].mean() > 0.9
    assert not a.success[150:].all()  # the far targets include unreachable ones
    # same algorithm: identical up to rounding, which long grinds on unreachable targets may amplify
    same = np.all(np.abs(a.rotations - b.rotations) < 1e-7, axis=(1, 2)) & (a.iterations == b.iterations)
    assert same[:150].mean() > 0.97 and same.mean() > 0.9
    assert np.mean(a.success == b.success) > 0.97


def test_orientation_target():
    t, off = _reachable_targets(50, 3)
    rng = np.random.default_rng(3)
    q = quat.normalize(quat.identity((50, 3)) + 0.5 * rng.normal(size=(50, 3, 4)))
    G, P = _chain_fk(quat.identity(()), np.zeros(3), off, q)
    kw = dict(tolerance=1e-2, max_iterations=2000, stall_ratio=1e-4, stall_iterations=50)
    res = ccd(
        quat.identity((50,)),
        np.zeros((50, 3)),
        off,
        P[:, 3],
        quat.identity(3),
        target_rotations=G[:, 2],
        orientation_tolerance=1e-2,
        **kw,
    )
    plain = ccd(quat.identity((50,)), np.zeros((50, 3)), off, P[:, 3], quat.identity(3), **kw)
    G1, _ = _chain_fk(quat.identity(()), np.zeros(3), off, plain.rotations)
    G2, _ = _chain_fk(quat.identity(()), np.zeros(3), off, res.rotations)
    # orientation-aware CCD converges slowly, but is far closer in rotation than position-only CCD
    assert res.success.mean() > 0.5
    assert np.median(quat.angle(G2[:, 2], G[:, 2])) < 0.05 < np.median(quat.angle(G1[:, 2], G[:, 2]))
    np.testing.assert_allclose(quat.angle(G2[:, 2], G[:, 2]), res.orientation_error, atol=1e-7)
    assert np.all(res.orientation_error[res.success] <= 1e-2) and np.all(res.error[res.success] <= 1e-2)


def test_start_poses_cluster_training_poses():
    rng = np.random.default_rng(4)
    centres = quat.normalize(rng.normal(size=(3, 3, 4)))
    poses = quat.normalize(centres[rng.integers(0, 3, 600)] + 0.01 * rng.normal(size=(600, 3, 4)))
    off = _arm().offsets[1:]
    sp = precompute_start_poses(poses, off, count=3)
    # each true centre is recovered (up to the quaternion sign)
    d = np.abs(np.einsum("sji,cji->scj", sp.rotations, centres)).min(-1)
    assert np.all(d.max(0) > 0.999)
    _, P = _chain_fk(quat.identity(()), np.zeros(3), off, sp.rotations)
    np.testing.assert_allclose(sp.effectors, P[:, 3], atol=1e-12)


def test_bad_input_raises():
    off = _arm().offsets[1:]
    with pytest.raises(IKError, match="NaN"):
        ccd(quat.identity((1,)), np.zeros((1, 3)), off, [[np.nan, 0, 0]], quat.identity(3))
    bad = off.copy()
    bad[2] = 0
    with pytest.raises(IKError, match="zero-length bone"):
        ccd(quat.identity((1,)), np.zeros((1, 3)), bad, [[1.0, 0, 0]], quat.identity(3))
    with pytest.raises(IKError, match="no joint named"):
        CCDSolver(_arm(), ["Clav", "Elbow"])
    with pytest.raises(IKError, match="not a child"):
        CCDSolver(_arm(), ["Clav", "Fore"])
    with pytest.raises(IKError, match="expected 3 limits"):
        CCDSolver(_arm(), ["Clav", "Arm", "Fore"], limits=[None])


def test_solve_ccd_on_motion():
    mot = Motion.rest(_arm(), 20)
    t, _ = _reachable_targets(20, 5)
    out, res = solve_ccd(mot, ["Clav", "Arm", "Fore"], t, limits=None, tolerance=1e-3, max_iterations=500)
    _, gp = forward_kinematics(out)
    ok = res.success
    assert ok.mean() > 0.9
    np.testing.assert_allclose(gp[ok, 4], t[ok], atol=1e-3)


# --------------------------------------------------------------------------- LAFAN1 protocol
@pytest.fixture(scope="module")
def lafan():
    if not LAFAN.is_dir():
        pytest.skip(SHARED_MISSING)
    from jointlimits.io import bvh

    clips = {p.name: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    if TEST_CLIP not in clips or len(clips) < 2:
        pytest.skip(f"{TEST_CLIP} and at least one other clip are needed in {LAFAN}")
    return clips


def _protocol_frames(mot: Motion, count: int) -> np.ndarray:
    return np.linspace(0, mot.num_frames - 1, count).astype(int)


def test_lafan_arm_protocol_reach_windows(lafan):
    test = lafan[TEST_CLIP]
    sk = test.skeleton
    idx = [sk.index(j) for j in ARM]
    axes = sk.bone_directions()
    train = np.concatenate([m.rotations[:, idx] for k, m in lafan.items() if k != TEST_CLIP])
    lims = [ReachWindowLimit.fit(train[:, k], axes[j], padding=0.05) for k, j in enumerate(idx)]
    off = test.positions[0, idx + [sk.index("LeftHand")]]
    sp = precompute_start_poses(train, off, count=6, limits=lims)
    frames = _protocol_frames(test, 300)
    _, gp = forward_kinematics(test.frames(0, None))
    targets = gp[frames, sk.index("LeftHand")]
    solver = CCDSolver(sk, ARM, "LeftHand", lims, sp, tolerance=0.1)  # 1 mm in cm units
    res = solver.solve_arrays(test.rotations[frames], test.positions[frames], targets, init="reference")
    inside = np.all([lims[k].contains(res.rotations[:, k]) for k in range(3)], axis=0)
    assert inside.all(), "a returned pose leaves the fitted limits"
    ok = res.success & inside
    assert ok.mean() >= 0.99, f"success {ok.mean():.3f}"
    # check the reported error against forward kinematics of the returned pose
    new = test.rotations[frames].copy()
    new[:, idx] = res.rotations
    _, gp2 = forward_kinematics(test.with_rotations(new, test.positions[frames]))
    err = np.linalg.norm(gp2[:, sk.index("LeftHand")] - targets, axis=-1)
    np.testing.assert_allclose(err, res.error, atol=1e-9)
    assert np.all(err[res.success] <= 0.1)


def test_lafan_arm_protocol_joint_limits_model(lafan):
    try:
        from jointlimits.limits.model import JointLimits
    except ImportError as e:
        pytest.skip(f"jointlimits.limits.model.JointLimits not available yet ({e})")
    test = lafan[TEST_CLIP]
    sk = test.skeleton
    idx = [sk.index(j) for j in ARM]
    model = JointLimits.fit([m for k, m in lafan.items() if k != TEST_CLIP], shape="ellipsoid", padding=0.05)
    train = np.concatenate([m.rotations[:, idx] for k, m in lafan.items() if k != TEST_CLIP])
    off = test.positions[0, idx + [sk.index("LeftHand")]]
    solver = CCDSolver(sk, ARM, "LeftHand", model, None, tolerance=0.1)
    sp = precompute_start_poses(train, off, count=6, limits=solver.limits)
    solver.start_poses = sp
    frames = _protocol_frames(test, 100)
    _, gp = forward_kinematics(test)
    targets = gp[frames, sk.index("LeftHand")]
    res = solver.solve_arrays(test.rotations[frames], test.positions[frames], targets, init="current")
    inside = np.all([solver.limits[k].contains(res.rotations[:, k]) for k in range(3)], axis=0)
    assert inside.all(), "a returned pose leaves the model's limits"
    assert (res.success & inside).mean() >= 0.95


def _fitted_limits():
    """FittedLimits of every shape, whole and swing-twist, with and without the reference quirks,
    small ones and ones reaching past pi (so the long cover is tried)."""
    from jointlimits.limits.model import FittedLimit, Shape, fit_shape

    rng = np.random.default_rng(3)
    out = []
    for kind in ("box", "oriented-box", "ellipsoid", "kdop"):
        for spread in (0.4, 1.6):
            pts = rng.normal(size=(400, 3)) * spread * np.array([1.0, 0.6, 0.3]) + np.array([0.3, -0.2, 0.1])
            ref = quat.normalize(rng.normal(size=4))
            ax = rng.normal(size=3)
            shape = fit_shape(pts, kind, 0.05, None)
            out.append(FittedLimit(ref, ax, shape=shape))
            out.append(FittedLimit(ref, ax, shape=shape, reference_quirks=True))
            sw = fit_shape(pts * np.array([1.0, 1.0, 0.2]), kind, 0.05, None)
            tw = fit_shape(pts * 0.5, kind, 0.05, None)
            out.append(FittedLimit(ref, ax, swing=sw, twist=tw))
            out.append(FittedLimit(ref, ax, swing=sw, twist=tw, reference_quirks=True))
            if kind == "kdop":  # the reference's sequential slab clamps
                slab = Shape.from_dict({**shape.to_dict(), "exact": False})
                out.append(FittedLimit(ref, ax, shape=slab))
    return out


def test_fitted_limit_kernel_matches_project():
    """The compiled FittedLimit projection used by the compiled CCD equals FittedLimit.project."""
    from jointlimits.ik.ccd import project_fitted

    rng = np.random.default_rng(4)
    q = quat.normalize(rng.normal(size=(3000, 4)))
    for k, lim in enumerate(_fitted_limits()):
        qq = np.concatenate([q, quat.mul(lim.reference, quat.from_scaled_angle_axis(0.2 * rng.normal(size=(200, 3))))])
        np.testing.assert_allclose(
            project_fitted(lim, qq), lim.project(qq), rtol=0, atol=1e-9, err_msg=f"limit {k}: {lim.to_dict()['kind']}"
        )


def test_ccd_with_fitted_limits_runs_compiled_and_respects_them():
    """A JointLimits-style chain (FittedLimit per joint) goes through the compiled back end (no
    fallback) and agrees with the numpy back end on success and limits."""
    from jointlimits.limits.model import FittedLimit, fit_shape

    rng = np.random.default_rng(5)
    sk = _arm()
    lims = []
    for _ in range(3):
        pts = rng.normal(size=(300, 3)) * 0.5
        lims.append(
            FittedLimit(quat.identity(()), np.array([1.0, 0, 0]), shape=fit_shape(pts, "ellipsoid", 0.05, None))
        )
    solver = CCDSolver(sk, [1, 2, 3], None, lims, None, tolerance=0.05, max_iterations=200)
    # targets made by a pose inside the limits
    q = np.stack([lims[k].project(quat.from_scaled_angle_axis(rng.normal(size=(200, 3)) * 0.4)) for k in range(3)], 1)
    mot = Motion.rest(sk, 200)
    rot = mot.rotations.copy()
    rot[:, 1:4] = q
    _, gp = forward_kinematics(mot.with_rotations(rot))
    targets = gp[:, solver.end]
    r_c = solver.solve_arrays(mot.rotations, mot.positions, targets, backend="compiled")
    r_np = solver.solve_arrays(mot.rotations, mot.positions, targets, backend="numpy")
    for r in (r_c, r_np):
        inside = np.all([lims[k].contains(r.rotations[:, k]) for k in range(3)], axis=0)
        assert inside.all()
        assert r.success.mean() >= 0.7
    assert abs(r_c.success.mean() - r_np.success.mean()) <= 0.05


def test_ccd_with_implicit_limits_falls_back_to_numpy_and_respects_them():
    """Implicit shapes have no compiled step: "auto" must take the numpy back end, not crash."""
    from jointlimits.limits.model import FittedLimit, fit_shape

    rng = np.random.default_rng(6)
    sk = _arm()
    lims = [
        FittedLimit(
            quat.identity(()),
            np.array([1.0, 0, 0]),
            shape=fit_shape(rng.normal(size=(400, 3)) * 0.5, "implicit", 0.05, None),
        )
        for _ in range(3)
    ]
    solver = CCDSolver(sk, [1, 2, 3], None, lims, None, tolerance=0.05, max_iterations=100)
    mot = Motion.rest(sk, 20)
    q = np.stack([lims[k].project(quat.from_scaled_angle_axis(rng.normal(size=(20, 3)) * 0.4)) for k in range(3)], 1)
    rot = mot.rotations.copy()
    rot[:, 1:4] = q
    _, gp = forward_kinematics(mot.with_rotations(rot))
    r = solver.solve_arrays(mot.rotations, mot.positions, gp[:, solver.end])
    assert np.all([lims[k].contains(r.rotations[:, k]) for k in range(3)])
    with pytest.raises(IKError, match="numpy"):
        solver.solve_arrays(mot.rotations, mot.positions, gp[:, solver.end], backend="compiled")


def _same_result(a, b):
    for k in ("rotations", "success", "iterations", "error", "orientation_error", "restarts"):
        x, y = getattr(a, k), getattr(b, k)
        assert x.shape == y.shape and x.dtype == y.dtype, k
        np.testing.assert_array_equal(x, y, err_msg=k)


@pytest.mark.parametrize("N", [1, 63, 200])  # one target, under and over the split over the cores
def test_direct_call_equals_checked_path(N):
    """The one-call path (it checks, normalises and broadcasts in C++) gives the bits of the
    checked path (backend="compiled"): reach windows with restarts, fitted limits, free joints,
    per-target and shared inputs, quaternions that are not unit, orientation targets."""
    from jointlimits.ik.ccd import _ccd_direct

    rng = np.random.default_rng(9)
    reach = _limits()
    t_ok, off = _reachable_targets(N, 4, reach)
    t = t_ok + rng.normal(size=t_ok.shape) * 8 * (rng.random((N, 1)) < 0.3)  # some out of reach: restarts
    sp = precompute_start_poses(
        quat.normalize(quat.identity((300, 3)) + 0.4 * rng.normal(size=(300, 3, 4))), off, count=4, limits=reach
    )
    br = 3.0 * quat.normalize(quat.identity((N,)) + 0.1 * rng.normal(size=(N, 4)))
    bp = 0.5 * rng.normal(size=(N, 3))
    init = 0.5 * quat.normalize(quat.identity((N, 3)) + 0.3 * rng.normal(size=(N, 3, 4)))
    offN = off * (1.0 + 0.1 * rng.random((N, 1, 1)))
    fitted = _fitted_limits()[4:7]
    kw = dict(tolerance=0.05, max_iterations=150, stall_iterations=10)
    cases = [
        ((br, bp, offN, t, init, reach), dict(start_poses=sp)),
        ((br[0], bp[0], off, t, init[0], None), {}),
        (
            (br, bp, off, t, init, fitted),
            dict(
                target_rotations=2.0 * quat.normalize(rng.normal(size=(N, 4))),
                end_rotation=quat.normalize(rng.normal(size=(N, 4))),
            ),
        ),
        (
            (br[0], bp, offN, t, init[0], [None, reach[1], fitted[0]]),
            dict(
                target_rotations=quat.normalize(rng.normal(size=4)),
                end_rotation=quat.normalize(rng.normal(size=4)),
                start_poses=sp,
            ),
        ),
    ]
    for args, extra in cases:
        direct = ccd(*args, **extra, **kw)
        _same_result(direct, ccd(*args, **extra, **kw, backend="compiled"))
        opts = [kw["tolerance"], 0.01, 1.0, kw["max_iterations"], 4, kw["stall_iterations"], 0.002]
        assert (
            _ccd_direct(
                *args, extra.get("target_rotations"), extra.get("end_rotation"), extra.get("start_poses"), *opts
            )
            is not None
        )  # the one-call path ran


def test_direct_call_fallbacks_and_errors():
    """Lists, broadcasting the direct call does not do, and no targets give the checked path's
    results; bad values deep in a batch raise its precise errors."""
    t, off = _reachable_targets(100, 6)
    I3 = quat.identity(3)
    base = ccd(quat.identity((100,)), np.zeros((100, 3)), off, t, I3)
    listed = ccd(quat.identity((100,)).tolist(), np.zeros((100, 3)).tolist(), off.tolist(), t.tolist(), I3.tolist())
    _same_result(base, listed)
    empty = ccd(quat.identity((0,)), np.zeros((0, 3)), off, t[:0], I3)
    assert empty.rotations.shape == (0, 3, 4) and empty.success.shape == (0,)
    bad = t.copy()
    bad[77, 2] = np.nan
    with pytest.raises(IKError, match=r"targets contains NaN or infinite values \(first at row 77\)"):
        ccd(quat.identity((100,)), np.zeros((100, 3)), off, bad, I3)
    offN = np.repeat(off[None], 100, axis=0)
    offN[90, 2] = 0.0
    with pytest.raises(IKError, match="zero-length bone: chain joint 2"):
        ccd(quat.identity((100,)), np.zeros((100, 3)), offN, t, I3)
    with pytest.raises(IKError, match="init must be finite"):
        ccd(quat.identity((100,)), np.zeros((100, 3)), off, t, np.full((3, 4), np.inf))

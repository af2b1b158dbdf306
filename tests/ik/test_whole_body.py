"""Whole-body IK: exact recovery of noiseless poses, the DLS step against a finite-difference
Jacobian, targets reached, limits respected, NaN handling, orientation targets, fixed roots,
bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits._core import dls_normal_step as _dls_normal_step
from jointlimits.errors import IKError, JointLimitsError
from jointlimits.ik import WholeBodyIK, whole_body_ik
from jointlimits.motion import quat
from jointlimits.motion.procedural import over_rotate, range_of_motion
from jointlimits.motion.skeleton import Motion, forward_kinematics


@pytest.fixture(scope="module")
def clip():
    return range_of_motion(seconds=6.0, seed=3)


@pytest.fixture(scope="module")
def limits(clip):
    return JointLimits.fit(range_of_motion(seconds=30.0, seed=4), shape="ellipsoid", swing_twist=True)


def swing_dirs(m: Motion) -> np.ndarray:
    """Global direction of every bone (joint -> child), the part positions observe."""
    _, gp = forward_kinematics(m)
    sk = m.skeleton
    kids = [j for j in range(1, sk.num_joints)]
    d = gp[:, kids] - gp[:, sk.parents[kids]]
    return d / np.linalg.norm(d, axis=-1, keepdims=True)


def test_noiseless_positions_are_recovered_exactly(clip):
    _, gp = forward_kinematics(clip)
    ik = WholeBodyIK(clip.skeleton)
    res = ik.solve(gp)
    assert res.rotations.shape == clip.rotations.shape
    assert np.nanmax(res.error) < 1e-3  # cm, on a 175 cm body
    np.testing.assert_allclose(res.positions, gp, atol=2e-3)
    # every bone points where the clip's does; the closed-form start alone is already there
    sol = Motion(clip.skeleton, res.rotations, np.repeat(clip.skeleton.offsets[None], len(gp), 0), clip.frame_time)
    sol.positions[:, 0] = res.root_positions
    assert np.max(np.abs(swing_dirs(sol) - swing_dirs(clip))) < 1e-4
    g = ik.solve(gp, iterations=0)
    assert np.nanmax(g.error) < 1e-3
    np.testing.assert_allclose(np.linalg.norm(res.rotations, axis=-1), 1.0, atol=1e-12)


def test_joints_with_two_children_get_their_full_rotation(clip):
    # hips and chest see three non-collinear bones: their rotation is observable, twist included
    _, gp = forward_kinematics(clip)
    res = WholeBodyIK(clip.skeleton).solve(gp)
    sk = clip.skeleton
    for name in ("Hips", "Spine2"):
        j = sk.index(name)
        gr_true, _ = forward_kinematics(clip)
        gl = forward_kinematics(Motion(sk, res.rotations, np.repeat(sk.offsets[None], len(gp), 0), clip.frame_time))[0]
        assert np.degrees(quat.angle(gl[:, j], gr_true[:, j])).max() < 0.01, name


def test_dls_step_matches_finite_difference_least_squares(clip):
    # the compiled normal equations (envelope Cholesky, leaves-first order) against a dense numpy
    # solve with a numerically differentiated Jacobian
    sk = clip.skeleton
    J = sk.num_joints
    rng = np.random.default_rng(0)
    ik = WholeBodyIK(sk, posture_weight=0.0)
    L = quat.normalize(clip.rotations[:1] + 0.05 * rng.normal(size=(1, J, 4)))
    root = clip.positions[:1, 0] + rng.normal(size=(1, 3))
    _, tgt = forward_kinematics(clip[:1])
    w = rng.random((1, J)) + 0.5
    lam = 0.3
    gr, gp = ik._fk(L, root)
    dx = np.empty((1, 3 + 3 * J))
    push = np.zeros((1, J))
    free = np.ones(3 + 3 * J, np.uint8)
    _dls_normal_step(
        gp,
        tgt,
        w,
        np.zeros((1, J, 3)),
        np.zeros((1, J)),
        np.zeros((1, J, 3)),
        np.zeros((1, J)),
        np.zeros((1, J, 3)),
        np.full(1, lam),
        ik._chain,
        ik._chain_len,
        ik._off,
        ik._first,
        free,
        dx,
        push,
    )

    def positions(x):
        gpar = np.concatenate([quat.identity((1, 1)), gr[:, sk.parents[1:]]], axis=1)
        om = x[3:].reshape(1, J, 3)
        Ln = quat.mul(quat.from_scaled_angle_axis(quat.inv_mul_vec(gpar, om)), L)
        return ik._fk(Ln, root + x[:3])[1].reshape(-1)

    eps = 1e-5
    p0 = positions(np.zeros(3 + 3 * J))
    Jac = np.stack([(positions(eps * e) - positions(-eps * e)) / (2 * eps) for e in np.eye(3 + 3 * J)], axis=1)
    W = np.repeat(w[0], 3)
    A = Jac.T @ (W[:, None] * Jac) + lam * np.eye(3 + 3 * J)
    b = Jac.T @ (W * (tgt.reshape(-1) - p0))
    np.testing.assert_allclose(dx[0], np.linalg.solve(A, b), rtol=1e-6, atol=1e-8)


def test_dls_step_batches_over_the_cores_give_the_bits_of_one_pose_at_a_time(clip):
    # a big batch is split over the cores: each pose must come out as when solved alone, with
    # clamped joints, orientation and posture terms and per-pose damping all in play
    sk = clip.skeleton
    J = sk.num_joints
    F = 2 * clip.num_frames  # above the split (128 poses)
    rng = np.random.default_rng(1)
    ik = WholeBodyIK(sk)
    L = quat.normalize(np.concatenate([clip.rotations] * 2) + 0.05 * rng.normal(size=(F, J, 4)))
    _, gp = ik._fk(L, np.concatenate([clip.positions[:, 0]] * 2))
    _, tgt = forward_kinematics(clip)
    tgt = np.concatenate([tgt] * 2)
    wp = rng.random((F, J)) * (rng.random((F, J)) > 0.2)
    ro, rp = rng.normal(size=(F, J, 3)), rng.normal(size=(F, J, 3))
    wo, wr = rng.random((F, J)) * (rng.random((F, J)) > 0.7), np.full((F, J), 1e-3)
    nrm = rng.normal(size=(F, J, 3)) * (rng.random((F, J, 1)) > 0.8)
    nrm /= np.where(np.any(nrm != 0, axis=-1, keepdims=True), np.linalg.norm(nrm, axis=-1, keepdims=True), 1.0)
    lam = rng.random(F) + 0.01
    free = np.ones(3 + 3 * J, np.uint8)
    args = (gp, tgt, wp, ro, wo, rp, wr, nrm, lam)
    dx, push = np.empty((F, 3 + 3 * J)), np.empty((F, J))
    _dls_normal_step(*args, ik._chain, ik._chain_len, ik._off, ik._first, free, dx, push)
    push_one = np.empty((1, J))
    for f in range(0, F, 37):
        dx_one = np.empty((1, 3 + 3 * J))
        push_one[:] = 0.0
        _dls_normal_step(
            *(np.ascontiguousarray(a[f : f + 1]) for a in args),
            ik._chain,
            ik._chain_len,
            ik._off,
            ik._first,
            free,
            dx_one,
            push_one,
        )
        np.testing.assert_array_equal(dx[f], dx_one[0])
        clamped = np.any(nrm[f] != 0, axis=-1)
        np.testing.assert_array_equal(push[f, clamped], push_one[0, clamped])
    assert np.all(np.isfinite(dx)) and np.abs(dx).max() > 0


def test_limits_are_respected_and_clean_poses_inside_stay_exact(clip, limits):
    over = over_rotate(clip, 0.6, seed=1)
    assert not limits.contains(over.rotations).all()
    _, gp = forward_kinematics(over)
    res = WholeBodyIK(clip.skeleton, limits).solve(gp)
    assert limits.contains(res.rotations, 1e-6).all()
    # fewer than all joint-frames clamped, and the fit is still close where the limits allow
    assert res.clamped.any()
    free = WholeBodyIK(clip.skeleton).solve(gp)
    assert np.nanmean(res.error) > np.nanmean(free.error)
    # poses inside the limits: a zero-error solution is feasible and the solver gets close to
    # it (the twist it starts from, which positions do not observe, can start outside)
    _, gp2 = forward_kinematics(clip)
    inside = limits.contains(clip.rotations, 1e-6).all(axis=1)
    r2 = WholeBodyIK(clip.skeleton, limits).solve(gp2[inside])
    assert np.nanmean(r2.error) < 0.3 and np.nanmax(r2.error) < 1.5
    assert limits.contains(r2.rotations, 1e-6).all()


def test_hands_feet_head_targets_reached_from_rest(clip, limits):
    # targets from a real pose of the clip: reachable, and inside the limits
    sk = clip.skeleton
    _, gp = forward_kinematics(clip)
    ends = ["LeftHand", "RightHand", "LeftFoot", "RightFoot", "Head"]
    frames = np.arange(0, clip.num_frames, 15)
    start = Motion(sk, np.repeat(clip.rotations[:1], frames.size, 0), clip.positions[frames], clip.frame_time)
    targets = {n: gp[frames, sk.index(n)] for n in ends}
    for lim in (None, limits):
        out = whole_body_ik(start, targets, limits=lim, iterations=30)
        _, p = forward_kinematics(out)
        err = np.stack([np.linalg.norm(p[:, sk.index(n)] - targets[n], axis=-1) for n in ends])
        assert np.median(err) < 0.5 and np.mean(err < 2.0) > 0.95, (lim is not None, err.max())
        if lim is not None:
            assert lim.contains(out.rotations, 1e-6).all()


def test_nan_means_no_observation(clip):
    _, gp = forward_kinematics(clip)
    rng = np.random.default_rng(1)
    obs = gp.copy()
    miss = rng.random(gp.shape[:2]) < 0.2
    miss[:, 0] = False
    obs[miss] = np.nan
    res = WholeBodyIK(clip.skeleton).solve(obs)
    assert np.all(np.isfinite(res.rotations)) and np.all(np.isfinite(res.positions))
    # the observed joints are matched (the error is measured over them only)
    assert np.nanmean(res.error) < 0.02 and np.nanmax(res.error) < 0.5
    err = np.sqrt(np.nanmean(np.where(miss, np.nan, np.sum((res.positions - gp) ** 2, -1)), axis=1))
    np.testing.assert_allclose(res.error, err, rtol=1e-9)
    # a frame with a single observed joint still solves (posture fills the rest)
    one = np.full_like(gp[:1], np.nan)
    one[0, 5] = gp[0, 5]
    r1 = WholeBodyIK(clip.skeleton).solve(one)
    assert np.linalg.norm(r1.positions[0, 5] - gp[0, 5]) < 1e-3


def test_orientation_targets_and_fixed_root(clip):
    sk = clip.skeleton
    gr, gp = forward_kinematics(clip[:20])
    head = sk.index("Head")
    ik = WholeBodyIK(sk, fix_root_position=True, fix_root_rotation=True)
    start = np.repeat(clip.rotations[:1], 20, 0)
    res = ik.solve(
        {"LeftHand": gp[:, sk.index("LeftHand")]},
        orientations={"Head": gr[:, head]},
        init=start,
        root_positions=clip.positions[:20, 0],
        iterations=30,
    )
    np.testing.assert_allclose(res.root_positions, clip.positions[:20, 0])
    np.testing.assert_allclose(res.rotations[:, 0], start[:, 0])
    g2, p2 = forward_kinematics(Motion(sk, res.rotations, clip.positions[:20], clip.frame_time))
    assert np.degrees(quat.angle(g2[:, head], gr[:, head])).max() < 0.5
    assert np.linalg.norm(p2[:, sk.index("LeftHand")] - gp[:, sk.index("LeftHand")], axis=-1).max() < 0.5


def test_cover_of_the_start_does_not_matter(clip):
    _, gp = forward_kinematics(clip[:30])
    ik = WholeBodyIK(clip.skeleton)
    a = ik.solve(gp, init=clip.rotations[:30])
    b = ik.solve(gp, init=-clip.rotations[:30])
    np.testing.assert_allclose(a.positions, b.positions, atol=1e-9)
    assert np.degrees(quat.angle(a.rotations, b.rotations)).max() < 1e-6


def test_sequence_warm_start_matches_and_reports(clip):
    _, gp = forward_kinematics(clip)
    calls = []
    res = WholeBodyIK(clip.skeleton).solve_sequence(gp, chunk=64, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1][0] == calls[-1][1] == 2 * clip.num_frames
    assert np.nanmax(res.error) < 1e-3


def test_bad_inputs_give_precise_errors(clip, limits):
    sk = clip.skeleton
    ik = WholeBodyIK(sk)
    with pytest.raises(IKError, match=r"positions must be \[4, 22, 3\] or \[22, 3\], got \(4, 21, 3\)"):
        ik.solve(np.zeros((4, 21, 3)))
    with pytest.raises(IKError, match="infinite"):
        bad = np.zeros((2, 22, 3))
        bad[1, 3, 0] = np.inf
        ik.solve(bad)
    with pytest.raises(JointLimitsError, match="Nose"):
        ik.solve({"Nose": [0.0, 1.0, 2.0]})
    with pytest.raises(IKError, match="weights"):
        ik.solve(np.zeros((2, 22, 3)), weights=-np.ones(22))
    with pytest.raises(IKError, match="init"):
        ik.solve(np.zeros((2, 22, 3)), init=np.zeros((3, 22, 4)))
    with pytest.raises(IKError, match="posture_weight"):
        WholeBodyIK(sk, posture_weight=-1)
    with pytest.raises(IKError, match="limits"):
        WholeBodyIK(sk, limits=object())
    other = JointLimits.fit(range_of_motion(seconds=2.0, seed=0).frames(), shape="box")
    other.skeleton = other.skeleton.copy()
    other.skeleton.names[3] = "Renamed"
    with pytest.raises(IKError, match="another skeleton"):
        WholeBodyIK(sk, limits=other)
    with pytest.raises(IKError, match="no targets"):
        whole_body_ik(clip[:2], {})


class _ParentFirstCone:
    """A stand-in for a coupled model: only ``project`` on whole poses ``[F, J, 4]``; each
    joint's cone (30 deg about the identity) is applied parent before child."""

    def __init__(self, skeleton):
        self.skeleton = skeleton
        self.calls = []

    def project(self, q):
        self.calls.append(q.shape)
        out = quat.abs(np.array(q, np.float64))
        v = quat.to_scaled_angle_axis(out)
        n = np.linalg.norm(v, axis=-1, keepdims=True)
        v = np.where(n > np.radians(30), v * np.radians(30) / np.maximum(n, 1e-300), v)
        return quat.from_scaled_angle_axis(v)


def test_any_whole_pose_limit_model_plugs_in(clip):
    over = over_rotate(clip, 0.6, seed=4)[:40]
    _, gp = forward_kinematics(over)
    model = _ParentFirstCone(clip.skeleton)
    res = WholeBodyIK(clip.skeleton, model).solve(gp)
    assert model.calls and all(len(s) == 3 and s[1:] == (22, 4) for s in model.calls)
    assert np.degrees(quat.angle(res.rotations)).max() <= 30.0 + 1e-6
    assert res.clamped.any()


def test_orientation_only_targets_set_the_batch(clip):
    gr, _ = forward_kinematics(clip[:30])
    sk = clip.skeleton
    ik = WholeBodyIK(sk, fix_root_position=True)
    res = ik.solve(
        orientations={"Head": gr[:, 5], "LeftHand": gr[:, 9]},
        init=clip.rotations[0],
        root_positions=clip.positions[:30, 0],
        iterations=20,
    )
    assert res.rotations.shape == (30, 22, 4) and np.isnan(res.error).all()
    g2, _ = forward_kinematics(res.to_motion(sk))
    for j in (5, 9):
        assert np.degrees(quat.angle(g2[:, j], gr[:, j])).max() < 1e-3

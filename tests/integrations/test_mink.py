"""jointlimits.integrations.mink: the limit's rows against finite differences of the limit's own
distance, a step pushed past a limit, the retargeting example and the ``retarget`` command."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import MOCAP, ROOT, needs_shared

mink = pytest.importorskip("mink")
mujoco = pytest.importorskip("mujoco")

from jointlimits.export import export_limits  # noqa: E402
from jointlimits.integrations.mink import FittedLimits, local_rotations  # noqa: E402
from jointlimits.io import load, save  # noqa: E402
from jointlimits.limits.model import JointLimits  # noqa: E402

pytestmark = needs_shared
CLIP = MOCAP / "lafan1" / "walk4_subject1.bvh"
SHAPES = {
    "box": {"shape": "box"},
    "kdop": {"shape": "kdop"},
    "ellipsoid": {"shape": "ellipsoid"},
    "swing-twist": {"shape": "ellipsoid", "swing_twist": True},
    "implicit": {"shape": "implicit"},
    "coupled": {"shape": "implicit", "coupled": True},
}


@pytest.fixture(scope="module")
def body(tmp_path_factory):
    """(clip, ellipsoid limits, export, model, MJCF path, limits path): one export for every test."""
    m = load(CLIP).frames(0, 300)
    lim = JointLimits.fit(m, shape="ellipsoid")
    ex = export_limits(lim, "mujoco", clips=[m], variants=("covering",))
    d = tmp_path_factory.mktemp("mink")
    xml, lj = d / "body.xml", d / "limits.json"
    xml.write_text(ex.mjcf("covering"))
    lim.save(lj)
    return m, lim, ex, mujoco.MjModel.from_xml_path(str(xml)), xml, lj


def _config(model, q):
    c = mink.Configuration(model)
    c.update(q)
    return c


@pytest.mark.parametrize("kind", list(SHAPES))
def test_rows_match_finite_difference_of_the_distance(body, kind):
    """G dq equals the change of the rows s (the limit's distance in limit space) along a small
    dq, at a training pose and at a pose pushed outside."""
    m, _, ex, model, _, _ = body
    lim = JointLimits.fit(m, **SHAPES[kind])
    fl = FittedLimits(model, lim, detection_distance=None)
    qp = ex.qpos(model, m.rotations[[150]], m.positions[[150], 0])[0]
    rng = np.random.default_rng(1)
    far = qp.copy()  # every joint turned by ~0.6 rad
    mujoco.mj_integratePos(model, far, np.r_[np.zeros(6), rng.normal(0, 0.6, model.nv - 6)], 1.0)
    cfg = mink.Configuration(model)
    coupled = {jt.name for jt in fl.joints if jt.coupled_parent is not None}
    checked = bad = 0
    for q in (qp, far):
        cfg.update(q)
        C = fl.compute_qp_inequalities(cfg, 0.01)
        s0 = fl.signed_distance(cfg)
        spans, k = {}, 0
        for jt in fl.joints:
            spans[jt.name] = (k, k + len(s0[jt.name]))
            k += len(s0[jt.name])
        assert k == len(C.h)
        assert np.allclose(C.h, -0.95 * np.concatenate(list(s0.values())))
        # a coupled child's rows hold its parent's rotation fixed: move only the children for them
        for names in ({n for n in s0 if n not in coupled}, coupled):
            if not names:
                continue
            dq = np.zeros(model.nv)
            for jt in fl.joints:
                if jt.name in names:
                    dq[jt.dofs] = rng.normal(0, 1e-6, len(jt.dofs))
            q2 = q.copy()
            mujoco.mj_integratePos(model, q2, dq, 1.0)
            cfg.update(q2)
            s1 = fl.signed_distance(cfg)
            cfg.update(q)
            for n in names:
                a, b = spans[n]
                ds, pred = s1[n] - s0[n], C.G[a:b] @ dq
                checked += 1
                ok = np.allclose(pred, ds, rtol=0, atol=2e-3 * np.abs(dq).max())
                bad += not ok
    # the implicit fields are trilinear (their gradient jumps between cells) and their far-outside
    # projection snaps to nodes: a joint on such a kink (a toe that never moved) may differ there
    assert bad <= (0.2 * checked if kind in ("implicit", "coupled") else 0), (bad, checked)


def test_rows_are_zero_on_the_surface_and_negative_inside(body):
    m, lim, ex, model, _, _ = body
    fl = FittedLimits(model, lim)
    qp = ex.qpos(model, m.rotations[::50], m.positions[::50, 0])
    for q in qp:  # training poses are inside the fitted limits
        assert all(np.all(s <= 1e-9) for s in fl.signed_distance(_config(model, q)).values())
    rot = local_rotations(model, qp, lim.skeleton)
    assert np.allclose(np.abs(np.sum(rot[:, 1:] * m.rotations[::50, 1:], -1)), 1.0)


def test_a_pose_pushed_past_the_limit_does_not_cross_it(body):
    m, lim, ex, model, _, _ = body
    q0 = ex.qpos(model, m.rotations[[100]], m.positions[[100], 0])[0]
    outside = {}
    for name, limits in (("none", []), ("fitted", [FittedLimits(model, lim, min_distance_from_limits=0.01)])):
        cfg = _config(model, q0)
        hand = mink.FrameTask("LeftHand", "body", position_cost=1.0, orientation_cost=1.0)
        foot = mink.FrameTask("RightFoot", "body", position_cost=1.0, orientation_cost=0.0)
        root = mink.FrameTask("Hips", "body", position_cost=1.0, orientation_cost=1.0)
        root.set_target_from_configuration(cfg)
        t = cfg.get_transform_frame_to_world("LeftHand", "body")
        # the hand 60 cm behind and above, turned half a turn; the foot up to the hip
        hand.set_target(
            mink.SE3.from_translation(np.array([-0.4, 0.3, 0.4]))
            @ t
            @ mink.SE3.from_rotation(mink.SO3.exp(np.array([0, 0, 3.0])))
        )
        foot.set_target(
            mink.SE3.from_translation(
                cfg.get_transform_frame_to_world("RightUpLeg", "body").translation() + [0.3, 0, 0]
            )
        )
        n = 0
        for _ in range(8):
            v = mink.solve_ik(cfg, [hand, foot, root], 1.0, "daqp", damping=1e-3, limits=limits)
            cfg.integrate_inplace(v, 1.0)
            n += int((~lim.contains(local_rotations(model, cfg.q[None], lim.skeleton))).sum())
        outside[name] = n
    assert outside["none"] > 0  # the push does leave the limits without the constraint
    assert outside["fitted"] == 0


def test_example_runs_on_a_short_clip(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), MUJOCO_GL="disabled")
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "retarget_mink.py"), str(tmp_path), "--quick", "--frames", "4"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    lines = {
        ln.split()[0]: ln.split() for ln in res.stdout.splitlines() if ln.split()[:1] in (["none"], ["box"], ["fitted"])
    }
    assert set(lines) == {"none", "box", "fitted"}
    assert lines["fitted"][1] == "0"
    for name in lines:
        assert load(tmp_path / f"{name}.bvh").num_frames == 4


def _cli(*args):
    from click.testing import CliRunner

    from jointlimits.cli import main

    return CliRunner().invoke(main, list(map(str, args)))


def test_retarget_command(body, tmp_path):
    _, _, _, _, xml, lj = body
    src = tmp_path / "src.bvh"
    save(src, load(MOCAP / "lafan1" / "push1_subject2.bvh").frames(500, 504))
    out = tmp_path / "out.bvh"
    r = _cli("retarget", src, "--mjcf", xml, "--limits", lj, "-o", out, "--start", 1, "--frames", 2, "-q")
    assert r.exit_code == 0, r.output
    assert load(out).num_frames == 2
    r = _cli("retarget", src, "--mjcf", xml, "--limits", lj, "-o", out, "--frames", 3)
    assert r.exit_code == 2 and "file exists" in r.output and len(r.output.strip().splitlines()) == 1
    r = _cli("retarget", src, "--mjcf", lj, "--limits", lj, "-o", tmp_path / "b.bvh", "--frames", 3)
    assert r.exit_code == 2 and "not an MJCF model" in r.output
    assert not (tmp_path / "b.bvh").exists()
    r = _cli("retarget", tmp_path / "missing.bvh", "--mjcf", xml, "--limits", lj, "-o", tmp_path / "c.bvh")
    assert r.exit_code == 2 and r.output.startswith("error:")


def test_tangent_rows_are_the_limits_rows(body):
    from jointlimits.integrations.mink import tangent_rows

    m, lim, ex, model, _, _ = body
    fl = FittedLimits(model, lim)
    cfg = mink.Configuration(model)
    cfg.update(ex.qpos(model, m.rotations[[40]], m.positions[[40], 0])[0])
    jt = fl.joints[3]
    s, g = tangent_rows(lim.joint(jt.name), m.rotations[40, jt.index])
    s2, g2 = fl.joint_rows(cfg.data, jt)
    assert np.allclose(s, s2, atol=1e-9) and np.allclose(g, g2, atol=1e-5)


def test_ball_joint_model_rows_and_round_trip():
    """The ``mujoco-ball`` body (one ball joint per joint): local rotations round-trip and the
    rows' derivative matches the distance's (a k-DOP limit: linear rows, exact to rounding)."""
    m = load(CLIP).frames(0, 120)
    lim = JointLimits.fit(m, shape="kdop")
    ex = export_limits(lim, "mujoco-ball", clips=[m], variants=("covering",))
    model = mujoco.MjModel.from_xml_string(ex.mjcf("covering"))
    qp = ex.qpos(model, m.rotations[::40], m.positions[::40, 0])
    rot = local_rotations(model, qp, lim.skeleton)
    assert np.allclose(np.abs(np.sum(rot[:, 1:] * m.rotations[::40, 1:], -1)), 1.0, atol=1e-12)
    fl = FittedLimits(model, lim, detection_distance=None)
    cfg = mink.Configuration(model)
    cfg.update(qp[1])
    C = fl.compute_qp_inequalities(cfg, 0.01)
    s0 = fl.signed_distance(cfg)
    dq = np.r_[np.zeros(6), np.random.default_rng(0).normal(0, 1e-6, model.nv - 6)]
    q2 = qp[1].copy()
    mujoco.mj_integratePos(model, q2, dq, 1.0)
    cfg.update(q2)
    s1 = fl.signed_distance(cfg)
    ds = np.concatenate([s1[k] - s0[k] for k in s0])
    assert np.abs(ds).max() > 1e-7
    assert np.allclose(C.G @ dq, ds, rtol=0, atol=1e-10)


def test_extra_solves_on_binding_frames_stay_inside(body):
    from jointlimits.integrations.mink import RetargetSettings, retarget, tracking_errors

    _, lim, _, model, _, _ = body
    src = load(MOCAP / "lafan1" / "push1_subject2.bvh").frames(1184, 1190)
    err = {}
    for extra in (0, 1):
        st = RetargetSettings(active_iterations=extra)
        res = retarget(src, model, lim.skeleton, [FittedLimits(model, lim, min_distance_from_limits=0.005)], st)
        assert lim.contains(res.motion.rotations).all()
        err[extra] = tracking_errors(model, res)[1]
    assert err[1] < err[0]  # a binding row slows convergence; the extra solve on those frames helps

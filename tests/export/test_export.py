"""Engine export: each engine's documented limit test, written here again from the exported
parameters (in the engine's own names and units), checks the report; analytic Haar measures check
the random-rotation figures; the MuJoCo body is loaded, posed and simulated in ``mujoco``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import JointLimits, Motion, Skeleton
from jointlimits.cli import main
from jointlimits.export import ENGINES, ExportError, export_limits, get_engine
from jointlimits.export.swingtwist import (
    SwingTwistLimit,
    covering_ellipse,
    fit_frame,
    haar,
    haar_ball,
    sample_inside,
    split,
)
from jointlimits.motion import quat

from conftest import MOCAP, needs_shared

X = np.array([1.0, 0.0, 0.0])


# --------------------------------------------------------------------------- a limit with analytic answers


class QuatEllipseLimit:
    """Ground truth: relative to ``reference``, swing about x inside the ellipse
    ``(s_y / sin(ay/2))^2 + (s_z / sin(az/2))^2 <= 1`` in quaternion components and twist in
    [lo, hi]. Its Haar measure is ``sin(ay/2) sin(az/2) (hi - lo) / (2 pi)`` (a Haar rotation's
    swing components are uniform on the unit disk and its twist uniform on the circle)."""

    kind = "test"

    def __init__(self, reference, ay, az, lo, hi):
        self.reference = quat.normalize(np.asarray(reference, float))
        self.twist_axis = X.copy()
        self.ay, self.az, self.lo, self.hi = ay, az, lo, hi

    def measure(self) -> float:
        return math.sin(self.ay / 2) * math.sin(self.az / 2) * (self.hi - self.lo) / (2 * math.pi)

    def contains(self, q, tolerance=1e-6):
        r = quat.abs(quat.inv_mul(self.reference, q))
        s, tau = split(r)
        inside = (s[..., 2] / math.sin(self.ay / 2)) ** 2 + (s[..., 3] / math.sin(self.az / 2)) ** 2 <= 1
        return inside & (tau >= self.lo) & (tau <= self.hi)

    def project(self, q):
        return q

    def violation(self, q):
        return np.where(self.contains(q), 0.0, 1.0)

    def to_dict(self):
        return {}


REF = quat.normalize(np.array([0.9, 0.2, -0.3, 0.25]))


def _two_joint(limit, frames: int = 3000, seed: int = 1):
    """A root and one limited joint (bone along x), and a clip of rotations inside ``limit``."""
    sk = Skeleton(["root", "arm"], [-1, 0], [[0, 0, 0], [0.3, 0, 0]], end_sites=[(1, np.array([0.4, 0, 0]))])
    lim = JointLimits(sk).with_limit("arm", limit)
    rng = np.random.default_rng(seed)
    q = sample_inside(limit, limit.reference, frames, rng)
    rot = np.tile([1.0, 0, 0, 0], (q.shape[0], 2, 1))
    rot[:, 1] = q
    clip = Motion(sk, rot, np.repeat(sk.offsets[None], q.shape[0], axis=0), 1 / 30)
    return lim, clip


# --------------------------------------------------------------------------- engine tests, from the docs


def _swing_twist(r):
    """q = swing * twist about x, w >= 0 (written independently of the package)."""
    r = np.where(r[..., :1] < 0, -r, r)
    t = np.zeros_like(r)
    t[..., 0], t[..., 1] = r[..., 0], r[..., 1]
    t /= np.linalg.norm(t, axis=-1, keepdims=True)
    s = quat.mul(r, quat.inv(t))
    s = np.where(s[..., :1] < 0, -s, s)
    return s, 2 * np.arctan2(t[..., 1], t[..., 0])


def _swing_angle_axis(s):
    n = np.linalg.norm(s[..., 2:], axis=-1)
    theta = 2 * np.arctan2(n, s[..., 0])
    ax = s[..., 2:] / np.maximum(n, 1e-300)[..., None]
    return theta, ax


def engine_admits(engine: str, p: dict, r: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Each engine's documented test, from its exported parameters, on relative rotations r."""
    s, tau = _swing_twist(r)
    theta, ax = _swing_angle_axis(s)
    deg = math.radians
    if engine == "physx":  # tan-quarter swing angles vs the elliptical cone (CmConeLimitHelper)
        a1, a2 = 4 * np.arctan2(s[..., 2], 1 + s[..., 0]), 4 * np.arctan2(s[..., 3], 1 + s[..., 0])
        sw = (a1 / p["swingLimit"]["yAngle"]) ** 2 + (a2 / p["swingLimit"]["zAngle"]) ** 2 <= 1 + tol
        return sw & (tau >= p["twistLimit"]["lower"] - tol) & (tau <= p["twistLimit"]["upper"] + tol)
    if engine == "unity":  # PhysX's test with the limits in degrees
        a1, a2 = 4 * np.arctan2(s[..., 2], 1 + s[..., 0]), 4 * np.arctan2(s[..., 3], 1 + s[..., 0])
        sw = (a1 / deg(p["angularYLimit"])) ** 2 + (a2 / deg(p["angularZLimit"])) ** 2 <= 1 + tol
        return sw & (tau >= deg(p["lowAngularXLimit"]) - tol) & (tau <= deg(p["highAngularXLimit"]) + tol)
    if engine == "jolt":  # quaternion components vs sin(half-cone / 2); sin of half twist
        sw = (s[..., 2] / math.sin(p["mPlaneHalfConeAngle"] / 2)) ** 2 + (
            s[..., 3] / math.sin(p["mNormalHalfConeAngle"] / 2)
        ) ** 2 <= 1 + tol
        tx = np.sin(tau / 2)
        return sw & (tx >= math.sin(p["mTwistMinAngle"] / 2) - tol) & (tx <= math.sin(p["mTwistMaxAngle"] / 2) + tol)
    if engine == "bullet":  # computeConeLimitInfo: swingSpan2 about y, swingSpan1 about z
        lim2 = 1 / np.sqrt(ax[..., 0] ** 2 / p["swingSpan2"] ** 2 + ax[..., 1] ** 2 / p["swingSpan1"] ** 2)
        return (theta <= lim2 + tol) & (np.abs(tau) <= p["twistSpan"] + tol)
    if engine == "godot":
        return (theta <= p["swing_span"] + tol) & (np.abs(tau) <= p["twist_span"] + tol)
    if engine == "unreal":  # Swing1 about Z (XY plane), Swing2 about Y (XZ plane)
        lim2 = 1 / np.sqrt(
            ax[..., 0] ** 2 / deg(p["Swing2LimitDegrees"]) ** 2 + ax[..., 1] ** 2 / deg(p["Swing1LimitDegrees"]) ** 2
        )
        return (theta <= lim2 + tol) & (np.abs(tau) <= deg(p["TwistLimitDegrees"]) + tol)
    if engine == "usd":  # PhysicsLimitAPI rotX twist pair, rotY/rotZ symmetric: PhysX's D6 cone (degrees)
        a1, a2 = 4 * np.arctan2(s[..., 2], 1 + s[..., 0]), 4 * np.arctan2(s[..., 3], 1 + s[..., 0])
        sw = (a1 / deg(p["limit:rotY"]["high"])) ** 2 + (a2 / deg(p["limit:rotZ"]["high"])) ** 2 <= 1 + tol
        return sw & (tau >= deg(p["limit:rotX"]["low"]) - tol) & (tau <= deg(p["limit:rotX"]["high"]) + tol)
    if engine == "usd-spherical":  # cone 0 from X toward Y (about z), cone 1 toward Z (about y); twist free
        a1, a2 = 4 * np.arctan2(s[..., 2], 1 + s[..., 0]), 4 * np.arctan2(s[..., 3], 1 + s[..., 0])
        ay, az = deg(p["physics:coneAngle1Limit"]), deg(p["physics:coneAngle0Limit"])
        return (a1 / max(ay, 1e-12)) ** 2 + (a2 / max(az, 1e-12)) ** 2 <= 1 + tol
    if engine == "mujoco-ball":  # the rotation angle within [0, range]
        ang = 2 * np.arctan2(np.linalg.norm(r[..., 1:], axis=-1), np.abs(r[..., 0]))
        return ang <= p["ball"]["range"][1] + tol
    if engine == "mujoco":  # hinges y, z, x composed on the right: intrinsic yzx angles in their ranges
        from scipy.spatial.transform import Rotation

        e = Rotation.from_quat(r[..., [1, 2, 3, 0]]).as_euler("YZX")
        rng = np.array([h["range"] for h in p["hinges"]])
        return np.all((e >= rng[:, 0] - tol) & (e <= rng[:, 1] + tol), axis=-1)
    raise KeyError(engine)


def _relative(joint: dict, q: np.ndarray) -> np.ndarray:
    a = np.asarray(joint["parent_frame"]["rotation"])
    b = np.asarray(joint["child_frame"]["rotation"])
    return quat.mul(quat.inv_mul(a, q), b)


def test_haar_and_ball_have_the_haar_angle_law():
    rng = np.random.default_rng(0)
    ang = quat.angle(haar(200000, rng))
    # P(angle <= pi/2) = (pi/2 - sin(pi/2)) / pi
    assert abs(np.mean(ang <= math.pi / 2) - (math.pi / 2 - 1) / math.pi) < 0.004
    b = quat.angle(haar_ball(200000, 1.0, rng))
    assert b.max() <= 1.0 + 1e-12
    assert abs(np.mean(b <= 0.5) - (0.5 - math.sin(0.5)) / (1 - math.sin(1.0))) < 0.004


@pytest.mark.parametrize("metric", ["quat", "tanq", "angle"])
def test_swing_boundary_along_a_diagonal_is_analytic(metric):
    ay, az = 1.1, 0.6
    lim = SwingTwistLimit(ay, az, -0.4, 0.7, metric)
    d = np.array([0.0, 1.0, 1.0]) / math.sqrt(2)
    if metric == "quat":  # sin^2(t/2)/2 (1/sin^2(ay/2) + 1/sin^2(az/2)) = 1
        t = 2 * math.asin(math.sqrt(2 / (1 / math.sin(ay / 2) ** 2 + 1 / math.sin(az / 2) ** 2)))
    elif metric == "tanq":  # (4 atan(tan(t/4)/sqrt2))^2 (1/ay^2 + 1/az^2) = 1
        phi = 1 / math.sqrt(1 / ay**2 + 1 / az**2)
        t = 4 * math.atan(math.sqrt(2) * math.tan(phi / 4))
    else:  # t^2/2 (1/ay^2 + 1/az^2) = 1
        t = math.sqrt(2 / (1 / ay**2 + 1 / az**2))
    for twist, inside_twist in ((0.0, True), (0.69, True), (0.71, False), (-0.41, False)):
        tw = quat.from_angle_axis(twist, X)
        q_in = quat.mul(quat.from_angle_axis(t - 1e-6, d), tw)
        q_out = quat.mul(quat.from_angle_axis(t + 1e-6, d), tw)
        assert bool(lim.admits(q_in)) == inside_twist
        assert not lim.admits(q_out)
        assert bool(lim.admits(-q_in)) == inside_twist  # either cover
    # along the axes the half-angles are the limits in every metric
    assert lim.admits(quat.from_angle_axis(ay - 1e-6, np.array([0, 1.0, 0])))
    assert not lim.admits(quat.from_angle_axis(ay + 1e-6, np.array([0, 1.0, 0])))
    assert lim.admits(quat.from_angle_axis(az - 1e-6, np.array([0, 0, 1.0])))
    assert not lim.admits(quat.from_angle_axis(az + 1e-6, np.array([0, 0, 1.0])))


def test_jolt_ellipse_haar_measure_is_analytic():
    """Haar rotations' swing quaternion components are uniform on the unit disk: the Jolt test
    admits sin(ay/2) sin(az/2) (hi - lo) / 2pi of them."""
    lim = SwingTwistLimit(1.3, 0.7, -0.5, 1.0, "quat")
    r = haar(400000, np.random.default_rng(3))
    p = math.sin(0.65) * math.sin(0.35) * 1.5 / (2 * math.pi)
    assert abs(lim.admits(r).mean() - p) < 4 * math.sqrt(p * (1 - p) / r.shape[0])


def test_covering_ellipse_recovers_an_ellipse():
    t = np.linspace(0, 2 * np.pi, 500)
    pts = np.stack([2.0 * np.cos(t), 0.5 * np.sin(t)], axis=-1)
    a, b = covering_ellipse(pts)
    assert a == pytest.approx(2.0, rel=0.02) and b == pytest.approx(0.5, rel=0.02)
    # contains every point
    assert np.all((pts[:, 0] / a) ** 2 + (pts[:, 1] / b) ** 2 <= 1 + 1e-9)
    r, r2 = covering_ellipse(pts, circular=True)
    assert r == r2 == pytest.approx(2.0)


def test_fit_frame_centres_the_range():
    rng = np.random.default_rng(5)
    centre = quat.normalize(np.array([0.8, -0.1, 0.5, 0.3]))
    sw = rng.uniform(-1, 1, size=(4000, 2)) * [0.9, 0.3]
    tw = rng.uniform(-0.5, 0.5, 4000)
    r = quat.mul(quat.from_scaled_angle_axis(np.column_stack([np.zeros(4000), sw])), quat.from_angle_axis(tw, X))
    q = quat.mul(centre, r)
    # fitted starting from a reference 0.3 rad off the centre
    fr = fit_frame(q, X, quat.mul(centre, quat.from_angle_axis(0.3, np.array([0, 0.6, 0.8]))))
    assert quat.angle(fr.centre, centre) < 0.03
    rr = fr.to_engine(q)
    s, tau = split(rr)
    assert abs(tau.min() + tau.max()) < 1e-9  # twist range symmetric
    assert abs(np.ptp(tau) - 1.0) < 0.02
    ax = fr.axes()
    assert np.allclose(ax[:, 0], X, atol=1e-12)  # twist axis along the bone
    assert abs(abs(ax[:, 1] @ [0, 1.0, 0]) - 1) < 0.02  # major swing direction
    assert np.max(quat.angle(fr.from_engine(rr), q)) < 1e-9  # the engine frame round-trips


def test_sample_inside_is_uniform_over_the_limit():
    truth = QuatEllipseLimit(REF, 1.2, 0.8, -0.6, 0.6)
    q = sample_inside(truth, REF, 20000, np.random.default_rng(2))
    assert q.shape == (20000, 4) and truth.contains(q).all()
    # uniform over the volume: the twist is uniform on its range
    s, tau = split(quat.inv_mul(REF, q))
    assert abs(np.mean(np.abs(tau) < 0.3) - 0.5) < 0.015


@pytest.mark.parametrize("engine", list(ENGINES))
def test_report_matches_the_engines_documented_test(engine):
    truth = QuatEllipseLimit(REF, 1.4, 0.7, -0.5, 0.9)
    lim, clip = _two_joint(truth)
    ex = export_limits(lim, engine, clips=[clip], random=30000, seed=4)
    d = json.loads(json.dumps(ex.to_dict()))
    (joint,) = d["joints"]
    assert joint["name"] == "arm" and joint["parent"] == "root"
    r_train = _relative(joint, clip.rotations[:, 1])
    rand = haar(30000, np.random.default_rng(99))
    fit_rand = truth.contains(rand)
    P = truth.measure()
    for v in ("conservative", "covering"):
        p = joint["variants"][v]
        rep = joint["report"][v]
        # training share: the same frames, so the same number
        assert rep["train_engine"] == pytest.approx(engine_admits(engine, p, r_train).mean(), abs=1e-12)
        assert rep["train_fitted"] == 1.0
        # random shares: another Haar sample, within sampling error
        eng_rand = engine_admits(engine, p, _relative(joint, rand))
        for key, mine in (
            ("random_engine", eng_rand.mean()),
            ("false_accept", np.mean(eng_rand & ~fit_rand)),
            ("false_reject", np.mean(~eng_rand & fit_rand)),
        ):
            sd = math.sqrt(max(mine, 1e-4) * (1 - mine) / 30000)
            assert abs(rep[key] - mine) < 5 * sd + 1e-4, (v, key, rep[key], mine)
        # the fitted limit's Haar measure is analytic
        assert abs(rep["random_fitted"] - P) < 5 * math.sqrt(P * (1 - P) / 30000)
    cov, con = joint["report"]["covering"], joint["report"]["conservative"]
    assert cov["train_engine"] == 1.0  # contains the data
    assert con["false_accept"] <= 0.002  # inside the fitted limit
    assert con["random_engine"] <= cov["random_engine"] + 1e-12
    if engine == "jolt":  # the same family as the truth: covering ~ the truth itself
        assert cov["false_accept"] < 0.1 * P and cov["random_engine"] > 0.9 * P


def test_no_clips_samples_inside_the_fitted_limit():
    truth = QuatEllipseLimit(REF, 1.0, 0.5, -0.3, 0.3)
    lim, _ = _two_joint(truth, frames=10)
    ex = export_limits(lim, "physx", samples=3000, random=20000)
    (je,) = ex.joints
    assert je.training_source.startswith("samples")
    rep = je.report["covering"]
    assert rep["train_frames"] == 3000 and rep["train_fitted"] == 1.0 and rep["train_engine"] == 1.0


def test_bad_inputs_are_precise_errors():
    truth = QuatEllipseLimit(REF, 1.0, 0.5, -0.3, 0.3)
    lim, clip = _two_joint(truth, frames=50)
    with pytest.raises(ExportError, match="unknown engine"):
        get_engine("havok")
    with pytest.raises(ExportError, match="unknown variant"):
        export_limits(lim, "jolt", clips=[clip], variants=("loose",))
    other = Skeleton(["a", "b"], [-1, 0], [[0, 0, 0], [1, 0, 0]])
    with pytest.raises(ExportError, match="clip 0"):
        export_limits(lim, "jolt", clips=[Motion.rest(other, 3)])
    empty = JointLimits(lim.skeleton)
    with pytest.raises(ExportError, match="no limited joint"):
        export_limits(empty, "jolt")


# --------------------------------------------------------------------------- the MuJoCo body


@pytest.fixture(scope="module")
def humanoid_export():
    from jointlimits.motion.procedural import range_of_motion

    clip = range_of_motion(seconds=6.0, seed=3)
    lim = JointLimits.fit(clip, shape="ellipsoid", swing_twist=True)
    return clip, lim, export_limits(lim, "mujoco", clips=[clip], random=5000)


def test_mujoco_model_poses_match_and_report_the_admitted_share(humanoid_export):
    mujoco = pytest.importorskip("mujoco")
    clip, lim, ex = humanoid_export
    from jointlimits import forward_kinematics

    gr, _ = forward_kinematics(clip)
    for v in ("covering", "conservative"):
        m = mujoco.MjModel.from_xml_string(ex.mjcf(v))
        d = mujoco.MjData(m)
        assert m.opt.gravity[2] < 0 and m.ngeom > clip.num_joints
        qp = ex.qpos(m, clip.rotations, clip.positions[:, 0])
        # MuJoCo's own kinematics of those qpos reproduce the clip's global rotations (z-up)
        for f in range(0, clip.num_frames, 37):
            d.qpos[:] = qp[f]
            mujoco.mj_kinematics(m, d)
            for j, name in enumerate(clip.skeleton.names):
                b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
                assert quat.angle(d.xquat[b], quat.mul(ex.up_quat, gr[f, j])) < 1e-6
        # MuJoCo's joint-limit check (qpos within jnt_range) per exported joint = the report
        for je in ex.joints:
            ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"{je.info.name}_{s}") for s in ("y", "z", "twist")]
            assert min(ids) >= 0 and all(m.jnt_limited[i] for i in ids)
            a = qp[:, [m.jnt_qposadr[i] for i in ids]]
            rng = m.jnt_range[ids]
            share = np.all((a >= rng[:, 0]) & (a <= rng[:, 1]), axis=1).mean()
            assert share == pytest.approx(je.report[v]["train_engine"], abs=1e-12), je.info.name
        if v == "covering":
            assert ex.summary[v]["whole_pose"]["train_engine"] == 1.0


def _lie_down_and_simulate(mujoco, xml: str, seconds: float = 1.5) -> tuple[float, float]:
    """Drop the model lying just above the floor; (worst range excess in radians, root height)
    after ``seconds``, asserting everything stays finite."""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[2] = 0.25
    d.qpos[3:7] = quat.mul(quat.from_angle_axis(math.pi / 2, X), d.qpos[3:7])
    hinge = np.nonzero(m.jnt_limited)[0]
    adr, rng = m.jnt_qposadr[hinge], m.jnt_range[hinge]
    assert np.all((d.qpos[adr] >= rng[:, 0]) & (d.qpos[adr] <= rng[:, 1]))  # the centre pose is inside
    worst = 0.0
    while d.time < seconds:
        mujoco.mj_step(m, d)
        a = d.qpos[adr]
        worst = max(worst, float(np.max(np.maximum(rng[:, 0] - a, a - rng[:, 1]))))
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))
    return worst, float(d.qpos[2])


def test_mujoco_ragdoll_lies_on_the_floor_finite_and_within_ranges(humanoid_export):
    """1.5 s under gravity from lying just above the floor. MuJoCo's limits are soft constraints
    (solreflimit 0.01 s), so a joint may pass its range by a little under load: 0.05 rad allowed."""
    mujoco = pytest.importorskip("mujoco")
    _clip, _lim, ex = humanoid_export
    worst, z = _lie_down_and_simulate(mujoco, ex.mjcf("covering"))
    assert worst < 0.05
    assert 0.0 < z < 0.5  # lying on the floor, not fallen through it or flown off


def test_mujoco_ball_export_matches_mujocos_own_limit_check(humanoid_export):
    """With ball joints, MuJoCo's own check: a joint-limit constraint row is active for a joint
    exactly when its pose is outside (mj_fwdPosition builds the constraints)."""
    mujoco = pytest.importorskip("mujoco")
    clip, lim, _ = humanoid_export
    ex = export_limits(lim, "mujoco-ball", clips=[clip], random=3000)
    for v in ("covering", "conservative"):
        m = mujoco.MjModel.from_xml_string(ex.mjcf(v))
        d = mujoco.MjData(m)
        qp = ex.qpos(m, clip.rotations, clip.positions[:, 0])
        ids = {
            je.info.name: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"{je.info.name}_ball") for je in ex.joints
        }
        assert min(ids.values()) >= 0
        frames = range(0, clip.num_frames, 7)
        out = {n: 0 for n in ids}
        for f in frames:
            d.qpos[:] = qp[f]
            mujoco.mj_fwdPosition(m, d)
            limit_rows = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
            active = set(d.efc_id[: d.nefc][limit_rows].tolist())
            for n, i in ids.items():
                out[n] += i in active
        for je in ex.joints:
            r = je.info.frame.to_engine(clip.rotations[list(frames), je.index])
            expect = 1.0 - je.limits[v].admits(r).mean()
            assert out[je.info.name] / len(frames) == pytest.approx(expect, abs=1e-12), je.info.name
        if v == "covering":
            assert sum(out.values()) == 0


# --------------------------------------------------------------------------- command line


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _chain_clip(seed: int, frames: int = 300) -> Motion:
    """A root and a three-bone chain (bones along x) moving smoothly through wide rotations."""
    sk = Skeleton(
        ["root", "upper", "lower", "hand"],
        [-1, 0, 1, 2],
        [[0, 90.0, 0], [0, 0, 0], [30.0, 0, 0], [25.0, 0, 0]],
        end_sites=[(3, np.array([8.0, 0, 0]))],
    )
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2 * np.pi, frames)[:, None]
    rot = np.empty((frames, 4, 4))
    for j in range(4):
        amp, ph = rng.uniform(0.2, 0.9, 3), rng.uniform(0, 2 * np.pi, 3)
        rot[:, j] = quat.from_scaled_angle_axis(amp * np.sin(t * (1 + j % 2) + ph))
    return Motion(sk, rot, np.repeat(sk.offsets[None], frames, axis=0), 1 / 30)


@pytest.fixture(scope="module")
def limits_and_clips(tmp_path_factory):
    from jointlimits.io import bvh

    tmp = tmp_path_factory.mktemp("exp")
    a, b = _chain_clip(1), _chain_clip(2)
    pa, pb = tmp / "a.bvh", tmp / "b.bvh"
    bvh.save(pa, a)
    bvh.save(pb, b)
    lim = JointLimits.fit([a, b], shape="box")
    pl = tmp / "limits.json"
    lim.save(pl)
    return tmp, pl, pa, pb


def test_cli_export_writes_json_and_mjcf_and_prints_the_report(limits_and_clips):
    tmp, pl, pa, pb = limits_and_clips
    out = tmp / "rig.json"
    res = run("export", pl, "--to", "mujoco", "--clips", pa, pb, "--holdout", pb, "-o", out, "--random", 3000)
    assert res.exit_code == 0, res.output
    assert "train eng" in res.output and "held eng" in res.output and "ALL JOINTS" in res.output
    assert "holdout_engine" in json.loads(out.read_text())["report"]["summary"]["covering"]["whole_pose"]
    d = json.loads(out.read_text())
    assert d["engine"] == "mujoco" and d["clips"] == [str(pa), str(pb)] and d["holdout"] == [str(pb)]
    assert set(d["report"]["summary"]) == {"conservative", "covering"}
    assert d["report"]["summary"]["covering"]["whole_pose"]["train_engine"] == 1.0
    for v in ("conservative", "covering"):
        xml = tmp / f"rig-{v}.xml"
        assert xml.is_file() and d["files"][v] == str(xml)
        mujoco = pytest.importorskip("mujoco")
        mujoco.MjModel.from_xml_path(str(xml))
    # single variant, an .xml path, another engine
    res = run(
        "export",
        pl,
        "--to",
        "mujoco",
        "--variant",
        "covering",
        "-o",
        tmp / "one.xml",
        "-q",
        "--random",
        2000,
        "--samples",
        500,
    )
    assert res.exit_code == 0 and (tmp / "one.xml").is_file() and (tmp / "one.json").is_file()
    res = run("export", pl, "--to", "unreal", "--clips", pa, "-o", tmp / "ue.json", "-q", "--random", 2000)
    assert res.exit_code == 0, res.output
    p = json.loads((tmp / "ue.json").read_text())["joints"][0]["variants"]["covering"]
    assert {"Swing1LimitDegrees", "Swing2LimitDegrees", "TwistLimitDegrees", "PriAxis1", "SecAxis1"} <= set(p)


def test_cli_export_refuses_to_overwrite_inputs_and_bad_paths(limits_and_clips):
    tmp, pl, pa, _pb = limits_and_clips
    before = pl.read_bytes()
    res = run("export", pl, "--to", "jolt", "-o", pl)
    assert res.exit_code == 2 and "overwrite the input" in res.output and pl.read_bytes() == before
    res = run("export", pl, "--to", "jolt", "-o", tmp / "x.xml")
    assert res.exit_code == 2 and "give a .json path" in res.output
    res = run("export", pl, "--to", "jolt", "--clips", tmp / "missing.bvh", "-o", tmp / "y.json")
    assert res.exit_code == 2 and not (tmp / "y.json").exists()
    from jointlimits.io import bvh

    other = tmp / "other.bvh"
    bvh.save(other, Motion.rest(Skeleton(["a", "b"], [-1, 0], [[0, 0, 0], [1.0, 0, 0]]), 5))
    res = run("export", pl, "--to", "physx", "--clips", other, "-o", tmp / "z.json")
    assert res.exit_code == 2 and "other.bvh" in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp / "z.json").exists()


# --------------------------------------------------------------------------- real clips


@needs_shared
def test_lafan1_mujoco_export_loads_and_covering_admits_the_training_frames(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    from jointlimits.io import bvh

    clips = [bvh.load(MOCAP / "lafan1" / n) for n in ("walk4_subject1.bvh", "push1_subject2.bvh")]
    clips = [c.frames(0, None, 2) for c in clips]
    lim = JointLimits.fit(clips, shape="ellipsoid")
    ex = export_limits(lim, "mujoco", clips=clips, random=5000)
    assert ex.units == "centimetres" and ex.up_axis == "+y"
    path = tmp_path / "lafan.xml"
    path.write_text(ex.mjcf("covering"))
    m = mujoco.MjModel.from_xml_path(str(path))
    cov = ex.summary["covering"]
    assert cov["whole_pose"]["train_engine"] >= 0.99 and cov["mean"]["train_engine"] >= 0.99
    rot = np.concatenate([c.rotations for c in clips])
    qp = ex.qpos(m, rot, np.concatenate([c.positions[:, 0] for c in clips]))
    lim_j = np.nonzero(m.jnt_limited)[0]
    a, rng = qp[:, m.jnt_qposadr[lim_j]], m.jnt_range[lim_j]
    share = np.all((a >= rng[:, 0]) & (a <= rng[:, 1]), axis=1).mean()
    assert share == pytest.approx(cov["whole_pose"]["train_engine"], abs=1e-12)
    worst, z = _lie_down_and_simulate(mujoco, ex.mjcf("covering"), seconds=1.0)
    assert worst < 0.05 and 0.0 < z < 0.5

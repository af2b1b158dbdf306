"""Closed-form two-bone IK: the three reach cases, minimal knee motion, poles, golden demo vectors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jointlimits.errors import IKError
from jointlimits.ik import REACHABLE, TOO_CLOSE, TOO_FAR, ik_two_bone, solve_two_bone, two_bone, two_bone_positions
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Motion, Skeleton, forward_kinematics

from conftest import SHARED_MISSING

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
GOLDEN = SHARED / "golden" / "ik.json"


def _chain(rng, N):
    """Random chains: root position, parent rotation, local rotations and bone offsets, plus FK."""
    a = rng.normal(size=(N, 3))
    P = quat.normalize(rng.normal(size=(N, 4)))
    Lk = quat.normalize(rng.normal(size=(N, 4)))
    Lj = quat.normalize(rng.normal(size=(N, 4)))
    o1 = rng.normal(size=(N, 3)) * rng.uniform(0.3, 2.0, size=(N, 1))
    o2 = rng.normal(size=(N, 3)) * rng.uniform(0.3, 2.0, size=(N, 1))
    return a, P, Lk, Lj, o1, o2


def _fk(a, P, Lk, Lj, o1, o2):
    Gk = quat.mul(P, Lk)
    b = a + quat.mul_vec(Gk, o1)
    c = b + quat.mul_vec(quat.mul(Gk, Lj), o2)
    return b, c


def test_reachable_targets_hit_exactly_with_lengths_kept():
    rng = np.random.default_rng(1)
    a, P, Lk, Lj, o1, o2 = _chain(rng, 5000)
    b, c = _fk(a, P, Lk, Lj, o1, o2)
    lab, lbc = np.linalg.norm(o1, axis=-1), np.linalg.norm(o2, axis=-1)
    # targets at a distance strictly between |lab - lbc| and lab + lbc
    d = quat.normalize(rng.normal(size=(5000, 4)))[:, 1:]
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    r = np.abs(lab - lbc) + rng.uniform(0.01, 0.99, 5000) * (lab + lbc - np.abs(lab - lbc))
    t = a + r[:, None] * d
    sol = two_bone(a, b, c, t, P, Lk, Lj)
    assert np.all(sol.case == REACHABLE)
    b2, c2 = _fk(a, P, sol.root_local, sol.mid_local, o1, o2)
    assert np.max(np.abs(c2 - t)) < 1e-9
    assert np.max(np.abs(b2 - sol.mid)) < 1e-9
    np.testing.assert_allclose(np.linalg.norm(b2 - a, axis=-1), lab, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c2 - b2, axis=-1), lbc, rtol=0, atol=1e-12)
    # results are unit quaternions
    np.testing.assert_allclose(np.linalg.norm(sol.root_local, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(sol.mid_local, axis=-1), 1.0, atol=1e-12)


def test_knee_on_circle_of_two_spheres_and_moves_least():
    rng = np.random.default_rng(2)
    N = 400
    a, P, Lk, Lj, o1, o2 = _chain(rng, N)
    b, c = _fk(a, P, Lk, Lj, o1, o2)
    lab, lbc = np.linalg.norm(o1, axis=-1), np.linalg.norm(o2, axis=-1)
    d = rng.normal(size=(N, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    t = a + (np.abs(lab - lbc) + 0.5 * (lab + lbc - np.abs(lab - lbc)))[:, None] * d
    pos = two_bone_positions(a, b, c, t)
    np.testing.assert_allclose(np.linalg.norm(pos.mid - a, axis=-1), lab, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(pos.mid - t, axis=-1), lbc, atol=1e-10)
    # sample the circle: no point of it is closer to the old knee than the chosen one
    cos_t = (lab**2 + np.sum((t - a) ** 2, -1) - lbc**2) / (2 * lab * np.linalg.norm(t - a, axis=-1))
    m = a + (lab * cos_t)[:, None] * d
    rad = lab * np.sqrt(1 - cos_t**2)
    e1 = np.cross(d, rng.normal(size=(N, 3)))
    e1 /= np.linalg.norm(e1, axis=-1, keepdims=True)
    e2 = np.cross(d, e1)
    th = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    circle = m[:, None] + rad[:, None, None] * (
        np.cos(th)[None, :, None] * e1[:, None] + np.sin(th)[None, :, None] * e2[:, None]
    )
    best = np.min(np.linalg.norm(circle - b[:, None], axis=-1), axis=1)
    chosen = np.linalg.norm(pos.mid - b, axis=-1)
    assert np.all(chosen <= best + 1e-9)


def test_pole_steers_the_knee():
    a = np.zeros(3)
    b = np.array([0.0, -1.0, 0.1])
    c = np.array([0.0, -2.0, 0.0])
    t = np.array([0.0, -1.5, 0.0])
    pole = np.array([5.0, -0.7, 0.0])  # knee should bend toward +x
    pos = two_bone_positions(a, b, c, t, pole=pole)
    assert pos.mid[0] > 0.5 and abs(pos.mid[2]) < 1e-12
    np.testing.assert_allclose(np.linalg.norm(pos.mid - a), np.linalg.norm(b - a), atol=1e-12)
    no_pole = two_bone_positions(a, b, c, t)
    assert no_pole.mid[2] > 0.5 and abs(no_pole.mid[0]) < 1e-12  # minimal motion keeps the +z bend


def test_too_far_extends_straight_toward_target():
    rng = np.random.default_rng(3)
    a, P, Lk, Lj, o1, o2 = _chain(rng, 300)
    b, c = _fk(a, P, Lk, Lj, o1, o2)
    lab, lbc = np.linalg.norm(o1, axis=-1), np.linalg.norm(o2, axis=-1)
    d = rng.normal(size=(300, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    t = a + ((lab + lbc) * rng.uniform(1.01, 3.0, 300))[:, None] * d
    sol = two_bone(a, b, c, t, P, Lk, Lj)
    assert np.all(sol.case == TOO_FAR) and not np.any(sol.reached)
    b2, c2 = _fk(a, P, sol.root_local, sol.mid_local, o1, o2)
    np.testing.assert_allclose(c2, a + (lab + lbc)[:, None] * d, atol=1e-9)
    np.testing.assert_allclose(b2, a + lab[:, None] * d, atol=1e-9)


def test_too_close_folds_the_chain():
    rng = np.random.default_rng(4)
    N = 300
    a, P, Lk, Lj, o1, o2 = _chain(rng, N)
    o2 = (
        o2
        / np.linalg.norm(o2, axis=-1, keepdims=True)
        * (np.linalg.norm(o1, axis=-1) * rng.choice([0.4, 1.8], N))[:, None]
    )
    b, c = _fk(a, P, Lk, Lj, o1, o2)
    lab, lbc = np.linalg.norm(o1, axis=-1), np.linalg.norm(o2, axis=-1)
    d = rng.normal(size=(N, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    t = a + (np.abs(lab - lbc) * rng.uniform(0.05, 0.95, N))[:, None] * d
    sol = two_bone(a, b, c, t, P, Lk, Lj)
    assert np.all(sol.case == TOO_CLOSE)
    b2, c2 = _fk(a, P, sol.root_local, sol.mid_local, o1, o2)
    # the end sits |lab - lbc| from the root, on the ray toward the target: as close as it can get
    np.testing.assert_allclose(c2, a + np.abs(lab - lbc)[:, None] * d, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(b2 - a, axis=-1), lab, atol=1e-12)


def test_target_on_root_and_broadcasting():
    a = np.zeros((2, 3, 3))
    b = a + [0.0, 1.0, 0.0]
    c = a + [0.0, 1.0, 2.0]
    sol = two_bone_positions(a, b, c, a)  # target on the root: folded along the current direction
    assert sol.mid.shape == (2, 3, 3) and np.all(sol.case == TOO_CLOSE)
    np.testing.assert_allclose(np.linalg.norm(sol.end - a, axis=-1), 1.0, atol=1e-12)


def test_bad_input_raises():
    a, b, c = np.zeros(3), np.array([0.0, 1.0, 0.0]), np.array([0.0, 2.0, 0.0])
    q = quat.identity(())
    with pytest.raises(IKError, match="NaN"):
        two_bone(a, b, c, [np.nan, 0, 0], q, q, q)
    with pytest.raises(IKError, match="zero-length bone"):
        two_bone(a, a, c, [1.0, 0, 0], q, q, q)
    with pytest.raises(IKError, match="3-vectors"):
        two_bone_positions(a, b, c, [1.0, 0])


def _leg_skeleton() -> Skeleton:
    return Skeleton(["Hips", "UpLeg", "Leg", "Foot"], [-1, 0, 1, 2], [[0, 90, 0], [10, 0, 0], [0, -42, 0], [0, -40, 1]])


def test_solve_two_bone_on_a_motion():
    sk = _leg_skeleton()
    rng = np.random.default_rng(5)
    F = 50
    mot = Motion.rest(sk, F)
    mot.rotations[:] = quat.normalize(quat.identity((F, 4)) + 0.2 * rng.normal(size=(F, 4, 4)))
    _, gp = forward_kinematics(mot)
    target = gp[:, 3] + rng.normal(size=(F, 3)) * 8.0
    out = solve_two_bone(mot, "UpLeg", target)
    _, gp2 = forward_kinematics(out)
    lengths = np.linalg.norm(gp2[:, 3] - gp2[:, 1], axis=-1)
    reach = np.linalg.norm(target - gp[:, 1], axis=-1) <= 42 + np.linalg.norm([0, -40, 1])
    assert reach.sum() > 10
    np.testing.assert_allclose(gp2[reach, 3], target[reach], atol=1e-9)
    np.testing.assert_allclose(gp2[:, :2], gp[:, :2], atol=1e-12)  # hips and hip joint untouched
    np.testing.assert_allclose(np.linalg.norm(gp2[:, 2] - gp2[:, 1], axis=-1), 42.0, atol=1e-9)
    assert np.all(lengths <= 42 + np.linalg.norm([0, -40, 1]) + 1e-9)
    # array form and the end_joint spelling agree
    arr = solve_two_bone((mot.rotations, mot.positions, sk), "UpLeg", target, end_joint="Foot")
    np.testing.assert_allclose(arr, out.rotations, atol=1e-15)
    with pytest.raises(IKError, match="no joint named"):
        solve_two_bone(mot, "Arm", target)
    with pytest.raises(IKError, match="expected 3"):
        solve_two_bone(mot, "Hips", target, end_joint="Foot")


@pytest.mark.skipif(not GOLDEN.is_file(), reason=SHARED_MISSING)
def test_golden_ik_two_bone():
    data = json.loads(GOLDEN.read_text())
    man = json.loads((SHARED / "golden" / "manifest.json").read_text())["files"]["ik.json"]["outputs"]
    case = next(c for c in data["cases"] if c["function"] == "ik_two_bone")
    k = data["cases"].index(case)
    inp = {key: np.asarray(v, np.float32).astype(np.float64) for key, v in case["inputs"].items()}
    root_lr, mid_lr = ik_two_bone(**inp, max_length_buffer=float(np.float32(case["params"]["max_length_buffer"])))
    for name, got in (("bone_root_lr", root_lr), ("bone_mid_lr", mid_lr)):
        tol = next(o["tolerance"] for o in man if o["path"] == f"cases/{k}/outputs/{name}")
        exp = np.asarray(case["outputs"][name], np.float32).astype(np.float64)
        bound = tol["atol"] + tol["rtol"] * np.abs(exp)
        ok = np.all(np.abs(got - exp) <= bound, axis=-1) | np.all(np.abs(got + exp) <= bound, axis=-1)
        assert ok.all(), f"{name}: rows {np.nonzero(~ok)[0][:10]} differ from the reference"


@pytest.mark.parametrize("with_pole", [False, True])
def test_compiled_kernel_matches_numpy_reference(with_pole):
    """The fused kernel against the numpy reference, over all three reach cases, targets on the
    root and broadcast inputs."""
    from two_bone_reference import two_bone_numpy

    rng = np.random.default_rng(7)
    n = 20000
    a = rng.normal(size=(n, 3))
    b = a + rng.normal(size=(n, 3))
    c = b + rng.normal(size=(n, 3))
    t = a + 1.5 * rng.normal(size=(n, 3))
    t[:50] = a[:50]
    P, Lk, Lj = (quat.normalize(rng.normal(size=(n, 4))) for _ in range(3))
    pole = rng.normal(size=(n, 3)) if with_pole else None
    s1 = two_bone(a, b, c, t, P, Lk, Lj, pole)
    s2 = two_bone_numpy(a, b, c, t, P, Lk, Lj, pole)
    assert set(np.unique(s1.case)) == {REACHABLE, TOO_CLOSE, TOO_FAR}
    np.testing.assert_array_equal(s1.case, s2.case)
    for k in ("root_local", "mid_local", "mid", "end"):
        np.testing.assert_allclose(getattr(s1, k), getattr(s2, k), rtol=0, atol=1e-9, err_msg=k)
    # broadcasting: one parent rotation for all, [2, n/2] leading shape
    s3 = two_bone(
        a.reshape(2, -1, 3),
        b.reshape(2, -1, 3),
        c.reshape(2, -1, 3),
        t.reshape(2, -1, 3),
        P[0],
        Lk.reshape(2, -1, 4),
        Lj.reshape(2, -1, 4),
    )
    s4 = two_bone_numpy(a, b, c, t, P[0], Lk, Lj)
    np.testing.assert_allclose(s3.root_local.reshape(-1, 4), s4.root_local, atol=1e-9)
    with pytest.raises(IKError, match="zero-length"):
        two_bone(a[:3], a[:3], c[:3], t[:3], P[:3], Lk[:3], Lj[:3])
    for bad in ("gpu", "numpy"):  # the numpy reference lives in the tests now
        with pytest.raises(IKError, match="backend"):
            two_bone(a, b, c, t, P, Lk, Lj, backend=bad)


def test_compiled_ik_two_bone_matches_numpy_reference():
    from two_bone_reference import ik_two_bone_numpy

    rng = np.random.default_rng(8)
    n = 20000
    a = rng.normal(size=(n, 3))
    b = a + rng.normal(size=(n, 3))
    c = b + rng.normal(size=(n, 3))
    t = a + 1.5 * rng.normal(size=(n, 3))
    fwd = rng.normal(size=(n, 3))
    R, M, P = (quat.normalize(rng.normal(size=(n, 4))) for _ in range(3))
    r1, m1 = ik_two_bone(a, b, c, t, fwd, R, M, P)
    r2, m2 = ik_two_bone_numpy(a, b, c, t, fwd, R, M, P)
    np.testing.assert_allclose(r1, r2, rtol=0, atol=1e-9)
    np.testing.assert_allclose(m1, m2, rtol=0, atol=1e-9)


def _chains(n, seed=11):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, 3))
    b = a + rng.normal(size=(n, 3))
    c = b + rng.normal(size=(n, 3))
    t = a + 1.5 * rng.normal(size=(n, 3))
    P, Lk, Lj = (quat.normalize(rng.normal(size=(n, 4))) for _ in range(3))
    return a, b, c, t, P, Lk, Lj, rng.normal(size=(n, 3)), rng.normal(size=(n, 3))


@pytest.mark.parametrize("n", [1, 63, 64, 700, 5000])  # one row, below/above the GIL release, blocks, cores
def test_direct_call_equals_checked_path(n):
    """The one-call path (same-shape float64 arrays) gives the bits of the checked path (which
    backend="compiled" always takes), for the geometric solve with and without a pole and for
    the demo's formulation."""
    a, b, c, t, P, Lk, Lj, pole, fwd = _chains(n)
    for pl in (None, pole):
        s1 = two_bone(a, b, c, t, P, Lk, Lj, pl)
        s2 = two_bone(a, b, c, t, P, Lk, Lj, pl, backend="compiled")
        for k in ("root_local", "mid_local", "mid", "end", "case"):
            x, y = getattr(s1, k), getattr(s2, k)
            assert x.shape == y.shape and x.dtype == y.dtype, k
            np.testing.assert_array_equal(x, y, err_msg=k)
    r1, m1 = ik_two_bone(a, b, c, t, fwd, P, Lk, Lj, 0.02)
    r2, m2 = ik_two_bone(a, b, c, t, fwd, P, Lk, Lj, 0.02, backend="compiled")
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(m1, m2)


def test_direct_call_shapes_and_fallbacks():
    """Single chains ([3]/[4] inputs) and any leading shape come back in that shape; lists,
    float32, strided or broadcast inputs take the checked path with the same results; NaN and
    zero-length bones anywhere in a big batch raise the precise errors."""
    a, b, c, t, P, Lk, Lj, pole, fwd = _chains(6000)
    one = two_bone(a[0], b[0], c[0], t[0], P[0], Lk[0], Lj[0])
    assert one.root_local.shape == (4,) and one.mid.shape == (3,) and one.case.shape == ()
    ref = two_bone(a[:1], b[:1], c[:1], t[:1], P[:1], Lk[:1], Lj[:1])
    np.testing.assert_array_equal(one.root_local, ref.root_local[0])
    np.testing.assert_array_equal(one.end, ref.end[0])
    lead = two_bone(*(x[:24].reshape(2, 3, 4, -1) for x in (a, b, c, t, P, Lk, Lj)))
    assert lead.root_local.shape == (2, 3, 4, 4) and lead.case.shape == (2, 3, 4)
    rows = two_bone(a[:24], b[:24], c[:24], t[:24], P[:24], Lk[:24], Lj[:24])
    np.testing.assert_array_equal(lead.mid.reshape(-1, 3), rows.mid)
    empty = two_bone(*(x[:0] for x in (a, b, c, t, P, Lk, Lj)))
    assert empty.root_local.shape == (0, 4) and empty.case.shape == (0,)
    base = two_bone(a[:5], b[:5], c[:5], t[:5], P[:5], Lk[:5], Lj[:5])
    as_lists = two_bone(*(x[:5].tolist() for x in (a, b, c, t, P, Lk, Lj)))
    np.testing.assert_array_equal(as_lists.root_local, base.root_local)
    f32 = [x[:5].astype(np.float32) for x in (a, b, c, t, P, Lk, Lj)]
    np.testing.assert_array_equal(two_bone(*f32).mid_local, two_bone(*(x.astype(np.float64) for x in f32)).mid_local)
    strided = two_bone(*(np.asfortranarray(x[:5]) for x in (a, b, c, t, P, Lk, Lj)))
    np.testing.assert_array_equal(strided.mid_local, base.mid_local)
    rl, ml = ik_two_bone(*(x[:5].tolist() for x in (a, b, c, t, fwd, P, Lk, Lj)))
    np.testing.assert_array_equal(rl, ik_two_bone(a[:5], b[:5], c[:5], t[:5], fwd[:5], P[:5], Lk[:5], Lj[:5])[0])
    bad_t = t.copy()
    bad_t[4321, 1] = np.inf
    with pytest.raises(IKError, match="infinite"):
        two_bone(a, b, c, bad_t, P, Lk, Lj)
    with pytest.raises(IKError, match="infinite"):
        ik_two_bone(a, b, c, bad_t, fwd, P, Lk, Lj)
    bad_pole = pole.copy()
    bad_pole[5999, 0] = np.nan
    with pytest.raises(IKError, match="NaN"):
        two_bone(a, b, c, t, P, Lk, Lj, bad_pole)
    flat = c.copy()
    flat[4000] = b[4000]
    with pytest.raises(IKError, match=r"zero-length bone mid->end at index \(4000,\)"):
        two_bone(a, b, flat, t, P, Lk, Lj)
    with pytest.raises(IKError, match=r"zero-length bone mid->end at index \(4000,\)"):
        ik_two_bone(a, b, flat, t, fwd, P, Lk, Lj)
    with pytest.raises(ValueError):
        ik_two_bone(a, b, c, t, fwd, P, Lk, Lj, max_length_buffer="x")
    with pytest.raises(IKError, match="root must be an array of 3-vectors"):
        two_bone(None, b[0], c[0], t[0], P[0], Lk[0], Lj[0])
    with pytest.raises(IKError, match="bone_mid must be an array of 3-vectors"):
        ik_two_bone(a[0], None, c[0], t[0], fwd[0], P[0], Lk[0], Lj[0])

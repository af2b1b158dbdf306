"""Posture recovery from 3D joint positions: positions files, recover(), smoothing, the CLI, and
the limits' effect on held-out LAFAN1 excerpts."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import JointLimits
from jointlimits import io as motion_io
from jointlimits.cli import main
from jointlimits.errors import IKError
from jointlimits.ik.recover import recover, smooth_positions
from jointlimits.io import bvh
from jointlimits.io.positions import JointPositions, PositionsError, load_positions, save_positions
from jointlimits.motion import quat
from jointlimits.motion.procedural import humanoid_skeleton, over_rotate, range_of_motion
from jointlimits.motion.skeleton import forward_kinematics

from conftest import MOCAP, needs_shared


@pytest.fixture(scope="module")
def clip():
    return range_of_motion(seconds=4.0, seed=5)


@pytest.fixture(scope="module")
def limits():
    return JointLimits.fit(range_of_motion(seconds=30.0, seed=6), shape="ellipsoid", swing_twist=True)


# ------------------------------------------------------------------ positions files
def test_positions_round_trip_npz_csv_bvh(tmp_path, clip):
    _, gp = forward_kinematics(clip)
    gp = gp.copy()
    gp[3, 4] = np.nan
    names = clip.skeleton.names
    for ext in ("npz", "csv"):
        path = tmp_path / f"p.{ext}"
        save_positions(path, gp, names, fps=30)
        jp = load_positions(path)
        assert jp.names == names and jp.fps == 30
        np.testing.assert_array_equal(np.isnan(jp.positions), np.isnan(gp))
        np.testing.assert_array_equal(jp.positions[np.isfinite(gp)], gp[np.isfinite(gp)])
    bpath = tmp_path / "c.bvh"
    bvh.save(bpath, clip)
    jb = load_positions(bpath)
    assert jb.fps == pytest.approx(30)
    np.testing.assert_allclose(jb.positions, forward_kinematics(clip)[1], atol=1e-4)


def test_positions_subset_and_order_follow_the_skeleton(tmp_path, clip):
    _, gp = forward_kinematics(clip)
    sk = clip.skeleton
    pick = [sk.index("LeftHand"), sk.index("Hips")]
    save_positions(tmp_path / "s.csv", gp[:, pick], ["LeftHand", "Hips"])
    full = load_positions(tmp_path / "s.csv").for_skeleton(sk)
    assert full.shape == gp.shape
    np.testing.assert_allclose(full[:, pick], gp[:, pick])
    assert np.isnan(full[:, sk.index("Head")]).all()
    np.save(tmp_path / "a.npy", gp)
    np.testing.assert_array_equal(load_positions(tmp_path / "a.npy", sk).positions, gp)


def test_positions_bad_files_name_the_problem(tmp_path, clip):
    sk = clip.skeleton
    np.save(tmp_path / "a.npy", np.zeros((3, 22, 3)))
    with pytest.raises(PositionsError, match="give the skeleton"):
        load_positions(tmp_path / "a.npy")
    np.save(tmp_path / "b.npy", np.zeros((3, 21, 3)))
    with pytest.raises(PositionsError, match="21 joints without names, but the skeleton has 22"):
        load_positions(tmp_path / "b.npy", sk)
    (tmp_path / "c.csv").write_text("frame,Hips.x,Hips.y\n0,1,2\n")
    with pytest.raises(PositionsError, match="c.csv: line 1: expected three columns"):
        load_positions(tmp_path / "c.csv")
    (tmp_path / "d.csv").write_text("frame,Hips.x,Hips.y,Hips.z\n0,1,2,3\n1,1,oops,3\n")
    with pytest.raises(PositionsError, match=r"d.csv: line 3: Hips.y = 'oops' is not a number"):
        load_positions(tmp_path / "d.csv")
    (tmp_path / "e.csv").write_text("frame,Nose.x,Nose.y,Nose.z\n0,1,2,3\n")
    with pytest.raises(PositionsError, match="joints not in the skeleton: Nose"):
        load_positions(tmp_path / "e.csv").for_skeleton(sk)
    np.savez(tmp_path / "f.npz", pos=np.zeros((2, 22, 3)))
    with pytest.raises(PositionsError, match="no 'positions' array"):
        load_positions(tmp_path / "f.npz")
    with pytest.raises(PositionsError, match="unknown positions file type '.txt'"):
        load_positions(tmp_path / "g.txt")
    with pytest.raises(PositionsError, match="no such file"):
        load_positions(tmp_path / "missing.npz")
    with pytest.raises(PositionsError, match="infinite"):
        JointPositions(np.full((1, 1, 3), np.inf), ["Hips"])


# ------------------------------------------------------------------ recover()
def test_recover_noiseless_and_over_rotated(clip, limits):
    _, gp = forward_kinematics(clip)
    m, rep = recover(gp, clip)
    _, p = forward_kinematics(m)
    assert np.abs(p - gp).max() < 0.01
    assert rep.error_after < 0.01 and rep.frames == clip.num_frames and not rep.limited
    over = over_rotate(clip, 0.6, seed=2)
    _, gpo = forward_kinematics(over)
    m2, rep2 = recover(gpo, over, limits)
    assert limits.contains(m2.rotations, 1e-6).all()
    assert rep2.outside_after == 0 and rep2.frames_outside_after == 0 and rep2.outside_before > 0


def test_recover_with_gaps_and_empty_frames(clip):
    _, gp = forward_kinematics(clip)
    obs = gp.copy()
    rng = np.random.default_rng(0)
    obs[rng.random(obs.shape[:2]) < 0.3] = np.nan
    obs[10:13] = np.nan  # three frames with no observation at all
    m, rep = recover(obs, clip, smooth=0.05)
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.positions))
    assert rep.extra["frames_without_observation"] == 3
    _, p = forward_kinematics(m)
    # the empty frames are carried over from their neighbours (warm start), not thrown away
    assert np.linalg.norm(p[11, 0] - gp[11, 0]) < 10.0
    with pytest.raises(IKError, match="every position is NaN"):
        recover(np.full_like(gp, np.nan), clip)
    with pytest.raises(IKError, match=r"\[F, 22, 3\]"):
        recover(gp[:, :5], clip)
    with pytest.raises(IKError, match="infinite"):
        recover(np.where(obs == obs, np.inf, obs), clip)


def test_smoothing_is_zero_lag_and_keeps_gaps():
    t = np.linspace(0, 2, 61)
    sig = np.stack([np.sin(t), np.cos(t), t], -1)[:, None, :]
    rng = np.random.default_rng(1)
    noisy = sig + rng.normal(size=sig.shape) * 0.05
    noisy[20] = np.nan
    out = smooth_positions(noisy, 1 / 30, 0.05)
    assert np.isnan(out[20]).all() and np.isfinite(np.delete(out, 20, 0)).all()
    keep = np.isfinite(out[:, 0, 0])
    assert np.abs(out - sig)[keep].mean() < 0.6 * np.abs(noisy - sig)[keep].mean()
    const = np.ones((10, 2, 3))
    np.testing.assert_allclose(smooth_positions(const, 1 / 30, 0.1), const)
    with pytest.raises(IKError, match="half-life"):
        smooth_positions(const, 1 / 30, -1)


# ------------------------------------------------------------------ CLI
def test_cli_recover(tmp_path, clip, limits):
    _, gp = forward_kinematics(clip[:40])
    pos = tmp_path / "pos.npz"
    save_positions(pos, gp + np.random.default_rng(2).normal(size=gp.shape), clip.skeleton.names, 30)
    rig = tmp_path / "rig.bvh"
    bvh.save(rig, clip[:1])
    lim = tmp_path / "lim.json"
    limits.save(lim)
    out = tmp_path / "out.bvh"
    r = CliRunner().invoke(main, ["recover", str(pos), "--skeleton", str(rig), "--limits", str(lim), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "outside the limits" in r.output and "after 0 joint-frames in 0 frames" in r.output
    m = bvh.load(out)
    assert m.num_frames == 40 and limits.contains(m.rotations, 1e-4).all()
    glb = tmp_path / "out.glb"  # every writable format, by the output's extension (#38)
    r = CliRunner().invoke(main, ["recover", str(pos), "--skeleton", str(rig), "--limits", str(lim), "-o", str(glb)])
    assert r.exit_code == 0, r.output
    g = motion_io.load(glb)
    assert g.num_frames == 40 and g.skeleton.names == m.skeleton.names and limits.contains(g.rotations, 1e-3).all()
    r = CliRunner().invoke(main, ["recover", str(pos), "--skeleton", str(rig), "-o", str(out)])
    assert r.exit_code == 2 and "file exists; pass --force" in r.output and bvh.load(out).num_frames == 40
    out.unlink()
    before = rig.read_bytes()
    for args, msg in [
        (["recover", str(pos), "--skeleton", str(rig), "-o", str(rig)], "would overwrite the input"),
        (["recover", str(tmp_path / "nope.npz"), "--skeleton", str(rig), "-o", str(out)], "no such file"),
        (["recover", str(lim), "--skeleton", str(rig), "-o", str(out)], "unknown positions file type"),
        (["recover", str(pos), "--skeleton", str(rig), "-o", str(tmp_path / "x.npz")], "one of .bvh, .glb"),
        (["recover", str(pos), "--skeleton", str(rig), "-o", str(out), "--smooth", "0"], "--smooth"),
    ]:
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, (args, r.output)
        assert msg in r.output and r.output.count("\n") == 1, r.output
    assert rig.read_bytes() == before
    other = JointLimits.fit(range_of_motion(humanoid_skeleton(), seconds=2.0).frames(), shape="box")
    other.skeleton.names[2] = "Other"
    other.save(tmp_path / "other.json")
    r = CliRunner().invoke(
        main, ["recover", str(pos), "--skeleton", str(rig), "--limits", str(tmp_path / "other.json"), "-o", str(out)]
    )
    assert r.exit_code == 2 and "error:" in r.output


# ------------------------------------------------------------------ real clips
@needs_shared
def test_limits_help_on_held_out_lafan1_excerpt():
    lafan = MOCAP / "lafan1"
    train = [
        bvh.load(lafan / f"{n}.bvh")[::2]
        for n in ("dance1_subject1", "walk4_subject1", "multipleActions1_subject1", "fallAndGetUp3_subject1")
    ]
    limits = JointLimits.fit(train, shape="ellipsoid", swing_twist=True)
    test = bvh.load(lafan / "obstacles1_subject1.bvh")[1000:1250]
    _, clean = forward_kinematics(test)
    rest = quat.normalize(
        np.stack(
            [limits.joints[j].reference if j in limits.joints else quat.identity(()) for j in range(test.num_joints)]
        )
    )
    rng = np.random.default_rng(0)
    F, J = clean.shape[:2]
    res = {}
    for noise in (1.0, 2.0):
        obs = clean + rng.normal(size=clean.shape) * noise
        hit = np.nonzero(rng.random(F) < 0.05)[0]
        obs[hit, rng.integers(0, J, hit.size)] += 20.0 / np.sqrt(3)
        obs[rng.random((F, J)) < 0.1] = np.nan
        for name, lim in (("free", None), ("limits", limits)):
            m, _ = recover(obs, test, lim, rest=rest)
            _, p = forward_kinematics(m)
            res[noise, name] = (
                np.linalg.norm(p - clean, axis=-1).mean(),
                np.degrees(quat.angle(m.rotations, test.rotations)).mean(),
                (~limits.contains(m.rotations, 1e-6)).mean(),
            )
    for noise in (1.0, 2.0):
        assert res[noise, "limits"][2] == 0.0
        assert res[noise, "free"][2] > 0.02
    assert res[2.0, "limits"][1] < res[2.0, "free"][1]
    assert res[1.0, "limits"][0] < res[1.0, "free"][0] + 1.0


def test_damper_gain_is_the_springs_gain():
    # recover (ik) writes the damper's gain itself because ik sits below cleanup
    from jointlimits.cleanup.springs import halflife_to_gain
    from jointlimits.ik.recover import _damper_gain

    for h, dt in [(0.05, 1 / 30), (0.2, 1 / 120), (1e-3, 1 / 60), (3.0, 0.5)]:
        assert _damper_gain(h, dt) == float(halflife_to_gain(h, dt))


def _lafan(name: str, first: int, n: int):
    """Frames first..first+n of a shared LAFAN1 clip, parsed from those rows only."""
    raw = (MOCAP / "lafan1" / name).read_bytes().decode().replace("\r\n", "\n")
    head, rest = raw.split("Frames:", 1)
    rows = rest.split("\n")[2:]
    return bvh.loads(head + f"Frames: {n}\nFrame Time: 0.033333\n" + "\n".join(rows[first : first + n]) + "\n")


@needs_shared
def test_without_limits_twists_come_from_the_rigs_mean_posture():
    """LAFAN1's rest pose has its bones along local X: pulled toward it, unobserved twists went
    72.9 deg wrong on average (shoulders 176 deg). From the mean posture of another clip of the
    same actor they stay within a few tens of degrees."""
    clip = _lafan("obstacles1_subject1.bvh", 300, 150)
    rig = _lafan("walk4_subject1.bvh", 0, 150)
    _, p = forward_kinematics(clip)
    m, rep = recover(p, rig)
    assert rep.extra["posture_prior"] == "rig mean posture"
    err = np.degrees(quat.angle(m.rotations, clip.rotations))
    sk = clip.skeleton
    assert err.mean() < 20.0, err.mean()
    for n in ("LeftShoulder", "RightShoulder", "LeftArm", "RightArm", "LeftUpLeg", "RightUpLeg"):
        assert err[:, sk.index(n)].mean() < 45.0, (n, err[:, sk.index(n)].mean())

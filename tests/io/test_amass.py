"""AMASS / SMPL-family npz import: key layouts, rotations against scipy, rest offsets, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.spatial.transform import Rotation

from jointlimits import JointLimits, forward_kinematics
from jointlimits import io as motion_io
from jointlimits.cli import main
from jointlimits.errors import FormatError
from jointlimits.io import amass, bvh
from jointlimits.motion import quat

F = 150


def rot_err(a: np.ndarray, b: np.ndarray) -> float:
    d = quat.inv_mul(a, b)
    return float(np.max(2 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))))


def smooth_poses(n_joints: int, seed: int, scale: float = 0.6) -> np.ndarray:
    """Axis-angle poses ``[F, n_joints * 3]`` that move smoothly (a filtered random walk)."""
    rng = np.random.default_rng(seed)
    steps = rng.normal(0, 0.05, (F, n_joints * 3))
    walk = np.cumsum(steps, axis=0)
    return scale * np.tanh(walk)


def from_rotvec(aa: np.ndarray) -> np.ndarray:
    return Rotation.from_rotvec(aa.reshape(-1, 3)).as_quat()[:, [3, 0, 1, 2]].reshape(aa.shape[:-1] + (4,))


@pytest.fixture
def smplh(tmp_path):
    poses = smooth_poses(52, 1)
    d = dict(
        poses=poses,
        trans=np.cumsum(np.full((F, 3), 0.01), axis=0),
        betas=np.linspace(-1, 1, 16),
        gender=np.array("female"),
        mocap_framerate=np.array(120.0),
        dmpls=np.zeros((F, 8)),
    )
    p = tmp_path / "walk_poses.npz"
    np.savez(p, **d)
    return p, d


@pytest.fixture
def smplx(tmp_path):
    rng = np.random.default_rng(3)
    d = dict(
        root_orient=smooth_poses(1, 2),
        pose_body=smooth_poses(21, 3),
        pose_hand=smooth_poses(30, 4),
        pose_jaw=smooth_poses(1, 5, 0.2),
        pose_eye=smooth_poses(2, 6, 0.2),
        trans=rng.normal(0, 0.1, (F, 3)),
        betas=np.zeros(16),
        mocap_frame_rate=np.array(60.0),
        gender=np.array("neutral"),
        surface_model_type=np.array("smplx"),
        num_betas=np.array(16),
    )
    p = tmp_path / "jump_stageii.npz"
    np.savez(p, **d)
    return p, d


def test_smplh_poses_become_local_rotations(smplh):
    p, d = smplh
    with pytest.warns(UserWarning, match="generic humanoid"):
        m = motion_io.load(p)
    assert m.num_joints == 52 and m.num_frames == F and m.fps == pytest.approx(120.0)
    names, parents = amass.joint_names("smplh")
    assert m.skeleton.names == names and np.array_equal(m.skeleton.parents, parents)
    assert names[20] == "left_wrist" and names[22] == "left_index1" and parents[22] == 20
    assert names[37] == "right_index1" and parents[37] == 21 and parents[38] == 37
    from jointlimits.motion import naming

    assert naming.detect(m.skeleton) == "smpl"
    assert rot_err(m.rotations, from_rotvec(d["poses"].reshape(F, 52, 3))) < 1e-9
    # the root moves with trans (plus the pelvis rest position)
    assert np.allclose(m.positions[:, 0] - m.positions[0, 0], d["trans"] - d["trans"][0])


def test_smplx_parts_land_on_their_joints(smplx):
    p, d = smplx
    with pytest.warns(UserWarning):
        m = amass.load(p)
    assert m.num_joints == 55 and m.fps == pytest.approx(60.0)
    names = m.skeleton.names
    expect = {
        "pelvis": d["root_orient"],
        "jaw": d["pose_jaw"],
        "left_eye_smplhf": d["pose_eye"][:, :3],
        "right_eye_smplhf": d["pose_eye"][:, 3:],
        "left_index1": d["pose_hand"][:, :3],
        "right_thumb3": d["pose_hand"][:, 87:],
        "left_hip": d["pose_body"][:, :3],
        "right_wrist": d["pose_body"][:, 60:],
    }
    for name, aa in expect.items():
        assert rot_err(m.rotations[:, names.index(name)], from_rotvec(aa)) < 1e-9, name
    assert m.skeleton.parents[names.index("jaw")] == names.index("head")


def test_smplh_with_root_orient_keys_and_poses_widths(tmp_path):
    d = dict(
        root_orient=smooth_poses(1, 7),
        pose_body=smooth_poses(21, 8),
        pose_hand=smooth_poses(30, 9),
        trans=np.zeros((F, 3)),
        mocap_frame_rate=np.array(30.0),
    )
    np.savez(tmp_path / "h.npz", **d)
    with pytest.warns(UserWarning):
        m = amass.load(tmp_path / "h.npz")
    assert m.num_joints == 52
    np.savez(tmp_path / "s.npz", poses=smooth_poses(24, 1), mocap_framerate=np.array(30.0))
    with pytest.warns(UserWarning):
        m = amass.load(tmp_path / "s.npz")
    assert m.num_joints == 24 and m.skeleton.names[-1] == "right_hand"


def test_rest_joints_in_the_file_set_offsets_and_positions(tmp_path, smplh):
    _, d = smplh
    rng = np.random.default_rng(0)
    J = amass._generic_rest(*amass.joint_names("smplh")) + rng.normal(0, 0.01, (52, 3))
    d = dict(d, poses=np.zeros_like(d["poses"]), J=J)
    np.savez(tmp_path / "rest.npz", **d)
    m = amass.load(tmp_path / "rest.npz")  # no warning: offsets from the file
    _, gp = forward_kinematics(m)
    assert np.allclose(gp, J[None] + d["trans"][:, None], atol=1e-12)


def test_forward_kinematics_follows_the_smpl_tree(tmp_path):
    names, _ = amass.joint_names("smplh")
    J = amass._generic_rest(*amass.joint_names("smplh"))
    poses = np.zeros((1, 52, 3))
    hip, knee, ankle = names.index("left_hip"), names.index("left_knee"), names.index("left_ankle")
    poses[0, hip] = [np.pi / 2, 0, 0]
    poses[0, knee] = [0, 0, 0.3]
    np.savez(tmp_path / "one.npz", poses=poses.reshape(1, -1), J=J, mocap_framerate=np.array(30.0))
    m = amass.load(tmp_path / "one.npz")
    _, gp = forward_kinematics(m)
    r_hip = Rotation.from_rotvec([np.pi / 2, 0, 0])
    r_knee = r_hip * Rotation.from_rotvec([0, 0, 0.3])
    assert np.allclose(gp[0, knee], J[hip] + r_hip.apply(J[knee] - J[hip]))
    assert np.allclose(gp[0, ankle], gp[0, knee] + r_knee.apply(J[ankle] - J[knee]))


def test_body_model_regresses_the_rest_joints(tmp_path, smplh, monkeypatch):
    p, d = smplh
    rng = np.random.default_rng(1)
    V = 40
    v_template = rng.normal(0, 0.3, (V, 3))
    shapedirs = rng.normal(0, 0.01, (V, 3, 10))
    reg = rng.random((52, V))
    reg /= reg.sum(1, keepdims=True)
    np.savez(tmp_path / "model.npz", J_regressor=reg, v_template=v_template, shapedirs=shapedirs)
    J = reg @ (v_template + shapedirs @ d["betas"][:10])
    m = amass.load(p, model=tmp_path / "model.npz")
    parents = m.skeleton.parents
    assert np.allclose(m.skeleton.offsets[1:], J[1:] - J[parents[1:]])
    monkeypatch.setenv(amass.MODEL_ENV, str(tmp_path / "model.npz"))
    m2 = motion_io.load(p)
    assert np.allclose(m2.skeleton.offsets, m.skeleton.offsets)
    np.savez(tmp_path / "small.npz", J=J[:22])
    with pytest.raises(FormatError, match="22 joints"):
        amass.load(p, model=tmp_path / "small.npz")


def test_resampling_on_import(smplh):
    p, d = smplh
    with pytest.warns(UserWarning):
        m = amass.load(p, fps=30)
    assert m.fps == pytest.approx(30) and m.num_frames == (F - 1) // 4 + 1
    assert rot_err(m.rotations, from_rotvec(d["poses"].reshape(F, 52, 3))[::4]) < 1e-9


def test_bad_files_name_the_problem(tmp_path):
    np.savez(tmp_path / "a.npz", foo=np.zeros(3))
    with pytest.raises(FormatError, match="not an AMASS.*foo"):
        amass.load(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", poses=np.zeros((5, 100)))
    with pytest.raises(FormatError, match="100 values"):
        amass.load(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", root_orient=np.zeros((5, 3)), pose_body=np.zeros((5, 60)))
    with pytest.raises(FormatError, match="pose_body"):
        amass.load(tmp_path / "c.npz")
    bad = np.zeros((5, 156))
    bad[3, 7] = np.nan
    np.savez(tmp_path / "d.npz", poses=bad, mocap_framerate=np.array(30.0))
    with pytest.raises(FormatError, match="frame 3"):
        amass.load(tmp_path / "d.npz")
    (tmp_path / "e.npz").write_bytes(b"not a zip")
    with pytest.raises(FormatError, match="e.npz"):
        amass.load(tmp_path / "e.npz")
    with pytest.raises(FormatError, match="not supported"):
        motion_io.save(tmp_path / "out.npz", None)


@pytest.mark.filterwarnings("ignore:.*generic humanoid")
@pytest.mark.parametrize("layout", ["smplh", "smplx"])
def test_fit_apply_report_through_the_cli(tmp_path, smplh, smplx, layout):
    p, _ = smplh if layout == "smplh" else smplx
    r = CliRunner()
    lim_path = tmp_path / "lim.json"
    res = r.invoke(main, ["fit", str(p), "-o", str(lim_path), "-q"])
    assert res.exit_code == 0, res.output
    lim = JointLimits.load(lim_path)
    assert lim.skeleton.num_joints == (52 if layout == "smplh" else 55)
    res = r.invoke(main, ["report", str(lim_path), str(p), "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["joints"]
    assert rows and all(row["fraction_outside"] == 0 for row in rows)  # the training clip is inside
    # an exaggerated copy goes outside; apply brings it back and writes a BVH
    with np.load(p) as z:
        d = {k: z[k] for k in z.files}
    for k in ("poses", "pose_body", "pose_hand"):
        if k in d:
            d[k] = d[k] * 2.0
    np.savez(tmp_path / "wild.npz", **d)
    res = r.invoke(main, ["report", str(lim_path), str(tmp_path / "wild.npz"), "--json"])
    assert max(row["fraction_outside"] for row in json.loads(res.output)["joints"]) > 0.2
    res = r.invoke(main, ["apply", str(lim_path), str(tmp_path / "wild.npz"), "-o", str(tmp_path / "out.bvh")])
    assert res.exit_code == 0, res.output
    out = bvh.load(tmp_path / "out.bvh")
    assert lim.violation(out.rotations).max() < 1e-5
    res = r.invoke(main, ["apply", str(lim_path), str(p), "-o", str(tmp_path / "out.npz")])
    assert res.exit_code == 2 and "not supported" in res.output


@pytest.mark.filterwarnings("ignore:.*generic humanoid")
def test_smplh_clip_reported_on_limits_of_another_convention(tmp_path, smplh, clips):
    p, d = smplh
    lim = JointLimits.fit(clips[0])  # the built-in humanoid, LAFAN1 names, Y-up T-pose
    lim.save(tmp_path / "lim.json")
    r = CliRunner()
    res = r.invoke(main, ["rename", str(p), "--to", str(tmp_path / "lim.json"), "-o", str(tmp_path / "m.bvh")])
    assert res.exit_code == 0, res.output
    mapped = bvh.load(tmp_path / "m.bvh")
    assert mapped.skeleton.names == lim.skeleton.names
    # the knee's local rotation is SMPL's left_knee axis-angle (hip -> knee -> ankle chains match)
    knee = from_rotvec(d["poses"].reshape(F, 52, 3)[:, 4])
    assert rot_err(mapped.rotations[:, lim.skeleton.names.index("LeftLeg")], knee) < 1e-6
    res = r.invoke(main, ["report", str(tmp_path / "lim.json"), str(tmp_path / "m.bvh"), "--json"])
    assert res.exit_code == 0 and len(json.loads(res.output)["joints"]) == len(lim.joints)


@pytest.mark.filterwarnings("ignore:.*generic humanoid")
def test_frame_rate_below_one_frame_an_hour_is_the_readers_error(tmp_path):
    # found by scripts/fuzz_amass.py: a rate under 1/3600 fps passed the reader's check and
    # escaped as Motion's SkeletonError (not naming the file)
    for rate in (1e-5, 1.0 / 7200):
        np.savez(tmp_path / "slow.npz", poses=np.zeros((3, 156)), mocap_framerate=np.array(rate))
        with pytest.raises(FormatError, match=r"slow\.npz: frame rate"):
            amass.load(tmp_path / "slow.npz")
    np.savez(tmp_path / "hour.npz", poses=np.zeros((3, 156)), mocap_framerate=np.array(1.0 / 3600))
    assert amass.load(tmp_path / "hour.npz").frame_time == pytest.approx(3600.0)


def test_a_clip_of_nan_poses_costs_no_index_per_value(tmp_path):
    # found by scripts/fuzz_amass.py: float16 poses all NaN (134,000 frames, 40 KB compressed)
    # made the reader list every bad value's index (3 int64 per value: 478 MB) to name the first
    # frame, and MemoryError escaped under a 1 GB limit; now a flag per frame
    import tracemalloc

    F = 20_000
    np.savez(tmp_path / "nan.npz", poses=np.full((F, 156), np.nan, np.float16), mocap_framerate=np.array(120.0))
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="frame 0 are not finite"):
            amass.load(tmp_path / "nan.npz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * F * 156 * 8  # float64 poses, |poses|, a flag per value (was 7.4x)

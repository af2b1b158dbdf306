"""USD (UsdSkel) import/export: BVH -> USD -> BVH on the 8 shared conventions, usd-core's
validators (what usdchecker runs), a file authored the way other tools write UsdSkel, errors, and
the commands reading and writing .usd*."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import io as motion_io
from jointlimits.cli import main
from jointlimits.errors import FormatError
from jointlimits.io import bvh
from jointlimits.motion import quat

from conftest import MOCAP, needs_shared

pxr = pytest.importorskip("pxr", reason="usd-core is not installed (pip install -e '.[usd]')")
from jointlimits.io import usd  # noqa: E402

#: one clip of each shared skeleton convention
REAL = [
    "lafan1/walk4_subject1.bvh",
    "bandai_namco/dataset-1_walk_normal_001.bvh",
    "cmu_cgspeed_max/131_01.bvh",
    "cmu_cgspeed_mb/01_01.bvh",
    "sfu/0005_Jogging001.bvh",
    "perfume/A_test.bvh",
    "adelaide/milad.bvh",
    "cmu_secondlife/60_05_scaled.bvh",
]


def rot_err(a: np.ndarray, b: np.ndarray) -> float:
    d = quat.inv_mul(a, b)
    return float(np.max(2 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))))


@pytest.fixture(scope="module")
def clip(clips):
    return clips[0].frames(0, 60)


@needs_shared
@pytest.mark.parametrize("name", REAL)
def test_bvh_usd_bvh_on_real_clips(tmp_path, name):
    if not (MOCAP / name).is_file():  # the Bandai file name is looked up, not guessed
        name = str(sorted((MOCAP / name.split("/")[0]).glob("*.bvh"))[0].relative_to(MOCAP))
    a = bvh.load(MOCAP / name).frames(0, 120)
    ext = ".usda" if "lafan1" in name else ".usdc" if "cmu" in name else ".usd"
    motion_io.save(tmp_path / f"a{ext}", a)
    assert usd.validate(tmp_path / f"a{ext}") == []
    bvh.save(tmp_path / "b.bvh", motion_io.load(tmp_path / f"a{ext}"))
    b = bvh.load(tmp_path / "b.bvh")
    assert b.skeleton.names == a.skeleton.names and b.skeleton.channels == a.skeleton.channels
    assert len(b.skeleton.end_sites) == len(a.skeleton.end_sites)
    assert b.num_frames == a.num_frames and b.frame_time == a.frame_time
    assert rot_err(b.rotations, a.rotations) < 1e-6
    size = np.abs(a.positions).max()
    assert np.abs(b.skeleton.offsets - a.skeleton.offsets).max() <= 1e-6 * size
    assert np.abs(b.positions - a.positions).max() <= 1e-6 * size


def test_stage_metadata_and_joint_names(tmp_path, clip):
    from pxr import Usd, UsdGeom, UsdSkel

    sk = clip.skeleton.copy()
    sk.names = ["mixamorig:Hips", *sk.names[1:]]  # not a valid prim name: kept in jointNames
    m = clip.with_rotations(clip.rotations)
    m.skeleton = sk
    usd.save(tmp_path / "m.usda", m, metres_per_unit=0.01, up="+y")
    stage = Usd.Stage.Open(str(tmp_path / "m.usda"))
    assert UsdGeom.GetStageMetersPerUnit(stage) == 0.01 and UsdGeom.GetStageUpAxis(stage) == "Y"
    assert stage.GetTimeCodesPerSecond() == pytest.approx(1 / clip.frame_time)
    skel = UsdSkel.Skeleton(stage.GetPrimAtPath("/Root/Skeleton"))
    assert list(skel.GetJointsAttr().Get())[0] == "mixamorig_Hips"
    back = usd.load(tmp_path / "m.usda")
    assert back.skeleton.names == sk.names
    assert usd.validate(tmp_path / "m.usda") == []


def test_foreign_skeleton_with_rest_rotations_and_a_partial_animation(tmp_path):
    """Written as other tools write UsdSkel: joints listed child before parent, rest rotations,
    an animation driving one joint, no jointlimits metadata."""
    from pxr import Gf, Usd, UsdGeom, UsdSkel, Vt

    stage = Usd.Stage.CreateNew(str(tmp_path / "f.usda"))
    UsdGeom.SetStageUpAxis(stage, "Z")
    stage.SetTimeCodesPerSecond(24)
    root = UsdSkel.Root.Define(stage, "/R")
    skel = UsdSkel.Skeleton.Define(stage, "/R/S")
    skel.CreateJointsAttr(Vt.TokenArray(["hip/knee", "hip"]))
    rest_rot = quat.from_angle_axis(0.5, np.array([0.0, 0.0, 1.0]))
    m_knee = Gf.Matrix4d().SetRotate(Gf.Quatd(*rest_rot)).SetTranslateOnly(Gf.Vec3d(0, 0, -0.4))
    skel.CreateRestTransformsAttr(Vt.Matrix4dArray([m_knee, Gf.Matrix4d().SetTranslate(Gf.Vec3d(0, 0, 1))]))
    anim = UsdSkel.Animation.Define(stage, "/R/S/A")
    anim.CreateJointsAttr(Vt.TokenArray(["hip"]))
    spin = [quat.from_angle_axis(0.1 * k, np.array([1.0, 0, 0])) for k in range(5)]
    for k in range(5):
        anim.CreateRotationsAttr().Set(Vt.QuatfArray([Gf.Quatf(*map(float, spin[k]))]), 2 * k)
        anim.CreateTranslationsAttr().Set(Vt.Vec3fArray([Gf.Vec3f(0, 0.1 * k, 1)]), 2 * k)
    UsdSkel.BindingAPI.Apply(skel.GetPrim()).CreateAnimationSourceRel().SetTargets([anim.GetPath()])
    UsdSkel.BindingAPI.Apply(root.GetPrim()).CreateSkeletonRel().SetTargets([skel.GetPath()])
    stage.Save()
    m = usd.load(tmp_path / "f.usda")
    assert m.skeleton.names == ["hip", "knee"] and list(m.skeleton.parents) == [-1, 0]
    assert m.num_frames == 5 and m.frame_time == pytest.approx(2 / 24)
    assert rot_err(m.rotations[:, 0], np.stack(spin)) < 1e-6
    assert rot_err(m.rotations[:, 1], np.broadcast_to(rest_rot, (5, 4))) < 1e-6  # rest where not animated
    assert np.allclose(m.positions[:, 0, 1], 0.1 * np.arange(5), atol=1e-6)
    assert np.allclose(m.skeleton.offsets[1], [0, 0, -0.4])


def test_errors_name_the_problem(tmp_path, clip):
    from pxr import Usd, UsdGeom

    with pytest.raises(FormatError, match="ends in"):
        usd.save(tmp_path / "x.usdz", clip)
    assert not (tmp_path / "x.usdz").exists()
    (tmp_path / "junk.usda").write_text("#usda 1.0\n(\n garbage")
    with pytest.raises(FormatError, match="junk.usda: not a readable USD file"):
        usd.load(tmp_path / "junk.usda")
    st = Usd.Stage.CreateNew(str(tmp_path / "empty.usda"))
    UsdGeom.Xform.Define(st, "/A")
    st.Save()
    with pytest.raises(FormatError, match="no UsdSkel Skeleton"):
        usd.load(tmp_path / "empty.usda")
    with pytest.raises(FileNotFoundError):
        usd.load(tmp_path / "missing.usd")


def test_commands_accept_usd(tmp_path, clips):
    clip, over = clips
    motion_io.save(tmp_path / "train.usdc", clip.frames(0, 150))
    motion_io.save(tmp_path / "over.usda", over.frames(0, 150))
    r = CliRunner()
    res = r.invoke(main, ["info", str(tmp_path / "train.usdc")])
    assert res.exit_code == 0 and "150 frames" in res.output, res.output
    res = r.invoke(main, ["fit", str(tmp_path / "train.usdc"), "-o", str(tmp_path / "lim.json"), "-q"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "limited.usd"
    res = r.invoke(main, ["apply", str(tmp_path / "lim.json"), str(tmp_path / "over.usda"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    from jointlimits import JointLimits

    lim = JointLimits.load(tmp_path / "lim.json")
    assert lim.violation(motion_io.load(out).rotations).max() < 1e-5
    res = r.invoke(main, ["report", str(tmp_path / "lim.json"), str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["joints"]
    (tmp_path / "broken.usda").write_text("not usd")
    res = r.invoke(main, ["info", str(tmp_path / "broken.usda")])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "broken.usda" in res.output

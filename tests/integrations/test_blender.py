"""FBX and the Blender add-on, in one bpy session (tests/integrations/blender_session.py) run by
the Python that ``JOINTLIMITS_BLENDER_PYTHON`` names (bpy pins numpy<2, so it lives in its own
environment; .ci/run makes one): BVH -> FBX -> BVH on the 8 shared conventions, the FBX that
Blender writes for a rig against Blender's own view of its action, every add-on operator against
the command line on the same clip, and the commands reading and writing .fbx."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import resource
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.io import bvh, fbx
from jointlimits.motion import quat

from conftest import MOCAP, ROOT, needs_shared

BPY = os.environ.get(fbx.ENV, "")
pytestmark = [
    needs_shared,
    pytest.mark.skipif(
        not BPY, reason=f"{fbx.ENV} is not set: the FBX and Blender add-on tests need a Python with bpy (.ci/run)"
    ),
]

CLIPS = {
    "lafan1": "lafan1/walk4_subject1.bvh",
    "bandai_namco": "bandai_namco/dataset-1_walk_normal_001.bvh",
    "cmu_cgspeed_max": "cmu_cgspeed_max/131_01.bvh",
    "cmu_cgspeed_mb": "cmu_cgspeed_mb/01_01.bvh",
    "sfu": "sfu/0005_Jogging001.bvh",
    "perfume": "perfume/A_test.bvh",
    "adelaide": "adelaide/milad.bvh",
    "cmu_secondlife": "cmu_secondlife/60_05_scaled.bvh",
}
FRAMES = 60
SOFTEN = (0.05, 0.15)
POP = (30, 33)  # frames of LeftArm pushed 0.8 rad off (a pop for the repair operator)


def rot_err(a: np.ndarray, b: np.ndarray) -> float:
    d = quat.inv_mul(a, b)
    return float(np.max(2 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))))


def _clip(rel: str) -> Path:
    p = MOCAP / rel
    return p if p.is_file() else sorted(p.parent.glob("*.bvh"))[0]


@pytest.fixture(scope="session")  # kept across the module switches of an xdist worker
def session(tmp_path_factory):
    """The bpy session's folder, results and clips: run once per test run. pytest-xdist's
    loadgroup does not keep this module on one worker here (xdist 3.8, pytest 9), so under xdist
    the first worker to get here runs it in the run's shared temp folder and the others wait for
    it under a file lock and read its results."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _session(tmp_path_factory.mktemp("blender"))
    work = tmp_path_factory.getbasetemp().parent / "blender"  # this run's, shared by its workers
    with open(work.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (work / "results.json").is_file():
            clips = {name: work / f"{name}.bvh" for name in [*CLIPS, "mixamo"]}
            return work, json.loads((work / "results.json").read_text()), clips
        work.mkdir(exist_ok=True)
        return _session(work)


def _session(work: Path):
    clips = {}
    for name, rel in CLIPS.items():
        clips[name] = work / f"{name}.bvh"
        bvh.save(clips[name], bvh.load(_clip(rel)).frames(0, FRAMES))
    # a Mixamo-named rig (joint names with a colon) in the round trips too
    r = CliRunner()
    res = r.invoke(main, ["rename", str(clips["lafan1"]), "--to", "mixamo", "-o", str(work / "mixamo.bvh"), "-q"])
    assert res.exit_code == 0, res.output
    clips["mixamo"] = work / "mixamo.bvh"
    # the add-on's clip: LAFAN1 with a pop, and the command line's results on it
    m = bvh.load(clips["lafan1"])
    arm = m.skeleton.index("LeftArm")
    rot = m.rotations.copy()
    rot[POP[0] : POP[1], arm] = quat.mul(rot[POP[0] : POP[1], arm], quat.from_angle_axis(0.8, np.array([0, 0, 1.0])))
    addon_clip = work / "addon.bvh"
    bvh.save(addon_clip, m.with_rotations(rot))
    cli = {
        "fit": ["fit", str(clips["lafan1"]), "-o", str(work / "cli_limits.json")],  # the clean clip
        "apply": ["apply", str(work / "cli_limits.json"), str(addon_clip), "-o", str(work / "cli_apply.bvh")]
        + ["--soften", str(SOFTEN[0]), str(SOFTEN[1])],
        "repair": ["filter", str(addon_clip), "--detect", "-o", str(work / "cli_repair.bvh")],
        "footlock": ["footlock", str(addon_clip), "--limits", str(work / "cli_limits.json")]
        + ["-o", str(work / "cli_footlock.bvh")],
    }
    for args in cli.values():
        res = r.invoke(main, [*args, "-q"])
        assert res.exit_code == 0, (args, res.output)
    spec = importlib.util.spec_from_file_location("build_ext", ROOT / "scripts" / "build_blender_extension.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    zip_path = build.build(work / "dist", "tree", None, scipy=False)  # the session's Python has scipy
    cfg = {
        "zip": str(zip_path),
        "fbx_clips": {k: str(v) for k, v in clips.items()},
        "rig_clip": str(clips["cmu_cgspeed_mb"]),
        "fit_clip": str(clips["lafan1"]),
        "addon_clip": str(addon_clip),
        "cli_limits": str(work / "cli_limits.json"),
        "soften": list(SOFTEN),
        "frame": POP[0] + 1,
    }
    (work / "config.json").write_text(json.dumps(cfg))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLENDER_") and k != fbx.ENV}
    env["BLENDER_USER_RESOURCES"] = str(work / "blender_user")  # the extension goes here, not to ~/.config
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(
        [BPY, "-I", "-S", str(Path(__file__).with_name("blender_session.py")), str(work)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads((work / "results.json").read_text())
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"bpy session: {cpu:.1f} CPU s in all; its own laps: {out['cpu']}")
    return work, out, clips


def test_the_extension_installs_and_brings_its_operators(session):
    work, out, _ = session
    assert out["installed"] and "blender_user" in out["jointlimits"]
    assert set(out["operators"]) >= {"fit", "apply", "violations", "repair", "footlock", "save", "load"}


def test_bvh_fbx_bvh_on_the_shared_conventions(session):
    work, _, clips = session
    for name, src in clips.items():
        a, b = bvh.load(src), bvh.load(work / f"{name}_back.bvh")
        print(f"BVH->FBX->BVH {name}: {rot_err(b.rotations, a.rotations):.2e} rad")
        assert b.skeleton.names == a.skeleton.names and b.skeleton.channels == a.skeleton.channels, name
        assert b.num_frames == a.num_frames and b.frame_time == a.frame_time, name
        assert rot_err(b.rotations, a.rotations) < 1e-4, name
        size = np.abs(a.positions).max()
        assert np.abs(b.positions - a.positions).max() < 1e-5 * size, name


def test_blender_written_fbx_matches_blenders_view_of_the_action(session):
    work, _, _ = session
    view = dict(np.load(work / "rig_view.npz"))
    view.update(json.loads((work / "rig_view.json").read_text()))
    own = fbx.motion_from_arrays(view)
    m = fbx.load(work / "rig.fbx", blender=BPY)  # through the subprocess bridge
    assert m.skeleton.names == view["names"] and list(m.skeleton.parents) == list(view["parents"])
    assert m.num_frames == FRAMES and m.frame_time == pytest.approx(1 / view["fps"])
    print(f"Blender-written FBX vs Blender's view: {rot_err(m.rotations, own.rotations):.2e} rad")
    assert rot_err(m.rotations, own.rotations) < 1e-4
    assert np.abs(m.positions - own.positions).max() < 1e-4 * np.abs(own.positions).max()


def test_addon_operators_equal_the_command_line(session):
    from jointlimits import JointLimits

    work, out, _ = session
    for op in ("fit", "load", "save", "apply", "repair", "footlock", "violations_op"):
        assert out[op] == ["FINISHED"], op
    src = bvh.load(work / "addon.bvh")
    inp = np.load(work / "addon_input.npz")
    assert rot_err(inp["rotations"], src.rotations) < 1e-5  # Blender's BVH import, read back
    for name, cli_out in (("apply", "cli_apply.bvh"), ("repair", "cli_repair.bvh"), ("footlock", "cli_footlock.bvh")):
        mine, cli = np.load(work / f"addon_{name}.npz"), bvh.load(work / cli_out)
        print(f"add-on {name} vs CLI: {rot_err(mine['rotations'], cli.rotations):.2e} rad")
        assert rot_err(mine["rotations"], src.rotations) > 1e-3, name  # the operator changed the clip
        assert rot_err(mine["rotations"], cli.rotations) < 1e-5, name
    # fit: the add-on's limits and the command line's limit and measure alike
    cli_lim = JointLimits.load(work / "cli_limits.json")
    addon_lim = JointLimits.from_dict(json.loads((work / "addon_fit.json").read_text()))
    probe = quat.mul(src.rotations, quat.from_angle_axis(0.5, np.array([1.0, 0.3, 0.0]) / np.hypot(1, 0.3)))
    assert np.abs(addon_lim.violation(probe) - cli_lim.violation(probe)).max() < 1e-5
    assert rot_err(addon_lim.project(probe), cli_lim.project(probe)) < 1e-5
    # load / save keep the file
    doc = json.loads((work / "cli_limits.json").read_text())
    assert json.loads((work / "addon_loaded.json").read_text()) == doc
    assert json.loads((work / "addon_saved.json").read_text()) == doc


def test_violation_colours_on_the_current_frame(session):
    from jointlimits import JointLimits

    work, out, _ = session
    lim = JointLimits.load(work / "cli_limits.json")
    src = bvh.load(work / "addon.bvh")
    want = lim.violation(src.rotations)[POP[0]]  # scene frame POP+1 is clip frame POP
    got = np.array([out["violations"][n] for n in src.skeleton.names])
    assert np.abs(got - want).max() < 1e-5 and got.max() > 0.1
    assert out["bone_palette"] == ["CUSTOM"]
    arm = out["bone_colours"]["LeftArm"]
    assert arm[0] > 0.8 and arm[1] < 0.8  # red-ish: the popped arm
    inside = [n for n, v in out["violations"].items() if v == 0]
    assert inside and all(out["bone_colours"][n][1] > 0.5 > out["bone_colours"][n][0] for n in inside)


def test_commands_accept_fbx(session):
    work, _, _ = session
    r = CliRunner()
    out = work / "limited.fbx"  # read and written through the subprocess bridge
    res = r.invoke(main, ["apply", str(work / "cli_limits.json"), str(work / "lafan1.fbx"), "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    res = r.invoke(main, ["info", str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["frames"] == FRAMES, res.output

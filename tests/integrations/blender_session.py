"""One Blender (bpy) session for tests/integrations/test_blender.py, run in a Python with bpy:

    python -I -S blender_session.py WORKDIR     (WORKDIR/config.json says what to do)

With -S the Python's site-packages are added without their .pth files, so a jointlimits installed
there in editable mode (as .ci/run does, for FBX in-process) is not importable: the session sees
what a user's Blender sees, bpy and its packages, and gets jointlimits only from the extension.

It installs the add-on extension zip, then with the jointlimits the extension brought:
FBX round trips of the given clips (jointlimits.io.fbx in-process), a rig imported with Blender's
BVH importer and written with Blender's FBX exporter (Blender's own view of its action saved
beside it), and every add-on operator on an imported clip. Results are files in WORKDIR and
WORKDIR/results.json (CPU seconds per step); the test compares them with the command line's.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

if sys.flags.no_site:  # this venv's site-packages on sys.path, without running its .pth files
    _version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    sys.path.append(str(Path(sys.executable).parent.parent / "lib" / _version / "site-packages"))

import numpy as np


def main(work: Path) -> None:
    cfg = json.loads((work / "config.json").read_text())
    res: dict = {"cpu": {}}
    t = time.process_time()

    def lap(name: str) -> None:
        nonlocal t
        now = time.process_time()
        res["cpu"][name] = round(now - t, 3)
        t = now

    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    lap("import bpy")
    out = bpy.ops.extensions.package_install_files(filepath=cfg["zip"], repo="user_default", enable_on_install=True)
    res["installed"] = "FINISHED" in out
    import jointlimits
    from jointlimits.integrations import blender as jl
    from jointlimits.io import _blender, bvh, fbx

    res["jointlimits"] = jointlimits.__file__
    res["operators"] = [op for op in dir(bpy.ops.jointlimits) if not op.startswith("_")]
    lap("install extension")

    # FBX round trips, in-process (bpy importable here)
    for name, clip in cfg["fbx_clips"].items():
        fbx.save(work / f"{name}.fbx", bvh.load(clip))
        bvh.save(work / f"{name}_back.bvh", fbx.load(work / f"{name}.fbx"))
    lap("fbx round trips")

    # a rig made by Blender (its BVH importer, Z up, Euler bones) with a skinned mesh, written by
    # Blender's FBX exporter; Blender's own view of the action is saved beside it
    _blender.reset()
    bpy.ops.import_anim.bvh(filepath=cfg["rig_clip"], update_scene_fps=True, update_scene_duration=True)
    rig = bpy.context.object
    verts = [tuple(b.head_local) for b in rig.data.bones]
    mesh = bpy.data.meshes.new("skin")
    mesh.from_pydata(verts, [], [])
    body = bpy.data.objects.new("skin", mesh)
    bpy.context.scene.collection.objects.link(body)
    for k, b in enumerate(rig.data.bones):
        body.vertex_groups.new(name=b.name).add([k], 1.0, "REPLACE")
    body.parent = rig
    body.modifiers.new("armature", "ARMATURE").object = rig
    view = _blender.armature_arrays(rig)
    np.savez(work / "rig_view.npz", **{k: view[k] for k in ("rest", "pose", "global_pose", "parents")})
    (work / "rig_view.json").write_text(json.dumps({"names": view["names"], "fps": view["fps"]}))
    bpy.ops.export_scene.fbx(filepath=str(work / "rig.fbx"), bake_anim_simplify_factor=0.0)
    bpy.ops.export_scene.fbx(filepath=str(work / "rig_default.fbx"))
    lap("blender rig fbx")

    # the add-on's operators on a clip imported with Blender's BVH importer (no axis change)
    _blender.reset()
    bpy.ops.import_anim.bvh(
        filepath=cfg["addon_clip"], axis_forward="Y", axis_up="Z", update_scene_fps=True, update_scene_duration=True
    )
    obj = bpy.context.object
    bpy.context.view_layer.objects.active = obj
    orig = obj.animation_data.action
    bpy.ops.import_anim.bvh(filepath=cfg["fit_clip"], axis_forward="Y", axis_up="Z")  # the clean take, to fit
    clean = bpy.context.object
    clean.animation_data.action["jointlimits_use"] = True
    bpy.context.view_layer.objects.active = obj

    def save_motion(name: str) -> None:
        m = jl.armature_motion(obj)
        np.savez(work / f"addon_{name}.npz", rotations=m.rotations, positions=m.positions)
        (work / f"addon_{name}.json").write_text(
            json.dumps(
                {"names": m.skeleton.names, "frame_time": m.frame_time, "action": obj.animation_data.action.name}
            )
        )
        _blender.use_action(obj, orig)

    save_motion("input")
    res["fit"] = sorted(bpy.ops.jointlimits.fit(shape="ellipsoid"))
    (work / "addon_fit.json").write_text(obj["jointlimits_limits"])
    res["load"] = sorted(bpy.ops.jointlimits.load(filepath=cfg["cli_limits"]))
    (work / "addon_loaded.json").write_text(obj["jointlimits_limits"])
    res["save"] = sorted(bpy.ops.jointlimits.save(filepath=str(work / "addon_saved.json")))
    res["apply"] = sorted(bpy.ops.jointlimits.apply(soften=True, falloff=cfg["soften"][0], radius=cfg["soften"][1]))
    save_motion("apply")
    res["repair"] = sorted(bpy.ops.jointlimits.repair())
    save_motion("repair")
    res["footlock"] = sorted(bpy.ops.jointlimits.footlock(use_limits=True))
    save_motion("footlock")
    bpy.context.scene.frame_set(cfg["frame"])
    res["violations_op"] = sorted(bpy.ops.jointlimits.violations())
    res["violations"] = jl.violations(obj, jl_limits(obj), cfg["frame"])
    res["bone_colours"] = {b.name: list(b.color.custom.normal) for b in obj.pose.bones}
    res["bone_palette"] = sorted({b.color.palette for b in obj.pose.bones})
    lap("add-on operators")
    (work / "results.json").write_text(json.dumps(res))


def jl_limits(obj):
    from jointlimits import JointLimits

    return JointLimits.from_dict(json.loads(obj["jointlimits_limits"]))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

"""The README's Blender picture: a shared LAFAN1 clip imported with Blender's BVH importer,
limits fitted on another take of the same actor, and the armature rendered headless (Cycles on
the CPU) on a frame with its bones coloured by their violation. Run it with a Python that has
bpy and this checkout's jointlimits importable:

    PYTHONPATH=src $JOINTLIMITS_BLENDER_PYTHON scripts/blender_violations_figure.py [OUT.png] [--frame N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOCAP = ROOT.parent / "shared" / "data" / "mocap" / "lafan1"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "blender_violations.png")
    ap.add_argument("--frame", type=int, help="scene frame (default: the one with the largest total violation)")
    a = ap.parse_args()
    import bpy

    from jointlimits.integrations import blender as jl
    from jointlimits.io import _blender

    _blender.reset()
    bpy.ops.import_anim.bvh(filepath=str(MOCAP / "walk4_subject1.bvh"), update_scene_fps=True, global_scale=0.01)
    train = bpy.context.object
    bpy.ops.import_anim.bvh(filepath=str(MOCAP / "dance1_subject1.bvh"), update_scene_fps=True, global_scale=0.01)
    obj = bpy.context.object
    bpy.context.view_layer.objects.active = obj
    limits = jl.fit_actions(obj, [train.animation_data.action])
    bpy.data.objects.remove(train)
    frame = a.frame
    if frame is None:
        v = limits.violation(jl.armature_motion(obj).rotations)
        frame = int(obj.animation_data.action.frame_range[0]) + int(v.sum(axis=1).argmax())
    v = jl.render_violations(obj, limits, str(a.out), frame=frame, full=0.3, size=(480, 560), samples=16)
    worst = sorted(v.items(), key=lambda kv: -kv[1])[:4]
    print(f"wrote {a.out}: frame {frame}, worst " + ", ".join(f"{n} {x:.2f} rad" for n, x in worst))


if __name__ == "__main__":
    main()

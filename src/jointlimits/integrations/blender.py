"""jointlimits on Blender armatures: what the add-on's operators call (inside Blender, with bpy).

An armature's action is read as a :class:`~jointlimits.motion.skeleton.Motion` the way
:mod:`jointlimits.io.fbx` reads an FBX file (Blender evaluates every pose bone at every frame;
joint frames are the armature's axes at rest, local rotation ``R_b L R_b^-1`` for a bone with rest
rotation ``R_b`` and pose basis ``L``), the library does the work, and results are keyed as a new
action (every frame, rotation quaternions and locations). Nothing here re-implements a step: each
function is one library call between :func:`armature_motion` and :func:`key_motion`, with the
command line's defaults, so an operator's result equals the CLI's on the same clip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..io import _blender
from ..io.fbx import motion_from_arrays
from ..motion import quat
from ..motion.skeleton import Motion, forward_kinematics

__all__ = [
    "armature_motion",
    "key_motion",
    "fit_actions",
    "apply_limits",
    "repair_pops",
    "foot_lock",
    "violations",
    "colour_violations",
    "render_violations",
    "VIOLATION_COLOURS",
]

#: bone colours (linear RGB) for no violation, a small one and one at or beyond ``full`` radians
VIOLATION_COLOURS = ((0.15, 0.75, 0.25), (1.0, 0.8, 0.1), (0.9, 0.1, 0.1))


def armature_motion(obj: Any, action: Any = None, frame_time: float | None = None) -> Motion:
    """The motion of armature ``obj`` over ``action``'s frame range (default its current action),
    as Blender evaluates it. ``frame_time`` defaults to the scene's (1 / (fps / fps_base))."""
    keep = obj.animation_data.action if obj.animation_data else None
    if action is not None and action is not keep:
        _blender.use_action(obj, action)
    try:
        data = _blender.armature_arrays(obj)
    finally:
        if action is not None and action is not keep:
            _blender.use_action(obj, keep)
    m = motion_from_arrays(data, obj.name)
    if frame_time is not None:
        m.frame_time = float(frame_time)
    return m


def key_motion(obj: Any, motion: Motion, name: str, frame_start: int | None = None) -> Any:
    """Key ``motion`` (a motion of ``obj``'s skeleton, as :func:`armature_motion` gives) as a new
    action ``name`` on ``obj``, from ``frame_start`` (default the current action's first frame)."""
    if frame_start is None:
        act = obj.animation_data.action if obj.animation_data else None
        frame_start = int(round(act.frame_range[0])) if act is not None else 1
    gr, gp = forward_kinematics(motion)
    pose = np.zeros(gr.shape[:2] + (4, 4))
    pose[..., :3, :3] = quat.to_matrix(gr)
    pose[..., :3, 3] = gp
    pose[..., 3, 3] = 1.0
    if {b.name for b in obj.data.bones} != set(motion.skeleton.names):
        raise ValueError(f"{obj.name}: the motion's joints are not the armature's bones")
    return _blender.key_action(obj, pose, list(motion.skeleton.names), frame_start, name)


def fit_actions(obj: Any, actions: Sequence[Any], **fit: Any):
    """:meth:`JointLimits.fit` on the armature's motion in each of ``actions`` (keywords as there)."""
    from ..limits.model import JointLimits

    clips = [armature_motion(obj, a) for a in actions]
    return JointLimits.fit(clips, **fit)


def apply_limits(
    obj: Any, limits: Any, soften: tuple[float, float] | None = None, smooth: bool = False, name: str | None = None
) -> Motion:
    """The current action limited (:meth:`JointLimits.apply`, as ``jointlimits apply``), keyed
    as a new action (``<action>_limited``); returns the limited motion."""
    from ..cleanup.smoothing import smooth_switches

    act = obj.animation_data.action
    m = armature_motion(obj)
    out = limits.apply(m, soften=soften, smooth=smooth_switches if smooth else None)
    key_motion(obj, out, name or f"{act.name}_limited")
    return out


def repair_pops(obj: Any, threshold: float | None = None, name: str | None = None) -> tuple[Motion, list[int]]:
    """Pops of the current action detected and repaired joint by joint (as ``jointlimits filter
    --detect``), keyed as ``<action>_repaired``; returns the motion and the detected cuts."""
    from ..cleanup.repair import repair_pops as repair
    from ..cleanup.tracking import DEFAULT_THRESHOLD

    act = obj.animation_data.action
    m = armature_motion(obj)
    out, rep = repair(m, None, True, DEFAULT_THRESHOLD if threshold is None else threshold)
    key_motion(obj, out, name or f"{act.name}_repaired")
    return out, [int(c) for c in rep.cuts]


def foot_lock(obj: Any, limits: Any = None, name: str | None = None) -> tuple[Motion, Any]:
    """Foot skating removed from the current action (as ``jointlimits footlock``, inside
    ``limits`` when given), keyed as ``<action>_footlocked``; returns the motion and the report."""
    from ..cleanup.footlock import FootlockSettings, footlock

    act = obj.animation_data.action
    m = armature_motion(obj)
    out, rep = footlock(m, limits, settings=FootlockSettings())
    key_motion(obj, out, name or f"{act.name}_footlocked")
    return out, rep


def violations(obj: Any, limits: Any, frame: int | None = None) -> dict[str, float]:
    """Per bone, the violation (radians, 0 inside) of the pose at ``frame`` (default the current)."""
    import bpy

    f = bpy.context.scene.frame_current if frame is None else int(frame)
    data = _blender.armature_arrays(obj, [f])
    m = motion_from_arrays(data, obj.name)
    v = limits.violation(m.rotations)[0]
    return {n: float(v[j]) for j, n in enumerate(m.skeleton.names)}


def colour_violations(obj: Any, limits: Any, frame: int | None = None, full: float = 0.2) -> dict[str, float]:
    """Colour ``obj``'s bones by their violation at ``frame``: green inside, yellow to red as the
    violation grows to ``full`` radians (custom bone colours of the pose bones and bones)."""
    v = violations(obj, limits, frame)
    ok, mid, bad = (np.asarray(c) for c in VIOLATION_COLOURS)
    for name, x in v.items():
        t = min(x / full, 1.0)
        c = ok if x <= 1e-6 else mid + (bad - mid) * t
        for holder in (obj.pose.bones[name].color, obj.data.bones[name].color):
            holder.palette = "CUSTOM"
            holder.custom.normal = [float(a) for a in c]
            holder.custom.select = [float(a) for a in np.minimum(c + 0.3, 1.0)]
            holder.custom.active = [float(a) for a in np.minimum(c + 0.5, 1.0)]
    return v


def _violation_colour(x: float, full: float) -> np.ndarray:
    ok, mid, bad = (np.asarray(c, np.float64) for c in VIOLATION_COLOURS)
    return ok if x <= 1e-6 else mid + (bad - mid) * min(x / full, 1.0)


def render_violations(
    obj: Any,
    limits: Any,
    path: str,
    frame: int | None = None,
    full: float = 0.2,
    size: tuple[int, int] = (560, 640),
    samples: int = 24,
) -> dict[str, float]:
    """Render (Cycles on the CPU, no window needed) ``obj`` at ``frame`` with one octahedral
    solid per bone coloured by its violation, as :func:`colour_violations`; writes a PNG."""
    import bpy

    scene = bpy.context.scene
    if frame is not None:
        scene.frame_set(int(frame))
    v = colour_violations(obj, limits, None, full)
    bones = list(obj.data.bones)
    verts: list[Any] = []
    faces: list[tuple[int, int, int]] = []
    groups: list[list[int]] = []
    mat_of_face: list[int] = []
    for k, b in enumerate(bones):
        head, tail = np.array(b.head_local), np.array(b.tail_local)
        x, z = np.array(b.x_axis), np.array(b.z_axis)
        w = 0.2 * float(np.linalg.norm(tail - head))
        mid = head + 0.15 * (tail - head)
        base = len(verts)
        verts += [head, mid + w * x, mid + w * z, mid - w * x, mid - w * z, tail]
        for i in range(4):
            a, c = base + 1 + i, base + 1 + (i + 1) % 4
            faces += [(base, c, a), (a, c, base + 5)]
            mat_of_face += [k, k]
        groups.append(list(range(base, base + 6)))
    mesh = bpy.data.meshes.new("jointlimits_bones")
    mesh.from_pydata([tuple(map(float, p)) for p in verts], [], faces)
    body = bpy.data.objects.new("jointlimits_bones", mesh)
    scene.collection.objects.link(body)
    body.matrix_world = obj.matrix_world.copy()
    for k, b in enumerate(bones):
        vg = body.vertex_groups.new(name=b.name)
        vg.add(groups[k], 1.0, "REPLACE")
        mat = bpy.data.materials.new(f"jl_{b.name}")
        mat.use_nodes = True
        rgb = _violation_colour(v[b.name], full)
        bsdf = mat.node_tree.nodes["Principled BSDF"]
        bsdf.inputs["Base Color"].default_value = (*map(float, rgb), 1.0)
        bsdf.inputs["Roughness"].default_value = 0.6
        mesh.materials.append(mat)
    mesh.polygons.foreach_set("material_index", mat_of_face)
    mod = body.modifiers.new("armature", "ARMATURE")
    mod.object = obj
    # frame the posed skeleton: a three-quarter view of the joints' bounding box
    pts = np.array(
        [obj.matrix_world @ pb.head for pb in obj.pose.bones] + [obj.matrix_world @ pb.tail for pb in obj.pose.bones]
    )
    lo, hi = pts.min(0), pts.max(0)
    centre, extent = (lo + hi) / 2, float(np.max(hi - lo))
    cam_data = bpy.data.cameras.new("jl_camera")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = 1.25 * extent
    cam = bpy.data.objects.new("jl_camera", cam_data)
    scene.collection.objects.link(cam)
    d = np.array([0.35, -1.0, 0.2])
    cam.location = tuple(centre + 3 * extent * d / np.linalg.norm(d))
    from mathutils import Vector

    cam.rotation_euler = (Vector(tuple(centre)) - cam.location).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    sun = bpy.data.objects.new("jl_sun", bpy.data.lights.new("jl_sun", "SUN"))
    sun.data.energy = 4.0
    sun.rotation_euler = (0.6, 0.2, 0.8)
    scene.collection.objects.link(sun)
    if scene.world is None:
        scene.world = bpy.data.worlds.new("jl_world")
    scene.world.color = (0.05, 0.05, 0.06)
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    return v

"""The Blender side of FBX in and out: runs where ``bpy`` imports, in this process or as a script
in another Python (``python _blender.py read|write IN OUT``), so it imports only bpy, numpy and
the standard library (never jointlimits: the other Python may have numpy 1.x and another ABI).

Data crosses as plain arrays (an ``.npz`` in a subprocess):

- ``read_fbx(path)`` -> names, parents (parents first), ``rest`` ``[J, 4, 4]`` (each bone's
  ``matrix_local``, armature space, column vectors), ``pose`` ``[F, J, 4, 4]`` (each pose bone's
  ``matrix`` at every frame of the action, armature space: Blender's own evaluation), ``fps``,
  ``frame_start``, the armature object's ``matrix_world`` and its ``jointlimits`` custom property.
- ``write_fbx(path, arrays)`` builds an armature (bones from ``heads``/``tails``, armature space,
  roll 0), keys the action to the pose ``global_pose`` ``[F, J, 4, 4]`` (BVH-style: the joints'
  global rotations and positions, identity rotations at rest) and runs Blender's FBX exporter
  with every frame baked (no key simplification) and custom properties.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

__all__ = ["read_fbx", "write_fbx", "armature_arrays", "key_action", "use_action", "build_armature", "reset"]


def reset() -> None:
    """An empty scene (the factory startup file, emptied). Preferences and enabled add-ons are
    kept. It replaces the open file: for bpy used as a module, not inside an artist's session."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)


def _order(bones: Any) -> list[int]:
    """Bone indices parents first (depth first, in the armature's order)."""
    names = [b.name for b in bones]
    index = {n: i for i, n in enumerate(names)}
    kids: dict[int, list[int]] = {}
    roots = []
    for i, b in enumerate(bones):
        if b.parent is None:
            roots.append(i)
        else:
            kids.setdefault(index[b.parent.name], []).append(i)
    out: list[int] = []
    stack = list(reversed(roots))
    while stack:
        i = stack.pop()
        out.append(i)
        stack.extend(reversed(kids.get(i, [])))
    return out


def _matrices(coll: Any, attr: str) -> np.ndarray:
    n = len(coll)
    buf = np.zeros(n * 16, np.float32)
    coll.foreach_get(attr, buf)
    return np.swapaxes(buf.reshape(n, 4, 4), -1, -2).astype(np.float64)  # Blender's flat order is column-major


def armature_arrays(obj: Any, frames: list[int] | None = None, max_values: float | None = None) -> dict[str, Any]:
    """Names, parents, rest and per-frame pose matrices (armature space) of an armature object,
    evaluated by Blender at each of ``frames`` (default: the action's frame range).
    ``max_values``: the most values (counted as float64) the frames of all bones may take, checked
    before any frame is evaluated (ValueError past it: an action whose keys span billions of
    frames would otherwise run for hours and fill the memory)."""
    import bpy

    scene = bpy.context.scene
    bones = obj.data.bones
    order = _order(bones)
    slot = {i: k for k, i in enumerate(order)}
    names = [bones[i].name for i in order]
    parents = [-1 if bones[i].parent is None else slot[bones.find(bones[i].parent.name)] for i in order]
    rest = _matrices(bones, "matrix_local")[order]
    action = obj.animation_data.action if obj.animation_data else None
    if frames is None:
        if action is not None:
            lo, hi = (float(x) for x in action.frame_range)
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(f"the action's frame range {lo:g}..{hi:g} is not finite")
            count = round(hi) - round(lo) + 1
            _check_size(count, len(names), max_values)
            frames = list(range(round(lo), round(hi) + 1))
        else:
            frames = [scene.frame_current]
    _check_size(len(frames), len(names), max_values)
    pbones = obj.pose.bones
    pose_order = [pbones.find(n) for n in names]
    pose = np.zeros((len(frames), len(names), 4, 4))
    keep = scene.frame_current
    for k, f in enumerate(frames):
        scene.frame_set(f)
        pose[k] = _matrices(pbones, "matrix")[pose_order]
    scene.frame_set(keep)
    custom = obj.get("jointlimits")
    # BVH-style global pose: the bones' rest frames taken out (the rest pose is the identity)
    glob = pose.copy()
    glob[..., :3, :3] = pose[..., :3, :3] @ np.swapaxes(rest[:, :3, :3], -1, -2)
    return {
        "names": names,
        "parents": np.asarray(parents, np.int64),
        "rest": rest,
        "pose": pose,
        "global_pose": glob,
        "fps": float(scene.render.fps / scene.render.fps_base),
        "frame_start": int(frames[0]),
        "matrix_world": np.array(obj.matrix_world, np.float64),
        "custom": custom if isinstance(custom, str) else "",
        "object": obj.name,
        "action": action.name if action is not None else "",
    }


def _check_size(frames: int, bones: int, max_values: float | None) -> None:
    """ValueError when ``frames`` frames of ``bones`` bones (two 4x4 matrices each) pass ``max_values``."""
    values = float(frames) * bones * 32
    if max_values is not None and (frames < 1 or values > max_values):
        raise ValueError(
            f"the action spans {frames} frames of {bones} bones: {values * 8 / 2**20:.4g} MB of values (as float64), "
            f"more than the memory budget of {max_values * 8 / 2**20:.4g} MB (JOINTLIMITS_MEMORY_BUDGET_MB raises it)"
        )


def read_fbx(path: str, max_values: float | None = None) -> dict[str, Any]:
    """Import an FBX file with Blender's importer into an empty scene and return its armature's
    arrays (the armature with the most bones when there are several); ``max_values`` as in
    :func:`armature_arrays`."""
    import bpy

    reset()
    bpy.ops.import_scene.fbx(filepath=str(path), use_custom_props=True, ignore_leaf_bones=False)
    arms = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    if not arms:
        raise ValueError(f"{path}: no armature in the FBX file")
    obj = max(arms, key=lambda o: len(o.data.bones))
    # the importer connects a bone to its parent when its head lies at the parent's tail, and a
    # connected bone ignores its animated location: keep what the file says
    if any(b.use_connect for b in obj.data.bones):
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="EDIT")
        for eb in obj.data.edit_bones:
            eb.use_connect = False
        bpy.ops.object.mode_set(mode="OBJECT")
    return armature_arrays(obj, max_values=max_values)


def _quat_from_matrix(m: np.ndarray) -> np.ndarray:
    """(w, x, y, z) of rotation matrices ``[..., 3, 3]`` (Shepperd's branches), w >= 0."""
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    tr = m00 + m11 + m22
    cand = np.stack(
        [
            np.stack(
                [1 + tr, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1
            ),
            np.stack(
                [
                    m[..., 2, 1] - m[..., 1, 2],
                    1 + m00 - m11 - m22,
                    m[..., 0, 1] + m[..., 1, 0],
                    m[..., 0, 2] + m[..., 2, 0],
                ],
                -1,
            ),
            np.stack(
                [
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 0, 1] + m[..., 1, 0],
                    1 - m00 + m11 - m22,
                    m[..., 1, 2] + m[..., 2, 1],
                ],
                -1,
            ),
            np.stack(
                [
                    m[..., 1, 0] - m[..., 0, 1],
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 1, 2] + m[..., 2, 1],
                    1 - m00 - m11 + m22,
                ],
                -1,
            ),
        ],
        -2,
    )
    k = np.argmax(np.stack([tr, m00, m11, m22], -1), axis=-1)
    q = np.take_along_axis(cand, k[..., None, None], axis=-2)[..., 0, :]
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def build_armature(name: str, names: list[str], parents: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> Any:
    """A new armature object (linked to the scene, active) with one bone per joint."""
    import bpy

    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    ebs: list[Any] = []
    for j, n in enumerate(names):
        eb = arm.edit_bones.new(n)
        eb.head = [float(x) for x in heads[j]]
        eb.tail = [float(x) for x in tails[j]]
        eb.roll = 0.0
        if parents[j] >= 0:
            eb.parent = ebs[int(parents[j])]
            eb.use_connect = False
        ebs.append(eb)
    bpy.ops.object.mode_set(mode="OBJECT")
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    return obj


def key_action(
    obj: Any, global_pose: np.ndarray, names: list[str], frame_start: int = 1, action_name: str = "motion"
) -> Any:
    """Key a new action on ``obj`` so that the bones ``names`` take the BVH-style global pose
    ``global_pose`` ``[F, J, 4, 4]`` (armature space; identity rotations = the rest pose) at frames
    ``frame_start + f``: pose bone j's ``matrix`` is ``global_pose[f, j]`` times its rest rotation.
    Keys every frame (rotation, in each pose bone's own rotation mode, and location of every
    bone), neighbouring quaternions on one cover, linear interpolation."""
    import bpy

    bones = [obj.data.bones[n] for n in names]
    F, J = global_pose.shape[:2]
    rest = np.stack([np.array(b.matrix_local, np.float64) for b in bones])
    parent = [names.index(b.parent.name) if b.parent is not None else -1 for b in bones]
    world_pose = global_pose.copy()
    world_pose[..., :3, :3] = global_pose[..., :3, :3] @ rest[:, :3, :3]
    basis = np.zeros((F, J, 4, 4))
    for j in range(J):  # L = (M_p^-1 M_b)^-1 P_p^-1 P_b, i.e. M_b^-1 M_p P_p^-1 P_b
        if parent[j] < 0:
            basis[:, j] = np.linalg.inv(rest[j]) @ world_pose[:, j]
        else:
            p = parent[j]
            basis[:, j] = np.linalg.inv(rest[j]) @ rest[p] @ np.linalg.inv(world_pose[:, p]) @ world_pose[:, j]
    q = _quat_from_matrix(basis[..., :3, :3])
    for f in range(1, F):  # one cover: Blender interpolates quaternion channels one by one
        flip = np.sum(q[f] * q[f - 1], axis=-1) < 0
        q[f, flip] *= -1
    loc = basis[..., :3, 3]
    if obj.animation_data is None:
        obj.animation_data_create()
    action = bpy.data.actions.new(action_name)
    frames = frame_start + np.arange(F, dtype=np.float64)
    for j, n in enumerate(names):
        mode = obj.pose.bones[n].rotation_mode
        for path, values in (_rotation_channel(q[:, j], mode), ("location", loc[:, j])):
            for i in range(values.shape[1]):
                fc = action.fcurves.new(f'pose.bones["{n}"].{path}', index=i, action_group=n)
                fc.keyframe_points.add(F)
                fc.keyframe_points.foreach_set("co", np.stack([frames, values[:, i]], -1).ravel().astype(np.float32))
                for kp in fc.keyframe_points:
                    kp.interpolation = "LINEAR"
                fc.update()
    use_action(obj, action)  # once it has curves, so Blender 4.4+ binds its (legacy) slot
    return action


def _rotation_channel(q: np.ndarray, mode: str) -> tuple[str, np.ndarray]:
    """(data path, values ``[F, k]``) of basis rotations ``q`` ``[F, 4]`` in a pose bone's own
    rotation mode (Euler orders continuous from frame to frame, as Blender's ``compat``)."""
    if mode == "QUATERNION":
        return "rotation_quaternion", q
    from mathutils import Euler, Quaternion

    if mode == "AXIS_ANGLE":
        out = np.zeros((q.shape[0], 4))
        for f in range(q.shape[0]):
            axis, angle = Quaternion([float(x) for x in q[f]]).to_axis_angle()
            out[f] = [angle, *axis]
        return "rotation_axis_angle", out
    out = np.zeros((q.shape[0], 3))
    prev = Euler((0.0, 0.0, 0.0), mode)
    for f in range(q.shape[0]):
        prev = Quaternion([float(x) for x in q[f]]).to_euler(mode, prev)
        out[f] = prev[:]
    return "rotation_euler", out


def use_action(obj: Any, action: Any) -> None:
    """Make ``action`` the armature's current action (and, Blender 4.4+, bind its first slot)."""
    if obj.animation_data is None:
        obj.animation_data_create()
    obj.animation_data.action = action
    if action is not None and getattr(obj.animation_data, "action_slot", True) is None and len(action.slots):
        obj.animation_data.action_slot = action.slots[0]


def write_fbx(path: str, data: dict[str, Any]) -> None:
    """Build the armature and action of ``data`` in an empty scene and export them as FBX."""
    import bpy

    reset()
    scene = bpy.context.scene
    names = [str(n) for n in data["names"]]
    obj = build_armature(str(data.get("object", "Armature")), names, data["parents"], data["heads"], data["tails"])
    obj.matrix_world = np.asarray(data["matrix_world"], np.float64).T.tolist()  # mathutils takes rows
    obj["jointlimits"] = str(data.get("custom", ""))
    pose = np.asarray(data["global_pose"], np.float64)
    F = int(pose.shape[0])
    fps = float(data["fps"])
    scene.render.fps = max(1, int(round(fps)))
    # a rate within 0.1% of a whole number is written as that number: FBX key times are then whole
    # frames on reading (the exact frame time travels in the custom property)
    near = abs(fps - scene.render.fps) <= 1e-3 * fps
    scene.render.fps_base = 1.0 if near else scene.render.fps / fps
    # frame 0 holds the rest pose and is current at export: FBX keeps no rest pose of a skeleton
    # without a skin, its importer takes the bones' rest from the nodes' transforms at export
    rest = np.tile(np.eye(4), (1, len(names), 1, 1))
    rest[0, :, :3, 3] = np.asarray(data["heads"], np.float64)
    key_action(obj, np.concatenate([rest, pose]), names, 0)
    scene.frame_start, scene.frame_end = 1, F
    scene.frame_set(0)
    bpy.ops.export_scene.fbx(
        filepath=str(path),
        use_selection=False,
        object_types={"ARMATURE"},
        use_custom_props=True,
        add_leaf_bones=False,
        bake_anim=True,
        bake_anim_use_all_bones=True,
        bake_anim_use_nla_strips=False,
        bake_anim_use_all_actions=False,
        bake_anim_force_startend_keying=True,
        bake_anim_step=1.0,
        bake_anim_simplify_factor=0.0,
        armature_nodetype="NULL",
    )


def _main(argv: list[str]) -> int:
    """``read IN.fbx OUT.npz [MAX_VALUES]`` or ``write IN.npz OUT.fbx``; errors on stderr as one
    line, exit 3."""
    try:
        if len(argv) not in (3, 4) or argv[0] not in ("read", "write"):
            raise ValueError("usage: _blender.py read IN.fbx OUT.npz [MAX_VALUES] | write IN.npz OUT.fbx")
        if argv[0] == "read":
            out = read_fbx(argv[1], float(argv[3]) if len(argv) == 4 else None)
            out["names"] = json.dumps(out["names"])
            np.savez(argv[2], **out)
        else:
            with np.load(argv[1], allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
            data["names"] = json.loads(str(data["names"]))
            for k in ("custom", "object"):
                if k in data:
                    data[k] = str(data[k])
            write_fbx(argv[2], data)
    except Exception as e:  # reported to the caller, which raises its own error
        print(f"{type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]))

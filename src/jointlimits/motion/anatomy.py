"""The canonical humanoid: body segments and anatomical frames for any humanoid skeleton.

Every humanoid rig (the shared BVH conventions, Mixamo, SMPL, the procedural humanoid, glTF, USD
and FBX rigs) maps to the same canonical segments, found by topology and names
(:func:`~jointlimits.motion.naming.body_roles`): ``spine`` (pelvis to chest, however many
joints), ``neck`` (chest to head), and per side ``clavicle``, ``upper_arm``, ``forearm``,
``hand``, ``thigh``, ``shin``, ``foot``, ``toes`` (``left_thigh``, ...).

Each segment has an *anatomical frame* built from the rest pose: its x axis along the bone, its z
axis the body's forward direction (up, for feet and toes) made perpendicular to the bone, y = z x
x. The *anatomical rotation* of a segment is its frame relative to its parent segment's frame,
taken from the canonical neutral pose: a T-pose (arms out to the sides, legs down, feet forward,
spine and neck up). It is the identity in that pose on every rig, whatever the rig's own rest pose
(T, A, bones along X), so a rotation means the same flexion, abduction and twist everywhere:

- the rotation about the segment's y axis is flexion/extension (the sagittal plane for legs,
  spine and neck; the horizontal plane for the arms out in the T-pose),
- about z (the forward axis) abduction/adduction (the frontal plane; lateral bending for the
  spine and neck),
- about x (the bone) the axial rotation (twist).

Spine and neck chains of any joint count map through their composed rotation; the per-joint view
used by limits (:func:`limit_points`) spreads the composed rotation evenly over the chain, joint
``k`` of ``n`` standing for ``n`` times its own rotation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import SkeletonError
from . import quat
from .naming import body_roles
from .skeleton import Motion, Skeleton, forward_kinematics_arrays

__all__ = [
    "SEGMENTS",
    "Segment",
    "Anatomy",
    "anatomy",
    "mean_pose",
    "anatomical_rotations",
    "anatomical_angles",
    "limit_points",
    "angle_ranges",
]

Array = NDArray[np.float64]

SIDES = ("left", "right")
_LIMB = ("clavicle", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toes")
#: every canonical segment (besides the pelvis, which carries the body), parents first
SEGMENTS: tuple[str, ...] = ("spine", "neck", *(f"{s}_{p}" for p in _LIMB for s in SIDES))
#: segment part -> its parent part (``chest``: the top of the spine)
_PARENT = {
    "clavicle": "chest",
    "upper_arm": "clavicle",
    "forearm": "upper_arm",
    "hand": "forearm",
    "thigh": "pelvis",
    "shin": "thigh",
    "foot": "shin",
    "toes": "foot",
}
_ROLE = {"toes": "toe"}


@dataclass(frozen=True)
class Segment:
    """One canonical segment on a rig.

    ``joints`` are the rig joints whose local rotations make it (one for a limb, the chain for the
    spine and neck); ``parent_joint`` is the rig joint whose global rotation carries the parent
    segment. ``frames`` are the anatomical frames at rest (world, ``[4]`` each): the parent
    segment's, then one per joint of ``joints`` (the last is the segment's own); ``neutral`` is the
    parent-to-segment rotation of the canonical neutral pose.
    """

    name: str
    joints: tuple[int, ...]
    parent_joint: int
    frames: tuple[Array, ...]
    neutral: Array

    @property
    def parent_frame(self) -> Array:
        return self.frames[0]

    @property
    def frame(self) -> Array:
        return self.frames[-1]


@dataclass(frozen=True)
class Anatomy:
    """The canonical segments found on one skeleton and its body frame at rest (unit vectors)."""

    skeleton: Skeleton
    pelvis: int
    segments: Mapping[str, Segment]
    up: Array
    left: Array
    forward: Array


def _unit(v: Array) -> Array:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-12 else v * 0.0


def _axes(q: Array) -> Array:
    return quat.to_matrix(q)


def _frame(x: Array, secondary: Array) -> Array:
    """Quaternion of the frame with x along ``x`` and z along ``secondary`` made perpendicular."""
    x = _unit(x)
    z = _unit(secondary - (secondary @ x) * x)
    if float(np.linalg.norm(z)) < 1e-6:  # parallel: any perpendicular
        z = _unit(np.cross(x, [0.0, 1.0, 0.0] if abs(x[1]) < 0.9 else [1.0, 0.0, 0.0]))
    y = np.cross(z, x)
    return quat.normalize(quat.from_matrix(np.stack([x, y, z], axis=1)))


def _chain_child(sk: Skeleton, kids: list[list[int]], j: int) -> Array | None:
    """Rest offset of the bone ``j`` rotates: toward its child with the longest line below
    (else its End Site)."""
    if kids[j]:
        height: dict[int, int] = {}

        def h(c: int) -> int:
            if c not in height:
                height[c] = 1 + max((h(k) for k in kids[c]), default=0)
            return height[c]

        c = max(kids[j], key=lambda c: (h(c), float(np.linalg.norm(sk.offsets[c]))))
        return np.asarray(sk.offsets[c], np.float64)
    ends = [np.asarray(o, np.float64) for p, o in sk.end_sites if p == j]
    return ends[0] if ends else None


#: grid (radians, per scaled-angle-axis component) the mean pose is snapped to, so that limiting a
#: few frames of a clip does not move its twist zeros (and a limited clip stays inside)
POSE_GRID = 0.05


def mean_pose(motion: Motion) -> Array:
    """Per joint, the mean local rotation ``[J, 4]`` of a clip snapped to :data:`POSE_GRID` (the
    reference pose of :func:`anatomy`)."""
    if motion.num_frames == 0:
        return quat.identity((motion.num_joints,))
    v = quat.to_scaled_angle_axis(quat.abs(quat.average(motion.rotations, axis=0)))
    return quat.from_scaled_angle_axis(np.round(v / POSE_GRID) * POSE_GRID)


def _human_rest(skeleton: Skeleton, roles: list[tuple[str, str]], gp: Array) -> bool:
    """Whether the rest pose is human-shaped (a T- or A-pose standing up): thighs and shins within
    30 deg of straight down from the pelvis-to-chest direction, upper arms and forearms within 60 deg
    of sideways."""
    J = skeleton.num_joints
    spine = [j for j in range(J) if roles[j][0] == "spine"]
    pelvis = int(skeleton.parents[spine[0]])
    up = _unit(gp[spine[-1]] - gp[pelvis])
    for j in range(J):
        role = roles[j][0]
        p = int(skeleton.parents[j])
        if role not in ("shin", "forearm", "foot", "hand") or p < 0:
            continue
        d = _unit(gp[j] - gp[p])  # the bone of the thigh / upper arm (etc.) above
        if float(np.linalg.norm(d)) < 0.5:
            continue
        if role in ("shin", "foot") and float(d @ -up) < np.cos(np.radians(30)):
            return False
        if role in ("forearm", "hand") and abs(float(d @ up)) > np.sin(np.radians(60)):
            return False
    return True


def needs_pose(skeleton: Skeleton) -> bool:
    """Whether :func:`anatomy` takes twist zeros from a clip's mean pose on this skeleton (its rest
    pose is not human-shaped)."""
    roles = body_roles(skeleton)
    if roles is None:
        return False
    _, gp = forward_kinematics_arrays(quat.identity((skeleton.num_joints,)), skeleton.offsets, skeleton.parents)
    return not _human_rest(skeleton, roles, gp)


def anatomy(skeleton: Skeleton, pose: Array | Motion | None = None) -> Anatomy:
    """The canonical segments of a humanoid skeleton; raises :class:`SkeletonError` when the
    topology shows no body, or the names no left and right.

    The pelvis's and the chest's frames are rigid features of their own offsets (up: toward the
    spine or neck; left: between the hips or clavicles), so every rest pose gives the same frames.
    A limb segment's x axis is its bone; its twist zero is the pose ``pose`` (local rotations
    ``[J, 4]``; or a clip: the rest pose when it is human-shaped, a T- or A-pose, else the clip's
    :func:`mean_pose`; None: the rest pose): there the
    segment's frame is its parent's frame carried to the canonical neutral direction and swung
    the shortest way onto the bone, so its anatomical rotation in that pose has no twist.
    Without a pose, rigs whose rest pose is not human-shaped (bones along X) get the rest pose's
    twists."""
    roles = body_roles(skeleton)
    if roles is None:
        raise SkeletonError("the skeleton shows no humanoid body (no joint with a spine and two legs below it)")
    J = skeleton.num_joints
    P = [int(p) for p in skeleton.parents]
    kids: list[list[int]] = [[] for _ in range(J)]
    for j, p in enumerate(P):
        if p >= 0:
            kids[p].append(j)
    spine = [j for j in range(J) if roles[j][0] == "spine"]
    neck = [j for j in range(J) if roles[j][0] in ("neck", "head")]
    if not spine:
        raise SkeletonError("the skeleton shows no spine")
    pelvis = P[spine[0]]
    chest = spine[-1]
    by: dict[tuple[str, str], int] = {}
    for j, (role, side) in enumerate(roles):
        if role and role not in ("spine", "neck", "head", "finger") and (role, side) not in by:
            by[(role, side)] = j
    if not any(side for _, side in by):
        raise SkeletonError("the joint names do not tell left from right (no Left/Right, L/R or l_/r_ names)")
    _, gp = forward_kinematics_arrays(quat.identity((J,)), skeleton.offsets, skeleton.parents)
    if isinstance(pose, Motion):
        pose = None if _human_rest(skeleton, roles, gp) else mean_pose(pose)
    local = quat.identity((J,)) if pose is None else np.asarray(pose, np.float64).reshape(J, 4)
    gm, _ = forward_kinematics_arrays(local[None], skeleton.offsets, skeleton.parents)
    gm = gm[0]

    def first_below(j: int, chain: list[int]) -> int:
        return next((c for c in chain if np.linalg.norm(gp[c] - gp[j]) > 1e-9), chain[-1])

    def side_pair(*parts: str) -> Array:
        lat = np.zeros(3)
        for part in parts:
            if (part, "left") in by and (part, "right") in by:
                d = gp[by[(part, "left")]] - gp[by[(part, "right")]]
                if float(np.linalg.norm(d)) > 1e-9:
                    return d
        return lat

    def body_frame(j: int, up_to: int, lat: Array) -> tuple[Array, Array, Array, Array]:
        up = _unit(gp[up_to] - gp[j])
        left = _unit(lat - (lat @ up) * up)
        if float(np.linalg.norm(left)) < 0.5 or float(np.linalg.norm(up)) < 0.5:
            raise SkeletonError(f"cannot tell the body's up and left directions at {skeleton.names[j]}")
        fwd = np.cross(left, up)
        return _frame(up, fwd), up, left, fwd

    pf, up, left, forward = body_frame(pelvis, first_below(pelvis, spine + neck), side_pair("thigh", "shin"))
    cf = pf
    if neck:
        cf = body_frame(chest, first_below(chest, neck), side_pair("clavicle", "upper_arm"))[0]
    ident = quat.identity(())

    def swung(parent_local: Array, parent_joint: int, neutral: Array, j: int) -> Array:
        """Segment ``j``'s frame (its local coordinates) from its parent's, in the pose."""
        bone = _chain_child(skeleton, kids, j)
        w = quat.mul(quat.mul(gm[parent_joint], parent_local), neutral)  # neutral-predicted, world
        if bone is None or float(np.linalg.norm(bone)) < 1e-9:
            return quat.normalize(quat.inv_mul(gm[j], w))
        x = quat.mul_vec(gm[j], _unit(bone))
        w = quat.mul(quat.between(quat.mul_vec(w, np.array([1.0, 0.0, 0.0])), x), w)
        return quat.normalize(quat.inv_mul(gm[j], w))

    def chain_frames(parent: Array, parent_joint: int, joints: list[int], last: Array) -> tuple[Array, ...]:
        out, up_joint = [parent], parent_joint
        for j in joints[:-1]:
            out.append(swung(out[-1], up_joint, ident, j))
            up_joint = j
        return (*out, last)

    segments: dict[str, Segment] = {}
    segments["spine"] = Segment("spine", tuple(spine), pelvis, chain_frames(pf, pelvis, spine, cf), ident)
    heads = [j for j in range(J) if roles[j][0] == "head"]
    if neck and heads and neck[-1] == heads[0]:
        frames_n, prev = [cf], chest
        for j in neck:
            frames_n.append(swung(frames_n[-1], prev, ident, j))
            prev = j
        segments["neck"] = Segment("neck", tuple(neck), chest, tuple(frames_n), ident)

    # the canonical neutral pose (T-pose), in a body frame of its own
    cup, cleft, cfwd = np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])

    def canonical_frame(part: str, side: str) -> Array:
        s = 1.0 if side == "left" else -1.0
        if part in ("clavicle", "upper_arm", "forearm", "hand"):
            return _frame(s * cleft, cfwd)
        if part in ("thigh", "shin"):
            return _frame(-cup, cfwd)
        if part in ("foot", "toes"):
            return _frame(cfwd, cup)
        return _frame(cup, cfwd)

    frames: dict[tuple[str, str], tuple[Array, Array]] = {
        ("pelvis", ""): (pf, canonical_frame("pelvis", "")),
        ("chest", ""): (cf, canonical_frame("chest", "")),
    }
    joint_of: dict[tuple[str, str], int] = {("pelvis", ""): pelvis, ("chest", ""): chest}
    for part in _LIMB:
        for side in SIDES:
            found = by.get((_ROLE.get(part, part), side))
            if found is None:
                continue
            j = found
            pp = _PARENT[part]
            pkey = (pp, "") if pp in ("pelvis", "chest") else (pp, side)
            if pkey not in frames:  # no clavicle: the arm hangs from the chest
                pkey = ("chest", "")
            parent_rig, parent_can = frames[pkey]
            c = canonical_frame(part, side)
            neutral = quat.inv_mul(parent_can, c)
            a = swung(parent_rig, joint_of[pkey], neutral, j)
            name = f"{side}_{part}"
            segments[name] = Segment(name, (j,), joint_of[pkey], (parent_rig, a), neutral)
            frames[(part, side)] = (a, c)
            joint_of[(part, side)] = j
    ordered = {n: segments[n] for n in SEGMENTS if n in segments}
    return Anatomy(skeleton, pelvis, ordered, up, left, forward)


def _globals(motion: Motion) -> Array:
    gr, _ = forward_kinematics_arrays(motion.rotations, motion.skeleton.offsets, motion.skeleton.parents)
    return gr


def anatomical_rotations(motion: Motion, body: Anatomy | None = None) -> dict[str, Array]:
    """Per canonical segment, its anatomical rotation ``[F, 4]`` (relative to its parent segment,
    from the canonical neutral pose; spine and neck chains composed)."""
    body = anatomy(motion.skeleton, motion) if body is None else body
    gr = _globals(motion)
    out = {}
    for name, s in body.segments.items():
        rel = quat.inv_mul(gr[:, s.parent_joint], gr[:, s.joints[-1]])
        q = quat.mul(quat.inv_mul(s.parent_frame, rel), s.frame)
        out[name] = quat.abs(quat.inv_mul(s.neutral, q))
    return out


def anatomical_angles(rotations: Array) -> Array:
    """Anatomical angles in degrees ``[..., 3]`` of anatomical rotations ``[..., 4]``:
    flexion/extension (swing about y), abduction/adduction (swing about z), axial rotation
    (twist about the bone, x)."""
    s, t = quat.swing_twist(np.asarray(rotations, np.float64), np.array([1.0, 0.0, 0.0]))
    sv = quat.to_scaled_angle_axis(quat.abs(s))
    tv = quat.to_scaled_angle_axis(quat.abs(t))
    return np.degrees(np.stack([sv[..., 1], sv[..., 2], tv[..., 0]], axis=-1))


def angle_ranges(motion: Motion, body: Anatomy | None = None) -> dict[str, dict[str, list[float]]]:
    """Per segment, the [min, max] in degrees of flexion, abduction and rotation over the clip."""
    out = {}
    for name, q in anatomical_rotations(motion, body).items():
        a = anatomical_angles(q)
        out[name] = {
            k: [float(a[:, i].min()), float(a[:, i].max())] if len(a) else [0.0, 0.0]
            for i, k in enumerate(("flexion", "abduction", "rotation"))
        }
    return out


def joint_transform(segment: Segment, k: int = 0) -> tuple[Array, Array, float]:
    """(reference ``[4]``, rotation ``[3, 3]``, n) taking the segment's model space to the limit
    space of its ``k``-th rig joint: that joint's ``log(abs(inv(reference) q))`` is
    ``rotation @ v / n`` for the model-space point ``v`` (a chain of ``n`` joints: each one a
    share of the composed rotation)."""
    n = len(segment.joints)
    a0, a1 = segment.frames[k], segment.frames[k + 1]
    neutral = segment.neutral if n == 1 else quat.identity(())
    ref = quat.mul(quat.mul(a0, neutral), quat.inv(a1))
    return quat.normalize(ref), quat.to_matrix(a1), float(n)


def limit_points(motion: Motion, body: Anatomy | None = None) -> dict[str, Array]:
    """Per segment, the model-space points ``[N, 3]`` of a clip: the scaled angle axis of the
    anatomical rotation; for a chain of ``n`` joints, ``n`` times each joint's own share (one
    point per joint and frame), so a limit on them bounds every joint of any chain alike."""
    body = anatomy(motion.skeleton, motion) if body is None else body
    gr = _globals(motion)
    out = {}
    for name, s in body.segments.items():
        pts = []
        for k, j in enumerate(s.joints):
            ref, R, n = joint_transform(s, k)
            up = s.parent_joint if k == 0 else s.joints[k - 1]
            local = quat.inv_mul(gr[:, up], gr[:, j])
            v = quat.to_scaled_angle_axis(quat.abs(quat.inv_mul(ref, local)))
            pts.append(n * (v @ R))  # R^T v, row-wise
        out[name] = np.concatenate(pts, axis=0) if pts else np.zeros((0, 3))
    return out

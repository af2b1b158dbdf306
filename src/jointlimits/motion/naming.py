"""Joint names across skeleton conventions, and mapping motions between them.

Every convention maps canonical joint names (SMPL's body names plus a few extras) to its own:
``lafan1``, ``cmu`` (cgspeed MotionBuilder-friendly BVH), ``cmu_max`` (cgspeed 3dsMax-friendly
BVH), ``bandai`` (Bandai Namco Research), ``mixamo`` (``mixamorig:`` prefix optional) and
``smpl`` (SMPL / SMPL-H / SMPL-X body joints). A joint without a counterpart keeps its name.

- :func:`map_names` renames a skeleton's joints into another convention (same topology);
- :func:`check_rest_pose` compares two skeletons' bone directions at rest, joint by mapped joint,
  and raises :class:`SkeletonError` naming the joints and angles that disagree;
- :func:`map_motion` re-expresses a motion on another skeleton (another convention and topology,
  e.g. the one a limits file was fitted on): each target joint's local rotation is the source's
  rotation between the mapped joints, which is only meaningful when the rest poses agree, so it
  checks them first.

Body-part roles for skeletons of any naming (no convention needed): :data:`ROLES` is the one table
of joint-name patterns (head, hand, finger, foot, toe, end markers, and the limb and spine parts
whose limits are coupled); :func:`find_role` gives the joints that play a role (optionally on one
side), :func:`is_role` tests one name, and :func:`side_of` reads the side from a name.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import SkeletonError
from . import quat
from .skeleton import Motion, Skeleton, forward_kinematics, forward_kinematics_arrays

__all__ = [
    "CONVENTIONS",
    "detect",
    "canonical",
    "map_names",
    "check_rest_pose",
    "map_motion",
    "DEFAULT_TOLERANCE_DEG",
    "ROLES",
    "role_pattern",
    "is_role",
    "find_role",
    "body_roles",
    "side_of",
]

#: Largest angle (degrees) between the rest bone directions of mapped joints.
DEFAULT_TOLERANCE_DEG = 30.0


def _sides(table: dict[str, str]) -> dict[str, str]:
    """Expand ``{"*_hip": "{S}UpLeg"}`` entries into left/right ones; {S}/{s}/{_S} pick the casing."""
    out = {}
    for k, v in table.items():
        if k.startswith("*"):
            for side, S, s, u in (("left", "Left", "l", "L"), ("right", "Right", "r", "R")):
                out[side + k[1:]] = v.format(S=S, s=s, U=u)
        else:
            out[k] = v
    return out


#: convention -> {canonical name: that convention's joint name}
CONVENTIONS: dict[str, dict[str, str]] = {
    "smpl": {
        n: n
        for n in (
            "pelvis",
            "spine1",
            "spine2",
            "spine3",
            "neck",
            "head",
            "jaw",
            "left_hip",
            "left_knee",
            "left_ankle",
            "left_foot",
            "right_hip",
            "right_knee",
            "right_ankle",
            "right_foot",
            "left_collar",
            "left_shoulder",
            "left_elbow",
            "left_wrist",
            "right_collar",
            "right_shoulder",
            "right_elbow",
            "right_wrist",
        )
    },
    "lafan1": _sides(
        {
            "pelvis": "Hips",
            "spine1": "Spine",
            "spine2": "Spine1",
            "spine3": "Spine2",
            "neck": "Neck",
            "head": "Head",
            "*_hip": "{S}UpLeg",
            "*_knee": "{S}Leg",
            "*_ankle": "{S}Foot",
            "*_foot": "{S}Toe",
            "*_collar": "{S}Shoulder",
            "*_shoulder": "{S}Arm",
            "*_elbow": "{S}ForeArm",
            "*_wrist": "{S}Hand",
        }
    ),
    "mixamo": _sides(
        {
            "pelvis": "Hips",
            "spine1": "Spine",
            "spine2": "Spine1",
            "spine3": "Spine2",
            "neck": "Neck",
            "head": "Head",
            "*_hip": "{S}UpLeg",
            "*_knee": "{S}Leg",
            "*_ankle": "{S}Foot",
            "*_foot": "{S}ToeBase",
            "*_collar": "{S}Shoulder",
            "*_shoulder": "{S}Arm",
            "*_elbow": "{S}ForeArm",
            "*_wrist": "{S}Hand",
        }
    ),
    "cmu": _sides(
        {
            "pelvis": "Hips",
            "spine1": "LowerBack",
            "spine2": "Spine",
            "spine3": "Spine1",
            "neck": "Neck",
            "neck2": "Neck1",
            "head": "Head",
            "*_hip_joint": "{U}HipJoint",
            "*_hip": "{S}UpLeg",
            "*_knee": "{S}Leg",
            "*_ankle": "{S}Foot",
            "*_foot": "{S}ToeBase",
            "*_collar": "{S}Shoulder",
            "*_shoulder": "{S}Arm",
            "*_elbow": "{S}ForeArm",
            "*_wrist": "{S}Hand",
            "*_hand": "{S}FingerBase",
            "*_fingers": "{U}Fingers",
            "*_thumb": "{U}Thumb",
        }
    ),
    "cmu_max": _sides(
        {
            "pelvis": "Hips",
            "spine1": "lowerback",
            "spine2": "Chest",
            "spine3": "Chest2",
            "neck": "lowerneck",
            "neck2": "Neck",
            "head": "Head",
            "*_hip_joint": "{U}HipJoint",
            "*_hip": "{S}Hip",
            "*_knee": "{S}Knee",
            "*_ankle": "{S}Ankle",
            "*_foot": "{S}Toe",
            "*_collar": "{S}Collar",
            "*_shoulder": "{S}Shoulder",
            "*_elbow": "{S}Elbow",
            "*_wrist": "{S}Wrist",
            "*_hand": "{s}hand",
            "*_fingers": "{U}Fingers",
            "*_thumb": "{U}Thumb",
        }
    ),
    "bandai": _sides(
        {
            "root": "joint_Root",
            "pelvis": "Hips",
            "spine1": "Spine",
            "spine2": "Chest",
            "neck": "Neck",
            "head": "Head",
            "*_hip": "UpperLeg_{U}",
            "*_knee": "LowerLeg_{U}",
            "*_ankle": "Foot_{U}",
            "*_foot": "Toes_{U}",
            "*_collar": "Shoulder_{U}",
            "*_shoulder": "UpperArm_{U}",
            "*_elbow": "LowerArm_{U}",
            "*_wrist": "Hand_{U}",
        }
    ),
}
_PREFIX = re.compile(r"^mixamorig\d*:")


# --------------------------------------------------------------------------- body-part roles

#: Body-part role -> joint-name pattern (searched case-insensitively anywhere in the name). The one
#: place where joint names are matched to body parts; combine roles with :func:`find_role`
#: (e.g. the ankle joint is ``find_role(names, "foot", exclude=("toe", "end", "finger"))``).
ROLES: dict[str, str] = {
    "head": r"head",
    "hand": r"(hand|wrist)",
    "finger": r"(thumb|finger|index|middle|ring|pinky)",
    "foot": r"(foot|ankle)",
    "toe": r"(toe|ball)",
    #: end markers written as joints (L_Wrist_End, HeadTop_End, ...)
    "end": r"(end|site|top)",
    # the parts whose limits are coupled (parent -> child, see jointlimits.limits.coupled)
    "clavicle": r"(shoulder|clavicle|collar)",
    "upper_arm": r"(?<!fore)(?<!lower)(arm|upperarm|humerus)$",
    "forearm": r"(forearm|lowerarm|elbow)",
    "thigh": r"(upleg|upperleg|thigh|hip)$",
    "shin": r"((?<!up)(?<!upper)leg|knee|shin|calf|lowerleg)$",
    "spine": r"(spine\d*|chest|abdomen)$",
    "neck": r"neck\d*$",
}
_ROLE_RE = {k: re.compile(v, re.I) for k, v in ROLES.items()}

# a one-letter prefix counts only before a capital (lHand, LHipJoint; not lowerneck)
_LEFT = re.compile(r"((?i:^left|^l[_.\-]|[_.\-]l$|left)|^[lL](?=[A-Z]))")
_RIGHT = re.compile(r"((?i:^right|^r[_.\-]|[_.\-]r$|right)|^[rR](?=[A-Z]))")


def role_pattern(role: str) -> re.Pattern[str]:
    """The compiled (case-insensitive) name pattern of a role in :data:`ROLES`."""
    try:
        return _ROLE_RE[role]
    except KeyError:
        raise SkeletonError(f"unknown body-part role {role!r}; known: {', '.join(ROLES)}") from None


def is_role(name: str, *roles: str, exclude: Sequence[str] = ()) -> bool:
    """Whether joint ``name`` matches any of ``roles`` and none of the roles in ``exclude``."""
    return any(role_pattern(r).search(name) for r in roles) and not any(role_pattern(r).search(name) for r in exclude)


def side_of(name: str) -> str:
    """ "left", "right" or "" from a joint name (LeftArm, l_hand, hand_R, lFoot, ...)."""
    if _LEFT.search(name):
        return "left"
    if _RIGHT.search(name):
        return "right"
    return ""


def find_role(
    names: Sequence[str] | Skeleton, *roles: str, exclude: Sequence[str] = (), side: str | None = None
) -> list[int]:
    """Indices (ascending) of the joints that play any of ``roles`` and none of ``exclude``; with
    ``side`` ("left", "right" or "" for neither) only those on that side.

    Given a :class:`Skeleton` whose topology shows a body (:func:`body_roles`), the roles and sides
    are the topology's (``end`` markers still by name); given names, or a skeleton without a
    body (a single limb, a prop), they come from the names (:data:`ROLES`, :func:`side_of`).
    """
    for r in (*roles, *exclude):
        role_pattern(r)  # unknown roles raise
    if isinstance(names, Skeleton):
        body = body_roles(names)
        if body is not None:
            out = []
            for j, ((role, sd), n) in enumerate(zip(body, names.names)):
                have = {role} | ({"end"} if role_pattern("end").search(n) else set())
                if have & set(roles) and not have & set(exclude) and (side is None or sd == side):
                    out.append(j)
            return out
        names = names.names
    return [
        j for j, n in enumerate(names) if is_role(n, *roles, exclude=exclude) and (side is None or side_of(n) == side)
    ]


# anchors that place a limb chain's joints when the names show them (else bone lengths do)
_KNEE = re.compile(r"(knee|shin|calf|lowerleg|(?<!up)(?<!upper)leg)", re.I)
_ELBOW = re.compile(r"(forearm|lowerarm|elbow)", re.I)
_HEAD = re.compile(r"head", re.I)


def _chain(kids: list[list[int]], height: list[int], j: int) -> list[int]:
    """From ``j`` down the child with the longest line of descendants (ties: the first)."""
    out = [j]
    while kids[out[-1]]:
        out.append(max(kids[out[-1]], key=lambda c: (height[c], -c)))
    return out


def _chain_side(names: Sequence[str], chain: Sequence[int]) -> str:
    for j in chain:
        s = side_of(names[j])
        if s:
            return s
    return ""


def body_roles(skeleton: Skeleton) -> list[tuple[str, str]] | None:
    """Per joint, its body-part role and side (``("forearm", "left")``; ``("", "")`` for a joint
    that plays none, e.g. a ground-level root or a hip joint between pelvis and thigh), read from
    the topology; None when the skeleton shows no body.

    The pelvis is the first joint (from the root) with three or more limbs below it; the largest
    is the spine, which runs to the first joint where it branches (the chest), and the others are
    the legs. The chest's children with a side are the arms, the other one the neck. Along a leg
    the thigh and shin are the joints before and at the first knee-like name (knee, shin, calf,
    LowerLeg, a Leg that is not an UpLeg), else the two consecutive joints with the longest
    bones; then foot and toe. Along an arm the forearm is the first elbow-like name (ForeArm,
    LowerArm, Elbow), else the third joint of four or more (second of three); the joint before is
    the upper arm, the one before that the clavicle, the one after the hand, and everything
    below the hand are fingers. Spine joints run from below the pelvis to the chest; on the neck
    line the head is the first joint named head (else the last that is not an end marker), the
    joints before it are the neck. Sides come from the names along each limb (:func:`side_of`):
    without them, arms and legs are told by the size of their lines, with no side.
    """
    J = skeleton.num_joints
    P = [int(p) for p in skeleton.parents]
    names = skeleton.names
    kids: list[list[int]] = [[] for _ in range(J)]
    for j, p in enumerate(P):
        if p >= 0:
            kids[p].append(j)
    height = [0] * J  # joints below along the longest line
    size = [1] * J
    depth = skeleton.depth()
    for j in sorted(range(J), key=lambda k: -depth[k]):
        if P[j] >= 0:
            height[P[j]] = max(height[P[j]], height[j] + 1)
            size[P[j]] += size[j]
    bone = np.zeros(J)  # length of each joint's bone: to its child along the chain (or End Site)
    for p, o in skeleton.end_sites:
        bone[p] = max(bone[p], float(np.linalg.norm(o)))
    for j in range(J):
        if kids[j]:
            c = max(kids[j], key=lambda c: (height[c], -c))
            bone[j] = float(np.linalg.norm(skeleton.offsets[c]))
    order = [j for j in range(J) if P[j] < 0]
    pelvis = None
    for j in order:  # breadth first
        if sum(1 for c in kids[j] if height[c] >= 1) >= 3:
            pelvis = j
            break
        order.extend(kids[j])
    if pelvis is None:
        return None
    limbs = sorted((c for c in kids[pelvis] if height[c] >= 1), key=lambda c: (-size[c], c))
    spine_root, rest = limbs[0], limbs[1:]
    legs = [c for c in rest if _chain_side(names, _chain(kids, height, c))]
    if len(legs) < 2:
        legs = rest[:2]
    out: list[tuple[str, str]] = [("", "")] * J

    def put(j: int, role: str, side: str) -> None:
        out[j] = (role, side)

    for leg in legs:
        ch = _chain(kids, height, leg)
        sd = _chain_side(names, ch)
        k = next((i for i, j in enumerate(ch) if i >= 1 and _KNEE.search(names[j])), None)
        if k is None:
            if len(ch) < 2:
                continue
            k = 1 + int(np.argmax([bone[ch[i]] + bone[ch[i + 1]] for i in range(len(ch) - 1)]))
        for i, role in ((k - 1, "thigh"), (k, "shin"), (k + 1, "foot"), (k + 2, "toe")):
            if 0 <= i < len(ch):
                put(ch[i], role, sd)
    # the spine: single joints up to the first branch (the chest)
    chest = spine_root
    put(chest, "spine", "")
    while len(kids[chest]) == 1:
        chest = kids[chest][0]
        put(chest, "spine", "")
    branches = [c for c in kids[chest]]
    arms = [c for c in branches if side_of(names[c]) and height[c] >= 2]
    if len(arms) < 2:
        arms = sorted(branches, key=lambda c: (-height[c], c))[:2] if len(branches) >= 3 else []
    necks = [c for c in branches if c not in arms]
    for arm in arms:
        ch = _chain(kids, height, arm)
        sd = _chain_side(names, ch)
        k = next((i for i, j in enumerate(ch) if i >= 1 and _ELBOW.search(names[j])), None)
        if k is None:
            k = 2 if len(ch) >= 4 else 1
        for i, role in ((k - 2, "clavicle"), (k - 1, "upper_arm"), (k, "forearm"), (k + 1, "hand")):
            if 0 <= i < len(ch):
                put(ch[i], role, sd)
        if k + 1 < len(ch):
            hand = ch[k + 1]
            stack = list(kids[hand])
            while stack:
                f = stack.pop()
                put(f, "finger", sd)
                stack.extend(kids[f])
    if necks:
        neck = max(necks, key=lambda c: (height[c], -c))
        ch = _chain(kids, height, neck)
        h = next((i for i, j in enumerate(ch) if _HEAD.search(names[j])), None)
        if h is None:
            h = len(ch) - 1
            while h > 0 and role_pattern("end").search(names[ch[h]]) and not kids[ch[h]]:
                h -= 1
        for i in range(h):
            put(ch[i], "neck", "")
        put(ch[h], "head", "")
    return out


def _bare(name: str) -> str:
    return _PREFIX.sub("", name)


def detect(skeleton: Skeleton) -> str:
    """The convention whose names cover the most of the skeleton's joints (ties: the one with fewer
    names left unmatched in its own table). Raises SkeletonError when fewer than half of the joints
    (or than 12, for skeletons with fingers) match."""
    names = {_bare(n) for n in skeleton.names}
    best, score = None, (-1, 0)
    for conv, table in CONVENTIONS.items():
        hit = len(names & set(table.values()))
        s = (hit, -len(set(table.values()) - names))
        if s > score:
            best, score = conv, s
    if best is None or score[0] < max(3, min(12, skeleton.num_joints // 2)):
        raise SkeletonError(
            f"joint names match no known convention ({', '.join(CONVENTIONS)}); "
            f"first joints: {', '.join(skeleton.names[:6])}"
        )
    return best


def _convention(name: str) -> dict[str, str]:
    if name not in CONVENTIONS:
        raise SkeletonError(f"unknown naming convention {name!r}; known: {', '.join(CONVENTIONS)}")
    return CONVENTIONS[name]


def canonical(skeleton: Skeleton, convention: str | None = None) -> dict[int, str]:
    """Joint index -> canonical name for the joints the convention knows."""
    table = _convention(convention or detect(skeleton))
    inv = {v: k for k, v in table.items()}
    return {j: inv[_bare(n)] for j, n in enumerate(skeleton.names) if _bare(n) in inv}


def map_names(skeleton: Skeleton, to: str, source: str | None = None) -> Skeleton:
    """A copy of ``skeleton`` with its joints renamed into convention ``to`` (joints without a
    counterpart keep their names; ``source`` defaults to :func:`detect`)."""
    target = _convention(to)
    canon = canonical(skeleton, source)
    names = [target.get(canon.get(j, ""), n) for j, n in enumerate(skeleton.names)]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise SkeletonError(f"renaming into {to} would give duplicate joint names {dup}")
    out = skeleton.copy()
    out.names = names
    return out


def _pairs(a: Skeleton, b: Skeleton) -> dict[str, tuple[int, int]]:
    """Canonical name -> (joint of a, joint of b); then joints of the same name that neither
    convention table knows (a clip mapped onto its own skeleton keeps its thumbs)."""
    ca, cb = canonical(a), canonical(b)
    ib = {c: j for j, c in cb.items()}
    out = {c: (j, ib[c]) for j, c in ca.items() if c in ib}
    used_a, used_b = set(ca), set(cb)
    for j, n in enumerate(a.names):
        if j not in used_a and n in b.names and b.index(n) not in used_b and n not in out:
            out[n] = (j, b.index(n))
    return out


def _rest_global(sk: Skeleton) -> NDArray[np.float64]:
    _, gp = forward_kinematics_arrays(quat.identity((sk.num_joints,)), sk.offsets, sk.parents)
    return gp


def _mapped_parent(sk: Skeleton, j: int, mapped: set[int]) -> int:
    p = int(sk.parents[j])
    while p >= 0 and p not in mapped:
        p = int(sk.parents[p])
    return p


def rest_pose_angles(a: Skeleton, b: Skeleton) -> dict[str, float]:
    """Per mapped joint (canonical name), the angle in degrees between the rest directions of the
    bone from its nearest mapped ancestor to it in ``a`` and in ``b``: the bone that ancestor
    rotates. Bones shorter than 1% of the body, and those leaving a joint with several mapped
    children (pelvis to hips, chest to collars: the body's shape, which rigs draw differently),
    are skipped."""
    pairs = _pairs(a, b)
    ma, mb = {ja for ja, _ in pairs.values()}, {jb for _, jb in pairs.values()}
    ga, gb = _rest_global(a), _rest_global(b)
    up_a = {ja: _mapped_parent(a, ja, ma) for ja in ma}
    up_b = {jb: _mapped_parent(b, jb, mb) for jb in mb}
    fan_a = {p: list(up_a.values()).count(p) for p in set(up_a.values())}
    fan_b = {p: list(up_b.values()).count(p) for p in set(up_b.values())}
    size_a = np.ptp(ga, axis=0).max() or 1.0
    size_b = np.ptp(gb, axis=0).max() or 1.0
    out = {}
    for c, (ja, jb) in pairs.items():
        pa, pb = up_a[ja], up_b[jb]
        if pa < 0 or pb < 0 or canonical(a).get(pa) != canonical(b).get(pb):
            continue
        if fan_a[pa] > 1 or fan_b[pb] > 1:
            continue  # pelvis-to-hip, chest-to-collar: rigid body shape, not a bone a joint moves
        da, db = ga[ja] - ga[pa], gb[jb] - gb[pb]
        na, nb = np.linalg.norm(da), np.linalg.norm(db)
        if na < 0.01 * size_a or nb < 0.01 * size_b:
            continue
        out[c] = float(np.degrees(np.arccos(np.clip(da @ db / (na * nb), -1.0, 1.0))))
    return out


def check_rest_pose(a: Skeleton, b: Skeleton, tolerance_deg: float = DEFAULT_TOLERANCE_DEG) -> dict[str, float]:
    """Raise SkeletonError unless every mapped bone points the same way at rest in ``a`` and ``b``
    (within ``tolerance_deg``); returns the angles."""
    ang = rest_pose_angles(a, b)
    if len(ang) < 3:
        raise SkeletonError(
            f"only {len(ang)} bones can be compared between the two skeletons: "
            f"their joint names do not map onto each other"
        )
    bad = {c: v for c, v in ang.items() if v > tolerance_deg}
    if bad:
        worst = ", ".join(f"{c} {v:.0f} deg" for c, v in sorted(bad.items(), key=lambda kv: -kv[1])[:8])
        raise SkeletonError(
            f"rest poses differ: {len(bad)} of {len(ang)} mapped bones point more than "
            f"{tolerance_deg:g} deg apart at rest ({worst}); local rotations would not mean the "
            f"same pose"
        )
    return ang


def map_motion(motion: Motion, target: Skeleton, tolerance_deg: float = DEFAULT_TOLERANCE_DEG) -> Motion:
    """``motion`` re-expressed on ``target``'s joints (names, parents, offsets): each target
    joint's local rotation is the source's rotation from the joint mapped to its parent to the
    joint mapped to it; unmapped target joints keep the identity (with a warning). The root's
    translation is scaled by the ratio of the skeletons' sizes at rest. A target without End
    Sites (the skeleton of a limits file) gets the clip's, scaled alike, on the leaf joints
    mapped to the joints that carry them."""
    src = motion.skeleton
    check_rest_pose(src, target, tolerance_deg)
    pairs = _pairs(target, src)
    t2s = {jt: js for jt, js in pairs.values()}
    if not t2s:
        raise SkeletonError("no joint of the clip maps onto the target skeleton")
    missing = [target.names[j] for j in range(target.num_joints) if j not in t2s and target.rotation_order(j)]
    if missing:
        warnings.warn(f"joints without a counterpart keep their rest rotation: {', '.join(missing)}", stacklevel=2)
    gr, gp = forward_kinematics(motion)
    F, J = motion.num_frames, target.num_joints
    rot = quat.identity((F, J))
    pos = np.repeat(target.offsets[None], F, axis=0)
    size_t = np.ptp(_rest_global(target), axis=0).max()
    size_s = np.ptp(_rest_global(src), axis=0).max()
    k = size_t / size_s if size_s > 0 else 1.0
    rest_t = _rest_global(target)
    for jt, js in t2s.items():
        p = _mapped_parent(target, jt, set(t2s))
        if p >= 0:
            rot[:, jt] = quat.inv_mul(gr[:, t2s[p]], gr[:, js])
        else:
            # the top mapped joint carries the clip's global motion (a root above it stays at rest)
            rot[:, jt] = gr[:, js]
            above = int(target.parents[jt])
            pos[:, jt] = gp[:, js] * k - (rest_t[above] if above >= 0 else 0.0)
    out = target.copy()
    if not out.end_sites and src.end_sites:
        s2t = {js: jt for jt, js in t2s.items()}
        leaves = set(range(J)) - {int(p) for p in out.parents if p >= 0}
        ends = [(s2t[p], np.asarray(o, float) * k) for p, o in src.end_sites if s2t.get(p) in leaves]
        if ends:
            out = Skeleton(out.names, out.parents, out.offsets, out.channels, ends)
    return Motion(out, rot, pos, motion.frame_time)


def rename_motion(motion: Motion, to: str, source: str | None = None) -> Motion:
    """The same motion with its skeleton's joints renamed into convention ``to``."""
    return dataclasses.replace(motion, skeleton=map_names(motion.skeleton, to, source))

"""A built-in humanoid and a procedural range-of-motion clip, so the toolkit runs without data.

The skeleton (:func:`humanoid_skeleton`) is Y-up, faces +Z and rests in a T-pose: the character's
left is +X, arms lie along +/-X, legs hang along -Y and the feet point along +Z. Every joint's
local frame at rest is the world frame, so an anatomical motion is a rotation about one of the
local axes X (left), Y (up) or Z (forward); rotations are right-handed (positive = counter-clockwise
looking down the axis towards the origin). Every joint has the BVH channels ``Zrotation Yrotation
Xrotation`` (q = Rz Ry Rx); the root also has ``Xposition Yposition Zposition`` first.

:data:`ANATOMICAL_RANGES` lists literature ranges of motion and :data:`MOTION_AXES` says which
local axis (and which direction of it) each motion turns about for a left-side or midline joint.
A right-side joint is the mirror image through the YZ plane: a rotation about X keeps its sign,
rotations about Y and Z change sign, so a right joint's Y and Z ranges are the left ones negated.

:func:`range_of_motion` sweeps every joint through its ranges with smooth Lissajous-like curves in
its Euler angles, all limbs at once, the root drifting slowly; :func:`over_rotate` pushes any clip
past its own range (the demo's "over-rotated copy" that the fitted limits must pull back).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import cast

import numpy as np
from numpy.typing import NDArray

from ..errors import JointLimitsError, SkeletonError
from . import quat
from .skeleton import POSITION_CHANNELS, Motion, Skeleton

__all__ = [
    "humanoid_skeleton",
    "ANATOMICAL_RANGES",
    "MOTION_AXES",
    "NEUTRAL_OFFSETS",
    "ROOT_RANGE",
    "HUMANOID_JOINTS",
    "joint_ranges",
    "range_of_motion",
    "over_rotate",
    "UNITS",
]

Array = NDArray[np.float64]

#: Length units :func:`humanoid_skeleton` can write, as file units per metre.
UNITS: dict[str, float] = {"m": 1.0, "cm": 100.0, "mm": 1000.0, "in": 1.0 / 0.0254}

#: The built-in joints in file order (parents before children).
HUMANOID_JOINTS: tuple[str, ...] = (
    "Hips",
    "Spine",
    "Spine1",
    "Spine2",
    "Neck",
    "Head",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToe",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToe",
)

# Segment geometry as fractions of standing height H, after the landmark heights and segment
# lengths of Winter's anthropometric model (Biomechanics and Motor Control of Human Movement):
# greater trochanter 0.530 H, knee 0.285 H, ankle 0.039 H, shoulder 0.818 H, chin 0.870 H,
# shoulder width 0.259 H, hip width 0.191 H, upper arm 0.186 H, forearm 0.146 H, hand 0.108 H,
# foot length 0.152 H. The spine is split into three segments between pelvis and neck base.
# (parent, offset for the LEFT side / midline in units of H; right-side joints mirror x)
_SEGMENTS: dict[str, tuple[str | None, tuple[float, float, float]]] = {
    "Hips": (None, (0.0, 0.550, 0.0)),  # pelvis centre (root, absolute)
    "Spine": ("Hips", (0.0, 0.040, 0.0)),  # lumbar: L5/S1 .. L1
    "Spine1": ("Spine", (0.0, 0.075, 0.0)),  # lower thorax
    "Spine2": ("Spine1", (0.0, 0.075, 0.0)),  # upper thorax (0.740 H)
    "Neck": ("Spine2", (0.0, 0.100, 0.0)),  # neck base C7 (0.840 H)
    "Head": ("Neck", (0.0, 0.060, 0.0)),  # atlanto-occipital joint (0.900 H)
    "Shoulder": ("Spine2", (0.020, 0.050, 0.0)),  # sternoclavicular joint
    "Arm": ("Shoulder", (0.1095, 0.028, 0.0)),  # glenohumeral joint: x = 0.259 H / 2, y = 0.818 H
    "ForeArm": ("Arm", (0.186, 0.0, 0.0)),  # elbow
    "Hand": ("ForeArm", (0.146, 0.0, 0.0)),  # wrist
    "UpLeg": ("Hips", (0.055, -0.020, 0.0)),  # hip joint centre (0.530 H)
    "Leg": ("UpLeg", (0.0, -0.245, 0.0)),  # knee (0.285 H)
    "Foot": ("Leg", (0.0, -0.246, 0.0)),  # ankle (0.039 H)
    "Toe": ("Foot", (0.0, -0.039, 0.110)),  # ball of the foot (metatarsophalangeal joints)
}
_END_SITES: dict[str, tuple[float, float, float]] = {
    "Head": (0.0, 0.100, 0.0),  # top of the head (1.0 H)
    "Hand": (0.108, 0.0, 0.0),  # finger tips
    "Toe": (0.0, 0.0, 0.045),  # toe tips (foot length 0.152 H with the heel behind the ankle)
}

# Active ranges of motion in degrees, measured from the neutral posture, compiled from the American
# Academy of Orthopaedic Surgeons' "Joint Motion: Method of Measuring and Recording" (AAOS, 1965),
# Kapandji's "The Physiology of the Joints" and Hamill & Knutzen's "Biomechanical Basis of Human
# Movement". A symmetric motion (lateral flexion, axial rotation) gives the range to each side.
# The trunk (flexion 80, extension 25, lateral flexion 35, rotation 45) is shared among the three
# spine segments (lumbar flexion-heavy, thoracic rotation-heavy) and the neck (flexion 50,
# extension 60, lateral flexion 45, rotation 80) between Neck (lower cervical) and Head (upper
# cervical, which carries half of the axial rotation at C1-C2). "laxity" entries are small passive
# ranges on otherwise unused axes so every joint moves in 3D.
ANATOMICAL_RANGES: dict[str, dict[str, float]] = {
    "Spine": {"flexion": 32.0, "extension": 10.0, "lateral flexion": 12.0, "rotation": 10.0},
    "Spine1": {"flexion": 28.0, "extension": 8.0, "lateral flexion": 12.0, "rotation": 15.0},
    "Spine2": {"flexion": 20.0, "extension": 7.0, "lateral flexion": 11.0, "rotation": 20.0},
    "Neck": {"flexion": 30.0, "extension": 35.0, "lateral flexion": 30.0, "rotation": 40.0},
    "Head": {"flexion": 20.0, "extension": 25.0, "lateral flexion": 15.0, "rotation": 40.0},
    "Shoulder": {
        "elevation": 30.0,
        "depression": 10.0,
        "protraction": 15.0,
        "retraction": 15.0,
        "rotation": 20.0,
    },  # sternoclavicular joint (clavicle)
    "Arm": {
        "flexion": 180.0,
        "extension": 60.0,
        "abduction": 180.0,
        "adduction": 0.0,
        "internal rotation": 70.0,
        "external rotation": 90.0,
    },
    "ForeArm": {"flexion": 150.0, "extension": 0.0, "pronation": 80.0, "supination": 80.0, "varus-valgus laxity": 5.0},
    "Hand": {
        "flexion": 80.0,
        "extension": 70.0,
        "radial deviation": 20.0,
        "ulnar deviation": 30.0,
        "twist laxity": 5.0,
    },
    "UpLeg": {
        "flexion": 120.0,
        "extension": 30.0,
        "abduction": 45.0,
        "adduction": 30.0,
        "internal rotation": 45.0,
        "external rotation": 45.0,
    },
    "Leg": {"flexion": 135.0, "extension": 0.0, "tibial rotation": 10.0, "varus-valgus laxity": 5.0},
    "Foot": {
        "dorsiflexion": 20.0,
        "plantarflexion": 50.0,
        "inversion": 35.0,
        "eversion": 15.0,
        "adduction": 20.0,
        "abduction": 10.0,
    },
    "Toe": {"extension": 70.0, "flexion": 45.0, "abduction laxity": 5.0, "twist laxity": 5.0},
}

# Which local axis each motion turns about, for a LEFT or midline joint of the built-in skeleton:
# (axis, sign, share). sign +1 / -1: the motion is a positive / negative rotation about the axis;
# 0: symmetric, both directions. share: the part of the literature range this channel carries.
#   spine, neck, head (bone +Y): flexion = +X (top moves forward), lateral flexion = Z, rotation = Y
#   clavicle, arm (bone +X): elevation / abduction = +Z (arm moves up), flexion = -Y (forward),
#     internal rotation = +X; the arm's neutral (at the side) is Z = -90 in the T-pose, and because
#     Y is the middle Euler angle it carries half of the 180 degrees of flexion: the arm reaches
#     overhead by elevation (Z), which keeps it on its own side of the body
#   forearm (bone +X): elbow flexion = -Y (forearm forward), pronation = +X (thumb turns down)
#   hand: flexion = -Z (fingers towards the palm, palm down), radial deviation = -Y (towards thumb)
#   thigh, shin (bone -Y): hip flexion = -X (knee forward), abduction = +Z (outwards),
#     internal rotation = -Y (toes turn in); knee flexion = +X (foot backwards)
#   foot, toe (bone +Z): plantarflexion / toe flexion = +X (toes down), inversion = -Z (sole
#     turns inwards), forefoot adduction = -Y (toes turn in)
MOTION_AXES: dict[str, dict[str, tuple[str, int, float]]] = {
    **{
        j: {
            "flexion": ("x", 1, 1.0),
            "extension": ("x", -1, 1.0),
            "lateral flexion": ("z", 0, 1.0),
            "rotation": ("y", 0, 1.0),
        }
        for j in ("Spine", "Spine1", "Spine2", "Neck", "Head")
    },
    "Shoulder": {
        "elevation": ("z", 1, 1.0),
        "depression": ("z", -1, 1.0),
        "protraction": ("y", -1, 1.0),
        "retraction": ("y", 1, 1.0),
        "rotation": ("x", 0, 1.0),
    },
    "Arm": {
        "flexion": ("y", -1, 0.5),
        "extension": ("y", 1, 1.0),
        "abduction": ("z", 1, 1.0),
        "adduction": ("z", -1, 1.0),
        "internal rotation": ("x", 1, 1.0),
        "external rotation": ("x", -1, 1.0),
    },
    "ForeArm": {
        "flexion": ("y", -1, 1.0),
        "extension": ("y", 1, 1.0),
        "pronation": ("x", 1, 1.0),
        "supination": ("x", -1, 1.0),
        "varus-valgus laxity": ("z", 0, 1.0),
    },
    "Hand": {
        "flexion": ("z", -1, 1.0),
        "extension": ("z", 1, 1.0),
        "radial deviation": ("y", -1, 1.0),
        "ulnar deviation": ("y", 1, 1.0),
        "twist laxity": ("x", 0, 1.0),
    },
    "UpLeg": {
        "flexion": ("x", -1, 1.0),
        "extension": ("x", 1, 1.0),
        "abduction": ("z", 1, 1.0),
        "adduction": ("z", -1, 1.0),
        "internal rotation": ("y", -1, 1.0),
        "external rotation": ("y", 1, 1.0),
    },
    "Leg": {
        "flexion": ("x", 1, 1.0),
        "extension": ("x", -1, 1.0),
        "tibial rotation": ("y", 0, 1.0),
        "varus-valgus laxity": ("z", 0, 1.0),
    },
    "Foot": {
        "dorsiflexion": ("x", -1, 1.0),
        "plantarflexion": ("x", 1, 1.0),
        "inversion": ("z", -1, 1.0),
        "eversion": ("z", 1, 1.0),
        "adduction": ("y", -1, 1.0),
        "abduction": ("y", 1, 1.0),
    },
    "Toe": {
        "extension": ("x", -1, 1.0),
        "flexion": ("x", 1, 1.0),
        "abduction laxity": ("y", 0, 1.0),
        "twist laxity": ("z", 0, 1.0),
    },
}

#: Skeleton angle (degrees, left side) of the anatomical neutral where it is not the rest pose.
NEUTRAL_OFFSETS: dict[str, dict[str, float]] = {"Arm": {"z": -90.0}}  # T-pose arm = 90 deg abducted

#: The root's slow orientation wander (degrees each way about x, y, z): sway, heading, roll.
ROOT_RANGE: dict[str, float] = {"x": 10.0, "y": 45.0, "z": 10.0}

_AXES = "xyz"


def _side(name: str) -> tuple[str, bool]:
    """(base name, is right side) of a built-in joint name."""
    if name.startswith("Left"):
        return name[4:], False
    if name.startswith("Right"):
        return name[5:], True
    return name, False


def humanoid_skeleton(height: float = 1.75, units: str = "cm") -> Skeleton:
    """The built-in 22-joint Y-up humanoid in a T-pose, ``height`` metres tall, in ``units``
    (``"m"``, ``"cm"``, ``"mm"`` or ``"in"``).

    Hips (root: X/Y/Z position and Z Y X rotation channels), Spine, Spine1, Spine2, Neck, Head,
    Left/Right Shoulder (clavicle), Arm, ForeArm, Hand, Left/Right UpLeg, Leg, Foot, Toe, with
    End Sites at the head, hands and toes; every other joint has Z Y X rotation channels.
    """
    if units not in UNITS:
        raise SkeletonError(f"unknown length unit {units!r}; expected one of {', '.join(UNITS)}")
    if not (isinstance(height, (int, float, np.floating)) and math.isfinite(height) and height > 0):
        raise SkeletonError(f"height must be a positive number of metres, got {height!r}")
    scale = float(height) * UNITS[units]
    names = list(HUMANOID_JOINTS)
    parents, offsets = [], []
    for name in names:
        base, right = _side(name)
        parent, off = _SEGMENTS[base]
        o = np.round(np.asarray(off, np.float64) * scale, 6)
        if right:
            o[0] = -o[0]
        offsets.append(o + 0.0)  # no negative zeros
        if parent is None:
            parents.append(-1)
        else:
            sided = parent not in ("Hips", "Spine", "Spine1", "Spine2", "Neck", "Head")
            parents.append(names.index(name[: len(name) - len(base)] + parent if sided else parent))
    rot = ["Zrotation", "Yrotation", "Xrotation"]
    channels = [list(POSITION_CHANNELS) + rot] + [list(rot) for _ in names[1:]]
    end_sites = []
    for name in names:
        base, right = _side(name)
        if base in _END_SITES:
            o = np.round(np.asarray(_END_SITES[base], np.float64) * scale, 6)
            if right:
                o[0] = -o[0]
            end_sites.append((names.index(name), o + 0.0))
    return Skeleton(names, np.asarray(parents), np.stack(offsets), channels, end_sites)


def _left_range(base: str) -> Array:
    """[3, 2] (lo, hi) degrees about x, y, z of a left-side / midline joint."""
    if base not in ANATOMICAL_RANGES:
        raise SkeletonError(f"no anatomical range for joint {base!r}; known: {', '.join(ANATOMICAL_RANGES)}")
    out = np.zeros((3, 2))
    for k, ax in enumerate(_AXES):
        out[k] = NEUTRAL_OFFSETS.get(base, {}).get(ax, 0.0)
    neg = np.zeros(3)
    pos = np.zeros(3)
    for motion, deg in ANATOMICAL_RANGES[base].items():
        ax, sign, share = MOTION_AXES[base][motion]
        k = _AXES.index(ax)
        amount = float(deg) * share
        if sign >= 0:
            pos[k] = max(pos[k], amount)
        if sign <= 0:
            neg[k] = max(neg[k], amount)
    out[:, 0] -= neg
    out[:, 1] += pos
    return out


def joint_ranges(skeleton: Skeleton | None = None, over_rotation: float = 0.0) -> dict[str, Array]:
    """Per joint name, its Euler-angle range ``[3, 2]`` (rows x, y, z; columns lo, hi; degrees) in
    the built-in skeleton's local frames, right-side joints mirrored.

    With ``over_rotation`` each range grows about its centre by ``1 + over_rotation``. The root gets
    :data:`ROOT_RANGE` (never over-rotated). Raises SkeletonError for a joint the table lacks.
    """
    sk = humanoid_skeleton() if skeleton is None else skeleton
    _check_factor(over_rotation, "over_rotation")
    out: dict[str, Array] = {}
    for j, name in enumerate(sk.names):
        if j == 0:
            out[name] = np.array([[-ROOT_RANGE[a], ROOT_RANGE[a]] for a in _AXES])
            continue
        base, right = _side(name)
        r = _left_range(base)
        if right:
            r[1:] = -r[1:, ::-1]
        c = r.mean(axis=1, keepdims=True)
        out[name] = c + (r - c) * (1.0 + over_rotation)
    return out


def _check_factor(x: float, what: str) -> None:
    if not (isinstance(x, (int, float, np.floating)) and math.isfinite(x) and x >= 0):
        raise JointLimitsError(f"{what} must be a finite number >= 0, got {x!r}")


def _smooth_unit(
    rng: np.random.Generator,
    t: Array,
    shape: tuple[int, ...],
    fmin: float,
    fmax: float,
    sharpness: float = 2.0,
    couple: bool = False,
) -> Array:
    """Smooth curves ``[F, *shape]`` spanning exactly [0, 1]: two sinusoids of incommensurate random
    frequencies per curve, pushed towards the extremes by a tanh so the ends are visited often.

    With ``couple`` the last axis (a joint's three angles) is coupled: the vector of curves is
    shrunk smoothly where it leaves the unit ball, so a joint does not sit at the end of all three
    ranges at once (the corners of the Euler box), while each range alone is still reached."""
    f = rng.uniform(fmin, fmax, shape + (2,))
    ph = rng.uniform(0.0, 2.0 * np.pi, shape + (2,))
    amp = np.stack([np.ones(shape), rng.uniform(0.3, 0.7, shape)], axis=-1)
    s = np.sum(amp * np.sin(2.0 * np.pi * f * t.reshape((-1,) + (1,) * (len(shape) + 1)) + ph), axis=-1)
    u = np.tanh(sharpness * s)
    lo, hi = u.min(axis=0), u.max(axis=0)
    u = (u - lo) / np.where(hi > lo, hi - lo, 1.0)
    if couple:
        w = 2.0 * u - 1.0
        n2 = np.sum(w * w, axis=-1, keepdims=True)
        w = w / (1.0 + n2**8) ** (1.0 / 16.0)  # ~1 inside the unit ball, ~1/|w| outside; smooth
        u = 0.5 * (w + 1.0)
    return u


def range_of_motion(
    skeleton: Skeleton | None = None, seconds: float = 40.0, fps: float = 30, seed: int = 0, over_rotation: float = 0.0
) -> Motion:
    """A smooth procedural range-of-motion clip of the built-in humanoid (or a skeleton with its
    joint names, e.g. another height): every joint sweeps its anatomical Euler ranges
    (:func:`joint_ranges`) along Lissajous-like curves that reach both ends of every range, all
    joints at once, while the root drifts and turns slowly. Ranges are coupled: a joint reaches
    the end of one range while the others are away from their ends (no Euler-box corners).

    ``over_rotation`` widens every range about its centre (0.5 = 50% past the anatomical range) for
    an over-rotated clip. Deterministic for a seed; the Euler angles are kept in
    ``motion.source_euler`` so a BVH round trip is exact.
    """
    sk = humanoid_skeleton() if skeleton is None else skeleton
    if not (math.isfinite(seconds) and seconds > 0 and math.isfinite(fps) and fps > 0):
        raise JointLimitsError(f"seconds and fps must be positive, got {seconds!r}, {fps!r}")
    F = max(2, int(round(seconds * fps)))
    J = sk.num_joints
    ranges = joint_ranges(sk, over_rotation)
    lo = np.stack([ranges[n][:, 0] for n in sk.names])  # [J, 3] about x, y, z
    hi = np.stack([ranges[n][:, 1] for n in sk.names])
    rng = np.random.default_rng(seed)
    t = np.arange(F) / float(fps)
    u = _smooth_unit(rng, t, (J, 3), 0.04, 0.18, couple=True)  # [F, J, 3] in [0, 1]
    xyz = lo + u * (hi - lo)  # [F, J, 3] degrees about x, y, z
    # the root's heading and sway wander more slowly, without reaching for the extremes
    xyz[:, 0] = lo[0] + _smooth_unit(rng, t, (3,), 0.02, 0.08, sharpness=0.7) * (hi[0] - lo[0])

    euler = np.zeros((F, J, 3))
    rotations = quat.identity((F, J))
    for j, name in enumerate(sk.names):
        order = sk.rotation_order(j)
        if not order:
            continue
        if len(order) != 3 or len(set(order)) != 3:
            raise SkeletonError(
                f"joint {name!r}: procedural clips need three distinct rotation channels, got {order!r}"
            )
        euler[:, j] = xyz[:, j, [_AXES.index(a) for a in order]]
    for order in sorted({sk.rotation_order(j) for j in range(J)} - {""}):
        js = [j for j in range(J) if sk.rotation_order(j) == order]
        rotations[:, js] = quat.from_euler_axes(euler[:, js], order, degrees=True)

    positions = np.repeat(sk.offsets[None], F, axis=0)
    height = float(np.ptp(_rest_heights(sk))) or 1.0
    drift = _smooth_unit(rng, t, (3,), 0.02, 0.06, sharpness=0.7) * 2.0 - 1.0  # [F, 3] in [-1, 1]
    root = sk.offsets[0] + drift * np.array([0.15, 0.02, 0.15]) * height
    for k, c in enumerate(POSITION_CHANNELS):
        if c in sk.channels[0]:
            positions[:, 0, k] = root[:, k]
    return Motion(sk, rotations, positions, 1.0 / float(fps), source_euler=(rotations.copy(), euler))


def _rest_heights(sk: Skeleton) -> Array:
    """Rest-pose Y of every joint and End Site (for the body height)."""
    pos = np.zeros((sk.num_joints, 3))
    for j in range(sk.num_joints):
        p = sk.parents[j]
        pos[j] = sk.offsets[j] + (pos[p] if p >= 0 else 0.0)
    ends = [pos[p] + o for p, o in sk.end_sites]
    return np.concatenate([pos[:, 1], np.array([e[1] for e in ends])]) if ends else pos[:, 1]


def over_rotate(motion: Motion, factor: float, seed: int = 0, noise: float = 0.1, include_root: bool = False) -> Motion:
    """An over-rotated copy of ``motion``: per joint, each frame's rotation relative to the clip's
    mean pose is scaled by ``1 + factor`` in scaled-angle-axis space, plus smooth noise of about
    ``noise * factor`` radians (so ``factor=0`` returns the same rotations).

    Positions are kept; the root is left alone unless ``include_root``.
    """
    _check_factor(factor, "factor")
    _check_factor(noise, "noise")
    if motion.num_frames == 0:
        return motion.copy()
    motion.check_finite()
    q = quat.normalize(motion.rotations)
    F, J = q.shape[:2]
    mean = quat.average(q, axis=0)  # [J, 4]
    rel = quat.unroll(quat.inv_mul(mean[None], q), axis=0)
    v = quat.to_scaled_angle_axis(rel)
    rng = np.random.default_rng(seed)
    t = cast(NDArray[np.float64], np.arange(F) * motion.frame_time)
    wobble = _smooth_unit(rng, t, (J, 3), 0.1, 0.5) * 2.0 - 1.0 if F > 1 else np.zeros((F, J, 3))
    v2 = v * (1.0 + factor) + wobble * (noise * factor)
    out = quat.mul(mean[None], quat.from_scaled_angle_axis(v2))
    out = np.where((np.sum(out * motion.rotations, axis=-1) < 0)[..., None], -out, out)
    if not include_root:
        out[:, 0] = motion.rotations[:, 0]
    return motion.with_rotations(out)


def describe_ranges(ranges: Mapping[str, Array] | None = None) -> str:
    """A readable table of :func:`joint_ranges` (degrees), one joint a line."""
    r = joint_ranges() if ranges is None else ranges
    lines = [f"{'joint':<14} {'x':>16} {'y':>16} {'z':>16}"]
    for name, v in r.items():
        lines.append(f"{name:<14}" + "".join(f" {v[k, 0]:>7.1f}..{v[k, 1]:<7.1f}" for k in range(3)))
    return "\n".join(lines)

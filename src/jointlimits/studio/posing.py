"""The studio's pose logic, free of any GUI: gizmo rotation in, limited pose out; IK modes.

A pose is one frame: local rotations ``[J, 4]`` (w, x, y, z) and local positions ``[J, 3]`` in the
clip's units. Limits are a :class:`~jointlimits.limits.model.JointLimits`; "limits off" means every joint
is free. The IK modes live in one list, :data:`IK_MODES`: a mode says which joints of a skeleton
it drives (``resolve``) and how it solves for a target (``solve``); adding a solver is one entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..motion import quat
from ..motion.naming import find_role, side_of
from ..motion.skeleton import Skeleton, forward_kinematics_arrays

__all__ = [
    "Soften",
    "pose_fk",
    "local_from_global",
    "chain_limits",
    "limit_joint",
    "limit_pose",
    "IKChain",
    "IKMode",
    "IK_MODES",
    "ik_mode",
    "available_ik_modes",
    "side_of",
]

Array = NDArray[np.float64]
Soften = tuple[float, float] | None  # (falloff, radius) of JointLimits.project, or None (hard)


# --------------------------------------------------------------------------- joints and limits


def pose_fk(skeleton: Skeleton, rotations: Array, positions: Array) -> tuple[Array, Array]:
    """Global rotations ``[J, 4]`` and positions ``[J, 3]`` of one pose."""
    gr, gp = forward_kinematics_arrays(rotations[None], positions[None], skeleton.parents)
    return gr[0], gp[0]


def local_from_global(
    skeleton: Skeleton, rotations: Array, positions: Array, joint: int, global_rotation: Array
) -> Array:
    """The local rotation of ``joint`` that gives it ``global_rotation`` under its parent's
    current global rotation (from ``rotations``/``positions``)."""
    p = int(skeleton.parents[joint])
    q = quat.normalize(np.asarray(global_rotation, np.float64).reshape(4))
    if p < 0:
        return q
    gr, _ = pose_fk(skeleton, rotations, positions)
    return quat.normalize(quat.inv_mul(gr[p], q))


def limit_joint(limits: Any, joint: int, rotation: Array, soften: Soften = None) -> Array:
    """One joint's rotation(s) ``[..., 4]`` projected into its limit (unchanged if it has no
    active limit or ``limits`` is None)."""
    if limits is None or joint not in limits.joints or not limits.enabled[joint]:
        return np.asarray(rotation, np.float64)
    from ..limits.model import FittedLimit

    lim = limits.joints[joint]
    return lim.project(rotation, soften) if isinstance(lim, FittedLimit) else lim.project(rotation)


def limit_pose(limits: Any, rotations: Array, soften: Soften = None) -> Array:
    """A whole pose ``[J, 4]`` projected into the limits (a copy; unchanged if ``limits`` is None)."""
    if limits is None:
        return np.array(rotations, np.float64)
    return limits.project(np.asarray(rotations, np.float64)[None], soften)[0]


def chain_limits(limits: Any, joints: Sequence[int]) -> list[Any] | None:
    """Per chain joint its active limit object or None (None for all when ``limits`` is None)."""
    if limits is None:
        return None
    return [limits.joints[j] if (j in limits.joints and limits.enabled[j]) else None for j in joints]


# --------------------------------------------------------------------------- joint finding


def _find(skeleton: Skeleton, role: str, side: str = "") -> int | None:
    """The shallowest joint of ``role`` on ``side`` (not a finger, toe or end marker), or None."""
    depth = skeleton.depth()
    hits = find_role(skeleton, role, exclude=("end", "finger", "toe"), side=side)
    return min(hits, key=lambda j: (depth[j], j)) if hits else None


def _ancestors(skeleton: Skeleton, j: int, n: int) -> list[int] | None:
    out = [j]
    for _ in range(n):
        p = int(skeleton.parents[out[0]])
        if p < 0:
            return None
        out.insert(0, p)
    return out


# --------------------------------------------------------------------------- IK modes


@dataclass(frozen=True)
class IKChain:
    """What an IK mode drives on one skeleton: the joints it rotates (base first), the effector
    joint that follows the target, and for look-at the head's local forward axis."""

    joints: tuple[int, ...]
    effector: int
    forward: tuple[float, float, float] = (0.0, 0.0, 1.0)


SolveFn = Callable[[Skeleton, IKChain, Array, Array, Array, "Array | None", Any, float], Array]


@dataclass(frozen=True)
class IKMode:
    """One entry of the IK menu.

    ``resolve(skeleton)`` gives the :class:`IKChain` or None when the skeleton lacks the joints.
    ``solve(skeleton, chain, rotations [J,4], positions [J,3], target [3], pole [3] | None,
    limits (JointLimits or None), tolerance)`` returns new local rotations ``[J, 4]``.
    """

    key: str
    label: str
    resolve: Callable[[Skeleton], IKChain | None]
    solve: SolveFn
    uses_pole: bool = False
    notes: str = field(default="", compare=False)


def _two_bone_chain(kind: str, side: str) -> Callable[[Skeleton], IKChain | None]:
    def resolve(sk: Skeleton) -> IKChain | None:
        if kind == "hand":
            end = _find(sk, "hand", side)
        else:
            from ..cleanup.contacts import find_feet

            feet = [j for j in find_feet(sk) if side_of(sk.names[j]) == side]
            end = feet[0] if feet else None
        if end is None:
            return None
        ch = _ancestors(sk, end, 2)
        return None if ch is None else IKChain(tuple(ch[:2]), ch[2])

    return resolve


def _ccd_arm(side: str) -> Callable[[Skeleton], IKChain | None]:
    def resolve(sk: Skeleton) -> IKChain | None:
        end = _find(sk, "hand", side)
        ch = None if end is None else _ancestors(sk, end, 3)
        return None if ch is None else IKChain(tuple(ch[:3]), ch[3])

    return resolve


def _spine_to_head(sk: Skeleton) -> IKChain | None:
    head = _find(sk, "head", "")
    if head is None:
        return None
    path = [head]
    while sk.parents[path[0]] >= 0:
        path.insert(0, int(sk.parents[path[0]]))
    joints = path[1:]  # not the root: look-at turns the spine, neck and head
    return IKChain(tuple(joints), head) if len(joints) >= 1 else None


def _ccd_refine(
    sk: Skeleton,
    joints: Sequence[int],
    end: int,
    rot: Array,
    pos: Array,
    target: Array,
    lims: list[Any] | None,
    tolerance: float,
    iterations: int = 40,
) -> Array:
    from ..ik import ccd

    p = int(sk.parents[joints[0]])
    if p >= 0:
        gr, gp = pose_fk(sk, rot, pos)
        br, bp = gr[p], gp[p]
    else:
        br, bp = quat.identity(()), np.zeros(3)
    res = ccd(
        br[None],
        bp[None],
        pos[list(joints) + [end]],
        np.asarray(target, np.float64)[None],
        rot[list(joints)][None],
        lims,
        tolerance=tolerance,
        max_iterations=iterations,
        max_restarts=0,
    )
    out = rot.copy()
    out[list(joints)] = res.rotations[0]
    return out


def _solve_two_bone(
    sk: Skeleton,
    chain: IKChain,
    rot: Array,
    pos: Array,
    target: Array,
    pole: Array | None,
    limits: Any,
    tolerance: float,
) -> Array:
    """Closed-form two-bone solve (pole optional); with limits, the two joints are projected into
    them and, where that pulls the end off the target, CCD inside the limits takes it closer."""
    from ..ik import two_bone

    a, b = chain.joints
    c = chain.effector
    gr, gp = pose_fk(sk, rot, pos)
    p = int(sk.parents[a])
    P = gr[p] if p >= 0 else quat.identity(())
    sol = two_bone(gp[a], gp[b], gp[c], target, P, rot[a], rot[b], pole)
    out = rot.copy()
    out[a], out[b] = sol.root_local, sol.mid_local
    lims = chain_limits(limits, (a, b))
    if lims is None or all(x is None for x in lims):
        return out
    for k, j in enumerate((a, b)):
        if lims[k] is not None:
            out[j] = limit_joint(limits, j, out[j])
    _, gp2 = pose_fk(sk, out, pos)
    err = np.linalg.norm(gp2[c] - target)
    if err > tolerance:  # the projection pulled the end off the target: CCD inside the limits
        refined = _ccd_refine(sk, (a, b), c, out, pos, target, lims, tolerance)
        if np.linalg.norm(pose_fk(sk, refined, pos)[1][c] - target) < err:
            out = refined
    return out


def _solve_ccd(
    sk: Skeleton,
    chain: IKChain,
    rot: Array,
    pos: Array,
    target: Array,
    pole: Array | None,
    limits: Any,
    tolerance: float,
) -> Array:
    """CCD over the chain, each step projected into the joint's limit (free without limits)."""
    return _ccd_refine(
        sk, chain.joints, chain.effector, rot, pos, target, chain_limits(limits, chain.joints), tolerance, iterations=60
    )


def _solve_look_at(
    sk: Skeleton,
    chain: IKChain,
    rot: Array,
    pos: Array,
    target: Array,
    pole: Array | None,
    limits: Any,
    tolerance: float,
) -> Array:
    """Look-at over spine to head: lower joints used up to their limits before higher ones."""
    from ..ik import look_at_chain

    lims = chain_limits(limits, chain.joints)
    new = look_at_chain(
        (rot[None], pos[None], sk),
        list(chain.joints),
        np.asarray(target, np.float64),
        forward=chain.forward,
        limits=lims,
    )
    return np.asarray(new)[0]


def _whole_body(side: str) -> Callable[[Skeleton], IKChain | None]:
    def resolve(sk: Skeleton) -> IKChain | None:
        end = _find(sk, "hand", side)
        return None if end is None else IKChain(tuple(range(sk.num_joints)), end)

    return resolve


def _solve_whole_body(
    sk: Skeleton,
    chain: IKChain,
    rot: Array,
    pos: Array,
    target: Array,
    pole: Array | None,
    limits: Any,
    tolerance: float,
) -> Array:
    """Whole-body damped least squares: the hand follows the target while the other hand, the
    feet and the head keep their places and the hips stay put; every joint inside the limits."""
    from ..cleanup.contacts import find_feet
    from ..ik import WholeBodyIK

    _, gp = pose_fk(sk, rot, pos)
    held = set(find_feet(sk))
    for role, where in (("hand", "left"), ("hand", "right"), ("head", "")):
        j = _find(sk, role, where)
        if j is not None:
            held.add(j)
    held.discard(chain.effector)
    targets = {sk.names[j]: gp[j] for j in sorted(held)}
    targets[sk.names[chain.effector]] = np.asarray(target, np.float64)
    ik = WholeBodyIK(
        sk, limits, local_positions=pos, posture_weight=1e-5, iterations=30, fix_root_position=True, clamp_passes=3
    )
    res = ik.solve(
        targets, {sk.names[chain.effector]: 4.0}, init=rot[None], root_positions=pos[None, 0], posture=rot[None]
    )
    return np.asarray(res.rotations[0])


#: The IK menu, in display order; a solver is one entry.
IK_MODES: list[IKMode] = [
    IKMode("left-arm", "Left arm (two-bone + pole)", _two_bone_chain("hand", "left"), _solve_two_bone, True),
    IKMode("right-arm", "Right arm (two-bone + pole)", _two_bone_chain("hand", "right"), _solve_two_bone, True),
    IKMode("left-leg", "Left leg (two-bone + pole)", _two_bone_chain("foot", "left"), _solve_two_bone, True),
    IKMode("right-leg", "Right leg (two-bone + pole)", _two_bone_chain("foot", "right"), _solve_two_bone, True),
    IKMode("left-arm-ccd", "Left arm from clavicle (CCD)", _ccd_arm("left"), _solve_ccd),
    IKMode("right-arm-ccd", "Right arm from clavicle (CCD)", _ccd_arm("right"), _solve_ccd),
    IKMode("look-at", "Look-at (spine to head)", _spine_to_head, _solve_look_at),
    IKMode("left-hand-body", "Left hand, whole body (DLS)", _whole_body("left"), _solve_whole_body),
    IKMode("right-hand-body", "Right hand, whole body (DLS)", _whole_body("right"), _solve_whole_body),
]


def ik_mode(key: str) -> IKMode:
    for m in IK_MODES:
        if m.key == key:
            return m
    raise KeyError(f"no IK mode {key!r}; modes are {', '.join(m.key for m in IK_MODES)}")


def available_ik_modes(skeleton: Skeleton) -> dict[str, IKChain]:
    """The modes this skeleton supports, key -> chain (in menu order)."""
    out = {}
    for m in IK_MODES:
        ch = m.resolve(skeleton)
        if ch is not None:
            out[m.key] = ch
    return out

"""Retargeting a clip onto an exported MJCF humanoid with mink, under no limits, the MJCF's boxes
or :class:`FittedLimits`, and the runs the example and the benchmark compare."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._optional import require
from ...limits.model import JointLimits
from ...motion import quat
from ...motion.skeleton import Motion, Skeleton, forward_kinematics
from ...motion.units import guess_up_axis, up_vector
from ._limit import FittedLimits, _body_id, local_rotations
from ._rows import Array, IntegrationError

mink = require("mink", "mink", "the mink integration")
mujoco = require("mujoco", "mink", "the mink integration")


# --------------------------------------------------------------------------- retargeting


@dataclass
class RetargetSettings:
    """Tasks and weights of :func:`retarget` (costs as mink's FrameTask costs)."""

    root_cost: float = 1.0
    end_effector_cost: float = 1.0
    end_effector_orientation_cost: float = 0.1
    joint_cost: float = 0.3
    posture_cost: float = 1e-3
    damping: float = 1e-3
    iterations: int = 3
    first_iterations: int = 30
    settle: int = 5  # extra solves, each with FittedLimits' curvature step bound, while a joint is outside
    active_iterations: int = 0  # extra solves while a FittedLimits row is within ACTIVE_BAND of its margin
    solver: str = "daqp"
    end_effectors: tuple[str, ...] = ("Head", "LeftHand", "RightHand", "LeftFoot", "RightFoot", "LeftToe", "RightToe")


@dataclass
class RetargetResult:
    """Solved qpos ``[F, nq]``, the motion on the model's skeleton, the targets ``[F, B, 3]``
    (world, metres) of the tracked bodies and the solve's CPU seconds."""

    qpos: Array
    motion: Motion
    bodies: list[str]
    targets: Array
    end_effectors: list[int]
    seconds: float


def _world_frame(source: Motion, model: Any) -> tuple[Array, float]:
    """(up rotation to MuJoCo's z-up, metres per file unit) from the source clip and the model's
    bone lengths (the median ratio over bones, so another subject's clip scales to the body)."""
    up_quat = quat.between(up_vector(guess_up_axis(source)), np.array([0.0, 0.0, 1.0]))
    sk = source.skeleton
    ratios = []
    for j in range(1, sk.num_joints):
        b = _body_id(model, sk.names[j])
        n = float(np.linalg.norm(sk.offsets[j]))
        if b >= 0 and n > 1e-9:
            ratios.append(float(np.linalg.norm(model.body_pos[b])) / n)
    if not ratios:
        raise IntegrationError("the clip's joints have no bodies of the same names in the MJCF model")
    return up_quat, float(np.median(ratios))


#: a FittedLimits row within this of its margin band counts as binding (radians)
ACTIVE_BAND = 0.01


def retarget(
    source: Motion,
    model: Any,
    skeleton: Skeleton,
    limits: Sequence[Any] = (),
    settings: RetargetSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RetargetResult:
    """Retarget ``source`` onto the MJCF ``model`` (bodies named as ``skeleton``'s joints) with mink:
    per frame a root frame task (position and orientation), end-effector frame tasks, position
    tasks on every other joint and a light posture task, solved ``iterations`` times (warm start
    from the previous frame) under ``limits`` (mink limits, e.g. :class:`FittedLimits` or
    ``mink.ConfigurationLimit``). With :class:`FittedLimits`, a frame that ends outside gets up to
    ``settle`` more solves under the curvature step bound, and one where a row binds (within
    :data:`ACTIVE_BAND` of its margin) ``active_iterations`` more (a binding row slows the solves'
    convergence; 0 by default, so that every run gets the same solves). The result's motion is on
    ``skeleton`` with the source's units."""
    st = settings or RetargetSettings()
    import time

    up_quat, mpu = _world_frame(source, model)
    gr, gp = forward_kinematics(source)
    names = [n for n in source.skeleton.names if _body_id(model, n) >= 0]
    if source.skeleton.names[0] not in names:
        raise IntegrationError(f"the MJCF model has no body {source.skeleton.names[0]!r} for the clip's root")
    src_idx = [source.skeleton.index(n) for n in names]
    targets = quat.mul_vec(up_quat, gp[:, src_idx] * mpu)
    target_rot = quat.mul(up_quat, gr[:, src_idx])
    ee = [k for k, n in enumerate(names) if n in st.end_effectors]
    config = mink.Configuration(model)
    tasks: list[Any] = []
    frame_tasks = []
    for k, n in enumerate(names):
        if k == 0:
            t = mink.FrameTask(n, "body", position_cost=st.root_cost, orientation_cost=st.root_cost)
        elif k in ee:
            t = mink.FrameTask(
                n, "body", position_cost=st.end_effector_cost, orientation_cost=st.end_effector_orientation_cost
            )
        else:
            t = mink.FrameTask(n, "body", position_cost=st.joint_cost, orientation_cost=0.0)
        frame_tasks.append(t)
    tasks += frame_tasks
    posture = mink.PostureTask(model, cost=st.posture_cost)
    tasks.append(posture)
    F = source.num_frames
    qpos = np.empty((F, model.nq))
    q = model.qpos0.copy()
    free = [k for k in range(model.njnt) if model.jnt_type[k] == mujoco.mjtJoint.mjJNT_FREE]
    if free:
        a = int(model.jnt_qposadr[free[0]])
        q[a : a + 3] = targets[0, 0]
        q[a + 3 : a + 7] = target_rot[0, 0]
    config.update(q)
    lim = list(limits)
    fitted = [x for x in lim if isinstance(x, FittedLimits)]
    t0 = time.process_time()
    for f in range(F):
        for k, t in enumerate(frame_tasks):
            t.set_target(mink.SE3.from_rotation_and_translation(mink.SO3(target_rot[f, k]), targets[f, k]))
        posture.set_target(config.q)
        for _ in range(st.first_iterations if f == 0 else st.iterations):
            vel = mink.solve_ik(config, tasks, 1.0, st.solver, damping=st.damping, limits=lim)
            config.integrate_inplace(vel, 1.0)
        # binding rows slow the solves' convergence: optionally spend more solves on those frames
        for _ in range(st.active_iterations if f else 0):
            if not fitted or max(fl.largest_row(config) + fl.margin for fl in fitted) < -ACTIVE_BAND:
                break
            vel = mink.solve_ik(config, tasks, 1.0, st.solver, damping=st.damping, limits=lim)
            config.integrate_inplace(vel, 1.0)
        # a long last step may end a little past a curved face: settle with the curvature bound
        for _ in range(st.settle):
            if not any(fl.outside(config) for fl in fitted):
                break
            for fl in fitted:
                fl.safe = True
            vel = mink.solve_ik(config, tasks, 1.0, st.solver, damping=st.damping, limits=lim)
            config.integrate_inplace(vel, 1.0)
            for fl in fitted:
                fl.safe = False
        qpos[f] = config.q
        if progress is not None:
            progress(f + 1, F)
    seconds = time.process_time() - t0
    motion = qpos_to_motion(model, qpos, skeleton, up_quat, mpu, source.frame_time)
    return RetargetResult(qpos, motion, names, targets, ee, seconds)


def qpos_to_motion(
    model: Any, qpos: Array, skeleton: Skeleton, up_quat: Array, mpu: float, frame_time: float
) -> Motion:
    """The motion on ``skeleton`` (file units, the file's up axis) of qpos ``[F, nq]``."""
    rot = local_rotations(model, qpos, skeleton)
    rot[:, 0] = quat.inv_mul(up_quat, rot[:, 0])
    pos = np.repeat(skeleton.offsets[None], len(qpos), axis=0).astype(np.float64)
    free = [k for k in range(model.njnt) if model.jnt_type[k] == mujoco.mjtJoint.mjJNT_FREE]
    if free:
        a = int(model.jnt_qposadr[free[0]])
        pos[:, 0] = quat.inv_mul_vec(up_quat, qpos[:, a : a + 3]) / mpu
    return Motion(skeleton, rot, pos, frame_time)


def tracking_errors(model: Any, result: RetargetResult) -> tuple[float, float]:
    """Mean end-effector and mean joint position errors (metres) of a retargeted result against
    its targets (forward kinematics of the solved qpos)."""
    data = mujoco.MjData(model)
    ids = [_body_id(model, n) for n in result.bodies]
    pos = np.empty(result.targets.shape)
    for f, q in enumerate(result.qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        pos[f] = data.xpos[ids]
    err = np.linalg.norm(pos - result.targets, axis=-1)
    ee = result.end_effectors
    others = [k for k in range(len(ids)) if k not in ee and k != 0]
    return float(err[:, ee].mean()) if ee else 0.0, float(err[:, others].mean()) if others else 0.0


def load_model(path: str | Any) -> Any:
    """The ``mujoco.MjModel`` of an MJCF file (IntegrationError, one line, if MuJoCo rejects it)."""
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise IntegrationError(f"{path}: not an MJCF model MuJoCo loads ({str(e).splitlines()[0]})") from None


@dataclass
class Run:
    """One retargeting run: the model, the result, joint-frames outside the fitted limits, mean
    end-effector and joint-position errors (metres) and frames per CPU second."""

    model: Any
    result: RetargetResult
    outside: int
    ee_error: float
    joint_error: float
    fps: float


#: the three runs of the example and the benchmark
RUNS = ("none", "box", "fitted")


#: retargeting's margin (radians) and step bound: a fast clip's first solve of a frame turns a joint
#: by more than 0.2 rad per axis (a 0.2 rad bound bit there and lagged: dance1_subject2's joint error
#: 1.55 mm against 1.28 mm with 0.5), so 0.5 rad, which still stops multi-radian jumps across a
#: face; what a long step leaves outside, the settling solves under the curvature bound take back
RETARGET_MARGIN = 0.005
RETARGET_MAX_STEP = 0.5


def make_limits(
    model: Any,
    mode: str,
    limits: JointLimits,
    margin: float = RETARGET_MARGIN,
    gain: float = 0.95,
    max_step: float | None = RETARGET_MAX_STEP,
) -> list[Any]:
    """The mink limits of a run: ``none``, ``box`` (mink's ConfigurationLimit from the MJCF's
    ranges) or ``fitted`` (:class:`FittedLimits`; ``max_step`` None: the curvature bound)."""
    if mode == "none":
        return []
    if mode == "box":
        return [mink.ConfigurationLimit(model, gain=gain)]
    if mode == "fitted":
        return [FittedLimits(model, limits, gain=gain, min_distance_from_limits=margin, max_step=max_step)]
    raise IntegrationError(f"unknown limits mode {mode!r}; expected one of {', '.join(RUNS)}")


def run_one(
    source: Motion,
    model: Any,
    limits: JointLimits,
    mode: str,
    settings: RetargetSettings | None = None,
    margin: float = RETARGET_MARGIN,
) -> Run:
    """Retarget ``source`` under one kind of limits and measure it against the fitted limits."""
    res = retarget(source, model, limits.skeleton, make_limits(model, mode, limits, margin), settings)
    outside = int((~limits.contains(res.motion.rotations)).sum())
    ee, jp = tracking_errors(model, res)
    return Run(model, res, outside, ee, jp, source.num_frames / max(res.seconds, 1e-9))


def run_three(
    source: Motion, mjcf: str | Any, limits: JointLimits, settings: RetargetSettings | None = None
) -> dict[str, Run]:
    """The three runs (:data:`RUNS`) with the same tasks and weights."""
    model = load_model(mjcf)
    return {mode: run_one(source, model, limits, mode, settings) for mode in RUNS}

"""MuJoCo: three hinges per limited joint in the fitted frame, and a whole MJCF body.

Conventions (MuJoCo XML reference and computation chapter):

- Joints of one body act in the order they are written, each about its ``axis`` given in the
  body's frame, composing on the right: the body's rotation relative to its parent is
  ``quat * R(axis_1, qpos_1) * R(axis_2, qpos_2) * R(axis_3, qpos_3)``. With the body's ``quat``
  set to the joint's centre ``c`` and the hinges about the fitted frame's y, z and x axes (in
  that order), a local rotation ``q`` has the hinge angles of the intrinsic y-z-x Euler angles of
  ``r = B^-1 c^-1 q B`` (:func:`jointlimits.export.swingtwist.hinge_angles`).
- ``range`` is in radians here (``<compiler angle="radian"/>``; the default is degrees) and a
  hinge is limited when ``limited="true"``; MuJoCo's own limit test is ``range[0] <= qpos <=
  range[1]``, enforced softly (a small penetration under load is expected).
- Geoms: capsules ``fromto`` the body's origin to each child's origin (and End Sites), metres;
  body geoms collide with the floor only (contype 1, conaffinity 0), not with each other.
https://mujoco.readthedocs.io/en/stable/XMLreference.html#body-joint
https://mujoco.readthedocs.io/en/stable/XMLreference.html#compiler
https://mujoco.readthedocs.io/en/stable/computation/index.html
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from ..motion import quat
from .base import Engine, JointInfo, frames_block, vec
from .swingtwist import BallCone, HingeBox, cover_ball, cover_hinges, hinge_angles

HINGES = (("y", 1), ("z", 2), ("twist", 0))  # (suffix, basis column) in qpos order


class MuJoCo(Engine):
    name = "mujoco"
    docs = (
        "https://mujoco.readthedocs.io/en/stable/XMLreference.html#body-joint",
        "https://mujoco.readthedocs.io/en/stable/computation/index.html",
    )
    conventions = (
        "three hinges per joint about the fitted frame's y, z, x (in that order, body quat = centre), "
        "range [lo, hi] radians (compiler angle='radian'); metres"
    )

    def cover(self, r) -> HingeBox:
        return cover_hinges(r)

    def parameters(self, limit: HingeBox, joint: JointInfo) -> dict:
        ax = quat.to_matrix(joint.frame.child)
        return {
            "type": "hinge x3",
            "body_quat": vec(joint.frame.centre),
            "hinges": [
                {
                    "name": f"{joint.name}_{suffix}",
                    "axis": vec(ax[:, col]),
                    "range": [float(limit.lo[k]), float(limit.hi[k])],
                }
                for k, (suffix, col) in enumerate(HINGES)
            ],
            "axes": frames_block(joint),
        }


class MuJoCoBall(Engine):
    """MuJoCo ball joint with a limited rotation angle: ``range="0 angle"`` (radians); MuJoCo
    limits the angle of the joint's quaternion, here taken from the body's ``quat`` = the centre.
    https://mujoco.readthedocs.io/en/stable/XMLreference.html#body-joint"""

    name = "mujoco-ball"
    docs = ("https://mujoco.readthedocs.io/en/stable/XMLreference.html#body-joint",)
    conventions = "one ball joint per joint, body quat = centre, range [0, angle] radians (rotation angle); metres"

    def cover(self, r) -> BallCone:
        return cover_ball(r)

    def parameters(self, limit: BallCone, joint: JointInfo) -> dict:
        return {
            "type": "ball",
            "body_quat": vec(joint.frame.centre),
            "ball": {"name": f"{joint.name}_ball", "range": [0.0, float(limit.angle)]},
            "axes": frames_block(joint),
        }


def _f(x: Any) -> str:
    return " ".join(f"{float(v):.9g}" for v in np.asarray(x, np.float64).reshape(-1))


def _capsule_radius(length: float) -> float:
    return float(np.clip(0.12 * length, 0.015, 0.055))


def write_mjcf(
    skeleton,
    metres_per_unit: float,
    up_quat,
    root_height: float,
    body_quats: dict[int, Any],
    hinge_joints: dict[int, dict],
    model_name: str = "jointlimits",
) -> str:
    """An MJCF model of the skeleton: a free root, three limited hinges for each joint in
    ``hinge_joints`` (its :meth:`MuJoCo.parameters`), a free ball for other rotating joints,
    capsules along the bones and a floor. ``body_quats[j]`` is body j's rest rotation relative to
    its parent (the root's relative to the skeleton's own frame, which ``up_quat`` turns z-up)."""
    sk = skeleton
    children: dict[int, list[int]] = {j: [] for j in range(sk.num_joints)}
    for j in range(1, sk.num_joints):
        children[int(sk.parents[j])].append(j)
    ends: dict[int, list] = {j: [] for j in range(sk.num_joints)}
    for p, o in sk.end_sites:
        ends[int(p)].append(o)
    out = [
        f"<mujoco model={quoteattr(model_name)}>",
        '  <compiler angle="radian" autolimits="true"/>',
        '  <option timestep="0.002" gravity="0 0 -9.81"/>',
        "  <default>",
        '    <joint damping="0.5" armature="0.01" solreflimit="0.01 1"/>',
        '    <geom contype="1" conaffinity="0" condim="3" friction="0.9 0.005 0.0001" rgba="0.8 0.6 0.45 1"/>',
        "  </default>",
        "  <worldbody>",
        '    <light pos="0 0 4" dir="0 0 -1"/>',
        '    <geom name="floor" type="plane" size="20 20 0.1" contype="1" conaffinity="1" rgba="0.3 0.3 0.35 1"/>',
    ]

    def body(j: int, depth: int) -> None:
        pad = "  " * depth
        name = sk.names[j]
        if j == 0:
            q = quat.mul(up_quat, body_quats.get(0, np.array([1.0, 0, 0, 0])))
            pos = np.array([0.0, 0.0, root_height])
        else:
            q = body_quats.get(j, np.array([1.0, 0, 0, 0]))
            pos = sk.offsets[j] * metres_per_unit
        out.append(f'{pad}<body name={quoteattr(name)} pos="{_f(pos)}" quat="{_f(quat.normalize(q))}">')
        if j == 0:
            out.append(f"{pad}  <freejoint name={quoteattr(name + '_free')}/>")
        elif j in hinge_joints and "ball" in hinge_joints[j]:
            b = hinge_joints[j]["ball"]
            out.append(
                f'{pad}  <joint name={quoteattr(b["name"])} type="ball" limited="true" range="0 {b["range"][1]!r}"/>'
            )
        elif j in hinge_joints:
            for h in hinge_joints[j]["hinges"]:
                out.append(
                    f'{pad}  <joint name={quoteattr(h["name"])} type="hinge" axis="{_f(h["axis"])}" '
                    f'limited="true" range="{h["range"][0]!r} {h["range"][1]!r}"/>'
                )
        elif sk.rotation_order(j):
            out.append(f'{pad}  <joint name={quoteattr(name + "_ball")} type="ball"/>')
        tips = [sk.offsets[c] for c in children[j]] + list(ends[j])
        n_geoms = 0
        for k, t in enumerate(tips):
            t = np.asarray(t) * metres_per_unit
            length = float(np.linalg.norm(t))
            if length < 1e-3:
                continue
            out.append(
                f'{pad}  <geom name={quoteattr(f"{name}_bone{k}")} type="capsule" '
                f'fromto="0 0 0 {_f(t)}" size="{_capsule_radius(length):.4g}"/>'
            )
            n_geoms += 1
        if n_geoms == 0:
            out.append(f'{pad}  <geom name={quoteattr(name + "_tip")} type="sphere" size="0.02"/>')
        for c in children[j]:
            body(c, depth + 1)
        out.append(f"{pad}</body>")

    body(0, 2)
    out += ["  </worldbody>", "</mujoco>", ""]
    return "\n".join(out)


def qpos_from_rotations(
    model,
    skeleton,
    rotations,
    root_positions,
    metres_per_unit: float,
    up_quat,
    root_height_offset,
    body_quats: dict[int, Any],
    frames: dict[int, Any],
) -> np.ndarray:
    """qpos ``[F, nq]`` of a loaded ``mujoco.MjModel`` for local rotations ``[F, J, 4]`` and root
    positions ``[F, 3]`` (file units): the free root (z-up, metres), the hinge angles of each
    limited joint (:func:`hinge_angles` in its fitted frame) and the balls of the others."""
    import mujoco

    q = np.asarray(rotations, np.float64)
    F = q.shape[0]
    out = np.tile(model.qpos0, (F, 1))
    sk = skeleton

    def adr(name: str) -> int | None:
        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        return None if i < 0 else int(model.jnt_qposadr[i])

    a = adr(sk.names[0] + "_free")
    if a is not None:
        out[:, a : a + 3] = quat.mul_vec(up_quat, np.asarray(root_positions) * metres_per_unit) + root_height_offset
        out[:, a + 3 : a + 7] = quat.mul(up_quat, q[:, 0])
    for j in range(1, sk.num_joints):
        name = sk.names[j]
        if j in frames and adr(f"{name}_{HINGES[0][0]}") is not None:
            e = hinge_angles(frames[j].to_engine(q[:, j]))
            for k, (suffix, _col) in enumerate(HINGES):
                b = adr(f"{name}_{suffix}")
                if b is not None:
                    out[:, b] = e[:, k]
        else:
            b = adr(name + "_ball")
            if b is not None:
                ref = body_quats.get(j, np.array([1.0, 0, 0, 0]))
                out[:, b : b + 4] = quat.abs(quat.inv_mul(ref, q[:, j]))
    return out

"""OpenUSD physics (``UsdPhysics``): an articulation of rigid bodies joined by limited joints.

Two engines, one stage layout:

- ``usd``: a generic ``PhysicsJoint`` (a D6) per joint with ``PhysicsLimitAPI`` instances per
  axis: ``rotX`` the twist range ``[low, high]``, ``rotY`` / ``rotZ`` the swing half-angles
  (symmetric), ``transX/Y/Z`` locked (``low > high``); degrees. PhysX (Omniverse, Isaac Sim)
  turns symmetric ``rotY`` / ``rotZ`` limits into its D6 swing cone, so the limit test is PhysX's
  (tan-quarter swing angles against the ellipse, the ``"tanq"`` metric), with the twist pair.
- ``usd-spherical``: a ``PhysicsSphericalJoint`` per joint, ``physics:axis = "X"`` (the twist
  axis along the bone), ``coneAngle0Limit`` the cone from X toward Y (a swing about z) and
  ``coneAngle1Limit`` from X toward Z (a swing about y), degrees. A spherical joint does not limit
  the twist: the report measures the cone alone, and its conservative variant (inside the fitted
  limit for every twist) shrinks the cone to almost nothing.

Conventions (https://openusd.org/release/api/usd_physics_page_front.html and the schema pages of
``UsdPhysicsJoint``, ``UsdPhysicsLimitAPI``, ``UsdPhysicsSphericalJoint``):
``physics:localPos0`` / ``localRot0`` is the joint frame in ``body0``'s (the parent's) space,
``localPos1`` / ``localRot1`` in ``body1``'s (the child's); ``GfQuatf`` is (real, i, j, k).
:func:`articulation_stage` writes one ``Xform`` rigid body per skeleton joint at its world pose in
the centre pose (metres, Z up, flat under ``/Root``: rigid bodies do not nest), the root with
``PhysicsArticulationRootAPI``, every exported joint with its limit and every other rotating joint
as a free spherical joint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..io.usd import _identifier
from .base import JointInfo, SwingTwistEngine, frames_block, vec
from .swingtwist import SwingTwistLimit

#: the default prim of the physics stage
ROOT = "/Root"


class UsdD6(SwingTwistEngine):
    name = "usd"
    docs = (
        "https://openusd.org/release/api/usd_physics_page_front.html",
        "https://openusd.org/release/api/class_usd_physics_limit_a_p_i.html",
    )
    conventions = (
        "UsdPhysics joint with PhysicsLimitAPI: rotX = twist [low, high], rotY / rotZ = swing "
        "half-angles (symmetric, PhysX's D6 cone, tan-quarter test), transX/Y/Z locked; degrees; metres, Z up"
    )
    metric = "tanq"
    max_swing = math.pi - 1e-3
    max_twist = math.pi

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        return {
            "type": "PhysicsJoint",
            "physics:localPos0": vec(joint.offset_m),
            "physics:localRot0": vec(joint.frame.parent),
            "physics:localPos1": [0.0, 0.0, 0.0],
            "physics:localRot1": vec(joint.frame.child),
            "limit:rotX": {"low": math.degrees(limit.twist_lo), "high": math.degrees(limit.twist_hi)},
            "limit:rotY": {"low": -math.degrees(limit.swing_y), "high": math.degrees(limit.swing_y)},
            "limit:rotZ": {"low": -math.degrees(limit.swing_z), "high": math.degrees(limit.swing_z)},
            "limit:transX": {"low": 1.0, "high": -1.0},
            "limit:transY": {"low": 1.0, "high": -1.0},
            "limit:transZ": {"low": 1.0, "high": -1.0},
            "axes": frames_block(joint),
        }


@dataclass(frozen=True)
class ConeLimit(SwingTwistLimit):
    """A swing cone with the twist free (a spherical joint): the twist range is ignored."""

    n_params = 2

    def admits(self, r, tol: float = 1e-9):
        return SwingTwistLimit.admits(replace(self, twist_lo=-math.pi, twist_hi=math.pi), r, tol)

    def sample(self, n: int, rng: np.random.Generator, rim: float = 0.5):
        return SwingTwistLimit.sample(replace(self, twist_lo=-math.pi, twist_hi=math.pi), n, rng, rim)

    def scaled(self, k):
        ky, kz = np.broadcast_to(np.asarray(k, np.float64).reshape(-1)[:2], (2,))
        return replace(self, swing_y=float(ky * self.swing_y), swing_z=float(kz * self.swing_z))


class UsdSpherical(SwingTwistEngine):
    name = "usd-spherical"
    docs = (
        "https://openusd.org/release/api/usd_physics_page_front.html",
        "https://openusd.org/release/api/class_usd_physics_spherical_joint.html",
    )
    conventions = (
        "UsdPhysicsSphericalJoint, axis X (twist free): coneAngle0Limit from X toward Y (swing about z), "
        "coneAngle1Limit from X toward Z (swing about y); degrees; metres, Z up"
    )
    metric = "tanq"
    max_swing = math.pi - 1e-3

    def cover(self, r) -> ConeLimit:
        lim = super().cover(r)
        return ConeLimit(lim.swing_y, lim.swing_z, -math.pi, math.pi, lim.metric, lim.circular)

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        return {
            "type": "PhysicsSphericalJoint",
            "physics:axis": "X",
            "physics:localPos0": vec(joint.offset_m),
            "physics:localRot0": vec(joint.frame.parent),
            "physics:localPos1": [0.0, 0.0, 0.0],
            "physics:localRot1": vec(joint.frame.child),
            "physics:coneAngle0Limit": math.degrees(limit.swing_z),
            "physics:coneAngle1Limit": math.degrees(limit.swing_y),
            "axes": frames_block(joint),
        }


def articulation_stage(export: Any, variant: str) -> Any:
    """An in-memory ``Usd.Stage`` of ``export`` (an :class:`~jointlimits.export.Export` of the
    ``usd`` or ``usd-spherical`` engine) with the ``variant``'s limits."""
    from .._optional import require

    require("pxr", "usd", "the USD physics export")
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

    from ..motion import quat
    from ..motion.skeleton import Motion, forward_kinematics

    sk = export.skeleton
    J = sk.num_joints
    mpu = float(export.metres_per_unit)
    rot = np.tile([1.0, 0.0, 0.0, 0.0], (J, 1))
    for j, q in export.body_quats.items():
        rot[j] = q
    pose = Motion.rest(sk, 1)
    pose.rotations = rot[None].copy()
    pose.positions = pose.positions.copy()
    pose.positions[0, 0] = 0.0
    gr, gp = forward_kinematics(pose)
    up = np.asarray(export.up_quat, np.float64)
    g_rot = quat.mul(up, gr[0])
    g_pos = quat.mul_vec(up, gp[0] * mpu) + np.array([0.0, 0.0, export.root_height])

    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    root = UsdGeom.Xform.Define(stage, ROOT)
    stage.SetDefaultPrim(root.GetPrim())
    scene = UsdPhysics.Scene.Define(stage, f"{ROOT}/PhysicsScene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
    scene.CreateGravityMagnitudeAttr(9.81)
    used: set[str] = {"PhysicsScene", "Joints"}
    bodies = []
    for j in range(J):
        path = f"{ROOT}/{_identifier(sk.names[j], used)}"
        x = UsdGeom.Xform.Define(stage, path)
        x.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*map(float, g_pos[j])))
        w, a, b, c = (float(v) for v in quat.normalize(g_rot[j]))
        x.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(w, a, b, c))
        UsdPhysics.RigidBodyAPI.Apply(x.GetPrim())
        UsdPhysics.MassAPI.Apply(x.GetPrim()).CreateMassAttr(1.0)
        x.GetPrim().SetCustomDataByKey("jointlimits:joint", sk.names[j])
        bodies.append(x.GetPrim().GetPath())
    UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(bodies[0]))
    UsdGeom.Scope.Define(stage, f"{ROOT}/Joints")
    limited = {je.index: je for je in export.joints}
    jused: set[str] = set()

    def quatf(q) -> Any:
        q = quat.normalize(np.asarray(q, np.float64))
        return Gf.Quatf(float(q[0]), float(q[1]), float(q[2]), float(q[3]))

    for j in range(1, J):
        je = limited.get(j)
        if je is None and not sk.rotation_order(j):
            continue
        path = Sdf.Path(f"{ROOT}/Joints/{_identifier(sk.names[j], jused)}")
        if je is None or export.engine.name == "usd-spherical":
            joint = UsdPhysics.SphericalJoint.Define(stage, path)
            joint.CreateAxisAttr(UsdPhysics.Tokens.x)
        else:
            joint = UsdPhysics.Joint.Define(stage, path)
        joint.CreateBody0Rel().SetTargets([bodies[int(sk.parents[j])]])
        joint.CreateBody1Rel().SetTargets([bodies[j]])
        joint.GetPrim().SetCustomDataByKey("jointlimits:joint", sk.names[j])
        if je is None:  # a rotating joint without limits: free, at the body's rest offset
            joint.CreateLocalPos0Attr(Gf.Vec3f(*map(float, sk.offsets[j] * mpu)))
            joint.CreateLocalRot0Attr(quatf(export.body_quats.get(j, [1.0, 0, 0, 0])))
            joint.CreateLocalPos1Attr(Gf.Vec3f(0, 0, 0))
            joint.CreateLocalRot1Attr(Gf.Quatf(1, 0, 0, 0))
            continue
        prm = je.parameters[variant]
        joint.CreateLocalPos0Attr(Gf.Vec3f(*prm["physics:localPos0"]))
        joint.CreateLocalRot0Attr(quatf(prm["physics:localRot0"]))
        joint.CreateLocalPos1Attr(Gf.Vec3f(*prm["physics:localPos1"]))
        joint.CreateLocalRot1Attr(quatf(prm["physics:localRot1"]))
        if export.engine.name == "usd-spherical":
            joint.CreateConeAngle0LimitAttr(float(prm["physics:coneAngle0Limit"]))
            joint.CreateConeAngle1LimitAttr(float(prm["physics:coneAngle1Limit"]))
        else:
            for axis in ("transX", "transY", "transZ", "rotX", "rotY", "rotZ"):
                lim = UsdPhysics.LimitAPI.Apply(joint.GetPrim(), axis)
                lim.CreateLowAttr(float(prm[f"limit:{axis}"]["low"]))
                lim.CreateHighAttr(float(prm[f"limit:{axis}"]["high"]))
    return stage


def read_limits(path: str) -> dict[str, dict[str, Any]]:
    """Per joint name (``customData["jointlimits:joint"]``), the limits of a physics stage read
    back with usd-core: ``{"type", "rotX"/.../"transZ": (low, high)}`` for a generic joint,
    ``{"type", "coneAngle0Limit", "coneAngle1Limit"}`` for a spherical one (degrees)."""
    from .._optional import require

    require("pxr", "usd", "reading a USD physics stage")
    from pxr import Usd, UsdPhysics

    stage = Usd.Stage.Open(str(path))
    out: dict[str, dict[str, Any]] = {}
    for prim in stage.Traverse():
        name = prim.GetCustomDataByKey("jointlimits:joint")
        if not prim.IsA(UsdPhysics.Joint) or name is None:
            continue
        if prim.IsA(UsdPhysics.SphericalJoint):
            sj = UsdPhysics.SphericalJoint(prim)
            out[name] = {
                "type": "PhysicsSphericalJoint",
                "axis": str(sj.GetAxisAttr().Get()),
                "coneAngle0Limit": sj.GetConeAngle0LimitAttr().Get(),
                "coneAngle1Limit": sj.GetConeAngle1LimitAttr().Get(),
            }
            continue
        rec: dict[str, Any] = {"type": "PhysicsJoint"}
        for axis in ("transX", "transY", "transZ", "rotX", "rotY", "rotZ"):
            if prim.HasAPI(UsdPhysics.LimitAPI, axis):
                lim = UsdPhysics.LimitAPI(prim, axis)
                rec[axis] = (lim.GetLowAttr().Get(), lim.GetHighAttr().Get())
        out[name] = rec
    return out

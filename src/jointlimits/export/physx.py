"""NVIDIA PhysX D6 joint: twist limit pair and elliptical swing cone.

Conventions (PhysX 4.1 / 5 API and source):

- ``PxD6Joint::setTwistLimit(PxJointAngularLimitPair(lower, upper))``: twist about the joint
  frame's x axis, radians; ``setSwingLimit(PxJointLimitCone(yAngle, zAngle))``: the elliptical
  cone, radians in (0, pi); motions ``eTWIST``, ``eSWING1``, ``eSWING2`` set to ``eLIMITED``.
  https://nvidia-omniverse.github.io/PhysX/physx/5.6.1/_api_build/function_PxD6JointCreate_8h_1a275d7096bbc063b220dcedb7b1a22a30.html
  https://docs.nvidia.com/gameworks/content/gameworkslibrary/physx/apireference/files/classPxJointLimitCone.html
- The relative rotation ``q = cA^-1 cB`` is split ``q = swing * twist`` (``PxSeparateSwingTwist``)
  and the D6 cone test (``Cm::ConeLimitHelperTanLess``) takes the swing angles from the
  tan-quarter vector, ``(4 atan2(s_y, 1 + s_w), 4 atan2(s_z, 1 + s_w))``, inside when
  ``(angle_y / yAngle)^2 + (angle_z / zAngle)^2 <= 1`` (PhysX source,
  physxextensions ExtD6Joint / CmConeLimitHelper.h): the ``"tanq"`` metric here.
- Joint frames ``localPose0`` (parent actor) / ``localPose1`` (child actor); PxQuat is (x, y, z, w).
"""

from __future__ import annotations

import math

from ..motion import quat
from .base import JointInfo, SwingTwistEngine, frames_block
from .swingtwist import SwingTwistLimit


def pose(q, p) -> dict:
    q = quat.normalize(q)
    return {"p": [float(x) for x in p], "q_xyzw": [float(q[1]), float(q[2]), float(q[3]), float(q[0])]}


class PhysX(SwingTwistEngine):
    name = "physx"
    docs = (
        "https://nvidia-omniverse.github.io/PhysX/physx/5.6.1/_api_build/"
        "function_PxD6JointCreate_8h_1a275d7096bbc063b220dcedb7b1a22a30.html",
        "https://docs.nvidia.com/gameworks/content/gameworkslibrary/physx/apireference/files/"
        "classPxJointLimitCone.html",
    )
    conventions = (
        "PxD6Joint: twist about x in [lower, upper]; elliptical swing cone yAngle (about y), "
        "zAngle (about z), tested on the tan-quarter swing angles; radians; metres"
    )
    metric = "tanq"
    max_swing = math.pi - 1e-3  # the cone's allowed range is ]0, pi[
    max_twist = math.pi

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        return {
            "type": "PxD6Joint",
            "localPose0": pose(joint.frame.parent, joint.offset_m),
            "localPose1": pose(joint.frame.child, [0.0, 0.0, 0.0]),
            "motion": {
                "eX": "eLOCKED",
                "eY": "eLOCKED",
                "eZ": "eLOCKED",
                "eTWIST": "eLIMITED",
                "eSWING1": "eLIMITED",
                "eSWING2": "eLIMITED",
            },
            "twistLimit": {"lower": limit.twist_lo, "upper": limit.twist_hi},
            "swingLimit": {"yAngle": limit.swing_y, "zAngle": limit.swing_z},
            "axes": frames_block(joint),
        }

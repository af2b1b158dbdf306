"""Jolt Physics ``SwingTwistConstraint``: normal / plane half cone angles and a twist range.

Conventions (Jolt source and docs):

- ``SwingTwistConstraintSettings``: ``mTwistAxis1/2``, ``mPlaneAxis1/2`` (body 1 = parent,
  body 2 = child; ``mSpace = LocalToBodyCOM`` puts positions relative to each body's centre of
  mass), ``mNormalHalfConeAngle``, ``mPlaneHalfConeAngle``, ``mTwistMinAngle``,
  ``mTwistMaxAngle``, radians. Constraint space has x = twist axis, y = normal axis = plane x
  twist, z = plane axis, and the plane half cone limits the swing about y (the twist axis moving
  in the twist/plane plane), the normal half cone the swing about z.
  https://jrouwe.github.io/JoltPhysics/class_swing_twist_constraint.html
  https://jrouwe.github.io/JoltPhysics/_swing_twist_constraint_part_8h.html
- The test (``SwingTwistConstraintPart``): ``q = q_swing * q_twist``, swing inside when
  ``(q_swing.y / sin(plane/2))^2 + (q_swing.z / sin(normal/2))^2 <= 1`` (quaternion components,
  ``w >= 0``), twist inside when ``sin(min/2) <= q_twist.x <= sin(max/2)``; half-angles under
  0.5 degrees lock the axis, so exported angles are at least that.
"""

from __future__ import annotations

import math

from ..motion import quat
from .base import JointInfo, SwingTwistEngine, frames_block, vec
from .swingtwist import SwingTwistLimit


class Jolt(SwingTwistEngine):
    name = "jolt"
    docs = (
        "https://jrouwe.github.io/JoltPhysics/class_swing_twist_constraint.html",
        "https://jrouwe.github.io/JoltPhysics/_swing_twist_constraint_part_8h.html",
    )
    conventions = (
        "SwingTwistConstraint: twist about mTwistAxis in [mTwistMinAngle, mTwistMaxAngle]; swing "
        "ellipse in quaternion components, mPlaneHalfConeAngle about the normal axis (y), "
        "mNormalHalfConeAngle about the plane axis (z); radians; metres"
    )
    metric = "quat"
    max_swing = math.pi
    min_angle = math.radians(0.51)

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        pa, ca = quat.to_matrix(joint.frame.parent), quat.to_matrix(joint.frame.child)
        return {
            "type": "SwingTwistConstraintSettings",
            "mSpace": "LocalToBodyCOM (subtract each body's centre of mass from mPosition1/2)",
            "mPosition1": vec(joint.offset_m),
            "mTwistAxis1": vec(pa[:, 0]),
            "mPlaneAxis1": vec(pa[:, 2]),
            "mPosition2": [0.0, 0.0, 0.0],
            "mTwistAxis2": vec(ca[:, 0]),
            "mPlaneAxis2": vec(ca[:, 2]),
            "mSwingType": "Cone",
            "mNormalHalfConeAngle": limit.swing_z,
            "mPlaneHalfConeAngle": limit.swing_y,
            "mTwistMinAngle": limit.twist_lo,
            "mTwistMaxAngle": limit.twist_hi,
            "axes": frames_block(joint),
        }

"""Unreal Engine physics constraint (``FConstraintInstance``): Swing1 / Swing2 / Twist limits.

Conventions (Unreal API reference, ConstraintTypes.h): ``TwistLimitDegrees`` is the symmetric
roll about the constraint's X axis (``PriAxis``); ``Swing1LimitDegrees`` the symmetric angle of
movement in the XY plane (about Z) and ``Swing2LimitDegrees`` in the XZ plane (about Y), the
two half-angles of an elliptical cone; degrees in [0, 180]; motions ``ACM_Limited``. Frames
``Pos1``/``PriAxis1``/``SecAxis1`` on body 1 (the child bone) and ``Pos2``/... on body 2 (the
parent), centimetres. The cone test is taken on the swing angle times its axis (the
``"angle"`` metric). Unreal is left-handed: convert vectors as you convert positions (the
ranges are symmetric, so a mirror leaves them as they are).
https://dev.epicgames.com/documentation/en-us/unreal-engine/python-api/class/ConeConstraint
https://dev.epicgames.com/documentation/unreal-engine/API/Runtime/Engine/PhysicsEngine/FTwistConstraint?application_version=5.0
https://dev.epicgames.com/documentation/unreal-engine/API/Runtime/Engine/PhysicsEngine/UConstraintInstanceBlueprintLibr-/SetAngularLimits?application_version=5.4
"""

from __future__ import annotations

import math

from ..motion import quat
from .base import JointInfo, SwingTwistEngine, frames_block, vec
from .swingtwist import SwingTwistLimit


class Unreal(SwingTwistEngine):
    name = "unreal"
    docs = (
        "https://dev.epicgames.com/documentation/en-us/unreal-engine/python-api/class/ConeConstraint",
        "https://dev.epicgames.com/documentation/unreal-engine/API/Runtime/Engine/PhysicsEngine/"
        "FTwistConstraint?application_version=5.0",
    )
    conventions = (
        "FConstraintInstance: |twist| <= TwistLimitDegrees about PriAxis (X); elliptical cone "
        "Swing1LimitDegrees (about Z), Swing2LimitDegrees (about Y); degrees; centimetres"
    )
    metric = "angle"
    symmetric_twist = True
    max_swing = math.pi
    max_twist = math.pi

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        pa, ca = quat.to_matrix(joint.frame.parent), quat.to_matrix(joint.frame.child)
        return {
            "type": "FConstraintInstance",
            "Pos1": [0.0, 0.0, 0.0],
            "PriAxis1": vec(ca[:, 0]),
            "SecAxis1": vec(ca[:, 1]),
            "Pos2": vec(joint.offset_m, 100.0),
            "PriAxis2": vec(pa[:, 0]),
            "SecAxis2": vec(pa[:, 1]),
            "Swing1Motion": "ACM_Limited",
            "Swing2Motion": "ACM_Limited",
            "TwistMotion": "ACM_Limited",
            "Swing1LimitDegrees": math.degrees(limit.swing_z),
            "Swing2LimitDegrees": math.degrees(limit.swing_y),
            "TwistLimitDegrees": math.degrees(limit.twist_hi),
            "axes": frames_block(joint, 100.0),
        }

"""Unity ``ConfigurableJoint`` (PhysX D6 underneath): angular X limits and Y/Z limits.

Conventions (Unity scripting reference): ``axis`` (primary, X: the twist) and
``secondaryAxis`` (Y) in the local space of the joint's own rigidbody (the child); Z is their
cross product. ``lowAngularXLimit`` / ``highAngularXLimit`` (``SoftJointLimit.limit``, degrees,
the twist about X relative to the rotation at creation), ``angularYLimit`` / ``angularZLimit``
(degrees, symmetric, about Y and Z), motions ``Limited``. Unity hands these to a PhysX D6
joint, so the test is PhysX's (tan-quarter swing angles against the elliptical cone). Unity is
left-handed and signs its X limits its own way, so the twist range is exported symmetric
(mirroring it changes nothing); convert the axis vectors as you convert positions. Create the
joint with the bodies in the centre pose (local rotations = ``centre``).
https://docs.unity3d.com/6000.2/Documentation/ScriptReference/ConfigurableJoint.html
https://docs.unity3d.com/500/Documentation/Manual/class-ConfigurableJoint.html
"""

from __future__ import annotations

import math

from ..motion import quat
from .base import JointInfo, SwingTwistEngine, frames_block, vec
from .swingtwist import SwingTwistLimit


class Unity(SwingTwistEngine):
    name = "unity"
    docs = (
        "https://docs.unity3d.com/6000.2/Documentation/ScriptReference/ConfigurableJoint.html",
        "https://docs.unity3d.com/500/Documentation/Manual/class-ConfigurableJoint.html",
    )
    conventions = (
        "ConfigurableJoint: twist about axis in [lowAngularXLimit, highAngularXLimit]; PhysX cone "
        "angularYLimit (about secondaryAxis), angularZLimit; degrees; metres"
    )
    metric = "tanq"
    symmetric_twist = True
    max_swing = math.radians(177.0)
    max_twist = math.radians(177.0)

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        m = quat.to_matrix(joint.frame.child)
        return {
            "type": "ConfigurableJoint",
            "anchor": [0.0, 0.0, 0.0],
            "connectedAnchor": vec(joint.offset_m),
            "axis": vec(m[:, 0]),
            "secondaryAxis": vec(m[:, 1]),
            "angularXMotion": "Limited",
            "angularYMotion": "Limited",
            "angularZMotion": "Limited",
            "xMotion": "Locked",
            "yMotion": "Locked",
            "zMotion": "Locked",
            "lowAngularXLimit": math.degrees(limit.twist_lo),
            "highAngularXLimit": math.degrees(limit.twist_hi),
            "angularYLimit": math.degrees(limit.swing_y),
            "angularZLimit": math.degrees(limit.swing_z),
            "axes": frames_block(joint),
        }

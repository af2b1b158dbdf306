"""Godot ``ConeTwistJoint3D``: one swing span (a circular cone) and a symmetric twist span.

Conventions (Godot 4 class reference): the twist axis is the joint's X axis; ``swing_span`` is
the rotation allowed about any axis across it and ``twist_span`` about it, radians (the
inspector shows degrees); spans below 0.05 lock the motion. Godot Physics implements it as
Bullet's cone-twist with both swing spans equal (a circle, where the angle and the
quaternion-component tests of Godot's Jolt backend agree), so the test is ``theta <= swing_span``
and ``|twist| <= twist_span``. The joint's frames are taken from the joint node when it is
created, so create it with the bodies in the centre pose (local rotations = ``centre``).
https://docs.godotengine.org/en/4.2/classes/class_conetwistjoint3d.html
"""

from __future__ import annotations

import math

from ..motion import quat
from .base import JointInfo, SwingTwistEngine, frames_block
from .swingtwist import SwingTwistLimit


class Godot(SwingTwistEngine):
    name = "godot"
    docs = ("https://docs.godotengine.org/en/4.2/classes/class_conetwistjoint3d.html",)
    conventions = (
        "ConeTwistJoint3D: twist about the joint's X axis, |twist| <= twist_span; circular cone "
        "swing angle <= swing_span; radians; metres"
    )
    metric = "angle"
    circular = True
    symmetric_twist = True
    max_swing = math.pi
    min_angle = 0.0501

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        m = quat.to_matrix(joint.frame.child)
        return {
            "type": "ConeTwistJoint3D",
            "transform_in_child_body": {
                "basis_columns": [m[:, 0].tolist(), m[:, 1].tolist(), m[:, 2].tolist()],
                "origin": [0.0, 0.0, 0.0],
            },
            "swing_span": limit.swing_y,
            "twist_span": limit.twist_hi,
            "axes": frames_block(joint),
        }

"""Bullet ``btConeTwistConstraint``: swing spans and a symmetric twist span.

Conventions (Bullet source, btConeTwistConstraint.h/.cpp):

- ``btConeTwistConstraint(rbA, rbB, rbAFrame, rbBFrame)`` with the twist about the frames' x
  axis; ``setLimit(swingSpan1, swingSpan2, twistSpan)``, radians; ``setLimit(5, v)`` sets
  swingSpan1 and ``setLimit(4, v)`` swingSpan2, i.e. swingSpan1 limits the swing about z and
  swingSpan2 the swing about y; spans below 0.05 rad lock the axis (``m_fixThresh``).
  https://pybullet.org/Bullet/BulletFull/classbtConeTwistConstraint.html
- The test (``computeConeLimitInfo``): the cone is the shortest arc taking x to its image, its
  angle ``theta`` and unit axis ``(0, a_y, a_z)``; the limit along that axis is the ellipse
  radius ``1 / sqrt(a_y^2 / swingSpan2^2 + a_z^2 / swingSpan1^2)``, so the swing is inside when
  ``(theta a_y / swingSpan2)^2 + (theta a_z / swingSpan1)^2 <= 1`` (the ``"angle"`` metric);
  the twist is inside when ``|twist| <= twistSpan``.
"""

from __future__ import annotations

import math

from .base import JointInfo, SwingTwistEngine, frames_block
from .physx import pose
from .swingtwist import SwingTwistLimit


class Bullet(SwingTwistEngine):
    name = "bullet"
    docs = ("https://pybullet.org/Bullet/BulletFull/classbtConeTwistConstraint.html",)
    conventions = (
        "btConeTwistConstraint: twist about x, |twist| <= twistSpan; swing ellipse in swing angle x "
        "axis, swingSpan1 about z, swingSpan2 about y; radians; metres"
    )
    metric = "angle"
    symmetric_twist = True
    max_swing = math.pi
    min_angle = 0.0501

    def parameters(self, limit: SwingTwistLimit, joint: JointInfo) -> dict:
        return {
            "type": "btConeTwistConstraint",
            "rbAFrame": pose(joint.frame.parent, joint.offset_m),
            "rbBFrame": pose(joint.frame.child, [0.0, 0.0, 0.0]),
            "swingSpan1": limit.swing_z,
            "swingSpan2": limit.swing_y,
            "twistSpan": limit.twist_hi,
            "axes": frames_block(joint),
        }

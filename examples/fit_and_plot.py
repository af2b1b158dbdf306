"""Fit joint limits on the built-in range-of-motion clip and plot one joint's limit.

The procedural humanoid sweeps every joint through its anatomical range; ``JointLimits.fit``
fits one limit per joint (swing-twist ellipsoids here) and ``plot_joint_limit`` draws the
clip's rotations in limit space with the fitted surface.
"""

import sys
from pathlib import Path

from jointlimits import JointLimits
from jointlimits.motion import procedural
from jointlimits.viz.plots import plot_joint_limit

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)

clip = procedural.range_of_motion(seconds=20.0)  # 600 frames, 22 joints
limits = JointLimits.fit(clip, shape="ellipsoid", swing_twist=True)
print(limits.contains(clip.rotations).mean())  # every training frame is inside: 1.0

plot_joint_limit(limits, clip, "LeftArm", out / "fit_left_arm.png")

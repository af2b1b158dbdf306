"""Limit an over-rotated clip: fit on the clean clip, apply to a copy rotated 40% past it.

``apply`` projects every rotation into its joint's limit (softened near the boundary) and
smooths the switches in and out of the limit. The first figure shows the shoulder before
(grey) and after (orange); the second, per joint, the share of frames outside the limit and
the largest violation, before and after.
"""

import sys
from pathlib import Path

from jointlimits import JointLimits
from jointlimits.motion import procedural
from jointlimits.viz.plots import plot_joint_limit, plot_violation_report

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)

clean = procedural.range_of_motion(seconds=20.0)
limits = JointLimits.fit(clean, shape="ellipsoid", swing_twist=True)

over = procedural.over_rotate(clean, 0.4)                  # 40% past the anatomical ranges
limited = limits.apply(over, soften=(1.0, 0.1), smooth=True)
print(f"frames outside before: {(~limits.contains(over.rotations)).any(axis=1).mean():.0%}, "
      f"after: {(~limits.contains(limited.rotations)).any(axis=1).mean():.0%}")

plot_joint_limit(limits, clean, "LeftArm", out / "limit_left_arm.png", projected=limited, over_rotated=over)
plot_violation_report(limits, over, out / "limit_report.png", projected=limited)

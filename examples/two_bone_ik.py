"""Two-bone IK: the left hand follows a circle, the arm solved in closed form every frame,
then the pose projected into limits fitted on the range-of-motion clip.

The figure shows the target circle, the hand without limits (on the target wherever it is
reachable) and the hand with the limited pose (held back where the target asks for more
than the fitted range).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from jointlimits import JointLimits, Motion, forward_kinematics
from jointlimits.ik.two_bone import solve_two_bone
from jointlimits.motion import procedural

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)

sk = procedural.humanoid_skeleton()  # centimetres, Y up
limits = JointLimits.fit(procedural.range_of_motion(sk, seconds=20.0), shape="ellipsoid", swing_twist=True)

F = 240
pose = Motion.rest(sk, num_frames=F)
_, p = forward_kinematics(pose)
shoulder = p[0, sk.index("LeftArm")]
t = np.linspace(0, 2 * np.pi, F)
# a circle of radius 15 cm in front of the shoulder, parallel to the body's frontal (x-y) plane
target = shoulder + np.stack([15 + 15 * np.cos(t), -20 + 15 * np.sin(t), np.full(F, 25.0)], axis=1)

solved = solve_two_bone(pose, "LeftArm", target)  # shoulder -> elbow -> hand
limited = solved.with_rotations(limits.project(solved.rotations))
hand = sk.index("LeftHand")
_, p_free = forward_kinematics(solved)
_, p_lim = forward_kinematics(limited)
print(
    f"hand to target: {np.linalg.norm(p_free[:, hand] - target, axis=1).max():.3f} cm without limits, "
    f"{np.linalg.norm(p_lim[:, hand] - target, axis=1).max():.1f} cm at most with limits"
)

fig, ax = plt.subplots(figsize=(5.5, 5))
ax.plot(target[:, 0], target[:, 1], "k--", lw=1, label="target")
ax.plot(p_free[:, hand, 0], p_free[:, hand, 1], lw=2, alpha=0.6, label="hand, two-bone IK")
ax.plot(p_lim[:, hand, 0], p_lim[:, hand, 1], lw=2, label="hand, IK then limits")
ax.plot(*shoulder[:2], "o", color="grey", label="shoulder")
ax.set_xlabel("x (cm)")
ax.set_ylabel("y (cm)")
ax.set_aspect("equal")
ax.legend(loc="upper right", fontsize=8)
ax.set_title("Left hand following a circle")
fig.tight_layout()
fig.savefig(out / "two_bone_ik.png", dpi=110)

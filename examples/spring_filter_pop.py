"""A tracking-spring filter on a clip with a pop: one joint jumps 40 degrees at frame 150 and
stays there. ``detect_discontinuities`` finds the frame; ``filter_motion`` turns the jump into
a smooth transition with springs (frames it does not touch come back bit-exact).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from jointlimits.cleanup.tracking import detect_discontinuities, filter_motion
from jointlimits.motion import procedural, quat

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)

clip = procedural.range_of_motion(seconds=10.0)  # 300 frames at 30 fps
j = clip.skeleton.index("LeftForeArm")
rot = clip.rotations.copy()
jump = quat.from_scaled_angle_axis(np.array([0.0, np.radians(40.0), 0.0]))
rot[150:, j] = quat.mul(jump, rot[150:, j])  # the pop: a 40 degree jump from frame 150
popped = clip.with_rotations(rot)

cuts = detect_discontinuities(popped)
print("detected cuts:", [int(c) for c in cuts])
filtered = filter_motion(popped, cuts=cuts)


def angle(m):  # the joint's rotation angle, degrees
    return np.degrees(np.linalg.norm(quat.to_scaled_angle_axis(quat.unroll(m.rotations[:, j])), axis=-1))


frames = np.arange(clip.num_frames)
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(frames, angle(clip), color="grey", lw=1, label="clean")
ax.plot(frames, angle(popped), lw=1.5, label="with the pop")
ax.plot(frames, angle(filtered), lw=1.5, label="filtered")
for c in cuts:
    ax.axvline(c, color="red", lw=0.8, ls=":")
ax.set_xlim(100, 250)
ax.set_xlabel("frame")
ax.set_ylabel("LeftForeArm rotation angle (deg)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out / "spring_filter_pop.png", dpi=110)

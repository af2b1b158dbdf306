"""Studio pose update: gizmo rotation in, limited pose out (what one drag event costs), and an
IK target move, beside an anchor timed in the same run (one forward-kinematics call). Target: 30 ms."""

from __future__ import annotations

import time

import numpy as np

from jointlimits import JointLimits
from jointlimits.motion import procedural, quat
from jointlimits.studio import Clip, StudioState
from jointlimits.studio.posing import pose_fk


def _best(fn, n=200):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3, float(np.percentile(ts, 95)) * 1e3


def main() -> None:
    rom = procedural.range_of_motion(seconds=10.0)
    st = StudioState([Clip("over", procedural.over_rotate(rom, 0.5))], JointLimits.fit(rom), fit_clips=[rom])
    j = st.select_joint("LeftArm")
    rng = np.random.default_rng(0)
    qs = quat.normalize(rng.normal(size=(64, 4)))
    k = [0]

    def gizmo():
        k[0] += 1
        st.rotate_joint(j, qs[k[0] % 64], space="global")
        pose_fk(st.skeleton, st.pose, st.positions)  # what the redraw needs

    anchor = _best(lambda: pose_fk(st.skeleton, st.pose, st.positions))
    g = _best(gizmo)
    print(f"anchor (one-pose FK): median {anchor[0]:.3f} ms")
    print(f"pose update (gizmo -> limited pose + FK): median {g[0]:.3f} ms, p95 {g[1]:.3f} ms "
          f"(x{g[0] / anchor[0]:.0f} anchor; target <= 30 ms)")
    for key in ("left-arm", "left-arm-ccd", "look-at"):
        st.set_ik_mode(key)
        t0 = st.ik_target.copy()
        offs = rng.normal(scale=10.0, size=(64, 3))
        i = [0]

        def ik():
            i[0] += 1
            st.move_ik_target(t0 + offs[i[0] % 64])

        r = _best(ik, 100)
        print(f"IK {key} (limited + free ghost): median {r[0]:.3f} ms, p95 {r[1]:.3f} ms")


if __name__ == "__main__":
    main()

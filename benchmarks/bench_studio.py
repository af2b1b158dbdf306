"""Studio pose update: gizmo rotation in, limited pose out (what one drag event costs), and an
IK target move, beside an anchor timed in the same run (one forward-kinematics call). Target: 30 ms.

    python -m benchmarks.bench_studio [--quick]

Medians (and 95th percentiles) of 200 drags / 100 IK moves (quick: 50 / 20).
"""

from __future__ import annotations

import numpy as np

from jointlimits import JointLimits
from jointlimits.studio import Clip, StudioState
from jointlimits.studio.posing import pose_fk

from . import _compat as C
from ._common import main_single, record
from ._timing import clock

BENCH = "studio"


def _best(fn, n=200):
    fn()
    ts = []
    for _ in range(n):
        t = clock()
        fn()
        ts.append(clock() - t)
    return float(np.median(ts)) * 1e3, float(np.percentile(ts, 95)) * 1e3


def run(quick: bool) -> list[dict]:
    procedural, quat = C.mod("motion.procedural"), C.mod("motion.quat")
    n_gizmo, n_ik = (50, 20) if quick else (200, 100)
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

    anchor = _best(lambda: pose_fk(st.skeleton, st.pose, st.positions), n_gizmo)
    g = _best(gizmo, n_gizmo)
    data = f"procedural range-of-motion skeleton, LeftArm; median of {n_gizmo}"
    a = "one-pose FK, same run"
    recs = [
        record(BENCH, "one-pose FK (anchor)", anchor[0], "ms", data=data),
        record(
            BENCH,
            "pose update (gizmo -> limited pose + FK)",
            g[0],
            "ms",
            data=data,
            anchor=a,
            anchor_value=anchor[0],
            p95_ms=g[1],
            target=30.0,
        ),
    ]
    for key in ("left-arm", "left-arm-ccd", "look-at"):
        st.set_ik_mode(key)
        t0 = st.ik_target.copy()
        offs = rng.normal(scale=10.0, size=(64, 3))
        i = [0]

        def ik():
            i[0] += 1
            st.move_ik_target(t0 + offs[i[0] % 64])

        r = _best(ik, n_ik)
        recs.append(
            record(
                BENCH,
                f"IK {key} (limited + free ghost)",
                r[0],
                "ms",
                anchor=a,
                anchor_value=anchor[0],
                data=f"random target moves of 10 units; median of {n_ik}",
                p95_ms=r[1],
                target=30.0,
            )
        )
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

"""The differentiable ellipsoid limit loss (``jointlimits.torch``) against the compiled core's
forward ``violation``, in the same run.

    python -m benchmarks.bench_difflimits [--quick]

1M joint-rotations (500k poses of a two-joint chain, both joints limited by a fitted ellipsoid;
quick: 100k) of random unit quaternions, float64 on the CPU. Ours: a forward and backward pass of
``jointlimits.torch.loss`` (violation squared, mean); the anchor: ``JointLimits.violation`` (the
compiled core, no gradient). Fastest of repeated calls; ratio = ours / the core's.
"""

from __future__ import annotations

import numpy as np

from ._common import main_single, record, skipped
from ._timing import best

BENCH = "difflimits"


def _limits():
    from jointlimits import JointLimits
    from jointlimits.motion import quat
    from jointlimits.motion.skeleton import Motion, Skeleton

    sk = Skeleton(["root", "a"], np.array([-1, 0]), np.array([[0, 0, 0], [0, 1.0, 0]]))
    t = np.linspace(0, 6 * np.pi, 600)
    v = np.zeros((600, 2, 3))
    v[:, 0] = np.column_stack([0.4 * np.sin(t), 0.2 * np.cos(1.3 * t), 0.3 * np.sin(0.7 * t)])
    v[:, 1] = np.column_stack([0.6 * np.sin(t), 0.3 * np.cos(1.3 * t), 0.2 * np.sin(0.7 * t)])
    m = Motion(sk, quat.from_scaled_angle_axis(v), np.zeros((600, 2, 3)), 1 / 30)
    return JointLimits.fit(m, shape="ellipsoid", swing_twist=False)


def run(quick: bool) -> list[dict]:
    try:
        import torch
    except ImportError:
        return [skipped(BENCH, "ellipsoid loss forward+backward", "needs the [torch] extra")]
    from jointlimits.motion import quat

    lim = _limits()
    n = 50_000 if quick else 500_000
    q = quat.normalize(np.random.default_rng(0).normal(size=(n, 2, 4)))
    limited = sum(1 for j in range(2) if j in lim.joints)
    tl = lim.to_torch("cpu")
    x = torch.tensor(q, requires_grad=True)

    def ours() -> None:
        x.grad = None
        tl.loss(x).backward()

    repeat = 3 if quick else 5
    t_core = best(lambda: lim.violation(q), repeat=repeat)
    t_ours = best(ours, repeat=repeat)
    data = f"{n * limited:,} joint-rotations ({n:,} poses x {limited} limited joints), float64, CPU"
    return [
        record(
            BENCH,
            "ellipsoid loss forward+backward (torch)",
            1e3 * t_ours,
            "ms",
            data=data,
            anchor="compiled core violation (forward), same run",
            anchor_value=1e3 * t_core,
        )
    ]


if __name__ == "__main__":
    main_single(BENCH, run)

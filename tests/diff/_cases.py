"""Limits and rotations the differentiable-limit tests share: every shape (plain and swing-twist,
plus a coupled limit) fitted on the synthetic two-joint chain, and per limit rotations inside,
outside and just outside or inside the boundary."""

from __future__ import annotations

from functools import cache

import numpy as np

from jointlimits.motion import quat

from conftest import two_joint_limits

#: (shape, swing_twist, coupled) of every case
CASES = [
    ("box", False, False),
    ("oriented-box", False, False),
    ("ellipsoid", False, False),
    ("kdop", False, False),
    ("implicit", False, False),
    ("box", True, False),
    ("ellipsoid", True, False),
    ("kdop", True, False),
    ("implicit", True, False),
    ("implicit", False, True),
]
IDS = [f"{s}{'-st' if st else ''}{'-coupled' if c else ''}" for s, st, c in CASES]
#: how far (radians) the near-boundary points are from the boundary
NEAR = 5e-5


@cache
def limits_of(shape: str, swing_twist: bool, coupled: bool):
    if coupled:
        return two_joint_limits(shape, swing_twist, coupled=True, pairs=[("a", "b")])
    return two_joint_limits(shape, swing_twist)


def points(lim, rot, n: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Rotations ``[n, 3, 4]`` inside, outside, NEAR outside and NEAR inside the limits."""
    rng = np.random.default_rng(seed)
    q = quat.normalize(rng.normal(size=(400, 3, 4)))
    v = lim.violation(q)
    out = q[np.argsort(-v[:, 2])[:n]]
    p = lim.project(out)
    inside = rot[rng.choice(len(rot), n, replace=False)]
    step = NEAR / np.maximum(quat.angle(p, out), 1e-12)
    near_out = quat.slerp(p, out, step)
    # from the boundary towards a training rotation (inside) by NEAR
    into = rot[rng.choice(len(rot), n, replace=False)]
    near_in = quat.slerp(p, into, (NEAR / np.maximum(quat.angle(p, into), 1e-12)))
    return {"inside": inside, "outside": out, "near-outside": near_out, "near-inside": near_in}


def special(lim, rot) -> np.ndarray:
    """Identity, antipodal covers (-q) and exactly-on-boundary points (projections) ``[M, 3, 4]``."""
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.normal(size=(200, 3, 4)))
    on = lim.project(q)
    ident = np.zeros((1, 3, 4))
    ident[..., 0] = 1.0
    return np.concatenate([ident, -ident, on, -on, -q, -rot[:50]])

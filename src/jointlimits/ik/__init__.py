"""Inverse kinematics that respects joint limits.

* :mod:`~jointlimits.ik.two_bone`: closed-form two-bone IK (geometric solve with minimal knee
  motion or a pole, and the joint-limits demo's law-of-cosines ``ik_two_bone``).
* :mod:`~jointlimits.ik.ccd`: CCD on a chain with per-joint limits, stall detection and restarts
  from precomputed start poses.
* :mod:`~jointlimits.ik.look_at`: look-at over a spine-to-head chain, lower joints first
  (and the demo's single-bone ``ik_look_at``).
* :mod:`~jointlimits.ik.whole_body`: whole-body damped least squares toward position and
  orientation targets on any joints, batched over poses, joint limits as the top priority.
"""

from .ccd import CCDResult, CCDSolver, StartPoses, ccd, precompute_start_poses, solve_ccd
from .look_at import ik_look_at, look_at_chain
from .two_bone import (
    REACHABLE,
    TOO_CLOSE,
    TOO_FAR,
    TwoBonePositions,
    TwoBoneSolution,
    ik_two_bone,
    solve_two_bone,
    two_bone,
    two_bone_positions,
)
from .whole_body import WholeBodyIK, WholeBodyResult, whole_body_ik

__all__ = [
    "REACHABLE",
    "TOO_CLOSE",
    "TOO_FAR",
    "TwoBonePositions",
    "TwoBoneSolution",
    "ik_two_bone",
    "solve_two_bone",
    "two_bone",
    "two_bone_positions",
    "CCDResult",
    "CCDSolver",
    "StartPoses",
    "ccd",
    "precompute_start_poses",
    "solve_ccd",
    "ik_look_at",
    "look_at_chain",
    "WholeBodyIK",
    "WholeBodyResult",
    "whole_body_ik",
]

"""jointlimits: data-driven joint limits, limit-aware IK and pop-free tracking filters for mocap."""

from __future__ import annotations

from . import quat
from .errors import BVHError, IKError, JointLimitsError, LimitsError, SkeletonError
from .skeleton import Motion, Skeleton, forward_kinematics

__version__ = "0.1.0"

__all__ = [
    "quat", "bvh", "Motion", "Skeleton", "forward_kinematics", "JointLimits",
    "JointLimitsError", "BVHError", "LimitsError", "SkeletonError", "IKError", "__version__",
]


def __getattr__(name: str):
    # JointLimits pulls in the fitting code; import it lazily so `import jointlimits` stays light.
    if name == "JointLimits":
        from .model import JointLimits

        return JointLimits
    if name == "bvh":  # the BVH module's historical place: jointlimits.bvh
        from .io import bvh

        return bvh
    raise AttributeError(f"module 'jointlimits' has no attribute {name!r}")

"""jointlimits: data-driven joint limits, limit-aware IK and pop-free tracking filters for mocap."""

from __future__ import annotations

from .errors import BVHError, IKError, JointLimitsError, LimitsError, SkeletonError
from .motion import quat
from .motion.skeleton import Motion, Skeleton, forward_kinematics

__version__ = "0.1.0"

__all__ = [
    "quat",
    "Motion",
    "Skeleton",
    "forward_kinematics",
    "JointLimits",
    "FitOptions",
    "JointLimitsError",
    "BVHError",
    "LimitsError",
    "SkeletonError",
    "IKError",
    "__version__",
]


def __getattr__(name: str):
    # JointLimits pulls in the fitting code; import it lazily so `import jointlimits` stays light.
    if name == "JointLimits":
        from .limits.model import JointLimits

        return JointLimits
    if name == "FitOptions":
        from .limits.options import FitOptions

        return FitOptions
    raise AttributeError(f"module 'jointlimits' has no attribute {name!r}")

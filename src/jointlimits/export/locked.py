"""Joints an engine export (nearly) locks: any limited range under :data:`LOCK_DEG` degrees, with
the reason, so a conservative export never locks a joint silently.

The ranges are the engine's own numbers: a swing cone's half-angles, a twist's or hinge's span
(``hi - lo``), a ball's angle. The reason says whether the training rotations themselves barely
move (the covering limit is as small), whether the engine cannot limit the twist (a spherical
joint: its cone must then hold the fitted limit at every twist, and a fitted limit that rejects
some twist at every swing leaves no cone), or how far the engine's shape had to shrink to stay
inside the fitted limit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .swingtwist import BallCone, HingeBox, SwingTwistLimit

__all__ = ["LOCK_DEG", "limit_ranges", "lock_reason"]

#: A limited range below this many degrees counts as (nearly) locked.
LOCK_DEG = 5.0


def limit_ranges(limit: Any) -> dict[str, float]:
    """The engine limit's ranges in degrees, by name (swing half-angles, twist/hinge spans)."""
    if isinstance(limit, SwingTwistLimit):
        out = {"swing_y": math.degrees(limit.swing_y), "swing_z": math.degrees(limit.swing_z)}
        if getattr(limit, "n_params", 3) >= 3:  # a cone with the twist free has no twist range
            out["twist"] = math.degrees(limit.twist_hi - limit.twist_lo)
        return out
    if isinstance(limit, HingeBox):
        span = np.degrees(np.asarray(limit.hi) - np.asarray(limit.lo))
        return {f"hinge_{a}": float(s) for a, s in zip("yzx", span)}
    if isinstance(limit, BallCone):
        return {"angle": math.degrees(limit.angle)}
    return {}


def lock_reason(limit: Any, covering: Any, shrink: Any, variant: str, engine: str) -> dict | None:
    """``None`` when no range of ``limit`` is under :data:`LOCK_DEG`, else the ranges under it and
    why (``covering``: the engine limit containing the training rotations; ``shrink``: the
    conservative variant's scale factors)."""
    ranges = limit_ranges(limit)
    small = {k: round(v, 3) for k, v in ranges.items() if v < LOCK_DEG}
    if not small:
        return None
    cover = limit_ranges(covering) if covering is not None else {}
    if cover and all(cover.get(k, math.inf) < LOCK_DEG for k in small):
        why = f"the training rotations move less than {LOCK_DEG:g} deg on it"
    elif variant == "conservative" and getattr(limit, "n_params", 3) == 2:
        why = (
            f"a {engine} joint cannot limit the twist, so its cone must stay inside the fitted limit at "
            "every twist; the fitted limit rejects some twist at almost every swing (use the covering "
            "variant or an engine with a twist limit)"
        )
    else:
        k = float(np.min(np.atleast_1d(shrink)))
        why = f"shrunk to x{k:.2f} of the covering limit to stay inside the fitted limit"
    return {"ranges_deg": small, "reason": why}

"""A clip's up axis and length unit: the one parser of up-axis strings (:func:`parse_up_axis`,
:func:`up_vector`) and guesses from the body's proportions (:func:`guess_up_axis`,
:func:`guess_units`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import JointLimitsError
from .naming import find_role
from .skeleton import Motion, Skeleton, end_site_positions, forward_kinematics

__all__ = [
    "UnitGuess",
    "UP_AXES",
    "parse_up_axis",
    "up_axis_index",
    "up_vector",
    "guess_up_axis",
    "guess_units",
    "body_height",
    "stature",
]

#: The six up axes, as :func:`parse_up_axis` spells them.
UP_AXES = ("+x", "-x", "+y", "-y", "+z", "-z")


def parse_up_axis(value: str, error: type[Exception] = JointLimitsError) -> str:
    """``"+y"``, ``"-z"``, ... from an up-axis string: one of x, y, z, optionally signed ("+" when
    not; a leading "-" makes it negative), any case and surrounding spaces. Raises ``error`` for anything else."""
    s = value.strip().lower() if isinstance(value, str) else ""
    axis = s.lstrip("+-")
    if axis not in ("x", "y", "z"):
        raise error(f"up axis must be one of x, y, z (optionally signed), got {value!r}")
    return ("-" if s.startswith("-") else "+") + axis


def up_axis_index(up: str) -> tuple[int, float]:
    """(axis index 0-2, sign +-1.0) of an up axis (see :func:`parse_up_axis`)."""
    u = parse_up_axis(up)
    return "xyz".index(u[1]), (1.0 if u[0] == "+" else -1.0)


def up_vector(up: str) -> np.ndarray:
    """The unit vector ``[3]`` of an up axis (see :func:`parse_up_axis`)."""
    k, sign = up_axis_index(up)
    v = np.zeros(3)
    v[k] = sign
    return v


def _head_joints(skeleton: Skeleton) -> list[int]:
    return find_role(skeleton, "head")


def _foot_joints(skeleton: Skeleton) -> list[int]:
    return find_role(skeleton, "foot", "toe")


# (name, metres per unit, typical standing height in those units)
_UNITS = [
    ("metres", 1.0, 1.7),
    ("decimetres", 0.1, 17.0),
    ("centimetres", 0.01, 170.0),
    ("millimetres", 0.001, 1700.0),
    ("inches", 0.0254, 67.0),
    ("CMU/ASF units", 0.056444, 30.0),
]


@dataclass(frozen=True)
class UnitGuess:
    """A length-unit guess: ``name``, ``metres_per_unit`` and the measured ``height`` (file units)."""

    name: str
    metres_per_unit: float
    height: float


def guess_up_axis(motion: Motion) -> str:
    """'+y', '-z', ...: the mean direction from the feet to the head (by joint names), or the axis
    along which the body extends most when names do not tell."""
    _, gp = forward_kinematics(motion.frames(0, min(motion.num_frames, 200)))
    heads, feet = _head_joints(motion.skeleton), _foot_joints(motion.skeleton)
    if heads and feet:
        d = np.mean(gp[:, heads].mean(1) - gp[:, feet].mean(1), axis=0)
    else:
        ext = np.median(gp.max(1) - gp.min(1), axis=0)
        k = int(np.argmax(ext))
        d = np.zeros(3)
        d[k] = 1.0
    k = int(np.argmax(np.abs(d)))
    return ("+" if d[k] >= 0 else "-") + "xyz"[k]


def body_height(motion: Motion, up: str | None = None) -> float:
    """Median over frames of the body's extent along the up axis (file units)."""
    k, _ = up_axis_index(up or guess_up_axis(motion))
    head = motion.frames(0, min(motion.num_frames, 200))
    gr, gp = forward_kinematics(head)
    gp = np.concatenate([gp, end_site_positions(head, gr, gp)], axis=1)
    return float(np.median(gp[..., k].max(1) - gp[..., k].min(1)))


def guess_units(motion: Motion, height: float | None = None) -> UnitGuess:
    """Closest typical human height (a skeleton up to the head is ~0.9 of stature) among common
    units, for ``height`` (file units; default :func:`body_height`)."""
    h = body_height(motion) if height is None else float(height)
    if not np.isfinite(h) or h <= 0:
        return UnitGuess("unknown", 1.0, h)
    # compare in log space; End Sites included
    best = min(_UNITS, key=lambda u: abs(np.log(h / (u[2]))))
    return UnitGuess(best[0], best[1], h)


def stature(motion: Motion, up: str | None = None, max_frames: int = 10_000) -> float:
    """Standing height over the whole clip (file units): per frame, the top of the head (head
    joints and their End Sites) above the lowest point of the feet (foot, toe and ankle joints and
    their End Sites) along the up axis; the 99th percentile over at most ``max_frames`` frames
    spread evenly over the clip, so a clip that starts seated, crouched or bowing, or that crawls
    most of the time, still gives the standing height, and raised arms do not count. Without
    head and foot joint names: the extent of all joints. NaN for a clip without frames."""
    if motion.num_frames == 0:
        return float("nan")
    k, sign = up_axis_index(up or guess_up_axis(motion))
    idx = np.unique(np.linspace(0, motion.num_frames - 1, min(motion.num_frames, max_frames)).astype(np.int64))
    sub = Motion(motion.skeleton, motion.rotations[idx], motion.positions[idx], motion.frame_time)
    gr, gp = forward_kinematics(sub)
    sk = motion.skeleton
    ends = [p for p, _ in sk.end_sites]
    pts = np.concatenate([gp, end_site_positions(sub, gr, gp)], axis=1)[..., k]
    owner = list(range(sk.num_joints)) + ends  # the joint each point belongs to
    head_j, foot_j = set(_head_joints(sk)), set(_foot_joints(sk))
    heads = [i for i, j in enumerate(owner) if j in head_j]
    feet = [i for i, j in enumerate(owner) if j in foot_j]
    if heads and feet:
        ext = sign * (pts[:, heads].max(1) if sign > 0 else pts[:, heads].min(1)) - sign * (
            pts[:, feet].min(1) if sign > 0 else pts[:, feet].max(1)
        )
    else:
        ext = pts.max(1) - pts.min(1)
    return float(np.percentile(ext, 99))

"""Ground contacts: which frames a foot (or hand) joint is on the ground. The one contact detector,
used by foot locking (:mod:`.footlock`) and by the pop detector (:mod:`.pops`).

* :func:`find_feet` / :func:`find_toes`: the ankle joints of a skeleton (left first) and their toes,
  by the body-part roles of :mod:`jointlimits.motion.naming`.
* :func:`detect_contacts`: a joint is on the ground while it is *low* (within ``height_threshold``
  of its ground level, by default a low percentile of its own heights over the clip, so an ankle's
  height above the sole does not count) and, unless ``velocity_threshold`` is None, *slow*
  (horizontal speed at most ``velocity_threshold`` m/s, central difference). Runs shorter than
  ``min_frames`` are dropped and gaps shorter than it are filled; ``margin`` then widens every
  contact at both ends. The height threshold is in metres (``height_unit="metres"``, converted
  with :func:`jointlimits.motion.units.guess_units`) or a fraction of the body height
  (``height_unit="body"``, :func:`jointlimits.motion.units.body_height`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import IKError
from ..motion.naming import find_role, side_of
from ..motion.skeleton import Motion, Skeleton, forward_kinematics
from ..motion.units import body_height, guess_units, guess_up_axis, up_axis_index

__all__ = [
    "find_feet",
    "find_toes",
    "detect_contacts",
    "detect_point_contacts",
    "contact_segments",
    "resolve_feet",
    "widen",
    "runs",
    "DEFAULT_HEIGHT_THRESHOLD",
    "DEFAULT_VELOCITY_THRESHOLD",
    "DEFAULT_MIN_FRAMES",
    "GROUND_PERCENTILE",
]

Array = NDArray[np.float64]

#: metres above the clip's ground level (per foot joint) under which a foot may be planted
DEFAULT_HEIGHT_THRESHOLD = 0.07
#: horizontal speed (m/s) under which a low foot counts as planted
DEFAULT_VELOCITY_THRESHOLD = 0.4
#: shortest contact (frames); shorter gaps between contacts are filled
DEFAULT_MIN_FRAMES = 3
#: percentile of a joint's heights taken as its ground level
GROUND_PERCENTILE = 2.0

_HEIGHT_UNITS = ("metres", "body")


# --------------------------------------------------------------------------- feet and toes
def find_feet(skeleton: Skeleton) -> list[int]:
    """Indices of the foot (ankle) joints: joints of the ``foot`` role that are not toes, end
    markers or fingers (:func:`jointlimits.motion.naming.find_role`: from the skeleton's topology,
    else its names), with at least two ancestors so that UpLeg -> Leg -> Foot exists; ordered left
    before right (then by index)."""
    out = [
        j
        for j in find_role(skeleton, "foot", exclude=("toe", "end", "finger"))
        if skeleton.parents[j] >= 0 and skeleton.parents[skeleton.parents[j]] >= 0
    ]
    return sorted(out, key=lambda j: (0 if side_of(skeleton.names[j]) == "left" else 1, j))


def find_toes(skeleton: Skeleton, feet: Sequence[int]) -> list[int | None]:
    """Per foot joint, its toe (ball) joint: the first child of the ``toe`` role, else None."""
    toes = set(find_role(skeleton, "toe"))
    out: list[int | None] = []
    for j in feet:
        kids = [c for c in skeleton.children(j) if c in toes]
        out.append(int(kids[0]) if kids else None)
    return out


def resolve_feet(motion: Motion, feet: Sequence[str | int] | None, legs: bool = True) -> list[int]:
    """Joint indices of ``feet`` (names or indices; :func:`find_feet` when None), each with a
    parent and a grandparent when ``legs``; IKError otherwise."""
    sk = motion.skeleton
    if feet is None:
        idx = find_feet(sk)
        if not idx:
            raise IKError(f"no foot joints found by name (foot/ankle) among {', '.join(sk.names)}; pass feet=")
        return idx
    try:
        idx = [sk.index(f) for f in feet]
    except Exception as e:
        raise IKError(f"feet: {e}") from None
    for j in idx if legs else ():
        p = sk.parents[j]
        if p < 0 or sk.parents[p] < 0:
            raise IKError(f"foot {sk.names[j]!r} needs a parent and a grandparent (UpLeg -> Leg -> Foot)")
    return idx


# --------------------------------------------------------------------------- runs of frames
def runs(mask: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """[start, stop) of every run of True."""
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(m)
    return list(zip(np.nonzero(d == 1)[0].tolist(), np.nonzero(d == -1)[0].tolist()))


def _clean(mask: NDArray[np.bool_], min_frames: int) -> NDArray[np.bool_]:
    out = mask.copy()
    # fill short gaps inside contacts, then drop short contacts
    for s, e in runs(~out):
        if s > 0 and e < len(out) and e - s < min_frames:
            out[s:e] = True
    for s, e in runs(out):
        if e - s < min_frames:
            out[s:e] = False
    return out


def widen(c: NDArray[np.bool_], margin: int) -> NDArray[np.bool_]:
    """Contacts ``[F, n]`` grown by ``margin`` frames at both ends (the landing and the take-off frame)."""
    out = c.copy()
    for k in range(1, int(margin) + 1):
        out[k:] |= c[:-k]
        out[:-k] |= c[k:]
    return out


def contact_segments(contacts: NDArray[np.bool_]) -> list[list[tuple[int, int]]]:
    """Per foot, the ``[start, stop)`` frame ranges of each contact."""
    c = np.asarray(contacts, bool)
    return [runs(c[:, i]) for i in range(c.shape[1])]


# --------------------------------------------------------------------------- the detector
def detect_contacts(
    motion: Motion,
    feet: Sequence[str | int] | None = None,
    height_threshold: float = DEFAULT_HEIGHT_THRESHOLD,
    velocity_threshold: float | None = DEFAULT_VELOCITY_THRESHOLD,
    min_frames: int = DEFAULT_MIN_FRAMES,
    *,
    height_unit: str = "metres",
    ground: Any = None,
    margin: int = 0,
    legs: bool = True,
    validate: bool = True,
    return_ground: bool = False,
) -> NDArray[np.bool_] | tuple[NDArray[np.bool_], Array]:
    """``bool[F, n]``: joint ``feet[i]`` on the ground where ``h - h_ground <= height_threshold``
    and (unless ``velocity_threshold`` is None) ``|Δp_horizontal| / (2 dt) <= velocity_threshold``
    (m/s, central difference); then runs shorter than ``min_frames`` dropped, gaps shorter than it
    filled, and every contact widened by ``margin`` frames at both ends.

    ``feet``: joint names or indices (default :func:`find_feet`; with ``legs`` each needs a parent
    and a grandparent). ``height_unit``: ``"metres"`` (heights in metres, converted with
    :func:`~jointlimits.motion.units.guess_units`) or ``"body"`` (``height_threshold`` is a fraction
    of :func:`~jointlimits.motion.units.body_height`; heights in file units). ``h_ground``: each
    joint's ``GROUND_PERCENTILE`` percentile of its own heights, or ``ground`` (one level or one per
    joint, in the heights' unit). With ``return_ground`` also returns the levels ``[n]`` used.
    ``validate=False`` skips the checks of the thresholds and of the clip's values (as the pop
    detector reads clips: a NaN height is then simply never low).
    """
    if validate:
        if not (np.isfinite(height_threshold) and height_threshold >= 0):
            raise IKError(f"height_threshold must be a finite number >= 0 (metres), got {height_threshold}")
        if velocity_threshold is not None and not (np.isfinite(velocity_threshold) and velocity_threshold >= 0):
            raise IKError(f"velocity_threshold must be a finite number >= 0 (m/s), got {velocity_threshold}")
        if int(min_frames) < 1:
            raise IKError(f"min_frames must be >= 1, got {min_frames}")
    if height_unit not in _HEIGHT_UNITS:
        raise IKError(f"height_unit must be one of {', '.join(_HEIGHT_UNITS)}, got {height_unit!r}")
    idx = resolve_feet(motion, feet, legs)
    if validate:
        motion.check_finite()
    F = motion.num_frames
    if F == 0:
        empty = np.zeros((0, len(idx)), bool)
        return (empty, np.full(len(idx), np.nan)) if return_ground else empty
    up = guess_up_axis(motion)
    k, sign = up_axis_index(up)
    _, gp = forward_kinematics(motion)
    if height_unit == "metres":
        mpu = guess_units(motion).metres_per_unit
        p = gp[:, idx] * mpu  # metres [F, n, 3]
        tol = height_threshold
    else:
        p = gp[:, idx]  # file units [F, n, 3]
        tol = height_threshold * body_height(motion, up)
    h = sign * p[..., k]
    level = (
        np.percentile(h, GROUND_PERCENTILE, axis=0)
        if ground is None
        else np.broadcast_to(np.asarray(ground, np.float64), (len(idx),))
    )
    c = h - level <= tol
    if velocity_threshold is not None:
        ph = p.copy()
        ph[..., k] = 0.0
        if height_unit != "metres":
            ph = ph * guess_units(motion).metres_per_unit
        c &= _speed(ph, motion.frame_time) <= velocity_threshold
    if int(min_frames) > 1:
        c = np.stack([_clean(c[:, i], int(min_frames)) for i in range(len(idx))], axis=1)
    if int(margin) > 0:
        c = widen(c, margin)
    return (c, np.asarray(level, np.float64)) if return_ground else c


def _speed(p: Array, dt: float) -> Array:
    """Per frame and point the speed of positions ``p`` ``[F, n, 3]`` (central differences, the
    ends copied from their neighbours)."""
    F = p.shape[0]
    v = np.zeros(p.shape[:2])
    if F >= 3:
        v[1:-1] = np.linalg.norm(p[2:] - p[:-2], axis=-1) / (2.0 * dt)
        v[0], v[-1] = v[1], v[-2]
    elif F == 2:
        v[:] = np.linalg.norm(p[1] - p[0], axis=-1) / dt
    return v


def detect_point_contacts(
    motion: Motion,
    points: Array,
    height_threshold: float = DEFAULT_HEIGHT_THRESHOLD,
    velocity_threshold: float = DEFAULT_VELOCITY_THRESHOLD,
    min_frames: int = DEFAULT_MIN_FRAMES,
    *,
    margin: int = 0,
) -> NDArray[np.bool_]:
    """:func:`detect_contacts`' test (metres) on global positions ``points`` ``[F, n, 3]`` (file
    units) instead of joints, e.g. a foot's end site on a rig without toe joints."""
    p = np.asarray(points, np.float64) * guess_units(motion).metres_per_unit
    F = p.shape[0]
    if F == 0:
        return np.zeros((0, p.shape[1]), bool)
    k, sign = up_axis_index(guess_up_axis(motion))
    h = sign * p[..., k]
    c = h - np.percentile(h, GROUND_PERCENTILE, axis=0) <= height_threshold
    ph = p.copy()
    ph[..., k] = 0.0
    c &= _speed(ph, motion.frame_time) <= velocity_threshold
    if int(min_frames) > 1:
        c = np.stack([_clean(c[:, i], int(min_frames)) for i in range(p.shape[1])], axis=1)
    if int(margin) > 0:
        c = widen(c, margin)
    return c

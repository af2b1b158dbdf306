"""Left/right mirroring of skeletons and motions across the character's sagittal plane.

A mirrored motion is what the other side of the body would do: every global rotation and
position is reflected through the plane, and every joint takes the reflected motion of its
left/right counterpart (centre joints: their own).

- :func:`side_map`: per joint, the index of its counterpart (itself for a centre joint), from the
  joint names (``Left``/``Right``, ``_L``/``_R``, ``L``/``R`` prefixes, and every convention of
  :mod:`jointlimits.motion.naming`);
- :func:`mirror_plane`: the unit normal of the sagittal plane at rest, found from the rest pose
  (the direction along which paired joints lie apart), and checked: every rest offset must be the
  mirror image of its counterpart's, else :class:`~jointlimits.errors.SkeletonError` names the
  worst joint and distance;
- :func:`reflect_rotations`: a reflection ``M`` applied to rotations, ``M R M``;
- :func:`mirror_motion`: the mirrored clip on the same skeleton.

Why local rotations can be mirrored one by one: with global rotations ``G`` the mirrored global
rotation of joint ``s(j)`` is ``M G_j M``, so its local rotation is
``(M G_p M)^-1 M G_j M = M L_j M``. Converting the reflected global pose back to local rotations
therefore gives exactly ``M L_j M``; the reflected global positions follow from these only when the
skeleton's rest offsets are mirror images (``M o_j = o_s(j)``), which :func:`mirror_plane` checks.
"""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import SkeletonError
from . import quat
from .skeleton import Motion, Skeleton, forward_kinematics_arrays

__all__ = [
    "side_map",
    "mirror_plane",
    "symmetry_errors",
    "reflect_rotations",
    "reflect_vectors",
    "mirror_motion",
    "DEFAULT_SYMMETRY_TOLERANCE",
]

#: Largest distance between a rest offset and its counterpart's mirror image, as a fraction of the
#: skeleton's extent at rest.
DEFAULT_SYMMETRY_TOLERANCE = 0.02

# (pattern, replacement for a left match, for a right match); tried in order on every name
_SIDE_RULES: tuple[tuple[re.Pattern[str], dict[str, str]], ...] = (
    (re.compile(r"Left|Right"), {"Left": "Right", "Right": "Left"}),
    (re.compile(r"left|right"), {"left": "right", "right": "left"}),
    (re.compile(r"LEFT|RIGHT"), {"LEFT": "RIGHT", "RIGHT": "LEFT"}),
    # a lone side letter between separators: UpperLeg_L, hand.R, L_Hip
    (re.compile(r"(?<![A-Za-z0-9])[LlRr](?![A-Za-z0-9])"), {"L": "R", "R": "L", "l": "r", "r": "l"}),
    # CMU's LHipJoint / RThumb, Second Life's lShldr: a leading side letter before a capital
    (re.compile(r"^[LRlr](?=[A-Z])"), {"L": "R", "R": "L", "l": "r", "r": "l"}),
)


def _swapped(name: str) -> list[str]:
    out = []
    for pat, rep in _SIDE_RULES:
        if pat.search(name):
            out.append(pat.sub(lambda m: rep[m.group(0)], name))  # noqa: B023 - called here, in this iteration
    return out


def side_map(skeleton: Skeleton) -> NDArray[np.int64]:
    """Per joint, the index of its left/right counterpart; a joint without one maps to itself.

    Pairs come from the naming conventions of :mod:`jointlimits.motion.naming` (``left_*``/``right_*``
    canonical names) and from side markers in the names; a name is paired only when the swapped
    name is a joint of the skeleton."""
    from .naming import canonical  # naming imports skeleton; keep this module importable alone

    names = skeleton.names
    index = {n: j for j, n in enumerate(names)}
    out = np.arange(skeleton.num_joints, dtype=np.int64)
    try:
        canon = canonical(skeleton)
    except SkeletonError:
        canon = {}
    by_canon = {c: j for j, c in canon.items()}
    for j, c in canon.items():
        for a, b in (("left_", "right_"), ("right_", "left_")):
            if c.startswith(a) and b + c[len(a) :] in by_canon:
                out[j] = by_canon[b + c[len(a) :]]
    for j, n in enumerate(names):
        if out[j] != j:
            continue
        for other in _swapped(n):
            k = index.get(other)
            if k is not None and k != j and out[k] == k:
                out[j], out[k] = k, j
                break
    return out


def reflect_vectors(v: ArrayLike, normal: ArrayLike) -> NDArray[np.float64]:
    """Vectors ``[..., 3]`` reflected through the plane through the origin with unit ``normal``."""
    v = np.asarray(v, np.float64)
    n = np.asarray(normal, np.float64)
    return v - 2.0 * (v @ n)[..., None] * n


def reflect_rotations(q: ArrayLike, normal: ArrayLike) -> NDArray[np.float64]:
    """Rotations ``[..., 4]`` conjugated by the reflection ``M`` through the plane with unit
    ``normal``: ``M R M``, the same angle about the reflected axis with the opposite sense, i.e.
    ``(w, -M v)``. Applying it twice gives ``q`` back."""
    q = np.asarray(q, np.float64)
    out = np.empty(q.shape)
    out[..., 0] = q[..., 0]
    out[..., 1:] = -reflect_vectors(q[..., 1:], normal)
    return out


def _rest_positions(skeleton: Skeleton) -> NDArray[np.float64]:
    _, gp = forward_kinematics_arrays(quat.identity((skeleton.num_joints,)), skeleton.offsets, skeleton.parents)
    return gp


def _extent(skeleton: Skeleton) -> float:
    return float(np.ptp(_rest_positions(skeleton), axis=0).max()) or 1.0


def symmetry_errors(
    skeleton: Skeleton, normal: ArrayLike, sides: NDArray[np.int64] | None = None
) -> NDArray[np.float64]:
    """Per joint, the distance between the mirror image of its rest offset and its counterpart's
    rest offset, in the skeleton's units (0 for the root, whose offset is its translation)."""
    s = side_map(skeleton) if sides is None else np.asarray(sides, np.int64)
    err = np.linalg.norm(reflect_vectors(skeleton.offsets, normal) - skeleton.offsets[s], axis=-1)
    err[skeleton.parents < 0] = 0.0
    return err


def mirror_plane(skeleton: Skeleton, tolerance: float = DEFAULT_SYMMETRY_TOLERANCE) -> NDArray[np.float64]:
    """The unit normal of the skeleton's sagittal plane at rest.

    It is the direction along which the rest positions of paired joints lie apart (the principal
    direction of their differences), snapped onto a coordinate axis when within one degree of it.
    Raises :class:`SkeletonError` when no left/right pair is found, when the counterparts' parents
    are not counterparts, or when a rest offset is further than ``tolerance`` (a fraction of the
    skeleton's extent at rest) from the mirror image of its counterpart's."""
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise SkeletonError(f"symmetry tolerance must be a finite number >= 0, got {tolerance}")
    s = side_map(skeleton)
    names, parents = skeleton.names, skeleton.parents
    paired = np.flatnonzero(s != np.arange(len(s)))
    if paired.size == 0:
        raise SkeletonError(
            f"cannot mirror: no left/right joint pairs found in the joint names (first joints: {', '.join(names[:6])})"
        )
    ps = np.where(parents >= 0, s[np.maximum(parents, 0)], -1)
    bad = np.flatnonzero(parents[s] != ps)
    if bad.size:
        j = int(bad[0])
        raise SkeletonError(
            f"cannot mirror: {names[j]!r} pairs with {names[s[j]]!r}, but their parents "
            f"({names[parents[j]] if parents[j] >= 0 else 'none'!r}, "
            f"{names[parents[s[j]]] if parents[s[j]] >= 0 else 'none'!r}) are not a pair"
        )
    gp = _rest_positions(skeleton)
    d = gp[paired] - gp[s[paired]]
    w, v = np.linalg.eigh(d.T @ d)
    if w[-1] <= 0:
        raise SkeletonError("cannot mirror: left and right joints lie at the same places at rest")
    n = v[:, -1] / np.linalg.norm(v[:, -1])
    axis = int(np.argmax(np.abs(n)))
    if abs(n[axis]) >= np.cos(np.radians(1.0)):
        n = np.zeros(3)
        n[axis] = 1.0
    elif n[axis] < 0:
        n = -n
    err = symmetry_errors(skeleton, n, s)
    size = _extent(skeleton)
    worst = int(np.argmax(err))
    if err[worst] > tolerance * size:
        centre = s[worst] == worst
        # a centre joint's offset is twice its distance from the plane away from its mirror image
        what = (
            f"{names[worst]!r}'s rest offset leaves the mirror plane by {err[worst] / 2:.4g}"
            if centre
            else f"{names[worst]!r}'s rest offset is {err[worst]:.4g}"
        )
        whom = "" if centre else f" from the mirror image of {names[s[worst]]!r}'s"
        raise SkeletonError(
            f"cannot mirror: the skeleton is not left/right symmetric at rest; {what} "
            f"({err[worst] / size:.2%} of the body){whom} (tolerance {tolerance:.2%}; mirror plane normal "
            f"[{n[0]:.3f}, {n[1]:.3f}, {n[2]:.3f}])"
        )
    return n


def mirror_motion(
    motion: Motion, tolerance: float = DEFAULT_SYMMETRY_TOLERANCE, normal: ArrayLike | None = None
) -> Motion:
    """``motion`` mirrored across the skeleton's sagittal plane, on the same skeleton.

    Each joint gets its counterpart's rotations conjugated by the reflection (centre joints their
    own); translations (the root's, position channels) are reflected, the other joints keep their
    rest offsets. The world is reflected through the same plane through its origin, so heights
    stay. ``normal`` skips finding and checking the plane (:func:`mirror_plane`, with
    ``tolerance``). Mirroring twice gives the motion back."""
    sk = motion.skeleton
    n = mirror_plane(sk, tolerance) if normal is None else np.asarray(normal, np.float64)
    if n.shape != (3,) or not np.all(np.isfinite(n)) or abs(np.linalg.norm(n) - 1.0) > 1e-9:
        raise SkeletonError(f"mirror plane normal must be a unit [x, y, z], got {n}")
    s = side_map(sk)
    rot = reflect_rotations(motion.rotations[:, s], n)
    moved = np.array([sk.has_position_channels(j) for j in range(sk.num_joints)], bool)
    pos = np.broadcast_to(sk.offsets, motion.positions.shape).copy()
    # a joint whose translation is animated takes its counterpart's, reflected
    src = s[moved]
    pos[:, moved] = reflect_vectors(motion.positions[:, src], n)
    return Motion(sk, rot, pos, motion.frame_time)

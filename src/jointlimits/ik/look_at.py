"""Look-at: turn a single bone, or a whole spine-to-head chain, toward a target.

:func:`ik_look_at` is the single-bone step of the joint-limits demo. :func:`look_at_chain`
distributes the rotation over a chain: going from the lowest joint up, each joint turns so the
gaze point (a point ahead of the head, at the target's distance) moves onto the target, and its
limit clamps the turn, so lower joints exhaust their range before the joints above take over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import IKError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton, forward_kinematics_arrays
from .two_bone import _as_quat, _as_vec, _dot, _norm, _rotate, _simple_rotation

__all__ = ["ik_look_at", "look_at_chain"]

Array = NDArray[np.float64]


def _between_demo(p: Array, q: Array) -> Array:
    """The demo's quat_between: normalize(|p||q| + p.q, p x q) with |.| + 1e-8 in the normalisation."""
    out = np.empty(np.broadcast_shapes(p.shape, q.shape)[:-1] + (4,))
    out[..., 0] = np.sqrt(_dot(p, p) * _dot(q, q)) + _dot(p, q)
    out[..., 1] = p[..., 1] * q[..., 2] - p[..., 2] * q[..., 1]
    out[..., 2] = p[..., 2] * q[..., 0] - p[..., 0] * q[..., 2]
    out[..., 3] = p[..., 0] * q[..., 1] - p[..., 1] * q[..., 0]
    return out / (np.sqrt(np.sum(out * out, axis=-1)) + 1e-8)[..., None]


def ik_look_at(
    bone_rotation: ArrayLike,
    global_parent_rotation: ArrayLike,
    global_rotation: ArrayLike,
    global_position: ArrayLike,
    child_position: ArrayLike,
    target_position: ArrayLike,
    eps: float = 1e-5,
) -> Array:
    """The demo's look-at step: new local rotation ``P⁻¹ between(child - p, target - p) G``.

    The bone keeps ``bone_rotation`` where ``1 - dot(curr_dir, targ_dir) <= eps`` (already
    aiming at the target). All inputs broadcast over leading dimensions.
    """
    r = _as_quat("bone_rotation", bone_rotation)
    P = _as_quat("global_parent_rotation", global_parent_rotation)
    G = _as_quat("global_rotation", global_rotation)
    p = _as_vec("global_position", global_position)
    c = _as_vec("child_position", child_position)
    t = _as_vec("target_position", target_position)
    cd = c - p
    td = t - p
    cd = cd / (_norm(cd) + 1e-8)[..., None]
    td = td / (_norm(td) + 1e-8)[..., None]
    new = quat.inv_mul(P, quat.mul(_between_demo(cd, td), G))
    keep = (1.0 - _dot(cd, td)) <= eps
    shape = np.broadcast_shapes(new.shape, r.shape)
    return np.where(keep[..., None], np.broadcast_to(r, shape), np.broadcast_to(new, shape))


def _limit_for(limits: Any, joint: int, k: int) -> Any:
    if limits is None:
        return None
    if hasattr(limits, "joint") and callable(limits.joint):
        return limits.joint(joint)
    if isinstance(limits, Mapping):
        return limits.get(joint)
    return limits[k]


def look_at_chain(
    motion: Motion | tuple[ArrayLike, ArrayLike, Skeleton],
    chain: Sequence[str | int],
    target: ArrayLike,
    forward: ArrayLike = (0.0, 0.0, 1.0),
    limits: Any = None,
    weights: Sequence[float] | None = None,
    iterations: int = 2,
    inner_iterations: int = 8,
) -> Motion | Array:
    """Turn ``chain`` (e.g. ``["Spine", "Spine1", "Spine2", "Neck", "Head"]``, lowest first) so
    the last joint's local ``forward`` axis points at ``target`` (``[F, 3]`` or ``[3]``, global).

    With gaze point ``g = h + |t - h| G_head forward``, joint i turns by
    ``between(g - p_i, t - p_i)`` (scaled by ``weights[i]``, default 1) and is then projected
    into ``limits`` (a JointLimits model, a mapping joint -> limit, or one limit per chain
    joint; ``None`` entries are free). Going from the bottom up, lower joints are used up to
    their limits before higher ones; each joint's step is repeated (up to ``inner_iterations``)
    until the gaze settles and ``iterations`` repeats the sweep. ``motion`` is a Motion (a
    new Motion is returned) or ``(rotations [F, J, 4], positions [F, J, 3], skeleton)`` (new
    rotations are returned).
    """
    if isinstance(motion, Motion):
        rot, posl, sk = motion.rotations, motion.positions, motion.skeleton
    else:
        try:
            rot_in, pos_in, sk = motion
        except (TypeError, ValueError):
            raise IKError("motion must be a Motion or a (rotations, positions, skeleton) tuple") from None
        rot, posl = np.asarray(rot_in, np.float64), np.asarray(pos_in, np.float64)
    if len(chain) == 0:
        raise IKError("look-at chain is empty")
    try:
        idx = [sk.index(j) for j in chain]
    except Exception as e:
        raise IKError(f"look-at chain: {e}") from None
    for lo, hi in zip(idx[:-1], idx[1:]):
        if lo not in _ancestors(sk, hi):
            raise IKError(f"look-at chain: {sk.names[hi]!r} is not below {sk.names[lo]!r}")
    F = rot.shape[0]
    tgt = _as_vec("target", target)
    if tgt.shape not in ((3,), (1, 3), (F, 3)):
        raise IKError(f"target must be [3] or [{F}, 3], got {tgt.shape}")
    tgt = np.broadcast_to(tgt, (F, 3))
    fwd = _as_vec("forward", forward)
    if _norm(fwd) <= 1e-12:
        raise IKError("forward axis has zero length")
    fwd = fwd / _norm(fwd)
    w = np.ones(len(idx)) if weights is None else np.asarray(weights, np.float64)
    if w.shape != (len(idx),) or not np.all(np.isfinite(w)):
        raise IKError(f"weights must be {len(idx)} finite numbers, got {weights!r}")
    lims = [_limit_for(limits, j, k) for k, j in enumerate(idx)]

    new = rot.copy()
    head = idx[-1]
    for _ in range(max(1, int(iterations))):
        for k, j in enumerate(idx):
            # moving joint j also moves the head, so repeat its step until the gaze settles
            for _inner in range(inner_iterations):
                gr, gp = forward_kinematics_arrays(new, posl, sk.parents)
                h = gp[:, head]
                dist = _norm(tgt - h)
                gaze = h + dist[:, None] * _rotate(gr[:, head], np.broadcast_to(fwd, (F, 3)))
                R = _simple_rotation(gaze - gp[:, j], tgt - gp[:, j])
                if w[k] != 1.0:
                    R = quat.from_scaled_angle_axis(w[k] * quat.to_scaled_angle_axis(quat.abs(R)))
                par = quat.identity(F) if sk.parents[j] < 0 else gr[:, sk.parents[j]]
                local = quat.inv_mul(par, quat.mul(R, gr[:, j]))
                if lims[k] is not None:
                    local = lims[k].project(local)
                step = quat.angle(new[:, j], local)
                new[:, j] = local
                if w[k] != 1.0 or np.max(step) < 1e-13:
                    break
    return motion.with_rotations(new) if isinstance(motion, Motion) else new


def _ancestors(sk: Skeleton, j: int) -> set[int]:
    out = set()
    p = int(sk.parents[j])
    while p >= 0:
        out.add(p)
        p = int(sk.parents[p])
    return out

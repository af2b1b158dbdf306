"""The closed-form start of :class:`jointlimits.ik.whole_body.WholeBodyIK`: each bone turned
toward its observed direction (a swing for one observed child, a weighted Kabsch fit for several),
top down and vectorised over poses, with the limits projected level by level, and the root
placed from the observations."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ..motion import quat
from ..motion.skeleton import Skeleton, forward_kinematics_arrays

Array = NDArray[np.float64]


class StartModel(Protocol):
    """What the start reads of a :class:`jointlimits.ik.whole_body.WholeBodyIK` (a protocol, so
    this module does not import the one that imports it)."""

    skeleton: Skeleton
    limits: Any
    local_positions: Array
    scale: float
    fix_root_position: bool
    fix_root_rotation: bool
    _children: list[list[int]]
    _per_joint: set[Any] | None


def initial_guess(
    ik: StartModel,
    targets: Array,
    weights: Array,
    posture: Array,
    root_positions: Array | None = None,
    orientations: tuple[Array, Array] | None = None,
) -> tuple[Array, Array]:
    """``WholeBodyIK.initial_guess``: ``(rotations [F, J, 4], root positions [F, 3])``."""
    F, J = targets.shape[:2]
    lp = ik.local_positions
    G = np.empty((F, J, 4))
    P = np.empty((F, J, 3))
    L = np.empty((F, J, 4))
    root = root_guess(ik, targets, weights, posture, root_positions)
    noise = float(getattr(ik, "noise", 0.0))
    depth = ik.skeleton.depth()
    order = np.argsort(depth, kind="stable")  # level by level: still parents first
    for i, j in enumerate(order):
        if ik.limits is not None and i > 0 and depth[j] != depth[order[i - 1]]:
            _project_level(ik, L, G, order[:i], depth[order[i - 1]])
        p = int(ik.skeleton.parents[j])
        if p < 0:
            gpar = quat.identity(F)
            pj = root
        else:
            gpar = G[:, p]
            pj = P[:, p] + quat.mul_vec(gpar, lp[j])
        gprior = quat.mul(gpar, posture[:, j])
        kids = ik._children[j]
        gj = gprior
        if p < 0 and ik.fix_root_rotation:
            kids = []
        if len(kids) == 1:
            c = kids[0]
            u = quat.mul_vec(gprior, lp[c])
            v = targets[:, c] - pj
            ok = (
                (weights[:, c] > 0)
                & (np.linalg.norm(v, axis=-1) > 1e-9 * ik.scale)
                & (np.linalg.norm(u, axis=-1) > 1e-12)
            )
            if np.any(ok):
                gj = np.where(ok[:, None], quat.mul(quat.between(u, v), gprior), gprior)
        elif len(kids) > 1:
            B = 1e-6 * np.eye(3) * np.ones((F, 1, 1))  # the posture decides what the data leave open
            total = np.zeros(F)
            for c in kids:
                u = quat.mul_vec(gprior, lp[c])
                v = targets[:, c] - pj
                nu = np.linalg.norm(u, axis=-1)
                nv = np.linalg.norm(v, axis=-1)
                ok = (weights[:, c] > 0) & (nv > 1e-9 * ik.scale) & (nu > 1e-12)
                wc = np.where(ok, weights[:, c] * nu / ik.scale, 0.0)
                if noise > 0.0:  # a bone short next to the noise points anywhere: it weighs less
                    wc = wc * nu * nu / (nu * nu + (2.0 * noise) ** 2)
                total = total + wc
                uh = u / np.maximum(nu, 1e-300)[:, None]
                vh = v / np.maximum(nv, 1e-300)[:, None]
                B = B + wc[:, None, None] * vh[:, :, None] * uh[:, None, :]
            if noise > 0.0:  # under noise the posture weighs a share of the data
                B = B + (1e-3 * total)[:, None, None] * np.eye(3)
            U, _, Vt = np.linalg.svd(B)
            d = np.sign(np.linalg.det(U @ Vt))
            U[:, :, 2] *= d[:, None]
            gj = quat.normalize(quat.mul(quat.from_matrix(U @ Vt), gprior))
        if orientations is not None:
            tq, wo = orientations
            gj = np.where((wo[:, j] > 0)[:, None], tq[:, j], gj)
        G[:, j] = gj
        P[:, j] = pj
        L[:, j] = quat.inv_mul(gpar, gj)
    if ik.limits is not None:
        _project_level(ik, L, G, order, depth[order[-1]])
    return quat.normalize(L), root


def _project_level(ik: StartModel, L: Array, G: Array, done: NDArray[np.int64], d: int) -> None:
    """Project the joints of level ``d`` (the last of the ``done`` joints) and update their
    global rotations, so the bones below are fitted from where their limited parents put
    them. Whole poses go to ``limits.project`` (joints not solved yet are the identity), so
    a coupled model projects each joint under its final parent."""
    depth = ik.skeleton.depth()
    level = [int(k) for k in done if depth[k] == d]
    if ik._per_joint is not None:
        # independent per-joint limits: project just this level's joints
        for k in level:
            if k in ik._per_joint:
                L[:, k] = ik.limits.joint(k).project(L[:, k])
    else:
        todo = np.zeros(L.shape[1], bool)
        todo[done] = True
        proj = ik.limits.project(np.where(todo[None, :, None], L, quat.identity(())))
        L[:, level] = proj[:, level]
    for k in level:
        p = int(ik.skeleton.parents[k])
        G[:, k] = L[:, k] if p < 0 else quat.mul(G[:, p], L[:, k])


def root_guess(ik: StartModel, targets: Array, weights: Array, posture: Array, root_positions: Array | None) -> Array:
    """Root positions ``[F, 3]``: ``root_positions`` (default the skeleton's root offset) when
    the root is fixed; else per pose the observed root, else its estimate from the other
    observed joints placed as in the posture, else ``root_positions`` as well."""
    F = targets.shape[0]
    if root_positions is not None:
        base = np.broadcast_to(root_positions, (F, 3)).copy()
    else:
        base = np.broadcast_to(ik.local_positions[0], (F, 3)).copy()
    if ik.fix_root_position:
        return base
    seen = weights[:, 0] > 0
    root = np.where(seen[:, None], targets[:, 0], base)
    todo = ~seen & np.any(weights > 0, axis=1)
    if np.any(todo):
        # from the other observed joints, placed as in the posture
        lp = np.repeat(ik.local_positions[None], F, axis=0)
        lp[:, 0] = 0.0
        _, rel = forward_kinematics_arrays(posture, lp, ik.skeleton.parents)
        w = weights[todo]
        est = (w[..., None] * (targets[todo] - rel[todo])).sum(1) / w.sum(1)[:, None]
        root[todo] = est
    return root

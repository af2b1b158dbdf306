"""The damped least-squares iterations of :class:`jointlimits.ik.whole_body.WholeBodyIK`: one
normal-equations step per pose in the core, the clamping loop against the limits, and adaptive
(Levenberg-Marquardt) damping per pose."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .._native import _core
from ..motion import quat
from ..motion.skeleton import Skeleton

Array = NDArray[np.float64]


class DLSModel(Protocol):
    """What the iterations read of a :class:`jointlimits.ik.whole_body.WholeBodyIK` (a protocol,
    so this module does not import the one that imports it)."""

    skeleton: Skeleton
    limits: Any
    posture_weight: float
    damping: float
    min_damping: float
    tolerance: float
    fix_root_position: bool
    fix_root_rotation: bool
    clamp_passes: int
    _chain: NDArray[np.int64]
    _chain_len: NDArray[np.int64]
    _off: NDArray[np.int64]
    _first: NDArray[np.int64]

    def _fk(self, L: Array, root: Array) -> tuple[Array, Array]: ...


#: (rotations, root positions, positions, error, clamped): a ``WholeBodyResult`` but its iterations
IterateResult = tuple[Array, Array, Array, Array, NDArray[np.bool_]]


def energy(
    ik: DLSModel, L: Array, gr: Array, gp: Array, tgt: Array, wp: Array, ori: tuple[Array, Array] | None, post: Array
) -> tuple[Array, Array, Array | None, Array]:
    """(energy [F], posture residual in world [F, J, 3], orientation residual, wr [F, J])."""
    e = tgt - gp
    E = np.einsum("fj,fj->f", wp, np.einsum("fjk,fjk->fj", e, e))
    rl = quat.to_scaled_angle_axis(quat.abs(quat.mul_inv(post, L)))
    gpar = np.empty_like(gr)
    gpar[:, 0] = quat.identity(())
    gpar[:, 1:] = gr[:, ik.skeleton.parents[1:]]
    rp = quat.mul_vec(gpar, rl)
    wr = np.full(wp.shape, ik.posture_weight)
    E = E + ik.posture_weight * np.einsum("fjk,fjk->f", rl, rl)
    ro = None
    if ori is not None:
        tq, wo = ori
        ro = quat.to_scaled_angle_axis(quat.abs(quat.mul_inv(tq, gr)))
        E = E + np.einsum("fj,fj->f", wo, np.einsum("fjk,fjk->fj", ro, ro))
    return E, rp, ro, wr


def iterate(
    ik: DLSModel,
    L: Array,
    root: Array,
    tgt: Array,
    wp: Array,
    ori: tuple[Array, Array] | None,
    post: Array,
    n_it: int,
) -> IterateResult:
    """Up to ``n_it`` DLS iterations of ``ik`` from local rotations ``L [F, J, 4]`` and root
    positions ``root [F, 3]`` toward targets ``tgt [F, J, 3]`` with weights ``wp [F, J]``
    (already divided by the squared length unit), orientation targets and weights ``ori`` and
    the posture ``post [F, J, 4]``; each pose stops once converged."""
    sk = ik.skeleton
    F, J = L.shape[:2]
    parents = sk.parents
    free = np.ones(3 + 3 * J, np.uint8)
    if ik.fix_root_position:
        free[:3] = 0
    if ik.fix_root_rotation:
        free[3:6] = 0
    gr, gp = ik._fk(L, root)
    E, rp, ro, wr = energy(ik, L, gr, gp, tgt, wp, ori, post)
    lam = np.full(F, ik.damping)
    blocked = np.zeros((F, J, 3))  # parent-frame directions the projection pushed back
    clamped = np.zeros((F, J), bool)
    wo = np.zeros((F, J)) if ori is None else ori[1]
    ro_arr = np.zeros((F, J, 3)) if ro is None else ro
    push = np.zeros((F, J))
    active = np.ones(F, bool)
    for _it in range(n_it):
        idx = np.nonzero(active)[0]
        if idx.size == 0:
            break
        gpar = np.empty_like(gr)
        gpar[:, 0] = quat.identity(())
        gpar[:, 1:] = gr[:, parents[1:]]
        Lc = L.copy()
        rootc = root.copy()
        cl = clamped.copy()
        bl = blocked.copy()
        moved = np.zeros((F, J), bool)
        push[:] = 0.0
        # the clamping loop: solve, project, and re-solve the poses whose step pushed new
        # joints into their limits with those joints clamped too
        for _pass in range(ik.clamp_passes if ik.limits is not None else 1):
            n = quat.mul_vec(gpar[idx], bl[idx])
            nn = np.linalg.norm(n, axis=-1, keepdims=True)
            nrm = np.where(cl[idx][..., None] & (nn > 1e-12), n / np.maximum(nn, 1e-300), 0.0)
            dxi = np.empty((idx.size, 3 + 3 * J))
            pi = np.zeros((idx.size, J))
            _core.dls_normal_step(
                gp[idx],
                tgt[idx],
                wp[idx],
                ro_arr[idx],
                wo[idx],
                rp[idx],
                wr[idx],
                nrm,
                lam[idx],
                ik._chain,
                ik._chain_len,
                ik._off,
                ik._first,
                free,
                dxi,
                pi,
            )
            push[idx] = pi
            omega = dxi[:, 3:].reshape(idx.size, J, 3)
            Li = quat.normalize(quat.mul(quat.from_scaled_angle_axis(quat.inv_mul_vec(gpar[idx], omega)), L[idx]))
            rootc[idx] = root[idx] + dxi[:, :3]
            if ik.limits is None:
                Lc[idx] = Li
                break
            Lp = ik.limits.project(Li)
            mv = quat.angle(Li, Lp) > 1e-9
            Lc[idx] = Lp
            moved[idx] = mv
            if not mv.any():
                break
            bk = quat.to_scaled_angle_axis(quat.abs(quat.mul_inv(Li, Lp)))
            bl[idx] = np.where(mv[..., None], bk, bl[idx])
            new = mv & ~cl[idx]
            cl[idx] |= mv
            redo = np.any(new, axis=1)
            idx = idx[redo]
            if idx.size == 0:
                break
        grc, gpc = ik._fk(Lc, rootc)
        Ec, rpc, roc, _ = energy(ik, Lc, grc, gpc, tgt, wp, ori, post)
        ok = Ec <= E * (1 + 1e-12)
        # poses whose accepted, lightly damped step no longer lowers their error are done
        # (a heavily damped step is small for another reason: the damping is still adapting)
        active &= ~(ok & (E - Ec <= ik.tolerance * E + 1e-300) & (lam <= 10.0 * ik.min_damping))
        lam = np.where(ok, np.maximum(lam / 3.0, ik.min_damping), np.minimum(lam * 4.0, 1e6))
        okv = ok[:, None, None]
        L = np.where(okv, Lc, L)
        root = np.where(ok[:, None], rootc, root)
        gr = np.where(okv, grc, gr)
        gp = np.where(okv, gpc, gp)
        E = np.where(ok, Ec, E)
        rp = np.where(okv, rpc, rp)
        if roc is not None:  # there are orientation targets
            ro_arr = np.where(okv, roc, ro_arr)
        # after a step, clamps stay on joints the tasks still push outward (or that the
        # projection just stopped); a rejected step is retried with all the clamps it found
        clamped = np.where(ok[:, None], cl & (moved | (push > 0)), cl)
        blocked = bl
    seen = wp > 0
    d2 = np.einsum("fjk,fjk->fj", tgt - gp, tgt - gp)
    cnt = seen.sum(1)
    err = np.where(cnt > 0, np.sqrt((d2 * seen).sum(1) / np.maximum(cnt, 1)), np.nan)
    return L, root, gp, err, clamped

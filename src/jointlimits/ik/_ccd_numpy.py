"""The numpy back end of :mod:`jointlimits.ik.ccd`: the same CCD sweeps, stall detection and
restarts as the compiled solver, vectorised over the batch, for any limit object with
``.project(q [..., 4])`` (implicit or coupled shapes, user limits)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..motion import quat

Array = NDArray[np.float64]
#: (rotations, success, iterations, error, orientation error, restarts): the fields of ``CCDResult``
NumpyResult = tuple[Array, NDArray[np.bool_], NDArray[np.int64], Array, Array, NDArray[np.int64]]


def chain_fk(base_rot: Array, base_pos: Array, offsets: Array, local: Array) -> tuple[Array, Array]:
    """Global rotations ``[..., n, 4]`` and positions ``[..., n+1, 3]`` of a chain (numpy)."""
    n = local.shape[-2]
    G = np.empty(np.broadcast_shapes(base_rot.shape[:-1], local.shape[:-2]) + (n, 4))
    Pp = np.empty(G.shape[:-2] + (n + 1, 3))
    g, p = base_rot, base_pos
    for k in range(n):
        p = p + quat.mul_vec(g, offsets[..., k, :])
        g = quat.mul(g, local[..., k, :])
        Pp[..., k, :] = p
        G[..., k, :] = g
    Pp[..., n, :] = p + quat.mul_vec(g, offsets[..., n, :])
    return G, Pp


def solve_numpy(
    br: Array,
    bp: Array,
    off: Array,
    t: Array,
    tr: Array | None,
    end_rot: Array,
    init: Array,
    starts: Array,
    start_eff: Array,
    lims: Sequence[Any],
    tol: float,
    ori_tol: float,
    ori_weight: float,
    max_iter: int,
    max_restarts: int,
    stall_iters: int,
    stall_ratio: float,
) -> NumpyResult:
    """CCD over the batch: base transforms ``br [N, 4]``/``bp [N, 3]``, offsets ``[N, n+1, 3]``,
    targets ``t [N, 3]`` and rotation targets ``tr [N, 4]`` (or None), the end joint's local
    rotation ``end_rot [N, 4]``, start rotations ``init [N, n, 4]``, restart poses
    ``starts [S, n, 4]`` with their effectors ``start_eff [S, 3]`` and one limit (or None) per
    chain joint; the options as :func:`jointlimits.ik.ccd.ccd` names them."""
    N, n = init.shape[:2]
    has_ori = tr is not None
    L = init.copy()
    for k, lim in enumerate(lims):
        if lim is not None:
            L[:, k] = lim.project(L[:, k])
    S = starts.shape[0]
    tried = np.zeros((N, S), bool)
    lt = quat.inv_mul_vec(br, t - bp)
    best = L.copy()
    best_score = np.full(N, np.inf)
    best_e = np.full(N, np.inf)
    best_oe = np.zeros(N)
    prev = np.full(N, np.inf)
    stall = np.zeros(N, np.int64)
    iters = np.zeros(N, np.int64)
    attempt_it = np.zeros(N, np.int64)
    restarts = np.zeros(N, np.int64)
    success = np.zeros(N, bool)
    active = np.ones(N, bool)
    while np.any(active):
        a = np.nonzero(active)[0]
        La, bra, bpa, offa, ta = L[a], br[a], bp[a], off[a], t[a]
        for i in range(n - 1, -1, -1):
            G, P = chain_fk(bra, bpa, offa, La)
            u, v = P[:, n] - P[:, i], ta - P[:, i]
            R = quat.between(u, v)
            lv = np.linalg.norm(v, axis=-1, keepdims=True)
            R = np.where((np.linalg.norm(u, axis=-1, keepdims=True) < 1e-12) | (lv < 1e-12), quat.identity(()), R)
            if tr is not None:
                E = quat.mul(R, quat.mul(G[:, n - 1], end_rot[a]))
                Q = quat.abs(quat.mul_inv(tr[a], E))
                ax = v / np.maximum(lv, 1e-12)
                ang = 2.0 * np.arctan2(np.sum(Q[:, 1:] * ax, -1), Q[:, 0]) * ori_weight
                R = quat.mul(quat.from_angle_axis(ang, ax), R)
            par = bra if i == 0 else G[:, i - 1]
            Li = quat.normalize(quat.inv_mul(par, quat.mul(R, G[:, i])))
            if lims[i] is not None:
                Li = lims[i].project(Li)
            La[:, i] = Li
        L[a] = La
        G, P = chain_fk(bra, bpa, offa, La)
        e = np.linalg.norm(P[:, n] - ta, axis=-1)
        if tr is not None:
            E = quat.mul(G[:, n - 1], end_rot[a])
            oe = quat.angle(E, tr[a])
        else:
            oe = np.zeros_like(e)
        score = e + oe
        iters[a] += 1
        attempt_it[a] += 1
        better = score < best_score[a]
        ib = a[better]
        best[ib], best_score[ib], best_e[ib], best_oe[ib] = La[better], score[better], e[better], oe[better]
        ok = (e <= tol) & ((oe <= ori_tol) if has_ori else True)
        success[a[ok]] = True
        slow = score > prev[a] * (1.0 - stall_ratio)
        stall[a] = np.where(slow, stall[a] + 1, 0)
        prev[a] = score
        give_up = ~ok & ((stall[a] >= stall_iters) | (attempt_it[a] >= max_iter))
        active[a[ok]] = False
        for k in a[give_up]:  # restarts are rare: a short loop over the few that stalled
            free = np.nonzero(~tried[k])[0]
            if restarts[k] >= max_restarts or free.size == 0:
                active[k] = False
                continue
            pick = free[np.argmin(np.sum((start_eff[free] - lt[k]) ** 2, axis=-1))]
            tried[k, pick] = True
            restarts[k] += 1
            L[k] = starts[pick]
            prev[k], stall[k], attempt_it[k] = np.inf, 0, 0
    return best, success, iters, best_e, best_oe, restarts

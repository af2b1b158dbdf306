"""Cyclic coordinate descent (CCD) IK with joint limits and restarts (Blow, 2002).

Each sweep visits the chain joints from the end back to the base; joint i turns by the simple
rotation ``between(e - p_i, t - p_i)`` that swings the end effector e toward the target t (plus,
with an orientation target, the twist about ``t - p_i`` that best aligns the end's rotation,
which leaves its position alone), and the result is immediately projected into the joint's
limit. When the error stops shrinking (the solver grinds against a limit) it restarts from one
of a few precomputed start poses, nearest effector first (:func:`precompute_start_poses`
clusters them from training clips with k-means). The best pose found is returned.

Two back ends run the same algorithm: a numba kernel (used when every limit is a
:class:`~jointlimits.reach.ReachWindowLimit`, a :class:`~jointlimits.model.FittedLimit` (box,
oriented box, ellipsoid or k-DOP, whole or swing-twist; compiled from flat arrays by
:func:`pack_fitted_limits`) or ``None``) and a numpy one, vectorised over the batch, for any
limit object with ``.project(q [..., 4])``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numba as nb
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quat
from ..errors import IKError
from ..limits._kernels.fused import EMPTY_SHAPE, _fitted_kernel, pack_limit
from ..limits.reach import ReachWindowLimit, _qmul, _qrot, _rw_project_one, _simple
from ..skeleton import Motion, Skeleton, forward_kinematics_arrays

__all__ = ["CCDResult", "StartPoses", "CCDSolver", "ccd", "solve_ccd", "precompute_start_poses",
           "pack_fitted_limits", "project_fitted"]

Array = NDArray[np.float64]


@dataclass
class CCDResult:
    """Solved local rotations ``[N, n, 4]`` of the chain joints, whether each target was reached
    (position within ``tolerance`` and, with orientation targets, rotation within
    ``orientation_tolerance``), iterations used, final position error, orientation error (radians,
    0 without orientation targets) and the number of restarts."""

    rotations: Array
    success: NDArray[np.bool_]
    iterations: NDArray[np.int64]
    error: Array
    orientation_error: Array
    restarts: NDArray[np.int64]

    @property
    def success_rate(self) -> float:
        return float(np.mean(self.success)) if self.success.size else 0.0


@dataclass
class StartPoses:
    """Restart poses of a chain: local rotations ``[S, n, 4]`` and the effector position each
    produces in the base frame (the frame of the first chain joint's parent) ``[S, 3]``."""

    rotations: Array
    effectors: Array


# --------------------------------------------------------------------------- chain helpers
def _chain_fk(base_rot: Array, base_pos: Array, offsets: Array, local: Array) -> tuple[Array, Array]:
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


def precompute_start_poses(local_rotations: ArrayLike, offsets: ArrayLike, count: int = 6,
                           limits: Any = None, seed: int = 0, iterations: int = 50) -> StartPoses:
    """Cluster training poses of a chain (local rotations ``[F, n, 4]``) into ``count`` start
    poses with k-means (k-means++ seeding) on the hemisphere-aligned quaternions, normalise the
    centroids, project them into ``limits`` and record each one's effector in the base frame
    (``offsets`` ``[n+1, 3]``: local positions of the chain joints and the end joint).
    Minimises ``Σ_f min_s |x_f - c_s|²`` over the stacked quaternion coordinates."""
    q = np.asarray(local_rotations, np.float64)
    if q.ndim != 3 or q.shape[-1] != 4:
        raise IKError(f"local_rotations must be [F, n, 4], got {q.shape}")
    if not np.all(np.isfinite(q)):
        raise IKError("local_rotations contain NaN or infinite values")
    F, n, _ = q.shape
    off = np.asarray(offsets, np.float64)
    if off.shape != (n + 1, 3):
        raise IKError(f"offsets must be [{n + 1}, 3], got {off.shape}")
    if F < count:
        raise IKError(f"need at least {count} poses to cluster {count} start poses, got {F}")
    mean = quat.average(q, axis=0)  # [n, 4]
    q = np.where((np.sum(q * mean, axis=-1) < 0)[..., None], -q, q)
    x = q.reshape(F, -1)
    rng = np.random.default_rng(seed)
    cent = [x[rng.integers(F)]]
    for _ in range(1, count):  # k-means++
        d2 = np.min(((x[:, None, :] - np.stack(cent)[None]) ** 2).sum(-1), axis=1)
        cent.append(x[rng.choice(F, p=d2 / d2.sum()) if d2.sum() > 0 else rng.integers(F)])
    c = np.stack(cent)
    for _ in range(iterations):
        lab = np.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        new = np.stack([x[lab == k].mean(0) if np.any(lab == k) else c[k] for k in range(count)])
        if np.allclose(new, c):
            break
        c = new
    rots = quat.normalize(c.reshape(count, n, 4))
    lims = _resolve_limits(limits, n, None)
    for k, lim in enumerate(lims):
        if lim is not None:
            rots[:, k] = lim.project(rots[:, k])
    _, P = _chain_fk(quat.identity(()), np.zeros(3), off, rots)
    return StartPoses(rots, P[:, n])


def _resolve_limits(limits: Any, n: int, joints: Sequence[int] | None) -> list[Any]:
    if limits is None:
        return [None] * n
    if hasattr(limits, "joint") and callable(getattr(limits, "joint")) and not hasattr(limits, "project_one"):
        if joints is None:
            raise IKError("a JointLimits model needs the chain's joint indices")
        return [limits.joint(j) for j in joints]
    lims = list(limits)
    if len(lims) != n:
        raise IKError(f"expected {n} limits (one per chain joint, None for free joints), got {len(lims)}")
    for k, lim in enumerate(lims):
        if lim is not None and not callable(getattr(lim, "project", None)):
            raise IKError(f"limit {k} has no project() method: {lim!r}")
    return lims


# --------------------------------------------------------------------------- numba kernel
# FittedLimit projection on flat arrays: the compiled step of jointlimits.fused, with the packed
# limits of all chain joints stacked (two shape slots per joint) so one tuple carries them.


@nb.njit(cache=True)
def _fitted_project_rows(Q, k, fl):
    """``FittedLimit.project`` (hard, no softening) of rotations ``Q [m, 4]`` of chain joint k, in place."""
    (fmode, fref, fax, fcov, ftlo, fthi, codes, F, x0, x1, AX, m0, m1, MN, MX, g0, g1, GG, BND) = fl
    sa, sb = 2 * k, 2 * k + 1
    _fitted_kernel(Q, fref[k], fax[k], fmode[k] - 1, fcov[k], False, False, 0.0, 0.0, ftlo[k], fthi[k],
                   codes[sa], F[sa], AX[x0[sa]:x1[sa]], MN[m0[sa]:m1[sa]], MX[m0[sa]:m1[sa]], GG[g0[sa]:g1[sa]],
                   BND[g0[sa]:g1[sa]], codes[sb], F[sb], AX[x0[sb]:x1[sb]], MN[m0[sb]:m1[sb]], MX[m0[sb]:m1[sb]],
                   GG[g0[sb]:g1[sb]], BND[g0[sb]:g1[sb]], Q, Q[:0])


def pack_fitted_limits(lims: Sequence[Any]) -> tuple:
    """Flat arrays (a tuple the numba kernels unpack) of the ``FittedLimit`` of each chain joint
    (``jointlimits.fused.pack_limit`` stacked; other joints get mode 0 = no fitted limit)."""
    from ..limits.joint import FittedLimit

    n = len(lims)
    fmode = np.zeros(n, np.int64)
    fref = np.tile(np.array([1.0, 0, 0, 0]), (n, 1))
    fax = np.tile(np.array([1.0, 0, 0]), (n, 1))
    fcov = np.zeros(n, np.bool_)
    ftlo = np.zeros(n)
    fthi = np.zeros(n)
    slots: list[tuple] = []
    for k, lim in enumerate(lims):
        if isinstance(lim, FittedLimit):
            mode, covers, (ftlo[k], fthi[k]), a, b = pack_limit(lim)
            fmode[k], fcov[k], fref[k], fax[k] = mode + 1, covers, lim.reference, lim.twist_axis
        else:
            a = b = EMPTY_SHAPE
        slots += [a, b]
    codes = np.array([sl[0] for sl in slots], np.int64)
    F = np.ascontiguousarray(np.stack([sl[1] for sl in slots]))

    def stack(idx: int, width: int | None) -> tuple[Array, Array, Array]:
        parts = [sl[idx] for sl in slots]
        ends = np.cumsum([len(p) for p in parts])
        starts = ends - np.array([len(p) for p in parts])
        shape = (0, width) if width else (0,)
        flat = np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(shape), np.float64)
        return starts.astype(np.int64), ends.astype(np.int64), flat

    x0, x1, AX = stack(2, 3)
    m0, m1, MN = stack(3, None)
    _, _, MX = stack(4, None)
    g0, g1, GG = stack(5, 3)
    _, _, BND = stack(6, None)
    return (fmode, fref, fax, fcov, ftlo, fthi, codes, F, x0, x1, AX, m0, m1, MN, MX, g0, g1, GG, BND)


def project_fitted(limit: Any, rotations: ArrayLike) -> Array:
    """``limit.project(rotations)`` of a ``FittedLimit`` through the compiled kernel CCD uses
    (``[..., 4]`` -> ``[..., 4]``); tests check it against the reference implementation."""
    q = np.asarray(rotations, np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    out = flat.copy()
    _fitted_project_rows(out, 0, pack_fitted_limits([limit]))
    return out.reshape(q.shape)


@nb.njit(cache=True)
def _fk_chain(br, bp, off, L, n, G, P):
    gw, gx, gy, gz = br[0], br[1], br[2], br[3]
    px, py, pz = bp[0], bp[1], bp[2]
    for k in range(n):
        ox, oy, oz = _qrot(gw, gx, gy, gz, off[k, 0], off[k, 1], off[k, 2])
        px, py, pz = px + ox, py + oy, pz + oz
        gw, gx, gy, gz = _qmul(gw, gx, gy, gz, L[k, 0], L[k, 1], L[k, 2], L[k, 3])
        P[k, 0], P[k, 1], P[k, 2] = px, py, pz
        G[k, 0], G[k, 1], G[k, 2], G[k, 3] = gw, gx, gy, gz
    ox, oy, oz = _qrot(gw, gx, gy, gz, off[n, 0], off[n, 1], off[n, 2])
    P[n, 0], P[n, 1], P[n, 2] = px + ox, py + oy, pz + oz


@nb.njit(cache=True)
def _project_joint(L, k, has, ref, axis, tmid, thalf, jw, wn, we1, we2, wc, wvs, verts, eg, fl):
    if fl[0][k] != 0:
        _fitted_project_rows(L[k:k + 1], k, fl)
    elif has[k]:
        a, b, c, d, moved = _rw_project_one(L[k, 0], L[k, 1], L[k, 2], L[k, 3], ref[k], axis[k], tmid[k], thalf[k],
                                            jw[k], jw[k + 1], wn, we1, we2, wc, wvs, verts, eg, 1e-9)
        L[k, 0], L[k, 1], L[k, 2], L[k, 3] = a, b, c, d


@nb.njit(cache=True)
def _errors(P, G, n, t, tr, has_ori, end_rot):
    dx, dy, dz = P[n, 0] - t[0], P[n, 1] - t[1], P[n, 2] - t[2]
    e = math.sqrt(dx * dx + dy * dy + dz * dz)
    oe = 0.0
    if has_ori:
        ew, ex, ey, ez = _qmul(G[n - 1, 0], G[n - 1, 1], G[n - 1, 2], G[n - 1, 3],
                               end_rot[0], end_rot[1], end_rot[2], end_rot[3])
        dot = abs(ew * tr[0] + ex * tr[1] + ey * tr[2] + ez * tr[3])
        oe = 2.0 * math.acos(min(dot, 1.0))
    return e, oe


@nb.njit(cache=True)
def _ccd_one(br, bp, off, t, tr, has_ori, end_rot, init, starts, start_eff, n,
             has, ref, axis, tmid, thalf, jw, wn, we1, we2, wc, wvs, verts, eg, fl,
             tol, ori_tol, ori_weight, max_iter, max_restarts, stall_iters, stall_ratio, out):
    L = init.copy()
    G = np.empty((n, 4))
    P = np.empty((n + 1, 3))
    for k in range(n):
        _project_joint(L, k, has, ref, axis, tmid, thalf, jw, wn, we1, we2, wc, wvs, verts, eg, fl)
    S = starts.shape[0]
    tried = np.zeros(S, np.bool_)
    # target in the base frame, for choosing restart poses
    ltx, lty, ltz = _qrot(br[0], -br[1], -br[2], -br[3], t[0] - bp[0], t[1] - bp[1], t[2] - bp[2])
    best_e, best_oe, best_score = 1e300, 0.0, 1e300
    total = 0
    restarts = 0
    success = False
    while True:
        prev = 1e300
        stall = 0
        for it in range(max_iter):
            total += 1
            for i in range(n - 1, -1, -1):
                _fk_chain(br, bp, off, L, n, G, P)
                pix, piy, piz = P[i, 0], P[i, 1], P[i, 2]
                ux, uy, uz = P[n, 0] - pix, P[n, 1] - piy, P[n, 2] - piz
                vx, vy, vz = t[0] - pix, t[1] - piy, t[2] - piz
                lu = math.sqrt(ux * ux + uy * uy + uz * uz)
                lv = math.sqrt(vx * vx + vy * vy + vz * vz)
                if lu < 1e-12 or lv < 1e-12:
                    rw, rx, ry, rz = 1.0, 0.0, 0.0, 0.0
                else:
                    rw, rx, ry, rz = _simple(ux / lu, uy / lu, uz / lu, vx / lv, vy / lv, vz / lv)
                if has_ori and lv >= 1e-12:
                    # twist about the joint->target line that best aligns the end rotation
                    ew, ex, ey, ez = _qmul(G[n - 1, 0], G[n - 1, 1], G[n - 1, 2], G[n - 1, 3],
                                           end_rot[0], end_rot[1], end_rot[2], end_rot[3])
                    ew, ex, ey, ez = _qmul(rw, rx, ry, rz, ew, ex, ey, ez)
                    qw, qx, qy, qz = _qmul(tr[0], tr[1], tr[2], tr[3], ew, -ex, -ey, -ez)
                    if qw < 0.0:
                        qw, qx, qy, qz = -qw, -qx, -qy, -qz
                    ax, ay, az = vx / lv, vy / lv, vz / lv
                    s = qx * ax + qy * ay + qz * az
                    ang = 2.0 * math.atan2(s, qw) * ori_weight
                    ch, sh = math.cos(0.5 * ang), math.sin(0.5 * ang)
                    rw, rx, ry, rz = _qmul(ch, sh * ax, sh * ay, sh * az, rw, rx, ry, rz)
                # L_i' = parent^-1 R G_i
                if i == 0:
                    pw, px_, py_, pz_ = br[0], br[1], br[2], br[3]
                else:
                    pw, px_, py_, pz_ = G[i - 1, 0], G[i - 1, 1], G[i - 1, 2], G[i - 1, 3]
                gw, gx, gy, gz = _qmul(rw, rx, ry, rz, G[i, 0], G[i, 1], G[i, 2], G[i, 3])
                a, b, c, d = _qmul(pw, -px_, -py_, -pz_, gw, gx, gy, gz)
                nn = math.sqrt(a * a + b * b + c * c + d * d)
                L[i, 0], L[i, 1], L[i, 2], L[i, 3] = a / nn, b / nn, c / nn, d / nn
                _project_joint(L, i, has, ref, axis, tmid, thalf, jw, wn, we1, we2, wc, wvs, verts, eg, fl)
            _fk_chain(br, bp, off, L, n, G, P)
            e, oe = _errors(P, G, n, t, tr, has_ori, end_rot)
            score = e + (oe if has_ori else 0.0)
            if score < best_score:
                best_score, best_e, best_oe = score, e, oe
                for k in range(n):
                    for m in range(4):
                        out[k, m] = L[k, m]
            if e <= tol and (not has_ori or oe <= ori_tol):
                success = True
                break
            if score > prev * (1.0 - stall_ratio):
                stall += 1
                if stall >= stall_iters:
                    break
            else:
                stall = 0
            prev = score
        if success or restarts >= max_restarts:
            break
        # restart from the untried start pose whose effector is nearest the target
        pick = -1
        bd = 1e300
        for s_ in range(S):
            if not tried[s_]:
                dx, dy, dz = start_eff[s_, 0] - ltx, start_eff[s_, 1] - lty, start_eff[s_, 2] - ltz
                dd = dx * dx + dy * dy + dz * dz
                if dd < bd:
                    bd, pick = dd, s_
        if pick < 0:
            break
        tried[pick] = True
        restarts += 1
        for k in range(n):
            for m in range(4):
                L[k, m] = starts[pick, k, m]
    return success, total, best_e, best_oe, restarts


@nb.njit(cache=True, parallel=True)
def _ccd_batch(br, bp, off, t, tr, has_ori, end_rot, init, starts, start_eff,
               has, ref, axis, tmid, thalf, jw, wn, we1, we2, wc, wvs, verts, eg, fl,
               tol, ori_tol, ori_weight, max_iter, max_restarts, stall_iters, stall_ratio,
               out, success, iters, err, oerr, restarts):
    N = t.shape[0]
    n = init.shape[1]
    for k in nb.prange(N):
        s, it, e, oe, r = _ccd_one(br[k], bp[k], off[k], t[k], tr[k], has_ori, end_rot[k], init[k], starts, start_eff, n,
                                   has, ref, axis, tmid, thalf, jw, wn, we1, we2, wc, wvs, verts, eg, fl,
                                   tol, ori_tol, ori_weight, max_iter, max_restarts, stall_iters, stall_ratio, out[k])
        success[k] = s
        iters[k] = it
        err[k] = e
        oerr[k] = oe
        restarts[k] = r


def _pack_limits(lims: Sequence[ReachWindowLimit | None]):
    n = len(lims)
    has = np.zeros(n, np.bool_)
    ref = np.tile(np.array([1.0, 0, 0, 0]), (n, 1))
    axis = np.tile(np.array([1.0, 0, 0]), (n, 1))
    tmid = np.zeros(n)
    thalf = np.full(n, np.pi)
    jw = np.zeros(n + 1, np.int64)
    wn, we1, we2, wc, verts, eg, wvs = [], [], [], [], [], [], [0]
    for k, lim in enumerate(lims):
        nw = 0
        if lim is not None:
            has[k] = True
            ref[k], axis[k], tmid[k], thalf[k] = lim.reference, lim.axis, lim._tmid, lim._thalf
            nw = len(lim.windows)
            wn.append(lim._wn)
            we1.append(lim._we1)
            we2.append(lim._we2)
            wc.append(lim._wc)
            verts.append(lim._verts)
            eg.append(lim._eg)
            wvs.extend((lim._wvs[1:] + wvs[-1]).tolist())
        jw[k + 1] = jw[k] + nw

    def cat(xs, w):
        return np.ascontiguousarray(np.concatenate(xs)) if xs else np.zeros((0, w))

    return (has, ref, axis, tmid, thalf, jw, cat(wn, 3), cat(we1, 3), cat(we2, 3), cat(wc, 2),
            np.asarray(wvs, np.int64), cat(verts, 2), cat(eg, 3))


# --------------------------------------------------------------------------- numpy back end
def _ccd_numpy(br, bp, off, t, tr, end_rot, init, starts, start_eff, lims, tol, ori_tol, ori_weight,
               max_iter, max_restarts, stall_iters, stall_ratio) -> CCDResult:
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
            G, P = _chain_fk(bra, bpa, offa, La)
            u, v = P[:, n] - P[:, i], ta - P[:, i]
            R = quat.between(u, v)
            lv = np.linalg.norm(v, axis=-1, keepdims=True)
            R = np.where((np.linalg.norm(u, axis=-1, keepdims=True) < 1e-12) | (lv < 1e-12), quat.identity(()), R)
            if has_ori:
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
        G, P = _chain_fk(bra, bpa, offa, La)
        e = np.linalg.norm(P[:, n] - ta, axis=-1)
        if has_ori:
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
    return CCDResult(best, success, iters, best_e, best_oe, restarts)


# --------------------------------------------------------------------------- public API
def _vecs(name: str, x: ArrayLike, N: int, width: int) -> Array:
    a = np.asarray(x, np.float64)
    if a.shape == (width,):
        a = np.broadcast_to(a, (N, width))
    if a.shape != (N, width):
        raise IKError(f"{name} must be [{width}] or [{N}, {width}], got {a.shape}")
    if not np.all(np.isfinite(a)):
        i = int(np.argwhere(~np.isfinite(a).all(-1))[0, 0])
        raise IKError(f"{name} contains NaN or infinite values (first at row {i})")
    return np.ascontiguousarray(a)


def ccd(base_rotation: ArrayLike, base_position: ArrayLike, offsets: ArrayLike, targets: ArrayLike,
        init: ArrayLike, limits: Sequence[Any] | None = None, target_rotations: ArrayLike | None = None,
        end_rotation: ArrayLike | None = None, start_poses: StartPoses | None = None, tolerance: float = 0.1,
        orientation_tolerance: float = 0.01, orientation_weight: float = 1.0, max_iterations: int = 100,
        max_restarts: int = 4, stall_iterations: int = 5, stall_ratio: float = 0.002,
        backend: str = "auto") -> CCDResult:
    """Batched CCD on a chain of n joints for N targets (array-level API).

    ``base_rotation`` ``[N, 4]``/``base_position`` ``[N, 3]``: global transform of the first
    joint's parent. ``offsets`` ``[n+1, 3]`` or ``[N, n+1, 3]``: local positions of the chain
    joints and of the end effector. ``targets`` ``[N, 3]`` global; ``init`` ``[N, n, 4]`` or
    ``[n, 4]`` starting local rotations. ``limits``: one object with ``.project`` (or None) per
    chain joint. ``target_rotations`` ``[N, 4]``: optional global rotation targets of the end
    joint, whose local rotation is ``end_rotation`` (default identity). Success means
    ``|e - t| <= tolerance`` (and rotation error ``<= orientation_tolerance`` radians).
    An attempt ends after ``max_iterations`` sweeps, or when the error shrank by less than
    ``stall_ratio`` (relative) for ``stall_iterations`` sweeps in a row; then up to
    ``max_restarts`` restarts follow. Orientation targets are met by twisting about the
    joint-to-target line, which converges markedly slower than position-only solves.
    ``backend``: "auto" (numba when every limit is a ReachWindowLimit, a FittedLimit of a
    ``JointLimits`` model, or None), "numba" or "numpy".
    """
    t = np.asarray(targets, np.float64)
    if t.ndim != 2 or t.shape[-1] != 3:
        raise IKError(f"targets must be [N, 3], got {t.shape}")
    N = t.shape[0]
    t = _vecs("targets", t, N, 3)
    br = quat.normalize(_vecs("base_rotation", base_rotation, N, 4))
    bp = _vecs("base_position", base_position, N, 3)
    off = np.asarray(offsets, np.float64)
    if off.ndim == 2:
        off = np.broadcast_to(off, (N,) + off.shape)
    if off.ndim != 3 or off.shape[0] != N or off.shape[2] != 3 or off.shape[1] < 2:
        raise IKError(f"offsets must be [n+1, 3] or [N, n+1, 3], got {np.shape(offsets)}")
    if not np.all(np.isfinite(off)):
        raise IKError("offsets contain NaN or infinite values")
    n = off.shape[1] - 1
    seg = np.linalg.norm(off[:, 1:], axis=-1)
    if np.any(seg <= 1e-12):
        k = int(np.argwhere(seg <= 1e-12)[0, 1])
        raise IKError(f"zero-length bone: chain joint {k + 1} (of {n + 1}, counting the end) has a zero offset")
    off = np.ascontiguousarray(off)
    q0 = np.asarray(init, np.float64)
    if q0.shape == (n, 4):
        q0 = np.broadcast_to(q0, (N, n, 4))
    if q0.shape != (N, n, 4) or not np.all(np.isfinite(q0)):
        raise IKError(f"init must be finite [{n}, 4] or [{N}, {n}, 4], got {q0.shape}")
    q0 = np.ascontiguousarray(quat.normalize(q0))
    lims = [None] * n if limits is None else list(limits)
    if len(lims) != n:
        raise IKError(f"expected {n} limits (one per chain joint), got {len(lims)}")
    has_ori = target_rotations is not None
    tr = quat.normalize(_vecs("target_rotations", target_rotations, N, 4)) if has_ori else None
    er = quat.normalize(_vecs("end_rotation", end_rotation, N, 4)) if end_rotation is not None else np.broadcast_to(quat.identity(()), (N, 4))
    if start_poses is None:
        starts, seff = np.zeros((0, n, 4)), np.zeros((0, 3))
    else:
        starts = np.ascontiguousarray(np.asarray(start_poses.rotations, np.float64))
        seff = np.ascontiguousarray(np.asarray(start_poses.effectors, np.float64))
        if starts.ndim != 3 or starts.shape[1:] != (n, 4) or seff.shape != (starts.shape[0], 3):
            raise IKError(f"start poses must be [S, {n}, 4] with effectors [S, 3], got {starts.shape}, {seff.shape}")
    from ..limits.joint import FittedLimit

    # a FittedLimit has a compiled step only when all its shapes do (implicit and coupled ones have none)
    numba_ok = all(l is None or isinstance(l, ReachWindowLimit)
                   or (isinstance(l, FittedLimit) and l._packed is not None) for l in lims)
    if backend not in ("auto", "numba", "numpy"):
        raise IKError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}")
    if backend == "numba" and not numba_ok:
        raise IKError("the numba back end handles ReachWindowLimit and FittedLimit limits only; use backend='numpy'")
    args = (tolerance, orientation_tolerance, orientation_weight, int(max_iterations), int(max_restarts),
            int(stall_iterations), float(stall_ratio))
    if backend == "numpy" or not numba_ok:
        return _ccd_numpy(br, bp, off, t, tr, er, q0.copy(), starts, seff, lims, *args)
    pack = _pack_limits([l if isinstance(l, ReachWindowLimit) else None for l in lims])
    fl = pack_fitted_limits(lims)
    out = np.empty((N, n, 4))
    success = np.zeros(N, np.bool_)
    iters = np.zeros(N, np.int64)
    err = np.zeros(N)
    oerr = np.zeros(N)
    rs = np.zeros(N, np.int64)
    trr = np.ascontiguousarray(tr) if has_ori else np.zeros((N, 4))
    _ccd_batch(br, bp, off, t, trr, has_ori, np.ascontiguousarray(er), q0, starts, seff, *pack, fl, *args,
               out, success, iters, err, oerr, rs)
    return CCDResult(out, success, iters, err, oerr, rs)


class CCDSolver:
    """CCD on ``chain`` (joint names or indices, base first, each the parent of the next) of a
    skeleton, moving ``end`` (a descendant of the last chain joint, default its only child).

    ``limits``: a JointLimits-like model (``.joint(j)``), or one per-joint limit (or None) per
    chain joint. ``start_poses``: restart poses (:func:`precompute_start_poses`), or None.
    """

    def __init__(self, skeleton: Skeleton, chain: Sequence[str | int], end: str | int | None = None,
                 limits: Any = None, start_poses: StartPoses | None = None, **options: Any) -> None:
        if not isinstance(skeleton, Skeleton):
            raise IKError(f"skeleton must be a Skeleton, got {type(skeleton).__name__}")
        if len(chain) == 0:
            raise IKError("CCD chain is empty")
        try:
            idx = [skeleton.index(j) for j in chain]
        except Exception as e:
            raise IKError(f"CCD chain: {e}") from None
        for a, b in zip(idx[:-1], idx[1:]):
            if skeleton.parents[b] != a:
                raise IKError(f"CCD chain: {skeleton.names[b]!r} is not a child of {skeleton.names[a]!r}")
        if end is None:
            kids = skeleton.children(idx[-1])
            if len(kids) != 1:
                raise IKError(f"CCD chain: {skeleton.names[idx[-1]]!r} has {len(kids)} children; pass end")
            e = kids[0]
        else:
            try:
                e = skeleton.index(end)
            except Exception as ex:
                raise IKError(f"CCD chain: {ex}") from None
        if skeleton.parents[e] != idx[-1]:
            raise IKError(f"CCD chain: end {skeleton.names[e]!r} is not a child of {skeleton.names[idx[-1]]!r}")
        self.skeleton = skeleton
        self.joints = idx
        self.end = e
        self.limits = _resolve_limits(limits, len(idx), idx)
        self.start_poses = start_poses
        self.options = options

    @property
    def joints_and_end(self) -> list[int]:
        return self.joints + [self.end]

    def reference_pose(self) -> Array:
        """Local rotations ``[n, 4]`` to start from: each limit's ``reference`` (identity if none)."""
        out = quat.identity(len(self.joints))
        for k, lim in enumerate(self.limits):
            ref = getattr(lim, "reference", None)
            if ref is not None and np.shape(ref) == (4,):
                out[k] = np.asarray(ref, np.float64)
        return out

    def solve_arrays(self, rotations: ArrayLike, positions: ArrayLike, targets: ArrayLike,
                     init: ArrayLike | str = "reference", target_rotations: ArrayLike | None = None,
                     **options: Any) -> CCDResult:
        """Solve for every frame of local ``rotations [N, J, 4]``/``positions [N, J, 3]``
        (frames give the base of the chain and its offsets). ``init``: "reference" (the limits'
        reference pose), "current" (the frames' rotations) or ``[n, 4]``/``[N, n, 4]``."""
        rot = np.asarray(rotations, np.float64)
        pos = np.asarray(positions, np.float64)
        J = self.skeleton.num_joints
        if rot.ndim != 3 or rot.shape[1:] != (J, 4) or pos.shape != rot.shape[:1] + (J, 3):
            raise IKError(f"rotations/positions must be [N, {J}, 4]/[N, {J}, 3], got {rot.shape}, {pos.shape}")
        base = int(self.skeleton.parents[self.joints[0]])
        N = rot.shape[0]
        if base >= 0:
            gr, gp = forward_kinematics_arrays(rot[:, : base + 1], pos[:, : base + 1], self.skeleton.parents[: base + 1])
            br, bp = gr[:, base], gp[:, base]
        else:
            br, bp = quat.identity(N), np.zeros((N, 3))
        off = pos[:, self.joints_and_end]
        if isinstance(init, str):
            if init == "reference":
                q0 = self.reference_pose()
            elif init == "current":
                q0 = rot[:, self.joints]
            else:
                raise IKError(f"init must be 'reference', 'current' or an array, got {init!r}")
        else:
            q0 = init
        opts = {**self.options, **options}
        return ccd(br, bp, off, targets, q0, self.limits, target_rotations=target_rotations,
                   end_rotation=rot[:, self.end] if target_rotations is not None else None,
                   start_poses=self.start_poses, **opts)

    def solve(self, motion: Motion, targets: ArrayLike, **kwargs: Any) -> tuple[Motion, CCDResult]:
        """Solve every frame of ``motion``; returns the motion with the chain's rotations replaced."""
        res = self.solve_arrays(motion.rotations, motion.positions, targets, **kwargs)
        new = motion.rotations.copy()
        new[:, self.joints] = res.rotations
        return motion.with_rotations(new), res


def solve_ccd(motion: Motion, chain: Sequence[str | int], targets: ArrayLike, end: str | int | None = None,
              limits: Any = None, start_poses: StartPoses | None = None, **options: Any) -> tuple[Motion, CCDResult]:
    """One-call CCD: ``CCDSolver(motion.skeleton, chain, end, limits, start_poses).solve(motion, targets)``."""
    solve_kw = {k: options.pop(k) for k in ("init", "target_rotations") if k in options}
    return CCDSolver(motion.skeleton, chain, end, limits, start_poses, **options).solve(motion, targets, **solve_kw)

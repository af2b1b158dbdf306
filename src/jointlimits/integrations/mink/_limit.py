"""Fitted joint limits as a mink limit (:class:`FittedLimits`) on an exported MJCF model, and the
MJCF's qpos as local rotations of the skeleton's joints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._optional import require
from ...limits.coupled import CoupledLimit
from ...limits.ellipsoid import Ellipsoid
from ...limits.joint import FittedLimit
from ...limits.model import JointLimits
from ...motion import quat
from ...motion.skeleton import Skeleton
from ._rows import _QL, EPS, Array, IntegrationError, _Joint, _limit_curvature, _limit_rows, _perturbations, _qmul

mink = require("mink", "mink", "the mink integration")
mujoco = require("mujoco", "mink", "the mink integration")


# --------------------------------------------------------------------------- the mink limit


def _body_id(model: Any, name: str) -> int:
    return int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name))


class _EllipsoidBatch:
    """The plain ellipsoid limits of several joints, their rows evaluated in one pass (the same
    functions as :func:`_ellipsoid_rows` after :func:`to_limit_space`, one row per joint)."""

    def __init__(self, limits: Sequence[Any]):
        sign = np.array([1.0, -1.0, -1.0, -1.0])
        self.ref_conj = np.stack([np.asarray(lim.reference, np.float64) * sign for lim in limits])
        shapes: list[Any] = [lim.shape for lim in limits]
        self.c = np.stack([np.asarray(sh.position, np.float64) for sh in shapes])
        self.R = np.stack([np.asarray(sh.rotation, np.float64) for sh in shapes])
        self.sc = np.stack([np.asarray(sh.scale, np.float64) for sh in shapes])
        self.smin = self.sc.min(axis=1)
        # u = (v - c) R / scale as one product per joint
        self.RS = self.R / self.sc[:, None, :]
        self.cRS = self.c[:, None, :] @ self.RS
        # conj(reference) q as a matrix on q, and with the six perturbations on the right
        self.L = (self.ref_conj @ _QL).reshape(-1, 4, 4)
        E = _perturbations()
        self.K = np.einsum("nil,jlk,mk->njmi", self.L, _QL.reshape(4, 4, 4), E).reshape(-1, 4, 28)

    def rows(self, Q: Array) -> Array:
        """Rows ``[n, m]`` of local rotations ``[n, m, 4]`` (joint i's rotations in row i)."""
        return self._rows_rel((self.L[:, None] @ Q[..., None])[..., 0])

    def perturbed_rows(self, q: Array) -> Array:
        """Rows ``[n, 7]`` at local rotations ``[n, 4]`` and their perturbations (as
        :func:`_perturbations`): the reference and the perturbations are one matrix per joint."""
        return self._rows_rel(np.einsum("nj,njc->nc", q, self.K).reshape(len(q), 7, 4))

    def _rows_rel(self, r: Array) -> Array:
        """Rows ``[n, m]`` of rotations relative to the references ``[n, m, 4]``."""
        r = np.where(r[..., :1] < 0.0, -r, r)
        xyz = r[..., 1:]
        n = np.sqrt(np.einsum("...i,...i->...", xyz, xyz))
        big = n > 1e-8
        k = np.where(big, 2.0 * np.arctan2(n, r[..., 0]) / np.where(big, n, 1.0), 2.0)
        u = (xyz * k[..., None]) @ self.RS - self.cRS
        nu = np.sqrt(np.einsum("...i,...i->...", u, u))
        w = u / self.sc[:, None]
        ng = np.sqrt(np.einsum("...i,...i->...", w, w))
        far = nu[:, :1] >= 0.5  # the branch of each joint's unperturbed rotation, as _ellipsoid_rows
        return np.where(far, (nu - 1.0) * nu / np.maximum(ng, 1e-300), 0.5 * self.smin[:, None] * (nu * nu - 1.0))


def _batchable(lim: Any, dofs: NDArray[np.int64]) -> bool:
    return (
        isinstance(lim, FittedLimit)
        and isinstance(lim.shape, Ellipsoid)
        and bool(np.all(np.asarray(lim.shape.scale) > 1e-12))
        and len(dofs) == 3
    )


_Limit: Any = mink.Limit  # mink is imported at run time (the optional extra)


class FittedLimits(_Limit):
    """Fitted joint limits (:class:`~jointlimits.limits.model.JointLimits`) as a mink limit on the
    MJCF model ``model`` that ``jointlimits export --to mujoco`` or ``mujoco-ball`` wrote for the
    same skeleton (bodies are matched to joints by name).

    ``gain`` in (0, 1] and ``min_distance_from_limits`` (radians in limit space, positive keeps
    the pose that far inside) work as in mink's ``ConfigurationLimit``; a row enters the QP when
    the pose is within ``detection_distance`` of its face (None: always).

    The rows are first-order: a step along a curved face (an ellipsoid's, an implicit surface's)
    leaves it by about ``curvature * step**2 / 2``, and a long step can jump a face it did not
    see. With a positive margin each joint therefore also gets a trust region on its tangent step,
    per axis ``|w_i| <= step + d / (2 sqrt(3))``: ``d`` the distance to the margin band (a shorter step
    cannot cross a face) and ``step = sqrt(2 margin / curvature / 3)`` (or ``max_step``), which
    keeps the second-order part within the margin (mink's own ball-joint limit asks for a
    velocity limit for the same reason)."""

    def __init__(
        self,
        model: Any,
        limits: JointLimits,
        gain: float = 0.95,
        min_distance_from_limits: float = 0.0,
        detection_distance: float | None = 0.5,
        max_step: float | None = None,
    ):
        if not 0.0 < gain <= 1.0:
            raise IntegrationError(f"{type(self).__name__} gain must be in the range (0, 1], got {gain}")
        self.model = model
        self.limits = limits
        self.gain = float(gain)
        self.margin = float(min_distance_from_limits)
        self.detection = None if detection_distance is None else float(detection_distance)
        sk = limits.skeleton
        self.joints: list[_Joint] = []
        for j in limits.active():
            name = sk.names[j]
            b = _body_id(model, name)
            if b < 0:
                raise IntegrationError(f"joint {name!r} of the limits has no body of that name in the MJCF model")
            dofs = np.arange(model.body_dofadr[b], model.body_dofadr[b] + model.body_dofnum[b])
            types = {
                int(model.jnt_type[k]) for k in range(model.body_jntadr[b], model.body_jntadr[b] + model.body_jntnum[b])
            }
            if len(dofs) == 0 or not types <= {int(mujoco.mjtJoint.mjJNT_BALL), int(mujoco.mjtJoint.mjJNT_HINGE)}:
                raise IntegrationError(
                    f"body {name!r} must move by a ball joint or hinges (as the mujoco export writes) to take its limit"
                )
            lim = limits.joints[j]
            cp = None
            if isinstance(lim, CoupledLimit):
                cp = _body_id(model, lim.parent)
                if cp < 0:
                    raise IntegrationError(
                        f"coupled joint {name!r}: its parent {lim.parent!r} has no body in the MJCF model"
                    )
            # per axis: |w| <= sqrt(3) step
            safe = float(np.sqrt(2.0 * self.margin / _limit_curvature(lim) / 3.0)) if self.margin > 0 else np.inf
            step = float(max_step) if max_step is not None else safe
            self.joints.append(_Joint(name, b, int(model.body_parentid[b]), dofs, _limit_rows(lim), cp, j, step, safe))
        self._E = _perturbations()
        #: q -> q exp(+-eps e_i) for the seven right factors as one matrix, [4, 7 * 4]
        self._RE = np.einsum("jlk,mk->jml", _QL.reshape(4, 4, 4), self._E).reshape(4, 28)

        #: use the curvature step bound whatever ``max_step`` says (a retargeting loop's settling solves)
        self.safe = False
        self._bodies = np.array([jt.body for jt in self.joints], np.int64)
        self._parents = np.array([jt.parent_body for jt in self.joints], np.int64)
        # plain ellipsoids (the default fit) in one batch; other limits joint by joint
        batch = [i for i, jt in enumerate(self.joints) if _batchable(limits.joints[jt.index], jt.dofs)]
        self._batch = np.array(batch, np.int64)
        self._single = [i for i in range(len(self.joints)) if i not in set(batch)]
        self._ell = _EllipsoidBatch([limits.joints[self.joints[i].index] for i in batch]) if batch else None
        self._batch_dofs = np.array([self.joints[i].dofs for i in batch], np.int64).reshape(len(batch), 3)
        self._steps = np.array([jt.step for jt in self.joints])
        self._safe_steps = np.array([jt.safe_step for jt in self.joints])

    # ------------------------------------------------------------------ evaluation
    def _local(self, data: Any, body: int) -> Array:
        p = int(self.model.body_parentid[body])
        return quat.inv_mul(data.xquat[p], data.xquat[body])

    def _perturbed(self, data: Any, perturb: bool = True) -> Array:
        """Every limited joint's local rotation and its six perturbations, ``[n, 7, 4]`` (one
        batched product: ``conj(parent) body``, then ``q exp(+-eps e_i)``)."""
        q = self._locals(data)
        return (q @ self._RE).reshape(-1, 7, 4) if perturb else q[:, None, :]

    def _locals(self, data: Any) -> Array:
        """Every limited joint's local rotation ``conj(parent) body``, ``[n, 4]``."""
        a, b = data.xquat[self._parents], data.xquat[self._bodies]
        return _qmul(a * np.array([1.0, -1.0, -1.0, -1.0]), b)

    def joint_rows(self, data: Any, joint: _Joint, Q: Array | None = None) -> tuple[Array, Array]:
        """(rows ``s [K]``, tangent gradients ``[K, 3]``) of one joint at the pose in ``data``."""
        if Q is None:
            Q = quat.mul(self._local(data, joint.body)[None], self._E)
        S = joint.rows(Q, self._parent(data, joint))
        g = (S[1:4] - S[4:7]) / (2.0 * EPS)
        return S[0], g.T

    def _rows_and_gradients(self, data: Any, perturb: bool = True) -> tuple[list[Array], list[Array]]:
        """Per joint (in order), its rows ``s [K]`` and tangent gradients ``[K, 3]`` (None
        without ``perturb``)."""
        Q = self._perturbed(data) if perturb else self._perturbed(data, perturb=False)
        n = len(self.joints)
        ss: list[Any] = [None] * n
        gs: list[Any] = [None] * n
        if self._ell is not None:
            S = self._ell.rows(Q[self._batch])
            G = (S[:, 1:4] - S[:, 4:7]) / (2.0 * EPS) if perturb else None
            for k, i in enumerate(self._batch):
                ss[i] = S[k, :1]
                if G is not None:
                    gs[i] = G[k][None]
        for i in self._single:
            jt = self.joints[i]
            S = jt.rows(Q[i], self._parent(data, jt))
            ss[i] = S[0]
            if perturb:
                gs[i] = ((S[1:4] - S[4:7]) / (2.0 * EPS)).T
        return ss, gs

    def signed_distance(self, configuration: Any) -> dict[str, Array]:
        """Per joint name, its rows ``s_k`` (``<= 0`` inside; radians in limit space)."""
        ss, _ = self._rows_and_gradients(configuration.data, perturb=False)
        return {jt.name: s for jt, s in zip(self.joints, ss)}

    def outside(self, configuration: Any) -> bool:
        """Whether any joint is past one of its rows (outside the fitted limits)."""
        return self.largest_row(configuration) > 0.0

    def largest_row(self, configuration: Any) -> float:
        """The largest row over all joints (radians in limit space; ``> -margin``: a row binds)."""
        ss, _ = self._rows_and_gradients(configuration.data, perturb=False)
        return max((float(s.max()) for s in ss), default=-np.inf)

    def _parent(self, data: Any, jt: _Joint) -> Array | None:
        return None if jt.coupled_parent is None else self._local(data, jt.coupled_parent)

    def _bounds(self, s: Array, h: Array, g1: Array, keep: NDArray[np.bool_], step: Array) -> Array:
        """Per joint, the per-axis step bound (see the class): ``s``, ``h`` ``[n]`` the joint's
        largest row and the least ``h`` over its kept rows, ``g1`` that row's |grad|_1."""
        # a step shorter than the distance to the margin band cannot cross a face; past that, the
        # step bound keeps the rows' second-order error within the margin
        b = step + 0.5 * np.maximum(0.0, -s - self.margin) / np.sqrt(3.0)
        # never tighter than the way back in that the rows ask for (the QP stays feasible)
        return np.where(keep, np.maximum(b, 1.01 * (-h) / np.maximum(g1, 1e-12)), b)

    def compute_qp_inequalities(self, configuration: Any, dt: float) -> Any:
        r"""Rows ``G dq <= h``: for each limit row, ``grad^T R^T J_rel dq <= gain (-margin - s)``
        (in the joints' order); then the step bounds (see the class)."""
        del dt  # position-level, as mink's ConfigurationLimit
        data = configuration.data
        nv = self.model.nv
        q = self._locals(data)
        steps = self._safe_steps if self.safe else self._steps
        det = np.inf if self.detection is None else self.detection + self.margin
        Gs, hs, owner, Ts, bs = [], [], [], [], []
        if self._ell is not None:  # one row per joint: the whole batch at once
            ib = self._batch
            S = self._ell.perturbed_rows(q[ib])
            sb = S[:, 0]
            gb = (S[:, 1:4] - S[:, 4:7]) / (2.0 * EPS)
            # the bodies' angular velocities relative to their parents, in their own frames, per own dof
            R = data.xmat[self._bodies[ib]].reshape(-1, 3, 3)
            J = np.einsum("nji,ndj->nid", R, data.cdof[self._batch_dofs, :3])
            a = np.einsum("ni,nid->nd", gb, J)
            keep = sb > -det
            h = self.gain * (-self.margin - sb)
            G = np.zeros((len(ib), nv))
            G[np.arange(len(ib))[:, None], self._batch_dofs] = a
            Gs.append(G[keep])
            hs.append(h[keep])
            owner.append(ib[keep])
            st = steps[ib]
            fin = np.isfinite(st)
            if fin.any():
                b = self._bounds(sb, h, np.abs(gb).sum(1), keep, np.where(fin, st, 0.0))
                sel = fin & (b < 1.0)
                if sel.any():
                    n = int(sel.sum())
                    T = np.zeros((n, 6, nv))
                    rows = np.arange(n)[:, None, None]
                    dofs = self._batch_dofs[sel][:, None, :]
                    T[rows, np.arange(3)[None, :, None], dofs] = J[sel]
                    T[rows, np.arange(3, 6)[None, :, None], dofs] = -J[sel]
                    Ts.append(T.reshape(6 * n, nv))
                    bs.append(np.repeat(b[sel], 6))
        for i in self._single:
            jt = self.joints[i]
            S1 = jt.rows((q[i] @ self._RE).reshape(7, 4), self._parent(data, jt))
            s, g = S1[0], ((S1[1:4] - S1[4:7]) / (2.0 * EPS)).T
            R1 = data.xmat[jt.body].reshape(3, 3)
            J1 = R1.T @ data.cdof[jt.dofs, :3].T
            keep1 = s > -det
            h1 = self.gain * (-self.margin - s)
            if keep1.any():
                G1 = np.zeros((int(keep1.sum()), nv))
                G1[:, jt.dofs] = g[keep1] @ J1
                Gs.append(G1)
                hs.append(h1[keep1])
                owner.append(np.full(len(G1), i))
            if np.isfinite(steps[i]):
                k = int(np.argmin(np.where(keep1, h1, np.inf))) if keep1.any() else 0
                b1 = float(
                    self._bounds(
                        np.array([s.max()]),
                        np.array([h1[k]]),
                        np.array([np.abs(g[k]).sum()]),
                        np.array([bool(keep1.any())]),
                        np.array([steps[i]]),
                    )[0]
                )
                if b1 < 1.0:
                    T1 = np.zeros((6, nv))
                    T1[:3, jt.dofs], T1[3:, jt.dofs] = J1, -J1
                    Ts.append(T1)
                    bs.append(np.full(6, b1))
        G = np.vstack(Gs) if Gs else np.zeros((0, nv))
        h = np.concatenate(hs) if hs else np.zeros(0)
        order = np.argsort(np.concatenate(owner), kind="stable") if owner else np.zeros(0, np.int64)
        G, h = G[order], h[order]
        if Ts:
            G, h = np.vstack([G, *Ts]), np.concatenate([h, *bs])
        if len(h) == 0:
            return mink.Constraint()
        return mink.Constraint(G=G, h=h)


# --------------------------------------------------------------------------- qpos <-> local rotations


def local_rotations(model: Any, qpos: Array, skeleton: Skeleton) -> Array:
    """Local rotations ``[F, J, 4]`` of ``skeleton``'s joints for qpos ``[F, nq]`` of the MJCF
    ``model`` (bodies named after the joints; the root's is its free joint's world rotation, so
    the caller turns it back to the file's up axis). Joints without a body are identity."""
    qp = np.atleast_2d(np.asarray(qpos, np.float64))
    F = qp.shape[0]
    out = quat.identity((F, skeleton.num_joints))
    for j, name in enumerate(skeleton.names):
        b = _body_id(model, name)
        if b < 0:
            continue
        q = np.broadcast_to(np.asarray(model.body_quat[b], np.float64), (F, 4)).copy()
        for k in range(model.body_jntadr[b], model.body_jntadr[b] + model.body_jntnum[b]):
            a = int(model.jnt_qposadr[k])
            t = int(model.jnt_type[k])
            if t == mujoco.mjtJoint.mjJNT_FREE:
                q = qp[:, a + 3 : a + 7].copy()
            elif t == mujoco.mjtJoint.mjJNT_BALL:
                q = quat.mul(q, qp[:, a : a + 4])
            elif t == mujoco.mjtJoint.mjJNT_HINGE:
                q = quat.mul(q, quat.from_angle_axis(qp[:, a], np.asarray(model.jnt_axis[k], np.float64)))
        out[:, j] = quat.normalize(q)
    return out

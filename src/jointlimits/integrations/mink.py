"""Fitted joint limits as a mink limit, and retargeting a clip onto an exported MJCF humanoid.

:class:`FittedLimits` has the interface of mink's ``ConfigurationLimit``: each step it returns
linear inequalities ``G dq <= h`` on the tangent-space displacement ``dq`` (``nv``) that
``mink.solve_ik`` adds to its QP. Per limited joint (a ball joint or three hinges of the MJCF
that ``jointlimits export --to mujoco`` / ``mujoco-ball`` wrote, matched by body name) the limit
gives rows ``s_k(q)`` in limit space, each ``<= 0`` inside (a polytope's faces, an ellipsoid's or
an implicit field's first-order distance, a swing-twist limit's swing rows and twist interval);
their gradient is taken in the joint's tangent space (the body's rotation relative to its parent,
``q exp(w)``, ``w`` in the body frame) and mapped through the joint's columns of the configuration
velocity: ``grad_w(s_k)^T R^T J_rel dq <= gain (-margin - s_k)``. ``gain`` and ``margin`` act as
mink's ``gain`` and ``min_distance_from_limits`` (radians, in limit space). A coupled child's rows
use its parent's current rotation.

The rows' tangent gradients are central differences of the limit's own functions over the seven
rotations ``q exp(+-eps e_i)`` (one batched evaluation for all plain ellipsoid limits, one call
per joint for the others), so every shape family, cover and swing-twist decomposition is
differentiated the same way.

https://kevinzakka.github.io/mink/ (Limit, ConfigurationLimit, solve_ik)
https://mujoco.readthedocs.io/en/stable/APIreference/APItypes.html#mjdata (cdof, xquat, xmat)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._native import _core
from .._optional import require
from ..errors import JointLimitsError
from ..limits.coupled import CoupledLimit
from ..limits.ellipsoid import Ellipsoid
from ..limits.implicit import Implicit
from ..limits.joint import FittedLimit, to_limit_space
from ..limits.kdop import SlabShape
from ..limits.model import JointLimits
from ..limits.shape import Shape
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton, forward_kinematics
from ..motion.units import guess_up_axis, up_vector

mink = require("mink", "mink", "the mink integration")
mujoco = require("mujoco", "mink", "the mink integration")

__all__ = [
    "FittedLimits",
    "IntegrationError",
    "tangent_rows",
    "local_rotations",
    "RetargetSettings",
    "RetargetResult",
    "retarget",
    "qpos_to_motion",
    "tracking_errors",
    "load_model",
    "make_limits",
    "Run",
    "RUNS",
    "run_one",
    "run_three",
]

Array = NDArray[np.float64]

EPS = 1e-6  # central-difference step of the tangent gradients (radians)


class IntegrationError(JointLimitsError, ValueError):
    """A limit or model that the integration cannot use (no matching body, unsupported limit)."""


# --------------------------------------------------------------------------- rows per limit


def _slab_rows(shape: SlabShape) -> Callable[[Array], Array]:
    pos, rot, ax, mins, maxs = shape.slabs()
    m = np.asarray(ax, np.float64) @ np.asarray(rot, np.float64).T  # slab directions in limit space
    off = m @ np.asarray(pos, np.float64)
    hi_ok, lo_ok = np.isfinite(maxs), np.isfinite(mins)
    mh, bh = m[hi_ok], np.asarray(maxs)[hi_ok] + off[hi_ok]
    ml, bl = m[lo_ok], np.asarray(mins)[lo_ok] + off[lo_ok]
    M = np.vstack([mh, -ml])
    b = np.concatenate([bh, -bl])
    n = np.linalg.norm(M, axis=1)
    M, b = M / n[:, None], b / n

    def rows(v: Array) -> Array:
        return v @ M.T - b

    return rows


def _ellipsoid_rows(shape: Ellipsoid) -> Callable[[Array], Array]:
    keep = np.asarray(shape.scale) > 1e-12  # a swing section's ellipse has a zero third semi-axis
    R = np.asarray(shape.rotation, np.float64)[:, keep]
    c = np.asarray(shape.position, np.float64)
    sc = np.asarray(shape.scale, np.float64)[keep]
    smin = float(sc.min())

    def rows(v: Array) -> Array:
        u = ((v - c) @ R) / sc
        nu = np.linalg.norm(u, axis=1)
        ng = np.linalg.norm(u / sc, axis=1)
        if nu[0] >= 0.5:  # first-order distance to the surface |u| = 1 (unit gradient on it)
            return ((nu - 1.0) * nu / np.maximum(ng, 1e-300))[:, None]
        # deep inside: a smooth stand-in (|u| has a kink at the centre), at least half smin away
        return (0.5 * smin * (nu * nu - 1.0))[:, None]

    return rows


def _field_rows(
    field_fn: Callable[[Array], Array], project: Callable[[Array], Array], threshold: float
) -> Callable[[Array], Array]:
    """An implicit field's first-order distance ``(threshold - F) / |grad F|`` near and inside the
    surface; far outside (a vanishing field) the distance to the projection instead."""

    def rows(v: Array) -> Array:
        fv = field_fn(v)
        F, g = fv[:, 0], np.linalg.norm(fv[:, 1:], axis=1)
        if F[0] >= 0.5 * threshold and g[0] > 1e-9:
            return ((threshold - F) / np.maximum(g, 1e-12))[:, None]
        return np.linalg.norm(v - project(v), axis=1)[:, None]

    return rows


def _curvature(shape: Any) -> float:
    """An upper estimate of the largest curvature (1/radians) of a shape's surface in limit space,
    for the step bound of :class:`FittedLimits` (the log map bends even flat faces a little)."""
    if isinstance(shape, Ellipsoid):
        sc = np.asarray(shape.scale, np.float64)
        sc = sc[sc > 1e-12]
        return float(sc.max() / sc.min() ** 2)
    if isinstance(shape, Implicit):
        return 1.0 / float(shape.cell)
    if isinstance(shape, CoupledLimit):
        return 1.0 / float(shape.fcell or shape.base_shape.cell)
    return 1.0 / np.pi


def _limit_curvature(limit: Any) -> float:
    if isinstance(limit, CoupledLimit):
        return _curvature(limit)
    if limit.shape is None:
        return max(_curvature(limit.swing), 1.0 / np.pi)
    return _curvature(limit.shape)


def _shape_rows(shape: Shape) -> Callable[[Array], Array]:
    if isinstance(shape, SlabShape):
        return _slab_rows(shape)
    if isinstance(shape, Ellipsoid):
        return _ellipsoid_rows(shape)
    if isinstance(shape, Implicit):
        return _field_rows(lambda v: shape.value(v).reshape(-1, 4), shape.project, shape.threshold)
    raise IntegrationError(f"no mink rows for a {getattr(shape, 'kind', type(shape).__name__)!r} shape")


@dataclass
class _Joint:
    """One limited joint: its MJCF body, parent body, dofs, and its rows function of local
    rotations ``[N, 4]`` (and the parent's local rotation for a coupled child)."""

    name: str
    body: int
    parent_body: int
    dofs: NDArray[np.int64]
    rows: Callable[[Array, Array | None], Array]
    coupled_parent: int | None = None  # the body whose local rotation conditions the limit
    index: int = 0  # the joint's index in the limits' skeleton
    step: float = np.inf  # the largest tangent step per QP solve near the limit (radians)
    safe_step: float = np.inf  # the step bound from the limit's curvature and the margin


def _limit_rows(limit: Any) -> Callable[[Array, Array | None], Array]:
    """Rows ``[N, K]`` (``<= 0`` inside) of local rotations ``[N, 4]`` for one joint's limit."""
    if isinstance(limit, CoupledLimit):
        base = limit.base
        s = limit.frame
        threshold = float(s.threshold)

        def coupled(q: Array, parent: Array | None) -> Array:
            n = len(q)
            ids, ws = limit.weights(np.repeat(np.asarray(parent).reshape(1, 4), n, axis=0))
            v = to_limit_space(q, base.reference)
            blend = limit._proxy(np.repeat(np.asarray(parent).reshape(1, 4), n, axis=0), n).shape

            def field_fn(p: Array) -> Array:
                out = np.empty((len(p), 4))
                # the blended field of the parent's cell (the limit's own arrays, as its project does)
                _core.implicit_field(
                    np.ascontiguousarray(p),
                    s.position,
                    s.rotation,
                    s.origin,
                    s.cell,
                    limit._F,
                    limit._cmax,
                    ids,
                    ws,
                    out,
                )
                return out

            return _field_rows(field_fn, blend.project, threshold)(v)

        return coupled
    if not isinstance(limit, FittedLimit):
        raise IntegrationError(f"no mink rows for a {getattr(limit, 'kind', type(limit).__name__)!r} limit")
    if limit.shape is not None:
        shape_rows = _shape_rows(limit.shape)
        ref = limit.reference

        def plain(q: Array, parent: Array | None) -> Array:
            return shape_rows(to_limit_space(q, ref))

        return plain
    swing, twist = limit.swing, limit.twist
    assert swing is not None and twist is not None  # a FittedLimit has a shape or both parts
    section = swing if isinstance(swing, SlabShape) else swing.swing_section(limit.twist_axis)
    swing_rows = _shape_rows(section)
    tlo, thi = twist.twist_interval(limit.twist_axis)
    axis = limit.twist_axis

    def st(q: Array, parent: Array | None) -> Array:
        vs, vt = limit.limit_space(q)
        t = vt @ axis
        cols = [swing_rows(vs)]
        if np.isfinite(thi):
            cols.append((t - thi)[:, None])
        if np.isfinite(tlo):
            cols.append((tlo - t)[:, None])
        return np.concatenate(cols, axis=1)

    return st


#: the Hamilton product as a bilinear map: (a b)_i = sum_jk a_j _QL[j, 4 i + k] b_k
_QL = np.stack([quat.mul(np.broadcast_to(np.eye(4)[j], (4, 4)), np.eye(4)).T.reshape(16) for j in range(4)])


def _qmul(a: Array, b: Array) -> Array:
    """Hamilton products of broadcast quaternion arrays (w, x, y, z), without normalising (two
    matrix products: the left factors' product matrices, then the right factors; the small
    batches of the per-solve rows are dominated by per-call overhead)."""
    L = (a @ _QL).reshape(*a.shape[:-1], 4, 4)
    return (L @ b[..., None])[..., 0]


def _perturbations(eps: float = EPS) -> Array:
    """The identity and ``exp(+-eps e_i)`` as quaternions ``[7, 4]`` (right factors)."""
    v = np.zeros((7, 3))
    for i in range(3):
        v[1 + i, i], v[4 + i, i] = eps, -eps
    return quat.from_scaled_angle_axis(v)


def tangent_rows(limit: Any, rotation: Array, parent: Array | None = None) -> tuple[Array, Array]:
    """A joint limit's rows at one local rotation ``[4]``, for any solver: ``(s [K], grad [K, 3])``
    with ``s <= 0`` inside (radians in limit space) and ``grad`` the gradient with respect to a
    rotation vector ``w`` applied on the right, ``q exp(w)`` (the body frame). A step is then
    limited by ``grad @ w <= gain * (-margin - s)``; ``parent`` is a coupled child's parent's
    local rotation. (Rebuilds the rows each call; :class:`FittedLimits` keeps them.)"""
    q = quat.mul(np.asarray(rotation, np.float64).reshape(1, 4), _perturbations())
    S = _limit_rows(limit)(q, None if parent is None else np.asarray(parent, np.float64).reshape(4))
    return S[0], ((S[1:4] - S[4:7]) / (2.0 * EPS)).T


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


# --------------------------------------------------------------------------- retargeting


@dataclass
class RetargetSettings:
    """Tasks and weights of :func:`retarget` (costs as mink's FrameTask costs)."""

    root_cost: float = 1.0
    end_effector_cost: float = 1.0
    end_effector_orientation_cost: float = 0.1
    joint_cost: float = 0.3
    posture_cost: float = 1e-3
    damping: float = 1e-3
    iterations: int = 3
    first_iterations: int = 30
    settle: int = 5  # extra solves, each with FittedLimits' curvature step bound, while a joint is outside
    active_iterations: int = 0  # extra solves while a FittedLimits row is within ACTIVE_BAND of its margin
    solver: str = "daqp"
    end_effectors: tuple[str, ...] = ("Head", "LeftHand", "RightHand", "LeftFoot", "RightFoot", "LeftToe", "RightToe")


@dataclass
class RetargetResult:
    """Solved qpos ``[F, nq]``, the motion on the model's skeleton, the targets ``[F, B, 3]``
    (world, metres) of the tracked bodies and the solve's CPU seconds."""

    qpos: Array
    motion: Motion
    bodies: list[str]
    targets: Array
    end_effectors: list[int]
    seconds: float


def _world_frame(source: Motion, model: Any) -> tuple[Array, float]:
    """(up rotation to MuJoCo's z-up, metres per file unit) from the source clip and the model's
    bone lengths (the median ratio over bones, so another subject's clip scales to the body)."""
    up_quat = quat.between(up_vector(guess_up_axis(source)), np.array([0.0, 0.0, 1.0]))
    sk = source.skeleton
    ratios = []
    for j in range(1, sk.num_joints):
        b = _body_id(model, sk.names[j])
        n = float(np.linalg.norm(sk.offsets[j]))
        if b >= 0 and n > 1e-9:
            ratios.append(float(np.linalg.norm(model.body_pos[b])) / n)
    if not ratios:
        raise IntegrationError("the clip's joints have no bodies of the same names in the MJCF model")
    return up_quat, float(np.median(ratios))


#: a FittedLimits row within this of its margin band counts as binding (radians)
ACTIVE_BAND = 0.01


def retarget(
    source: Motion,
    model: Any,
    skeleton: Skeleton,
    limits: Sequence[Any] = (),
    settings: RetargetSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RetargetResult:
    """Retarget ``source`` onto the MJCF ``model`` (bodies named as ``skeleton``'s joints) with mink:
    per frame a root frame task (position and orientation), end-effector frame tasks, position
    tasks on every other joint and a light posture task, solved ``iterations`` times (warm start
    from the previous frame) under ``limits`` (mink limits, e.g. :class:`FittedLimits` or
    ``mink.ConfigurationLimit``). With :class:`FittedLimits`, a frame that ends outside gets up to
    ``settle`` more solves under the curvature step bound, and one where a row binds (within
    :data:`ACTIVE_BAND` of its margin) ``active_iterations`` more (a binding row slows the solves'
    convergence; 0 by default, so that every run gets the same solves). The result's motion is on
    ``skeleton`` with the source's units."""
    st = settings or RetargetSettings()
    import time

    up_quat, mpu = _world_frame(source, model)
    gr, gp = forward_kinematics(source)
    names = [n for n in source.skeleton.names if _body_id(model, n) >= 0]
    if source.skeleton.names[0] not in names:
        raise IntegrationError(f"the MJCF model has no body {source.skeleton.names[0]!r} for the clip's root")
    src_idx = [source.skeleton.index(n) for n in names]
    targets = quat.mul_vec(up_quat, gp[:, src_idx] * mpu)
    target_rot = quat.mul(up_quat, gr[:, src_idx])
    ee = [k for k, n in enumerate(names) if n in st.end_effectors]
    config = mink.Configuration(model)
    tasks: list[Any] = []
    frame_tasks = []
    for k, n in enumerate(names):
        if k == 0:
            t = mink.FrameTask(n, "body", position_cost=st.root_cost, orientation_cost=st.root_cost)
        elif k in ee:
            t = mink.FrameTask(
                n, "body", position_cost=st.end_effector_cost, orientation_cost=st.end_effector_orientation_cost
            )
        else:
            t = mink.FrameTask(n, "body", position_cost=st.joint_cost, orientation_cost=0.0)
        frame_tasks.append(t)
    tasks += frame_tasks
    posture = mink.PostureTask(model, cost=st.posture_cost)
    tasks.append(posture)
    F = source.num_frames
    qpos = np.empty((F, model.nq))
    q = model.qpos0.copy()
    free = [k for k in range(model.njnt) if model.jnt_type[k] == mujoco.mjtJoint.mjJNT_FREE]
    if free:
        a = int(model.jnt_qposadr[free[0]])
        q[a : a + 3] = targets[0, 0]
        q[a + 3 : a + 7] = target_rot[0, 0]
    config.update(q)
    lim = list(limits)
    fitted = [x for x in lim if isinstance(x, FittedLimits)]
    t0 = time.process_time()
    for f in range(F):
        for k, t in enumerate(frame_tasks):
            t.set_target(mink.SE3.from_rotation_and_translation(mink.SO3(target_rot[f, k]), targets[f, k]))
        posture.set_target(config.q)
        for _ in range(st.first_iterations if f == 0 else st.iterations):
            vel = mink.solve_ik(config, tasks, 1.0, st.solver, damping=st.damping, limits=lim)
            config.integrate_inplace(vel, 1.0)
        # binding rows slow the solves' convergence: optionally spend more solves on those frames
        for _ in range(st.active_iterations if f else 0):
            if not fitted or max(fl.largest_row(config) + fl.margin for fl in fitted) < -ACTIVE_BAND:
                break
            vel = mink.solve_ik(config, tasks, 1.0, st.solver, damping=st.damping, limits=lim)
            config.integrate_inplace(vel, 1.0)
        # a long last step may end a little past a curved face: settle with the curvature bound
        for _ in range(st.settle):
            if not any(fl.outside(config) for fl in fitted):
                break
            for fl in fitted:
                fl.safe = True
            vel = mink.solve_ik(config, tasks, 1.0, st.solver, damping=st.damping, limits=lim)
            config.integrate_inplace(vel, 1.0)
            for fl in fitted:
                fl.safe = False
        qpos[f] = config.q
        if progress is not None:
            progress(f + 1, F)
    seconds = time.process_time() - t0
    motion = qpos_to_motion(model, qpos, skeleton, up_quat, mpu, source.frame_time)
    return RetargetResult(qpos, motion, names, targets, ee, seconds)


def qpos_to_motion(
    model: Any, qpos: Array, skeleton: Skeleton, up_quat: Array, mpu: float, frame_time: float
) -> Motion:
    """The motion on ``skeleton`` (file units, the file's up axis) of qpos ``[F, nq]``."""
    rot = local_rotations(model, qpos, skeleton)
    rot[:, 0] = quat.inv_mul(up_quat, rot[:, 0])
    pos = np.repeat(skeleton.offsets[None], len(qpos), axis=0).astype(np.float64)
    free = [k for k in range(model.njnt) if model.jnt_type[k] == mujoco.mjtJoint.mjJNT_FREE]
    if free:
        a = int(model.jnt_qposadr[free[0]])
        pos[:, 0] = quat.inv_mul_vec(up_quat, qpos[:, a : a + 3]) / mpu
    return Motion(skeleton, rot, pos, frame_time)


def tracking_errors(model: Any, result: RetargetResult) -> tuple[float, float]:
    """Mean end-effector and mean joint position errors (metres) of a retargeted result against
    its targets (forward kinematics of the solved qpos)."""
    data = mujoco.MjData(model)
    ids = [_body_id(model, n) for n in result.bodies]
    pos = np.empty(result.targets.shape)
    for f, q in enumerate(result.qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        pos[f] = data.xpos[ids]
    err = np.linalg.norm(pos - result.targets, axis=-1)
    ee = result.end_effectors
    others = [k for k in range(len(ids)) if k not in ee and k != 0]
    return float(err[:, ee].mean()) if ee else 0.0, float(err[:, others].mean()) if others else 0.0


def load_model(path: str | Any) -> Any:
    """The ``mujoco.MjModel`` of an MJCF file (IntegrationError, one line, if MuJoCo rejects it)."""
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise IntegrationError(f"{path}: not an MJCF model MuJoCo loads ({str(e).splitlines()[0]})") from None


@dataclass
class Run:
    """One retargeting run: the model, the result, joint-frames outside the fitted limits, mean
    end-effector and joint-position errors (metres) and frames per CPU second."""

    model: Any
    result: RetargetResult
    outside: int
    ee_error: float
    joint_error: float
    fps: float


#: the three runs of the example and the benchmark
RUNS = ("none", "box", "fitted")


#: retargeting's margin (radians) and step bound: a fast clip's first solve of a frame turns a joint
#: by more than 0.2 rad per axis (a 0.2 rad bound bit there and lagged: dance1_subject2's joint error
#: 1.55 mm against 1.28 mm with 0.5), so 0.5 rad, which still stops multi-radian jumps across a
#: face; what a long step leaves outside, the settling solves under the curvature bound take back
RETARGET_MARGIN = 0.005
RETARGET_MAX_STEP = 0.5


def make_limits(
    model: Any,
    mode: str,
    limits: JointLimits,
    margin: float = RETARGET_MARGIN,
    gain: float = 0.95,
    max_step: float | None = RETARGET_MAX_STEP,
) -> list[Any]:
    """The mink limits of a run: ``none``, ``box`` (mink's ConfigurationLimit from the MJCF's
    ranges) or ``fitted`` (:class:`FittedLimits`; ``max_step`` None: the curvature bound)."""
    if mode == "none":
        return []
    if mode == "box":
        return [mink.ConfigurationLimit(model, gain=gain)]
    if mode == "fitted":
        return [FittedLimits(model, limits, gain=gain, min_distance_from_limits=margin, max_step=max_step)]
    raise IntegrationError(f"unknown limits mode {mode!r}; expected one of {', '.join(RUNS)}")


def run_one(
    source: Motion,
    model: Any,
    limits: JointLimits,
    mode: str,
    settings: RetargetSettings | None = None,
    margin: float = RETARGET_MARGIN,
) -> Run:
    """Retarget ``source`` under one kind of limits and measure it against the fitted limits."""
    res = retarget(source, model, limits.skeleton, make_limits(model, mode, limits, margin), settings)
    outside = int((~limits.contains(res.motion.rotations)).sum())
    ee, jp = tracking_errors(model, res)
    return Run(model, res, outside, ee, jp, source.num_frames / max(res.seconds, 1e-9))


def run_three(
    source: Motion, mjcf: str | Any, limits: JointLimits, settings: RetargetSettings | None = None
) -> dict[str, Run]:
    """The three runs (:data:`RUNS`) with the same tasks and weights."""
    model = load_model(mjcf)
    return {mode: run_one(source, model, limits, mode, settings) for mode in RUNS}

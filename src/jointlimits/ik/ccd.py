"""Cyclic coordinate descent (CCD) IK with joint limits and restarts (Blow, 2002).

Each sweep visits the chain joints from the end back to the base; joint i turns by the simple
rotation ``between(e - p_i, t - p_i)`` that swings the end effector e toward the target t (plus,
with an orientation target, the twist about ``t - p_i`` that best aligns the end's rotation,
which leaves its position alone), and the result is immediately projected into the joint's
limit. When the error stops shrinking (the solver grinds against a limit) it restarts from one
of a few precomputed start poses, nearest effector first (:func:`precompute_start_poses`
clusters them from training clips with k-means). The best pose found is returned.

Two back ends run the same algorithm: the C++ core (used when every limit is a
:class:`~jointlimits.limits.reach.ReachWindowLimit`, a :class:`~jointlimits.limits.model.FittedLimit` with a
compiled form (box, oriented box, ellipsoid or k-DOP, whole or swing-twist) or ``None``; big
batches run on every core) and a numpy one, vectorised over the batch, for any limit object with
``.project(q [..., 4])``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._native import _core
from ..errors import IKError
from ..limits._kernels.fused import step
from ..limits.joint import FittedLimit
from ..limits.reach import ReachWindowLimit
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton
from ._ccd_numpy import chain_fk as _chain_fk
from ._ccd_numpy import solve_numpy

__all__ = ["CCDResult", "StartPoses", "CCDSolver", "ccd", "solve_ccd", "precompute_start_poses", "project_fitted"]

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


def precompute_start_poses(
    local_rotations: ArrayLike,
    offsets: ArrayLike,
    count: int = 6,
    limits: Any = None,
    seed: int = 0,
    iterations: int = 50,
) -> StartPoses:
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
    if hasattr(limits, "joint") and callable(limits.joint) and not hasattr(limits, "project_one"):
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


# --------------------------------------------------------------------------- compiled back end
def project_fitted(limit: Any, rotations: ArrayLike) -> Array:
    """``limit.project(rotations)`` of a ``FittedLimit`` through the compiled step CCD uses
    (``[..., 4]`` -> ``[..., 4]``, hard, no softening); tests check it against the reference."""
    return step(limit.compiled(), np.asarray(rotations, np.float64), None)[0]


def _compiled_limits(lims: Sequence[Any]) -> list:
    """Each chain joint's ``compiled()`` limit (None for a free joint), as the C++ solver reads them."""
    return [None if l is None else l.compiled() for l in lims]


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


def _compiled_ok(lims: Sequence[Any]) -> bool:
    """Whether the compiled back end handles every limit: reach windows, fitted limits whose
    shapes all have a compiled step (implicit and coupled ones have none) and free joints."""
    return all(l is None or (isinstance(l, (ReachWindowLimit, FittedLimit)) and l.compiled() is not None) for l in lims)


_NO_STARTS: dict[int, tuple[Array, Array]] = {}


def _ccd_direct(
    base_rotation,
    base_position,
    offsets,
    targets,
    init,
    limits,
    target_rotations,
    end_rotation,
    start_poses,
    tolerance,
    orientation_tolerance,
    orientation_weight,
    max_iterations,
    max_restarts,
    stall_iterations,
    stall_ratio,
) -> CCDResult | None:
    """The compiled solve in one C++ call (it checks, normalises and broadcasts the arrays
    itself), or None when anything needs the checked path of :func:`ccd`: inputs that are not
    float64 arrays of the accepted shapes, bad values, limits the compiled back end lacks."""
    shape = getattr(offsets, "shape", None)
    if shape is None or len(shape) not in (2, 3):
        return None
    n = shape[-2] - 1
    lims = [None] * n if limits is None else limits
    if len(lims) != n or not _compiled_ok(lims):
        return None
    if start_poses is None:
        if n not in _NO_STARTS:
            _NO_STARTS[n] = (np.zeros((0, n, 4)), np.zeros((0, 3)))
        starts, seff = _NO_STARTS[n]
    else:
        starts = np.ascontiguousarray(start_poses.rotations, np.float64)
        seff = np.ascontiguousarray(start_poses.effectors, np.float64)
    try:
        r = _core.ccd_solve(
            targets,
            base_rotation,
            base_position,
            offsets,
            init,
            target_rotations,
            end_rotation,
            starts,
            seff,
            _compiled_limits(lims),
            tolerance,
            orientation_tolerance,
            orientation_weight,
            int(max_iterations),
            int(max_restarts),
            int(stall_iterations),
            float(stall_ratio),
        )
    except TypeError:  # options of the wrong type: the checked path reports them
        return None
    if r is None:
        return None
    # the binding is typed ``object``: a 6-tuple of arrays, the fields of CCDResult in order
    return CCDResult(*cast("tuple[Array, NDArray[np.bool_], NDArray[np.int64], Array, Array, NDArray[np.int64]]", r))


def ccd(
    base_rotation: ArrayLike,
    base_position: ArrayLike,
    offsets: ArrayLike,
    targets: ArrayLike,
    init: ArrayLike,
    limits: Sequence[Any] | None = None,
    target_rotations: ArrayLike | None = None,
    end_rotation: ArrayLike | None = None,
    start_poses: StartPoses | None = None,
    tolerance: float = 0.1,
    orientation_tolerance: float = 0.01,
    orientation_weight: float = 1.0,
    max_iterations: int = 100,
    max_restarts: int = 4,
    stall_iterations: int = 5,
    stall_ratio: float = 0.002,
    backend: str = "auto",
) -> CCDResult:
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
    ``backend``: "auto" (compiled when every limit is a ReachWindowLimit, a FittedLimit of a
    ``JointLimits`` model, or None), "compiled" or "numpy".
    """
    limits = None if limits is None else list(limits)
    if backend == "auto":
        r = _ccd_direct(
            base_rotation,
            base_position,
            offsets,
            targets,
            init,
            limits,
            target_rotations,
            end_rotation,
            start_poses,
            tolerance,
            orientation_tolerance,
            orientation_weight,
            max_iterations,
            max_restarts,
            stall_iterations,
            stall_ratio,
        )
        if r is not None:
            return r
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
    tr = quat.normalize(_vecs("target_rotations", target_rotations, N, 4)) if target_rotations is not None else None
    has_ori = tr is not None
    er = (
        quat.normalize(_vecs("end_rotation", end_rotation, N, 4))
        if end_rotation is not None
        else np.broadcast_to(quat.identity(()), (N, 4))
    )
    if start_poses is None:
        starts, seff = np.zeros((0, n, 4)), np.zeros((0, 3))
    else:
        starts = np.ascontiguousarray(np.asarray(start_poses.rotations, np.float64))
        seff = np.ascontiguousarray(np.asarray(start_poses.effectors, np.float64))
        if starts.ndim != 3 or starts.shape[1:] != (n, 4) or seff.shape != (starts.shape[0], 3):
            raise IKError(f"start poses must be [S, {n}, 4] with effectors [S, 3], got {starts.shape}, {seff.shape}")
    compiled_ok = _compiled_ok(lims)
    # "numba" is the old name of the compiled back end, still accepted
    if backend not in ("auto", "compiled", "numba", "numpy"):
        raise IKError(f"backend must be 'auto', 'compiled' or 'numpy', got {backend!r}")
    if backend in ("compiled", "numba") and not compiled_ok:
        raise IKError("the compiled back end handles ReachWindowLimit and FittedLimit limits only; use backend='numpy'")
    args = (
        tolerance,
        orientation_tolerance,
        orientation_weight,
        int(max_iterations),
        int(max_restarts),
        int(stall_iterations),
        float(stall_ratio),
    )
    if backend == "numpy" or not compiled_ok:
        return CCDResult(*solve_numpy(br, bp, off, t, tr, er, q0.copy(), starts, seff, lims, *args))
    out = np.empty((N, n, 4))
    success = np.zeros(N, np.bool_)
    iters = np.zeros(N, np.int64)
    err = np.zeros(N)
    oerr = np.zeros(N)
    rs = np.zeros(N, np.int64)
    trr = np.ascontiguousarray(tr) if has_ori else np.zeros((N, 4))
    _core.ccd_batch(
        br,
        bp,
        off,
        t,
        trr,
        has_ori,
        np.ascontiguousarray(er),
        q0,
        starts,
        seff,
        _compiled_limits(lims),
        *args,
        out,
        success,
        iters,
        err,
        oerr,
        rs,
    )
    return CCDResult(out, success, iters, err, oerr, rs)


class CCDSolver:
    """CCD on ``chain`` (joint names or indices, base first, each the parent of the next) of a
    skeleton, moving ``end`` (a descendant of the last chain joint, default its only child).

    ``limits``: a JointLimits-like model (``.joint(j)``), or one per-joint limit (or None) per
    chain joint. ``start_poses``: restart poses (:func:`precompute_start_poses`), or None.
    """

    def __init__(
        self,
        skeleton: Skeleton,
        chain: Sequence[str | int],
        end: str | int | None = None,
        limits: Any = None,
        start_poses: StartPoses | None = None,
        **options: Any,
    ) -> None:
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
            end_idx = kids[0]
        else:
            try:
                end_idx = skeleton.index(end)
            except Exception as ex:
                raise IKError(f"CCD chain: {ex}") from None
        if skeleton.parents[end_idx] != idx[-1]:
            raise IKError(f"CCD chain: end {skeleton.names[end_idx]!r} is not a child of {skeleton.names[idx[-1]]!r}")
        self.skeleton = skeleton
        self.joints = idx
        self.end = end_idx
        self.limits = _resolve_limits(limits, len(idx), idx)
        self.start_poses = start_poses
        self.options = options
        # per-call work done once: the chain's columns, the base's ancestors (root first) for its
        # global transform, and the reference pose of the limits it was built from
        self._chain_cols = np.array(idx + [end_idx], np.intp)
        path, a = [], int(skeleton.parents[idx[0]])
        while a >= 0:
            path.append(a)
            a = int(skeleton.parents[a])
        self._base_path = np.array(path[::-1], np.intp)
        self._base_parents = np.arange(-1, len(path) - 1, dtype=np.int64)
        self._reference: tuple[tuple, Array] | None = None

    @property
    def joints_and_end(self) -> list[int]:
        return self.joints + [self.end]

    def reference_pose(self) -> Array:
        """Local rotations ``[n, 4]`` to start from: each limit's ``reference`` (identity if none)."""
        return self._reference_pose().copy()

    def _reference_pose(self) -> Array:
        key = tuple(getattr(lim, "reference", None) for lim in self.limits)
        if (
            self._reference is not None
            and len(key) == len(self._reference[0])
            and all(a is b for a, b in zip(key, self._reference[0]))
        ):
            return self._reference[1]
        out = quat.identity(len(self.joints))
        for k, lim in enumerate(self.limits):
            ref = getattr(lim, "reference", None)
            if ref is not None and np.shape(ref) == (4,):
                out[k] = np.asarray(ref, np.float64)
        self._reference = (key, out)
        return out

    def solve_arrays(
        self,
        rotations: ArrayLike,
        positions: ArrayLike,
        targets: ArrayLike,
        init: ArrayLike | str = "reference",
        target_rotations: ArrayLike | None = None,
        **options: Any,
    ) -> CCDResult:
        """Solve for every frame of local ``rotations [N, J, 4]``/``positions [N, J, 3]``
        (frames give the base of the chain and its offsets). ``init``: "reference" (the limits'
        reference pose), "current" (the frames' rotations) or ``[n, 4]``/``[N, n, 4]``."""
        rot = np.asarray(rotations, np.float64)
        pos = np.asarray(positions, np.float64)
        J = self.skeleton.num_joints
        if rot.ndim != 3 or rot.shape[1:] != (J, 4) or pos.shape != rot.shape[:1] + (J, 3):
            raise IKError(f"rotations/positions must be [N, {J}, 4]/[N, {J}, 3], got {rot.shape}, {pos.shape}")
        N = rot.shape[0]
        if self._base_path.size:
            # forward kinematics of the base's ancestors only (the same products in the same order)
            lr = np.ascontiguousarray(rot[:, self._base_path])
            lp = np.ascontiguousarray(pos[:, self._base_path])
            gr, gp = np.empty(lr.shape), np.empty(lp.shape)
            _core.forward_kinematics(lr, lp, self._base_parents, gr, gp)
            br, bp = np.ascontiguousarray(gr[:, -1]), np.ascontiguousarray(gp[:, -1])
        else:
            br, bp = quat.identity(N), np.zeros((N, 3))
        off = np.ascontiguousarray(pos[:, self._chain_cols])
        q0: ArrayLike
        if isinstance(init, str):
            if init == "reference":
                q0 = self._reference_pose()
            elif init == "current":
                q0 = np.ascontiguousarray(rot[:, self.joints])
            else:
                raise IKError(f"init must be 'reference', 'current' or an array, got {init!r}")
        else:
            q0 = init
        opts = {**self.options, **options}
        return ccd(
            br,
            bp,
            off,
            targets,
            q0,
            self.limits,
            target_rotations=target_rotations,
            end_rotation=np.ascontiguousarray(rot[:, self.end]) if target_rotations is not None else None,
            start_poses=self.start_poses,
            **opts,
        )

    def solve(self, motion: Motion, targets: ArrayLike, **kwargs: Any) -> tuple[Motion, CCDResult]:
        """Solve every frame of ``motion``; returns the motion with the chain's rotations replaced."""
        res = self.solve_arrays(motion.rotations, motion.positions, targets, **kwargs)
        new = motion.rotations.copy()
        new[:, self.joints] = res.rotations
        return motion.with_rotations(new), res


def solve_ccd(
    motion: Motion,
    chain: Sequence[str | int],
    targets: ArrayLike,
    end: str | int | None = None,
    limits: Any = None,
    start_poses: StartPoses | None = None,
    **options: Any,
) -> tuple[Motion, CCDResult]:
    """One-call CCD: ``CCDSolver(motion.skeleton, chain, end, limits, start_poses).solve(motion, targets)``."""
    solve_kw = {k: options.pop(k) for k in ("init", "target_rotations") if k in options}
    return CCDSolver(motion.skeleton, chain, end, limits, start_poses, **options).solve(motion, targets, **solve_kw)

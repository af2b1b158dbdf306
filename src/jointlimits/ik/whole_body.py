"""Whole-body IK: damped least squares over a whole skeleton, joint limits first.

The task-priority scheme of the hierarchical joint-limits work (Herda et al., after Baerlocher and
Boulic): joint limits are the task of highest priority, the observed data come next, and a weak
pull toward a rest (or previous) posture comes last; it decides what the data cannot, such as
the twist of a bone about itself, which joint positions do not observe.

Unknowns per pose: the root translation and one rotation increment per joint, expressed as a
rotation vector ``w_a`` in world space about the joint's pivot (it turns the joint's whole
subtree). For a position target on joint k the Jacobian block of joint a (an ancestor of k) is
``w_a x (p_k - p_a)``; for an orientation target on joint k it is the identity for k and every
ancestor. One step solves the damped normal equations

    (J^T W J + mu P + lambda I) dx = J^T W e + mu P r_posture

per pose in a small compiled kernel (``_core.dls_normal_step``, a flat loop over poses with a
Cholesky solve); everything else is numpy over the whole batch.

Limits (top priority) by the clamping loop: after each step the pose is projected into the
limits with ``limits.project`` on whole poses (so a coupled model projects parent before child);
a joint the projection moved is clamped, and in the next step its motion along the blocked
direction is removed from the problem (its Jacobian columns are projected onto the rest of its
freedom), so the other joints solve the remaining tasks in what is left. Every pose the solver
accepts has been projected: the result is always inside the limits.

Adaptive damping (Levenberg-Marquardt): each pose keeps its own ``lambda``; a step that does not
lower the pose's task error is rejected and ``lambda`` raised, an accepted one lowers it. Near
singularities (a stretched limb, an unreachable target) steps fail and the damping grows there
only, so those poses stay stable while the others converge at full speed.

Start: when no initial pose is given, a closed-form guess per bone from the observed bone
directions (top down, vectorised over poses): a bone with one observed child takes the swing
``between`` its posture direction and the observed one (the posture keeps its twist); a joint
with several observed children (hips, chest) is fitted to all of them at once (Kabsch with a
pull toward the posture). The DLS iterations then refine the whole body jointly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import IKError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton, forward_kinematics_arrays
from ._whole_body_dls import iterate
from ._whole_body_start import initial_guess, root_guess

__all__ = ["WholeBodyIK", "WholeBodyResult", "whole_body_ik"]

Array = NDArray[np.float64]


@dataclass
class WholeBodyResult:
    """Solved poses of a batch.

    ``rotations``: local rotations ``[F, J, 4]``; ``root_positions``: ``[F, 3]``; ``positions``:
    global joint positions ``[F, J, 3]`` of the solution; ``error``: per pose, the RMS distance
    between solved and target positions over the observed joints (file units, NaN where a pose
    has no position target); ``clamped``: ``[F, J]`` joints whose limit was active in the last
    step; ``iterations``: DLS iterations run."""

    rotations: Array
    root_positions: Array
    positions: Array
    error: Array
    clamped: NDArray[np.bool_]
    iterations: int

    def to_motion(self, skeleton: Skeleton, frame_time: float = 1 / 30, local_positions: Array | None = None) -> Motion:
        """The solution as a Motion (local positions from ``local_positions`` [J, 3] or the
        skeleton's offsets, the root's from the solve)."""
        F, J = self.rotations.shape[:2]
        lp = skeleton.offsets if local_positions is None else np.asarray(local_positions, np.float64)
        pos = np.repeat(lp[None], F, axis=0)
        pos[:, 0] = self.root_positions
        return Motion(skeleton, self.rotations.copy(), pos, frame_time)


# --------------------------------------------------------------------------- the solver
def _as_batch(name: str, x: Any, F: int | None, tail: tuple[int, ...]) -> Array:
    a = np.asarray(x, np.float64)
    if a.shape == tail:
        a = a[None]
    if a.ndim != len(tail) + 1 or a.shape[1:] != tail or (F is not None and a.shape[0] not in (1, F)):
        want = f"[{F if F is not None else 'F'}, {', '.join(map(str, tail))}]"
        raise IKError(f"{name} must be {want} or [{', '.join(map(str, tail))}], got {a.shape}")
    return a


class WholeBodyIK:
    """Damped least-squares IK over a whole skeleton, batched over poses, joint limits first.

    ``skeleton``: the hierarchy; ``local_positions`` ``[J, 3]`` bone offsets (default the
    skeleton's OFFSETs; pass ``motion.positions[0]`` when position channels override them).
    ``limits``: a :class:`~jointlimits.JointLimits` (or any object with ``project(q [F, J, 4])``)
    whose projection is the top-priority task, or None. ``rest``: the posture ``[J, 4]`` the
    weak pull goes to (default: the limits' reference rotations when they have them, else the
    identity); ``posture_weight``: its weight relative to a position error of one mean bone
    length. ``fix_root_position`` / ``fix_root_rotation`` keep the root where the initial pose
    has it. ``iterations``: most DLS iterations (a pose stops once converged); ``damping``:
    initial Levenberg-Marquardt lambda (it adapts per pose, down to 0.3 times this);
    ``clamp_passes``: re-solves per iteration for poses whose step pushed new joints into their
    limits. Position errors are measured in mean bone lengths, so the weights do not depend on
    the file's units.
    """

    def __init__(
        self,
        skeleton: Skeleton,
        limits: Any = None,
        *,
        local_positions: ArrayLike | None = None,
        rest: ArrayLike | None = None,
        posture_weight: float = 1e-7,
        iterations: int = 8,
        damping: float = 0.01,
        fix_root_position: bool = False,
        fix_root_rotation: bool = False,
        clamp_passes: int = 2,
    ):
        self.skeleton = skeleton
        J = skeleton.num_joints
        if limits is not None:
            if not callable(getattr(limits, "project", None)):
                raise IKError("limits must be a JointLimits model (or have project(rotations [F, J, 4]))")
            check = getattr(limits, "check_skeleton", None)
            if callable(check):
                try:
                    check(skeleton)
                except Exception as e:
                    raise IKError(f"limits: {e}") from None
        self.limits = limits
        # a plain JointLimits projects each joint on its own: the start can then project one
        # level of joints at a time; any other model (coupled ones) gets whole poses
        from ..limits.model import JointLimits

        plain = type(limits) is JointLimits and not getattr(limits, "settings", {}).get("coupled")
        self._per_joint = set(limits.active()) if plain else None
        lp = skeleton.offsets if local_positions is None else np.asarray(local_positions, np.float64)
        if lp.shape != (J, 3) or not np.all(np.isfinite(lp)):
            raise IKError(f"local_positions must be finite [{J}, 3], got {lp.shape}")
        self.local_positions = lp.copy()
        lengths = np.linalg.norm(lp[1:], axis=-1) if J > 1 else np.ones(1)
        lengths = lengths[lengths > 0]
        #: length unit of the position residuals: the mean bone length
        self.scale = float(lengths.mean()) if lengths.size else 1.0
        #: noise of the observed positions (file units, per axis; 0: exact): under noise the
        #: closed-form start weighs each bone's direction down by its length against the noise
        #: (see :func:`jointlimits.ik.recover.position_noise`)
        self.noise = 0.0
        if rest is None:
            rest = quat.identity(J)
            if limits is not None and hasattr(limits, "joints"):
                for j, lim in limits.joints.items():
                    ref = getattr(lim, "reference", None)
                    if ref is not None and np.shape(ref) == (4,):
                        rest[j] = ref
        rest = np.asarray(rest, np.float64)
        if rest.shape != (J, 4) or not np.all(np.isfinite(rest)):
            raise IKError(f"rest must be finite [{J}, 4] rotations, got {rest.shape}")
        self.rest = quat.normalize(rest)
        for name, v in (("posture_weight", posture_weight), ("damping", damping)):
            if not (np.isfinite(v) and v >= 0):
                raise IKError(f"{name} must be a finite number >= 0, got {v!r}")
        if int(iterations) < 0:
            raise IKError(f"iterations must be >= 0, got {iterations!r}")
        self.posture_weight = float(posture_weight)
        self.damping = float(damping)
        #: the floor adaptive damping comes down to (poorly observed directions stay damped)
        self.min_damping = 0.3 * self.damping
        #: a pose stops iterating once a step lowers its task error by less than this fraction
        self.tolerance = 1e-6
        self.iterations = int(iterations)
        self.fix_root_position = bool(fix_root_position)
        self.fix_root_rotation = bool(fix_root_rotation)
        #: re-solves per iteration for poses whose step pushed new joints into their limits
        self.clamp_passes = int(clamp_passes)
        parents = skeleton.parents
        depth = skeleton.depth()
        D = int(depth.max()) + 1
        self._chain = np.zeros((J, D), np.int64)
        self._chain_len = np.zeros(J, np.int64)
        for k in range(J):
            a, n = k, 0
            while a >= 0:
                self._chain[k, n] = a
                a, n = int(parents[a]), n + 1
            self._chain_len[k] = n
        self._children = [skeleton.children(j) for j in range(J)]
        # unknowns in reverse depth-first preorder (leaves before their parents), translation
        # last: a joint's descendants then sit in one contiguous run just before it
        pre: list[int] = []
        stack = [0] + [j for j in range(J) if parents[j] < 0 and j != 0][::-1]
        while stack:
            a = stack.pop()
            pre.append(a)
            stack.extend(self._children[a][::-1])
        if len(pre) != J:
            raise IKError("the skeleton is not a single tree rooted at joint 0")
        order = pre[::-1]
        pos = np.empty(J, np.int64)
        pos[order] = np.arange(J)
        ndesc = np.array([len(skeleton.descendants(a)) for a in range(J)])
        self._off = 3 * pos
        self._first = np.zeros(3 * J + 3, np.int64)
        for a in range(J):
            self._first[3 * pos[a] : 3 * pos[a] + 3] = 3 * (pos[a] - ndesc[a])

    # ------------------------------------------------------------------ inputs
    def _targets(self, positions: Any, weights: Any, F: int | None) -> tuple[Array, Array]:
        sk = self.skeleton
        J = sk.num_joints
        if isinstance(positions, Mapping):
            rows = {
                sk.index(n) if not isinstance(n, (int, np.integer)) else sk.index(int(n)): _as_batch(
                    f"target of {n!r}", v, F, (3,)
                )
                for n, v in positions.items()
            }
            if F is None:
                F = max((v.shape[0] for v in rows.values()), default=1)
            tgt = np.full((F, J, 3), np.nan)
            for j, v in rows.items():
                if v.shape[0] not in (1, F):
                    raise IKError(f"target of {sk.names[j]!r} has {v.shape[0]} poses, expected {F}")
                tgt[:, j] = v
        else:
            tgt = _as_batch("positions", positions, F, (J, 3))
            if F is not None:
                tgt = np.broadcast_to(tgt, (F, J, 3))
        if np.any(np.isinf(tgt)):
            raise IKError("target positions contain infinite values (use NaN for no observation)")
        F = tgt.shape[0]
        seen = np.all(np.isfinite(tgt), axis=-1)
        w = np.ones((F, J))
        if weights is not None:
            if isinstance(weights, Mapping):
                wj = np.ones(J)
                for n, v in weights.items():
                    wj[sk.index(n)] = float(v)
                w = w * wj
            else:
                wa = np.asarray(weights, np.float64)
                if wa.shape not in ((J,), (F, J)):
                    raise IKError(f"weights must be [{J}] or [{F}, {J}], got {wa.shape}")
                w = w * wa
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise IKError("weights must be finite and >= 0")
        w = np.where(seen, w, 0.0)
        return np.where(seen[..., None], tgt, 0.0), w

    def _orientations(self, orientations: Any, weights: Any, F: int) -> tuple[Array, Array] | None:
        if orientations is None:
            return None
        sk = self.skeleton
        J = sk.num_joints
        if isinstance(orientations, Mapping):
            tq = np.full((F, J, 4), np.nan)
            for n, v in orientations.items():
                tq[:, sk.index(n)] = _as_batch(f"orientation of {n!r}", v, F, (4,))
        else:
            tq = np.broadcast_to(_as_batch("orientations", orientations, F, (J, 4)), (F, J, 4)).copy()
        seen = np.all(np.isfinite(tq), axis=-1)
        if np.any(np.isinf(tq)):
            raise IKError("orientation targets contain infinite values (use NaN for none)")
        w = np.ones(J) if weights is None else np.asarray(weights, np.float64)
        if isinstance(weights, Mapping):
            w = np.ones(J)
            for n, v in weights.items():
                w[sk.index(n)] = float(v)
        bad = f"orientation_weights must be finite, >= 0, [{J}] or [{F}, {J}]"
        if w.shape not in ((J,), (F, J)):
            raise IKError(bad)
        w = np.broadcast_to(w, (F, J))
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise IKError(bad)
        w = np.where(seen, w, 0.0)
        return quat.normalize(np.where(seen[..., None], tq, quat.identity(()))), w

    # ------------------------------------------------------------------ closed-form guess
    def initial_guess(
        self,
        targets: Array,
        weights: Array,
        posture: Array,
        root_positions: Array | None = None,
        orientations: tuple[Array, Array] | None = None,
    ) -> tuple[Array, Array]:
        """Closed-form start ``(rotations [F, J, 4], root positions [F, 3])`` from observed bone
        directions, top down, vectorised over poses (a Python loop over joints only)."""
        return initial_guess(self, targets, weights, posture, root_positions, orientations)

    # ------------------------------------------------------------------ solve
    def solve(
        self,
        positions: Any = None,
        weights: Any = None,
        *,
        orientations: Any = None,
        orientation_weights: Any = None,
        init: ArrayLike | None = None,
        root_positions: ArrayLike | None = None,
        posture: ArrayLike | None = None,
        iterations: int | None = None,
    ) -> WholeBodyResult:
        """Solve a batch of poses.

        ``positions``: targets ``[F, J, 3]`` (NaN = no observation) or a mapping joint name ->
        ``[F, 3]`` / ``[3]``; ``weights``: ``[J]``, ``[F, J]`` or name -> weight.
        ``orientations``: optional global rotation targets ``[F, J, 4]`` (NaN = none) or name ->
        ``[F, 4]`` / ``[4]``, with ``orientation_weights`` (radians weigh like mean bone lengths).
        ``init``: start rotations ``[F, J, 4]`` / ``[J, 4]`` (default: the closed-form guess);
        ``root_positions``: start (or, when fixed, kept) root positions ``[F, 3]`` / ``[3]``;
        ``posture``: the low-priority posture ``[F, J, 4]`` / ``[J, 4]`` (default ``rest``).
        """
        sk = self.skeleton
        J = sk.num_joints
        F = None
        for arr in (init, posture):
            if arr is not None and np.ndim(arr) == 3:
                F = int(np.shape(arr)[0])
        if orientations is not None:
            rows = (
                [np.shape(v) for v in orientations.values()]
                if isinstance(orientations, Mapping)
                else [np.shape(orientations)[:1] + (4,)]
                if np.ndim(orientations) == 3
                else []
            )
            for shp in rows:
                if len(shp) == 2 and shp[0] > 1:
                    F = int(shp[0])
        if positions is None:
            positions = {}
        if not isinstance(positions, Mapping):
            F = int(np.shape(positions)[0]) if np.ndim(positions) == 3 else F
        tgt, w = self._targets(positions, weights, F)
        F = tgt.shape[0]
        ori = self._orientations(orientations, orientation_weights, F)
        post = self.rest if posture is None else np.asarray(posture, np.float64)
        post = np.broadcast_to(quat.normalize(_as_batch("posture", post, F, (J, 4))), (F, J, 4))
        root0 = (
            None
            if root_positions is None
            else np.broadcast_to(_as_batch("root_positions", root_positions, F, (3,)), (F, 3))
        )
        if root0 is not None and not np.all(np.isfinite(root0)):
            raise IKError("root_positions must be finite")
        if init is None:
            L, root = self.initial_guess(tgt, w, post, root0, ori)
        else:
            L = quat.normalize(np.broadcast_to(_as_batch("init", init, F, (J, 4)), (F, J, 4)).copy())
            if not np.all(np.isfinite(L)):
                raise IKError("init rotations must be finite")
            root = root0.copy() if root0 is not None else root_guess(self, tgt, w, post, None)
        if self.limits is not None:
            L = self.limits.project(L)
        n_it = self.iterations if iterations is None else int(iterations)
        return WholeBodyResult(*iterate(self, L, root, tgt, w / self.scale**2, ori, post, n_it), n_it)

    def solve_sequence(
        self,
        positions: Any,
        weights: Any = None,
        *,
        warm_start: bool = True,
        robust: float | None = None,
        chunk: int = 2048,
        root_positions: ArrayLike | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> WholeBodyResult:
        """Solve the frames of a sequence ``positions [F, J, 3]`` (NaN = no observation), in
        batches of ``chunk`` frames.

        Pass 1 solves every frame from the closed-form guess. With ``warm_start`` a second pass
        restarts each frame from its predecessor's solution, so what the data leave open (the
        twist of bones, occluded limbs) carries over from frame to frame. With ``robust`` (a
        distance in file units) the second pass also down-weights each observation by the Cauchy
        weight ``1 / (1 + (r / robust)^2)`` of its pass-1 residual r (``robust=0``: twice the
        median residual), so outliers (a joint detected 20 cm away) stop pulling the body.
        ``progress(done, total)`` is called after each batch.
        """
        tgt, w = self._targets(positions, weights, None)
        F, J = tgt.shape[:2]
        tgt = np.where((w > 0)[..., None], tgt, np.nan)
        chunk = max(1, int(chunk))
        two = warm_start or robust is not None
        total = F * (2 if two else 1)
        done = 0
        root0 = (
            None
            if root_positions is None
            else np.broadcast_to(_as_batch("root_positions", root_positions, F, (3,)), (F, 3))
        )

        def run(init: Array | None, roots: Array | None, wts: Array) -> WholeBodyResult:
            nonlocal done
            parts = []
            for a in range(0, F, chunk):
                b = min(F, a + chunk)
                parts.append(
                    self.solve(
                        tgt[a:b],
                        wts[a:b],
                        init=None if init is None else init[a:b],
                        root_positions=None if roots is None else roots[a:b],
                    )
                )
                done += b - a
                if progress is not None:
                    progress(done, total)
            return WholeBodyResult(
                np.concatenate([r.rotations for r in parts]),
                np.concatenate([r.root_positions for r in parts]),
                np.concatenate([r.positions for r in parts]),
                np.concatenate([r.error for r in parts]),
                np.concatenate([r.clamped for r in parts]),
                parts[0].iterations,
            )

        first = run(None, root0, w)
        if not two:
            return first
        wts = w
        if robust is not None:
            if not (np.isfinite(robust) and robust >= 0):
                raise IKError(f"robust must be a distance >= 0 (0: twice the median residual), got {robust!r}")
            r = np.linalg.norm(np.nan_to_num(tgt) - first.positions, axis=-1)
            if robust == 0:
                robust = max(2.0 * float(np.median(r[w > 0])), 1e-6 * self.scale) if np.any(w > 0) else 1.0
            wts = w / (1.0 + (r / robust) ** 2)
        init, roots = first.rotations, first.root_positions
        if warm_start and F > 1:
            init = np.concatenate([init[:1], init[:-1]])
            roots = np.concatenate([roots[:1], roots[:-1]])
        if self.fix_root_position and root0 is not None:
            roots = root0
        second = run(init, roots, wts)
        # the error is reported against the observations with their given weights
        seen = w > 0
        d2 = np.einsum("fjk,fjk->fj", np.nan_to_num(tgt) - second.positions, np.nan_to_num(tgt) - second.positions)
        cnt = seen.sum(1)
        second.error = np.where(cnt > 0, np.sqrt((d2 * seen).sum(1) / np.maximum(cnt, 1)), np.nan)
        return second

    def _fk(self, L: Array, root: Array) -> tuple[Array, Array]:
        lp = np.repeat(self.local_positions[None], L.shape[0], axis=0)
        lp[:, 0] = root
        return forward_kinematics_arrays(L, lp, self.skeleton.parents)


def whole_body_ik(
    motion: Motion,
    targets: Mapping[str, ArrayLike],
    *,
    limits: Any = None,
    orientations: Mapping[str, ArrayLike] | None = None,
    weights: Mapping[str, float] | None = None,
    posture_weight: float = 1e-5,
    iterations: int = 30,
    fix_root_position: bool = False,
    fix_root_rotation: bool = False,
    clamp_passes: int = 3,
) -> Motion:
    """Move ``motion`` (every frame at once) so the named joints reach ``targets`` (name ->
    global position ``[F, 3]`` or ``[3]``), optionally with global ``orientations``, inside
    ``limits``; each frame starts from its own pose, which is also the low-priority posture."""
    if not targets and not orientations:
        raise IKError("no targets given")
    ik = WholeBodyIK(
        motion.skeleton,
        limits,
        local_positions=motion.positions[0],
        posture_weight=posture_weight,
        iterations=iterations,
        fix_root_position=fix_root_position,
        fix_root_rotation=fix_root_rotation,
        rest=None,
        clamp_passes=clamp_passes,
    )
    res = ik.solve(
        targets,
        weights,
        orientations=orientations,
        init=motion.rotations,
        root_positions=motion.positions[:, 0],
        posture=motion.rotations,
    )
    out = motion.copy()
    out.rotations = res.rotations
    out.positions[:, 0] = res.root_positions
    return out

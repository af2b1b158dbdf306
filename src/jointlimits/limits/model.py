"""Data-driven joint limits for a whole skeleton: fit from clips, project, soften, save.

Per joint, a limit is a :class:`~jointlimits.limits.joint.FittedLimit` (a shape in limit space,
see :mod:`jointlimits.limits.registry`) or another registered per-joint limit (reach windows).
Fitting follows the seed: per clip, relative rotations are put on the short cover at the first
frame and unrolled, subsampled, and the shape is fitted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from .. import _core, quat
from .._atomic import atomic_write
from ..errors import LimitsError
from ..skeleton import Motion, Skeleton
from ..tracking import track_rotations
from .compiled import compiled_dict
from ._checks import check_soften
from .joint import (FittedLimit, JointLimit, fit_shape, from_limit_space, limit_from_dict, swing_section,  # noqa: F401
                    to_limit_space, twist_interval)
from .registry import JOINT_KINDS, SHAPES, joint_limit_class, shape_kinds
from .rest import DEFAULT_REST_TOLERANCE, RestRetargetedLimit, rest_differences, rest_directions, rest_rotations
from .schema import check_compiled, check_document, check_entry, parse_json
from .shape import Shape  # noqa: F401

__all__ = ["JointLimits", "JointLimit", "FittedLimit", "Shape", "SHAPES", "fit_shape", "to_limit_space",
           "from_limit_space", "relative_clouds", "root_joints", "frame_ranges"]

SCHEMA = "jointlimits/limits"
SCHEMA_VERSION = 1
Array = NDArray[np.float64]


# --------------------------------------------------------------------------- the model


def _as_motions(motions: Motion | Iterable[Motion]) -> list[Motion]:
    ms = [motions] if isinstance(motions, Motion) else list(motions)
    if not ms:
        raise LimitsError("no motions to fit limits to")
    fp = ms[0].skeleton.fingerprint()
    for k, m in enumerate(ms[1:], 1):
        if m.skeleton.fingerprint() != fp:
            raise LimitsError(f"clip {k} has a different skeleton (joint names/parents) than clip 0")
    for k, m in enumerate(ms):
        if m.num_frames == 0:
            raise LimitsError(f"clip {k} has no frames")
        bad = ~np.isfinite(m.rotations).all(axis=-1)
        if bad.any():
            f, j = np.argwhere(bad)[0]
            raise LimitsError(f"clip {k}: rotation of joint {m.skeleton.names[j]!r} at frame {f} is NaN/inf")
    return ms


def _mirrored(ms: list[Motion]) -> list[Motion]:
    """Every clip mirrored across the skeleton's sagittal plane (found and checked once)."""
    from ..errors import SkeletonError
    from ..mirror import mirror_motion, mirror_plane

    try:
        n = mirror_plane(ms[0].skeleton)
    except SkeletonError as e:
        raise LimitsError(f"mirror: {e}") from None
    return [mirror_motion(m, normal=n) for m in ms]


def root_joints(motions: Motion | Iterable[Motion], tolerance: float = 1e-9) -> list[int]:
    """The joints that carry the global position and heading: each root, and below a root that
    never rotates in any of ``motions``, the joints that move by their own translation (a
    ground-level root at the identity hands the root motion to its child, as in Bandai Namco's
    ``joint_Root -> Hips``). Limits leave these alone by default."""
    ms = [motions] if isinstance(motions, Motion) else list(motions)
    sk = ms[0].skeleton
    still = np.ones(sk.num_joints, bool)
    moves = np.zeros(sk.num_joints, bool)
    for m in ms:
        if m.num_frames:
            still &= np.all(quat.angle(m.rotations, m.rotations[:1]) <= tolerance, axis=0)
            scale = max(float(np.abs(m.positions).max(initial=0.0)), 1.0)
            moves |= np.any(np.abs(m.positions - m.positions[:1]) > 1e-9 * scale, axis=(0, 2))
    out: list[int] = []
    for j in range(sk.num_joints):
        p = sk.parents[j]
        if p < 0 or (p in out and still[p] and moves[j]):
            out.append(j)
    return out


def frame_ranges(mask: NDArray[np.bool_]) -> list[list[int]]:
    """``[[first, last], ...]`` (inclusive) of the runs of true frames in ``mask``."""
    m = np.concatenate([[False], np.asarray(mask, bool), [False]])
    edges = np.flatnonzero(m[1:] != m[:-1])
    return [[int(a), int(b) - 1] for a, b in zip(edges[::2], edges[1::2])]


def _rest_mismatch(names: Sequence[str], fitted: Sequence[Array], other: Sequence[Array], joints: Iterable[int],
                   tolerance: float) -> str | None:
    diff = rest_differences(fitted, other, joints)
    bad = sorted(((d, j) for j, d in diff.items() if d > tolerance), reverse=True)
    if not bad:
        return None
    return ", ".join(f"{names[j]} {d:.1f} deg" for d, j in bad[:6]) + (f" and {len(bad) - 6} more" if len(bad) > 6 else "")


def _reference_pose(ms: list[Motion], reference: Any) -> Array:
    if isinstance(reference, Motion):
        if reference.skeleton.fingerprint() != ms[0].skeleton.fingerprint():
            raise LimitsError("the reference motion's skeleton does not match the clips")
        return quat.normalize(reference.rotations[0])
    if isinstance(reference, str):
        if reference == "first":
            return quat.normalize(ms[0].rotations[0])
        if reference == "mean":
            allq = np.concatenate([m.rotations for m in ms], axis=0)
            return quat.average(allq, axis=0)
        raise LimitsError(f"reference must be 'mean', 'first', a frame index or a Motion, not {reference!r}")
    if isinstance(reference, (int, np.integer)):
        n = ms[0].num_frames
        if not -n <= int(reference) < n:
            raise LimitsError(f"reference frame {reference} is outside the first clip (0..{n - 1})")
        return quat.normalize(ms[0].rotations[int(reference)])
    ref = np.asarray(reference, np.float64)
    if ref.shape != (ms[0].num_joints, 4):
        raise LimitsError(f"a reference pose array must be [J, 4] = [{ms[0].num_joints}, 4], got {ref.shape}")
    return quat.normalize(ref)


def relative_clouds(ms: Sequence[Motion], joint: int, reference: Array, twist_axis: Array | None = None
                    ) -> Array | tuple[Array, Array]:
    """Limit-space points of one joint over clips: relative to ``reference``, short cover at each
    clip's first frame, unrolled within (never across) clips. With ``twist_axis``: (swing, twist)."""
    qs = np.concatenate([m.rotations[:, joint] for m in ms], axis=0)
    bounds = np.cumsum([0] + [m.num_frames for m in ms])
    ranges = list(zip(bounds[:-1], bounds[1:]))
    rel = quat.inv_mul(reference, qs)
    if twist_axis is None:
        return quat.to_scaled_angle_axis(quat.unroll(rel, ranges=ranges))
    s, t = quat.swing_twist(rel, twist_axis)
    return (quat.to_scaled_angle_axis(quat.unroll(s, ranges=ranges)),
            quat.to_scaled_angle_axis(quat.unroll(t, ranges=ranges)))


def side_switches(limited: Array, original: Array, threshold: float = 0.25) -> NDArray[np.int64]:
    """Frames where a projection jumped (switched sides of its limit): the limited rotation moved
    more than ``threshold`` radians further between two frames than the input did."""
    jump_out = quat.angle(limited[1:], limited[:-1])
    jump_in = quat.angle(original[1:], original[:-1])
    hit = np.any(jump_out - jump_in > threshold, axis=tuple(range(1, jump_out.ndim)))
    return np.nonzero(hit)[0] + 1


def smooth_switches(limited: Array, original: Array, frame_time: float, halflife: float = 0.25,
                    threshold: float = 0.25) -> Array:
    """Remove the pops of projections that switch sides with a tracking spring; frames the spring
    does not touch are returned exactly as projected."""
    cuts = side_switches(limited, original, threshold)
    if cuts.size == 0:
        return limited
    return track_rotations(limited, cuts, frame_time, halflife=halflife)


def _compiled_limit(limit: Any) -> Any:
    """The ``_core.CompiledLimit`` a joint's limit projects poses with (None: its own project())."""
    c = limit.compiled() if hasattr(limit, "compiled") else None
    return c if isinstance(c, _core.CompiledLimit) else None


def _joint_entry(name: str, enabled: bool, limit: Any) -> dict:
    entry = {"name": name, "enabled": enabled, "limit": limit.to_dict()}
    compiled = compiled_dict(limit)
    if compiled is not None:  # what the C++ core reads (cpp/include/jointlimits/limits_file.hpp)
        entry["compiled"] = compiled
    return entry


def _read_rest(skd: Mapping[str, Any], sk: Skeleton, source: str) -> tuple[list[Array] | None, float]:
    """The stored rest directions (None for files written before they were stored: then the
    offsets' directions) and tolerance of a limits file's skeleton entry."""
    tol = skd.get("rest_tolerance_deg", DEFAULT_REST_TOLERANCE)
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (0 <= tol <= 180):
        raise LimitsError(f"{source}: rest_tolerance_deg must be a number of degrees in [0, 180]")
    rd = skd.get("rest_directions")
    if rd is None:
        return None, float(tol)
    if not isinstance(rd, list) or len(rd) != sk.num_joints:
        raise LimitsError(f"{source}: rest_directions must list every joint's child bone directions")
    out = []
    for j, rows in enumerate(rd):
        if not isinstance(rows, list):
            raise LimitsError(f"{source}: rest_directions of joint {sk.names[j]!r} must be a list")
        a = np.full((len(rows), 3), np.nan)
        for k, v in enumerate(rows):
            if v is None:
                continue
            if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                              for x in v)):
                raise LimitsError(f"{source}: a rest direction of joint {sk.names[j]!r} is not [x, y, z]")
            a[k] = v
            n = np.linalg.norm(a[k])
            if not (np.isfinite(n) and abs(n - 1) < 1e-3):
                raise LimitsError(f"{source}: a rest direction of joint {sk.names[j]!r} is not a unit vector")
        out.append(a)
    return out, float(tol)


class _JointDict(dict):
    """A dict that counts its changes, so JointLimits knows when to rebuild its compiled pose."""

    version = 0

    def _bump(self) -> None:
        self.version += 1

    def __setitem__(self, k, v):
        super().__setitem__(k, v)
        self._bump()

    def __delitem__(self, k):
        super().__delitem__(k)
        self._bump()

    def pop(self, *a):
        self._bump()
        return super().pop(*a)

    def popitem(self):
        self._bump()
        return super().popitem()

    def setdefault(self, *a):
        self._bump()
        return super().setdefault(*a)

    def update(self, *a, **kw):
        super().update(*a, **kw)
        self._bump()

    def clear(self):
        super().clear()
        self._bump()

    def __ior__(self, other):
        self._bump()
        return super().__ior__(other)


class JointLimits:
    """Per-joint limits of one skeleton, fitted from motion capture.

    Use :meth:`fit` to build one, :meth:`project` / :meth:`apply` to enforce it, :meth:`contains`
    and :meth:`violation` to measure, :meth:`save` / :meth:`load` to keep it.
    """

    def __init__(self, skeleton: Skeleton, joints: Mapping[int, JointLimit] | None = None,
                 enabled: Sequence[bool] | None = None, settings: Mapping[str, Any] | None = None,
                 rest: Sequence[Array] | None = None, rest_tolerance: float = DEFAULT_REST_TOLERANCE):
        self.skeleton = skeleton
        self.joints: dict[int, JointLimit] = _JointDict(joints or {})
        self.enabled = np.ones(skeleton.num_joints, bool) if enabled is None else np.asarray(enabled, bool).copy()
        self.settings: dict[str, Any] = dict(settings or {})
        #: per joint, the rest directions of its child bones the limits were fitted in (see :mod:`.rest`)
        self.rest: list[Array] = rest_directions(skeleton) if rest is None else [np.asarray(r, np.float64) for r in rest]
        self.rest_tolerance = float(rest_tolerance)

    def __getstate__(self) -> dict:  # the compiled pose is rebuilt on first use, not pickled
        return {k: v for k, v in self.__dict__.items() if k != "_pose_cache"}

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(cls, motions: Motion | Iterable[Motion], shape: str = "ellipsoid", swing_twist: bool = False,
            padding: float = 0.05, reference: Any = "mean", subsample: float | None = 0.05,
            shapes: Mapping[str, str] | None = None, joints: Iterable[str] | None = None,
            progress: Callable[[int, int, str], None] | None = None, coupled: bool = False,
            pairs: Iterable[tuple[str, str]] | None = None, exclude: Iterable[str] | None = None,
            root: bool = False, rest_tolerance: float = DEFAULT_REST_TOLERANCE, mirror: bool = False
            ) -> "JointLimits":
        """Fit limits for every joint with rotation channels (or the named ``joints``).

        The joints that carry the global position and heading (:func:`root_joints`) get no limit
        unless ``root`` is true or ``joints`` names them; ``exclude`` names joints to leave out.
        Every clip must have the first clip's rest pose (child bone directions within
        ``rest_tolerance`` degrees at the fitted joints and their parents).

        With ``coupled`` (``shape="implicit"``, no swing-twist) the child of each (parent,
        child) pair gets a limit conditioned on its parent's rotation (``CoupledLimit``):
        ``pairs`` names them, by default the humanoid pairs found by joint name (clavicle ->
        shoulder, shoulder -> elbow, hip -> knee, along the spine, neck -> head).

        ``shape`` is one of ``box``, ``oriented-box``, ``ellipsoid``, ``kdop``; ``shapes`` overrides
        it per joint name (also ``"reach-window"`` for a swing window plus twist range).
        ``reference`` is ``"mean"`` (eigen-mean of all frames), ``"first"``, a frame index of the
        first clip, a Motion (its first frame) or a ``[J, 4]`` array.

        With ``mirror`` every clip is also fitted mirrored across the skeleton's sagittal plane
        (:func:`jointlimits.mirror.mirror_motion`): a left joint learns the mirrored rotations of
        its right counterpart and a centre joint its own, and the mean reference is taken over
        both. The skeleton's rest offsets must be mirror images (LimitsError otherwise).
        """
        if shape not in shape_kinds():
            raise LimitsError(f"unknown limit shape {shape!r}; expected one of {', '.join(shape_kinds())}")
        if not (np.isfinite(padding) and padding >= 0):
            raise LimitsError(f"padding must be a finite number >= 0, got {padding}")
        ms = _as_motions(motions)
        sk = ms[0].skeleton
        ref = _reference_pose(ms, reference)
        axes = sk.bone_directions()
        shapes = dict(shapes or {})
        for name, kind in shapes.items():
            sk.index(name)
            if kind not in shape_kinds() + JOINT_KINDS:
                raise LimitsError(f"unknown limit shape {kind!r} for joint {name!r}")
        roots = root_joints(ms)
        if joints is None:
            todo = [j for j in range(sk.num_joints) if sk.rotation_order(j) and (root or j not in roots)]
        else:
            todo = [sk.index(n) for n in joints]
        if exclude is not None:
            drop = {sk.index(n) for n in exclude}
            todo = [j for j in todo if j not in drop]
        rest = rest_directions(sk)
        checked = sorted(set(todo) | {int(sk.parents[j]) for j in todo if sk.parents[j] >= 0})
        for k, m in enumerate(ms[1:], 1):
            bad = _rest_mismatch(sk.names, rest, rest_directions(m.skeleton), checked, rest_tolerance)
            if bad:
                raise LimitsError(f"clip {k} has another rest pose than clip 0 (bone directions differ at {bad}); "
                                  "fit clips of one rest pose")
        clips, frames = len(ms), int(sum(m.num_frames for m in ms))
        if mirror:
            ms = ms + _mirrored(ms)
            if isinstance(reference, str) and reference == "mean":
                ref = _reference_pose(ms, reference)
        out: dict[int, JointLimit] = {}
        for k, j in enumerate(todo):
            name = sk.names[j]
            if progress is not None:
                progress(k, len(todo), name)
            kind = shapes.get(name, shape)
            if kind in JOINT_KINDS:  # fitted from the rotations themselves (reach windows)
                qs = np.concatenate([m.rotations[:, j] for m in ms], axis=0)
                out[j] = joint_limit_class(kind).fit(qs, axes[j], reference=ref[j], padding=padding)
                continue
            try:
                if swing_twist:
                    ps, pt = relative_clouds(ms, j, ref[j], axes[j])
                    out[j] = FittedLimit(ref[j], axes[j], swing=fit_shape(ps, kind, padding, subsample),
                                         twist=fit_shape(pt, kind, padding, subsample))
                else:
                    pts = relative_clouds(ms, j, ref[j])
                    out[j] = FittedLimit(ref[j], axes[j], shape=fit_shape(pts, kind, padding, subsample))
            except LimitsError as e:
                raise LimitsError(f"joint {name!r}: {e}") from None
        if coupled:
            if shape != "implicit" or swing_twist:
                raise LimitsError("coupled limits need shape='implicit' without swing-twist")
            from .coupled import CoupledLimit, humanoid_pairs

            found = humanoid_pairs(sk.names, sk.parents) if pairs is None else list(pairs)
            for pn, cn in found:
                p, c = sk.index(pn), sk.index(cn)
                if sk.parents[c] != p:
                    raise LimitsError(f"coupled pair ({pn!r}, {cn!r}): {pn!r} is not {cn!r}'s parent")
                if c not in out or p not in out or shapes.get(cn, shape) != "implicit":
                    continue
                qp = np.concatenate([m.rotations[:, p] for m in ms], axis=0)
                try:
                    out[c] = CoupledLimit.fit(to_limit_space(qp, ref[p]), relative_clouds(ms, c, ref[c]), ref[c],
                                              axes[c], ref[p], pn, padding, subsample)
                except LimitsError as e:
                    raise LimitsError(f"joint {cn!r}: {e}") from None
        if progress is not None:
            progress(len(todo), len(todo), "")
        settings = {"shape": shape, "swing_twist": bool(swing_twist), "padding": float(padding),
                    "reference": reference if isinstance(reference, (str, int)) else "custom",
                    "subsample": subsample, "coupled": bool(coupled), "clips": clips, "frames": frames,
                    "mirror": bool(mirror), "root_joints": [sk.names[j] for j in roots]}
        return cls(sk, out, settings=settings, rest=rest)

    # ------------------------------------------------------------------ per joint
    def joint(self, joint: str | int) -> JointLimit:
        """The limit of one joint (raises LimitsError if it has none)."""
        j = self.skeleton.index(joint)
        if j not in self.joints:
            raise LimitsError(f"joint {self.skeleton.names[j]!r} has no limit")
        return self.joints[j]

    def set_joint(self, joint: str | int, limit: JointLimit | None) -> None:
        """Replace (or with None remove) one joint's limit; any object with project/contains/violation."""
        j = self.skeleton.index(joint)
        if limit is None:
            self.joints.pop(j, None)
        else:
            self.joints[j] = limit

    def enable(self, *joints: str | int) -> None:
        for n in joints:
            self.enabled[self.skeleton.index(n)] = True

    def disable(self, *joints: str | int) -> None:
        for n in joints:
            self.enabled[self.skeleton.index(n)] = False

    def _order(self) -> list[int]:
        """Active joints, every parent before its children."""
        depth = np.zeros(self.skeleton.num_joints, int)
        for j in range(self.skeleton.num_joints):
            p, d = self.skeleton.parents[j], 0
            while p >= 0:
                p, d = self.skeleton.parents[p], d + 1
            depth[j] = d
        return sorted(self.active(), key=lambda j: (depth[j], j))

    def active(self) -> list[int]:
        """Indices of joints that have a limit and are enabled."""
        return [j for j in sorted(self.joints) if self.enabled[j]]

    def select(self, joints: Iterable[str | int] | None = None, exclude: Iterable[str | int] | None = None,
               motion: Motion | None = None, root: bool = False) -> "JointLimits":
        """These limits on fewer joints (the limit objects are shared): only ``joints`` if given,
        without ``exclude``, and unless ``root`` (or ``joints`` names them) without the joints that
        carry the global position and heading (those the fit recorded, and those of ``motion``)."""
        sk = self.skeleton
        on = self.enabled.copy()
        if joints is not None:
            named = [sk.index(n) for n in joints]
            missing = [sk.names[j] for j in named if j not in self.joints]
            if missing:
                raise LimitsError(f"no limit for joint(s) {', '.join(map(repr, missing))} in these limits")
            keep = np.zeros_like(on)
            keep[named] = True
            on &= keep
        elif not root:
            for n in self.settings.get("root_joints", []) or []:
                if n in sk.names:
                    on[sk.index(n)] = False
            if motion is not None:
                on[root_joints(motion)] = False
        for n in exclude or ():
            on[sk.index(n)] = False
        if np.array_equal(on, self.enabled):
            return self
        out = JointLimits(sk, self.joints, on, self.settings, self.rest, self.rest_tolerance)
        out.joints = self.joints  # the same dict: a change to one is a change to both
        return out

    def retarget_rest(self, skeleton: Skeleton) -> "JointLimits":
        """These limits re-expressed for ``skeleton``: same joints, another rest pose, where the two
        differ by one rotation per joint frame (LimitsError naming the joints where they do not)."""
        if skeleton.fingerprint() != self.skeleton.fingerprint():
            self.check_skeleton(skeleton, rest=False)
        names = self.skeleton.names
        parents = self.skeleton.parents
        other = rest_directions(skeleton)
        need = sorted(set(self.joints) | {int(parents[j]) for j in self.joints if parents[j] >= 0})
        c = rest_rotations(self.rest, other, need, names, self.rest_tolerance)
        out: dict[int, JointLimit] = {}
        for j, lim in self.joints.items():
            pre = c[int(parents[j])] if parents[j] >= 0 else quat.identity()
            inner, pre0, post0 = (lim.inner, lim.pre, lim.post) if isinstance(lim, RestRetargetedLimit) \
                else (lim, quat.identity(), quat.identity())
            # compose with an earlier retarget: fitted <- previous <- this skeleton
            pre_t, post_t = quat.normalize(quat.mul(pre0, pre)), quat.normalize(quat.mul(post0, c[j]))
            if quat.angle(pre_t, quat.identity()) < 1e-12 and quat.angle(post_t, quat.identity()) < 1e-12:
                out[j] = inner
            else:
                try:
                    out[j] = RestRetargetedLimit(inner, pre_t, post_t)
                except LimitsError as e:
                    raise LimitsError(f"joint {names[j]!r}: {e}") from None
        settings = dict(self.settings, rest_retargeted=True)
        return JointLimits(skeleton.copy(), out, self.enabled, settings, other, self.rest_tolerance)

    # ------------------------------------------------------------------ whole poses
    def _check(self, rotations: Array) -> Array:
        q = np.asarray(rotations, np.float64)
        if q.ndim < 2 or q.shape[-2:] != (self.skeleton.num_joints, 4):
            raise LimitsError(f"rotations must be [..., {self.skeleton.num_joints}, 4], got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise LimitsError("rotations contain NaN or infinite values")
        return q

    def _pose_core(self) -> tuple[Any, list[int], list[int]]:
        """(the C++ projector of every active joint with a compiled FittedLimit, their indices, the
        other active joints parents first), cached until the joints, their limits or the enabled
        flags change."""
        joints = self.joints
        cached = self.__dict__.get("_pose_cache")
        if cached is not None and cached[0] is joints and cached[1] == joints.version \
                and cached[2] == self.enabled.tobytes():
            return cached[3]
        if not isinstance(joints, _JointDict):  # the attribute was replaced by a plain dict
            joints = self.joints = _JointDict(joints)
        compiled = {j: _compiled_limit(self.joints[j]) for j in self.active()}
        fast = [j for j, c in compiled.items() if c is not None]
        core = _core.PoseLimits(self.skeleton.num_joints, fast, [compiled[j] for j in fast])
        rest = [j for j in self._order() if j not in set(fast)]
        self._pose_cache = (joints, joints.version, self.enabled.tobytes(), (core, fast, rest))
        return core, fast, rest

    def _project_pose(self, q: Array, soften: tuple[float, float] | None) -> Array:
        core, _, rest = self._pose_core()
        out = np.empty(q.shape)
        # (other layouts are converted by the binding)
        if not (core.project(q, False, 0.0, 0.0, out) if soften is None else
                core.project(q, True, soften[0], soften[1], out)):
            raise LimitsError("rotations contain NaN or infinite values")
        if rest:
            self._project_rest(q, out, soften, rest)
        return out

    def _project_rest(self, q: Array, out: Array, soften: tuple[float, float] | None, rest: list[int]) -> None:
        """The joints without a compiled limit, into ``out`` (parents first: a coupled child is
        limited for its parent's result)."""
        for j in rest:
            lim = self.joints[j]
            if hasattr(lim, "parent"):
                out[..., j, :] = lim.project(q[..., j, :], soften, parent=out[..., self.skeleton.index(lim.parent), :])
            else:
                out[..., j, :] = lim.project(q[..., j, :], soften) \
                    if soften is not None and (isinstance(lim, FittedLimit) or getattr(lim, "softenable", False)) \
                    else lim.project(q[..., j, :])

    def project(self, rotations: Array, soften: tuple[float, float] | None = None) -> Array:
        """Limited local rotations ``[..., J, 4]``; ``soften=(falloff, radius)`` leaves some leeway."""
        q = rotations if type(rotations) is np.ndarray and rotations.dtype == np.float64 else \
            np.asarray(rotations, np.float64)
        shape = q.shape
        if len(shape) < 2 or shape[-1] != 4 or shape[-2] != len(self.skeleton.names):
            raise LimitsError(f"rotations must be [..., {self.skeleton.num_joints}, 4], got {q.shape}")
        return self._project_pose(q, None if soften is None else check_soften(soften))

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]:
        """``bool[..., J]``: inside the limit (joints without an active limit count as inside)."""
        q = self._check(rotations)
        _, fast, rest = self._pose_core()
        out = np.ones(q.shape[:-1], bool)
        if fast:  # a compiled FittedLimit contains what it does not move by more than the tolerance
            out[..., fast] = self._violation_fast(q, fast) <= tolerance
        for j in rest:
            lim = self.joints[j]
            extra = {"parent": q[..., self.skeleton.index(lim.parent), :]} if hasattr(lim, "parent") else {}
            out[..., j] = lim.contains(q[..., j, :], tolerance, **extra)
        return out

    def _violation_fast(self, q: Array, fast: list[int]) -> Array:
        core = self._pose_core()[0]
        hard = np.empty(q.shape)
        core.project(np.ascontiguousarray(q), False, 0.0, 0.0, hard)
        return quat.angle(q[..., fast, :], hard[..., fast, :])

    def violation(self, rotations: Array) -> Array:
        """Radians ``[..., J]`` between each rotation and its projection (0 when inside)."""
        q = self._check(rotations)
        _, fast, rest = self._pose_core()
        out = np.zeros(q.shape[:-1])
        if fast:
            out[..., fast] = self._violation_fast(q, fast)
        for j in rest:
            lim = self.joints[j]
            extra = {"parent": q[..., self.skeleton.index(lim.parent), :]} if hasattr(lim, "parent") else {}
            out[..., j] = lim.violation(q[..., j, :], **extra)
        return out

    def apply(self, motion: Motion, soften: tuple[float, float] | None = None, smooth: bool = False,
              halflife: float = 0.25, joints: Iterable[str | int] | None = None,
              exclude: Iterable[str | int] | None = None, root: bool = False) -> Motion:
        """A copy of ``motion`` with every frame limited. With ``smooth`` a tracking spring removes
        the jumps a projection makes when it switches sides, leaving other frames as projected.
        ``joints``, ``exclude`` and ``root`` choose the joints as in :meth:`select` (by default the
        joints carrying the global position and heading are left alone)."""
        lim = self.select(joints, exclude, motion, root)
        lim.check_skeleton(motion.skeleton)
        out = motion.copy()
        out.rotations = lim.project(motion.rotations, soften)
        if smooth:
            out.rotations = smooth_switches(out.rotations, motion.rotations, motion.frame_time, halflife=halflife)
        return out

    def report(self, motions: Motion | Iterable[Motion], tolerance: float = 1e-6) -> list[dict[str, Any]]:
        """Per limited joint: frames outside, fraction outside, mean and max violation (degrees)
        over the frames of all ``motions``."""
        ms = [motions] if isinstance(motions, Motion) else list(motions)
        for m in ms:
            self.check_skeleton(m.skeleton)
        v = np.concatenate([self.violation(m.rotations) for m in ms], axis=0)
        rows = []
        for j in self.active():
            vj = v[:, j]
            out = vj > tolerance
            row = {
                "joint": self.skeleton.names[j], "frames": int(vj.size), "frames_outside": int(out.sum()),
                "fraction_outside": float(out.mean()) if vj.size else 0.0,
                "mean_violation_deg": float(np.degrees(vj[out].mean())) if out.any() else 0.0,
                "max_violation_deg": float(np.degrees(vj.max())) if vj.size else 0.0,
            }
            if len(ms) == 1:
                row["frame_ranges"] = frame_ranges(out)
            rows.append(row)
        return rows

    # ------------------------------------------------------------------ files
    def check_skeleton(self, skeleton: Skeleton, rest: bool = True) -> None:
        """Raise LimitsError unless ``skeleton`` has the joints (names and parents) these limits were
        fitted on and, with ``rest``, the same rest pose at the active joints and their parents
        (child bone directions within ``rest_tolerance`` degrees)."""
        if skeleton.fingerprint() != self.skeleton.fingerprint():
            mine, theirs = set(self.skeleton.names), set(skeleton.names)
            detail = ""
            if mine != theirs:
                detail = f" (missing {sorted(mine - theirs)[:5]}, unexpected {sorted(theirs - mine)[:5]})"
            raise LimitsError(f"these limits were fitted on another skeleton{detail}")
        if rest and skeleton is not self.skeleton:
            act = self.active()
            parents = self.skeleton.parents
            checked = sorted(set(act) | {int(parents[j]) for j in act if parents[j] >= 0})
            bad = _rest_mismatch(self.skeleton.names, self.rest, rest_directions(skeleton), checked, self.rest_tolerance)
            if bad:
                raise LimitsError(f"these limits were fitted on another rest pose (bone directions differ at {bad}); "
                                  "re-express them with retarget_rest (CLI: --retarget-rest)")

    def to_dict(self) -> dict:
        sk = self.skeleton
        return {
            "schema": SCHEMA, "version": SCHEMA_VERSION,
            "skeleton": {"names": sk.names, "parents": sk.parents.tolist(), "fingerprint": sk.fingerprint(),
                         "offsets": sk.offsets.tolist(),
                         "rest_directions": [[None if not np.isfinite(v).all() else v.tolist() for v in r]
                                             for r in self.rest],
                         "rest_tolerance_deg": self.rest_tolerance},
            "settings": self.settings,
            "joints": [_joint_entry(sk.names[j], bool(self.enabled[j]), self.joints[j]) for j in sorted(self.joints)],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "limits") -> "JointLimits":
        check_document(d, source, SCHEMA, SCHEMA_VERSION)
        try:
            skd = d["skeleton"]
            names, parents = list(skd["names"]), np.asarray(skd["parents"], np.int64)
            offsets = np.asarray(skd.get("offsets", np.zeros((len(names), 3))), np.float64)
            sk = Skeleton(names, parents, offsets)
            if skd.get("fingerprint") not in (None, sk.fingerprint()):
                raise LimitsError(f"{source}: skeleton fingerprint does not match its joint list (edited by hand?)")
            rest, tol = _read_rest(skd, sk, source)
            joints: dict[int, JointLimit] = {}
            enabled = np.ones(len(names), bool)
            seen: set[str] = set()
            for k, e in enumerate(d["joints"]):
                name, on, entry = check_entry(e, k, source, seen)
                j = sk.index(name)
                joints[j] = limit_from_dict(entry)
                enabled[j] = on
                check_compiled(e, joints[j], name, source)
        except LimitsError as e:
            msg = str(e)
            raise LimitsError(msg if msg.startswith(source) else f"{source}: {msg}") from None
        except (KeyError, TypeError, ValueError) as e:
            raise LimitsError(f"{source}: corrupt limits file ({type(e).__name__}: {e})") from None
        return cls(sk, joints, enabled, d.get("settings", {}), rest, tol)

    def save(self, path: str | os.PathLike) -> None:
        """Write the limits as JSON, atomically."""
        p = Path(path)
        text = json.dumps(self.to_dict(), indent=1)
        with atomic_write(p) as fh:
            fh.write(text)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "JointLimits":
        """Read a limits file; raises LimitsError if it is missing, corrupt or of another version."""
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as e:
            raise LimitsError(f"{p}: cannot read limits file ({e.strerror or e})") from None
        except UnicodeDecodeError as e:
            raise LimitsError(f"{p}: corrupt limits file (not UTF-8 text: {e})") from None
        d = parse_json(text, str(p))
        return cls.from_dict(d, str(p))

    def __repr__(self) -> str:
        return (f"JointLimits({len(self.joints)} joints of {self.skeleton.num_joints}, "
                f"shape={self.settings.get('shape')!r}, swing_twist={self.settings.get('swing_twist')})")

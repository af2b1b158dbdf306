"""Data-driven joint limits for a whole skeleton: the model (:class:`JointLimits`) that projects,
measures and applies them.

Per joint, a limit is a :class:`~jointlimits.limits.joint.FittedLimit` (a shape in limit space,
see :mod:`jointlimits.limits.registry`) or another registered per-joint limit (reach windows).
Fitting is :mod:`.fit`, the file :mod:`.file`, violation reports :mod:`.report`. A JointLimits
does not change once made: its joint table is read-only, and :meth:`JointLimits.with_limit` /
:meth:`JointLimits.with_enabled` return new ones, so the compiled pose is built once.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .._native import _core
from .._optional import require
from ..errors import LimitsError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton
from ._checks import check_soften, unit_rotations
from .file import from_document, read_document, to_document, write_document
from .fit import fit_with, root_joints
from .joint import (  # noqa: F401
    FittedLimit,
    JointLimit,
    ParentedLimit,
    SoftenableLimit,
    fit_shape,
    from_limit_space,
    swing_section,
    to_limit_space,
    twist_interval,
)
from .options import FitOptions, fit_options
from .registry import SHAPES
from .report import violation_report, with_expected
from .rest import DEFAULT_REST_TOLERANCE, RestRetargetedLimit, rest_directions, rest_mismatch, rest_rotations
from .shape import Shape

__all__ = [
    "JointLimits",
    "FitOptions",
    "JointLimit",
    "FittedLimit",
    "Shape",
    "SHAPES",
    "fit_shape",
    "to_limit_space",
    "from_limit_space",
]

Array = NDArray[np.float64]


# --------------------------------------------------------------------------- the model


#: frames per block where a whole clip's temporaries would cost several copies of it
_ANGLE_BLOCK = 8192


def _compiled_limit(limit: Any) -> Any:
    """The ``_core.CompiledLimit`` a joint's limit projects poses with (None: its own project())."""
    c = limit.compiled() if hasattr(limit, "compiled") else None
    return c if isinstance(c, _core.CompiledLimit) else None


class JointLimits:
    """Per-joint limits of one skeleton, fitted from motion capture.

    Use :meth:`fit` to build one, :meth:`project` / :meth:`apply` to enforce it, :meth:`contains`
    and :meth:`violation` to measure, :meth:`save` / :meth:`load` to keep it.
    """

    def __init__(
        self,
        skeleton: Skeleton,
        joints: Mapping[int, JointLimit] | None = None,
        enabled: Sequence[bool] | NDArray[np.bool_] | None = None,
        settings: Mapping[str, Any] | None = None,
        rest: Sequence[Array] | None = None,
        rest_tolerance: float = DEFAULT_REST_TOLERANCE,
    ):
        self.skeleton = skeleton
        #: joint index -> limit, read-only
        self.joints: Mapping[int, JointLimit] = MappingProxyType(dict(joints or {}))
        enabled_ = np.ones(skeleton.num_joints, bool) if enabled is None else np.array(enabled, bool)
        if enabled_.shape != (skeleton.num_joints,):
            raise LimitsError(f"enabled must have one flag per joint ({skeleton.num_joints}), got {enabled_.shape}")
        enabled_.flags.writeable = False
        #: per joint, whether its limit is applied (read-only)
        self.enabled: NDArray[np.bool_] = enabled_
        self.settings: dict[str, Any] = dict(settings or {})
        #: per joint, the rest directions of its child bones the limits were fitted in (see :mod:`.rest`)
        self.rest: list[Array] = (
            rest_directions(skeleton) if rest is None else [np.asarray(r, np.float64) for r in rest]
        )
        self.rest_tolerance = float(rest_tolerance)

    def __getstate__(self) -> dict:  # the compiled pose is rebuilt on first use, not pickled
        state = {k: v for k, v in self.__dict__.items() if k != "_pose_cache"}
        state["joints"] = dict(self.joints)
        state["enabled"] = np.array(self.enabled)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        state["joints"] = MappingProxyType(dict(state["joints"]))
        enabled = np.array(state["enabled"], bool)
        enabled.flags.writeable = False
        state["enabled"] = enabled
        self.__dict__.update(state)

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(
        cls,
        motions: Motion | Iterable[Motion],
        options: FitOptions | None = None,
        *,
        progress: Callable[[int, int, str], None] | None = None,
        **keywords: Any,
    ) -> JointLimits:
        """Fit limits to ``motions`` with ``options``, a :class:`~jointlimits.limits.options.FitOptions`
        (which documents each setting; None: the defaults, an ellipsoid per joint with rotation
        channels). ``keywords`` are FitOptions fields by name and replace those of ``options``:
        ``JointLimits.fit(clips, shape="kdop", padding=0.1)``; a name that is no field raises
        TypeError. ``progress(k, n, joint_name)`` is called before each joint is fitted."""
        o = fit_options(options, keywords, "JointLimits.fit")
        cal = None
        if o.target_recall is not None:
            from .calibrate import calibrated_options

            motions, o, cal = calibrated_options(motions, o)
        fitted = fit_with(motions, o, progress)
        settings = fitted.settings if cal is None else dict(fitted.settings, calibration=cal.to_dict())
        return cls(fitted.skeleton, fitted.joints, settings=settings, rest=fitted.rest)

    @property
    def calibration(self) -> dict[str, dict[str, float]] | None:
        """Per joint name: the padding, expected recall on new motion and its spread stored by a
        fit with ``target_recall`` (None without one)."""
        from .calibrate import read_calibration

        return read_calibration(self.settings)

    # ------------------------------------------------------------------ per joint
    def joint(self, joint: str | int) -> JointLimit:
        """The limit of one joint (raises LimitsError if it has none)."""
        j = self.skeleton.index(joint)
        if j not in self.joints:
            raise LimitsError(f"joint {self.skeleton.names[j]!r} has no limit")
        return self.joints[j]

    def with_limit(self, joint: str | int, limit: JointLimit | None) -> JointLimits:
        """These limits with one joint's limit replaced (or with None removed); any object with
        project / contains / violation."""
        j = self.skeleton.index(joint)
        joints = dict(self.joints)
        if limit is None:
            joints.pop(j, None)
        else:
            joints[j] = limit
        return self._with(joints=joints)

    def with_enabled(self, joints: Iterable[str | int], enabled: bool = True) -> JointLimits:
        """These limits with the named joints' limits switched on (or off)."""
        on = np.array(self.enabled)
        for n in joints:
            on[self.skeleton.index(n)] = enabled
        return self._with(enabled=on)

    def _with(self, **changes: Any) -> JointLimits:
        parts: dict[str, Any] = {
            "joints": self.joints,
            "enabled": self.enabled,
            "settings": self.settings,
            "rest": self.rest,
            "rest_tolerance": self.rest_tolerance,
        }
        parts.update(changes)
        return JointLimits(self.skeleton, **parts)

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

    def select(
        self,
        joints: Iterable[str | int] | None = None,
        exclude: Iterable[str | int] | None = None,
        motion: Motion | None = None,
        root: bool = False,
    ) -> JointLimits:
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
        return self._with(enabled=on)

    def retarget_rest(self, skeleton: Skeleton) -> JointLimits:
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
            inner, pre0, post0 = (
                (lim.inner, lim.pre, lim.post)
                if isinstance(lim, RestRetargetedLimit)
                else (lim, quat.identity(), quat.identity())
            )
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
        return unit_rotations(q)

    def _pose_core(self) -> tuple[Any, list[int], list[int]]:
        """(the C++ projector of every active joint with a compiled FittedLimit, their indices, the
        other active joints parents first), built on first use (the joint table never changes)."""
        cached = self.__dict__.get("_pose_cache")
        if cached is not None:
            return cached
        compiled = {j: _compiled_limit(self.joints[j]) for j in self.active()}
        fast = [j for j, c in compiled.items() if c is not None]
        core = _core.PoseLimits(self.skeleton.num_joints, fast, [compiled[j] for j in fast])
        rest = [j for j in self._order() if j not in set(fast)]
        self._pose_cache = (core, fast, rest)
        return core, fast, rest

    def _project_pose(self, q: Array, soften: tuple[float, float] | None, hard: Array | None = None) -> Array:
        """The limited poses; with ``hard`` (an array like q) the compiled joints' unsoftened
        result is written there in the same pass."""
        core, _, rest = self._pose_core()
        out = np.empty(q.shape)
        # (other layouts are converted by the binding)
        if not (
            core.project(q, False, 0.0, 0.0, out, hard)
            if soften is None
            else core.project(q, True, soften[0], soften[1], out, hard)
        ):
            raise LimitsError("rotations contain NaN or infinite values")
        if rest:
            self._project_rest(q, out, soften, rest)
        return out

    def _project_rest(self, q: Array, out: Array, soften: tuple[float, float] | None, rest: list[int]) -> None:
        """The joints without a compiled limit, into ``out`` (parents first: a coupled child is
        limited for its parent's result)."""
        for j in rest:
            lim = self.joints[j]
            if isinstance(lim, ParentedLimit):
                out[..., j, :] = lim.project(q[..., j, :], soften, parent=out[..., self.skeleton.index(lim.parent), :])
            elif soften is not None and (isinstance(lim, FittedLimit) or getattr(lim, "softenable", False)):
                out[..., j, :] = cast(SoftenableLimit, lim).project(q[..., j, :], soften)
            else:
                out[..., j, :] = lim.project(q[..., j, :])

    def project(self, rotations: Array, soften: tuple[float, float] | None = None) -> Array:
        """Limited local rotations ``[..., J, 4]``; ``soften=(falloff, radius)`` leaves some leeway."""
        q = (
            rotations
            if type(rotations) is np.ndarray and rotations.dtype == np.float64
            else np.asarray(rotations, np.float64)
        )
        shape = q.shape
        if len(shape) < 2 or shape[-1] != 4 or shape[-2] != len(self.skeleton.names):
            raise LimitsError(f"rotations must be [..., {self.skeleton.num_joints}, 4], got {q.shape}")
        return self._project_pose(unit_rotations(q), None if soften is None else check_soften(soften))

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]:
        """``bool[..., J]``: inside the limit (joints without an active limit count as inside)."""
        q = self._check(rotations)
        _, fast, rest = self._pose_core()
        out = np.ones(q.shape[:-1], bool)
        if fast:  # a compiled FittedLimit contains what it does not move by more than the tolerance
            out[..., fast] = self._violation_fast(q, fast) <= tolerance
        for j in rest:
            lim = self.joints[j]
            if isinstance(lim, ParentedLimit):
                out[..., j] = lim.contains(q[..., j, :], tolerance, parent=q[..., self.skeleton.index(lim.parent), :])
            else:
                out[..., j] = lim.contains(q[..., j, :], tolerance)
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
        self._violation_rest(q, rest, out)
        return out

    def _violation_rest(self, q: Array, rest: list[int], out: Array) -> None:
        """The violations of the joints without a compiled limit, into ``out`` (a coupled child
        against its parent's input rotation)."""
        for j in rest:
            lim = self.joints[j]
            if isinstance(lim, ParentedLimit):
                out[..., j] = lim.violation(q[..., j, :], parent=q[..., self.skeleton.index(lim.parent), :])
            else:
                out[..., j] = lim.violation(q[..., j, :])

    def apply(
        self,
        motion: Motion,
        soften: tuple[float, float] | None = None,
        smooth: Callable[[Array, Array, float], Array] | None = None,
        joints: Iterable[str | int] | None = None,
        exclude: Iterable[str | int] | None = None,
        root: bool = False,
        check: bool = True,
    ) -> Motion:
        """A copy of ``motion`` with every frame limited. ``smooth(limited, original, frame_time)``,
        if given, post-processes the limited rotations ``[F, J, 4]`` (e.g.
        :func:`jointlimits.cleanup.smoothing.smooth_switches`, which removes the jumps a projection
        makes when it switches sides). ``joints``, ``exclude`` and ``root`` choose the joints as in
        :meth:`select` (by default the joints carrying the global position and heading are left
        alone). ``check=False`` skips the skeleton check (for a caller that made it already)."""
        return self._apply(motion, soften, smooth, joints, exclude, root, check, measure=False)[0]

    def apply_and_measure(
        self,
        motion: Motion,
        soften: tuple[float, float] | None = None,
        smooth: Callable[[Array, Array, float], Array] | None = None,
        joints: Iterable[str | int] | None = None,
        exclude: Iterable[str | int] | None = None,
        root: bool = False,
        check: bool = True,
    ) -> tuple[Motion, Array]:
        """:meth:`apply`, and the input's :meth:`violation` ``[F, J]`` (radians) from the same
        pass: the compiled joints' step writes the limited and the unsoftened rotation at once."""
        out, violation = self._apply(motion, soften, smooth, joints, exclude, root, check, measure=True)
        assert violation is not None
        return out, violation

    def _apply(
        self,
        motion: Motion,
        soften: tuple[float, float] | None,
        smooth: Callable[[Array, Array, float], Array] | None,
        joints: Iterable[str | int] | None,
        exclude: Iterable[str | int] | None,
        root: bool,
        check: bool,
        measure: bool,
    ) -> tuple[Motion, Array | None]:
        if smooth is not None and not callable(smooth):
            raise LimitsError(
                "apply: smooth takes a function (limited, original, frame_time) -> rotations, "
                "e.g. jointlimits.cleanup.smoothing.smooth_switches"
            )
        lim = self.select(joints, exclude, motion, root)
        if check:
            lim.check_skeleton(motion.skeleton)
        q = motion.rotations
        if not measure:
            limited, violation = lim.project(q, soften), None
        else:
            q = lim._check(q)
            hard = np.empty(q.shape)
            limited = lim._project_pose(q, None if soften is None else check_soften(soften), hard)
            _, fast, rest = lim._pose_core()
            violation = np.zeros(q.shape[:-1])
            if fast:
                # by blocks of frames: for a whole clip the angle's temporaries (gathered joints,
                # products, norms) would be several [F, J, 4] arrays at once
                step = _ANGLE_BLOCK if q.ndim == 3 else max(1, q.shape[0])
                for a in range(0, q.shape[0], step):
                    violation[a : a + step, ..., fast] = quat.angle(
                        q[a : a + step, ..., fast, :], hard[a : a + step, ..., fast, :]
                    )
            lim._violation_rest(q, rest, violation)
        out = motion.with_rotations(limited)  # (a copy of the rotations would be dropped at once)
        if smooth is not None:
            smoothed = np.asarray(smooth(out.rotations, motion.rotations, motion.frame_time), np.float64)
            if smoothed.shape != q.shape:
                raise LimitsError(f"apply: smooth returned shape {smoothed.shape}, expected {q.shape}")
            out.rotations = smoothed if soften is not None else lim.settle(smoothed, q, motion.frame_time)
        return out, violation

    def settle(self, rotations: Array, original: Array, frame_time: float, margin_degrees: float = 1.0) -> Array:
        """``rotations`` ``[F, J, 4]`` (e.g. a limited clip after smoothing) brought inside the
        limits, joint by joint, parents first (a coupled child for its parent's result): a joint-frame
        outside is projected; where the result steps further between two frames than ``original``
        does at that joint within 0.25 s (plus ``margin_degrees``), the joint walks toward it at
        that speed instead, every frame inside (a projection that switches sides adds no jump); a
        jump the walk cannot avoid at a coupled child (its limit moved with its parent) is walked
        backward in time as well, so it is spread over the frames before it. Joint-frames inside
        and not walking are returned bit for bit."""
        from ..motion.steps import local_step_bound, walk

        q = np.array(rotations, np.float64)
        if q.ndim != 3 or q.shape[1:] != (self.skeleton.num_joints, 4) or q.shape[0] == 0:
            return q
        allow = local_step_bound(original, frame_time, 0.25, margin_degrees)
        for j in self._order():
            lim = self.joints[j]
            par = q[:, self.skeleton.index(lim.parent)] if isinstance(lim, ParentedLimit) else None
            extra = {"parent": par} if par is not None else {}
            inside = lim.contains(q[:, j], 1e-7, **extra)
            cand = q[:, j].copy()
            if not inside.all():
                out_ = ~inside
                cand[out_] = lim.project(q[out_, j], **({"parent": par[out_]} if par is not None else {}))

            def keep(y: Array, t: int, lim: Any = lim, par: Array | None = par) -> Array:
                pt = {"parent": par[t : t + 1]} if par is not None else {}
                return y if lim.contains(y, 1e-7, **pt)[0] else lim.project(y, **pt)

            fwd = walk(cand, allow[:, j], keep)
            if par is None:
                q[:, j] = fwd
                continue
            # where the walk had to stay on a projection that jumps (a coupled child whose parent
            # moved its limit away), the jump is spread over the frames before it: the same walk
            # backward in time (frames whose steps are within the bound stay bit for bit)
            F = fwd.shape[0]
            rb = allow[:, j].copy()
            rb[1:] = allow[:0:-1, j]

            def keep_back(y: Array, t: int, keep: Any = keep, F: int = F) -> Array:
                return keep(y, F - 1 - t)

            q[:, j] = walk(fwd[::-1], rb, keep_back)[::-1]
        return q

    def report(self, motions: Motion | Iterable[Motion], tolerance: float = 1e-6) -> list[dict[str, Any]]:
        """Per limited joint: frames outside, fraction outside, mean and max violation (degrees)
        over the frames of all ``motions`` (see :func:`.report.violation_report`); for limits fitted
        with a target recall also the measured and the expected recall (:func:`.report.with_expected`)."""
        ms = [motions] if isinstance(motions, Motion) else list(motions)
        for m in ms:
            self.check_skeleton(m.skeleton)
        rows = violation_report(
            self.skeleton.names, self.active(), [self.violation(m.rotations) for m in ms], tolerance
        )
        return with_expected(rows, self.calibration)

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
            bad = rest_mismatch(self.skeleton.names, self.rest, rest_directions(skeleton), checked, self.rest_tolerance)
            if bad:
                raise LimitsError(
                    f"these limits were fitted on another rest pose (bone directions differ at {bad}); "
                    "re-express them with retarget_rest (CLI: --retarget-rest)"
                )

    def to_dict(self) -> dict:
        """The limits file's JSON document (see :mod:`.file`)."""
        return to_document(self.skeleton, self.joints, self.enabled, self.settings, self.rest, self.rest_tolerance)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "limits") -> JointLimits:
        """Limits from a JSON document, every entry checked (LimitsError naming ``source``)."""
        return cls(*from_document(d, source))

    def save(self, path: str | os.PathLike) -> None:
        """Write the limits as JSON, atomically."""
        write_document(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> JointLimits:
        """Read a limits file; raises LimitsError if it is missing, corrupt or of another version."""
        return cls(*read_document(path))

    def to_torch(self, device: Any = "cpu") -> Any:
        """The limits as differentiable PyTorch functions' argument (``jointlimits.torch``; the
        ``[torch]`` extra), with its arrays on ``device``."""
        require("torch", "torch", "limits.to_torch")
        return importlib.import_module("jointlimits.torch").TorchLimits(self, device)  # a layer above

    def to_jax(self) -> Any:
        """The limits as differentiable JAX functions' argument (``jointlimits.jax``; the ``[jax]``
        extra)."""
        require("jax", "jax", "limits.to_jax")
        return importlib.import_module("jointlimits.jax").JaxLimits(self)  # a layer above

    def __repr__(self) -> str:
        return (
            f"JointLimits({len(self.joints)} joints of {self.skeleton.num_joints}, "
            f"shape={self.settings.get('shape')!r}, swing_twist={self.settings.get('swing_twist')})"
        )

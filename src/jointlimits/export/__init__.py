"""Export fitted joint limits to physics and game engines, with a loss report.

Per joint, a joint frame is fitted so the data's range is centred (:mod:`.swingtwist`), and each
engine's limit is fitted in that frame in two variants: ``covering`` (the smallest limit of the
engine's kind containing the training rotations, within the engine's allowed ranges) and
``conservative`` (the covering one shrunk until the fitted limit contains it). The report says,
per joint and variant, which share of the training (and held-out) frames the engine limit admits
beside the fitted limit's, and over Haar-uniform random rotations how much each admits, how much
the engine admits that the fitted limit rejects (false accept) and the reverse (false reject).

Adding an engine is one module with an :class:`~.base.Engine` subclass and one line in ENGINES.
The limits are used only through the public API: ``JointLimits.joint(j)`` with ``contains`` and,
when present, ``reference`` and ``twist_axis``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import JointLimitsError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton, forward_kinematics
from .base import Engine, JointInfo
from .locked import LOCK_DEG, lock_reason
from .swingtwist import JointFrame, fit_frame, haar, sample_inside, shrink_inside

__all__ = ["ENGINES", "VARIANTS", "ExportError", "get_engine", "export_limits", "Export", "JointExport"]

#: engine name -> "module:Class" (adding an engine = one module + one line here)
ENGINES = {
    "mujoco": "mujoco:MuJoCo",
    "mujoco-ball": "mujoco:MuJoCoBall",
    "physx": "physx:PhysX",
    "jolt": "jolt:Jolt",
    "bullet": "bullet:Bullet",
    "godot": "godot:Godot",
    "unity": "unity:Unity",
    "unreal": "unreal:Unreal",
    "usd": "usd:UsdD6",
    "usd-spherical": "usd:UsdSpherical",
}
VARIANTS = ("conservative", "covering")
SCHEMA = "jointlimits/engine-export"


class ExportError(JointLimitsError, ValueError):
    """An export cannot be made (unknown engine, clips of another skeleton, no joint to export)."""


def get_engine(name: str) -> Engine:
    """The engine object registered under ``name``."""
    if name not in ENGINES:
        raise ExportError(f"unknown engine {name!r}; expected one of {', '.join(ENGINES)}")
    mod, cls = ENGINES[name].split(":")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), cls)()


@dataclass
class JointExport:
    """One exported joint: its frame, the engine limit and parameters and report per variant."""

    index: int
    info: JointInfo
    limits: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, dict] = field(default_factory=dict)
    report: dict[str, dict] = field(default_factory=dict)
    shrink: Any = 1.0
    training_source: str = "clips"


@dataclass
class Export:
    """The result of :func:`export_limits`; :meth:`to_dict` is what the CLI writes."""

    engine: Engine
    skeleton: Skeleton
    joints: list[JointExport]
    variants: tuple[str, ...]
    metres_per_unit: float
    units: str
    up_axis: str
    up_quat: np.ndarray
    root_height: float
    body_quats: dict[int, np.ndarray]
    summary: dict[str, dict]
    settings: dict[str, Any]

    def frames(self) -> dict[int, JointFrame]:
        return {je.index: je.info.frame for je in self.joints}

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "version": 1,
            "engine": self.engine.name,
            "docs": list(self.engine.docs),
            "conventions": {
                "engine": self.engine.conventions,
                "quaternions": "w, x, y, z",
                "frames": (
                    "per joint, 'parent_frame' is the joint frame in the parent joint's frame (rotation "
                    "centre*basis, at the joint's offset) and 'child_frame' in the joint's own frame "
                    "(rotation basis, at its origin); the engine's relative rotation is "
                    "inv(parent_frame) * q * child_frame for a local rotation q, identity at 'centre'; "
                    "x is the twist axis along the bone, y/z the principal swing directions. Engines "
                    "that take their frames from the bodies' pose at creation need the centre pose "
                    "(every joint's local rotation = 'centre')."
                ),
                "lengths": f"metres (source units: {self.units}, x{self.metres_per_unit:g}); Unreal centimetres",
                "root": "the root joint has no parent body and is not exported",
            },
            "settings": self.settings,
            "joints": [
                {
                    "name": je.info.name,
                    "parent": je.info.parent,
                    "centre": je.info.frame.centre.tolist(),
                    "parent_frame": {"position": je.info.offset_m.tolist(), "rotation": je.info.frame.parent.tolist()},
                    "child_frame": {"position": [0.0, 0.0, 0.0], "rotation": je.info.frame.child.tolist()},
                    "training": je.training_source,
                    "conservative_scale": np.atleast_1d(je.shrink).tolist(),
                    "variants": {v: je.parameters[v] for v in self.variants},
                    "report": {v: je.report[v] for v in self.variants},
                }
                for je in self.joints
            ],
            "report": {
                "summary": self.summary,
                "joints": [{"joint": je.info.name, **{v: je.report[v] for v in self.variants}} for je in self.joints],
            },
        }

    def mjcf(self, variant: str) -> str:
        """The whole MJCF model with the ``variant``'s hinges (MuJoCo export only)."""
        from .mujoco import write_mjcf

        if not self.engine.name.startswith("mujoco"):
            raise ExportError("an MJCF model is written by the mujoco export only")
        hinges = {je.index: je.parameters[variant] for je in self.joints}
        return write_mjcf(
            self.skeleton,
            self.metres_per_unit,
            self.up_quat,
            self.root_height,
            self.body_quats,
            hinges,
            model_name=f"jointlimits_{variant}",
        )

    def usd_stage(self, variant: str):
        """The ``variant``'s UsdPhysics articulation as an in-memory ``Usd.Stage`` (USD exports only)."""
        from .usd import articulation_stage

        if not self.engine.name.startswith("usd"):
            raise ExportError("a USD physics stage is written by the usd exports only")
        return articulation_stage(self, variant)

    def qpos(self, model, rotations: np.ndarray, root_positions: np.ndarray) -> np.ndarray:
        """qpos ``[F, nq]`` of the loaded MJCF model for local rotations ``[F, J, 4]``."""
        from .mujoco import qpos_from_rotations

        return qpos_from_rotations(
            model,
            self.skeleton,
            rotations,
            root_positions,
            self.metres_per_unit,
            self.up_quat,
            np.zeros(3),
            self.body_quats,
            self.frames(),
        )

    def table(self) -> str:
        """The loss report as a text table (percentages)."""
        hold = any("holdout_engine" in je.report[v] for je in self.joints for v in self.variants)
        head = (
            f"{'joint':<18} {'variant':<12} {'train eng':>9} {'train fit':>9} "
            + (f"{'held eng':>9} {'held fit':>9} " if hold else "")
            + f"{'rand eng':>9} {'rand fit':>9} {'false acc':>9} {'false rej':>9}"
        )
        lines = [f"{self.engine.name} export: share of frames admitted (%), engine limit vs fitted limit", head]

        def row(name: str, v: str, r: dict) -> str:
            s = f"{name:<18} {v:<12} {100 * r['train_engine']:>9.2f} {100 * r['train_fitted']:>9.2f} "
            if hold:
                s += (
                    f"{100 * r.get('holdout_engine', float('nan')):>9.2f} "
                    f"{100 * r.get('holdout_fitted', float('nan')):>9.2f} "
                )
            s += (
                f"{100 * r['random_engine']:>9.3f} {100 * r['random_fitted']:>9.3f} "
                f"{100 * r['false_accept']:>9.3f} {100 * r['false_reject']:>9.3f}"
            )
            return s

        for je in self.joints:
            for v in self.variants:
                lines.append(row(je.info.name, v, je.report[v]))
        for v in self.variants:
            lines.append(row("MEAN", v, self.summary[v]["mean"]))
            w = self.summary[v].get("whole_pose")
            if w:
                held = (
                    f" {100 * w['holdout_engine']:>9.2f} {100 * w['holdout_fitted']:>9.2f}"
                    if "holdout_engine" in w
                    else ""
                )
                lines.append(
                    f"{'ALL JOINTS':<18} {v:<12} {100 * w['train_engine']:>9.2f} {100 * w['train_fitted']:>9.2f}"
                    f"{held}   (frames with every exported joint admitted)"
                )
        for v in self.variants:
            locked = [je for je in self.joints if "locked" in je.report[v]]
            if locked:
                lines.append(
                    f"{v}: {len(locked)} of {len(self.joints)} joints (nearly) locked, a range under {LOCK_DEG:g} deg:"
                )
            by_reason: dict[str, list[str]] = {}
            for je in locked:
                lk = je.report[v]["locked"]
                ranges = ", ".join(f"{k} {d:.1f}" for k, d in lk["ranges_deg"].items())
                by_reason.setdefault(lk["reason"], []).append(f"{je.info.name} ({ranges})")
            for why, names in by_reason.items():
                lines.append(f"  {'; '.join(names)}: {why}")
        return "\n".join(lines)


def _pose(skeleton: Skeleton, rotations: np.ndarray) -> Motion:
    m = Motion.rest(skeleton, 1)
    m.rotations = np.asarray(rotations, np.float64).reshape(1, skeleton.num_joints, 4)
    return m


def export_limits(
    limits,
    engine: str | Engine,
    clips: Sequence[Motion] | None = None,
    holdout: Sequence[Motion] | None = None,
    variants: Sequence[str] = VARIANTS,
    samples: int = 4000,
    random: int = 40000,
    seed: int = 0,
    progress: Callable[[int, int, str], None] | None = None,
) -> Export:
    """Fit ``engine``'s limits to ``limits`` (a :class:`jointlimits.JointLimits`) and measure them.

    Training rotations are the ``clips``' when given, else ``samples`` rotations per joint the
    fitted limit contains (rejection sampling of Haar-uniform rotations near its reference).
    ``holdout`` clips are only measured. ``random`` Haar-uniform rotations per joint measure the
    false accepts. The root joint (no parent body) is not exported.
    """
    from ..motion.units import guess_units, guess_up_axis, up_vector

    eng = get_engine(engine) if isinstance(engine, str) else engine
    variants = tuple(variants)
    for v in variants:
        if v not in VARIANTS:
            raise ExportError(f"unknown variant {v!r}; expected one of {', '.join(VARIANTS)}")
    sk = limits.skeleton
    for group, ms in (("clip", clips or []), ("held-out clip", holdout or [])):
        for k, m in enumerate(ms):
            try:
                limits.check_skeleton(m.skeleton)
            except JointLimitsError as e:
                raise ExportError(f"{group} {k}: {e}") from None
            if m.num_frames == 0:
                raise ExportError(f"{group} {k} has no frames")
    rng = np.random.default_rng(seed)
    todo = [j for j in limits.active() if sk.parents[j] >= 0]
    if not todo:
        raise ExportError("no limited joint with a parent to export (the root is never exported)")
    train_all = np.concatenate([m.rotations for m in clips], axis=0) if clips else None
    hold_all = np.concatenate([m.rotations for m in holdout], axis=0) if holdout else None

    # the reference pose: each joint's reference rotation where its limit has one, else the data's mean
    ref_pose = np.tile([1.0, 0.0, 0.0, 0.0], (sk.num_joints, 1))
    if train_all is not None:
        ref_pose = quat.average(train_all, axis=0)
    for j in limits.active():
        r = getattr(limits.joint(j), "reference", None)
        if r is not None:
            ref_pose[j] = r
    pose = _pose(sk, ref_pose)
    if clips:
        pose.positions[0, 0] = clips[0].positions[0, 0]
    ug = guess_units(pose)
    mpu = ug.metres_per_unit
    up = guess_up_axis(pose)
    up_vec = up_vector(up)
    up_quat = quat.between(up_vec, np.array([0.0, 0.0, 1.0]))
    axes = sk.bone_directions()

    out: list[JointExport] = []
    train_masks: dict[str, list[np.ndarray]] = {v: [] for v in variants}
    fit_masks: list[np.ndarray] = []
    hold_masks: dict[str, list[np.ndarray]] = {v: [] for v in variants}
    fit_hold_masks: list[np.ndarray] = []
    body_quats: dict[int, np.ndarray] = {0: ref_pose[0]}
    for j in range(1, sk.num_joints):
        body_quats[j] = ref_pose[j]
    for k, j in enumerate(todo):
        name = sk.names[j]
        if progress is not None:
            progress(k, len(todo), name)
        lim = limits.joint(j)
        reference = np.asarray(getattr(lim, "reference", ref_pose[j]), np.float64)
        twist_axis = np.asarray(getattr(lim, "twist_axis", axes[j]), np.float64)
        if train_all is not None:
            train = train_all[:, j]
            source = "clips"
        else:
            train = sample_inside(lim, reference, samples, rng)
            source = "samples inside the fitted limit"
            if train.shape[0] == 0:
                raise ExportError(f"joint {name!r}: no rotation found inside its fitted limit to sample")
        frame = fit_frame(train, twist_axis, reference)
        info = JointInfo(name, sk.names[int(sk.parents[j])], sk.offsets[j] * mpu, frame)
        r_train = frame.to_engine(train)
        covering = eng.cover(r_train)
        je = JointExport(j, info, training_source=source)
        if "conservative" in variants:
            conservative, je.shrink = shrink_inside(covering, frame, lim.contains, rng)
            je.limits["conservative"] = conservative
        if "covering" in variants:
            je.limits["covering"] = covering
        body_quats[j] = frame.centre
        # measured once per joint, shared by the variants
        fit_train = np.asarray(lim.contains(train), bool)
        if train_all is not None:
            fit_masks.append(fit_train)
        rand = haar(random, rng)
        fit_rand = np.asarray(lim.contains(rand), bool)
        r_rand = frame.to_engine(rand)
        if hold_all is not None:
            fit_hold = np.asarray(lim.contains(hold_all[:, j]), bool)
            fit_hold_masks.append(fit_hold)
            r_hold = frame.to_engine(hold_all[:, j])
        for v in variants:
            el = je.limits[v]
            je.parameters[v] = eng.parameters(el, info)
            eng_train = np.asarray(el.admits(r_train), bool)
            if train_all is not None:
                train_masks[v].append(eng_train)
            eng_rand = np.asarray(el.admits(r_rand), bool)
            rep: dict[str, Any] = {
                "train_frames": int(train.shape[0]),
                "train_engine": float(eng_train.mean()),
                "train_fitted": float(fit_train.mean()),
                "random_engine": float(eng_rand.mean()),
                "random_fitted": float(fit_rand.mean()),
                "false_accept": float(np.mean(eng_rand & ~fit_rand)),
                "false_reject": float(np.mean(~eng_rand & fit_rand)),
            }
            if hold_all is not None:
                eng_hold = np.asarray(el.admits(r_hold), bool)
                hold_masks[v].append(eng_hold)
                rep.update(
                    holdout_frames=int(hold_all.shape[0]),
                    holdout_engine=float(eng_hold.mean()),
                    holdout_fitted=float(fit_hold.mean()),
                )
            locked = lock_reason(el, covering, je.shrink, v, eng.name)
            if locked is not None:
                rep["locked"] = locked
            je.report[v] = rep
        out.append(je)
    if progress is not None:
        progress(len(todo), len(todo), "")

    summary: dict[str, dict] = {}
    for v in variants:
        keys = [k for k in out[0].report[v] if k not in ("train_frames", "holdout_frames", "locked")]
        summary[v] = {"mean": {k: float(np.mean([je.report[v][k] for je in out])) for k in keys}}
        summary[v]["locked"] = [je.info.name for je in out if "locked" in je.report[v]]
        if train_all is not None:
            summary[v]["whole_pose"] = {
                "train_engine": float(np.all(train_masks[v], axis=0).mean()),
                "train_fitted": float(np.all(fit_masks, axis=0).mean()),
            }
            if hold_all is not None:
                summary[v]["whole_pose"].update(
                    holdout_engine=float(np.all(hold_masks[v], axis=0).mean()),
                    holdout_fitted=float(np.all(fit_hold_masks, axis=0).mean()),
                )
    # root height above the lowest joint of the reference pose (metres), for the MJCF body
    _, gp = forward_kinematics(pose)
    h = (gp[0] @ up_vec) * mpu
    root_height = float(h[0] - h.min() + 0.05)
    settings = {
        "variants": list(variants),
        "training": "clips" if clips else "samples",
        "clips": len(clips or []),
        "holdout_clips": len(holdout or []),
        "samples": samples,
        "random": random,
        "seed": seed,
        "up_axis": up,
    }
    return Export(eng, sk, out, variants, mpu, ug.name, up, up_quat, root_height, body_quats, summary, settings)

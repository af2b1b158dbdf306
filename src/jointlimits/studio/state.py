"""What the studio shows and edits, without a browser: clips, the frame, the working pose, limits,
IK, edits and saving. :class:`StudioState` is what the GUI drives and what the tests drive.

Clips: the inputs (read-only, shown as overlays) and one *working* clip, a copy of the first input,
which posing, IK, "apply limits", "filter" and "foot-lock" change. The working pose is the working
clip's current frame; the *raw* pose beside it is the same pose before the limits (the ghost).
Lengths stay in the clips' units; the GUI converts to metres for drawing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ..cleanup.smoothing import smooth_switches
from ..limits.model import SHAPES, FittedLimit, JointLimits, Shape
from ..motion import quat
from ..motion.skeleton import Motion
from . import posing
from .posing import IKChain, Soften

__all__ = ["Clip", "StudioState", "SaveError", "OUTPUT_NAMES"]

Array = NDArray[np.float64]

#: Generated file names in the save folder (a free number is picked, nothing is ever replaced).
OUTPUT_NAMES = {
    "clip": "studio_clip_{:03d}.bvh",
    "pose": "studio_pose_{:03d}.bvh",
    "limits": "studio_limits_{:03d}.json",
}


class SaveError(Exception):
    """A save the studio refuses (no save folder, would replace an input)."""


@dataclass
class Clip:
    """A named motion shown in the studio. ``contacts [F, n]`` / ``feet`` after foot locking."""

    name: str
    motion: Motion
    path: Path | None = None
    visible: bool = True
    contacts: NDArray[np.bool_] | None = None
    feet: list[int] = field(default_factory=list)


class StudioState:
    """The studio's model. Thread-safe: every public method takes the same lock.

    ``clips``: the inputs (the first is the one edited). ``limits``: a JointLimits of their
    skeleton. ``fit_clips``: the motions per-joint refits use (default: the inputs).
    ``save_dir``: where saves go (None: saving is refused). ``inputs``: paths never written.
    """

    def __init__(
        self,
        clips: Sequence[Clip],
        limits: JointLimits,
        fit_clips: Sequence[Motion] | None = None,
        save_dir: str | os.PathLike | None = None,
        inputs: Sequence[str | os.PathLike] = (),
    ):
        if not clips:
            raise ValueError("the studio needs at least one clip")
        sk = clips[0].motion.skeleton
        for c in clips:
            limits.check_skeleton(c.motion.skeleton)
        self.lock = threading.RLock()
        self.skeleton = sk
        self.inputs = list(clips)
        self.limits = limits
        self.fit_clips = list(fit_clips) if fit_clips is not None else [c.motion for c in clips]
        self.save_dir = None if save_dir is None else Path(save_dir)
        self.input_paths = [Path(p).resolve() for p in inputs]
        self.work = Clip("working", clips[0].motion.copy())
        self.history: list[str] = []
        from ..motion.units import guess_units

        self.metres_per_unit = float(guess_units(clips[0].motion).metres_per_unit)
        # playback
        self.frame = 0
        self.playing = False
        self.speed = 1.0
        self.loop = True
        self._clock = 0.0
        # limits and posing
        self.limits_on = True
        self.soften: Soften = None
        self.selected = self._default_joint()
        self.raw = self.work.motion.rotations[0].copy()
        self._source = self.raw[None]  # the working clip without limits: set by _rebase below
        # IK
        self.ik_chains: dict[str, IKChain] = posing.available_ik_modes(sk)
        self.ik_key: str | None = None
        self.ik_limits_on = True
        self.ik_use_pole = False
        self.ik_target: Array | None = None
        self.ik_pole: Array | None = None
        self.tolerance = 0.001 / self.metres_per_unit  # 1 mm in clip units
        self._rebase()

    # ------------------------------------------------------------------ basics
    @property
    def num_frames(self) -> int:
        return max([self.work.motion.num_frames] + [c.motion.num_frames for c in self.inputs])

    @property
    def clips(self) -> list[Clip]:
        """Every clip drawn: the inputs, then the working clip."""
        return [*self.inputs, self.work]

    def joint_names(self) -> list[str]:
        """Joints that can be posed (those with rotation channels)."""
        return [n for j, n in enumerate(self.skeleton.names) if self.skeleton.rotation_order(j)]

    def _default_joint(self) -> int:
        from ..motion.naming import find_role

        sk = self.skeleton
        arm = find_role(sk, "upper_arm", side="left")  # the left upper arm, whatever its name
        if arm:
            return arm[0]
        act = self.limits.active()
        return act[0] if act else (1 if sk.num_joints > 1 else 0)

    def clip_frame(self, clip: Clip, frame: int | None = None) -> int:
        f = self.frame if frame is None else frame
        return int(min(max(f, 0), clip.motion.num_frames - 1))

    @property
    def pose(self) -> Array:
        """The working pose's local rotations ``[J, 4]`` (limited when limits are on)."""
        return self.work.motion.rotations[self.clip_frame(self.work)]

    @property
    def positions(self) -> Array:
        return self.work.motion.positions[self.clip_frame(self.work)]

    def _active_limits(self, on: bool | None = None) -> JointLimits | None:
        return self.limits if (self.limits_on if on is None else on) else None

    # ------------------------------------------------------------------ playback
    def set_frame(self, frame: int) -> int:
        """Scrub to ``frame`` (clamped); the ghost resets to the new pose."""
        with self.lock:
            self.frame = int(min(max(int(frame), 0), self.num_frames - 1))
            self._clock = self.frame * self.work.motion.frame_time
            self.raw = self._source[self.clip_frame(self.work)].copy()
            self._reset_ik_targets()
            return self.frame

    def advance(self, seconds: float) -> int:
        """Play ``seconds`` of wall time at the current speed; loops or stops at the end."""
        with self.lock:
            ft = self.work.motion.frame_time
            self._clock += seconds * self.speed
            f = int(np.floor(self._clock / ft + 1e-9))
            n = self.num_frames
            if f >= n:
                if self.loop:
                    self._clock %= n * ft
                    f = int(self._clock / ft) % n
                else:
                    f = n - 1
                    self.playing = False
            self.frame = f
            self.raw = self._source[self.clip_frame(self.work)].copy()
            return f

    # ------------------------------------------------------------------ violation
    def violation(self, clip: Clip | None = None, frame: int | None = None) -> Array:
        """Radians ``[J]`` each joint of ``clip`` (default: working) is outside its limit on the frame."""
        with self.lock:
            c = self.work if clip is None else clip
            q = c.motion.rotations[self.clip_frame(c, frame)]
            return self.limits.violation(q[None])[0]

    # ------------------------------------------------------------------ posing
    def select_joint(self, joint: str | int) -> int:
        with self.lock:
            self.selected = self.skeleton.index(joint)
            return self.selected

    def _rebase(self) -> None:
        """The working clip changed as a whole: its rotations become the unlimited source (what the
        ghost shows), and with limits on every frame of it is shown (and played, and saved)
        projected into the limits."""
        self._source = np.array(self.work.motion.rotations, np.float64)
        self._show_limited()

    def _show_limited(self) -> None:
        """The working clip's frames: the source projected into the limits when they are on, the
        source itself when off; the ghost is the source's current frame."""
        lim = self._active_limits()
        rot = self._source if lim is None else lim.project(self._source, self.soften)
        if not np.array_equal(rot, self.work.motion.rotations):
            self.work.motion.rotations[...] = rot
            self.work.motion.source_euler = None  # the poses changed; write them from the rotations
        self.raw = self._source[self.clip_frame(self.work)].copy()

    def _commit(self, rotations: Array, raw: Array) -> None:
        f = self.clip_frame(self.work)
        self.work.motion.rotations[f] = rotations
        self._source[f] = raw
        self.work.motion.source_euler = None  # the pose changed; write it from the rotations
        self.raw = raw

    def rotate_joint(self, joint: str | int, rotation: Array, space: str = "local") -> Array:
        """Set a joint's rotation (``space`` "local" or "global", w x y z) as the gizmo does: the
        rotation is kept as the ghost, and the pose gets it projected into the joint's limit
        (when limits are on). Returns the joint's new local rotation."""
        with self.lock:
            j = self.skeleton.index(joint)
            q = np.asarray(rotation, np.float64).reshape(4)
            pose = self.pose.copy()
            if space == "global":
                q = posing.local_from_global(self.skeleton, pose, self.positions, j, q)
            elif space != "local":
                raise ValueError(f"space must be 'local' or 'global', got {space!r}")
            q = quat.normalize(q)
            raw = self._source[self.clip_frame(self.work)].copy()  # the other joints keep their ghost
            raw[j] = q
            pose[j] = posing.limit_joint(self._active_limits(), j, q, self.soften)
            self._commit(pose, raw)
            return pose[j].copy()

    def joint_global(self, joint: str | int, raw: bool = False) -> tuple[Array, Array]:
        """Global rotation and position (clip units) of a joint in the working (or raw) pose."""
        with self.lock:
            j = self.skeleton.index(joint)
            gr, gp = posing.pose_fk(self.skeleton, self.raw if raw else self.pose, self.positions)
            return gr[j], gp[j]

    def reset_joint(self, joint: str | int | None = None) -> None:
        """Put a joint back to the first input's rotation on this frame."""
        with self.lock:
            j = self.selected if joint is None else self.skeleton.index(joint)
            src = self.inputs[0]
            q = src.motion.rotations[self.clip_frame(src), j]
            pose = self.pose.copy()
            pose[j] = q
            raw = self.raw.copy()
            raw[j] = q
            self._commit(pose, raw)

    def set_limits_on(self, on: bool) -> None:
        """Limits on: every frame of the working clip is re-projected from its unlimited source
        (the ghost), so playback shows the limited clip; off: the source is the clip."""
        with self.lock:
            self.limits_on = bool(on)
            self._show_limited()

    def set_soften(self, soften: Soften) -> None:
        with self.lock:
            self.soften = None if soften is None else (float(soften[0]), float(soften[1]))
            self.set_limits_on(self.limits_on)

    # ------------------------------------------------------------------ per-joint limits
    def joint_limit_info(self, joint: str | int | None = None) -> dict[str, Any]:
        """Shape, swing-twist, padding and enabled state of a joint's limit ({} if it has none)."""
        with self.lock:
            j = self.selected if joint is None else self.skeleton.index(joint)
            lim = self.limits.joints.get(j)
            if lim is None:
                return {}
            pad = self.limits.settings.get("joint_padding", {}).get(
                self.skeleton.names[j], self.limits.settings.get("padding", 0.05)
            )
            if isinstance(lim, FittedLimit):
                shape = cast(Shape, lim.swing if lim.swing_twist else lim.shape).kind
                return {
                    "shape": shape,
                    "swing_twist": lim.swing_twist,
                    "padding": float(pad),
                    "enabled": bool(self.limits.enabled[j]),
                }
            return {
                "shape": str(getattr(lim, "kind", type(lim).__name__)),
                "swing_twist": False,
                "padding": float(pad),
                "enabled": bool(self.limits.enabled[j]),
            }

    def shapes(self) -> tuple[str, ...]:
        """The limit shapes the model offers."""
        return SHAPES

    def refit_joint(
        self,
        joint: str | int | None = None,
        shape: str | None = None,
        swing_twist: bool | None = None,
        padding: float | None = None,
    ) -> dict[str, Any]:
        """Refit one joint's limit on the fitting clips with another shape / swing-twist / padding
        (JointLimits.fit restricted to that joint; same reference pose as the model)."""
        with self.lock:
            j = self.selected if joint is None else self.skeleton.index(joint)
            name = self.skeleton.names[j]
            info = self.joint_limit_info(j) or {
                "shape": "ellipsoid",
                "swing_twist": False,
                "padding": 0.05,
                "enabled": True,
            }
            shape = info["shape"] if shape is None else shape
            if shape not in SHAPES:
                raise ValueError(f"unknown shape {shape!r}; expected one of {', '.join(SHAPES)}")
            st = info["swing_twist"] if swing_twist is None else bool(swing_twist)
            pad = info["padding"] if padding is None else float(padding)
            old = self.limits.joints.get(j)
            ref: Any = self.limits.settings.get("reference", "mean")
            if isinstance(old, FittedLimit):  # keep the model's reference pose for this joint
                ref_pose = quat.identity(self.skeleton.num_joints)
                ref_pose[j] = old.reference
                ref = ref_pose
            one = JointLimits.fit(
                self.fit_clips, shape=shape, swing_twist=st, padding=pad, reference=ref, joints=[name]
            )
            self.limits = self.limits.with_limit(j, one.joints[j])
            self.limits.settings.setdefault("joint_padding", {})[name] = pad
            self.limits.settings.setdefault("joint_shapes", {})[name] = shape + (" swing-twist" if st else "")
            self.history.append(f"refit {name}: {shape}{' swing-twist' if st else ''}, padding {pad:g}")
            self.set_limits_on(self.limits_on)
            return self.joint_limit_info(j)

    def set_joint_enabled(self, joint: str | int | None, enabled: bool) -> None:
        with self.lock:
            j = self.selected if joint is None else self.skeleton.index(joint)
            self.limits = self.limits.with_enabled([j], enabled)
            self.history.append(f"{'enable' if enabled else 'disable'} {self.skeleton.names[j]}")
            self.set_limits_on(self.limits_on)

    # ------------------------------------------------------------------ IK
    def set_ik_mode(self, key: str | None) -> IKChain | None:
        """Choose an IK mode (a key of :data:`posing.IK_MODES` this skeleton supports) or None."""
        with self.lock:
            if key is not None and key not in self.ik_chains:
                raise KeyError(
                    f"IK mode {key!r} is not available for this skeleton; available: {', '.join(self.ik_chains)}"
                )
            self.ik_key = key
            self._reset_ik_targets()
            return None if key is None else self.ik_chains[key]

    def _reset_ik_targets(self) -> None:
        if self.ik_key is None:
            self.ik_target = self.ik_pole = None
            return
        ch = self.ik_chains[self.ik_key]
        gr, gp = posing.pose_fk(self.skeleton, self.pose, self.positions)
        if self.ik_key == "look-at" or posing.ik_mode(self.ik_key).solve is posing._solve_look_at:
            fwd = quat.mul_vec(gr[ch.effector], np.asarray(ch.forward))
            self.ik_target = gp[ch.effector] + fwd * (0.5 / self.metres_per_unit)
        else:
            self.ik_target = gp[ch.effector].copy()
        if len(ch.joints) >= 2:
            a, b = gp[ch.joints[0]], gp[ch.joints[1]]
            c = gp[ch.effector]
            mid = 0.5 * (a + c)
            out = b - mid
            n = np.linalg.norm(out)
            out = out / n if n > 1e-9 else np.array([0.0, 0.0, 1.0])
            self.ik_pole = b + out * (0.3 / self.metres_per_unit)
        else:
            self.ik_pole = None

    def move_ik_target(self, target: Array, pole: Array | None = None) -> Array:
        """Drag the IK target (clip units, global) and the pole (two-bone modes): the chain is
        solved with and without limits; the pose gets the limited solve (when IK limits are on)
        and the ghost the free one. Returns the new pose ``[J, 4]``."""
        with self.lock:
            if self.ik_key is None:
                raise ValueError("no IK mode selected")
            mode = posing.ik_mode(self.ik_key)
            ch = self.ik_chains[self.ik_key]
            self.ik_target = np.asarray(target, np.float64).reshape(3).copy()
            if pole is not None:
                self.ik_pole = np.asarray(pole, np.float64).reshape(3).copy()
            use_pole = self.ik_pole if (mode.uses_pole and self.ik_use_pole) else None
            start = self.pose.copy()
            pos = self.positions
            free = mode.solve(self.skeleton, ch, start, pos, self.ik_target, use_pole, None, self.tolerance)
            lims = self.limits if (self.ik_limits_on and self.limits_on) else None
            limited = (
                free
                if lims is None
                else mode.solve(self.skeleton, ch, start, pos, self.ik_target, use_pole, lims, self.tolerance)
            )
            self._commit(limited, free)
            return limited.copy()

    def effector_error(self) -> float:
        """Distance (clip units) from the IK effector to its target in the working pose."""
        with self.lock:
            if self.ik_key is None or self.ik_target is None:
                return 0.0
            ch = self.ik_chains[self.ik_key]
            _, gp = posing.pose_fk(self.skeleton, self.pose, self.positions)
            return float(np.linalg.norm(gp[ch.effector] - self.ik_target))

    # ------------------------------------------------------------------ edits
    def apply_limits(self, smooth: bool = False) -> None:
        """Project every frame of the working clip into the limits (``smooth``: spring over side switches)."""
        with self.lock:
            self.work.motion = self.limits.apply(
                self.work.motion, soften=self.soften, smooth=smooth_switches if smooth else None
            )
            self.history.append("apply limits")
            self._rebase()

    def filter(self, detect: bool = True) -> list[int]:
        """Pops of the working clip repaired joint by joint (as ``jointlimits filter --detect``);
        returns the cut frames."""
        from ..cleanup.repair import repair_pops

        with self.lock:
            self.work.motion, rep = repair_pops(self.work.motion, None, detect)
            cuts = [int(c) for c in rep.cuts]
            self.history.append(f"filter ({len(cuts)} cuts)")
            self._rebase()
            return cuts

    def splice(self) -> str:
        """Append the next input clip (the first one again when there is only one) to the working
        clip, the pop at the join smoothed by the tracking spring; returns what was done."""
        from ..cleanup.tracking import splice

        with self.lock:
            other = self.inputs[1] if len(self.inputs) > 1 else self.inputs[0]
            at = self.work.motion.num_frames
            self.work.motion = splice(self.work.motion, other.motion, smooth=True)
            self.work.contacts = None
            self.history.append(f"splice {other.name} at frame {at}")
            self._rebase()
            return f"spliced {other.name} at frame {at} ({self.work.motion.num_frames} frames)"

    def footlock(self) -> dict[str, Any]:
        """Lock the working clip's planted feet (two-bone legs inside the limits); contacts are kept
        for drawing. Returns the report as a dict."""
        from ..cleanup.contacts import find_feet
        from ..cleanup.footlock import footlock

        with self.lock:
            out, rep = footlock(self.work.motion, self.limits if self.limits_on else None)
            self.work.motion = out
            self.work.contacts = rep.contacts
            self.work.feet = [self.skeleton.index(n) for n in rep.feet] if rep.feet else find_feet(self.skeleton)
            self.history.append("foot-lock")
            self._rebase()
            return rep.to_dict()

    def reset_work(self) -> None:
        """Start over from the first input."""
        with self.lock:
            self.work = Clip("working", self.inputs[0].motion.copy(), visible=self.work.visible)
            self.history.append("reset")
            self._rebase()

    # ------------------------------------------------------------------ saving
    def _output_path(self, kind: str) -> Path:
        if self.save_dir is None:
            raise SaveError("saving is off (no save folder)")
        if not self.save_dir.is_dir():
            raise SaveError(f"{self.save_dir}: save folder does not exist")
        for k in range(1, 1000):
            p = self.save_dir / OUTPUT_NAMES[kind].format(k)
            if not p.exists() and p.resolve() not in self.input_paths:
                return p
        raise SaveError(f"{self.save_dir}: no free file name left for {kind}")

    def save_clip(self) -> Path:
        """Write the working clip as a new BVH in the save folder (atomic, never replacing a file)."""
        from ..io import bvh

        with self.lock:
            p = self._output_path("clip")
            bvh.save(p, self.work.motion, overwrite=False)
            return p

    def save_pose(self) -> Path:
        """Write the working pose as a one-frame BVH."""
        from ..io import bvh

        with self.lock:
            p = self._output_path("pose")
            f = self.clip_frame(self.work)
            bvh.save(p, self.work.motion.frames(f, f + 1), overwrite=False)
            return p

    def save_limits(self) -> Path:
        """Write the limits (with per-joint changes) as a new JSON file."""
        with self.lock:
            p = self._output_path("limits")
            self.limits.save(p)
            return p

"""The human joint-limit model: limits of the canonical humanoid, used on any humanoid rig.

A :class:`HumanModel` holds one shape per canonical segment (:mod:`jointlimits.motion.anatomy`),
fitted on the pooled anatomical rotations of many people and rigs. :func:`limits_for` turns it
into :class:`~jointlimits.limits.model.JointLimits` for any humanoid skeleton, with no fitting:
each segment's shape is carried into the rig joint's own limit space by the fixed change of frame
between the segment's anatomical frame and the joint (exact for a limb joint whose parent is the
parent segment's joint; a spine or neck chain of ``n`` joints gives each joint the shape scaled
by ``1/n``, an even share of the composed rotation).

The package ships a model (``human_model.json``, read by :func:`load_model` with no path) fitted
only on clips whose licences allow use in any product; its ``provenance`` names the clips, the
people and the licences. ``jointlimits human build`` fits one on any clips (:meth:`HumanModel.build`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ..motion.anatomy import SEGMENTS, anatomy, joint_transform, limit_points
from ..motion.skeleton import Motion, Skeleton
from .joint import FittedLimit, fit_shape
from .kdop import KDop
from .model import JointLimits
from .shape import Shape

__all__ = [
    "FORMAT",
    "VERSION",
    "HumanModel",
    "load_model",
    "limits_for",
    "is_human_model",
    "SHIPPED",
]

Array = NDArray[np.float64]

FORMAT = "jointlimits-human-model"
VERSION = 1
#: the name that stands for the shipped model wherever a limits file is accepted
SHIPPED = "human"
_PACKAGE_FILE = "human_model.json"
#: model-space padding (radians) of the shipped model's shapes
DEFAULT_PADDING = 0.15


def _scaled_kdop(shape: KDop, rotation: Array, n: float) -> KDop:
    """The k-DOP of the points ``rotation @ v / n`` for ``v`` in ``shape``."""
    mins = np.asarray(shape.mins, np.float64) / n
    maxs = np.asarray(shape.maxs, np.float64) / n
    return KDop(
        position=rotation @ np.asarray(shape.position, np.float64) / n,
        rotation=rotation @ np.asarray(shape.rotation, np.float64),
        axes=np.asarray(shape.axes, np.float64),
        mins=mins,
        maxs=maxs,
        exact=shape.exact,
    )


@dataclass
class HumanModel:
    """Per canonical segment, a shape in model space (the scaled angle axis of the anatomical
    rotation). ``expected_recall`` holds per segment the leave-one-person-out recall measured when
    the model was built (if it was), ``provenance`` where the data came from."""

    segments: dict[str, Shape]
    padding: float = DEFAULT_PADDING
    expected_recall: dict[str, float] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    version: int = VERSION

    # ------------------------------------------------------------------ building
    @staticmethod
    def points(motions: Iterable[Motion]) -> dict[str, Array]:
        """Pooled model-space points per segment of ``motions`` (any humanoid rigs)."""
        acc: dict[str, list[Array]] = {}
        for m in motions:
            for name, pts in limit_points(m, anatomy(m.skeleton, m)).items():
                acc.setdefault(name, []).append(pts)
        return {n: np.concatenate(acc[n]) for n in SEGMENTS if n in acc}

    @classmethod
    def from_points(
        cls,
        points: Mapping[str, Array],
        padding: float = DEFAULT_PADDING,
        provenance: Mapping[str, Any] | None = None,
    ) -> HumanModel:
        """A model with a k-DOP per segment around its model-space points, ``padding`` radians out."""
        shapes = {n: fit_shape(p, "kdop", padding=padding) for n, p in points.items() if len(p)}
        if not shapes:
            raise LimitsError("no humanoid clip to build a human model from")
        return cls(shapes, float(padding), {}, dict(provenance or {}))

    @classmethod
    def build(
        cls,
        motions: Iterable[Motion],
        padding: float = DEFAULT_PADDING,
        provenance: Mapping[str, Any] | None = None,
    ) -> HumanModel:
        """A model fitted on the pooled anatomical rotations of ``motions``."""
        return cls.from_points(cls.points(motions), padding, provenance)

    # ------------------------------------------------------------------ queries
    def contains(self, points: Mapping[str, Array]) -> dict[str, NDArray[np.bool_]]:
        """Per segment, whether each model-space point is admitted."""
        return {n: self.segments[n].contains(p, 1e-9) for n, p in points.items() if n in self.segments}

    def limits(self, skeleton: Skeleton, pose: Motion | Array | None = None) -> JointLimits:
        """:class:`JointLimits` on ``skeleton`` (any humanoid rig) from this model; ``pose`` (the
        clip they are for, or local rotations ``[J, 4]``) sets the twist zeros as in
        :func:`~jointlimits.motion.anatomy.anatomy` (None: the rest pose)."""
        body = anatomy(skeleton, pose)
        joints: dict[int, FittedLimit] = {}
        for name, seg in body.segments.items():
            shape = self.segments.get(name)
            if shape is None:
                continue
            if not isinstance(shape, KDop):
                raise LimitsError(f"human model segment {name}: shape {shape.kind!r} cannot be carried to a rig")
            for k, j in enumerate(seg.joints):
                ref, R, n = joint_transform(seg, k)
                joints[j] = FittedLimit(ref, R[:, 0], shape=_scaled_kdop(shape, R, n))
        settings = {"human_model": {"version": self.version, "padding": self.padding}}
        return JointLimits(skeleton, joints, settings=settings)

    def widened(self, motions: Iterable[Motion], padding: float | None = None) -> tuple[HumanModel, dict[str, str]]:
        """This model combined with a user's clips (``fit --prior``): per segment the smallest k-DOP
        of the same frame and slabs that holds both this model's and the clips' model-space points
        (``padding`` radians out, default the model's). Also, per segment, which decided its
        bounds: "prior" (the model alone), "clips" (every bound moved by the clips) or "both"."""
        pad = self.padding if padding is None else float(padding)
        pts = self.points(motions)
        shapes: dict[str, Shape] = dict(self.segments)
        decided = {n: "prior" for n in self.segments}
        for n, p in pts.items():
            shape = self.segments.get(n)
            if not isinstance(shape, KDop) or not len(p):
                continue
            axes = np.asarray(shape.axes, np.float64)
            proj = ((p - shape.position) @ np.asarray(shape.rotation, np.float64)) @ axes.T
            mins, maxs = np.asarray(shape.mins, np.float64), np.asarray(shape.maxs, np.float64)
            lo = np.minimum(mins, proj.min(axis=0) - pad)
            hi = np.maximum(maxs, proj.max(axis=0) + pad)
            moved = int(np.sum(lo < mins) + np.sum(hi > maxs))
            decided[n] = "prior" if moved == 0 else "clips" if moved == 2 * len(axes) else "both"
            shapes[n] = KDop(
                position=shape.position, rotation=shape.rotation, axes=axes, mins=lo, maxs=hi, exact=shape.exact
            )
        prov = {"prior": self.provenance, "widened_by_frames": int(sum(len(v) for v in pts.values()))}
        return HumanModel(shapes, self.padding, {}, prov, self.version), decided

    def limits_for_clip(self, motion: Motion, passes: int = 4) -> JointLimits:
        """Limits for one clip whose limited copy is inside limits made again from that copy: on a
        rig whose rest pose is not human-shaped the twist zeros come from the clip's mean pose,
        which limiting moves, so the pose is taken again from the limited clip until it stays
        (at most ``passes`` times)."""
        from ..motion.anatomy import mean_pose, needs_pose

        if not needs_pose(motion.skeleton) or motion.num_frames == 0:
            return self.limits(motion.skeleton)
        pose = mean_pose(motion)
        lim = self.limits(motion.skeleton, pose)
        for _ in range(passes):
            limited = motion.with_rotations(lim.project(motion.rotations))
            again = mean_pose(limited)
            if np.array_equal(again, pose):
                break
            pose = again
            lim = self.limits(motion.skeleton, pose)
        return lim

    # ------------------------------------------------------------------ file
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "padding": self.padding,
            "segments": {n: s.to_dict() for n, s in self.segments.items()},
            "expected_recall": self.expected_recall,
            "provenance": self.provenance,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "model") -> HumanModel:
        if d.get("format") != FORMAT:
            raise LimitsError(f"{source}: not a human joint-limit model (format {d.get('format')!r})")
        if int(d.get("version", 0)) > VERSION:
            raise LimitsError(f"{source}: human model version {d.get('version')} is newer than this jointlimits reads")
        try:
            segs = {n: Shape.from_dict(s) for n, s in d["segments"].items()}
        except (KeyError, TypeError, ValueError) as e:
            raise LimitsError(f"{source}: corrupt human model ({e})") from None
        unknown = sorted(set(segs) - set(SEGMENTS))
        if unknown:
            raise LimitsError(f"{source}: unknown segments {unknown}")
        return cls(
            segs,
            float(d.get("padding", DEFAULT_PADDING)),
            {k: float(v) for k, v in dict(d.get("expected_recall", {})).items()},
            dict(d.get("provenance", {})),
            int(d.get("version", VERSION)),
        )

    def save(self, path: str | os.PathLike) -> None:
        from .._atomic import atomic_write

        with atomic_write(path) as f:
            f.write(json.dumps(self.to_dict(), separators=(",", ":")) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> HumanModel:
        try:
            with open(path, encoding="utf-8") as f:
                d = json.load(f)
        except OSError as e:
            raise LimitsError(f"{path}: {e.strerror or e}") from None
        except ValueError as e:
            raise LimitsError(f"{path}: not JSON ({e})") from None
        return cls.from_dict(d, str(path))


def is_human_model(path: str | os.PathLike) -> bool:
    """Whether ``path`` is the name of the shipped model or a human-model file."""
    if str(path) == SHIPPED and not os.path.exists(path):
        return True
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(200)
    except OSError:
        return False
    return f'"format":"{FORMAT}"' in head.replace(" ", "")


def load_model(model: str | os.PathLike | HumanModel | None = None) -> HumanModel:
    """A model: ``None`` or ``"human"`` the shipped one, else a file written by ``human build``."""
    if isinstance(model, HumanModel):
        return model
    if model is None or (str(model) == SHIPPED and not os.path.exists(model)):
        text = resources.files(__package__).joinpath(_PACKAGE_FILE).read_text(encoding="utf-8")
        return HumanModel.from_dict(json.loads(text), "the shipped human model")
    return HumanModel.load(model)


def limits_for(
    skeleton: Skeleton, model: str | os.PathLike | HumanModel | None = None, pose: Motion | Array | None = None
) -> JointLimits:
    """Joint limits for any humanoid ``skeleton`` from a human model, with no fitting (``model``:
    a path written by ``jointlimits human build``; None: the shipped model; ``pose``: the clip
    they are for, whose mean pose sets the twist zeros, see :meth:`HumanModel.limits`)."""
    return load_model(model).limits(skeleton, pose)


def recall_by_segment(model: HumanModel, points: Mapping[str, Array]) -> dict[str, float]:
    """Per segment, the fraction of ``points`` the model admits."""
    return {n: float(np.mean(c)) if len(c) else float("nan") for n, c in model.contains(points).items()}

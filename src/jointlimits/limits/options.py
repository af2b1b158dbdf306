"""The settings of a fit: :class:`FitOptions`, what :meth:`JointLimits.fit
<jointlimits.limits.model.JointLimits.fit>` (and a corpus fit) takes, field by field."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import LimitsError
from ..motion.skeleton import Motion
from ._checks import MAX_PADDING
from .registry import shape_kinds
from .rest import DEFAULT_REST_TOLERANCE

__all__ = ["FitOptions", "fit_options", "default_padding", "DEFAULT_PADDING"]

#: padding (radians) when none is given, per shape: implicit limits hug the data more closely, so
#: they get more to admit new people's motion at least as well as the k-DOP at 0.05 (LAFAN1,
#: leave one subject out: recall 0.9738 / 0.9894 against 0.9715 / 0.9828, false accept 0.89x /
#: 0.85x; benchmarks/bench_quality.py)
DEFAULT_PADDING = {"implicit": 0.095}

#: the fields of a calibrated fit (left out of :meth:`FitOptions.key` without ``target_recall``)
_CALIBRATION = ("target_recall", "groups", "allocation")


def default_padding(shape: str) -> float:
    """The padding a fit of ``shape`` uses when none is given (0.05 but for :data:`DEFAULT_PADDING`)."""
    return DEFAULT_PADDING.get(shape, 0.05)


@dataclass(frozen=True)
class FitOptions:
    """The settings of a fit: which joints get a limit, of which shape, fitted how.

    A fit limits every joint with rotation channels (or the named :attr:`joints`), but the joints
    that carry the global position and heading (:func:`~jointlimits.limits.fit.root_joints`)
    unless :attr:`root` is true or :attr:`joints` names them. Every clip must have the first
    clip's rest pose (child bone directions within :attr:`rest_tolerance` degrees at the fitted
    joints and their parents). Bad settings raise LimitsError when the options are made.

    ``JointLimits.fit(clips, FitOptions(shape="kdop", padding=0.1))`` and
    ``JointLimits.fit(clips, shape="kdop", padding=0.1)`` fit the same limits."""

    shape: str = "ellipsoid"
    """The limit-space shape of each joint's limit: ``box``, ``oriented-box``, ``ellipsoid``,
    ``kdop``, ``implicit`` or a shape added with :func:`~jointlimits.limits.registry.register_shape`."""
    swing_twist: bool = False
    """One limit for the swing (a section in the plane perpendicular to the bone) and one for the
    twist about the bone, instead of one shape of the whole rotation."""
    padding: float | None = None
    """Radians each limit is widened past the data; None: 0.05, and 0.095 for ``implicit``
    (:data:`DEFAULT_PADDING`). At most :data:`~jointlimits.limits._checks.MAX_PADDING`."""
    reference: Any = "mean"
    """The rotation each joint's limit is taken relative to: ``"mean"`` (eigen-mean of all frames),
    ``"first"`` (the first frame), a frame index of the first clip, a Motion (its first frame) or
    a ``[J, 4]`` array."""
    subsample: float | None = 0.05
    """Distance (radians) below which points of a joint's cloud count as one when its frame is
    fitted (so dense regions do not dominate it); None or 0 keeps every point."""
    shapes: Mapping[str, str] = field(default_factory=dict)
    """Per joint name, a shape other than :attr:`shape` (also ``"reach-window"``: a swing window
    plus a twist range fitted from the rotations)."""
    joints: Sequence[str] | None = None
    """The names of the joints to limit (None: every joint with rotation channels); kept as a tuple."""
    coupled: bool = False
    """The child of each (parent, child) pair of :attr:`pairs` gets a limit conditioned on its
    parent's rotation (:class:`~jointlimits.limits.coupled.CoupledLimit`); needs
    ``shape="implicit"`` without swing-twist."""
    pairs: Sequence[tuple[str, str]] | None = None
    """The (parent, child) joint names :attr:`coupled` couples; None: the humanoid pairs found by
    joint name (clavicle -> shoulder, shoulder -> elbow, hip -> knee, along the spine, neck -> head)."""
    exclude: Sequence[str] | None = None
    """Names of joints to leave without a limit (kept as a tuple)."""
    root: bool = False
    """Also limit the joints that carry the global position and heading."""
    rest_tolerance: float = DEFAULT_REST_TOLERANCE
    """Degrees the clips' child bone directions may differ from the first clip's."""
    mirror: bool = False
    """Also fit every clip mirrored across the skeleton's sagittal plane
    (:func:`jointlimits.motion.mirror.mirror_motion`): a left joint learns the mirrored rotations
    of its right counterpart and a centre joint its own, and the mean reference is taken over
    both. The skeleton's rest offsets must be mirror images (LimitsError otherwise)."""
    paddings: Mapping[str, float] = field(default_factory=dict)
    """Per joint name, a padding other than :attr:`padding`."""
    target_recall: float | None = None
    """With implicit shapes: choose each joint's padding so that the recall on new motion (the
    fraction of its frames the limit admits) is expected to meet this figure (:mod:`.calibrate`);
    :attr:`paddings` still overrides it per joint. ``settings["calibration"]`` records per joint
    the padding, the expected recall and its spread (:attr:`JointLimits.calibration
    <jointlimits.limits.model.JointLimits.calibration>`). A
    :class:`~jointlimits.limits.calibrate.CalibrationWarning` says when the data cannot support
    the figure (one group or one clip only). Clips in memory only (not a corpus fit)."""
    groups: Sequence[Any] | None = None
    """With :attr:`target_recall`: a label per clip (e.g. the performer); the calibration's folds
    leave one group out (None: one clip)."""
    allocation: str = "uniform"
    """With :attr:`target_recall`: ``"uniform"`` (one padding for every joint), ``"joint"`` (each
    joint's own) or ``"balanced"`` (see :func:`~jointlimits.limits.calibrate.calibrate`)."""

    def __post_init__(self) -> None:
        if self.shape not in shape_kinds():
            raise LimitsError(f"unknown limit shape {self.shape!r}; expected one of {', '.join(shape_kinds())}")
        padding = default_padding(self.shape) if self.padding is None else self.padding
        object.__setattr__(self, "padding", padding)
        if not (np.isfinite(padding) and 0 <= padding <= MAX_PADDING):
            raise LimitsError(f"padding must be >= 0 and at most {MAX_PADDING} radians, got {padding}")
        object.__setattr__(self, "paddings", {str(k): float(v) for k, v in (self.paddings or {}).items()})
        for name, p in self.paddings.items():
            if not (np.isfinite(p) and 0 <= p <= MAX_PADDING):
                raise LimitsError(f"padding of joint {name!r} must be >= 0 and at most {MAX_PADDING} radians, got {p}")
        object.__setattr__(self, "shapes", dict(self.shapes or {}))
        for name in ("joints", "exclude", "groups"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, tuple(v))
        if self.pairs is not None:
            object.__setattr__(self, "pairs", tuple((str(a), str(b)) for a, b in self.pairs))
        if self.target_recall is not None and (self.shape != "implicit" or self.swing_twist):
            raise LimitsError("target_recall needs shape='implicit' without swing-twist")

    def key(self) -> str:
        """A text that changes with every setting (cache keys)."""
        ref = self.reference
        if isinstance(ref, Motion):
            ref = ("motion", ref.skeleton.fingerprint(), np.asarray(ref.rotations[0]).tobytes().hex())
        elif not isinstance(ref, (str, int)):
            ref = np.asarray(ref, np.float64).tobytes().hex()
        names = [
            f
            for f in self.__dataclass_fields__
            if f != "reference" and (self.target_recall is not None or f not in _CALIBRATION)
        ]
        return repr((*[getattr(self, f) for f in names], ref))


def fit_options(options: FitOptions | None, keywords: Mapping[str, Any], what: str = "fit") -> FitOptions:
    """``options`` (None: the defaults) with the fields named in ``keywords`` replaced: TypeError
    naming a keyword that is no field (as a function's unknown keyword argument)."""
    if options is not None and not isinstance(options, FitOptions):
        raise TypeError(f"{what}() takes its options as a FitOptions, got {type(options).__name__}")
    fields = {f.name for f in dataclasses.fields(FitOptions)}
    unknown = [k for k in keywords if k not in fields]
    if unknown:
        raise TypeError(f"{what}() got an unexpected keyword argument {unknown[0]!r}")
    if options is None:
        return FitOptions(**keywords)
    if not keywords:
        return options
    # the options as given (padding None where the shape's default was filled in, so a keyword
    # shape brings its own default padding)
    return dataclasses.replace(options, **keywords)

"""Fitting limits to clips: per joint, relative rotations on the short cover of each clip's first
frame, unrolled, subsampled, and a shape fitted in limit space (the seed's method); coupled
children conditioned on their parents; the joints carrying the global position left out.

A fit reads each clip twice and keeps only statistics between clips (one code path for a list
of clips in memory and for a corpus, :mod:`jointlimits.corpus`): :func:`clip_summary` (pass 1:
outer-product sums for the mean reference, motion masks for the root joints, rest directions),
:func:`plan_fit` (the reference and the joints, from the summaries in clip order),
:func:`clip_clouds` (pass 2: a clip's limit-space points per joint)
and :class:`FitAccumulator` (folds the clips in, in order, then fits each joint)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton
from .cloud import CloudStats
from .joint import FittedLimit, JointLimit, fit_shape, rotation_limit_class, to_limit_space
from .options import DEFAULT_PADDING, FitOptions, default_padding
from .registry import JOINT_KINDS, shape_kinds
from .rest import DEFAULT_REST_TOLERANCE, rest_directions, rest_mismatch

__all__ = [
    "ClipClouds",
    "ClipSummary",
    "FitAccumulator",
    "FitOptions",
    "FitPlan",
    "FitResult",
    "clip_clouds",
    "clip_summary",
    "fit_joints",
    "fit_with",
    "plan_fit",
    "relative_clouds",
    "root_joints",
    "default_padding",
    "DEFAULT_PADDING",
]

Array = NDArray[np.float64]


class FitResult(NamedTuple):
    """What a fit makes: the skeleton, the limit of each fitted joint, the settings recorded in
    the file, and each joint's rest directions."""

    skeleton: Skeleton
    joints: dict[int, JointLimit]
    settings: dict[str, Any]
    rest: list[Array]


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


def _motion_masks(m: Motion, tolerance: float = 1e-9) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Per joint: whether it never rotates in ``m`` and whether it moves by its own translation."""
    F, B = m.num_frames, 8192  # frames at a time: a whole clip's temporaries would be several copies of it
    q0, p0 = m.rotations[:1], m.positions[:1]
    scale = max(max((float(np.abs(m.positions[a : a + B]).max(initial=0.0)) for a in range(0, F, B)), default=0.0), 1.0)
    still = np.ones(m.skeleton.num_joints, bool)
    moves = np.zeros(m.skeleton.num_joints, bool)
    for a in range(0, F, B):
        still &= np.all(quat.angle(m.rotations[a : a + B], q0) <= tolerance, axis=0)
        moves |= np.any(np.abs(m.positions[a : a + B] - p0) > 1e-9 * scale, axis=(0, 2))
    return still, moves


def _roots_from_masks(sk: Skeleton, still: NDArray[np.bool_], moves: NDArray[np.bool_]) -> list[int]:
    out: list[int] = []
    for j in range(sk.num_joints):
        p = sk.parents[j]
        if p < 0 or (p in out and still[p] and moves[j]):
            out.append(j)
    return out


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
            s, v = _motion_masks(m, tolerance)
            still &= s
            moves |= v
    return _roots_from_masks(sk, still, moves)


@overload
def relative_clouds(ms: Sequence[Motion], joint: int, reference: Array, twist_axis: None = None) -> Array: ...


@overload
def relative_clouds(ms: Sequence[Motion], joint: int, reference: Array, twist_axis: Array) -> tuple[Array, Array]: ...


def relative_clouds(
    ms: Sequence[Motion], joint: int, reference: Array, twist_axis: Array | None = None
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
    return (
        quat.to_scaled_angle_axis(quat.unroll(s, ranges=ranges)),
        quat.to_scaled_angle_axis(quat.unroll(t, ranges=ranges)),
    )


#: Shapes fitted from :class:`CloudStats` (greedy subsample + extreme points); the others (implicit,
#: registered shapes) keep every point.
CONVEX_SHAPES: tuple[str, ...] = ("box", "oriented-box", "ellipsoid", "kdop")


class ClipSummary(NamedTuple):
    """Pass 1 over one clip: what the reference, the root joints and the rest-pose check need."""

    skeleton: Skeleton
    frames: int
    rest: list[Array]
    outer: Array  # [J, 4, 4] sum of q q^T over the frames (and the mirrored frames with mirror)
    first: Array  # [J, 4] the first frame
    row: Array | None  # [J, 4] the reference frame of an integer reference
    still: NDArray[np.bool_]
    moves: NDArray[np.bool_]
    clips: int = 1

    def merge(self, later: ClipSummary) -> ClipSummary:
        """This summary (of the first clips) and the next clip's, as one: what :func:`plan_fit`
        reads is the same as from the two apart (a corpus keeps one per skeleton group)."""
        return self._replace(
            frames=self.frames + later.frames,
            outer=self.outer + later.outer,
            still=self.still & later.still,
            moves=self.moves | later.moves,
            clips=self.clips + later.clips,
        )


def _check_clip(m: Motion, what: str) -> None:
    if m.num_frames == 0:
        raise LimitsError(f"{what} has no frames")
    bad = ~np.isfinite(m.rotations).all(axis=-1)
    if bad.any():
        f, j = np.argwhere(bad)[0]
        raise LimitsError(f"{what}: rotation of joint {m.skeleton.names[j]!r} at frame {f} is NaN/inf")


def _mirror(m: Motion) -> Motion:
    """The clip mirrored across its skeleton's sagittal plane."""
    from ..errors import SkeletonError
    from ..motion.mirror import mirror_motion, mirror_plane

    try:
        n = mirror_plane(m.skeleton)
    except SkeletonError as e:
        raise LimitsError(f"mirror: {e}") from None
    return mirror_motion(m, normal=n)


def _outer(q: Array) -> Array:
    return np.einsum("nji,njk->jik", q, q)


def clip_summary(m: Motion, options: FitOptions, what: str = "clip") -> ClipSummary:
    """Pass 1 of a fit over one clip (LimitsError if the clip cannot be fitted)."""
    _check_clip(m, what)
    outer = _outer(m.rotations)
    if options.mirror:
        outer = outer + _outer(_mirror(m).rotations)
    row = None
    ref = options.reference
    if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool) and -m.num_frames <= int(ref) < m.num_frames:
        row = np.array(m.rotations[int(ref)])
    still, moves = _motion_masks(m)
    return ClipSummary(
        m.skeleton, m.num_frames, rest_directions(m.skeleton), outer, np.array(m.rotations[0]), row, still, moves
    )


@dataclass
class FitPlan:
    """What pass 2 needs, decided from the clips' summaries: reference, joints, shapes, streams."""

    options: FitOptions
    skeleton: Skeleton
    reference: Array
    axes: Array
    todo: list[int]
    roots: list[int]
    kinds: dict[int, str]
    couples: list[tuple[int, int]]
    rest: list[Array]
    clips: int
    frames: int
    #: stream key (what, joint) -> whether it keeps every row (else CloudStats)
    streams: dict[tuple[str, int], bool]


def _reference_from(summaries: Sequence[ClipSummary], reference: Any) -> Array:
    first = summaries[0]
    sk = first.skeleton
    if isinstance(reference, Motion):
        if reference.skeleton.fingerprint() != sk.fingerprint():
            raise LimitsError("the reference motion's skeleton does not match the clips")
        return quat.normalize(reference.rotations[0])
    if isinstance(reference, str):
        if reference == "first":
            return quat.normalize(first.first)
        if reference == "mean":
            acc = np.zeros_like(first.outer)
            for s in summaries:  # in clip order: the same sum however the clips were read
                acc = acc + s.outer
            _, vecs = np.linalg.eigh(acc)
            return quat.abs(vecs[..., :, -1])
        raise LimitsError(f"reference must be 'mean', 'first', a frame index or a Motion, not {reference!r}")
    if isinstance(reference, (int, np.integer)):
        n = first.frames
        if first.row is None:
            raise LimitsError(f"reference frame {reference} is outside the first clip (0..{n - 1})")
        return quat.normalize(first.row)
    ref = np.asarray(reference, np.float64)
    if ref.shape != (sk.num_joints, 4):
        raise LimitsError(f"a reference pose array must be [J, 4] = [{sk.num_joints}, 4], got {ref.shape}")
    return quat.normalize(ref)


def _reference_pose(ms: Sequence[Motion], reference: Any) -> Array:
    """The reference pose [J, 4] a fit of ``ms`` (no mirror) takes, from pass 1 alone."""
    o = FitOptions(reference=reference)
    return _reference_from([clip_summary(m, o, f"clip {k}") for k, m in enumerate(ms)], reference)


def plan_fit(summaries: Sequence[ClipSummary], options: FitOptions) -> FitPlan:
    """The reference, joints and shapes of a fit from its clips' summaries (in clip order)."""
    if not summaries:
        raise LimitsError("no motions to fit limits to")
    o = options
    sk = summaries[0].skeleton
    ref = _reference_from(summaries, o.reference)
    axes = sk.bone_directions()
    for name, kind in o.shapes.items():
        sk.index(name)
        if kind not in shape_kinds() + JOINT_KINDS:
            raise LimitsError(f"unknown limit shape {kind!r} for joint {name!r}")
    still = np.logical_and.reduce([s.still for s in summaries])
    moves = np.logical_or.reduce([s.moves for s in summaries])
    roots = _roots_from_masks(sk, still, moves)
    if o.joints is None:
        todo = [j for j in range(sk.num_joints) if sk.rotation_order(j) and (o.root or j not in roots)]
    else:
        todo = [sk.index(n) for n in o.joints]
    if o.exclude is not None:
        drop = {sk.index(n) for n in o.exclude}
        todo = [j for j in todo if j not in drop]
    rest = summaries[0].rest
    checked = sorted(set(todo) | {int(sk.parents[j]) for j in todo if sk.parents[j] >= 0})
    for k, s in enumerate(summaries[1:], 1):
        bad = rest_mismatch(sk.names, rest, s.rest, checked, o.rest_tolerance)
        if bad:
            raise LimitsError(
                f"clip {k} has another rest pose than clip 0 (bone directions differ at {bad}); "
                "fit clips of one rest pose"
            )
    kinds = {j: o.shapes.get(sk.names[j], o.shape) for j in todo}
    couples: list[tuple[int, int]] = []
    if o.coupled:
        if o.shape != "implicit" or o.swing_twist:
            raise LimitsError("coupled limits need shape='implicit' without swing-twist")
        from .coupled import humanoid_pairs

        found = humanoid_pairs(sk) if o.pairs is None else list(o.pairs)
        for pn, cn in found:
            p, c = sk.index(pn), sk.index(cn)
            if sk.parents[c] != p:
                raise LimitsError(f"coupled pair ({pn!r}, {cn!r}): {pn!r} is not {cn!r}'s parent")
            if c in kinds and p in kinds and kinds[c] == "implicit":
                couples.append((p, c))
    streams: dict[tuple[str, int], bool] = {}
    for j, kind in kinds.items():
        every = kind not in CONVEX_SHAPES or not o.subsample
        if kind in JOINT_KINDS:
            streams[("rot", j)] = True
        elif o.swing_twist:
            streams[("swing", j)] = streams[("twist", j)] = every
        else:
            streams[("cloud", j)] = every
    for p, _ in couples:
        streams[("parent", p)] = True
    return FitPlan(
        o, sk, ref, axes, todo, roots, kinds, couples, rest, sum(s.clips for s in summaries),
        int(sum(s.frames for s in summaries)), streams,
    )  # fmt: skip


#: Pass 2 over one clip: stream key -> its rows (limit-space points, or rotations).
ClipClouds = dict[tuple[str, int], Array]


def clip_clouds(m: Motion, plan: FitPlan) -> list[ClipClouds]:
    """Pass 2 of a fit over one clip: its streams (and, with mirror, those of the mirrored clip
    next)."""
    out = []
    for clip in [m, _mirror(m)] if plan.options.mirror else [m]:
        c: ClipClouds = {}
        for what, j in plan.streams:
            if what == "rot":
                c[(what, j)] = clip.rotations[:, j]
            elif what == "parent":
                c[(what, j)] = to_limit_space(clip.rotations[:, j], plan.reference[j])
            elif what == "cloud":
                c[(what, j)] = relative_clouds([clip], j, plan.reference[j])
            elif what == "swing":
                c[("swing", j)], c[("twist", j)] = relative_clouds([clip], j, plan.reference[j], plan.axes[j])
        out.append(c)
    return out


class FitAccumulator:
    """The merged statistics of a fit: clips' :func:`clip_clouds` folded in, in clip order."""

    def __init__(self, plan: FitPlan):
        self.plan = plan
        d = plan.options.subsample
        self.stats = {k: CloudStats(d, keep_all=every) for k, every in plan.streams.items()}

    def add(self, clouds: ClipClouds) -> None:
        for k, rows in clouds.items():
            self.stats[k].add(rows)

    def finish(self, progress: Callable[[int, int, str], None] | None = None) -> FitResult:
        """Fit every joint from the statistics."""
        plan, o, st = self.plan, self.plan.options, self.stats
        sk, ref, axes = plan.skeleton, plan.reference, plan.axes
        assert o.padding is not None  # FitOptions fills in the shape's default
        pads = [float(o.padding)] * sk.num_joints
        for name, p in o.paddings.items():
            pads[sk.index(name)] = p
        out: dict[int, JointLimit] = {}
        for k, j in enumerate(plan.todo):
            name = sk.names[j]
            if progress is not None:
                progress(k, len(plan.todo), name)
            kind = plan.kinds[j]
            if kind in JOINT_KINDS:  # fitted from the rotations themselves (reach windows)
                qs = st[("rot", j)].points()
                out[j] = rotation_limit_class(kind).fit(qs, axes[j], reference=ref[j], padding=pads[j])
                continue
            try:
                if o.swing_twist:
                    out[j] = FittedLimit(
                        ref[j],
                        axes[j],
                        swing=fit_shape(st[("swing", j)], kind, pads[j], o.subsample),
                        twist=fit_shape(st[("twist", j)], kind, pads[j], o.subsample),
                    )
                else:
                    out[j] = FittedLimit(ref[j], axes[j], shape=fit_shape(st[("cloud", j)], kind, pads[j], o.subsample))
            except LimitsError as e:
                raise LimitsError(f"joint {name!r}: {e}") from None
        if plan.couples:
            from .coupled import CoupledLimit

            for p, c in plan.couples:
                try:
                    out[c] = CoupledLimit.fit(
                        st[("parent", p)].points(),
                        st[("cloud", c)].points(),
                        ref[c],
                        axes[c],
                        ref[p],
                        sk.names[p],
                        pads[c],
                        o.subsample,
                    )
                except LimitsError as e:
                    raise LimitsError(f"joint {sk.names[c]!r}: {e}") from None
        if progress is not None:
            progress(len(plan.todo), len(plan.todo), "")
        reference = o.reference
        settings = {
            "shape": o.shape,
            "swing_twist": bool(o.swing_twist),
            "padding": float(o.padding),
            "reference": reference if isinstance(reference, (str, int)) else "custom",
            "subsample": o.subsample,
            "coupled": bool(o.coupled),
            "clips": plan.clips,
            "frames": plan.frames,
            "mirror": bool(o.mirror),
            "root_joints": [sk.names[j] for j in plan.roots],
        }
        if o.paddings:
            settings["joint_padding"] = {sk.names[j]: pads[j] for j in out if pads[j] != o.padding}
        return FitResult(sk, out, settings, plan.rest)


def fit_joints(
    motions: Motion | Iterable[Motion],
    shape: str = "ellipsoid",
    swing_twist: bool = False,
    padding: float | None = None,
    reference: Any = "mean",
    subsample: float | None = 0.05,
    shapes: Mapping[str, str] | None = None,
    joints: Iterable[str] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    coupled: bool = False,
    pairs: Iterable[tuple[str, str]] | None = None,
    exclude: Iterable[str] | None = None,
    root: bool = False,
    rest_tolerance: float = DEFAULT_REST_TOLERANCE,
    mirror: bool = False,
    paddings: Mapping[str, float] | None = None,
) -> FitResult:
    """The parts of a :class:`~jointlimits.limits.model.JointLimits` fitted to ``motions``: the
    skeleton, a limit per fitted joint, the settings and the rest directions. The arguments are
    those of :meth:`JointLimits.fit <jointlimits.limits.model.JointLimits.fit>`, which documents
    them; ``paddings`` overrides ``padding`` per joint name. The clips go through the same two
    passes and statistics as a corpus fit."""
    options = FitOptions(
        shape, swing_twist, padding, reference, subsample, dict(shapes or {}),
        None if joints is None else tuple(joints), coupled,
        None if pairs is None else tuple(pairs), None if exclude is None else tuple(exclude),
        root, rest_tolerance, mirror, dict(paddings or {}),
    )  # fmt: skip
    return fit_with(motions, options, progress)


def fit_with(
    motions: Motion | Iterable[Motion], options: FitOptions, progress: Callable[[int, int, str], None] | None = None
) -> FitResult:
    """The parts of a :class:`~jointlimits.limits.model.JointLimits` fitted to ``motions`` with
    ``options`` (``target_recall`` is read by :func:`.calibrate.calibrated_options`, not here)."""
    ms = _as_motions(motions)
    plan = plan_fit([clip_summary(m, options, f"clip {k}") for k, m in enumerate(ms)], options)
    acc = FitAccumulator(plan)
    for m in ms:
        for c in clip_clouds(m, plan):
            acc.add(c)
    return acc.finish(progress)

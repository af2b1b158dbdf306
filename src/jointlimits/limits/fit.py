"""Fitting limits to clips: per joint, relative rotations on the short cover of each clip's first
frame, unrolled, subsampled, and a shape fitted in limit space (the seed's method); coupled
children conditioned on their parents; the joints carrying the global position left out."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton
from ._checks import MAX_PADDING
from .joint import FittedLimit, JointLimit, fit_shape, to_limit_space
from .registry import JOINT_KINDS, joint_limit_class, shape_kinds
from .rest import DEFAULT_REST_TOLERANCE, rest_directions, rest_mismatch

__all__ = ["FitResult", "fit_joints", "relative_clouds", "root_joints"]

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


def _mirrored(ms: list[Motion]) -> list[Motion]:
    """Every clip mirrored across the skeleton's sagittal plane (found and checked once)."""
    from ..errors import SkeletonError
    from ..motion.mirror import mirror_motion, mirror_plane

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


def fit_joints(
    motions: Motion | Iterable[Motion],
    shape: str = "ellipsoid",
    swing_twist: bool = False,
    padding: float = 0.05,
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
) -> FitResult:
    """The parts of a :class:`~jointlimits.limits.model.JointLimits` fitted to ``motions``: the
    skeleton, a limit per fitted joint, the settings and the rest directions. The arguments are
    those of :meth:`JointLimits.fit <jointlimits.limits.model.JointLimits.fit>`, which documents
    them."""
    if shape not in shape_kinds():
        raise LimitsError(f"unknown limit shape {shape!r}; expected one of {', '.join(shape_kinds())}")
    if not (np.isfinite(padding) and 0 <= padding <= MAX_PADDING):
        raise LimitsError(f"padding must be >= 0 and at most {MAX_PADDING} radians, got {padding}")
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
        bad = rest_mismatch(sk.names, rest, rest_directions(m.skeleton), checked, rest_tolerance)
        if bad:
            raise LimitsError(
                f"clip {k} has another rest pose than clip 0 (bone directions differ at {bad}); "
                "fit clips of one rest pose"
            )
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
                out[j] = FittedLimit(
                    ref[j],
                    axes[j],
                    swing=fit_shape(ps, kind, padding, subsample),
                    twist=fit_shape(pt, kind, padding, subsample),
                )
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
                out[c] = CoupledLimit.fit(
                    to_limit_space(qp, ref[p]),
                    relative_clouds(ms, c, ref[c]),
                    ref[c],
                    axes[c],
                    ref[p],
                    pn,
                    padding,
                    subsample,
                )
            except LimitsError as e:
                raise LimitsError(f"joint {cn!r}: {e}") from None
    if progress is not None:
        progress(len(todo), len(todo), "")
    settings = {
        "shape": shape,
        "swing_twist": bool(swing_twist),
        "padding": float(padding),
        "reference": reference if isinstance(reference, (str, int)) else "custom",
        "subsample": subsample,
        "coupled": bool(coupled),
        "clips": clips,
        "frames": frames,
        "mirror": bool(mirror),
        "root_joints": [sk.names[j] for j in roots],
    }
    return FitResult(sk, out, settings, rest)

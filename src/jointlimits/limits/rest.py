"""The rest pose limits were fitted in, and limits re-expressed in another rest pose.

A joint's limit is a set of *local* rotations, and a local rotation means something only with the
rest pose it starts from: the same elbow bend is a different quaternion on a skeleton whose
forearm points along +X at rest than on one whose forearm points along -Y. Two skeletons with the
same joint names and parents can differ that way (Perfume and Xsens exports do). So a limits file
keeps the rest bone directions: per joint, the unit directions of its child bones (child joints,
then End Sites) in the joint's frame. Limits are only applied to a skeleton whose directions match.

Where the two rest poses differ by one rotation per joint frame (``C_j``: the fitted skeleton's
child directions are ``C_j`` times the new one's), a local rotation of the new skeleton maps to the
fitted one as ``q_fitted = C_parent q_new inv(C_j)`` (the same world pose), and
:class:`RestRetargetedLimit` projects through that map.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ..motion import quat
from ..motion.skeleton import Skeleton
from .joint import FittedLimit, limit_class

__all__ = [
    "rest_directions",
    "rest_differences",
    "rest_mismatch",
    "rest_rotations",
    "RestRetargetedLimit",
    "DEFAULT_REST_TOLERANCE",
]

Array = NDArray[np.float64]
#: degrees a child bone's rest direction may differ before limits refuse a skeleton
DEFAULT_REST_TOLERANCE = 10.0


def rest_directions(skeleton: Skeleton, rel_eps: float = 1e-6) -> list[Array]:
    """Per joint ``[n_j, 3]``: unit directions of its child bones in its own frame (child joints in
    index order, then its End Sites); NaN rows for bones of zero length, which have no direction,
    and for a root's children that carry their own translation (a ground-level root's child is a
    position, not a bone)."""
    sk = skeleton
    scale = max(float(np.abs(sk.offsets).max(initial=0.0)), 1e-300)
    out: list[Array] = []
    for j in range(sk.num_joints):
        rows = []
        for c in sk.children(j):
            o = sk.offsets[c]
            if sk.parents[j] < 0 and sk.has_position_channels(c):
                rows.append(np.full(3, np.nan))
                continue
            rows.append(o)
        rows += [o for p, o in sk.end_sites if p == j]
        d = np.array(rows, np.float64).reshape(-1, 3)
        n = np.linalg.norm(d, axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(n > rel_eps * scale, d / n, np.nan)
        out.append(d)
    return out


def _pairs(a: Array, b: Array) -> tuple[Array, Array]:
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    ok = np.isfinite(a).all(-1) & np.isfinite(b).all(-1)
    return a[ok], b[ok]


def rest_differences(fitted: Sequence[Array], other: Sequence[Array], joints: Iterable[int]) -> dict[int, float]:
    """Degrees: per joint, the largest angle between a child bone's rest direction in ``fitted`` and
    in ``other`` (bones without a direction in either are skipped)."""
    out = {}
    for j in joints:
        a, b = _pairs(np.asarray(fitted[j]), np.asarray(other[j]))
        out[j] = float(np.degrees(np.arccos(np.clip((a * b).sum(-1), -1.0, 1.0))).max(initial=0.0))
    return out


def _align(a: Array, b: Array) -> Array:
    """The rotation ``C`` (quaternion) with ``a ~ C b`` for unit rows ``a``, ``b``."""
    if len(a) == 0:
        return quat.identity()
    if len(a) == 1:
        return quat.between(b[0], a[0])
    from scipy.spatial.transform import Rotation

    r, _ = Rotation.align_vectors(a, b)
    x, y, z, w = r.as_quat()
    return quat.normalize(np.array([w, x, y, z]))


def rest_rotations(
    fitted: Sequence[Array],
    other: Sequence[Array],
    joints: Iterable[int],
    names: Sequence[str],
    tolerance: float = DEFAULT_REST_TOLERANCE,
) -> dict[int, Array]:
    """Per joint, ``C_j`` with ``fitted_dirs ~ C_j other_dirs``; LimitsError naming the joints where
    no single rotation brings the directions within ``tolerance`` degrees (another proportion or
    topology, not another rest orientation)."""
    out, bad = {}, []
    for j in joints:
        a, b = _pairs(np.asarray(fitted[j]), np.asarray(other[j]))
        c = _align(a, b)
        if len(a):
            res = np.degrees(np.arccos(np.clip((a * quat.mul_vec(c, b)).sum(-1), -1.0, 1.0))).max()
            if res > tolerance:
                bad.append(f"{names[j]} ({res:.1f} deg)")
        out[j] = c
    if bad:
        raise LimitsError(
            "the rest poses differ by more than one rotation per joint at "
            + ", ".join(bad[:6])
            + "; the limits cannot be re-expressed"
        )
    return out


def _quat4(v: Any, what: str) -> Array:
    q = np.asarray(v, np.float64)
    if q.shape != (4,) or not np.isfinite(q).all() or not np.linalg.norm(q) > 0.5:
        raise LimitsError(f"rest-retargeted limit: {what} must be a unit quaternion [w, x, y, z]")
    # a stored unit quaternion is kept as written, so a saved and loaded limit projects bit-equal
    return q.copy() if abs(float(q @ q) - 1.0) < 1e-12 else quat.normalize(q)


@dataclass
class RestRetargetedLimit:
    """A limit fitted in one rest pose, applied to local rotations of another: ``q`` maps to the
    fitted skeleton as ``pre q inv(post)``, is limited there, and maps back."""

    inner: Any
    pre: Array  # C of the joint's parent (identity for a root)
    post: Array  # C of the joint itself
    kind: str = "rest-retargeted"
    softenable = True

    def __post_init__(self) -> None:
        self.pre = _quat4(self.pre, "pre")
        self.post = _quat4(self.post, "post")
        if hasattr(self.inner, "parent"):
            raise LimitsError("coupled limits cannot be re-expressed in another rest pose yet")

    def _to(self, q: Array) -> Array:
        return quat.mul_inv(quat.mul(self.pre, q), self.post)

    def _back(self, q: Array) -> Array:
        return quat.mul(quat.inv_mul(self.pre, q), self.post)

    def project(self, rotations: Array, soften: Any = None) -> Array:
        """Limited local rotations of the new skeleton ``[..., 4]``."""
        q = np.asarray(rotations, np.float64)
        x = self._to(q)
        takes = isinstance(self.inner, FittedLimit) or getattr(self.inner, "softenable", False)
        inner = self.inner.project(x, soften) if soften is not None and takes else self.inner.project(x)
        out = self._back(inner)
        # a rotation the inner limit leaves alone comes back bit-exact, not through two products
        same = np.all(inner == x, axis=-1)
        return np.where(np.asarray(same)[..., None], q, out)

    def contains(self, rotations: Array, tolerance: float = 1e-6) -> NDArray[np.bool_]:
        return self.inner.contains(self._to(np.asarray(rotations, np.float64)), tolerance)

    def violation(self, rotations: Array) -> Array:
        return self.inner.violation(self._to(np.asarray(rotations, np.float64)))

    def compiled(self) -> None:
        """No compiled form: poses and IK call project()."""
        return None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "pre": self.pre.tolist(), "post": self.post.tolist(), "inner": self.inner.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RestRetargetedLimit:
        inner = d.get("inner")
        if not isinstance(inner, Mapping) or inner.get("kind") == cls.kind:
            raise LimitsError("rest-retargeted limit: 'inner' must be another joint limit")
        limit = limit_class(inner.get("kind")).from_dict(inner)
        return cls(limit, _quat4(d.get("pre"), "pre"), _quat4(d.get("post"), "post"))


def rest_mismatch(
    names: Sequence[str], fitted: Sequence[Array], other: Sequence[Array], joints: Iterable[int], tolerance: float
) -> str | None:
    """Where ``other``'s rest directions differ from ``fitted``'s by more than ``tolerance``
    degrees at ``joints`` ("Name 12.3 deg, ..."), or None."""
    diff = rest_differences(fitted, other, joints)
    bad = sorted(((d, j) for j, d in diff.items() if d > tolerance), reverse=True)
    if not bad:
        return None
    return ", ".join(f"{names[j]} {d:.1f} deg" for d, j in bad[:6]) + (
        f" and {len(bad) - 6} more" if len(bad) > 6 else ""
    )

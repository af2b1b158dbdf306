"""What every engine export shares: the fitted joint frame, swing-twist limits in an engine's
metric, sampling, and the limit tests in numpy.

Frames. A joint joins its parent's body (the parent joint's frame) and its own body (the joint's
frame). Its local rotation ``q`` takes the joint's frame to the parent's. The export fits a
*centre* rotation ``c`` (the middle of the data's swing and twist ranges) and a *basis* ``B``
(columns: the twist axis along the bone, then the principal directions of the swing cloud), and
attaches the engine joint with

- parent frame ``A = c B`` (in the parent joint's frame, at the joint's offset) and
- child frame ``B`` (in the joint's own frame, at its origin),

so the engine's relative rotation is ``r = A^-1 q B = B^-1 c^-1 q B``: the identity at the centre,
the twist about ``r``'s x axis along the bone and the swing about y (major) and z (minor). Every
engine here decomposes ``r = swing * twist`` with the twist about x (PhysX ``PxSeparateSwingTwist``,
Jolt ``Quat::GetSwingTwist``, Bullet's cone then twist), the same as :func:`jointlimits.motion.quat.swing_twist`.

Swing metrics (how an engine measures a swing ``s = (w, 0, y, z)``, ``w >= 0``, against its two
half-angles ``Ay``, ``Az``; inside when ``(p_y / g(Ay))^2 + (p_z / g(Az))^2 <= 1``):

- ``"quat"`` (Jolt): ``p = (y, z)``, ``g(A) = sin(A / 2)``.
- ``"tanq"`` (PhysX D6 / spherical cone, Unity): ``p = 4 atan2((y, z), 1 + w)`` (the angles of the
  tan-quarter vector), ``g(A) = A``.
- ``"angle"`` (Bullet, Godot, Unreal): ``p = theta * (axis_y, axis_z)`` (swing angle times axis),
  ``g(A) = A``.

The twist angle is ``2 atan2(t_x, t_w)`` on the ``w >= 0`` cover, in (-pi, pi].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ..motion import quat

Array = NDArray[np.float64]

METRICS = ("quat", "tanq", "angle")


# --------------------------------------------------------------------------- random rotations


def haar(n: int, rng: np.random.Generator) -> Array:
    """``n`` Haar-uniform random rotations ``[n, 4]`` (normalised Gaussian 4-vectors)."""
    q = rng.normal(size=(n, 4))
    return quat.abs(q / np.linalg.norm(q, axis=-1, keepdims=True))


def haar_ball(n: int, radius: float, rng: np.random.Generator) -> Array:
    """``n`` Haar-uniform rotations conditioned on an angle <= ``radius`` (density sin^2(angle/2))."""
    radius = float(min(max(radius, 1e-6), math.pi))
    grid = np.linspace(0.0, radius, 2049)
    cdf = grid - np.sin(grid)
    cdf /= cdf[-1]
    theta = np.interp(rng.random(n), cdf, grid)
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    return quat.from_angle_axis(theta, axis)


def sample_inside(
    limit, reference: Array, n: int, rng: np.random.Generator, batch: int | None = None, max_batches: int = 60
) -> Array:
    """About ``n`` rotations the limit contains: rejection sampling of Haar-uniform rotations in a
    ball around ``reference``, the ball grown until no accepted sample comes near its rim (so the
    result is uniform over the limit's volume). Returns fewer when the limit is tiny."""
    ref = quat.normalize(np.asarray(reference, np.float64))
    batch = batch or min(20000, max(2000, 4 * n))
    radius = 0.3
    got: list[Array] = []
    count = 0
    for _ in range(max_batches):
        d = haar_ball(batch, radius, rng)
        q = quat.mul(ref, d)
        inside = np.asarray(limit.contains(q), bool)
        if radius < math.pi and np.any(inside & (quat.angle(d) > 0.85 * radius)):
            radius = min(math.pi, radius * 1.7)
            got, count = [], 0
            continue
        got.append(q[inside])
        count += int(inside.sum())
        if count >= n:
            break
    out = np.concatenate(got, axis=0) if got else np.zeros((0, 4))
    return out[:n]


# --------------------------------------------------------------------------- the joint frame


@dataclass(frozen=True)
class JointFrame:
    """Centre rotation ``centre`` and basis ``basis`` (w, x, y, z) of one joint; see the module doc."""

    centre: Array
    basis: Array

    @property
    def parent(self) -> Array:
        """The joint frame in the parent joint's frame: ``centre * basis``."""
        return quat.mul(self.centre, self.basis)

    @property
    def child(self) -> Array:
        """The joint frame in the joint's own frame: ``basis``."""
        return self.basis

    def to_engine(self, q: Array) -> Array:
        """Local rotations ``[..., 4]`` -> the engine's relative rotations (``w >= 0`` cover)."""
        return quat.abs(quat.mul(quat.inv_mul(self.parent, q), self.basis))

    def from_engine(self, r: Array) -> Array:
        """Engine relative rotations -> local rotations."""
        return quat.mul(quat.mul(self.parent, r), quat.inv(self.basis))

    def axes(self) -> Array:
        """Columns x (twist), y, z of the basis as vectors in the joint's own frame ``[3, 3]``."""
        return quat.to_matrix(self.basis)


def _perp_basis(a: Array) -> tuple[Array, Array]:
    e1 = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(a, e1)


def fit_frame(rotations: Array, twist_axis: Array, reference: Array) -> JointFrame:
    """Fit the joint frame to local rotations ``[N, 4]``: the swing and twist ranges centred at
    their mid-ranges, the twist axis along the bone, swing axes along the principal directions of
    the swing cloud (y the major one)."""
    q = quat.normalize(np.asarray(rotations, np.float64).reshape(-1, 4))
    a = np.asarray(twist_axis, np.float64)
    a = a / np.linalg.norm(a)
    centre = quat.normalize(np.asarray(reference, np.float64))
    e1, e2 = _perp_basis(a)
    if q.shape[0] == 0:
        return JointFrame(centre, quat.from_matrix(np.column_stack([a, e1, e2])))
    # 1. swing: the mean direction of the swung bone, then the mid-range of the swing vectors
    d = quat.abs(quat.inv_mul(centre, q))
    u = quat.mul_vec(d, a)
    m = u.mean(axis=0)
    if np.linalg.norm(m) > 1e-6:
        centre = quat.mul(centre, quat.between(a, m / np.linalg.norm(m)))
    for _ in range(2):
        s, _t = quat.swing_twist(quat.abs(quat.inv_mul(centre, q)), a)
        v = quat.to_scaled_angle_axis(quat.abs(s))
        p = np.stack([v @ e1, v @ e2], axis=-1)
        mid = 0.5 * (p.min(axis=0) + p.max(axis=0))
        centre = quat.mul(centre, quat.from_scaled_angle_axis(mid[0] * e1 + mid[1] * e2))
    # 2. twist: the mid-range of the twist angles
    _s, t = quat.swing_twist(quat.abs(quat.inv_mul(centre, q)), a)
    t = quat.abs(t)
    tau = 2.0 * np.arctan2(t[:, 1:] @ a, t[:, 0])
    centre = quat.mul(centre, quat.from_angle_axis(0.5 * (tau.min() + tau.max()), a))
    # 3. swing axes: principal directions of the swing vectors in the plane across the bone
    s, _t = quat.swing_twist(quat.abs(quat.inv_mul(centre, q)), a)
    v = quat.to_scaled_angle_axis(quat.abs(s))
    p = np.stack([v @ e1, v @ e2], axis=-1)
    if p.shape[0] >= 2 and np.ptp(p, axis=0).max() > 1e-9:
        _w, vec = np.linalg.eigh(np.cov(p.T) + 1e-15 * np.eye(2))
        major = vec[:, -1]
    else:
        major = np.array([1.0, 0.0])
    y = major[0] * e1 + major[1] * e2
    y /= np.linalg.norm(y)
    z = np.cross(a, y)
    return JointFrame(quat.normalize(centre), quat.from_matrix(np.column_stack([a, y, z])))


# --------------------------------------------------------------------------- swing-twist limits


def split(r: Array) -> tuple[Array, Array]:
    """Engine rotations ``[..., 4]`` -> (swing ``[..., 4]`` with x = 0 and w >= 0, twist angle)."""
    r = quat.abs(np.asarray(r, np.float64))
    w, x = r[..., 0], r[..., 1]
    n = np.hypot(w, x)
    safe = n > 1e-12
    tw = np.where(safe, w / np.where(safe, n, 1.0), 1.0)
    tx = np.where(safe, x / np.where(safe, n, 1.0), 0.0)
    twist_angle = 2.0 * np.arctan2(tx, tw)
    # swing = r * conj(twist), twist = (tw, tx, 0, 0): its x part vanishes by construction
    sw = r[..., 0] * tw + r[..., 1] * tx
    sy = r[..., 2] * tw - r[..., 3] * tx
    sz = r[..., 3] * tw + r[..., 2] * tx
    swing = np.stack([sw, np.zeros_like(sw), sy, sz], axis=-1)
    # a half turn about an axis across x: no twist, the whole rotation is swing
    swing = np.where(safe[..., None], swing, r)
    return quat.abs(swing), twist_angle


def swing_point(swing: Array, metric: str) -> Array:
    """The 2D point ``[..., 2]`` an engine tests against its ellipse (see the module doc)."""
    w, y, z = swing[..., 0], swing[..., 2], swing[..., 3]
    if metric == "quat":
        return np.stack([y, z], axis=-1)
    if metric == "tanq":
        return 4.0 * np.stack([np.arctan2(y, 1.0 + w), np.arctan2(z, 1.0 + w)], axis=-1)
    if metric == "angle":
        v = quat.to_scaled_angle_axis(swing)
        return v[..., 1:3]
    raise ValueError(f"unknown swing metric {metric!r}")


def swing_from_point(p: Array, metric: str) -> Array:
    """Inverse of :func:`swing_point`: swing quaternions ``[..., 4]`` from 2D points."""
    p = np.asarray(p, np.float64)
    zero = np.zeros(p.shape[:-1])
    if metric == "quat":
        n2 = np.minimum(np.sum(p * p, axis=-1), 1.0)
        return np.stack([np.sqrt(1.0 - n2), zero, p[..., 0], p[..., 1]], axis=-1)
    if metric == "tanq":
        r = np.tan(p / 4.0)
        r2 = np.sum(r * r, axis=-1)
        return np.stack([(1.0 - r2), zero, 2 * r[..., 0], 2 * r[..., 1]], axis=-1) / (1.0 + r2)[..., None]
    if metric == "angle":
        return quat.from_scaled_angle_axis(np.stack([zero, p[..., 0], p[..., 1]], axis=-1))
    raise ValueError(f"unknown swing metric {metric!r}")


def metric_scale(angle: Array | float, metric: str) -> Array:
    """The ellipse semi-axis ``g(A)`` of a half-angle in a metric."""
    return np.sin(np.asarray(angle) / 2.0) if metric == "quat" else np.asarray(angle, np.float64)


def metric_angle(scale: Array | float, metric: str) -> Array:
    """Inverse of :func:`metric_scale`."""
    if metric == "quat":
        return 2.0 * np.arcsin(np.clip(scale, 0.0, 1.0))
    return np.asarray(scale, np.float64)


@dataclass(frozen=True)
class SwingTwistLimit:
    """An engine's swing ellipse (half-angles about y and z, radians) and twist range, in its metric."""

    swing_y: float
    swing_z: float
    twist_lo: float
    twist_hi: float
    metric: str
    circular: bool = False
    n_params = 3  # swing_y, swing_z, twist range

    def admits(self, r: Array, tol: float = 1e-9) -> NDArray[np.bool_]:
        """The engine's limit test on engine-frame rotations ``[..., 4]``."""
        swing, tau = split(r)
        p = swing_point(swing, self.metric)
        gy = max(float(metric_scale(self.swing_y, self.metric)), 1e-12)
        gz = max(float(metric_scale(self.swing_z, self.metric)), 1e-12)
        inside_swing = (p[..., 0] / gy) ** 2 + (p[..., 1] / gz) ** 2 <= 1.0 + tol
        return inside_swing & (tau >= self.twist_lo - tol) & (tau <= self.twist_hi + tol)

    def sample(self, n: int, rng: np.random.Generator, rim: float = 0.5) -> Array:
        """Engine-frame rotations ``[n, 4]`` inside the limit: twist uniform in its range, swing
        uniform in the ellipse; a share ``rim`` on the ellipse's rim or the twist's ends."""
        phi = rng.uniform(0, 2 * math.pi, n)
        rad = np.sqrt(rng.random(n))
        k = int(rim * n)
        rad[:k] = 1.0
        gy = float(metric_scale(self.swing_y, self.metric))
        gz = float(metric_scale(self.swing_z, self.metric))
        p = np.stack([gy * rad * np.cos(phi), gz * rad * np.sin(phi)], axis=-1)
        tau = rng.uniform(self.twist_lo, self.twist_hi, n)
        ends = rng.random(n) < 0.5
        edge = rng.random(n) < rim
        tau = np.where(edge, np.where(ends, self.twist_lo, self.twist_hi), tau)
        s = swing_from_point(p, self.metric)
        t = quat.from_angle_axis(tau, np.array([1.0, 0.0, 0.0]))
        return quat.mul(s, t)

    def scaled(self, k: float | Sequence[float]) -> SwingTwistLimit:
        """The limit shrunk by ``k``: one factor, or one each for (swing_y, swing_z, twist range);
        the twist range shrinks about its middle, a circular swing keeps its circle."""
        ky, kz, kt = np.broadcast_to(np.asarray(k, np.float64), (3,))
        if self.circular:
            kz = ky
        mid = 0.5 * (self.twist_lo + self.twist_hi)
        return replace(
            self,
            swing_y=float(ky * self.swing_y),
            swing_z=float(kz * self.swing_z),
            twist_lo=float(mid + kt * (self.twist_lo - mid)),
            twist_hi=float(mid + kt * (self.twist_hi - mid)),
        )


def covering_ellipse(points: Array, circular: bool = False) -> tuple[float, float]:
    """Semi-axes ``(a, b)`` of the smallest-area axis-aligned, origin-centred ellipse containing
    2D ``points`` (``circular``: the smallest circle about the origin)."""
    p = np.asarray(points, np.float64).reshape(-1, 2)
    if p.shape[0] == 0:
        return 0.0, 0.0
    if circular:
        r = float(np.sqrt(np.max(np.sum(p * p, axis=1))))
        return r, r
    # only the hull of the points (mirrored: the ellipse is symmetric) can touch the ellipse
    sym = np.abs(p)
    try:
        from scipy.spatial import ConvexHull

        full = np.concatenate([sym, sym * [-1, 1], sym * [1, -1], -sym], axis=0)
        sym = np.abs(full[ConvexHull(full).vertices])
    except Exception:  # degenerate (collinear / too few points): use them all
        pass
    rho = np.geomspace(1e-3, 1e3, 1201)[:, None]  # b / a
    a = np.sqrt(np.max(sym[None, :, 0] ** 2 + (sym[None, :, 1] / rho) ** 2, axis=1))
    k = int(np.argmin(a * a * rho[:, 0]))
    return float(a[k]), float(a[k] * rho[k, 0])


def cover_swing_twist(
    r: Array,
    metric: str,
    max_swing: float,
    max_twist: float = math.pi,
    symmetric_twist: bool = False,
    circular: bool = False,
    min_angle: float = 0.0,
) -> SwingTwistLimit:
    """The smallest limit of this kind containing engine-frame rotations ``r`` (clamped to the
    engine's allowed ranges, so it may leave some out)."""
    swing, tau = split(r)
    p = swing_point(swing, metric)
    a, b = covering_ellipse(p, circular)
    if metric == "quat":
        a, b = min(a, 1.0), min(b, 1.0)
    ay = float(np.clip(metric_angle(a, metric), min_angle, max_swing))
    az = float(np.clip(metric_angle(b, metric), min_angle, max_swing))
    lo, hi = (float(tau.min()), float(tau.max())) if tau.size else (0.0, 0.0)
    if symmetric_twist:
        t = min(max(abs(lo), abs(hi), min_angle), max_twist)
        lo, hi = -t, t
    else:
        lo, hi = max(lo, -max_twist), min(hi, max_twist)
        if hi - lo < 2 * min_angle:
            mid = 0.5 * (lo + hi)
            lo, hi = mid - min_angle, mid + min_angle
    return SwingTwistLimit(ay, az, lo, hi, metric, circular)


# --------------------------------------------------------------------------- hinges (MuJoCo)


HINGE_ORDER = "yzx"  # intrinsic: r = R_y(a0) R_z(a1) R_x(a2); the twist (x) innermost


def hinge_angles(r: Array) -> Array:
    """Intrinsic y-z-x Euler angles ``[..., 3]`` of engine rotations (the three hinges' qpos)."""
    return quat.to_euler(r, HINGE_ORDER)


@dataclass(frozen=True)
class HingeBox:
    """Three hinges (about y, z, x of the joint frame, in that order) with ranges ``lo``..``hi``."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    n_params = 3  # one range per hinge

    def admits(self, r: Array, tol: float = 1e-9) -> NDArray[np.bool_]:
        e = hinge_angles(r)
        return np.all((e >= np.asarray(self.lo) - tol) & (e <= np.asarray(self.hi) + tol), axis=-1)

    def sample(self, n: int, rng: np.random.Generator, rim: float = 0.5) -> Array:
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        e = rng.uniform(lo, hi, size=(n, 3))
        k = int(rim * n)
        face = rng.integers(0, 3, k)
        side = rng.random(k) < 0.5
        e[np.arange(k), face] = np.where(side, lo[face], hi[face])
        return quat.from_euler(e, HINGE_ORDER)

    def scaled(self, k: float | Sequence[float]) -> HingeBox:
        """The box shrunk about its middle by ``k``: one factor or one per hinge."""
        f = np.broadcast_to(np.asarray(k, np.float64), (3,))
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        mid = 0.5 * (lo + hi)
        return HingeBox(tuple(mid + f * (lo - mid)), tuple(mid + f * (hi - mid)))


def cover_hinges(r: Array) -> HingeBox:
    e = hinge_angles(r)
    if e.shape[0] == 0:
        return HingeBox((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    # a hair outside the data, so ranges written to text still hold every training frame
    return HingeBox(tuple((e.min(axis=0) - 1e-9).tolist()), tuple((e.max(axis=0) + 1e-9).tolist()))


# --------------------------------------------------------------------------- ball (MuJoCo)


@dataclass(frozen=True)
class BallCone:
    """A ball joint's limit: the rotation angle (from the centre) at most ``angle`` radians."""

    angle: float
    n_params = 1

    def admits(self, r: Array, tol: float = 1e-9) -> NDArray[np.bool_]:
        return quat.angle(np.asarray(r, np.float64)) <= self.angle + tol

    def sample(self, n: int, rng: np.random.Generator, rim: float = 0.5) -> Array:
        q = haar_ball(n, self.angle, rng)
        k = int(rim * n)
        ax = rng.normal(size=(k, 3))
        ax /= np.linalg.norm(ax, axis=-1, keepdims=True)
        q[:k] = quat.from_angle_axis(np.full(k, self.angle), ax)
        return q

    def scaled(self, k: float | Sequence[float]) -> BallCone:
        return BallCone(float(np.atleast_1d(k)[0] * self.angle))


def cover_ball(r: Array) -> BallCone:
    a = quat.angle(np.asarray(r, np.float64))
    return BallCone(float(a.max()) + 1e-9 if a.size else 0.0)


# --------------------------------------------------------------------------- conservative


def shrink_inside(
    limit,
    frame: JointFrame,
    contains,
    rng: np.random.Generator,
    samples: int = 2000,
    outside_share: float = 1e-3,
    steps: int = 8,
    axis_steps: int = 5,
):
    """A limit inside the fitted one: ``limit.scaled(k)`` with per-parameter factors ``k`` in
    [0, 1]. First the largest common factor whose samples (rim-heavy) the fitted limit contains
    but for a share ``outside_share``, then each parameter in turn grown as far as that still
    holds (bisection). Returns (limit, k)."""
    seed = int(rng.integers(0, 2**31 - 1))

    def ok(k) -> bool:
        cand = limit.scaled(k)
        r = cand.sample(samples, np.random.default_rng(seed))
        inside = np.asarray(contains(frame.from_engine(r)), bool)
        return float(1.0 - inside.mean()) <= outside_share

    n = int(getattr(limit, "n_params", 3))
    if ok(1.0):
        return limit, np.ones(n)
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    k = np.full(n, lo)
    for i in range(n if n > 1 else 0):
        a, b = k[i], 1.0
        for _ in range(axis_steps):
            mid = 0.5 * (a + b)
            trial = k.copy()
            trial[i] = mid
            if ok(trial):
                a = mid
            else:
                b = mid
        k[i] = a
    return limit.scaled(k), k

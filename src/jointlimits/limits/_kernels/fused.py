"""Compiled per-joint limit step: quaternion -> limit space -> project -> soften -> quaternion.

One pass per rotation with no temporaries, so that projecting whole clips costs about what the
reference C++ does. The math is exactly :class:`jointlimits.limits.joint.FittedLimit`'s: relative to the
reference, short cover (and the long cover for limits reaching past pi), swing in its plane and
twist on its axis.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from .codes import BOX, ELLIPSE, ELLIPSOID, KDOP_EXACT, POLYGON, SLABS
from .phased import project_phased
from .scalar import (_exp2, _log2, _long_cover, _nearer, _project_point, _qmul, _soften, _swing_twist,  # noqa: F401
                     _unowned)

__all__ = ["pack_shape", "pack_swing_section", "pack_limit", "project_fitted", "EMPTY_SHAPE"]

TWO_PI = 2.0 * math.pi
# from this many rotations on, project_fitted runs the phased step (jointlimits.phased), whose
# fixed cost per call (~8 us) the vectorised transcendentals then repay
PHASED_MIN_ROWS = 128


def pack_shape(shape: Any) -> tuple:
    """A Shape as flat arrays for the kernels: (code, f[16] = pos, rot, scale, radius, axes, mins,
    maxs, G, bnd); each shape module packs its own (``Shape.pack``)."""
    packed = shape.pack()
    if packed is None:
        raise ValueError(f"a {shape.kind} limit has no compiled form")
    return packed


def pack_swing_section(shape: Any, axis: np.ndarray) -> tuple:
    """The swing section of a shape (its part in the plane perpendicular to ``axis``) packed for
    the kernels: a convex polygon for boxes and k-DOPs, an ellipse for ellipsoids."""
    packed = shape.pack_section(axis)
    if packed is None:
        raise ValueError(f"a {shape.kind} limit has no compiled form")
    return packed


EMPTY_SHAPE = (SLABS, np.zeros(16), np.zeros((0, 3)), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros(0))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _fitted_kernel(q, ref, axis, mode, covers, soft_on, want_hard, falloff, sradius, tlo, thi,
                   ca, fa, axa, mna, mxa, Ga, ba, cb, fb, axb, mnb, mxb, Gb, bb, out, hard):  # pragma: no cover
    """mode 0: one shape; 1: swing section (shape a) and twist interval; 2: reference quirks
    (swing shape a and twist shape b, each in 3D). Rotations the projection leaves in place are
    copied through unchanged; the hard (unsoftened) result is written only if ``want_hard``."""
    rw, rx, ry, rz = ref[0], ref[1], ref[2], ref[3]
    tax, tay, taz = axis[0], axis[1], axis[2]
    fa, axa, mna, mxa, Ga, ba = _unowned(fa), _unowned(axa), _unowned(mna), _unowned(mxa), _unowned(Ga), _unowned(ba)
    fb, axb, mnb, mxb, Gb, bb = _unowned(fb), _unowned(axb), _unowned(mnb), _unowned(mxb), _unowned(Gb), _unowned(bb)
    long_cover = covers and fa[15] > math.pi
    for i in range(q.shape[0]):
        qw, qx, qy, qz = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        w, x, y, z = _qmul(rw, -rx, -ry, -rz, qw, qx, qy, qz)
        if w < 0.0:
            w, x, y, z = -w, -x, -y, -z
        if mode == 0:
            vx, vy, vz = _log2(w, x, y, z)
            hx, hy, hz = _project_point(vx, vy, vz, ca, fa, axa, mna, mxa, Ga, ba)
            if long_cover:  # the shape reaches past pi: the other cover may be nearer
                x2, y2, z2 = _long_cover(vx, vy, vz)
                h2x, h2y, h2z = _project_point(x2, y2, z2, ca, fa, axa, mna, mxa, Ga, ba)
                vx, vy, vz, hx, hy, hz = _nearer(vx, vy, vz, hx, hy, hz, x2, y2, z2, h2x, h2y, h2z)
            if hx == vx and hy == vy and hz == vz:
                inside = True
            else:
                inside = False
                sx, sy, sz = hx, hy, hz
                if soft_on:
                    sx, sy, sz = _soften(vx, vy, vz, hx, hy, hz, falloff, sradius)
                aw, ax, ay, az = _exp2(sx, sy, sz)
                if want_hard and soft_on:
                    bw, bx, by, bz = _exp2(hx, hy, hz)
                else:
                    bw, bx, by, bz = aw, ax, ay, az
        else:
            sw_, sx_, sy_, sz_, tw, tx, ty, tz = _swing_twist(w, x, y, z, tax, tay, taz)
            vx, vy, vz = _log2(sw_, sx_, sy_, sz_)
            ux, uy, uz = _log2(tw, tx, ty, tz)
            hx, hy, hz = _project_point(vx, vy, vz, ca, fa, axa, mna, mxa, Ga, ba)
            if long_cover:
                x2, y2, z2 = _long_cover(vx, vy, vz)
                h2x, h2y, h2z = _project_point(x2, y2, z2, ca, fa, axa, mna, mxa, Ga, ba)
                vx, vy, vz, hx, hy, hz = _nearer(vx, vy, vz, hx, hy, hz, x2, y2, z2, h2x, h2y, h2z)
            if mode == 1:
                t = ux * tax + uy * tay + uz * taz
                p = min(max(t, tlo), thi)
                if covers and max(-tlo, thi) > math.pi:
                    t2 = t - TWO_PI if t >= 0 else t + TWO_PI
                    p2 = min(max(t2, tlo), thi)
                    if abs(p2 - t2) < abs(p - t):
                        t, p = t2, p2
                ht = p
                st = p
                if soft_on:
                    dd = abs(p - t)
                    if dd > 1e-5:
                        st = p + math.copysign(1.0, t - p) * math.tanh(falloff * dd) * sradius
                gx, gy, gz = ht * tax, ht * tay, ht * taz
                kx, ky, kz = st * tax, st * tay, st * taz
            else:
                gx, gy, gz = _project_point(ux, uy, uz, cb, fb, axb, mnb, mxb, Gb, bb)
                kx, ky, kz = gx, gy, gz
                if soft_on:
                    kx, ky, kz = _soften(ux, uy, uz, gx, gy, gz, falloff, sradius)
            inside = hx == vx and hy == vy and hz == vz and gx == kx and gy == ky and gz == kz \
                and abs(gx - ux) + abs(gy - uy) + abs(gz - uz) <= 1e-15 * (1.0 + abs(ux) + abs(uy) + abs(uz))
            if not inside:
                sx, sy, sz = hx, hy, hz
                if soft_on:
                    sx, sy, sz = _soften(vx, vy, vz, hx, hy, hz, falloff, sradius)
                a1w, a1x, a1y, a1z = _exp2(sx, sy, sz)
                a2w, a2x, a2y, a2z = _exp2(kx, ky, kz)
                aw, ax, ay, az = _qmul(a1w, a1x, a1y, a1z, a2w, a2x, a2y, a2z)
                if want_hard and soft_on:
                    b1w, b1x, b1y, b1z = _exp2(hx, hy, hz)
                    b2w, b2x, b2y, b2z = _exp2(gx, gy, gz)
                    bw, bx, by, bz = _qmul(b1w, b1x, b1y, b1z, b2w, b2x, b2y, b2z)
                else:
                    bw, bx, by, bz = aw, ax, ay, az
        if inside:
            out[i, 0], out[i, 1], out[i, 2], out[i, 3] = qw, qx, qy, qz
            if want_hard:
                hard[i, 0], hard[i, 1], hard[i, 2], hard[i, 3] = qw, qx, qy, qz
            continue
        ow, ox, oy, oz = _qmul(rw, rx, ry, rz, aw, ax, ay, az)
        if ow * qw + ox * qx + oy * qy + oz * qz < 0.0:  # the caller's cover
            ow, ox, oy, oz = -ow, -ox, -oy, -oz
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = ow, ox, oy, oz
        if not want_hard:
            continue
        hw, hx2, hy2, hz2 = _qmul(rw, rx, ry, rz, bw, bx, by, bz)
        if hw * qw + hx2 * qx + hy2 * qy + hz2 * qz < 0.0:
            hw, hx2, hy2, hz2 = -hw, -hx2, -hy2, -hz2
        hard[i, 0], hard[i, 1], hard[i, 2], hard[i, 3] = hw, hx2, hy2, hz2


def pack_limit(limit: Any) -> tuple[int, bool, tuple[float, float], tuple, tuple]:
    """A FittedLimit for the kernels: (mode, covers, twist interval, shape a, shape b)."""
    if not limit.swing_twist:
        return 0, not limit.reference_quirks, (0.0, 0.0), pack_shape(limit.shape), EMPTY_SHAPE
    if limit.reference_quirks:
        return 2, False, (0.0, 0.0), pack_shape(limit.swing), pack_shape(limit.twist)
    # swing points lie in the plane perpendicular to the twist axis and twist points on the axis,
    # so each part is limited by its section: the composed rotation then decomposes back into
    # the same parts (projection is idempotent)
    return (1, True, limit.twist.twist_interval(limit.twist_axis),
            pack_swing_section(limit.swing, limit.twist_axis), EMPTY_SHAPE)


def project_fitted(q: np.ndarray, ref: np.ndarray, axis: np.ndarray, mode: int, covers: bool,
                   soften: tuple[float, float] | None, a: tuple, b: tuple, twist: tuple[float, float],
                   want_hard: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """(softened, hard) limited rotations ``[..., 4]`` for one joint's packed limit (hard is None
    unless ``want_hard``). Large batches go through the phased step, small ones the fused kernel."""
    q = np.asarray(q, np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    out = np.empty_like(flat)
    hard = np.empty_like(flat) if want_hard else out[:0]
    if mode != 2 and len(flat) >= PHASED_MIN_ROWS:
        project_phased(flat, ref, axis, mode, covers, soften, a, twist, out, hard if want_hard else None)
        return out.reshape(q.shape), (hard.reshape(q.shape) if want_hard else None)
    soft_on = soften is not None
    falloff, radius = (float(soften[0]), float(soften[1])) if soft_on else (0.0, 0.0)
    _fitted_kernel(flat, ref, axis, mode, covers, soft_on, want_hard, falloff, radius, twist[0], twist[1],
                   *a, *b, out, hard)
    return out.reshape(q.shape), (hard.reshape(q.shape) if want_hard else None)

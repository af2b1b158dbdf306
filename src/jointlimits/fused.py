"""Compiled per-joint limit step: quaternion -> limit space -> project -> soften -> quaternion.

One pass per rotation with no temporaries, so that projecting whole clips costs about what the
reference C++ does. The math is exactly :class:`jointlimits.model.FittedLimit`'s: relative to the
reference, short cover (and the long cover for limits reaching past pi), swing in its plane and
twist on its axis.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from .limits import _ellipsoid_inside, _ellipsoid_local, _kdop_brute_local, _kdop_exact_local

__all__ = ["pack_shape", "project_fitted", "EMPTY_SHAPE"]

SLABS, ELLIPSOID, KDOP_EXACT, BOX = 0, 1, 2, 3
TWO_PI = 2.0 * math.pi


def pack_shape(shape: Any) -> tuple:
    """A Shape as flat arrays for the kernels: (code, f[16] = pos, rot, scale, radius, axes, mins,
    maxs, G, bnd)."""
    f = np.zeros(16)
    f[0:3] = shape.position
    f[3:12] = shape.rotation.reshape(-1)
    f[15] = shape.radius()
    none3, none1 = np.zeros((0, 3)), np.zeros(0)
    if shape.kind in ("box", "oriented-box"):
        if shape.kind == "box":
            f[0:3] = 0.0
            f[3:12] = np.eye(3).reshape(-1)
        return (BOX, f, np.eye(3), shape.lo.copy(), shape.hi.copy(), none3, none1)
    if shape.kind == "ellipsoid":
        f[12:15] = shape.scale
        return (ELLIPSOID, f, none3, none1, none1, none3, none1)
    if not shape.exact:
        return (SLABS, f, shape.axes.copy(), shape.mins.copy(), shape.maxs.copy(), none3, none1)
    norms = np.linalg.norm(shape.axes, axis=1)
    unit = shape.axes / norms[:, None]
    G = np.ascontiguousarray(np.concatenate([unit, -unit], axis=0))
    bnd = np.concatenate([shape.maxs / norms, -shape.mins / norms])
    return (KDOP_EXACT, f, none3, none1, none1, G, bnd)


EMPTY_SHAPE = (SLABS, np.zeros(16), np.zeros((0, 3)), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros(0))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _project_point(x, y, z, code, f, axes, mins, maxs, G, bnd):  # pragma: no cover - compiled
    """Closest point of one shape (points inside come back unchanged)."""
    px, py, pz = f[0], f[1], f[2]
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11]
    dx, dy, dz = x - px, y - py, z - pz
    u = r00 * dx + r10 * dy + r20 * dz
    v = r01 * dx + r11 * dy + r21 * dz
    w = r02 * dx + r12 * dy + r22 * dz
    if code == BOX:  # orthonormal axes: the clamp is the closest point
        cu = min(max(u, mins[0]), maxs[0])
        cv = min(max(v, mins[1]), maxs[1])
        cw = min(max(w, mins[2]), maxs[2])
        if cu == u and cv == v and cw == w:
            return x, y, z
        u, v, w = cu, cv, cw
    elif code == SLABS:
        moved = False
        for k in range(axes.shape[0]):
            ax, ay, az = axes[k, 0], axes[k, 1], axes[k, 2]
            d = ax * u + ay * v + az * w
            aa = ax * ax + ay * ay + az * az
            if d < mins[k]:
                s = (mins[k] - d) / aa
            elif d > maxs[k]:
                s = (maxs[k] - d) / aa
            else:
                continue
            u += s * ax
            v += s * ay
            w += s * az
            moved = True
        if not moved:
            return x, y, z
    elif code == ELLIPSOID:
        sx, sy, sz = f[12], f[13], f[14]
        if _ellipsoid_inside(u, v, w, sx, sy, sz):
            return x, y, z
        u, v, w = _ellipsoid_local(u, v, w, sx * sx, sy * sy, sz * sz, 32)
    else:
        bmax = 0.0
        for j in range(bnd.shape[0]):
            bmax = max(bmax, abs(bnd[j]))
        tol = 1e-12 * (1.0 + bmax + max(abs(u), max(abs(v), abs(w))))
        inside = True
        for j in range(G.shape[0]):
            if G[j, 0] * u + G[j, 1] * v + G[j, 2] * w - bnd[j] > tol:
                inside = False
                break
        if inside:
            return x, y, z
        a, b, c, st = _kdop_exact_local(u, v, w, G, bnd, tol, 64)
        if st == 2:
            a, b, c, st = _kdop_brute_local(u, v, w, G, bnd, 10.0 * tol)
        u, v, w = a, b, c
    return (r00 * u + r01 * v + r02 * w + px, r10 * u + r11 * v + r12 * w + py, r20 * u + r21 * v + r22 * w + pz)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _project_covers(x, y, z, covers, code, f, axes, mins, maxs, G, bnd):  # pragma: no cover - compiled
    """Project the short cover and, if the shape reaches past pi, the long one; keep the nearer.
    Returns (original point of the chosen cover, its projection)."""
    hx, hy, hz = _project_point(x, y, z, code, f, axes, mins, maxs, G, bnd)
    if covers and f[15] > math.pi:
        n = math.sqrt(x * x + y * y + z * z)
        if n > 1e-12:
            k = 1.0 - TWO_PI / n
            x2, y2, z2 = x * k, y * k, z * k
            h2x, h2y, h2z = _project_point(x2, y2, z2, code, f, axes, mins, maxs, G, bnd)
            d1 = math.sqrt((hx - x) ** 2 + (hy - y) ** 2 + (hz - z) ** 2)
            d2 = math.sqrt((h2x - x2) ** 2 + (h2y - y2) ** 2 + (h2z - z2) ** 2)
            if d2 < d1:
                return x2, y2, z2, h2x, h2y, h2z
    return x, y, z, hx, hy, hz


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _soften(ox, oy, oz, px, py, pz, falloff, radius):  # pragma: no cover - compiled
    dx, dy, dz = ox - px, oy - py, oz - pz
    d = math.sqrt(dx * dx + dy * dy + dz * dz)
    if d > 1e-5:
        s = math.tanh(falloff * d) * radius / d
        return px + dx * s, py + dy * s, pz + dz * s
    return px, py, pz


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _log2(w, x, y, z):  # pragma: no cover - compiled
    n = math.sqrt(x * x + y * y + z * z)
    s = 2.0 * math.atan2(n, w) / n if n > 1e-8 else 2.0
    return x * s, y * s, z * s


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _exp2(x, y, z):  # pragma: no cover - compiled
    hx, hy, hz = 0.5 * x, 0.5 * y, 0.5 * z
    a = math.sqrt(hx * hx + hy * hy + hz * hz)
    s = math.sin(a) / a if a > 1e-8 else 1.0 - a * a / 6.0
    return math.cos(a), hx * s, hy * s, hz * s


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _qmul(aw, ax, ay, az, bw, bx, by, bz):  # pragma: no cover - compiled
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _fitted_kernel(q, ref, axis, mode, covers, soft_on, want_hard, falloff, sradius, tlo, thi,
                   ca, fa, axa, mna, mxa, Ga, ba, cb, fb, axb, mnb, mxb, Gb, bb, out, hard):  # pragma: no cover
    """mode 0: one shape; 1: swing section (shape a) and twist interval; 2: reference quirks
    (swing shape a and twist shape b, each in 3D). Rotations the projection leaves in place are
    copied through unchanged; the hard (unsoftened) result is written only if ``want_hard``."""
    rw, rx, ry, rz = ref[0], ref[1], ref[2], ref[3]
    tax, tay, taz = axis[0], axis[1], axis[2]
    for i in range(q.shape[0]):
        qw, qx, qy, qz = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        w, x, y, z = _qmul(rw, -rx, -ry, -rz, qw, qx, qy, qz)
        if w < 0.0:
            w, x, y, z = -w, -x, -y, -z
        if mode == 0:
            vx, vy, vz = _log2(w, x, y, z)
            vx, vy, vz, hx, hy, hz = _project_covers(vx, vy, vz, covers, ca, fa, axa, mna, mxa, Ga, ba)
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
            # swing-twist: twist = normalize(w, (v.a) a), swing = r conj(twist)
            d = x * tax + y * tay + z * taz
            tw, tx, ty, tz = w, d * tax, d * tay, d * taz
            tn = math.sqrt(tw * tw + tx * tx + ty * ty + tz * tz)
            if tn > 1e-12:
                tw, tx, ty, tz = tw / tn, tx / tn, ty / tn, tz / tn
            else:
                tw, tx, ty, tz = 1.0, 0.0, 0.0, 0.0
            sw_, sx_, sy_, sz_ = _qmul(w, x, y, z, tw, -tx, -ty, -tz)
            if sw_ < 0.0:
                sw_, sx_, sy_, sz_ = -sw_, -sx_, -sy_, -sz_
            if tw < 0.0:
                tw, tx, ty, tz = -tw, -tx, -ty, -tz
            vx, vy, vz = _log2(sw_, sx_, sy_, sz_)
            ux, uy, uz = _log2(tw, tx, ty, tz)
            vx, vy, vz, hx, hy, hz = _project_covers(vx, vy, vz, covers, ca, fa, axa, mna, mxa, Ga, ba)
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
                ux, uy, uz, gx, gy, gz = _project_covers(ux, uy, uz, False, cb, fb, axb, mnb, mxb, Gb, bb)
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


def project_fitted(q: np.ndarray, ref: np.ndarray, axis: np.ndarray, mode: int, covers: bool,
                   soften: tuple[float, float] | None, a: tuple, b: tuple, twist: tuple[float, float],
                   want_hard: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """(softened, hard) limited rotations ``[..., 4]`` for one joint's packed limit (hard is None
    unless ``want_hard``)."""
    q = np.asarray(q, np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    out = np.empty_like(flat)
    hard = np.empty_like(flat) if want_hard else out[:0]
    soft_on = soften is not None
    falloff, radius = (float(soften[0]), float(soften[1])) if soft_on else (0.0, 0.0)
    _fitted_kernel(flat, ref, axis, mode, covers, soft_on, want_hard, falloff, radius, twist[0], twist[1],
                   *a, *b, out, hard)
    return out.reshape(q.shape), (hard.reshape(q.shape) if want_hard else None)

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
from numba.core import cgutils
from numba.extending import intrinsic

from .limits import _ellipsoid_inside, _ellipsoid_local, _kdop_brute_local, _kdop_exact_local

__all__ = ["pack_shape", "pack_swing_section", "pack_limit", "project_fitted", "EMPTY_SHAPE"]

SLABS, ELLIPSOID, KDOP_EXACT, BOX, POLYGON, ELLIPSE = 0, 1, 2, 3, 4, 5
TWO_PI = 2.0 * math.pi
# from this many rotations on, project_fitted runs the phased step (jointlimits.phased), whose
# fixed cost per call (~8 us) the vectorised transcendentals then repay
PHASED_MIN_ROWS = 128


@intrinsic
def _unowned(typingctx, arr):  # pragma: no cover - compiled
    """The same array view without its owner (null meminfo and parent).

    numba's inliner rebinds every array argument of an inlined helper, and its reference-count
    pruner leaves the resulting atomic increments and decrements inside the loop (about 60 ns per
    rotation for the six shape arrays). Reference counting on an unowned view is a no-op. Only for
    views that do not outlive the owned array they come from (a kernel's own arguments).
    """
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, value=args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()

    return arr(arr), codegen


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


def _clip_polygon(poly: np.ndarray, g: np.ndarray, h: float) -> np.ndarray:
    """Sutherland-Hodgman: the part of a convex polygon [V, 2] with g.y <= h."""
    if len(poly) == 0:
        return poly
    d = poly @ g - h
    out = []
    for i in range(len(poly)):
        j = (i + 1) % len(poly)
        if d[i] <= 0:
            out.append(poly[i])
        if (d[i] < 0 < d[j]) or (d[j] < 0 < d[i]):
            t = d[i] / (d[i] - d[j])
            out.append(poly[i] + t * (poly[j] - poly[i]))
    return np.array(out).reshape(-1, 2)


def pack_swing_section(shape: Any, axis: np.ndarray) -> tuple:
    """The swing section of a shape (its part in the plane perpendicular to ``axis``) packed for
    the kernels: a convex polygon for boxes and k-DOPs, an ellipse for ellipsoids."""
    from .model import _slabs, swing_section

    if shape.kind == "ellipsoid":
        # a flat ellipse: inside-ness is decided on the in-plane coordinates only, so a swing
        # point's rounding-level offset from the plane does not count as a violation
        code, f, *rest = pack_shape(swing_section(shape, axis))
        return (ELLIPSE, f, *rest)
    a = np.asarray(axis, np.float64)
    e1 = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
    e1 /= np.linalg.norm(e1)
    P = np.stack([e1, np.cross(a, e1)], axis=1)  # plane basis, columns
    pos, rot, ax, mins, maxs = _slabs(shape)
    m = ax @ rot.T  # slab directions in limit space (rows)
    off = m @ pos
    big = 100.0
    poly = np.array([[-big, -big], [big, -big], [big, big], [-big, big]])
    for mk, ok, mn, mx in zip(m, off, mins, maxs):
        g = P.T @ mk
        poly = _clip_polygon(poly, g, mx + ok)
        poly = _clip_polygon(poly, -g, -(mn + ok))
    if len(poly) == 0:  # the plane misses the shape: fall back to the 3D section solver
        return pack_shape(swing_section(shape, axis))
    f = np.zeros(16)
    f[3:6], f[6:9] = P[:, 0], P[:, 1]
    f[15] = float(np.max(np.linalg.norm(poly, axis=1)))
    verts = np.zeros((len(poly), 3))
    verts[:, :2] = poly
    return (POLYGON, f, verts, np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros(0))


EMPTY_SHAPE = (SLABS, np.zeros(16), np.zeros((0, 3)), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros(0))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _project_point(x, y, z, code, f, axes, mins, maxs, G, bnd):  # pragma: no cover - compiled
    """Closest point of one shape (points inside come back unchanged)."""
    if code == POLYGON:  # convex polygon in the plane spanned by e1 = f[3:6], e2 = f[6:9]
        yu = f[3] * x + f[4] * y + f[5] * z
        yv = f[6] * x + f[7] * y + f[8] * z
        nv = axes.shape[0]
        inside = True
        for k in range(nv):
            k2 = k + 1 if k + 1 < nv else 0
            ex, ey = axes[k2, 0] - axes[k, 0], axes[k2, 1] - axes[k, 1]
            if ex * (yv - axes[k, 1]) - ey * (yu - axes[k, 0]) < -1e-12 * (1.0 + abs(yu) + abs(yv)):
                inside = False
                break
        if inside:
            return x, y, z
        best, bu, bv = 1e300, yu, yv
        for k in range(nv):
            k2 = k + 1 if k + 1 < nv else 0
            ex, ey = axes[k2, 0] - axes[k, 0], axes[k2, 1] - axes[k, 1]
            ee = ex * ex + ey * ey
            t = ((yu - axes[k, 0]) * ex + (yv - axes[k, 1]) * ey) / ee if ee > 0 else 0.0
            t = min(max(t, 0.0), 1.0)
            cu, cv = axes[k, 0] + t * ex, axes[k, 1] + t * ey
            d = (cu - yu) ** 2 + (cv - yv) ** 2
            if d < best:
                best, bu, bv = d, cu, cv
        return (f[3] * bu + f[6] * bv, f[4] * bu + f[7] * bv, f[5] * bu + f[8] * bv)
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
    elif code == ELLIPSE:  # in the local xy plane; the local z (off-plane) part is dropped
        sx, sy = f[12], f[13]
        if _ellipsoid_inside(u, v, 0.0, sx, sy, 0.0):
            return x, y, z
        u, v, w = _ellipsoid_local(u, v, 0.0, sx * sx, sy * sy, 0.0, 32)
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


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _long_cover(x, y, z):  # pragma: no cover - compiled
    """The same rotation's point on the other cover, v (1 - 2 pi / |v|); (0, 0, 0) at the origin."""
    n = math.sqrt(x * x + y * y + z * z)
    k = 1.0 - TWO_PI / n if n > 1e-12 else 0.0
    return x * k, y * k, z * k


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _nearer(x, y, z, hx, hy, hz, x2, y2, z2, h2x, h2y, h2z):  # pragma: no cover - compiled
    """The (point, projection) pair with the shorter projection distance (the first on ties)."""
    if (h2x - x2) ** 2 + (h2y - y2) ** 2 + (h2z - z2) ** 2 < (hx - x) ** 2 + (hy - y) ** 2 + (hz - z) ** 2:
        return x2, y2, z2, h2x, h2y, h2z
    return x, y, z, hx, hy, hz


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _soften(ox, oy, oz, px, py, pz, falloff, radius):  # pragma: no cover - compiled
    dx, dy, dz = ox - px, oy - py, oz - pz
    d = math.sqrt(dx * dx + dy * dy + dz * dz)
    if d > 1e-5:
        s = math.tanh(falloff * d) * radius / d
        return px + dx * s, py + dy * s, pz + dz * s
    return px, py, pz


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _log2(w, x, y, z):  # pragma: no cover - compiled
    n = math.sqrt(x * x + y * y + z * z)
    s = 2.0 * math.atan2(n, w) / n if n > 1e-8 else 2.0
    return x * s, y * s, z * s


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _exp2(x, y, z):  # pragma: no cover - compiled
    hx, hy, hz = 0.5 * x, 0.5 * y, 0.5 * z
    a = math.sqrt(hx * hx + hy * hy + hz * hz)
    s = math.sin(a) / a if a > 1e-8 else 1.0 - a * a / 6.0
    return math.cos(a), hx * s, hy * s, hz * s


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _swing_twist(w, x, y, z, tax, tay, taz):  # pragma: no cover - compiled
    """Swing and twist (each on its short cover) of a rotation about the unit axis t:
    twist = normalize(w, (v.t) t), swing = r conj(twist); (r, identity) when the twist is undefined."""
    d = x * tax + y * tay + z * taz
    tw, tx, ty, tz = w, d * tax, d * tay, d * taz
    tn = math.sqrt(tw * tw + tx * tx + ty * ty + tz * tz)
    if tn > 1e-12:
        tw, tx, ty, tz = tw / tn, tx / tn, ty / tn, tz / tn
    else:
        tw, tx, ty, tz = 1.0, 0.0, 0.0, 0.0
    sw, sx, sy, sz = _qmul(w, x, y, z, tw, -tx, -ty, -tz)
    if sw < 0.0:
        sw, sx, sy, sz = -sw, -sx, -sy, -sz
    if tw < 0.0:
        tw, tx, ty, tz = -tw, -tx, -ty, -tz
    return sw, sx, sy, sz, tw, tx, ty, tz


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
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
    from .model import twist_interval

    if not limit.swing_twist:
        return 0, not limit.reference_quirks, (0.0, 0.0), pack_shape(limit.shape), EMPTY_SHAPE
    if limit.reference_quirks:
        return 2, False, (0.0, 0.0), pack_shape(limit.swing), pack_shape(limit.twist)
    # swing points lie in the plane perpendicular to the twist axis and twist points on the axis,
    # so each part is limited by its section: the composed rotation then decomposes back into
    # the same parts (projection is idempotent)
    return (1, True, twist_interval(limit.twist, limit.twist_axis),
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
        from .phased import project_phased  # imports this module

        project_phased(flat, ref, axis, mode, covers, soften, a, twist, out, hard if want_hard else None)
        return out.reshape(q.shape), (hard.reshape(q.shape) if want_hard else None)
    soft_on = soften is not None
    falloff, radius = (float(soften[0]), float(soften[1])) if soft_on else (0.0, 0.0)
    _fitted_kernel(flat, ref, axis, mode, covers, soft_on, want_hard, falloff, radius, twist[0], twist[1],
                   *a, *b, out, hard)
    return out.reshape(q.shape), (hard.reshape(q.shape) if want_hard else None)

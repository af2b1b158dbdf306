"""Scalar pieces of the compiled limit step, shared by :mod:`.fused` and :mod:`.phased`: the
projection of one limit-space point onto a packed shape, covers, softening, the exponential and
logarithm maps and swing-twist of one rotation."""

from __future__ import annotations

import math

import numba
from numba.core import cgutils
from numba.extending import intrinsic

from ..ellipsoid import _ellipsoid_inside, _ellipsoid_local
from ..kdop import _kdop_brute_local, _kdop_exact_local
from .codes import BOX, ELLIPSE, ELLIPSOID, KDOP_EXACT, POLYGON, SLABS

TWO_PI = 2.0 * math.pi


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

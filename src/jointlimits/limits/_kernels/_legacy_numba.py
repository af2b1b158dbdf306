"""LEGACY numba copy of the per-joint step, kept only for ``jointlimits.ik.ccd`` (whose own numba
kernels call it) until that module moves to the C++ core (issue #10). Nothing in
``jointlimits.limits`` imports it: the limits run on ``jointlimits._core`` (cpp/include/jointlimits/
step.hpp). Delete this file once ccd.py no longer imports ``fused._fitted_kernel``."""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit
from numba.core import cgutils
from numba.extending import intrinsic

from .codes import BOX, ELLIPSE, ELLIPSOID, KDOP_EXACT, POLYGON, SLABS

@njit(cache=True, fastmath=False)
def _ellipsoid_local(u, v, w, ssx, ssy, ssz, iterations):
    """Closest point to (u, v, w) on the ellipsoid with squared radii (ssx, ssy, ssz).

    The closest point is ``x_i = p_i ss_i / (ss_i + h)`` where ``h >= 0`` solves
    ``S(h) = sum ss_i p_i^2 / (ss_i + h)^2 = 1``.  Newton's method is applied to
    ``S(h)^(-1/2) = 1`` (exactly linear in ``h`` for a sphere, nearly so otherwise, so it
    converges in a few steps), started at a lower bound of the root so that the iterates
    increase monotonically.  Axes with ``ss_i == 0`` contribute nothing and map to 0.
    If ``S(0) <= 1`` (inside) ``h = 0``, i.e. the point is returned (up to rounding).
    """
    s0 = 0.0
    if ssx > 0.0:
        s0 += u * u / ssx
    if ssy > 0.0:
        s0 += v * v / ssy
    if ssz > 0.0:
        s0 += w * w / ssz
    h = 0.0
    if s0 > 1.0:
        # lower bounds of the root: every term of S is <= 1, and ss_i + h <= max(ss) + h
        m = ssx
        if ssy > m:
            m = ssy
        if ssz > m:
            m = ssz
        lo = ssx
        if ssy > 0.0 and (ssy < lo or lo == 0.0):
            lo = ssy
        if ssz > 0.0 and (ssz < lo or lo == 0.0):
            lo = ssz
        b = math.sqrt(ssx * u * u + ssy * v * v + ssz * w * w) - m
        if b > h:
            h = b
        b = math.sqrt(ssx) * abs(u) - ssx
        if b > h:
            h = b
        b = math.sqrt(ssy) * abs(v) - ssy
        if b > h:
            h = b
        b = math.sqrt(ssz) * abs(w) - ssz
        if b > h:
            h = b
        for _ in range(iterations):
            S = 0.0
            D = 0.0
            if ssx > 0.0:
                t = 1.0 / (ssx + h)
                a = u * t
                g = ssx * a * a
                S += g
                D += g * t
            if ssy > 0.0:
                t = 1.0 / (ssy + h)
                a = v * t
                g = ssy * a * a
                S += g
                D += g * t
            if ssz > 0.0:
                t = 1.0 / (ssz + h)
                a = w * t
                g = ssz * a * a
                S += g
                D += g * t
            if S <= 1.0 + 1e-15 or D <= 0.0:
                break
            step = (S * math.sqrt(S) - S) / D
            if not (step > 0.0):
                break
            h += step
            if step <= 1e-9 * (h + lo):
                # quadratic convergence: the next step would be below rounding
                break
    ox = u * ssx / (ssx + h) if ssx + h > 0.0 else 0.0
    oy = v * ssy / (ssy + h) if ssy + h > 0.0 else 0.0
    oz = w * ssz / (ssz + h) if ssz + h > 0.0 else 0.0
    return ox, oy, oz


@njit(cache=True, fastmath=False)
def _ellipsoid_inside(u, v, w, sx, sy, sz):
    """``|local / scale| <= 1`` with zero radii handled (0/0 -> 0, x/0 -> outside)."""
    acc = 0.0
    if sx > 0.0:
        a = u / sx
        acc += a * a
    elif u != 0.0:
        return False
    if sy > 0.0:
        a = v / sy
        acc += a * a
    elif v != 0.0:
        return False
    if sz > 0.0:
        a = w / sz
        acc += a * a
    elif w != 0.0:
        return False
    return acc <= 1.0


@njit(cache=True, fastmath=False)
def _solve_active(G, act, na, gx, gy, gz, r):
    """Split g into z (orthogonal to the active normals) and r (g = z + N r).

    Returns (zx, zy, zz, ok); ok is False when the active normals are (numerically)
    dependent.
    """
    if na == 0:
        return gx, gy, gz, True
    if na == 1:
        a = act[0]
        n0 = G[a, 0]
        n1 = G[a, 1]
        n2 = G[a, 2]
        nn = n0 * n0 + n1 * n1 + n2 * n2
        c = (n0 * gx + n1 * gy + n2 * gz) / nn
        r[0] = c
        return gx - c * n0, gy - c * n1, gz - c * n2, True
    if na == 2:
        a = act[0]
        b = act[1]
        a0, a1, a2 = G[a, 0], G[a, 1], G[a, 2]
        b0, b1, b2 = G[b, 0], G[b, 1], G[b, 2]
        m00 = a0 * a0 + a1 * a1 + a2 * a2
        m01 = a0 * b0 + a1 * b1 + a2 * b2
        m11 = b0 * b0 + b1 * b1 + b2 * b2
        det = m00 * m11 - m01 * m01
        if det <= 1e-14 * m00 * m11:
            return 0.0, 0.0, 0.0, False
        ca = a0 * gx + a1 * gy + a2 * gz
        cb = b0 * gx + b1 * gy + b2 * gz
        ra = (m11 * ca - m01 * cb) / det
        rb = (m00 * cb - m01 * ca) / det
        r[0] = ra
        r[1] = rb
        return (gx - ra * a0 - rb * b0, gy - ra * a1 - rb * b1, gz - ra * a2 - rb * b2, True)
    # na == 3: N r = g, z = 0 (Cramer's rule with columns n_a, n_b, n_c)
    a = act[0]
    b = act[1]
    c = act[2]
    a0, a1, a2 = G[a, 0], G[a, 1], G[a, 2]
    b0, b1, b2 = G[b, 0], G[b, 1], G[b, 2]
    c0, c1, c2 = G[c, 0], G[c, 1], G[c, 2]
    # cross products
    bc0 = b1 * c2 - b2 * c1
    bc1 = b2 * c0 - b0 * c2
    bc2 = b0 * c1 - b1 * c0
    det = a0 * bc0 + a1 * bc1 + a2 * bc2
    if abs(det) <= 1e-12:
        return 0.0, 0.0, 0.0, False
    ca0 = c1 * a2 - c2 * a1
    ca1 = c2 * a0 - c0 * a2
    ca2 = c0 * a1 - c1 * a0
    ab0 = a1 * b2 - a2 * b1
    ab1 = a2 * b0 - a0 * b2
    ab2 = a0 * b1 - a1 * b0
    r[0] = (gx * bc0 + gy * bc1 + gz * bc2) / det
    r[1] = (gx * ca0 + gy * ca1 + gz * ca2) / det
    r[2] = (gx * ab0 + gy * ab1 + gz * ab2) / det
    return 0.0, 0.0, 0.0, True


@njit(cache=True, fastmath=False)
def _kdop_exact_local(u, v, w, G, bnd, tol, max_iter):
    """Euclidean projection of (u, v, w) onto {x : G x <= bnd} (rows of G have unit norm).

    Returns (x, y, z, status): status 0 ok, 1 infeasible, 2 did not converge.
    """
    m = G.shape[0]
    act = np.empty(3, dtype=np.int64)
    mult = np.zeros(3)
    r = np.zeros(3)
    na = 0
    x = u
    y = v
    z = w
    it = 0
    while True:
        # most violated constraint not in the active set
        q = -1
        worst = tol
        for j in range(m):
            s = G[j, 0] * x + G[j, 1] * y + G[j, 2] * z - bnd[j]
            if s > worst:
                skip = False
                for t in range(na):
                    if act[t] == j:
                        skip = True
                if not skip:
                    worst = s
                    q = j
        if q < 0:
            return x, y, z, 0
        gx = G[q, 0]
        gy = G[q, 1]
        gz = G[q, 2]
        uq = 0.0
        while True:
            it += 1
            if it > max_iter:
                return x, y, z, 2
            zx, zy, zz, ok = _solve_active(G, act, na, gx, gy, gz, r)
            if not ok:
                return x, y, z, 2
            z2 = zx * zx + zy * zy + zz * zz
            viol = gx * x + gy * y + gz * z - bnd[q]
            t2 = np.inf
            if z2 > 1e-20:
                t2 = viol / z2
                if t2 < 0.0:
                    t2 = 0.0
            t1 = np.inf
            drop = -1
            for t in range(na):
                if r[t] > 1e-14:
                    cand = mult[t] / r[t]
                    if cand < t1:
                        t1 = cand
                        drop = t
            if t1 == np.inf and t2 == np.inf:
                return x, y, z, 1
            if t2 <= t1:
                x -= t2 * zx
                y -= t2 * zy
                z -= t2 * zz
                for t in range(na):
                    mult[t] -= t2 * r[t]
                uq += t2
                act[na] = q
                mult[na] = uq
                na += 1
                break
            # partial step, then drop constraint `drop`
            if z2 > 1e-20:
                x -= t1 * zx
                y -= t1 * zy
                z -= t1 * zz
            for t in range(na):
                mult[t] -= t1 * r[t]
            uq += t1
            for t in range(drop, na - 1):
                act[t] = act[t + 1]
                mult[t] = mult[t + 1]
            na -= 1


@njit(cache=True, fastmath=False)
def _kdop_brute_local(u, v, w, G, bnd, tol):
    """Exact projection by enumerating every active set of size <= 3 (slow fallback)."""
    m = G.shape[0]
    best = np.inf
    bx = u
    by = v
    bz = w
    feas = True
    for j in range(m):
        if G[j, 0] * u + G[j, 1] * v + G[j, 2] * w - bnd[j] > tol:
            feas = False
            break
    if feas:
        return u, v, w, 0
    act = np.empty(3, dtype=np.int64)
    for a in range(m):
        for b in range(a, m):
            for c in range(b, m):
                if a == b and b != c:
                    continue
                if a == b:
                    na = 1
                    act[0] = a
                elif b == c:
                    na = 2
                    act[0] = a
                    act[1] = b
                else:
                    na = 3
                    act[0] = a
                    act[1] = b
                    act[2] = c
                # projection of p onto the planes {N^T x = b_act}: x = p - N lam with
                # (N^T N) lam = N^T p - b_act (rows of G are unit vectors)
                ok = True
                lam0 = 0.0
                lam1 = 0.0
                if na == 1:
                    e0 = G[a, 0] * u + G[a, 1] * v + G[a, 2] * w - bnd[a]
                    lam0 = e0
                    x = u - lam0 * G[a, 0]
                    y = v - lam0 * G[a, 1]
                    z = w - lam0 * G[a, 2]
                elif na == 2:
                    m00 = 1.0
                    m11 = 1.0
                    m01 = G[a, 0] * G[b, 0] + G[a, 1] * G[b, 1] + G[a, 2] * G[b, 2]
                    det = m00 * m11 - m01 * m01
                    if det <= 1e-12:
                        ok = False
                        x = y = z = 0.0
                    else:
                        e0 = G[a, 0] * u + G[a, 1] * v + G[a, 2] * w - bnd[a]
                        e1 = G[b, 0] * u + G[b, 1] * v + G[b, 2] * w - bnd[b]
                        lam0 = (m11 * e0 - m01 * e1) / det
                        lam1 = (m00 * e1 - m01 * e0) / det
                        x = u - lam0 * G[a, 0] - lam1 * G[b, 0]
                        y = v - lam0 * G[a, 1] - lam1 * G[b, 1]
                        z = w - lam0 * G[a, 2] - lam1 * G[b, 2]
                else:
                    # vertex: solve N^T x = b (rows G[a], G[b], G[c])
                    a0, a1, a2 = G[a, 0], G[a, 1], G[a, 2]
                    b0, b1, b2 = G[b, 0], G[b, 1], G[b, 2]
                    c0, c1, c2 = G[c, 0], G[c, 1], G[c, 2]
                    bc0 = b1 * c2 - b2 * c1
                    bc1 = b2 * c0 - b0 * c2
                    bc2 = b0 * c1 - b1 * c0
                    det = a0 * bc0 + a1 * bc1 + a2 * bc2
                    if abs(det) <= 1e-9:
                        ok = False
                        x = y = z = 0.0
                    else:
                        ca0 = c1 * a2 - c2 * a1
                        ca1 = c2 * a0 - c0 * a2
                        ca2 = c0 * a1 - c1 * a0
                        ab0 = a1 * b2 - a2 * b1
                        ab1 = a2 * b0 - a0 * b2
                        ab2 = a0 * b1 - a1 * b0
                        x = (bnd[a] * bc0 + bnd[b] * ca0 + bnd[c] * ab0) / det
                        y = (bnd[a] * bc1 + bnd[b] * ca1 + bnd[c] * ab1) / det
                        z = (bnd[a] * bc2 + bnd[b] * ca2 + bnd[c] * ab2) / det
                if not ok:
                    continue
                d2 = (x - u) ** 2 + (y - v) ** 2 + (z - w) ** 2
                if d2 >= best:
                    continue
                feas = True
                for j in range(m):
                    if G[j, 0] * x + G[j, 1] * y + G[j, 2] * z - bnd[j] > tol:
                        feas = False
                        break
                if feas:
                    best = d2
                    bx = x
                    by = y
                    bz = z
    if best == np.inf:
        return u, v, w, 1
    return bx, by, bz, 0


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



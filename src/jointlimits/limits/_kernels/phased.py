"""The per-joint limit step for large batches, in phases around numpy's vectorised ufuncs.

The scalar step (:mod:`.fused`) spends most of its time in ``atan2``, ``tanh``, ``sin``
and ``cos`` called once per rotation. Here the batch goes through in chunks: compiled loops do
the quaternion algebra and the projection, and the transcendental functions run between them as
numpy ufuncs over whole chunks, which numpy evaluates with SIMD (SVML kernels on AVX-512). The
results equal the scalar step's up to rounding (a few 1e-16); swing-twist limits with the
reference's quirks (mode 2) stay on the scalar step.

The exponential map uses the half-angle tangent: for a rotation vector ``s`` with
``t = tan(|s| / 4)``, ``exp(s / 2) = ((1 - t^2) / (1 + t^2), s t / ((1 + t^2) |s| / 2))``, exact
for every angle the step produces (up to 2 pi plus a softening radius).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .scalar import _long_cover, _nearer, _project_point, _qmul, _swing_twist, _unowned

__all__ = ["project_phased", "CHUNK"]

TWO_PI = 2.0 * math.pi
CHUNK = 2048  # rows per chunk: the temporaries of one chunk (~0.7 MB) stay in the L2 cache


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _phase_parts(q, ref, axis, swing_twist, X, N, W):  # pragma: no cover - compiled
    """Relative rotation (short cover) per row, or its swing (part 0) and twist (part 1): vector
    parts X, their norms N and scalar parts W, for atan2(N, W)."""
    rw, rx, ry, rz = ref[0], ref[1], ref[2], ref[3]
    tax, tay, taz = axis[0], axis[1], axis[2]
    for i in range(q.shape[0]):
        w, x, y, z = _qmul(rw, -rx, -ry, -rz, q[i, 0], q[i, 1], q[i, 2], q[i, 3])
        if w < 0.0:
            w, x, y, z = -w, -x, -y, -z
        if swing_twist:
            w, x, y, z, tw, tx, ty, tz = _swing_twist(w, x, y, z, tax, tay, taz)
            X[1, i, 0], X[1, i, 1], X[1, i, 2] = tx, ty, tz
            N[1, i] = math.sqrt(tx * tx + ty * ty + tz * tz)
            W[1, i] = tw
        X[0, i, 0], X[0, i, 1], X[0, i, 2] = x, y, z
        N[0, i] = math.sqrt(x * x + y * y + z * z)
        W[0, i] = w


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _phase_project(X, N, TH, swing_twist, covers, axis, tlo, thi, code, f, axes, mins, maxs, G, bnd,
                   V, H, D, inside):  # pragma: no cover - compiled
    """Limit-space points (V, chosen cover), their projections (H), the distances |V - H| (D) and
    whether the row is left unchanged. The twist is limited on its axis by [tlo, thi]."""
    f, axes, mins, maxs, G, bnd = _unowned(f), _unowned(axes), _unowned(mins), _unowned(maxs), _unowned(G), _unowned(bnd)
    long_cover = covers and f[15] > math.pi
    twist_cover = covers and max(-tlo, thi) > math.pi
    tax, tay, taz = axis[0], axis[1], axis[2]
    for i in range(X.shape[1]):
        n = N[0, i]
        s = 2.0 * TH[0, i] / n if n > 1e-8 else 2.0
        vx, vy, vz = X[0, i, 0] * s, X[0, i, 1] * s, X[0, i, 2] * s
        hx, hy, hz = _project_point(vx, vy, vz, code, f, axes, mins, maxs, G, bnd)
        if long_cover:
            x2, y2, z2 = _long_cover(vx, vy, vz)
            h2x, h2y, h2z = _project_point(x2, y2, z2, code, f, axes, mins, maxs, G, bnd)
            vx, vy, vz, hx, hy, hz = _nearer(vx, vy, vz, hx, hy, hz, x2, y2, z2, h2x, h2y, h2z)
        V[0, i, 0], V[0, i, 1], V[0, i, 2] = vx, vy, vz
        H[0, i, 0], H[0, i, 1], H[0, i, 2] = hx, hy, hz
        D[0, i] = math.sqrt((vx - hx) ** 2 + (vy - hy) ** 2 + (vz - hz) ** 2)
        same = hx == vx and hy == vy and hz == vz
        if swing_twist:
            n = N[1, i]
            s = 2.0 * TH[1, i] / n if n > 1e-8 else 2.0
            ux, uy, uz = X[1, i, 0] * s, X[1, i, 1] * s, X[1, i, 2] * s
            t = ux * tax + uy * tay + uz * taz
            p = min(max(t, tlo), thi)
            if twist_cover:
                t2 = t - TWO_PI if t >= 0 else t + TWO_PI
                p2 = min(max(t2, tlo), thi)
                if abs(p2 - t2) < abs(p - t):
                    t, p = t2, p2
            gx, gy, gz = p * tax, p * tay, p * taz
            V[1, i, 0], V[1, i, 1], V[1, i, 2] = t * tax, t * tay, t * taz
            H[1, i, 0], H[1, i, 1], H[1, i, 2] = gx, gy, gz
            D[1, i] = abs(p - t)
            same = same and abs(gx - ux) + abs(gy - uy) + abs(gz - uz) <= 1e-15 * (1.0 + abs(ux) + abs(uy) + abs(uz))
        inside[i] = same


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _phase_soften(V, H, D, T, soft_on, want_hard, radius, S, A):  # pragma: no cover - compiled
    """Softened points S (parts 0..P-1; then the hard points if ``want_hard``) and the quarter
    angles A = |S| / 4 for tan. T holds tanh(falloff D)."""
    P = V.shape[0]
    for p in range(P):
        for i in range(V.shape[1]):
            hx, hy, hz = H[p, i, 0], H[p, i, 1], H[p, i, 2]
            sx, sy, sz = hx, hy, hz
            d = D[p, i]
            if soft_on and d > 1e-5:
                k = T[p, i] * radius / d
                sx += (V[p, i, 0] - hx) * k
                sy += (V[p, i, 1] - hy) * k
                sz += (V[p, i, 2] - hz) * k
            S[p, i, 0], S[p, i, 1], S[p, i, 2] = sx, sy, sz
            A[p, i] = 0.25 * math.sqrt(sx * sx + sy * sy + sz * sz)
            if want_hard:
                S[P + p, i, 0], S[P + p, i, 1], S[P + p, i, 2] = hx, hy, hz
                A[P + p, i] = 0.25 * math.sqrt(hx * hx + hy * hy + hz * hz)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _exp_tan(S, A, TT, p, i):  # pragma: no cover - compiled
    """exp(S / 2) from t = tan(|S| / 4) (see the module docstring)."""
    t, a = TT[p, i], A[p, i]
    c = 1.0 / (1.0 + t * t)
    k = t * c / (2.0 * a) if a > 1e-8 else 0.5
    return (1.0 - t * t) * c, S[p, i, 0] * k, S[p, i, 1] * k, S[p, i, 2] * k


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _phase_compose(q, ref, parts, want_hard, inside, S, A, TT, out, hard):  # pragma: no cover - compiled
    """ref * exp(part 0) [* exp(part 1)], on the caller's cover; rows inside are copied."""
    rw, rx, ry, rz = ref[0], ref[1], ref[2], ref[3]
    for i in range(q.shape[0]):
        qw, qx, qy, qz = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        if inside[i]:
            out[i, 0], out[i, 1], out[i, 2], out[i, 3] = qw, qx, qy, qz
            if want_hard:
                hard[i, 0], hard[i, 1], hard[i, 2], hard[i, 3] = qw, qx, qy, qz
            continue
        for h in range(2 if want_hard else 1):
            aw, ax, ay, az = _exp_tan(S, A, TT, h * parts, i)
            if parts == 2:
                bw, bx, by, bz = _exp_tan(S, A, TT, h * parts + 1, i)
                aw, ax, ay, az = _qmul(aw, ax, ay, az, bw, bx, by, bz)
            ow, ox, oy, oz = _qmul(rw, rx, ry, rz, aw, ax, ay, az)
            if ow * qw + ox * qx + oy * qy + oz * qz < 0.0:
                ow, ox, oy, oz = -ow, -ox, -oy, -oz
            dst = out if h == 0 else hard
            dst[i, 0], dst[i, 1], dst[i, 2], dst[i, 3] = ow, ox, oy, oz


class _Buffers:
    """Temporaries for one chunk of ``rows`` rows with ``parts`` limit-space parts."""

    def __init__(self, parts: int, rows: int, want_hard: bool):
        self.X = np.empty((parts, rows, 3))
        self.N = np.empty((parts, rows))
        self.W = np.empty((parts, rows))
        self.TH = np.empty((parts, rows))
        self.V = np.empty((parts, rows, 3))
        self.H = np.empty((parts, rows, 3))
        self.D = np.empty((parts, rows))
        self.T = np.empty((parts, rows))
        self.inside = np.empty(rows, np.bool_)
        total = parts * (2 if want_hard else 1)
        self.S = np.empty((total, rows, 3))
        self.A = np.empty((total, rows))
        self.TT = np.empty((total, rows))


def project_phased(flat: np.ndarray, ref: np.ndarray, axis: np.ndarray, mode: int, covers: bool,
                   soften: tuple[float, float] | None, a: tuple, twist: tuple[float, float],
                   out: np.ndarray, hard: np.ndarray | None) -> None:
    """Write the limited rotations of ``flat`` ``[N, 4]`` (C-contiguous float64) into ``out`` (and
    the unsoftened ones into ``hard`` if given) for a packed limit of mode 0 or 1."""
    if mode not in (0, 1):
        raise ValueError("the phased step handles modes 0 and 1 (use fused._fitted_kernel)")
    swing_twist = mode == 1
    parts = 2 if swing_twist else 1
    soft_on = soften is not None
    falloff, radius = (float(soften[0]), float(soften[1])) if soft_on else (0.0, 0.0)
    want_hard = hard is not None and soft_on
    n = flat.shape[0]
    buf = None
    for s0 in range(0, n, CHUNK):
        rows = min(CHUNK, n - s0)
        if buf is None or buf.N.shape[1] != rows:
            buf = _Buffers(parts, rows, want_hard)
        q = flat[s0:s0 + rows]
        _phase_parts(q, ref, axis, swing_twist, buf.X, buf.N, buf.W)
        np.arctan2(buf.N, buf.W, out=buf.TH)
        _phase_project(buf.X, buf.N, buf.TH, swing_twist, covers, axis, twist[0], twist[1], *a,
                       buf.V, buf.H, buf.D, buf.inside)
        if soft_on:
            np.multiply(buf.D, falloff, out=buf.T)
            np.tanh(buf.T, out=buf.T)
        _phase_soften(buf.V, buf.H, buf.D, buf.T, soft_on, want_hard, radius, buf.S, buf.A)
        np.tan(buf.A, out=buf.TT)
        _phase_compose(q, ref, parts, want_hard, buf.inside, buf.S, buf.A, buf.TT, out[s0:s0 + rows],
                       hard[s0:s0 + rows] if want_hard else out[:0])
        if hard is not None and not want_hard:
            hard[s0:s0 + rows] = out[s0:s0 + rows]

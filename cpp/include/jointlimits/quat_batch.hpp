// Batched quaternion kernels under jointlimits.motion.quat: n contiguous (w, x, y, z) rows in,
// n rows out, in the operation order of the numpy expressions they replace (same bits where no
// transcendental function is involved). Kernels that divide by a norm return false when a norm is
// outside [1e-150, 1e150] or not finite: the caller then takes the scaled numpy path.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace jointlimits::qb {

constexpr double kSafeLo = 1e-150, kSafeHi = 1e150;
inline bool safe(double n) { return n > kSafeLo && n < kSafeHi; }

inline void mul(const double* a, const double* b, double* o, std::size_t n) {
    for (std::size_t r = 0; r < n; ++r, a += 4, b += 4, o += 4) {
        const double aw = a[0], ax = a[1], ay = a[2], az = a[3], bw = b[0], bx = b[1], by = b[2], bz = b[3];
        o[0] = aw * bw - ax * bx - ay * by - az * bz;
        o[1] = aw * bx + ax * bw + ay * bz - az * by;
        o[2] = aw * by - ax * bz + ay * bw + az * bx;
        o[3] = aw * bz + ax * by - ay * bx + az * bw;
    }
}

inline void inv(const double* q, double* o, std::size_t n) {
    for (std::size_t r = 0; r < n; ++r, q += 4, o += 4) {
        o[0] = q[0];
        o[1] = -q[1];
        o[2] = -q[2];
        o[3] = -q[3];
    }
}

/// v + w t + u x t, t = 2 u x v (np.cross's component order)
inline void mul_vec(const double* q, const double* v, double* o, std::size_t n) {
    for (std::size_t r = 0; r < n; ++r, q += 4, v += 3, o += 3) {
        const double w = q[0], ux = q[1], uy = q[2], uz = q[3], vx = v[0], vy = v[1], vz = v[2];
        const double tx = 2.0 * (uy * vz - uz * vy), ty = 2.0 * (uz * vx - ux * vz), tz = 2.0 * (ux * vy - uy * vx);
        o[0] = vx + w * tx + (uy * tz - uz * ty);
        o[1] = vy + w * ty + (uz * tx - ux * tz);
        o[2] = vz + w * tz + (ux * ty - uy * tx);
    }
}

inline void to_matrix(const double* q, double* m, std::size_t n) {
    for (std::size_t r = 0; r < n; ++r, q += 4, m += 9) {
        const double w = q[0], x = q[1], y = q[2], z = q[3];
        const double xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z;
        const double wx = w * x, wy = w * y, wz = w * z;
        m[0] = 1 - 2 * (yy + zz);
        m[1] = 2 * (xy - wz);
        m[2] = 2 * (xz + wy);
        m[3] = 2 * (xy + wz);
        m[4] = 1 - 2 * (xx + zz);
        m[5] = 2 * (yz - wx);
        m[6] = 2 * (xz - wy);
        m[7] = 2 * (yz + wx);
        m[8] = 1 - 2 * (xx + yy);
    }
}

inline double norm4(const double* q) { return std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]); }
inline double norm3(double x, double y, double z) { return std::sqrt(x * x + y * y + z * z); }

/// Shepperd's method: the candidate row of the largest of (trace, m00, m11, m22) (the first on
/// ties), normalised, on the w >= 0 cover.
inline bool from_matrix(const double* m, double* o, std::size_t n) {
    bool ok = true;
    for (std::size_t r = 0; r < n; ++r, m += 9, o += 4) {
        const double m00 = m[0], m01 = m[1], m02 = m[2], m10 = m[3], m11 = m[4], m12 = m[5], m20 = m[6], m21 = m[7],
                     m22 = m[8];
        const double tr = m00 + m11 + m22;
        int k = 0;
        double best = tr;
        if (m00 > best) k = 1, best = m00;
        if (m11 > best) k = 2, best = m11;
        if (m22 > best) k = 3;
        double q[4];
        switch (k) {
            case 0: q[0] = 1 + tr, q[1] = m21 - m12, q[2] = m02 - m20, q[3] = m10 - m01; break;
            case 1: q[0] = m21 - m12, q[1] = 1 + m00 - m11 - m22, q[2] = m01 + m10, q[3] = m02 + m20; break;
            case 2: q[0] = m02 - m20, q[1] = m01 + m10, q[2] = 1 - m00 + m11 - m22, q[3] = m12 + m21; break;
            default: q[0] = m10 - m01, q[1] = m02 + m20, q[2] = m12 + m21, q[3] = 1 - m00 - m11 + m22; break;
        }
        const double nn = norm4(q);
        ok &= safe(nn);
        const double s = q[0] / nn < 0.0 ? -1.0 : 1.0;
        for (int c = 0; c < 4; ++c) o[c] = s * (q[c] / nn);
    }
    return ok;
}

inline bool normalize(const double* q, double* o, std::size_t n) {
    bool ok = true;
    for (std::size_t r = 0; r < n; ++r, q += 4, o += 4) {
        const double nn = norm4(q);
        ok &= safe(nn);
        for (int c = 0; c < 4; ++c) o[c] = q[c] / nn;
    }
    return ok;
}

/// 2 log(q) (no cover chosen), times scale: v 2 atan2(|v|, w) / |v|, or 2 v where |v| <= eps.
inline bool log2(const double* q, double* o, std::size_t n, double eps, double scale) {
    bool ok = true;
    for (std::size_t r = 0; r < n; ++r, q += 4, o += 3) {
        const double nn = norm3(q[1], q[2], q[3]);
        ok &= nn < kSafeHi;  // below the safe range the norm is <= eps either way
        const double s = nn > eps ? 2.0 * std::atan2(nn, q[0]) / nn : 2.0;
        o[0] = (q[1] * s) * scale;
        o[1] = (q[2] * s) * scale;
        o[2] = (q[3] * s) * scale;
    }
    return ok;
}

/// exp(h) with h = 0.5 (pre v): (cos |h|, h sin|h| / |h|), sin(a)/a as numpy's sinc below 1.
inline bool exp2(const double* v, double* o, std::size_t n, double pre) {
    constexpr double pi = 3.141592653589793;
    bool ok = true;
    for (std::size_t r = 0; r < n; ++r, v += 3, o += 4) {
        const double hx = 0.5 * (pre * v[0]), hy = 0.5 * (pre * v[1]), hz = 0.5 * (pre * v[2]);
        const double a = norm3(hx, hy, hz);
        ok &= safe(a) || a == 0.0;
        double s;
        if (a >= 1.0) {
            s = std::sin(a) / a;
        } else {
            const double x = a / pi, y = pi * (x == 0.0 ? 1.0e-20 : x);
            s = std::sin(y) / y;
        }
        o[0] = std::cos(a);
        o[1] = hx * s;
        o[2] = hy * s;
        o[3] = hz * s;
    }
    return ok;
}

/// a exp(t log(|a^-1 b|)): shortest-path spherical interpolation; t has stride 0 or 1.
inline bool slerp(const double* a, const double* b, const double* t, std::size_t t_stride, double* o,
                  std::size_t n) {
    bool ok = true;
    for (std::size_t r = 0; r < n; ++r, a += 4, b += 4, t += t_stride, o += 4) {
        const double aw = a[0], ax = -a[1], ay = -a[2], az = -a[3], bw = b[0], bx = b[1], by = b[2], bz = b[3];
        double d[4] = {aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                       aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw};
        if (d[0] < 0.0)
            for (double& c : d) c = -c;
        double l[3], e[4];
        ok &= log2(d, l, 1, 1e-8, *t);
        ok &= exp2(l, e, 1, 1.0);
        mul(a, e, o, 1);
    }
    return ok;
}

/// sin and cos of d degrees. |d| < 2^52 finite: d is reduced exactly to r in [-45, 45] degrees
/// plus a quadrant (90 k is exact there, and so is d - 90 k), then r pi / 180 goes through Taylor
/// polynomials to the 17th (sin) and 18th (cos) power, whose truncation error on [-pi/4, pi/4]
/// is below 1e-17: within a few units in the last place of the libm values. Anything else: libm.
inline void sincos_degrees(double d, double& s, double& c) {
    if (!(std::abs(d) < 4503599627370496.0)) {
        const double x = d * (3.141592653589793 / 180.0);
        s = std::sin(x);
        c = std::cos(x);
        return;
    }
    const double k = std::nearbyint(d / 90.0);
    const double x = (d - 90.0 * k) * (3.141592653589793 / 180.0);
    const double z = x * x;
    // 1/n! for n = 3, 5, ..., 17 (sin) and 2, 4, ..., 18 (cos), in Horner form
    const double sp =
        -1.0 / 6 +
        z * (1.0 / 120 +
             z * (-1.0 / 5040 +
                  z * (1.0 / 362880 +
                       z * (-1.0 / 39916800 +
                            z * (1.0 / 6227020800.0 +
                                 z * (-1.0 / 1307674368000.0 + z * (1.0 / 355687428096000.0)))))));
    const double cp =
        1.0 / 24 +
        z * (-1.0 / 720 +
             z * (1.0 / 40320 +
                  z * (-1.0 / 3628800 +
                       z * (1.0 / 479001600 +
                            z * (-1.0 / 87178291200.0 +
                                 z * (1.0 / 20922789888000.0 + z * (-1.0 / 6402373705728000.0)))))));
    const double sx = x + x * z * sp;
    const double cx = 1.0 - 0.5 * z + z * z * cp;
    const int64_t q = static_cast<int64_t>(k) & 3;
    s = q == 0 ? sx : q == 1 ? cx : q == 2 ? -sx : -cx;
    c = q == 0 ? cx : q == 1 ? -sx : q == 2 ? -cx : sx;
}

/// R_i(a0) R_j(a1) R_k(a2) for three distinct axes (the closed form of from_euler_axes);
/// deg: angles in degrees (sines and cosines by sincos_degrees).
inline void from_euler3(const double* ang, int i, int j, int k, bool deg, double* o, std::size_t n) {
    const double eps = ((j - i + 3) % 3 == 1) ? 1.0 : -1.0;
    for (std::size_t r = 0; r < n; ++r, ang += 3, o += 4) {
        double cs[3], sn[3];
        if (deg) {
            for (int c = 0; c < 3; ++c) sincos_degrees(ang[c] * 0.5, sn[c], cs[c]);
        } else {
            for (int c = 0; c < 3; ++c) {
                cs[c] = std::cos(ang[c] * 0.5);
                sn[c] = std::sin(ang[c] * 0.5);
            }
        }
        const double c1 = cs[0], c2 = cs[1], c3 = cs[2], s1 = sn[0], s2 = sn[1], s3 = sn[2];
        const double w = c1 * c2, b = c1 * s2, cc = s1 * c2, d = s1 * s2;
        o[0] = w * c3 - eps * d * s3;
        o[1 + i] = cc * c3 + eps * b * s3;
        o[1 + j] = b * c3 - eps * cc * s3;
        o[1 + k] = w * s3 + eps * d * c3;
    }
}

/// Intrinsic Euler angles of the normalised rows for the axes i, j, k (distinct): the quaternion
/// method of Bernardes and Viollet (2022) as scipy's Rotation.as_euler runs it (middle angle in
/// [-pi/2, pi/2], third angle 0 at gimbal lock, the others in (-pi, pi]), times scale.
/// Returns the first row that is not finite or has zero length (n if none), or -2 if a norm is
/// outside the safe range (the caller then takes the scaled path).
inline int64_t to_euler(const double* qs, int i, int j, int k, double scale, double* o, std::size_t n) {
    constexpr double pi = 3.141592653589793;
    // scipy reverses the axes of an intrinsic sequence; its quaternion is (x, y, z, w)
    const int I = k, J = j, K = i;
    const double sign = static_cast<double>((I - J) * (J - K) * (K - I) / 2);
    for (std::size_t r = 0; r < n; ++r, qs += 4, o += 3) {
        const double w0 = qs[0], x0 = qs[1], y0 = qs[2], z0 = qs[3];
        if (!(std::isfinite(w0) && std::isfinite(x0) && std::isfinite(y0) && std::isfinite(z0)) ||
            (w0 == 0.0 && x0 == 0.0 && y0 == 0.0 && z0 == 0.0))
            return static_cast<int64_t>(r);
        const double nn = std::sqrt(w0 * w0 + x0 * x0 + y0 * y0 + z0 * z0);
        if (!safe(nn)) return -2;
        const double v[3] = {x0 / nn, y0 / nn, z0 / nn}, w = w0 / nn;
        const double a = w - v[J], b = v[I] + v[K] * sign, c = v[J] + w, d = v[K] * sign - v[I];
        // a, b, c, d are at most 2 in size (unit rows): plain square roots cannot overflow
        double ang[3] = {0.0, 2.0 * std::atan2(std::sqrt(c * c + d * d), std::sqrt(a * a + b * b)), 0.0};
        const double half_sum = std::atan2(b, a), half_diff = std::atan2(d, c);
        const bool case1 = std::abs(ang[1]) <= 1e-7, case2 = std::abs(ang[1] - pi) <= 1e-7;
        if (!case1 && !case2) {
            ang[2] = half_sum - half_diff;
            ang[0] = half_sum + half_diff;
        } else {
            ang[0] = case1 ? 2.0 * half_sum : 2.0 * half_diff;
        }
        ang[0] *= sign;
        ang[1] -= pi / 2;
        for (int c3 = 0; c3 < 3; ++c3) {
            const double y = ang[c3];  // into (-pi, pi], as scipy's compiled path wraps
            o[c3] = (y < -pi ? y + 2 * pi : y > pi ? y - 2 * pi : y) * scale;
        }
    }
    return static_cast<int64_t>(n);
}

}  // namespace jointlimits::qb

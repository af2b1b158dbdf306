// The per-joint limit step on compiled limits (CompiledLimit, built by FittedLimit.compiled()):
// relative to the reference, log, project, soften, exp; both covers for limits past pi;
// swing-twist (swing section + twist interval) and the reference-quirks mode.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "quat.hpp"
#include "compiled_shape.hpp"
#include "shapes.hpp"

// The whole-batch step loops get an AVX2 clone (see JL_TARGET_CLONES); the helpers they call are
// JL_INLINE, so the clone vectorises them four rows wide. AVX2 without FMA: the clone computes the
// same bits as the default code (no contracted multiply-adds).
#if defined(JL_TARGET_CLONES)
#define JL_AVX2_CLONES gnu::noinline, gnu::target_clones("avx2", "default")
#else
#define JL_AVX2_CLONES gnu::noinline
#endif

namespace jointlimits {

/// One joint's compiled limit. mode 0: one shape (a); 1: swing section (a) and twist interval
/// [tlo, thi] on the twist axis; 2: reference quirks (swing shape a and twist shape b in 3D).
struct CompiledLimit {
    enum Mode : int { kShape = 0, kSwingTwist = 1, kQuirks = 2 };
    int mode = kShape;
    bool covers = true;
    double tlo = 0.0, thi = 0.0;
    Quat ref{1.0, 0.0, 0.0, 0.0};
    Vec3 axis{1.0, 0.0, 0.0};
    CompiledShape a = empty_shape(), b = empty_shape();

    /// Throws ShapeError unless mode is one of Mode, the reference a unit quaternion, the twist
    /// axis a unit vector and the twist interval finite (its shapes are validated by make_shape).
    void validate() const {
        require(mode == kShape || mode == kSwingTwist || mode == kQuirks, "unknown limit mode");
        const double r[4] = {ref.w, ref.x, ref.y, ref.z}, t[3] = {axis.x, axis.y, axis.z}, tw[2] = {tlo, thi};
        require_finite(r, 4, 1.0 + 1e-6, "reference");
        require_finite(t, 3, 1.0 + 1e-6, "twist axis");
        require_finite(tw, 2, kMaxBound, "twist interval");
        require(std::abs(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3] - 1.0) <= 1e-6,
                "reference must be a unit quaternion");
        require(std::abs(t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0) <= 1e-6, "twist axis must be a unit vector");
    }
};

/// The signed angle about the unit axis ta of a twist rotation (w, x, y, z) with w >= 0 (its
/// vector part along ta): a scalar, where 2 log of the twist would be a vector along ta.
JL_INLINE double twist_angle(double w, double x, double y, double z, const Vec3& ta) {
    const double s = x * ta.x + y * ta.y + z * ta.z;
    return std::copysign(2.0 * fastmath::atan2_q1(std::abs(s), w), s);
}

/// The rotation by the angle t about the unit axis ta.
JL_INLINE Quat twist_exp(double t, const Vec3& ta) {
    double sn, cs;
    fastmath::sincos_pos(0.5 * std::abs(t), sn, cs);
    sn = std::copysign(sn, t);
    return {cs, sn * ta.x, sn * ta.y, sn * ta.z};
}

namespace detail {
inline Vec3 long_cover(const Vec3& p) {
    const double n = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
    const double k = n > 1e-12 ? 1.0 - kTwoPi / n : 0.0;
    return {p.x * k, p.y * k, p.z * k};
}
inline double sq(double a) { return a * a; }
/// Projects v (and its other cover when the shape reaches past pi), keeping the nearer pair.
template <class S>
inline void project_covers(Vec3& v, Vec3& h, const S& s, bool long_cover_on) {
    h = s.project(v);
    if (!long_cover_on) return;
    const Vec3 v2 = long_cover(v);
    if (s.reach() > 0.0) {  // the other cover cannot be nearer: skip its projection (same result)
        const double gap = std::sqrt(v2.x * v2.x + v2.y * v2.y + v2.z * v2.z) - s.reach();
        const double d1 = sq(h.x - v.x) + sq(h.y - v.y) + sq(h.z - v.z);
        if (gap > 0.0 && d1 * (1.0 + 1e-9) < gap * gap * (1.0 - 1e-9)) return;
    }
    const Vec3 h2 = s.project(v2);
    if (sq(h2.x - v2.x) + sq(h2.y - v2.y) + sq(h2.z - v2.z) < sq(h.x - v.x) + sq(h.y - v.y) + sq(h.z - v.z)) {
        v = v2;
        h = h2;
    }
}
inline Vec3 soften3(const Vec3& o, const Vec3& p, double falloff, double radius) {
    double r[3];
    soften_point(o.x, o.y, o.z, p.x, p.y, p.z, falloff, radius, 1e-5, r);
    return {r[0], r[1], r[2]};
}
inline void store(double* o, const Quat& q) { o[0] = q.w, o[1] = q.x, o[2] = q.y, o[3] = q.z; }
}  // namespace detail

namespace detail {
constexpr int kChunk = 64;  // rows per phase: the temporaries (~16 kB) stay in L1

/// v = 2 log(q) for rows of (x, y, z, w) in SoA form (short cover, w >= 0); vectorised.
JL_INLINE void log2_rows(int m, const double* X, const double* Y, const double* Z, const double* W, double* VX,
                      double* VY, double* VZ) {
    for (int i = 0; i < m; ++i) {
        const double n = std::sqrt(X[i] * X[i] + Y[i] * Y[i] + Z[i] * Z[i]);
        const double th = fastmath::atan2_q1(n, W[i]);
        const bool big = n > 1e-8;
        const double sd = 2.0 * th / (big ? n : 1.0);
        const double s = big ? sd : 2.0;
        VX[i] = X[i] * s, VY[i] = Y[i] * s, VZ[i] = Z[i] * s;
    }
}

/// exp(v / 2) of rows in SoA form; vectorised. Returns false if some |v| / 2 >= 1e6 (then redo
/// those rows with lim_exp2).
JL_INLINE bool exp2_rows(int m, const double* VX, const double* VY, const double* VZ, double* QW, double* QX,
                      double* QY, double* QZ) {
    for (int i = 0; i < m; ++i) {
        const double hx = 0.5 * VX[i], hy = 0.5 * VY[i], hz = 0.5 * VZ[i];
        const double a = std::sqrt(hx * hx + hy * hy + hz * hz);
        const bool small = a < 1e6;
        double sn, cs;
        fastmath::sincos_small(small ? a : 0.0, sn, cs);
        const bool big = a > 1e-8;
        const double s1 = sn / (big ? a : 1.0), s2 = 1.0 - a * a / 6.0;
        const double s = big ? s1 : s2;
        QW[i] = cs, QX[i] = hx * s, QY[i] = hy * s, QZ[i] = hz * s;
    }
    bool ok = true;  // (a separate pass: a reduction in the loop above keeps it scalar)
    for (int i = 0; i < m; ++i) ok = ok && std::abs(VX[i]) + std::abs(VY[i]) + std::abs(VZ[i]) < 1e6;
    return ok;
}

/// Softened points S = H + (V - H) tanh(falloff d) radius / d (d = |V - H| > 1e-5), else H.
JL_INLINE void soften_rows(int m, const double* VX, const double* VY, const double* VZ, const double* HX,
                        const double* HY, const double* HZ, double falloff, double radius, double* SX, double* SY,
                        double* SZ) {
    for (int i = 0; i < m; ++i) {
        const double dx = VX[i] - HX[i], dy = VY[i] - HY[i], dz = VZ[i] - HZ[i];
        const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
        const bool far = d > 1e-5;
        const double k = fastmath::tanh_pos(falloff * d) * radius / (far ? d : 1.0);
        const double sx = HX[i] + dx * k, sy = HY[i] + dy * k, sz = HZ[i] + dz * k;
        SX[i] = far ? sx : HX[i];
        SY[i] = far ? sy : HY[i];
        SZ[i] = far ? sz : HZ[i];
    }
}

/// The step of modes 0 and 1 on up to kChunk rows, in phases: the quaternion algebra and the
/// transcendental functions run as vectorisable loops over the rows, only the projection onto
/// the shape (branchy, shape dependent) one row at a time. Same operations as limit_step_row.
template <int MODE, class S>
JL_INLINE void limit_step_chunk(const CompiledLimit& L, const S& shape, const double* q, int m, bool soft_on, double falloff,
                             double radius, double* out, double* hard, std::size_t stride) {
    alignas(64) double X[kChunk], Y[kChunk], Z[kChunk], W[kChunk];      // swing (or whole) relative rotation
    alignas(64) double TX[kChunk], TY[kChunk], TZ[kChunk], TW[kChunk];  // twist
    alignas(64) double VX[kChunk], VY[kChunk], VZ[kChunk];              // limit-space point
    alignas(64) double HX[kChunk], HY[kChunk], HZ[kChunk];              // projection
    alignas(64) double SX[kChunk], SY[kChunk], SZ[kChunk];              // softened
    alignas(64) double TT[kChunk], TP[kChunk], TS[kChunk];              // twist angle, clamped, softened
    alignas(64) double AW[kChunk], AX[kChunk], AY[kChunk], AZ[kChunk];
    alignas(64) double BW[kChunk], BX[kChunk], BY[kChunk], BZ[kChunk];
    alignas(64) double QW[kChunk], QX[kChunk], QY[kChunk], QZ[kChunk];  // the input rows, SoA
    alignas(64) double SAME[kChunk];  // 1.0: the projection leaves the row unchanged
    const Quat ref = L.ref;
    const Vec3 ta = L.axis;
    const bool long_cover = L.covers && shape.radius() > kPi;
    const bool want_hard = hard != nullptr;
    // relative rotation on the short cover (and its swing / twist)
    for (int i = 0; i < m; ++i) {
        const double* qi = q + i * stride;
        QW[i] = qi[0], QX[i] = qi[1], QY[i] = qi[2], QZ[i] = qi[3];
    }
    for (int i = 0; i < m; ++i) {
        const double qw = QW[i], qx = QX[i], qy = QY[i], qz = QZ[i];
        // conj(ref) * q, as qmul(qconj(ref), q)
        double w = ref.w * qw - (-ref.x) * qx - (-ref.y) * qy - (-ref.z) * qz;
        double x = ref.w * qx + (-ref.x) * qw + (-ref.y) * qz - (-ref.z) * qy;
        double y = ref.w * qy - (-ref.x) * qz + (-ref.y) * qw + (-ref.z) * qx;
        double z = ref.w * qz + (-ref.x) * qy - (-ref.y) * qx + (-ref.z) * qw;
        const bool neg = w < 0.0;
        w = neg ? -w : w, x = neg ? -x : x, y = neg ? -y : y, z = neg ? -z : z;
        if (MODE == 0) {
            X[i] = x, Y[i] = y, Z[i] = z, W[i] = w;
        } else {
            const double d = x * ta.x + y * ta.y + z * ta.z;
            double tw = w, tx = d * ta.x, ty = d * ta.y, tz = d * ta.z;
            const double tn = std::sqrt(tw * tw + tx * tx + ty * ty + tz * tz);
            const bool ok = tn > 1e-12;
            const double dv = ok ? tn : 1.0;
            const double tw1 = tw / dv, tx1 = tx / dv, ty1 = ty / dv, tz1 = tz / dv;
            tw = ok ? tw1 : 1.0, tx = ok ? tx1 : 0.0, ty = ok ? ty1 : 0.0, tz = ok ? tz1 : 0.0;
            // swing = r conj(twist)
            double sw = w * tw - x * (-tx) - y * (-ty) - z * (-tz);
            double sx = w * (-tx) + x * tw + y * (-tz) - z * (-ty);
            double sy = w * (-ty) - x * (-tz) + y * tw + z * (-tx);
            double sz = w * (-tz) + x * (-ty) - y * (-tx) + z * tw;
            const bool sn = sw < 0.0, tneg = tw < 0.0;
            X[i] = sn ? -sx : sx, Y[i] = sn ? -sy : sy, Z[i] = sn ? -sz : sz, W[i] = sn ? -sw : sw;
            TX[i] = tneg ? -tx : tx, TY[i] = tneg ? -ty : ty, TZ[i] = tneg ? -tz : tz, TW[i] = tneg ? -tw : tw;
        }
    }
    log2_rows(m, X, Y, Z, W, VX, VY, VZ);
    if (MODE == 1)
        for (int i = 0; i < m; ++i) TT[i] = twist_angle(TW[i], TX[i], TY[i], TZ[i], ta);
    // projection, one row at a time
    const bool twist_cover = L.covers && std::max(-L.tlo, L.thi) > kPi;
    for (int i = 0; i < m; ++i) {
        Vec3 v{VX[i], VY[i], VZ[i]}, h;
        project_covers(v, h, shape, long_cover);
        VX[i] = v.x, VY[i] = v.y, VZ[i] = v.z, HX[i] = h.x, HY[i] = h.y, HZ[i] = h.z;
        bool in = h.x == v.x && h.y == v.y && h.z == v.z;
        if (MODE == 1) {
            double t = TT[i];
            double p = std::min(std::max(t, L.tlo), L.thi);
            if (twist_cover) {
                const double t2 = t >= 0 ? t - kTwoPi : t + kTwoPi;
                const double p2 = std::min(std::max(t2, L.tlo), L.thi);
                if (std::abs(p2 - t2) < std::abs(p - t)) t = t2, p = p2;
            }
            TT[i] = t, TP[i] = p;
            in = in && p == t;
        }
        SAME[i] = in ? 1.0 : 0.0;
    }
    // softening
    if (soft_on) {
        soften_rows(m, VX, VY, VZ, HX, HY, HZ, falloff, radius, SX, SY, SZ);
        if (MODE == 1)
            for (int i = 0; i < m; ++i) {
                const double p = TP[i], t = TT[i], dd = std::abs(p - t);
                const double st = p + std::copysign(1.0, t - p) * fastmath::tanh_pos(falloff * dd) * radius;  // both computed
                TS[i] = dd > 1e-5 ? st : p;
            }
        if (MODE == 1)  // the softened twist must equal the hard one for the row to stay (as the scalar step)
            for (int i = 0; i < m; ++i) SAME[i] = (SAME[i] != 0.0 && TS[i] == TP[i]) ? 1.0 : 0.0;
    }
    // back to rotations: ref * exp(S / 2) [* exp(K / 2)] (and the hard ones), on the caller's cover
    for (int pass = 0; pass < ((want_hard && soft_on) ? 2 : 1); ++pass) {
        const bool soft = soft_on && pass == 0;
        const double* PX = soft ? SX : HX;
        const double* PY = soft ? SY : HY;
        const double* PZ = soft ? SZ : HZ;
        if (!exp2_rows(m, PX, PY, PZ, AW, AX, AY, AZ))
            for (int i = 0; i < m; ++i) {
                const Quat a = lim_exp2(Vec3{PX[i], PY[i], PZ[i]});
                AW[i] = a.w, AX[i] = a.x, AY[i] = a.y, AZ[i] = a.z;
            }
        if (MODE == 1) {
            const double* K = soft ? TS : TP;
            for (int i = 0; i < m; ++i) {
                const Quat b = twist_exp(K[i], ta);
                BW[i] = b.w, BX[i] = b.x, BY[i] = b.y, BZ[i] = b.z;
            }
            for (int i = 0; i < m; ++i) {
                const Quat a = qmul(Quat{AW[i], AX[i], AY[i], AZ[i]}, Quat{BW[i], BX[i], BY[i], BZ[i]});
                AW[i] = a.w, AX[i] = a.x, AY[i] = a.y, AZ[i] = a.z;
            }
        }
        for (int i = 0; i < m; ++i) {
            const Quat o = qmul(ref, Quat{AW[i], AX[i], AY[i], AZ[i]});
            const bool flip = o.w * QW[i] + o.x * QX[i] + o.y * QY[i] + o.z * QZ[i] < 0.0;
            const double nw = -o.w, nx = -o.x, ny = -o.y, nz = -o.z;
            const double fw = flip ? nw : o.w, fx = flip ? nx : o.x, fy = flip ? ny : o.y, fz = flip ? nz : o.z;
            const bool keep = SAME[i] != 0.0;
            AW[i] = keep ? QW[i] : fw;
            AX[i] = keep ? QX[i] : fx;
            AY[i] = keep ? QY[i] : fy;
            AZ[i] = keep ? QZ[i] : fz;
        }
        double* dst = pass == 0 ? out : hard;
        for (int i = 0; i < m; ++i) {
            double* di = dst + i * stride;
            di[0] = AW[i], di[1] = AX[i], di[2] = AY[i], di[3] = AZ[i];
        }
    }
    if (want_hard && !soft_on)
        for (int i = 0; i < m; ++i)
            for (int c = 0; c < 4; ++c) hard[i * stride + c] = out[i * stride + c];
}
}  // namespace detail

/// Limited rotations q [n, 4] -> out [n, 4] (softened when soft_on) and, if hard != nullptr, the
/// unsoftened result. Rotations the projection leaves in place are copied through unchanged;
/// results are on the caller's cover. q, out and hard may be strided by `stride` doubles per row.
/// SA: the type of L.a (sa). L.b (the quirks mode's twist shape) is dispatched per row: that mode
/// is the reference's reproduction, and one instantiation per pair of shapes would multiply the
/// compile time of every file that includes the step by the number of shapes.
template <class SA>
inline void limit_step_rows_of(const CompiledLimit& L, const SA& sa, const double* q, std::size_t n,
                               bool soft_on, double falloff, double radius, double* out, double* hard,
                               std::size_t stride) {
    using detail::store;
    const Quat ref = L.ref, iref = qconj(L.ref);
    const Vec3 ta = L.axis;
    const bool long_cover = L.covers && sa.radius() > kPi;
    const bool want_hard = hard != nullptr;
    for (std::size_t i = 0; i < n; ++i) {
        const double* qi = q + i * stride;
        const Quat qq{qi[0], qi[1], qi[2], qi[3]};
        Quat r = qmul(iref, qq);
        if (r.w < 0.0) r = qneg(r);
        bool inside;
        Quat A{1, 0, 0, 0}, B{1, 0, 0, 0};
        if (L.mode == CompiledLimit::kShape) {
            Vec3 v = lim_log2(r), h;
            detail::project_covers(v, h, sa, long_cover);
            inside = h.x == v.x && h.y == v.y && h.z == v.z;
            if (!inside) {
                const Vec3 s = soft_on ? detail::soften3(v, h, falloff, radius) : h;
                A = lim_exp2(s);
                B = (want_hard && soft_on) ? lim_exp2(h) : A;
            }
        } else {
            Quat sw, tw;
            swing_twist(r, ta, sw, tw);
            Vec3 v = lim_log2(sw), h;
            detail::project_covers(v, h, sa, long_cover);
            if (L.mode == CompiledLimit::kSwingTwist) {
                double t = twist_angle(tw.w, tw.x, tw.y, tw.z, ta);
                double pp = std::min(std::max(t, L.tlo), L.thi);
                if (L.covers && std::max(-L.tlo, L.thi) > kPi) {
                    const double t2 = t >= 0 ? t - kTwoPi : t + kTwoPi;
                    const double p2 = std::min(std::max(t2, L.tlo), L.thi);
                    if (std::abs(p2 - t2) < std::abs(pp - t)) t = t2, pp = p2;
                }
                const double ht = pp;
                double st = pp;
                if (soft_on) {
                    const double dd = std::abs(pp - t);
                    if (dd > 1e-5) st = pp + std::copysign(1.0, t - pp) * fastmath::tanh_pos(falloff * dd) * radius;
                }
                inside = h.x == v.x && h.y == v.y && h.z == v.z && ht == t && st == ht;
                if (!inside) {
                    const Vec3 s = soft_on ? detail::soften3(v, h, falloff, radius) : h;
                    A = qmul(lim_exp2(s), twist_exp(st, ta));
                    B = (want_hard && soft_on) ? qmul(lim_exp2(h), twist_exp(ht, ta)) : A;
                }
            } else {
                const Vec3 u = lim_log2(tw);
                const Vec3 g = std::visit([&](const auto& sb) { return sb.project(u); }, L.b);
                const Vec3 k = soft_on ? detail::soften3(u, g, falloff, radius) : g;
                inside = h.x == v.x && h.y == v.y && h.z == v.z && g.x == k.x && g.y == k.y && g.z == k.z &&
                         std::abs(g.x - u.x) + std::abs(g.y - u.y) + std::abs(g.z - u.z) <=
                             1e-15 * (1.0 + std::abs(u.x) + std::abs(u.y) + std::abs(u.z));
                if (!inside) {
                    const Vec3 s = soft_on ? detail::soften3(v, h, falloff, radius) : h;
                    A = qmul(lim_exp2(s), lim_exp2(k));
                    B = (want_hard && soft_on) ? qmul(lim_exp2(h), lim_exp2(g)) : A;
                }
            }
        }
        double* oi = out + i * stride;
        if (inside) {
            if (oi != qi) oi[0] = qq.w, oi[1] = qq.x, oi[2] = qq.y, oi[3] = qq.z;
            if (want_hard) store(hard + i * stride, qq);
            continue;
        }
        Quat o = qmul(ref, A);
        if (o.w * qq.w + o.x * qq.x + o.y * qq.y + o.z * qq.z < 0.0) o = qneg(o);
        store(oi, o);
        if (!want_hard) continue;
        Quat hq = qmul(ref, B);
        if (hq.w * qq.w + hq.x * qq.x + hq.y * qq.y + hq.z * qq.z < 0.0) hq = qneg(hq);
        store(hard + i * stride, hq);
    }
}

/// limit_step_rows_of for the shapes L holds (one dispatch per call).
inline void limit_step_rows(const CompiledLimit& L, const double* q, std::size_t n, bool soft_on, double falloff,
                            double radius, double* out, double* hard, std::size_t stride = 4) {
    std::visit([&](const auto& sa) { limit_step_rows_of(L, sa, q, n, soft_on, falloff, radius, out, hard, stride); },
               L.a);
}

/// limit_step for modes 0 and 1 with L.a of type S (shape), in vectorised chunks.
template <class S>
[[JL_AVX2_CLONES]] inline void limit_step_on(const CompiledLimit& L, const S& shape, const double* q, std::size_t n,
                                             bool soft_on, double falloff, double radius, double* out, double* hard,
                                             std::size_t stride) {
    for (std::size_t s0 = 0; s0 < n; s0 += detail::kChunk) {
        const int m = static_cast<int>(std::min<std::size_t>(detail::kChunk, n - s0));
        const std::size_t off = s0 * stride;
        if (L.mode == CompiledLimit::kShape)
            detail::limit_step_chunk<0>(L, shape, q + off, m, soft_on, falloff, radius, out + off,
                                        hard ? hard + off : nullptr, stride);
        else
            detail::limit_step_chunk<1>(L, shape, q + off, m, soft_on, falloff, radius, out + off,
                                        hard ? hard + off : nullptr, stride);
    }
}

/// Limited rotations q [n, 4] -> out [n, 4] (softened when soft_on) and, if hard != nullptr, the
/// unsoftened result; rows strided by `stride` doubles. Modes 0 and 1 run in vectorised chunks,
/// the reference-quirks mode and batches under 4 rows one row at a time (the same bits). The
/// shape is dispatched once per call, never per row.
inline void limit_step(const CompiledLimit& L, const double* q, std::size_t n, bool soft_on, double falloff,
                       double radius, double* out, double* hard, std::size_t stride = 4) {
    if (L.mode == CompiledLimit::kQuirks || n < 4) {  // (a few rows: the phases' loop overheads outweigh their SIMD)
        limit_step_rows(L, q, n, soft_on, falloff, radius, out, hard, stride);
        return;
    }
    std::visit([&](const auto& s) { limit_step_on(L, s, q, n, soft_on, falloff, radius, out, hard, stride); }, L.a);
}

/// Scaled angle axis of abs(inv(ref) q) for q [n, 4] -> out [n, 3] (limit space, short cover).
inline void to_limit_space(const double* q, std::size_t n, const double* ref, double* out) {
    const Quat iref{ref[0], -ref[1], -ref[2], -ref[3]};
    for (std::size_t i = 0; i < n; ++i) {
        Quat r = qmul(iref, Quat{q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]});
        if (r.w < 0.0) r = qneg(r);
        const Vec3 v = lim_log2(r);
        out[3 * i] = v.x, out[3 * i + 1] = v.y, out[3 * i + 2] = v.z;
    }
}

/// ref * exp(v / 2) for limit-space points v [n, 3] -> out [n, 4].
inline void from_limit_space(const double* v, std::size_t n, const double* ref, double* out) {
    const Quat r{ref[0], ref[1], ref[2], ref[3]};
    for (std::size_t i = 0; i < n; ++i) detail::store(out + 4 * i, qmul(r, lim_exp2(Vec3{v[3 * i], v[3 * i + 1], v[3 * i + 2]})));
}

namespace detail {
/// One frame's single-shape joints (mode 0) as the rows of one vectorised pass (a pose has too few
/// frames for the per-joint chunks): limits L[k] of the rotations at q + off[k], written to
/// out + off[k] in place-safe order. The same operations as limit_step_chunk<0>, row by row.
[[JL_AVX2_CLONES]] inline void frame_step_mode0(const CompiledLimit* const* L, const std::size_t* off, int m, const double* q,
                             bool soft_on, double falloff, double radius, double* out) {
    alignas(64) double X[kChunk], Y[kChunk], Z[kChunk], W[kChunk];
    alignas(64) double VX[kChunk], VY[kChunk], VZ[kChunk];
    alignas(64) double HX[kChunk], HY[kChunk], HZ[kChunk];
    alignas(64) double SX[kChunk], SY[kChunk], SZ[kChunk];
    alignas(64) double AW[kChunk], AX[kChunk], AY[kChunk], AZ[kChunk];
    bool same[kChunk];
    for (int i = 0; i < m; ++i) {
        const double* qi = q + off[i];
        const Quat ref = L[i]->ref;
        double w = ref.w * qi[0] + ref.x * qi[1] + ref.y * qi[2] + ref.z * qi[3];
        double x = ref.w * qi[1] - ref.x * qi[0] - ref.y * qi[3] + ref.z * qi[2];
        double y = ref.w * qi[2] + ref.x * qi[3] - ref.y * qi[0] - ref.z * qi[1];
        double z = ref.w * qi[3] - ref.x * qi[2] + ref.y * qi[1] - ref.z * qi[0];
        const bool neg = w < 0.0;
        X[i] = neg ? -x : x, Y[i] = neg ? -y : y, Z[i] = neg ? -z : z, W[i] = neg ? -w : w;
    }
    log2_rows(m, X, Y, Z, W, VX, VY, VZ);
    for (int i = 0; i < m; ++i) {
        Vec3 v{VX[i], VY[i], VZ[i]}, h;
        // (one dispatch per joint: each row of this pass is a different joint)
        std::visit([&](const auto& s) { project_covers(v, h, s, L[i]->covers && s.radius() > kPi); }, L[i]->a);
        VX[i] = v.x, VY[i] = v.y, VZ[i] = v.z, HX[i] = h.x, HY[i] = h.y, HZ[i] = h.z;
        same[i] = h.x == v.x && h.y == v.y && h.z == v.z;
    }
    const double* PX = HX;
    const double* PY = HY;
    const double* PZ = HZ;
    if (soft_on) {
        soften_rows(m, VX, VY, VZ, HX, HY, HZ, falloff, radius, SX, SY, SZ);
        PX = SX, PY = SY, PZ = SZ;
    }
    if (!exp2_rows(m, PX, PY, PZ, AW, AX, AY, AZ))
        for (int i = 0; i < m; ++i) {
            const Quat a = lim_exp2(Vec3{PX[i], PY[i], PZ[i]});
            AW[i] = a.w, AX[i] = a.x, AY[i] = a.y, AZ[i] = a.z;
        }
    for (int i = 0; i < m; ++i) {
        const double* qi = q + off[i];
        double* oi = out + off[i];
        if (same[i]) {
            if (oi != qi) oi[0] = qi[0], oi[1] = qi[1], oi[2] = qi[2], oi[3] = qi[3];
            continue;
        }
        Quat o = qmul(L[i]->ref, Quat{AW[i], AX[i], AY[i], AZ[i]});
        if (o.w * qi[0] + o.x * qi[1] + o.y * qi[2] + o.z * qi[3] < 0.0) o = qneg(o);
        store(oi, o);
    }
}
}  // namespace detail

/// A whole skeleton's limits: joint index and packed limit per limited joint (any order: each
/// joint's step reads only its own rotation).
struct PoseLimits {
    int64_t num_joints = 0;
    std::vector<int64_t> joints;
    std::vector<CompiledLimit> limits;

    /// q [frames, J, 4] -> out (same layout): every limited joint of every frame, the others copied;
    /// with hard != nullptr also the unsoftened result there (the same pass: each joint's step
    /// writes both). Returns false (out then unspecified) if q holds a non-finite value. q may
    /// equal out (not hard).
    bool project(const double* q, std::size_t frames, bool soft_on, double falloff, double radius,
                 double* out, double* hard = nullptr) const {
        const std::size_t total = frames * static_cast<std::size_t>(num_joints) * 4;
        double acc = 0.0;  // x - x is NaN for inf and NaN: one branch-free pass
        for (std::size_t i = 0; i < total; ++i) acc += q[i] - q[i];
        if (acc != 0.0) return false;
        if (out != q)
            for (std::size_t i = 0; i < total; ++i) out[i] = q[i];
        const bool both = hard != nullptr && soft_on;  // unsoftened = limited without softening
        if (both)
            for (std::size_t i = 0; i < total; ++i) hard[i] = out[i];
        const std::size_t stride = static_cast<std::size_t>(num_joints) * 4;
        if (frames < 4 && !both) {  // a pose or a few: the single-shape joints of a frame in one vectorised pass
            const CompiledLimit* L[detail::kChunk];
            std::size_t off[detail::kChunk];
            for (std::size_t f = 0; f < frames; ++f) {
                double* o = out + f * stride;
                int m = 0;
                for (std::size_t k = 0; k < joints.size(); ++k) {
                    if (limits[k].mode != CompiledLimit::kShape) {
                        limit_step_rows(limits[k], o + joints[k] * 4, 1, soft_on, falloff, radius, o + joints[k] * 4,
                                        nullptr);
                        continue;
                    }
                    L[m] = &limits[k];
                    off[m++] = static_cast<std::size_t>(joints[k]) * 4;
                    if (m == detail::kChunk) {
                        detail::frame_step_mode0(L, off, m, o, soft_on, falloff, radius, o);
                        m = 0;
                    }
                }
                if (m) detail::frame_step_mode0(L, off, m, o, soft_on, falloff, radius, o);
            }
        } else {
            for (std::size_t k = 0; k < joints.size(); ++k) {
                double* o = out + joints[k] * 4;
                limit_step(limits[k], o, frames, soft_on, falloff, radius, o, both ? hard + joints[k] * 4 : nullptr,
                           stride);
            }
        }
        if (hard != nullptr && !both)
            for (std::size_t i = 0; i < total; ++i) hard[i] = out[i];
        return true;
    }
};

}  // namespace jointlimits

// Quaternion operations on plain doubles (w, x, y, z), written in the operation order of the
// Python reference kernels so results agree bit for bit.
#pragma once
#include <cmath>

#include "fastmath.hpp"

namespace jointlimits {

struct Quat {
    double w, x, y, z;
};
struct Vec3 {
    double x, y, z;
};

constexpr double kPi = 3.141592653589793;
constexpr double kTwoPi = 2.0 * kPi;

JL_INLINE Quat qmul(const Quat& a, const Quat& b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

JL_INLINE Quat qconj(const Quat& a) { return {a.w, -a.x, -a.y, -a.z}; }
JL_INLINE Quat qneg(const Quat& a) { return {-a.w, -a.x, -a.y, -a.z}; }

/// q v q^-1 for a unit q: v + 2w (u x v) + 2 u x (u x v).
inline Vec3 qrotate(const Quat& q, const Vec3& v) {
    const double tx = 2.0 * (q.y * v.z - q.z * v.y);
    const double ty = 2.0 * (q.z * v.x - q.x * v.z);
    const double tz = 2.0 * (q.x * v.y - q.y * v.x);
    return {v.x + q.w * tx + (q.y * tz - q.z * ty), v.y + q.w * ty + (q.z * tx - q.x * tz),
            v.z + q.w * tz + (q.x * ty - q.y * tx)};
}

/// Scaled angle axis 2 log(q) of a rotation on its short cover (q.w >= 0).
JL_INLINE Vec3 lim_log2(const Quat& q) {
    const double n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    const double s = n > 1e-8 ? 2.0 * fastmath::atan2_q1(n, q.w) / n : 2.0;
    return {q.x * s, q.y * s, q.z * s};
}

/// exp(v / 2): the rotation of a scaled angle axis.
JL_INLINE Quat lim_exp2(const Vec3& v) {
    const double hx = 0.5 * v.x, hy = 0.5 * v.y, hz = 0.5 * v.z;
    const double a = std::sqrt(hx * hx + hy * hy + hz * hz);
    double sn, cs;
    fastmath::sincos_pos(a, sn, cs);
    const double s = a > 1e-8 ? sn / a : 1.0 - a * a / 6.0;
    return {cs, hx * s, hy * s, hz * s};
}

/// Swing and twist (each on its short cover) of r about the unit axis t:
/// twist = normalize(w, (v.t) t), swing = r conj(twist); (r, identity) when the twist is undefined.
inline void swing_twist(const Quat& r, const Vec3& t, Quat& swing, Quat& twist) {
    const double d = r.x * t.x + r.y * t.y + r.z * t.z;
    Quat tw{r.w, d * t.x, d * t.y, d * t.z};
    const double tn = std::sqrt(tw.w * tw.w + tw.x * tw.x + tw.y * tw.y + tw.z * tw.z);
    if (tn > 1e-12)
        tw = {tw.w / tn, tw.x / tn, tw.y / tn, tw.z / tn};
    else
        tw = {1.0, 0.0, 0.0, 0.0};
    Quat sw = qmul(r, qconj(tw));
    if (sw.w < 0.0) sw = qneg(sw);
    if (tw.w < 0.0) tw = qneg(tw);
    swing = sw;
    twist = tw;
}

}  // namespace jointlimits

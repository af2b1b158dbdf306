// Reach windows and twist limits (Blow 2002): the swung bone direction must lie in one of a set
// of spherical polygons (windows), the twist about the bone in an interval.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "quat.hpp"

namespace jointlimits {

/// The windows of one or more joints, flat: window w has normal wn[w], in-plane axes we1[w],
/// we2[w], centre wc[w] (2D), vertices verts[wvs[w]..wvs[w+1]) (2D) and edge
/// half-space normals eg[...] (3D, the same index range). All arrays row-major.
struct ReachWindows {
    const double* wn;
    const double* we1;
    const double* we2;
    const double* wc;
    const int64_t* wvs;
    const double* verts;
    const double* eg;
};

namespace reach_detail {
/// Python's float modulo (the result has the sign of m), as the fitting code uses.
inline double pymod(double x, double m) {
    double r = std::fmod(x, m);
    if (r != 0.0) {
        if ((m < 0) != (r < 0)) r += m;
    } else {
        r = std::copysign(0.0, m);
    }
    return r;
}
/// Simple rotation taking unit a to unit d (a half turn about a perpendicular if antiparallel).
inline Quat simple_unit(double ax, double ay, double az, double dx, double dy, double dz) {
    const double w = 1.0 + ax * dx + ay * dy + az * dz;
    const double x = ay * dz - az * dy, y = az * dx - ax * dz, z = ax * dy - ay * dx;
    const double n = std::sqrt(w * w + x * x + y * y + z * z);
    if (n < 1e-12) {
        double px, py, pz;
        if (std::abs(ax) <= std::abs(ay) && std::abs(ax) <= std::abs(az))
            px = 0.0, py = az, pz = -ay;
        else if (std::abs(ay) <= std::abs(az))
            px = -az, py = 0.0, pz = ax;
        else
            px = ay, py = -ax, pz = 0.0;
        const double m = std::sqrt(px * px + py * py + pz * pz);
        return {0.0, px / m, py / m, pz / m};
    }
    return {w / n, x / n, y / n, z / n};
}
}  // namespace reach_detail

/// Project one local rotation q onto the reach limit (reference ref, bone axis, twist interval
/// tmid +- thalf, windows [w0, w1) of W; none = free swing). Returns whether it moved; the result
/// (on q's cover) goes to out.
inline bool reach_project_one(const Quat& q, const Quat& ref, const Vec3& axis, double tmid, double thalf,
                              int64_t w0, int64_t w1, const ReachWindows& W, double slack, Quat& out) {
    using reach_detail::pymod;
    Quat r = qmul(qconj(ref), q);
    if (r.w < 0.0) r = qneg(r);
    const double s = r.x * axis.x + r.y * axis.y + r.z * axis.z;
    const double phi = (s != 0.0 || r.w != 0.0) ? 2.0 * std::atan2(s, r.w) : 0.0;
    bool twist_ok = true;
    double phi_new = phi;
    if (thalf < kPi) {
        const double delta = pymod(phi - tmid + kPi, 2.0 * kPi) - kPi;
        // clamp a hair inside so the result tests inside without slack
        if (delta > thalf + slack) {
            phi_new = tmid + thalf - 1e-12;
            twist_ok = false;
        } else if (delta < -thalf - slack) {
            phi_new = tmid - thalf + 1e-12;
            twist_ok = false;
        }
    }
    const Vec3 d = qrotate(r, axis);
    auto dot = [](const Vec3& a, const double* b) { return a.x * b[0] + a.y * b[1] + a.z * b[2]; };
    bool swing_ok = w1 <= w0;  // no windows: free swing
    for (int64_t w = w0; w < w1 && !swing_ok; ++w) {
        if (dot(d, W.wn + 3 * w) <= 0.0) continue;
        bool inside = true;
        for (int64_t i = W.wvs[w]; i < W.wvs[w + 1]; ++i)
            if (dot(d, W.eg + 3 * i) > slack) {
                inside = false;
                break;
            }
        swing_ok = inside;
    }
    if (swing_ok && twist_ok) {
        out = q;
        return false;
    }
    Vec3 nd = d;
    if (!swing_ok) {
        double best = -2.0;
        for (int64_t w = w0; w < w1; ++w) {
            const double dn = std::max(dot(d, W.wn + 3 * w), 1e-9);
            const double px = dot(d, W.we1 + 3 * w) / dn, py = dot(d, W.we2 + 3 * w) / dn;
            // closest point of the polygon boundary
            double bx = 0.0, by = 0.0, bd = 1e300;
            const int64_t k0 = W.wvs[w], k1 = W.wvs[w + 1];
            for (int64_t i = k0; i < k1; ++i) {
                const int64_t j = i + 1 < k1 ? i + 1 : k0;
                const double* vi = W.verts + 2 * i;
                const double* vj = W.verts + 2 * j;
                const double ex = vj[0] - vi[0], ey = vj[1] - vi[1], ee = ex * ex + ey * ey;
                double t = ee > 0.0 ? ((px - vi[0]) * ex + (py - vi[1]) * ey) / ee : 0.0;
                t = std::min(std::max(t, 0.0), 1.0);
                const double cx = vi[0] + t * ex, cy = vi[1] + t * ey;
                const double dd = (cx - px) * (cx - px) + (cy - py) * (cy - py);
                if (dd < bd) bd = dd, bx = cx, by = cy;
            }
            // nudge a hair toward the window centre so the result tests inside
            bx += 1e-10 * (W.wc[2 * w] - bx);
            by += 1e-10 * (W.wc[2 * w + 1] - by);
            const double* n = W.wn + 3 * w;
            const double* e1 = W.we1 + 3 * w;
            const double* e2 = W.we2 + 3 * w;
            double cx = n[0] + bx * e1[0] + by * e2[0], cy = n[1] + bx * e1[1] + by * e2[1],
                   cz = n[2] + bx * e1[2] + by * e2[2];
            const double m = std::sqrt(cx * cx + cy * cy + cz * cz);
            cx /= m, cy /= m, cz /= m;
            const double score = cx * d.x + cy * d.y + cz * d.z;
            if (score > best) best = score, nd = {cx, cy, cz};
        }
    }
    // rebuild r' = S(a -> d') T(phi')
    const Quat sw = reach_detail::simple_unit(axis.x, axis.y, axis.z, nd.x, nd.y, nd.z);
    const double h = 0.5 * phi_new, ch = std::cos(h), sh = std::sin(h);
    const Quat r2 = qmul(sw, Quat{ch, sh * axis.x, sh * axis.y, sh * axis.z});
    Quat o = qmul(ref, r2);
    if (o.w * q.w + o.x * q.x + o.y * q.y + o.z * q.z < 0.0) o = qneg(o);
    out = o;
    return true;
}

/// Project n rotations q [n, 4] -> out [n, 4] through windows [0, n_windows).
inline void reach_project(const double* q, std::size_t n, const Quat& ref, const Vec3& axis, double tmid,
                          double thalf, int64_t n_windows, const ReachWindows& W, double slack, double* out) {
    for (std::size_t k = 0; k < n; ++k) {
        Quat o;
        reach_project_one({q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]}, ref, axis, tmid, thalf, 0, n_windows,
                          W, slack, o);
        out[4 * k] = o.w, out[4 * k + 1] = o.x, out[4 * k + 2] = o.y, out[4 * k + 3] = o.z;
    }
}

/// Whether every one of n values is finite and within +-1e6 (a window table is on the unit sphere).
inline bool reach_finite(const double* a, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (!(std::abs(a[i]) <= 1e6)) return false;
    return true;
}

/// One joint's reach limit, owning its window table: reference, bone axis, twist tmid +- thalf,
/// W windows (wn, we1, we2 [W, 3], wc [W, 2], wvs [W + 1]) over V vertices (verts [V, 2], eg [V, 3]).
struct ReachLimit {
    Quat ref{1.0, 0.0, 0.0, 0.0};
    Vec3 axis{1.0, 0.0, 0.0};
    double tmid = 0.0, thalf = 0.0;
    std::vector<double> wn, we1, we2, wc, verts, eg;
    std::vector<int64_t> wvs{0};

    int64_t n_windows() const { return static_cast<int64_t>(wvs.size()) - 1; }
    ReachWindows windows() const { return {wn.data(), we1.data(), we2.data(), wc.data(), wvs.data(), verts.data(), eg.data()}; }

    /// Throws std::invalid_argument unless the table's sizes and vertex ranges agree.
    void validate() const {
        const std::size_t W = wvs.size() - 1, V = verts.size() / 2;
        if (wvs.empty() || wn.size() != 3 * W || we1.size() != 3 * W || we2.size() != 3 * W || wc.size() != 2 * W ||
            verts.size() % 2 || eg.size() != 3 * V)
            throw std::invalid_argument("reach limit: window table sizes disagree");
        for (std::size_t w = 0; w < W; ++w)
            if (wvs[w] < 0 || wvs[w + 1] < wvs[w] || wvs[w + 1] > static_cast<int64_t>(V))
                throw std::invalid_argument("reach limit: corrupt window table");
        for (const auto* v : {&wn, &we1, &we2, &wc, &verts, &eg})
            if (!reach_finite(v->data(), v->size())) throw std::invalid_argument("reach limit: non-finite window table");
        const double r[8] = {ref.w, ref.x, ref.y, ref.z, axis.x, axis.y, axis.z, tmid};
        if (!reach_finite(r, 8) || !std::isfinite(thalf))
            throw std::invalid_argument("reach limit: non-finite reference, axis or twist");
    }

    /// Project one local rotation (on q's cover); whether it moved.
    bool project(const Quat& q, double slack, Quat& out) const {
        return reach_project_one(q, ref, axis, tmid, thalf, 0, n_windows(), windows(), slack, out);
    }
};

}  // namespace jointlimits

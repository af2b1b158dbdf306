// Cyclic coordinate descent on a joint chain with joint limits (fitted limits through the limit
// step, reach windows with twist limits) and restarts from precomputed poses.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "quat.hpp"
#include "reach.hpp"
#include "step.hpp"

namespace jointlimits {

/// The limits of an n-joint chain: per joint a fitted limit (fitted[k]), a reach limit (reach[k]),
/// or neither (null, null).
struct ChainLimits {
    std::vector<const CompiledLimit*> fitted;
    std::vector<const ReachLimit*> reach;
};

/// CCD options (see jointlimits.ik.ccd.ccd).
struct CCDOptions {
    double tol, ori_tol, ori_weight;
    int64_t max_iter, max_restarts, stall_iters;
    double stall_ratio;
};

/// What one solve reached.
struct CCDStats {
    bool success;
    int64_t iters, restarts;
    double err, oerr;
};

namespace ccd_detail {

inline Quat load4(const double* p) { return {p[0], p[1], p[2], p[3]}; }
inline void store4(double* p, const Quat& q) { p[0] = q.w, p[1] = q.x, p[2] = q.y, p[3] = q.z; }

/// Global rotations G [n, 4] and positions P [n + 1, 3] (the end last) of chain rotations L.
inline void fk_chain(const Quat& br, const Vec3& bp, const double* off, const double* L, int64_t n, double* G,
                     double* P) {
    Quat g = br;
    Vec3 p = bp;
    for (int64_t k = 0; k < n; ++k) {
        const Vec3 o = qrotate(g, {off[3 * k], off[3 * k + 1], off[3 * k + 2]});
        p = {p.x + o.x, p.y + o.y, p.z + o.z};
        g = qmul(g, load4(L + 4 * k));
        P[3 * k] = p.x, P[3 * k + 1] = p.y, P[3 * k + 2] = p.z;
        store4(G + 4 * k, g);
    }
    const Vec3 o = qrotate(g, {off[3 * n], off[3 * n + 1], off[3 * n + 2]});
    P[3 * n] = p.x + o.x, P[3 * n + 1] = p.y + o.y, P[3 * n + 2] = p.z + o.z;
}

inline void project_joint(double* L, int64_t k, const ChainLimits& lim) {
    double* q = L + 4 * k;
    if (lim.fitted[k] != nullptr) {
        limit_step_rows(*lim.fitted[k], q, 1, false, 0.0, 0.0, q, nullptr);  // (limit_step on one row)
    } else if (lim.reach[k] != nullptr) {
        Quat o;
        lim.reach[k]->project(load4(q), 1e-9, o);
        store4(q, o);
    }
}

inline void errors(const double* P, const double* G, int64_t n, const double* t, const double* tr, bool has_ori,
                   const Quat& end_rot, double& e, double& oe) {
    const double dx = P[3 * n] - t[0], dy = P[3 * n + 1] - t[1], dz = P[3 * n + 2] - t[2];
    e = std::sqrt(dx * dx + dy * dy + dz * dz);
    oe = 0.0;
    if (has_ori) {
        const Quat E = qmul(load4(G + 4 * (n - 1)), end_rot);
        const double dot = std::abs(E.w * tr[0] + E.x * tr[1] + E.y * tr[2] + E.z * tr[3]);
        oe = 2.0 * std::acos(std::min(dot, 1.0));
    }
}

}  // namespace ccd_detail

/// Solve one chain of n joints: base rotation/position br, bp; bone offsets off [n + 1, 3]; target
/// t [3] (and rotation tr [4] if has_ori, for the end rotated by end_rot); initial rotations init
/// [n, 4]; restart poses starts [S, n, 4] with their effectors start_eff [S, 3] (in the base
/// frame). The best rotations found go to out [n, 4].
inline CCDStats ccd_one(const Quat& br, const Vec3& bp, const double* off, const double* t, const double* tr,
                        bool has_ori, const Quat& end_rot, const double* init, const double* starts,
                        const double* start_eff, int64_t S, int64_t n, const ChainLimits& lim, const CCDOptions& o,
                        double* out) {
    using namespace ccd_detail;
    std::vector<double> Lv(init, init + 4 * n), Gv(4 * n), Pv(3 * (n + 1));
    std::vector<uint8_t> tried(S, 0);
    double* L = Lv.data();
    double* G = Gv.data();
    double* P = Pv.data();
    for (int64_t k = 0; k < n; ++k) project_joint(L, k, lim);
    // target in the base frame, for choosing restart poses
    const Vec3 lt = qrotate(qconj(br), {t[0] - bp.x, t[1] - bp.y, t[2] - bp.z});
    CCDStats st{false, 0, 0, 1e300, 0.0};
    double best_score = 1e300;
    while (true) {
        double prev = 1e300;
        int64_t stall = 0;
        for (int64_t it = 0; it < o.max_iter; ++it) {
            ++st.iters;
            for (int64_t i = n - 1; i >= 0; --i) {
                fk_chain(br, bp, off, L, n, G, P);
                const double pix = P[3 * i], piy = P[3 * i + 1], piz = P[3 * i + 2];
                const double ux = P[3 * n] - pix, uy = P[3 * n + 1] - piy, uz = P[3 * n + 2] - piz;
                const double vx = t[0] - pix, vy = t[1] - piy, vz = t[2] - piz;
                const double lu = std::sqrt(ux * ux + uy * uy + uz * uz);
                const double lv = std::sqrt(vx * vx + vy * vy + vz * vz);
                Quat r{1.0, 0.0, 0.0, 0.0};
                if (!(lu < 1e-12 || lv < 1e-12))
                    r = reach_detail::simple_unit(ux / lu, uy / lu, uz / lu, vx / lv, vy / lv, vz / lv);
                if (has_ori && lv >= 1e-12) {
                    // twist about the joint->target line that best aligns the end rotation
                    const Quat e = qmul(r, qmul(load4(G + 4 * (n - 1)), end_rot));
                    Quat q = qmul(load4(tr), qconj(e));
                    if (q.w < 0.0) q = qneg(q);
                    const double ax = vx / lv, ay = vy / lv, az = vz / lv;
                    const double s = q.x * ax + q.y * ay + q.z * az;
                    const double ang = 2.0 * std::atan2(s, q.w) * o.ori_weight;
                    const double ch = std::cos(0.5 * ang), sh = std::sin(0.5 * ang);
                    r = qmul(Quat{ch, sh * ax, sh * ay, sh * az}, r);
                }
                // L_i' = parent^-1 R G_i
                const Quat par = i == 0 ? br : load4(G + 4 * (i - 1));
                const Quat l = qmul(qconj(par), qmul(r, load4(G + 4 * i)));
                const double nn = std::sqrt(l.w * l.w + l.x * l.x + l.y * l.y + l.z * l.z);
                store4(L + 4 * i, {l.w / nn, l.x / nn, l.y / nn, l.z / nn});
                project_joint(L, i, lim);
            }
            fk_chain(br, bp, off, L, n, G, P);
            double e, oe;
            errors(P, G, n, t, tr, has_ori, end_rot, e, oe);
            const double score = e + (has_ori ? oe : 0.0);
            if (score < best_score) {
                best_score = score, st.err = e, st.oerr = oe;
                for (int64_t k = 0; k < 4 * n; ++k) out[k] = L[k];
            }
            if (e <= o.tol && (!has_ori || oe <= o.ori_tol)) {
                st.success = true;
                break;
            }
            if (score > prev * (1.0 - o.stall_ratio)) {
                if (++stall >= o.stall_iters) break;
            } else {
                stall = 0;
            }
            prev = score;
        }
        if (st.success || st.restarts >= o.max_restarts) break;
        // restart from the untried start pose whose effector is nearest the target
        int64_t pick = -1;
        double bd = 1e300;
        for (int64_t s = 0; s < S; ++s) {
            if (tried[s]) continue;
            const double dx = start_eff[3 * s] - lt.x, dy = start_eff[3 * s + 1] - lt.y, dz = start_eff[3 * s + 2] - lt.z;
            const double dd = dx * dx + dy * dy + dz * dz;
            if (dd < bd) bd = dd, pick = s;
        }
        if (pick < 0) break;
        tried[pick] = 1;
        ++st.restarts;
        for (int64_t k = 0; k < 4 * n; ++k) L[k] = starts[pick * 4 * n + k];
    }
    return st;
}

}  // namespace jointlimits

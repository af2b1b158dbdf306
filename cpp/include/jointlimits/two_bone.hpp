// Two-bone IK: the geometric solve (jointlimits.ik.two_bone.two_bone) and the joint-limits
// demo's formulation (ik_two_bone), one fused pass per chain.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "quat.hpp"

namespace jointlimits {
namespace tb {
/// n x e_k / |n x e_k| with k the axis of n's smallest component (first on ties).
inline Vec3 perp(double nx, double ny, double nz) {
    const double axx = std::abs(nx), ayy = std::abs(ny), azz = std::abs(nz);
    double px, py, pz;
    if (axx <= ayy && axx <= azz)
        px = 0.0, py = nz, pz = -ny;
    else if (ayy <= azz)
        px = -nz, py = 0.0, pz = nx;
    else
        px = ny, py = -nx, pz = 0.0;
    const double m = std::sqrt(px * px + py * py + pz * pz);
    return {px / m, py / m, pz / m};
}
/// Simple rotation u -> v for non-unit u, v: normalize(|u||v| + u.v, u x v).
inline Quat simple_rotation(double ux, double uy, double uz, double vx, double vy, double vz) {
    const double uv = std::sqrt(ux * ux + uy * uy + uz * uz) * std::sqrt(vx * vx + vy * vy + vz * vz);
    const double w = uv + (ux * vx + uy * vy + uz * vz);
    const double x = uy * vz - uz * vy, y = uz * vx - ux * vz, z = ux * vy - uy * vx;
    const double n = std::sqrt(w * w + x * x + y * y + z * z);
    if (n <= 1e-12 * std::max(uv, 1e-300)) {
        const double lu = std::sqrt(ux * ux + uy * uy + uz * uz);
        const Vec3 p = perp(ux / lu, uy / lu, uz / lu);
        return {0.0, p.x, p.y, p.z};
    }
    return {w / n, x / n, y / n, z / n};
}
inline Vec3 unit_eps(double x, double y, double z) {
    const double n = std::sqrt(x * x + y * y + z * z) + 1e-8;
    return {x / n, y / n, z / n};
}
inline double acos_clip(double x) { return std::acos(std::min(std::max(x, -1.0), 1.0)); }
inline double sq(double a) { return a * a; }
}  // namespace tb

/// Geometric two-bone solve over N chains (flat rows). pole may be null. case_out: 0 reached,
/// 1 too close, 2 too far, -1/-2 zero-length root->mid / mid->end bone.
inline void two_bone(const double* A, const double* B, const double* C, const double* T, const double* POLE,
                     const double* P, const double* LK, const double* LJ, std::size_t N, double* root_out,
                     double* mid_out, double* knee_out, double* foot_out, int8_t* case_out) {
    using namespace tb;
    const bool has_pole = POLE != nullptr;
    for (std::size_t i = 0; i < N; ++i) {
        const double ax = A[3 * i], ay = A[3 * i + 1], az = A[3 * i + 2];
        const double bx = B[3 * i], by = B[3 * i + 1], bz = B[3 * i + 2];
        const double cx = C[3 * i], cy = C[3 * i + 1], cz = C[3 * i + 2];
        const double tx = T[3 * i], ty = T[3 * i + 1], tz = T[3 * i + 2];
        const double abx = bx - ax, aby = by - ay, abz = bz - az;
        const double bcx = cx - bx, bcy = cy - by, bcz = cz - bz;
        const double lab = std::sqrt(abx * abx + aby * aby + abz * abz);
        const double lbc = std::sqrt(bcx * bcx + bcy * bcy + bcz * bcz);
        if (lab <= 1e-12 || lbc <= 1e-12) {
            case_out[i] = lab <= 1e-12 ? -1 : -2;
            continue;
        }
        const double atx = tx - ax, aty = ty - ay, atz = tz - az;
        const double lat = std::sqrt(atx * atx + aty * aty + atz * atz);
        const double tiny = 1e-12 * (lab + lbc);
        double dx, dy, dz, cos_t;
        if (lat <= tiny) {
            const double cax = cx - ax, cay = cy - ay, caz = cz - az;
            const double lca = std::sqrt(cax * cax + cay * cay + caz * caz);
            double fx, fy, fz;
            if (lca > tiny)
                fx = cax / lca, fy = cay / lca, fz = caz / lca;
            else
                fx = abx, fy = aby, fz = abz;
            const double lf = std::sqrt(fx * fx + fy * fy + fz * fz);
            dx = fx / lf, dy = fy / lf, dz = fz / lf;
            cos_t = 1.0;
        } else {
            dx = atx / lat, dy = aty / lat, dz = atz / lat;
            cos_t = std::min(std::max((lab * lab + lat * lat - lbc * lbc) / (2.0 * lab * lat), -1.0), 1.0);
        }
        const double sin_t = std::sqrt(std::max(0.0, 1.0 - cos_t * cos_t));
        const double mx = ax + lab * cos_t * dx, my = ay + lab * cos_t * dy, mz = az + lab * cos_t * dz;
        double gx, gy, gz;
        if (has_pole)
            gx = POLE[3 * i], gy = POLE[3 * i + 1], gz = POLE[3 * i + 2];
        else
            gx = bx, gy = by, gz = bz;
        double vx = gx - mx, vy = gy - my, vz = gz - mz;
        double vd = vx * dx + vy * dy + vz * dz;
        double ux = vx - vd * dx, uy = vy - vd * dy, uz = vz - vd * dz;
        double lu = std::sqrt(ux * ux + uy * uy + uz * uz);
        bool weak = lu <= 1e-12 * (lab + lbc);
        if (has_pole && weak) {
            vx = bx - mx, vy = by - my, vz = bz - mz;
            vd = vx * dx + vy * dy + vz * dz;
            ux = vx - vd * dx, uy = vy - vd * dy, uz = vz - vd * dz;
            lu = std::sqrt(ux * ux + uy * uy + uz * uz);
            weak = lu <= 1e-12 * (lab + lbc);
        }
        if (weak) {
            const Vec3 p = perp(dx, dy, dz);
            ux = p.x, uy = p.y, uz = p.z;
            lu = 1.0;
        }
        const double r = lab * sin_t;
        double kx = mx + r * ux / lu, ky = my + r * uy / lu, kz = mz + r * uz / lu;
        double ex = tx, ey = ty, ez = tz;
        int8_t cs = 0;
        if (lat > lab + lbc) {
            cs = 2;
            kx = ax + lab * dx, ky = ay + lab * dy, kz = az + lab * dz;
            const double ll = lab + lbc;
            ex = ax + ll * dx, ey = ay + ll * dy, ez = az + ll * dz;
        } else if (lat < std::abs(lab - lbc)) {
            cs = 1;
            const double sg = lab >= lbc ? 1.0 : -1.0;
            kx = ax + sg * lab * dx, ky = ay + sg * lab * dy, kz = az + sg * lab * dz;
            ex = kx - sg * lbc * dx, ey = ky - sg * lbc * dy, ez = kz - sg * lbc * dz;
        }
        const Quat r1 = simple_rotation(abx, aby, abz, kx - ax, ky - ay, kz - az);
        const Vec3 q = qrotate(r1, {bcx, bcy, bcz});
        const Quat r2 = simple_rotation(q.x, q.y, q.z, ex - kx, ey - ky, ez - kz);
        const Quat p{P[4 * i], P[4 * i + 1], P[4 * i + 2], P[4 * i + 3]};
        const Vec3 s1 = qrotate(qconj(p), {r1.x, r1.y, r1.z});
        const Quat h = qmul({r1.w, s1.x, s1.y, s1.z}, {LK[4 * i], LK[4 * i + 1], LK[4 * i + 2], LK[4 * i + 3]});
        const Quat g = qmul(p, h);
        const Vec3 s2 = qrotate(qconj(g), {r2.x, r2.y, r2.z});
        const Quat j = qmul({r2.w, s2.x, s2.y, s2.z}, {LJ[4 * i], LJ[4 * i + 1], LJ[4 * i + 2], LJ[4 * i + 3]});
        root_out[4 * i] = h.w, root_out[4 * i + 1] = h.x, root_out[4 * i + 2] = h.y, root_out[4 * i + 3] = h.z;
        mid_out[4 * i] = j.w, mid_out[4 * i + 1] = j.x, mid_out[4 * i + 2] = j.y, mid_out[4 * i + 3] = j.z;
        knee_out[3 * i] = kx, knee_out[3 * i + 1] = ky, knee_out[3 * i + 2] = kz;
        foot_out[3 * i] = ex, foot_out[3 * i + 1] = ey, foot_out[3 * i + 2] = ez;
        case_out[i] = cs;
    }
}

/// The joint-limits demo's two-bone IK over N chains; bad: 0 ok, -1/-2 zero-length bone.
inline void ik_two_bone(const double* A, const double* B, const double* C, const double* T, const double* FWD,
                        const double* RG, const double* MG, const double* PG, double buf, std::size_t N,
                        double* root_out, double* mid_out, int8_t* bad) {
    using namespace tb;
    for (std::size_t i = 0; i < N; ++i) {
        const double ax = A[3 * i], ay = A[3 * i + 1], az = A[3 * i + 2];
        const double bx = B[3 * i], by = B[3 * i + 1], bz = B[3 * i + 2];
        const double cx = C[3 * i], cy = C[3 * i + 1], cz = C[3 * i + 2];
        double tx = T[3 * i], ty = T[3 * i + 1], tz = T[3 * i + 2];
        const double lab = std::sqrt(sq(bx - ax) + sq(by - ay) + sq(bz - az));
        const double lcb = std::sqrt(sq(bx - cx) + sq(by - cy) + sq(bz - cz));
        if (lab <= 1e-12 || lcb <= 1e-12) {
            bad[i] = lab <= 1e-12 ? -1 : -2;
            continue;
        }
        bad[i] = 0;
        const double max_ext = lab + lcb - buf;
        {
            const double tax = tx - ax, tay = ty - ay, taz = tz - az;
            if (std::sqrt(tax * tax + tay * tay + taz * taz) > max_ext) {
                const Vec3 u = unit_eps(tax, tay, taz);
                tx = ax + max_ext * u.x, ty = ay + max_ext * u.y, tz = az + max_ext * u.z;
            }
        }
        const Vec3 ca = unit_eps(cx - ax, cy - ay, cz - az);
        const double fx = FWD[3 * i], fy = FWD[3 * i + 1], fz = FWD[3 * i + 2];
        const Vec3 rr = unit_eps(ca.y * fz - ca.z * fy, ca.z * fx - ca.x * fz, ca.x * fy - ca.y * fx);
        const double lat = std::sqrt(sq(tx - ax) + sq(ty - ay) + sq(tz - az));
        const Vec3 ba = unit_eps(bx - ax, by - ay, bz - az);
        const Vec3 ab = unit_eps(ax - bx, ay - by, az - bz);
        const Vec3 cb = unit_eps(cx - bx, cy - by, cz - bz);
        const double ac_ab_0 = acos_clip(ca.x * ba.x + ca.y * ba.y + ca.z * ba.z);
        const double ba_bc_0 = acos_clip(ab.x * cb.x + ab.y * cb.y + ab.z * cb.z);
        const double ac_ab_1 = acos_clip((lcb * lcb - lab * lab - lat * lat) / (-2.0 * lab * lat));
        const double ba_bc_1 = acos_clip((lat * lat - lab * lab - lcb * lcb) / (-2.0 * lab * lcb));
        const double h0 = 0.5 * (ac_ab_1 - ac_ab_0), s0 = std::sin(h0);
        const Quat r0{std::cos(h0), s0 * rr.x, s0 * rr.y, s0 * rr.z};
        const double h1 = 0.5 * (ba_bc_1 - ba_bc_0), s1 = std::sin(h1);
        const Quat r1{std::cos(h1), s1 * rr.x, s1 * rr.y, s1 * rr.z};
        const Vec3 ta = unit_eps(tx - ax, ty - ay, tz - az);
        const double h2 = 0.5 * acos_clip(ca.x * ta.x + ca.y * ta.y + ca.z * ta.z);
        const Vec3 wv = unit_eps(ca.y * ta.z - ca.z * ta.y, ca.z * ta.x - ca.x * ta.z, ca.x * ta.y - ca.y * ta.x);
        const double s2 = std::sin(h2);
        const Quat r2{std::cos(h2), s2 * wv.x, s2 * wv.y, s2 * wv.z};
        const Quat g{RG[4 * i], RG[4 * i + 1], RG[4 * i + 2], RG[4 * i + 3]};
        Quat q = qmul(r0, g);
        q = qmul(r2, q);
        q = qmul({PG[4 * i], -PG[4 * i + 1], -PG[4 * i + 2], -PG[4 * i + 3]}, q);
        root_out[4 * i] = q.w, root_out[4 * i + 1] = q.x, root_out[4 * i + 2] = q.y, root_out[4 * i + 3] = q.z;
        q = qmul(r1, {MG[4 * i], MG[4 * i + 1], MG[4 * i + 2], MG[4 * i + 3]});
        q = qmul(qconj(g), q);
        mid_out[4 * i] = q.w, mid_out[4 * i + 1] = q.x, mid_out[4 * i + 2] = q.y, mid_out[4 * i + 3] = q.z;
    }
}

}  // namespace jointlimits

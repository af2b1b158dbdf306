// Implicit-surface limits: metaball fields sampled on a voxel grid, blended (coupled limits),
// with trilinear contains and projection by gradient march + bisection with false-position steps
// (jointlimits.limits.implicit).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "shape_frame.hpp"
#include "step.hpp"

namespace jointlimits {

/// Most nodes K * nx * ny * nz an implicit or coupled limit's fields may hold (float32: 256 MB).
constexpr int64_t kMaxFieldNodes = int64_t(1) << 26;
/// Most parent cells of a coupled limit.
constexpr int64_t kMaxCoupledCells = int64_t(1) << 20;
/// An implicit grid's cell (limit-space radians): finer is not a limit of measured motion and would
/// make a march of kMarchSteps steps never reach the shape (a parent grid of one cell may be coarse).
constexpr double kMinCell = 1e-4, kMaxCell = 1e3;

/// Throws ShapeError unless an implicit field's frame and grid make sense in limit space: finite,
/// orthonormal frame, origin and position within kMaxLimitCoord, cell in [kMinCell, kMaxCell],
/// each extent >= 2 and the nodes within kMaxFieldNodes.
inline void validate_field(const double* pos, const double* rot, const double* origin, double cell, int64_t K,
                           int64_t nx, int64_t ny, int64_t nz) {
    require_finite(pos, 3, kMaxLimitCoord, "implicit position");
    require_finite(rot, 9, 1.0 + 1e-6, "implicit rotation");
    require_orthonormal(rot, 3, "implicit rotation");
    require_finite(origin, 3, kMaxLimitCoord, "implicit origin");
    require(std::isfinite(cell) && cell >= kMinCell && cell <= kMaxCell,
            "implicit cell must be in [" + std::to_string(kMinCell) + ", " + std::to_string(kMaxCell) + "] radians");
    require(K >= 1 && nx >= 2 && ny >= 2 && nz >= 2, "implicit fields must be [K, nx, ny, nz] with K >= 1, each extent >= 2");
    require(nx <= kMaxFieldNodes && ny <= kMaxFieldNodes && nz <= kMaxFieldNodes &&
                K * nx <= kMaxFieldNodes && K * nx * ny <= kMaxFieldNodes && K * nx * ny * nz <= kMaxFieldNodes,
            "implicit fields hold more than " + std::to_string(kMaxFieldNodes) + " nodes");
}

/// Throws ShapeError unless a coupled limit's parent grid makes sense: origin finite within
/// kMaxLimitCoord, cell in [kMinCell, kMaxCell], cells [nx, ny, nz] within kMaxCoupledCells, each
/// naming one of the K fields.
inline void validate_coupled(const double* porigin, double pcell, const int64_t* cells, int64_t nx, int64_t ny,
                             int64_t nz, int64_t K) {
    require_finite(porigin, 3, kMaxLimitCoord, "coupled parent origin");
    require(std::isfinite(pcell) && pcell >= kMinCell && pcell <= kMaxCell,
            "coupled parent cell must be in [" + std::to_string(kMinCell) + ", " + std::to_string(kMaxCell) + "] radians");
    require(nx >= 1 && ny >= 1 && nz >= 1 && nx <= kMaxCoupledCells && nx * ny <= kMaxCoupledCells &&
                nx * ny * nz <= kMaxCoupledCells,
            "coupled parent cells must be [nx, ny, nz], each >= 1, at most " + std::to_string(kMaxCoupledCells));
    for (int64_t i = 0, n = nx * ny * nz; i < n; ++i)
        require(cells[i] >= 0 && cells[i] < K, "a coupled parent cell names a field that does not exist");
}

/// floor(x) clamped to [lo, hi], NaN to lo: an index that is never out of range, whatever x is.
inline int64_t clamped_index(double x, int64_t lo, int64_t hi) {
    if (!(x > static_cast<double>(lo))) return lo;  // NaN too
    if (!(x < static_cast<double>(hi))) return hi;
    return std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(x), lo), hi);
}

/// K fields F [K, nx, ny, nz] (float32, as stored; read into double arithmetic), their nodes'
/// distances to the inside D and nearest
/// inside node NEAR (flat index) per field, in a frame: local = R^T (x - pos), grid coordinates
/// (local - origin) / cell. rot is row-major with the frame's axes as columns.
struct ImplicitField {
    const float* F;
    const float* D;
    const int32_t* NEAR;
    int64_t K, nx, ny, nz;
    const double* pos;
    const double* rot;
    const double* origin;
    double cell;
    /// per grid cell [nx-1, ny-1, nz-1]: the largest value of any field at any of its corners, so a
    /// blend there (weights >= 0 summing to 1) is at most that: 0 means the blend is 0 whatever the
    /// weights (one read, not 8 corners of each field); null: unknown
    const float* cmax = nullptr;
};

namespace implicit_detail {

constexpr double kMarchStep = 0.5;  // gradient-march step, in cells
constexpr int kMarchSteps = 64;
constexpr int kBisections = 20;  // crossing to 2^-20 of a half cell
constexpr double kSafety = 1e-7;  // results read at least threshold * (1 + kSafety)

struct FG {
    double f, dx, dy, dz;
};

/// Blended field sum_t ws[t] F[ids[t]] and, with kGrad, its gradient at grid coordinates (0 outside
/// the grid); the value's sums are the same either way.
template <bool kGrad = true>
inline FG eval(const ImplicitField& S, const int64_t* ids, const double* ws, int64_t m, double gx, double gy,
               double gz) {
    const int64_t nx = S.nx, ny = S.ny, nz = S.nz;
    if (!(gx >= 0.0 && gy >= 0.0 && gz >= 0.0 && gx <= nx - 1 && gy <= ny - 1 && gz <= nz - 1)) return {0, 0, 0, 0};
    const int64_t i = std::min<int64_t>(static_cast<int64_t>(gx), nx - 2);
    const int64_t j = std::min<int64_t>(static_cast<int64_t>(gy), ny - 2);
    const int64_t k = std::min<int64_t>(static_cast<int64_t>(gz), nz - 2);
    FG r{0, 0, 0, 0};
    if (S.cmax != nullptr && S.cmax[(i * (ny - 1) + j) * (nz - 1) + k] == 0.0f) return r;
    const double fx = gx - i, fy = gy - j, fz = gz - k;
    const int64_t sy = nz, sx = ny * nz;
    for (int64_t t = 0; t < m; ++t) {
        const double w = ws[t];
        if (w == 0.0) continue;
        const float* G = S.F + ids[t] * nx * ny * nz + i * sx + j * sy + k;
        const double c000 = G[0], c100 = G[sx], c010 = G[sy], c110 = G[sx + sy];
        const double c001 = G[1], c101 = G[sx + 1], c011 = G[sy + 1], c111 = G[sx + sy + 1];
        const double a00 = c000 + (c100 - c000) * fx;
        const double a10 = c010 + (c110 - c010) * fx;
        const double a01 = c001 + (c101 - c001) * fx;
        const double a11 = c011 + (c111 - c011) * fx;
        const double b0 = a00 + (a10 - a00) * fy;
        const double b1 = a01 + (a11 - a01) * fy;
        r.f += w * (b0 + (b1 - b0) * fz);
        if (!kGrad) continue;
        const double ex0 = (c100 - c000) + ((c110 - c010) - (c100 - c000)) * fy;
        const double ex1 = (c101 - c001) + ((c111 - c011) - (c101 - c001)) * fy;
        r.dx += w * (ex0 + (ex1 - ex0) * fz);
        r.dy += w * ((a10 - a00) + ((a11 - a01) - (a10 - a00)) * fz);
        r.dz += w * (b1 - b0);
    }
    return r;
}

inline void to_grid(const ImplicitField& S, double x, double y, double z, double inv, double& gx, double& gy,
                    double& gz) {
    const double* R = S.rot;
    const double dx = x - S.pos[0], dy = y - S.pos[1], dz = z - S.pos[2];
    const double u = R[0] * dx + R[3] * dy + R[6] * dz;
    const double v = R[1] * dx + R[4] * dy + R[7] * dz;
    const double w = R[2] * dx + R[5] * dy + R[8] * dz;
    gx = (u - S.origin[0]) * inv, gy = (v - S.origin[1]) * inv, gz = (w - S.origin[2]) * inv;
}

inline void from_grid(const ImplicitField& S, double gx, double gy, double gz, const double* normal, double& x,
                      double& y, double& z) {
    const double* R = S.rot;
    const double u = S.origin[0] + gx * S.cell, v = S.origin[1] + gy * S.cell, w = S.origin[2] + gz * S.cell;
    x = R[0] * u + R[1] * v + R[2] * w + S.pos[0];
    y = R[3] * u + R[4] * v + R[5] * w + S.pos[1];
    z = R[6] * u + R[7] * v + R[8] * w + S.pos[2];
    const double d = x * normal[0] + y * normal[1] + z * normal[2];  // sections: stay exactly in the plane
    x -= d * normal[0], y -= d * normal[1], z -= d * normal[2];
}

/// Between an outside point a and an inside point b: a point inside, reading at most 4e-7 above
/// the threshold's mark (or within 2^-20 of |b - a| of the crossing). Regula falsi with the
/// Illinois rule (along the segment the field is smooth piecewise cubic, so it takes a few reads
/// where bisection took 20), halving when it stalls; b stays inside throughout.
inline void crossing(const ImplicitField& S, const int64_t* ids, const double* ws, int64_t m, double thr, double fa,
                     double fb, double ax, double ay, double az, double& bx, double& by, double& bz) {
    const double dx = bx - ax, dy = by - ay, dz = bz - az;
    // aim a little above the threshold: where the result lands, rounding on its way back to
    // limit space must still read inside (the caller checks thr * (1 + kSafety)), so it should
    // not sit on the crossing itself
    const double level = thr * (1.0 + 4.0 * kSafety);
    double ta = 0.0, tb = 1.0;
    // fa, fb: the blend at a and b when the caller has read it (NaN: read it here)
    double ga = (fa == fa ? fa : eval<false>(S, ids, ws, m, ax, ay, az).f) - level;
    double gb = (fb == fb ? fb : eval<false>(S, ids, ws, m, bx, by, bz).f) - level;
    if (gb < 0.0) return;  // b is inside, if barely: the caller pushes it on
    if (!(ga < 0.0)) ga = -gb;  // not a bracket by value: halving first
    int side = 0;
    constexpr double kWidth = 1.0 / (1 << kBisections);
    const double close = 4.0 * kSafety * thr;  // b reads between thr (1 + 4 kSafety) and thr (1 + 8 kSafety)
    for (int it = 0; it < 4 * kBisections && tb - ta > kWidth && gb > close; ++it) {
        double t = tb - gb * (tb - ta) / (gb - ga);
        const double w = tb - ta;
        if (!(t > ta + 0.01 * w && t < tb - 0.01 * w) || it % 4 == 3) t = 0.5 * (ta + tb);  // stalled: halve
        const double g = eval<false>(S, ids, ws, m, ax + dx * t, ay + dy * t, az + dz * t).f - level;
        if (g >= 0.0) {
            tb = t, gb = g;
            if (side == 1) ga *= 0.5;
            side = 1;
        } else {
            ta = t, ga = g;
            if (side == -1) gb *= 0.5;
            side = -1;
        }
    }
    if (tb < 1.0) bx = ax + dx * tb, by = ay + dy * tb, bz = az + dz * tb;
}

/// The grid node nearest grid coordinates (x, y, z), clamped to the grid.
inline void node(const ImplicitField& S, double x, double y, double z, int64_t& i, int64_t& j, int64_t& k) {
    i = clamped_index(std::floor(x + 0.5), 0, S.nx - 1);
    j = clamped_index(std::floor(y + 0.5), 0, S.ny - 1);
    k = clamped_index(std::floor(z + 0.5), 0, S.nz - 1);
}

/// Where the ray from g along s enters the grid box (g itself if inside or missed).
inline void enter(const ImplicitField& S, double gx, double gy, double gz, double sx, double sy, double sz,
                  double& ox, double& oy, double& oz) {
    const double nx = static_cast<double>(S.nx), ny = static_cast<double>(S.ny), nz = static_cast<double>(S.nz);
    double t = 0.0;
    if (gx < 0.0 && sx > 0.0)
        t = std::max(t, -gx / sx);
    else if (gx > nx - 1 && sx < 0.0)
        t = std::max(t, (nx - 1 - gx) / sx);
    if (gy < 0.0 && sy > 0.0)
        t = std::max(t, -gy / sy);
    else if (gy > ny - 1 && sy < 0.0)
        t = std::max(t, (ny - 1 - gy) / sy);
    if (gz < 0.0 && sz > 0.0)
        t = std::max(t, -gz / sz);
    else if (gz > nz - 1 && sz < 0.0)
        t = std::max(t, (nz - 1 - gz) / sz);
    ox = gx + sx * t, oy = gy + sy * t, oz = gz + sz * t;
}

/// Where the gradient gives no direction: the first inside point on the segment to the nearest
/// inside node of field kf (moved onto the plane of a section), by sphere tracing on the nodes'
/// distances to the inside, then the crossing; true if it found one (else the node, outside the
/// blend).
inline bool toward_nearest(const ImplicitField& S, int64_t kf, const int64_t* ids, const double* ws, int64_t m,
                           double thr, double gx, double gy, double gz, double nlx, double nly, double nlz,
                           double poff, double cx0, double cy0, double cz0, double& rx, double& ry, double& rz) {
    const int64_t nyz = S.ny * S.nz, nxyz = S.nx * nyz;
    double ex, ey, ez;
    // outside the grid: look up from where the segment toward the shape's centre enters it
    enter(S, gx, gy, gz, cx0 - gx, cy0 - gy, cz0 - gz, ex, ey, ez);
    int64_t i, j, k;
    node(S, ex, ey, ez, i, j, k);
    const int64_t b = S.NEAR[kf * nxyz + i * nyz + j * S.nz + k];
    double bx = static_cast<double>(b / nyz), by = static_cast<double>((b / S.nz) % S.ny),
           bz = static_cast<double>(b % S.nz);
    const double d = bx * nlx + by * nly + bz * nlz - poff;
    bx -= d * nlx, by -= d * nly, bz -= d * nlz;
    double sx = bx - gx, sy = by - gy, sz = bz - gz;
    const double L = std::sqrt(sx * sx + sy * sy + sz * sz);
    rx = bx, ry = by, rz = bz;
    if (L == 0.0) return false;
    sx /= L, sy /= L, sz /= L;
    double px, py, pz, fp = std::nan("");
    enter(S, gx, gy, gz, sx, sy, sz, px, py, pz);  // the field is 0 outside the grid
    double t = std::min(L, std::sqrt((px - gx) * (px - gx) + (py - gy) * (py - gy) + (pz - gz) * (pz - gz)));
    while (t < L) {
        node(S, px, py, pz, i, j, k);
        t = std::min(L, t + std::max(static_cast<double>(S.D[kf * nxyz + i * nyz + j * S.nz + k]) - 1.0, kMarchStep));
        double cx = gx + sx * t, cy = gy + sy * t, cz = gz + sz * t;
        const double fc = eval<false>(S, ids, ws, m, cx, cy, cz).f;
        if (fc >= thr) {
            crossing(S, ids, ws, m, thr, fp, fc, px, py, pz, cx, cy, cz);
            rx = cx, ry = cy, rz = cz;
            return true;
        }
        px = cx, py = cy, pz = cz, fp = fc;
    }
    return false;
}

/// Up the blend's gradient (kept in the plane of a section) from (cx, cy, cz), where it reads v, in
/// steps of kMarchStep cells: true once a step lands inside, (cx, cy, cz) then moved to the crossing
/// with the step before; false where the gradient vanishes or after kMarchSteps steps.
inline bool climb(const ImplicitField& S, const int64_t* ids, const double* ws, int64_t m, double thr, double nlx,
                  double nly, double nlz, FG v, double& cx, double& cy, double& cz) {
    for (int s = 0; s < kMarchSteps; ++s) {
        const double dn = v.dx * nlx + v.dy * nly + v.dz * nlz;
        v.dx -= dn * nlx, v.dy -= dn * nly, v.dz -= dn * nlz;
        const double g = std::sqrt(v.dx * v.dx + v.dy * v.dy + v.dz * v.dz);
        if (v.f <= 0.0 || g < 1e-9) return false;
        const double px = cx, py = cy, pz = cz, fp = v.f;
        const double k = kMarchStep / g;
        cx += v.dx * k, cy += v.dy * k, cz += v.dz * k;
        v = eval(S, ids, ws, m, cx, cy, cz);
        if (v.f >= thr) {
            crossing(S, ids, ws, m, thr, fp, v.f, px, py, pz, cx, cy, cz);
            return true;
        }
    }
    return false;
}

/// eval's value alone (the same sums, so the same bits as eval(...).f).
inline double eval_value(const ImplicitField& S, const int64_t* ids, const double* ws, int64_t m, double gx,
                         double gy, double gz) {
    return eval<false>(S, ids, ws, m, gx, gy, gz).f;
}

/// The largest corner value of any field in the cell holding grid coordinates (gx, gy, gz): 0
/// outside the grid (every field is 0 there), -1 when the fields have no cell bounds.
inline double cell_bound(const ImplicitField& S, double gx, double gy, double gz) {
    if (!(gx >= 0.0 && gy >= 0.0 && gz >= 0.0 && gx <= S.nx - 1 && gy <= S.ny - 1 && gz <= S.nz - 1)) return 0.0;
    if (S.cmax == nullptr) return -1.0;
    const int64_t ci = std::min<int64_t>(static_cast<int64_t>(gx), S.nx - 2);
    const int64_t cj = std::min<int64_t>(static_cast<int64_t>(gy), S.ny - 2);
    const int64_t ck = std::min<int64_t>(static_cast<int64_t>(gz), S.nz - 2);
    return S.cmax[(ci * (S.ny - 1) + cj) * (S.nz - 1) + ck];
}

/// A blend is at most its cell's bound M, and its gradient (grid units) at most sqrt(3) M: where
/// M times this is below the threshold (with a margin far above rounding), the first-order inside
/// test with tolerance tol says outside.
inline double bound_growth(double tol, double inv) {
    return (1.0 + 1e-9) * (1.0 + std::max(tol, 0.0) * inv * 1.7320508075688772);
}

}  // namespace implicit_detail

/// Inside test of n points [n, 3] (field >= thr, or within tol of the surface to first order);
/// blend rows ids/ws [R, m] with R = 1 (shared) or n.
inline void implicit_contains(const ImplicitField& S, const double* pts, int64_t n, double thr, const int64_t* ids,
                              const double* ws, int64_t R, int64_t m, double tol, bool* out) {
    using namespace implicit_detail;
    const double inv = 1.0 / S.cell;
    const double grow = bound_growth(tol, inv);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t r = R == 1 ? 0 : i;
        double gx, gy, gz;
        to_grid(S, pts[3 * i], pts[3 * i + 1], pts[3 * i + 2], inv, gx, gy, gz);
        const double M = cell_bound(S, gx, gy, gz);  // < 0: unknown
        if (M >= 0.0 && M * grow < thr) {
            out[i] = false;
            continue;
        }
        // the value first; the gradient (at most sqrt(3) M in grid units) only for the points whose
        // first-order test it could decide
        const double f = eval_value(S, ids + r * m, ws + r * m, m, gx, gy, gz);
        if (f >= thr || !(tol > 0.0 && f > 0.0) ||
            (M >= 0.0 && (f + tol * inv * 1.7320508075688772 * M) * (1.0 + 1e-9) < thr)) {
            out[i] = f >= thr;
            continue;
        }
        const FG v = eval(S, ids + r * m, ws + r * m, m, gx, gy, gz);
        out[i] = v.f >= thr ||
                 (tol > 0.0 && v.f > 0.0 && v.f + tol * inv * std::sqrt(v.dx * v.dx + v.dy * v.dy + v.dz * v.dz) >= thr);
    }
}

/// Field value and gradient (in limit space) [n, 4] of n points.
inline void implicit_field(const ImplicitField& S, const double* pts, int64_t n, const int64_t* ids, const double* ws,
                           int64_t R, int64_t m, double* out) {
    using namespace implicit_detail;
    const double inv = 1.0 / S.cell;
    const double* Rm = S.rot;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t r = R == 1 ? 0 : i;
        double gx, gy, gz;
        to_grid(S, pts[3 * i], pts[3 * i + 1], pts[3 * i + 2], inv, gx, gy, gz);
        const FG v = eval(S, ids + r * m, ws + r * m, m, gx, gy, gz);
        out[4 * i] = v.f;
        // gradient in limit space: R (d / cell)
        out[4 * i + 1] = (Rm[0] * v.dx + Rm[1] * v.dy + Rm[2] * v.dz) * inv;
        out[4 * i + 2] = (Rm[3] * v.dx + Rm[4] * v.dy + Rm[5] * v.dz) * inv;
        out[4 * i + 3] = (Rm[6] * v.dx + Rm[7] * v.dy + Rm[8] * v.dz) * inv;
    }
}

/// Project n limit-space points onto the blended implicit limit (inside points copied); normal
/// is the plane normal of a section (zero for a 3D shape).
inline void implicit_project(const ImplicitField& S, const double* pts, int64_t n, double thr, const int64_t* ids,
                             const double* ws, int64_t R, int64_t m, const double* normal, double* out) {
    using namespace implicit_detail;
    const double inv = 1.0 / S.cell;
    const double* Rm = S.rot;
    // the plane constraint of a section in grid directions: n_l . g = poff
    const double nlx = Rm[0] * normal[0] + Rm[3] * normal[1] + Rm[6] * normal[2];
    const double nly = Rm[1] * normal[0] + Rm[4] * normal[1] + Rm[7] * normal[2];
    const double nlz = Rm[2] * normal[0] + Rm[5] * normal[1] + Rm[8] * normal[2];
    const double cx0 = -S.origin[0] * inv, cy0 = -S.origin[1] * inv, cz0 = -S.origin[2] * inv;  // the frame's centre
    const double poff = -(nlx * S.origin[0] + nly * S.origin[1] + nlz * S.origin[2] + normal[0] * S.pos[0] +
                          normal[1] * S.pos[1] + normal[2] * S.pos[2]) *
                        inv;
    for (int64_t i = 0; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        const int64_t r = R == 1 ? 0 : i;
        const int64_t* idr = ids + r * m;
        const double* wr = ws + r * m;
        double gx, gy, gz;
        to_grid(S, x, y, z, inv, gx, gy, gz);
        FG v = eval(S, idr, wr, m, gx, gy, gz);
        if (v.f >= thr) {
            out[3 * i] = x, out[3 * i + 1] = y, out[3 * i + 2] = z;
            continue;
        }
        double cx = gx, cy = gy, cz = gz;
        if (!climb(S, idr, wr, m, thr, nlx, nly, nlz, v, cx, cy, cz)) {
            // no usable gradient: toward the nearest inside node of the most weighted field, up the
            // blend's gradient from there if that node is not inside the blend, then the next field
            int64_t tried = 0;
            for (int64_t a = 0; a < m; ++a) {
                int64_t best = -1;
                for (int64_t t = 0; t < m; ++t)
                    if (!((tried >> t) & 1) && wr[t] > 0.0 && (best < 0 || wr[t] > wr[best])) best = t;
                if (best < 0) break;
                tried |= int64_t(1) << best;
                if (toward_nearest(S, idr[best], idr, wr, m, thr, gx, gy, gz, nlx, nly, nlz, poff, cx0, cy0, cz0, cx,
                                   cy, cz))
                    break;
                const FG w = eval(S, idr, wr, m, cx, cy, cz);
                if (w.f >= thr || climb(S, idr, wr, m, thr, nlx, nly, nlz, w, cx, cy, cz)) break;
            }
        }
        double ox, oy, oz;
        from_grid(S, cx, cy, cz, normal, ox, oy, oz);
        // rounding on the way back (and through a rotation) must not leave the result just
        // outside (idempotence): push it on along the way it came until it reads a little
        // inside from limit space
        double sx = cx - gx, sy = cy - gy, sz = cz - gz;
        const double sn = std::sqrt(sx * sx + sy * sy + sz * sz);
        if (sn > 0.0) sx /= sn, sy /= sn, sz /= sn;
        double e = 1e-9;
        for (int s = 0; s < 40; ++s) {
            double hx, hy, hz;
            to_grid(S, ox, oy, oz, inv, hx, hy, hz);
            if (eval(S, idr, wr, m, hx, hy, hz).f >= thr * (1.0 + kSafety)) break;
            from_grid(S, cx + sx * e, cy + sy * e, cz + sz * e, normal, ox, oy, oz);
            e *= 2.0;
        }
        out[3 * i] = ox, out[3 * i + 1] = oy, out[3 * i + 2] = oz;
    }
}

/// Add a soft-object metaball (1 - r^2 / R^2)^3 of radius `radius` (cells) at each of n integer
/// centres [n, 3] to the grid F [nx, ny, nz].
inline void implicit_splat(const int64_t* centres, int64_t n, double radius, double* F, int64_t nx, int64_t ny,
                           int64_t nz) {
    const int64_t r = static_cast<int64_t>(std::ceil(radius));
    const double rr = radius * radius;
    for (int64_t c = 0; c < n; ++c) {
        const int64_t ci = centres[3 * c], cj = centres[3 * c + 1], ck = centres[3 * c + 2];
        for (int64_t i = std::max<int64_t>(0, ci - r); i < std::min(nx, ci + r + 1); ++i)
            for (int64_t j = std::max<int64_t>(0, cj - r); j < std::min(ny, cj + r + 1); ++j)
                for (int64_t k = std::max<int64_t>(0, ck - r); k < std::min(nz, ck + r + 1); ++k) {
                    const double d2 = static_cast<double>((i - ci) * (i - ci) + (j - cj) * (j - cj) + (k - ck) * (k - ck));
                    if (d2 < rr) {
                        const double a = 1.0 - d2 / rr;
                        F[(i * ny + j) * nz + k] += a * a * a;
                    }
                }
    }
}

/// Raise to `lift` the corner nodes of every grid cell holding a point (grid coordinates g [n, 3])
/// whose field is below it; returns how many points were lifted.
inline int64_t implicit_lift_points(const double* g, int64_t n, double lift, double* F, int64_t nx, int64_t ny,
                                    int64_t nz) {
    // the field's value at g, as implicit_detail::eval computes it (F is float64 while fitting)
    const auto value = [&](double gx, double gy, double gz) {
        if (!(gx >= 0.0 && gy >= 0.0 && gz >= 0.0 && gx <= nx - 1 && gy <= ny - 1 && gz <= nz - 1)) return 0.0;
        const int64_t i = std::min<int64_t>(static_cast<int64_t>(gx), nx - 2);
        const int64_t j = std::min<int64_t>(static_cast<int64_t>(gy), ny - 2);
        const int64_t k = std::min<int64_t>(static_cast<int64_t>(gz), nz - 2);
        const double fx = gx - i, fy = gy - j, fz = gz - k;
        const int64_t sy = nz, sx = ny * nz;
        const double* G = F + i * sx + j * sy + k;
        const double a00 = G[0] + (G[sx] - G[0]) * fx;
        const double a10 = G[sy] + (G[sx + sy] - G[sy]) * fx;
        const double a01 = G[1] + (G[sx + 1] - G[1]) * fx;
        const double a11 = G[sy + 1] + (G[sx + sy + 1] - G[sy + 1]) * fx;
        const double b0 = a00 + (a10 - a00) * fy;
        const double b1 = a01 + (a11 - a01) * fy;
        return b0 + (b1 - b0) * fz;
    };
    int64_t lifted = 0;
    for (int64_t p = 0; p < n; ++p) {
        if (value(g[3 * p], g[3 * p + 1], g[3 * p + 2]) >= lift) continue;
        const int64_t i = clamped_index(g[3 * p], 0, nx - 2);
        const int64_t j = clamped_index(g[3 * p + 1], 0, ny - 2);
        const int64_t k = clamped_index(g[3 * p + 2], 0, nz - 2);
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
                for (int c = 0; c < 2; ++c) {
                    double& v = F[((i + a) * ny + (j + b)) * nz + (k + c)];
                    if (v < lift) v = lift;
                }
        ++lifted;
    }
    return lifted;
}

/// Trilinear weights of the 8 parent cell centres around each of n parent limit-space points vp
/// [n, 3] (clamped to the cell grid cells [nx, ny, nz] of field ids) -> ids, ws [n, 8].
inline void coupled_weights(const double* vp, int64_t n, const double* porigin, double pcell, const int64_t* cells,
                            int64_t nx, int64_t ny, int64_t nz, int64_t* ids, double* ws) {
    const int64_t dims[3] = {nx, ny, nz};
    for (int64_t i = 0; i < n; ++i) {
        int64_t i0[3];
        double t[3];
        for (int a = 0; a < 3; ++a) {
            double f = (vp[3 * i + a] - porigin[a]) / pcell - 0.5;
            // NaN (a NaN rotation or reference) to the first cell: never an index out of range
            f = f > 0.0 ? std::min(f, dims[a] - 1.0) : 0.0;
            const int64_t k = clamped_index(f, 0, std::max<int64_t>(dims[a] - 2, 0));
            i0[a] = k;
            t[a] = f - k;
        }
        int q = 0;
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
                for (int c = 0; c < 2; ++c) {
                    const int64_t ii = std::min(i0[0] + a, nx - 1), jj = std::min(i0[1] + b, ny - 1),
                                  kk = std::min(i0[2] + c, nz - 1);
                    ids[8 * i + q] = cells[(ii * ny + jj) * nz + kk];
                    ws[8 * i + q] = (a ? t[0] : 1.0 - t[0]) * (b ? t[1] : 1.0 - t[1]) * (c ? t[2] : 1.0 - t[2]);
                    ++q;
                }
    }
}

/// Whether the point (x, y, z) may be inside: its cell's bound (implicit_detail::cell_bound, times
/// grow) reaches thr. False settles the point as outside for any blend of the fields
/// (implicit_contains' first test).
inline bool may_be_inside(const ImplicitField& S, double x, double y, double z, double inv, double grow,
                          double thr) {
    double gx, gy, gz;
    implicit_detail::to_grid(S, x, y, z, inv, gx, gy, gz);
    const double M = implicit_detail::cell_bound(S, gx, gy, gz);
    return !(M >= 0.0 && M * grow < thr);
}

/// Inside test of child rotations q [n, 4] (reference ref) for their parents' rotations pq [n, 4]
/// (parent reference pref) against a coupled limit: both to limit space, the 8 parent cells' blend
/// (coupled_weights), the blended field at the child's point and, with long_cover, at its other
/// cover; in chunks, so no blend array is ever stored. The same results as those steps in turn.
inline void coupled_contains(const ImplicitField& S, const double* q, const double* ref, const double* pq,
                             const double* pref, int64_t n, const double* porigin, double pcell, const int64_t* cells,
                             int64_t cx, int64_t cy, int64_t cz, double thr, double tol, bool long_cover, bool* out) {
    constexpr int64_t B = 128;
    double vp[3 * B], v[3 * B], v2[3 * B], ws[8 * B], pp[4 * B];
    int64_t ids[8 * B], rows[B];
    bool in1[B], in2[B];
    const double inv = 1.0 / S.cell;
    // implicit_contains' bound test, which needs no parent: a point outside it is outside whatever
    // the blend (most random rotations are), so only the others get their parent's blend
    const double grow = implicit_detail::bound_growth(tol, inv);
    for (int64_t s0 = 0; s0 < n; s0 += B) {
        const int64_t b = std::min(B, n - s0);
        to_limit_space(q + 4 * s0, b, ref, v);
        int64_t nb = 0;
        for (int64_t i = 0; i < b; ++i) {
            const double x = v[3 * i], y = v[3 * i + 1], z = v[3 * i + 2];
            bool may = may_be_inside(S, x, y, z, inv, grow, thr);
            double ox = 0.0, oy = 0.0, oz = 0.0;
            if (long_cover) {
                const double nv = std::sqrt(x * x + y * y + z * z);
                const double k = nv > 1e-12 ? 1.0 - kTwoPi / nv : 0.0;
                ox = x * k, oy = y * k, oz = z * k;
                may = may || may_be_inside(S, ox, oy, oz, inv, grow, thr);
            }
            out[s0 + i] = false;
            if (!may) continue;
            rows[nb] = i;
            v[3 * nb] = x, v[3 * nb + 1] = y, v[3 * nb + 2] = z;
            v2[3 * nb] = ox, v2[3 * nb + 1] = oy, v2[3 * nb + 2] = oz;
            for (int a = 0; a < 4; ++a) pp[4 * nb + a] = pq[4 * (s0 + i) + a];
            ++nb;
        }
        if (nb == 0) continue;
        to_limit_space(pp, nb, pref, vp);
        coupled_weights(vp, nb, porigin, pcell, cells, cx, cy, cz, ids, ws);
        implicit_contains(S, v, nb, thr, ids, ws, nb, 8, tol, in1);
        if (long_cover) implicit_contains(S, v2, nb, thr, ids, ws, nb, 8, tol, in2);
        for (int64_t t = 0; t < nb; ++t) out[s0 + rows[t]] = in1[t] || (long_cover && in2[t]);
    }
}

}  // namespace jointlimits

// Limit-space projections: box, oriented box, ellipsoid (exact Newton), k-DOP (the reference's
// slab clamps and the exact closest point), soften, and greedy subsampling on a hash grid.
// Ports of jointlimits.limits' kernels with the same operation order.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <limits>
#include <vector>

#include "fastmath.hpp"

namespace jointlimits {

inline double clampd(double x, double lo, double hi) {
    // numba's min(max(x, lo), hi) for finite values
    const double m = x > lo ? x : lo;
    return m < hi ? m : hi;
}

// ------------------------------------------------------------------ ellipsoid
/// Closest point to (u, v, w) on the ellipsoid with squared radii ss (Newton on S(h)^-1/2 = 1).
inline void ellipsoid_local(double u, double v, double w, double ssx, double ssy, double ssz, int iterations,
                            double& ox, double& oy, double& oz) {
    double h, lo;
    if (fastmath::ellipsoid_start(u, v, w, ssx, ssy, ssz, h, lo)) {
        for (int it = 0; it < iterations; ++it) {
            double S = 0.0, D = 0.0;
            if (ssx > 0.0) {
                const double t = 1.0 / (ssx + h), a = u * t, g = ssx * a * a;
                S += g;
                D += g * t;
            }
            if (ssy > 0.0) {
                const double t = 1.0 / (ssy + h), a = v * t, g = ssy * a * a;
                S += g;
                D += g * t;
            }
            if (ssz > 0.0) {
                const double t = 1.0 / (ssz + h), a = w * t, g = ssz * a * a;
                S += g;
                D += g * t;
            }
            if (S <= 1.0 + 1e-15 || D <= 0.0) break;
            const double step = (S * std::sqrt(S) - S) / D;
            if (!(step > 0.0)) break;
            h += step;
            if (step <= 1e-9 * (h + lo)) break;
        }
    }
    ox = ssx + h > 0.0 ? u * ssx / (ssx + h) : 0.0;
    oy = ssy + h > 0.0 ? v * ssy / (ssy + h) : 0.0;
    oz = ssz + h > 0.0 ? w * ssz / (ssz + h) : 0.0;
}

/// |local / scale| <= 1 with zero radii handled (0/0 -> 0, x/0 -> outside).
inline bool ellipsoid_inside(double u, double v, double w, double sx, double sy, double sz) {
    double acc = 0.0;
    if (sx > 0.0) {
        const double a = u / sx;
        acc += a * a;
    } else if (u != 0.0)
        return false;
    if (sy > 0.0) {
        const double a = v / sy;
        acc += a * a;
    } else if (v != 0.0)
        return false;
    if (sz > 0.0) {
        const double a = w / sz;
        acc += a * a;
    } else if (w != 0.0)
        return false;
    return acc <= 1.0;
}

// ------------------------------------------------------------------ exact k-DOP
namespace detail {
/// Split g into z (orthogonal to the active normals) and r (g = z + N r); false when dependent.
inline bool solve_active(const double* G, const int64_t* act, int na, double gx, double gy, double gz, double* r,
                         double& zx, double& zy, double& zz) {
    if (na == 0) {
        zx = gx, zy = gy, zz = gz;
        return true;
    }
    if (na == 1) {
        const int64_t a = act[0];
        const double n0 = G[a * 3], n1 = G[a * 3 + 1], n2 = G[a * 3 + 2];
        const double nn = n0 * n0 + n1 * n1 + n2 * n2;
        const double c = (n0 * gx + n1 * gy + n2 * gz) / nn;
        r[0] = c;
        zx = gx - c * n0, zy = gy - c * n1, zz = gz - c * n2;
        return true;
    }
    if (na == 2) {
        const int64_t a = act[0], b = act[1];
        const double a0 = G[a * 3], a1 = G[a * 3 + 1], a2 = G[a * 3 + 2];
        const double b0 = G[b * 3], b1 = G[b * 3 + 1], b2 = G[b * 3 + 2];
        const double m00 = a0 * a0 + a1 * a1 + a2 * a2;
        const double m01 = a0 * b0 + a1 * b1 + a2 * b2;
        const double m11 = b0 * b0 + b1 * b1 + b2 * b2;
        const double det = m00 * m11 - m01 * m01;
        if (det <= 1e-14 * m00 * m11) {
            zx = zy = zz = 0.0;
            return false;
        }
        const double ca = a0 * gx + a1 * gy + a2 * gz;
        const double cb = b0 * gx + b1 * gy + b2 * gz;
        const double ra = (m11 * ca - m01 * cb) / det;
        const double rb = (m00 * cb - m01 * ca) / det;
        r[0] = ra;
        r[1] = rb;
        zx = gx - ra * a0 - rb * b0, zy = gy - ra * a1 - rb * b1, zz = gz - ra * a2 - rb * b2;
        return true;
    }
    const int64_t a = act[0], b = act[1], c = act[2];
    const double a0 = G[a * 3], a1 = G[a * 3 + 1], a2 = G[a * 3 + 2];
    const double b0 = G[b * 3], b1 = G[b * 3 + 1], b2 = G[b * 3 + 2];
    const double c0 = G[c * 3], c1 = G[c * 3 + 1], c2 = G[c * 3 + 2];
    const double bc0 = b1 * c2 - b2 * c1, bc1 = b2 * c0 - b0 * c2, bc2 = b0 * c1 - b1 * c0;
    const double det = a0 * bc0 + a1 * bc1 + a2 * bc2;
    zx = zy = zz = 0.0;
    if (std::abs(det) <= 1e-12) return false;
    const double ca0 = c1 * a2 - c2 * a1, ca1 = c2 * a0 - c0 * a2, ca2 = c0 * a1 - c1 * a0;
    const double ab0 = a1 * b2 - a2 * b1, ab1 = a2 * b0 - a0 * b2, ab2 = a0 * b1 - a1 * b0;
    r[0] = (gx * bc0 + gy * bc1 + gz * bc2) / det;
    r[1] = (gx * ca0 + gy * ca1 + gz * ca2) / det;
    r[2] = (gx * ab0 + gy * ab1 + gz * ab2) / det;
    return true;
}
}  // namespace detail

/// Whether the m half-spaces G x <= bnd come in exactly opposite pairs (row j + m/2 = -row j, as a
/// k-DOP's slabs are packed), so one dot product serves both.
inline bool kdop_paired(const double* G, int m) {
    if (m % 2 || m > 128) return false;
    const int h = m / 2;
    for (int j = 0; j < 3 * h; ++j)
        if (G[3 * h + j] != -G[j]) return false;
    return true;
}

namespace detail {
/// S[j] = G[j] . p - bnd[j] for every half-space; with opposite pairs one dot product per pair
/// (the negated sum equals the sum of the negated products bit for bit).
inline void kdop_slack(const double* G, const double* bnd, int m, bool paired, double x, double y, double z,
                       double* S) {
    if (paired) {
        const int h = m / 2;
        for (int j = 0; j < h; ++j) {
            const double d = G[j * 3] * x + G[j * 3 + 1] * y + G[j * 3 + 2] * z;
            S[j] = d - bnd[j];
            S[j + h] = -d - bnd[j + h];
        }
    } else {
        for (int j = 0; j < m; ++j) S[j] = G[j * 3] * x + G[j * 3 + 1] * y + G[j * 3 + 2] * z - bnd[j];
    }
}
/// The largest of S[0..m) by four independent maxima (a single running maximum is one long chain of
/// dependent compares).
inline double max_of(const double* S, int m) {
    const double inf = std::numeric_limits<double>::infinity();
    double m0 = -inf, m1 = -inf, m2 = -inf, m3 = -inf;
    int j = 0;
    for (; j + 4 <= m; j += 4) {
        m0 = S[j] > m0 ? S[j] : m0;
        m1 = S[j + 1] > m1 ? S[j + 1] : m1;
        m2 = S[j + 2] > m2 ? S[j + 2] : m2;
        m3 = S[j + 3] > m3 ? S[j + 3] : m3;
    }
    for (; j < m; ++j) m0 = S[j] > m0 ? S[j] : m0;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}
}  // namespace detail

/// Whether (u, v, w) satisfies G x <= bnd + tol; for m <= 128 the slacks are left in S[m] and their
/// largest in *top if given (pass them to kdop_exact_local, which then skips its first pass).
inline bool kdop_inside(const double* G, const double* bnd, int m, bool paired, double u, double v, double w,
                        double tol, double* S, double* top = nullptr) {
    if (m <= 128) {
        detail::kdop_slack(G, bnd, m, paired && m % 2 == 0, u, v, w, S);
        const double t = detail::max_of(S, m);
        if (top != nullptr) *top = t;
        return !(t > tol);
    }
    for (int j = 0; j < m; ++j)
        if (G[3 * j] * u + G[3 * j + 1] * v + G[3 * j + 2] * w - bnd[j] > tol) return false;
    return true;
}

/// The Gram matrix GG[j * m + k] = G_j . G_k of the half-spaces' normals (m <= 128), followed by
/// the reciprocals the shortcut would otherwise divide by on every point: 1 / GG[j, j] (m of them),
/// then 1 / (GG[j, j] GG[k, k] - GG[j, k]^2) per pair (m * m, 0 for nearly parallel pairs).
inline std::vector<double> kdop_gram(const double* G, int m) {
    std::vector<double> gg(m <= 128 ? std::size_t(m) * m * 2 + m : 0);
    if (m > 128) return gg;
    const std::size_t mm = std::size_t(m) * m;
    for (int j = 0; j < m; ++j)
        for (int k = 0; k < m; ++k)
            gg[std::size_t(j) * m + k] = G[3 * j] * G[3 * k] + G[3 * j + 1] * G[3 * k + 1] + G[3 * j + 2] * G[3 * k + 2];
    for (int j = 0; j < m; ++j) {
        const double d = gg[std::size_t(j) * m + j];
        gg[mm + j] = d > 1e-20 ? 1.0 / d : 0.0;
    }
    for (int j = 0; j < m; ++j)
        for (int k = 0; k < m; ++k) {
            const double a = gg[std::size_t(j) * m + j], d = gg[std::size_t(k) * m + k], b = gg[std::size_t(j) * m + k];
            const double det = a * d - b * b;
            gg[mm + m + std::size_t(j) * m + k] = det > 1e-12 * a * d ? 1.0 / det : 0.0;
        }
    return gg;
}

namespace detail {
/// Multipliers l of the planes A[0..na) (na <= 3) touching at the point closest to the original
/// one: GG_AA l = S0_A, by cofactors; false when the normals are (nearly) dependent.
inline bool kdop_multipliers(const double* GG, int m, const double* S0, const int* A, int na, double* l) {
    const std::size_t mm = std::size_t(m) * m;
    const double* c0 = GG + std::size_t(A[0]) * m;
    if (na == 1) {
        l[0] = S0[A[0]] * GG[mm + A[0]];
        return GG[mm + A[0]] != 0.0;
    }
    const double* c1 = GG + std::size_t(A[1]) * m;
    const double a = c0[A[0]], b = c0[A[1]], d = c1[A[1]];
    if (na == 2) {
        const double inv = GG[mm + m + std::size_t(A[0]) * m + A[1]];
        if (inv == 0.0) return false;
        l[0] = (d * S0[A[0]] - b * S0[A[1]]) * inv;
        l[1] = (a * S0[A[1]] - b * S0[A[0]]) * inv;
        return true;
    }
    const double* c2 = GG + std::size_t(A[2]) * m;
    const double c = c0[A[2]], e = c1[A[2]], f = c2[A[2]];
    const double C00 = d * f - e * e, C01 = c * e - b * f, C02 = b * e - c * d;
    const double det = a * C00 + b * C01 + c * C02;
    if (!(det > 1e-9 * a * d * f)) return false;
    const double C11 = a * f - c * c, C12 = b * c - a * e, C22 = a * d - b * b;
    const double s0 = S0[A[0]], s1 = S0[A[1]], s2 = S0[A[2]];
    const double inv = 1.0 / det;
    l[0] = (C00 * s0 + C01 * s1 + C02 * s2) * inv;
    l[1] = (C01 * s0 + C11 * s1 + C12 * s2) * inv;
    l[2] = (C02 * s0 + C12 * s1 + C22 * s2) * inv;
    return true;
}

/// The closest point of the k-DOP by constraint generation, from the slacks S0 of (u, v, w) and the
/// normals' Gram matrix GG alone, continuing from a state of kdop_kkt_shortcut: the planes
/// collected C[0..nc) and the closest point of their polytope, on the planes A[0..na) with
/// multipliers lam. While that point violates another plane, the plane joins C and the new closest
/// point is found among the subsets of C that hold it (the old point violated it, so it is active
/// in the new one), smallest first, by the optimality conditions within C. Every answer is checked
/// against all planes (non-negative multipliers, every other slack under half the tolerance, far
/// above the rounding of these updates), so it is the exact projection. False past five planes or
/// when no subset qualifies (the caller runs the general method).
[[gnu::noinline, gnu::cold]] inline bool kdop_kkt_general(double u, double v, double w, const double* G, int m,
                                                          double tol, const double* S0, const double* GG,
                                                          int* C, int nc, int* A, int na, double* lam,
                                                          double& ox, double& oy, double& oz) {
    const double inf = std::numeric_limits<double>::infinity();
    double S[128];
    const double half = 0.5 * tol;
    while (true) {
        const double* c0 = GG + std::size_t(A[0]) * m;
        if (na == 1) {
            for (int k = 0; k < m; ++k) S[k] = S0[k] - lam[0] * c0[k];
        } else if (na == 2) {
            const double* c1 = GG + std::size_t(A[1]) * m;
            for (int k = 0; k < m; ++k) S[k] = S0[k] - lam[0] * c0[k] - lam[1] * c1[k];
        } else {
            const double* c1 = GG + std::size_t(A[1]) * m;
            const double* c2 = GG + std::size_t(A[2]) * m;
            for (int k = 0; k < m; ++k) S[k] = S0[k] - lam[0] * c0[k] - lam[1] * c1[k] - lam[2] * c2[k];
        }
        for (int t = 0; t < nc; ++t) S[C[t]] = -inf;
        const double top = max_of(S, m);
        if (top <= half) {
            double x = u, y = v, z = w;
            for (int t = 0; t < na; ++t) {
                const double* g = G + 3 * A[t];
                x -= lam[t] * g[0], y -= lam[t] * g[1], z -= lam[t] * g[2];
            }
            ox = x, oy = y, oz = z;
            return true;
        }
        if (nc == 5) return false;
        int k = 0;
        while (S[k] != top) ++k;
        C[nc++] = k;
        // the subsets of C holding k, smallest first: {k}, {c, k}, {c1, c2, k}
        bool found = false;
        for (int size = 1; size <= 3 && !found; ++size) {
            const int others = nc - 1;
            for (int i = 0; i < (size >= 2 ? others : 1) && !found; ++i)
                for (int j = (size == 3 ? i + 1 : 0); j < (size == 3 ? others : 1) && !found; ++j) {
                    int B[3];
                    int nb = 0;
                    if (size >= 2) B[nb++] = C[i];
                    if (size == 3) B[nb++] = C[j];
                    B[nb++] = k;
                    double l[3];
                    if (!kdop_multipliers(GG, m, S0, B, nb, l)) continue;
                    bool ok = true;
                    for (int t = 0; t < nb; ++t) ok = ok && l[t] >= 0.0;
                    for (int t = 0; t < nc && ok; ++t) {  // the collected planes outside B hold
                        const int c = C[t];
                        double sc = S0[c];
                        for (int r = 0; r < nb; ++r) sc -= l[r] * GG[std::size_t(B[r]) * m + c];
                        bool in_b = false;
                        for (int r = 0; r < nb; ++r) in_b = in_b || B[r] == c;
                        ok = in_b || sc <= half;
                    }
                    if (ok) {
                        na = nb;
                        for (int t = 0; t < nb; ++t) A[t] = B[t], lam[t] = l[t];
                        found = true;
                    }
                }
        }
        if (!found) return false;
    }
}

/// The k-DOP's closest point when it lies on its most violated plane q; on q and the plane r most
/// violated after it; or on q, r and the next one, s (nearly every point), written out; other
/// points go on to kdop_kkt_general from the last of these that held. top0: the largest slack, if
/// known (NaN: not). A point whose answer lies on q gets the active-set method's first step, bit for
/// bit. False when neither settles the point.
inline bool kdop_kkt_shortcut(double u, double v, double w, const double* G, int m, double tol, const double* S0,
                              const double* GG, double& ox, double& oy, double& oz, double top0) {
    const double inf = std::numeric_limits<double>::infinity();
    const double top = top0 == top0 ? top0 : max_of(S0, m);
    if (!(top > tol)) return false;
    int q = 0;
    while (S0[q] != top) ++q;
    const double gx = G[q * 3], gy = G[q * 3 + 1], gz = G[q * 3 + 2];
    const double inv_z2 = GG[std::size_t(m) * m + q];
    if (inv_z2 == 0.0) return false;  // a zero normal
    const double t = top * inv_z2;  // top is the slack G_q . (u, v, w) - bnd_q
    const double* cq = GG + std::size_t(q) * m;
    double S1[128];
    for (int k = 0; k < m; ++k) S1[k] = S0[k] - t * cq[k];
    S1[q] = -inf;
    const double top1 = max_of(S1, m);
    if (top1 <= 0.5 * tol) {  // one plane: the active set's first step, bit for bit
        ox = u - t * gx, oy = v - t * gy, oz = w - t * gz;
        return true;
    }
    int C[5] = {q, 0, 0, 0, 0}, A[3] = {q, 0, 0};
    double lam[3] = {t, 0.0, 0.0};
    int r = 0;
    while (S1[r] != top1) ++r;
    const double* cr = GG + std::size_t(r) * m;
    int B[3] = {q, r, 0};
    double l[3];
    if (!kdop_multipliers(GG, m, S0, B, 2, l) || !(l[0] >= 0.0 && l[1] >= 0.0))
        return kdop_kkt_general(u, v, w, G, m, tol, S0, GG, C, 1, A, 1, lam, ox, oy, oz);
    double S2[128];
    for (int k = 0; k < m; ++k) S2[k] = S0[k] - l[0] * cq[k] - l[1] * cr[k];
    S2[q] = S2[r] = -inf;
    const double top2 = max_of(S2, m);
    const double* Gr = G + 3 * r;
    if (top2 <= 0.5 * tol) {
        ox = u - l[0] * gx - l[1] * Gr[0], oy = v - l[0] * gy - l[1] * Gr[1], oz = w - l[0] * gz - l[1] * Gr[2];
        return true;
    }
    C[1] = r, A[1] = r, lam[0] = l[0], lam[1] = l[1];
    int s = 0;
    while (S2[s] != top2) ++s;
    B[2] = s;
    if (!kdop_multipliers(GG, m, S0, B, 3, l) || !(l[0] >= 0.0 && l[1] >= 0.0 && l[2] >= 0.0))
        return kdop_kkt_general(u, v, w, G, m, tol, S0, GG, C, 2, A, 2, lam, ox, oy, oz);
    C[2] = s, A[2] = s, lam[0] = l[0], lam[1] = l[1], lam[2] = l[2];
    const double* cs = GG + std::size_t(s) * m;
    for (int k = 0; k < m; ++k) S2[k] = S0[k] - l[0] * cq[k] - l[1] * cr[k] - l[2] * cs[k];
    S2[q] = S2[r] = S2[s] = -inf;
    if (max_of(S2, m) > 0.5 * tol) return kdop_kkt_general(u, v, w, G, m, tol, S0, GG, C, 3, A, 3, lam, ox, oy, oz);
    const double* Gs = G + 3 * s;
    ox = u - l[0] * gx - l[1] * Gr[0] - l[2] * Gs[0];
    oy = v - l[0] * gy - l[1] * Gr[1] - l[2] * Gs[1];
    oz = w - l[0] * gz - l[1] * Gr[2] - l[2] * Gs[2];
    return true;
}
}  // namespace detail

/// kdop_exact_local's general method (Goldfarb-Idnani), out of line: rarely reached with GG.
/// Returns 0 ok, 1 infeasible, 2 did not converge.
[[gnu::noinline]] inline int kdop_active_set(double u, double v, double w, const double* G, const double* bnd, int m,
                                             double tol, int max_iter, double& ox, double& oy, double& oz,
                                             bool paired, const double* S0) {
    double S[128];
    if (m > 128) paired = false;
    const double inf = std::numeric_limits<double>::infinity();
    int64_t act[3] = {0, 0, 0};
    double mult[3] = {0.0, 0.0, 0.0};
    double r[3] = {0.0, 0.0, 0.0};
    int na = 0;
    double x = u, y = v, z = w;
    int it = 0;
    // paired slabs: the normals once in structure-of-arrays form, so every pass's dot products
    // run as one vectorised loop (the same products and sums as kdop_slack, the same bits)
    alignas(64) double GX[64], GY[64], GZ[64];
    const int h = m / 2;
    if (paired)
        for (int j = 0; j < h; ++j) GX[j] = G[3 * j], GY[j] = G[3 * j + 1], GZ[j] = G[3 * j + 2];
    while (true) {
        int q = -1;
        double worst = tol;
        if (S0 != nullptr && it == 0 && m <= 128) {
            for (int j = 0; j < m; ++j) S[j] = S0[j];
        } else if (paired) {
            for (int j = 0; j < h; ++j) {
                const double d = GX[j] * x + GY[j] * y + GZ[j] * z;
                S[j] = d - bnd[j];
                S[j + h] = -d - bnd[j + h];
            }
        } else if (m <= 128) {
            detail::kdop_slack(G, bnd, m, false, x, y, z, S);
        }
        if (m <= 128) {
            for (int t = 0; t < na; ++t) S[act[t]] = -inf;  // the active ones are not candidates
            const double top = detail::max_of(S, m);  // the largest slack, then its first index
            if (top > worst)
                for (q = 0; S[q] != top; ++q) {
                }
        } else {
            for (int j = 0; j < m; ++j) {
                const double s = G[j * 3] * x + G[j * 3 + 1] * y + G[j * 3 + 2] * z - bnd[j];
                if (s > worst) {
                    bool skip = false;
                    for (int t = 0; t < na; ++t)
                        if (act[t] == j) skip = true;
                    if (!skip) {
                        worst = s;
                        q = j;
                    }
                }
            }
        }
        if (q < 0) {
            ox = x, oy = y, oz = z;
            return 0;
        }
        const double gx = G[q * 3], gy = G[q * 3 + 1], gz = G[q * 3 + 2];
        double uq = 0.0;
        while (true) {
            ++it;
            if (it > max_iter) {
                ox = x, oy = y, oz = z;
                return 2;
            }
            double zx, zy, zz;
            if (!detail::solve_active(G, act, na, gx, gy, gz, r, zx, zy, zz)) {
                ox = x, oy = y, oz = z;
                return 2;
            }
            const double z2 = zx * zx + zy * zy + zz * zz;
            const double viol = gx * x + gy * y + gz * z - bnd[q];
            double t2 = inf;
            if (z2 > 1e-20) {
                t2 = viol / z2;
                if (t2 < 0.0) t2 = 0.0;
            }
            double t1 = inf;
            int drop = -1;
            for (int t = 0; t < na; ++t) {
                if (r[t] > 1e-14) {
                    const double cand = mult[t] / r[t];
                    if (cand < t1) {
                        t1 = cand;
                        drop = t;
                    }
                }
            }
            if (t1 == inf && t2 == inf) {
                ox = x, oy = y, oz = z;
                return 1;
            }
            if (t2 <= t1) {
                x -= t2 * zx;
                y -= t2 * zy;
                z -= t2 * zz;
                for (int t = 0; t < na; ++t) mult[t] -= t2 * r[t];
                uq += t2;
                act[na] = q;
                mult[na] = uq;
                ++na;
                break;
            }
            if (z2 > 1e-20) {
                x -= t1 * zx;
                y -= t1 * zy;
                z -= t1 * zz;
            }
            for (int t = 0; t < na; ++t) mult[t] -= t1 * r[t];
            uq += t1;
            for (int t = drop; t < na - 1; ++t) {
                act[t] = act[t + 1];
                mult[t] = mult[t + 1];
            }
            --na;
        }
    }
}

/// Euclidean projection of (u, v, w) onto {x : G x <= bnd} (unit rows) by a dual active-set method
/// (Goldfarb-Idnani, identity Hessian). Returns 0 ok, 1 infeasible, 2 did not converge. S0: the
/// slacks of (u, v, w) from kdop_inside, or null; GG: kdop_gram(G, m), or null. With both, a point
/// whose answer lies on at most three planes (nearly all of them) is settled from the slacks and
/// the Gram matrix alone (detail::kdop_kkt_shortcut). top0: the largest slack, if known (NaN: not).
inline int kdop_exact_local(double u, double v, double w, const double* G, const double* bnd, int m, double tol,
                            int max_iter, double& ox, double& oy, double& oz, bool paired = false,
                            const double* S0 = nullptr, const double* GG = nullptr,
                            double top0 = std::numeric_limits<double>::quiet_NaN()) {
    if (S0 != nullptr && GG != nullptr && m <= 128 &&
        detail::kdop_kkt_shortcut(u, v, w, G, m, tol, S0, GG, ox, oy, oz, top0))
        return 0;
    return kdop_active_set(u, v, w, G, bnd, m, tol, max_iter, ox, oy, oz, paired, S0);
}

/// Exact projection by enumerating every active set of size <= 3 (slow fallback). 0 ok, 1 infeasible.
inline int kdop_brute_local(double u, double v, double w, const double* G, const double* bnd, int m, double tol,
                            double& ox, double& oy, double& oz) {
    const double inf = std::numeric_limits<double>::infinity();
    double best = inf, bx = u, by = v, bz = w;
    bool feas = true;
    for (int j = 0; j < m; ++j)
        if (G[j * 3] * u + G[j * 3 + 1] * v + G[j * 3 + 2] * w - bnd[j] > tol) {
            feas = false;
            break;
        }
    if (feas) {
        ox = u, oy = v, oz = w;
        return 0;
    }
    for (int a = 0; a < m; ++a)
        for (int b = a; b < m; ++b)
            for (int c = b; c < m; ++c) {
                if (a == b && b != c) continue;
                const int na = a == b ? 1 : (b == c ? 2 : 3);
                bool ok = true;
                double x, y, z;
                if (na == 1) {
                    const double e0 = G[a * 3] * u + G[a * 3 + 1] * v + G[a * 3 + 2] * w - bnd[a];
                    const double lam0 = e0;
                    x = u - lam0 * G[a * 3];
                    y = v - lam0 * G[a * 3 + 1];
                    z = w - lam0 * G[a * 3 + 2];
                } else if (na == 2) {
                    const double m00 = 1.0, m11 = 1.0;
                    const double m01 = G[a * 3] * G[b * 3] + G[a * 3 + 1] * G[b * 3 + 1] + G[a * 3 + 2] * G[b * 3 + 2];
                    const double det = m00 * m11 - m01 * m01;
                    if (det <= 1e-12) {
                        ok = false;
                        x = y = z = 0.0;
                    } else {
                        const double e0 = G[a * 3] * u + G[a * 3 + 1] * v + G[a * 3 + 2] * w - bnd[a];
                        const double e1 = G[b * 3] * u + G[b * 3 + 1] * v + G[b * 3 + 2] * w - bnd[b];
                        const double lam0 = (m11 * e0 - m01 * e1) / det;
                        const double lam1 = (m00 * e1 - m01 * e0) / det;
                        x = u - lam0 * G[a * 3] - lam1 * G[b * 3];
                        y = v - lam0 * G[a * 3 + 1] - lam1 * G[b * 3 + 1];
                        z = w - lam0 * G[a * 3 + 2] - lam1 * G[b * 3 + 2];
                    }
                } else {
                    const double a0 = G[a * 3], a1 = G[a * 3 + 1], a2 = G[a * 3 + 2];
                    const double b0 = G[b * 3], b1 = G[b * 3 + 1], b2 = G[b * 3 + 2];
                    const double c0 = G[c * 3], c1 = G[c * 3 + 1], c2 = G[c * 3 + 2];
                    const double bc0 = b1 * c2 - b2 * c1, bc1 = b2 * c0 - b0 * c2, bc2 = b0 * c1 - b1 * c0;
                    const double det = a0 * bc0 + a1 * bc1 + a2 * bc2;
                    if (std::abs(det) <= 1e-9) {
                        ok = false;
                        x = y = z = 0.0;
                    } else {
                        const double ca0 = c1 * a2 - c2 * a1, ca1 = c2 * a0 - c0 * a2, ca2 = c0 * a1 - c1 * a0;
                        const double ab0 = a1 * b2 - a2 * b1, ab1 = a2 * b0 - a0 * b2, ab2 = a0 * b1 - a1 * b0;
                        x = (bnd[a] * bc0 + bnd[b] * ca0 + bnd[c] * ab0) / det;
                        y = (bnd[a] * bc1 + bnd[b] * ca1 + bnd[c] * ab1) / det;
                        z = (bnd[a] * bc2 + bnd[b] * ca2 + bnd[c] * ab2) / det;
                    }
                }
                if (!ok) continue;
                const double d2 = (x - u) * (x - u) + (y - v) * (y - v) + (z - w) * (z - w);
                if (d2 >= best) continue;
                bool f = true;
                for (int j = 0; j < m; ++j)
                    if (G[j * 3] * x + G[j * 3 + 1] * y + G[j * 3 + 2] * z - bnd[j] > tol) {
                        f = false;
                        break;
                    }
                if (f) {
                    best = d2;
                    bx = x, by = y, bz = z;
                }
            }
    if (best == inf) {
        ox = u, oy = v, oz = w;
        return 1;
    }
    ox = bx, oy = by, oz = bz;
    return 0;
}

// ------------------------------------------------------------------ batched projections
/// A limit frame: local = R^T (x - pos); R's columns are the limit axes (row-major r[3][3]).
struct Frame {
    double px = 0, py = 0, pz = 0;
    double r00 = 1, r01 = 0, r02 = 0, r10 = 0, r11 = 1, r12 = 0, r20 = 0, r21 = 0, r22 = 1;
    Frame() = default;
    Frame(const double* pos, const double* rot)
        : px(pos[0]), py(pos[1]), pz(pos[2]), r00(rot[0]), r01(rot[1]), r02(rot[2]), r10(rot[3]), r11(rot[4]),
          r12(rot[5]), r20(rot[6]), r21(rot[7]), r22(rot[8]) {}
    void to_local(double x, double y, double z, double& u, double& v, double& w) const {
        const double dx = x - px, dy = y - py, dz = z - pz;
        u = r00 * dx + r10 * dy + r20 * dz;
        v = r01 * dx + r11 * dy + r21 * dz;
        w = r02 * dx + r12 * dy + r22 * dz;
    }
    void from_local(double u, double v, double w, double* o) const {
        o[0] = r00 * u + r01 * v + r02 * w + px;
        o[1] = r10 * u + r11 * v + r12 * w + py;
        o[2] = r20 * u + r21 * v + r22 * w + pz;
    }
};

namespace detail {
// GCC/Clang vector extension: two doubles (one SSE2 register, the portable baseline; a native
// build widens the loops itself), so the box clamp runs on whole vectors of the flat [3n] array
typedef double v2d __attribute__((vector_size(16)));
inline v2d load2(const double* p) {
    v2d v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store2(double* p, v2d v) { std::memcpy(p, &v, sizeof v); }
inline v2d clamp2(v2d a, v2d lo, v2d hi) {
    a = a > lo ? a : lo;  // clampd, lane by lane
    return a < hi ? a : hi;
}
}  // namespace detail

/// Axis-aligned box clamp over pts [n, 3]; returns false if any input is not finite. The flat
/// array is clamped 12 values (4 points) at a time against lo/hi repeated with period 3.
inline bool project_box_aa(const double* pts, std::size_t n, const double* lo, const double* hi, double* out) {
    using detail::v2d;
    const double lx = lo[0], ly = lo[1], lz = lo[2], hx = hi[0], hy = hi[1], hz = hi[2];
    const v2d L0 = {lx, ly}, L1 = {lz, lx}, L2 = {ly, lz}, H0 = {hx, hy}, H1 = {hz, hx}, H2 = {hy, hz};
    v2d a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;  // x - x: NaN for inf and NaN
    const std::size_t total = 3 * n;
    std::size_t k = 0;
    for (; k + 12 <= total; k += 12) {
        const v2d p0 = detail::load2(pts + k), p1 = detail::load2(pts + k + 2), p2 = detail::load2(pts + k + 4);
        const v2d p3 = detail::load2(pts + k + 6), p4 = detail::load2(pts + k + 8), p5 = detail::load2(pts + k + 10);
        a0 += p0 - p0, a1 += p1 - p1, a2 += p2 - p2, a3 += p3 - p3, a4 += p4 - p4, a5 += p5 - p5;
        detail::store2(out + k, detail::clamp2(p0, L0, H0));
        detail::store2(out + k + 2, detail::clamp2(p1, L1, H1));
        detail::store2(out + k + 4, detail::clamp2(p2, L2, H2));
        detail::store2(out + k + 6, detail::clamp2(p3, L0, H0));
        detail::store2(out + k + 8, detail::clamp2(p4, L1, H1));
        detail::store2(out + k + 10, detail::clamp2(p5, L2, H2));
    }
    const v2d a = (a0 + a1) + (a2 + a3) + (a4 + a5);
    double acc = a[0] + a[1];
    for (std::size_t i = k / 3; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        acc += (x - x) + (y - y) + (z - z);
        out[3 * i] = clampd(x, lx, hx);
        out[3 * i + 1] = clampd(y, ly, hy);
        out[3 * i + 2] = clampd(z, lz, hz);
    }
    return acc == 0.0;
}

namespace detail {
typedef float v4f __attribute__((vector_size(16)));
inline v4f load4(const float* p) {
    v4f v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store4(float* p, v4f v) { std::memcpy(p, &v, sizeof v); }
/// A non-temporal store to a 16-byte aligned p (x86; elsewhere a plain store).
inline void stream4(float* p, v4f v) {
#if defined(__SSE__)
    _mm_stream_ps(p, reinterpret_cast<__m128>(v));
#else
    store4(p, v);
#endif
}
inline v4f clamp4(v4f a, v4f lo, v4f hi) {
    a = a > lo ? a : lo;
    return a < hi ? a : hi;
}
inline float clampf(float x, float lo, float hi) {
    const float m = x > lo ? x : lo;
    return m < hi ? m : hi;
}
}  // namespace detail

/// project_box_aa in float32 (for float32 data: half the bytes of this memory-bound loop), 24
/// values (8 points) at a time: vectors of four floats against lo/hi repeated with period 3.
/// STREAM: non-temporal stores, out 16-byte aligned (an output far larger than the caches is not
/// read into them before it is written: a third less memory traffic).
template <bool STREAM>
inline bool project_box_aa_f32(const float* pts, std::size_t n, const float* lo, const float* hi, float* out) {
    using detail::v4f;
    const float lx = lo[0], ly = lo[1], lz = lo[2], hx = hi[0], hy = hi[1], hz = hi[2];
    const v4f L0 = {lx, ly, lz, lx}, L1 = {ly, lz, lx, ly}, L2 = {lz, lx, ly, lz};
    const v4f H0 = {hx, hy, hz, hx}, H1 = {hy, hz, hx, hy}, H2 = {hz, hx, hy, hz};
    v4f a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
    const std::size_t total = 3 * n;
    std::size_t k = 0;
    for (; k + 24 <= total; k += 24) {
        const v4f p0 = detail::load4(pts + k), p1 = detail::load4(pts + k + 4), p2 = detail::load4(pts + k + 8);
        const v4f p3 = detail::load4(pts + k + 12), p4 = detail::load4(pts + k + 16), p5 = detail::load4(pts + k + 20);
        a0 += p0 - p0, a1 += p1 - p1, a2 += p2 - p2, a3 += p3 - p3, a4 += p4 - p4, a5 += p5 - p5;
        const auto put = STREAM ? detail::stream4 : detail::store4;
        put(out + k, detail::clamp4(p0, L0, H0));
        put(out + k + 4, detail::clamp4(p1, L1, H1));
        put(out + k + 8, detail::clamp4(p2, L2, H2));
        put(out + k + 12, detail::clamp4(p3, L0, H0));
        put(out + k + 16, detail::clamp4(p4, L1, H1));
        put(out + k + 20, detail::clamp4(p5, L2, H2));
    }
#if defined(__SSE__)
    if (STREAM) _mm_sfence();
#endif
    const v4f a = (a0 + a1) + (a2 + a3) + (a4 + a5);
    float acc = (a[0] + a[1]) + (a[2] + a[3]);
    for (std::size_t i = k / 3; i < n; ++i) {
        const float x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        acc += (x - x) + (y - y) + (z - z);
        out[3 * i] = detail::clampf(x, lx, hx);
        out[3 * i + 1] = detail::clampf(y, ly, hy);
        out[3 * i + 2] = detail::clampf(z, lz, hz);
    }
    return acc == 0.0f;
}

/// project_box_aa on float32 points; aligned outputs over 8 MB are written with non-temporal stores.
inline bool project_box_aa(const float* pts, std::size_t n, const float* lo, const float* hi, float* out) {
    const bool big = 12 * n >= (std::size_t(8) << 20) && (reinterpret_cast<std::uintptr_t>(out) & 15) == 0;
    return big ? project_box_aa_f32<true>(pts, n, lo, hi, out) : project_box_aa_f32<false>(pts, n, lo, hi, out);
}

/// Oriented box; inside points unchanged unless always_map. Returns false if any input is not finite.
inline bool project_box_oriented(const double* pts, std::size_t n, const double* lo, const double* hi,
                                 const Frame& fr, bool always_map, double* out) {
    const double lx = lo[0], ly = lo[1], lz = lo[2], hx = hi[0], hy = hi[1], hz = hi[2];
    double acc = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        acc += (x - x) + (y - y) + (z - z);
        double u, v, w;
        fr.to_local(x, y, z, u, v, w);
        const double cu = clampd(u, lx, hx), cv = clampd(v, ly, hy), cw = clampd(w, lz, hz);
        const bool keep = !always_map && cu == u && cv == v && cw == w;
        double m[3];
        fr.from_local(cu, cv, cw, m);
        out[3 * i] = keep ? x : m[0];
        out[3 * i + 1] = keep ? y : m[1];
        out[3 * i + 2] = keep ? z : m[2];
    }
    return acc == 0.0;
}

/// Ellipsoid with semi-axes scale (squared radii scale^2 + eps). Returns the first non-finite row or -1.
namespace detail {
constexpr int kLanes = 8;

/// ellipsoid_local's Newton iterations on up to kLanes points at once, in lock step: each lane
/// makes exactly the updates the one-point loop makes (frozen once it stops), so the results are
/// the same bits while the independent points hide each other's division latency.
inline void ellipsoid_newton_lanes(int m, const double* U, const double* V, const double* W, double ssx, double ssy,
                                   double ssz, int iterations, double* H, const double* LO, double* DONE) {
    for (int it = 0; it < iterations; ++it) {
        double live = 0.0;
        for (int i = 0; i < kLanes; ++i) live += i < m ? 1.0 - DONE[i] : 0.0;
        if (live == 0.0) break;
        for (int i = 0; i < kLanes; ++i) {
            const double h = H[i];
            double S = 0.0, D = 0.0;
            if (ssx > 0.0) {
                const double t = 1.0 / (ssx + h), a = U[i] * t, g = ssx * a * a;
                S += g;
                D += g * t;
            }
            if (ssy > 0.0) {
                const double t = 1.0 / (ssy + h), a = V[i] * t, g = ssy * a * a;
                S += g;
                D += g * t;
            }
            if (ssz > 0.0) {
                const double t = 1.0 / (ssz + h), a = W[i] * t, g = ssz * a * a;
                S += g;
                D += g * t;
            }
            const bool stop = S <= 1.0 + 1e-15 || D <= 0.0;
            const double step = (S * std::sqrt(S) - S) / (stop ? 1.0 : D);
            const bool go = DONE[i] == 0.0 && !stop && step > 0.0;
            const double hn = h + step;
            H[i] = go ? hn : h;
            const bool conv = step <= 1e-9 * (hn + LO[i]);
            DONE[i] = (DONE[i] != 0.0 || !go || conv) ? 1.0 : 0.0;
        }
    }
}
}  // namespace detail

/// Ellipsoid with semi-axes scale (squared radii scale^2 + eps). Returns the first non-finite row or -1.
/// Points outside are projected kLanes at a time (detail::ellipsoid_newton_lanes).
inline int64_t project_ellipsoid(const double* pts, std::size_t n, const double* scale, double eps, const Frame& fr,
                                 int iterations, double* out) {
    using detail::kLanes;
    const double sx = scale[0], sy = scale[1], sz = scale[2];
    const double ssx = sx * sx + eps, ssy = sy * sy + eps, ssz = sz * sz + eps;
    int64_t bad = -1;
    alignas(64) double U[kLanes], V[kLanes], W[kLanes], H[kLanes], LO[kLanes], DONE[kLanes];
    std::size_t idx[kLanes];
    int m = 0;
    auto flush = [&]() {
        for (int i = m; i < kLanes; ++i) U[i] = V[i] = W[i] = H[i] = LO[i] = 0.0, DONE[i] = 1.0;
        detail::ellipsoid_newton_lanes(m, U, V, W, ssx, ssy, ssz, iterations, H, LO, DONE);
        for (int i = 0; i < m; ++i) {
            const double h = H[i];
            const double ou = ssx + h > 0.0 ? U[i] * ssx / (ssx + h) : 0.0;
            const double ov = ssy + h > 0.0 ? V[i] * ssy / (ssy + h) : 0.0;
            const double ow = ssz + h > 0.0 ? W[i] * ssz / (ssz + h) : 0.0;
            fr.from_local(ou, ov, ow, out + 3 * idx[i]);
        }
        m = 0;
    };
    for (std::size_t i = 0; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        if (!(std::isfinite(x) && std::isfinite(y) && std::isfinite(z))) {
            if (bad < 0) bad = static_cast<int64_t>(i);
            out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = 0.0;
            continue;
        }
        double u, v, w;
        fr.to_local(x, y, z, u, v, w);
        if (ellipsoid_inside(u, v, w, sx, sy, sz)) {
            out[3 * i] = x, out[3 * i + 1] = y, out[3 * i + 2] = z;
            continue;
        }
        U[m] = u, V[m] = v, W[m] = w, idx[m] = i;
        DONE[m] = fastmath::ellipsoid_start(u, v, w, ssx, ssy, ssz, H[m], LO[m]) ? 0.0 : 1.0;
        if (++m == kLanes) flush();
    }
    if (m) flush();
    return bad;
}

/// The reference's k-DOP: one sequential pass of slab clamps (axes [k, 3], aa = |axis|^2).
inline int64_t project_kdop_slabs(const double* pts, std::size_t n, const double* mins, const double* maxs,
                                  const Frame& fr, const double* axes, const double* aa, int k, bool always_map,
                                  double* out) {
    int64_t bad = -1;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        double u, v, w;
        fr.to_local(x, y, z, u, v, w);
        bool inside = !always_map;
        if (inside)
            for (int j = 0; j < k; ++j) {
                const double d = axes[3 * j] * u + axes[3 * j + 1] * v + axes[3 * j + 2] * w;
                if (!(d >= mins[j] * aa[j] && d <= maxs[j] * aa[j])) {
                    inside = false;
                    break;
                }
            }
        if (inside) {
            out[3 * i] = x, out[3 * i + 1] = y, out[3 * i + 2] = z;
            continue;
        }
        if (!(std::isfinite(x) && std::isfinite(y) && std::isfinite(z))) {
            if (bad < 0) bad = static_cast<int64_t>(i);
            out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = 0.0;
            continue;
        }
        for (int j = 0; j < k; ++j) {
            const double ax = axes[3 * j], ay = axes[3 * j + 1], az = axes[3 * j + 2];
            const double d = ax * u + ay * v + az * w;
            const double c0 = d - mins[j] * aa[j];
            const double c1 = d - maxs[j] * aa[j];
            if (c0 < 0.0) {
                u -= c0 * ax;
                v -= c0 * ay;
                w -= c0 * az;
            }
            if (c1 > 0.0) {
                u -= c1 * ax;
                v -= c1 * ay;
                w -= c1 * az;
            }
        }
        fr.from_local(u, v, w, out + 3 * i);
    }
    return bad;
}

/// Exact closest point of the k-DOP {G x <= bnd} (G [m, 3] unit rows). Returns the first non-finite
/// row or -1; *empty is set to the first row for which the polytope turned out empty (else untouched).
inline int64_t project_kdop_exact(const double* pts, std::size_t n, const double* G, const double* bnd, int m,
                                  const Frame& fr, double* out, int64_t* empty) {
    double bmax = 0.0;
    for (int j = 0; j < m; ++j)
        if (std::abs(bnd[j]) > bmax) bmax = std::abs(bnd[j]);
    int64_t bad = -1;
    const bool paired = kdop_paired(G, m);
    const std::vector<double> gg = kdop_gram(G, m);
    double S[128];
    for (std::size_t i = 0; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        if (!(std::isfinite(x) && std::isfinite(y) && std::isfinite(z))) {
            if (bad < 0) bad = static_cast<int64_t>(i);
            out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = 0.0;
            continue;
        }
        double u, v, w;
        fr.to_local(x, y, z, u, v, w);
        double mag = std::abs(u);
        if (std::abs(v) > mag) mag = std::abs(v);
        if (std::abs(w) > mag) mag = std::abs(w);
        const double tol = 1e-12 * (1.0 + bmax + mag);
        double top = std::numeric_limits<double>::quiet_NaN();
        if (kdop_inside(G, bnd, m, paired, u, v, w, tol, S, &top)) {
            out[3 * i] = x, out[3 * i + 1] = y, out[3 * i + 2] = z;
            continue;
        }
        double a, b, c;
        int st = kdop_exact_local(u, v, w, G, bnd, m, tol, 64, a, b, c, paired, m <= 128 ? S : nullptr,
                                  gg.empty() ? nullptr : gg.data(), top);
        if (st == 2) st = kdop_brute_local(u, v, w, G, bnd, m, 10.0 * tol, a, b, c);
        if (st != 0 && *empty < 0) *empty = static_cast<int64_t>(i);
        fr.from_local(a, b, c, out + 3 * i);
    }
    return bad;
}

/// The article's projection_soften: proj + normalize(orig - proj) tanh(falloff d) radius for d > eps.
JL_INLINE void soften_point(double ox, double oy, double oz, double px, double py, double pz, double falloff,
                         double radius, double eps, double* o) {
    const double dx = ox - px, dy = oy - py, dz = oz - pz;
    const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
    if (d > eps) {
        const double s = fastmath::tanh_pos(falloff * d) * radius / d;
        o[0] = px + dx * s, o[1] = py + dy * s, o[2] = pz + dz * s;
    } else {
        o[0] = px, o[1] = py, o[2] = pz;
    }
}

/// soften_point over points [n, 3]; false if any input is not finite (out is then unspecified).
inline bool soften(const double* orig, const double* proj, std::size_t n, double falloff, double radius,
                   double eps, double* out) {
    double acc = 0.0;
    for (std::size_t i = 0; i < 3 * n; ++i) acc += (orig[i] - orig[i]) + (proj[i] - proj[i]);
    if (acc != 0.0) return false;
    for (std::size_t i = 0; i < n; ++i)
        soften_point(orig[3 * i], orig[3 * i + 1], orig[3 * i + 2], proj[3 * i], proj[3 * i + 1], proj[3 * i + 2],
                     falloff, radius, eps, out + 3 * i);
    return true;
}

// ------------------------------------------------------------------ subsampling
namespace detail {
inline int64_t hash3(int64_t ix, int64_t iy, int64_t iz, int64_t mask) {
    // unsigned: the products wrap (signed overflow is undefined); the hash only picks a slot
    uint64_t h = (uint64_t(ix) * 73856093u) ^ (uint64_t(iy) * 19349663u) ^ (uint64_t(iz) * 83492791u);
    h ^= h >> 17;
    return static_cast<int64_t>(h & uint64_t(mask));
}
}  // namespace detail

/// Greedy subsampling (a point is kept unless a kept point is strictly closer than distance) on a
/// hash grid of cells larger than 2 (distance + margin): at most 8 cells searched per point.
inline std::vector<int64_t> subsample_grid(const double* pts, std::size_t n, double distance, double margin,
                                           double cell) {
    const double inv = 1.0 / cell, reach = distance + margin;
    int64_t size = 1;
    while (size < static_cast<int64_t>(2 * n + 16)) size *= 2;
    const int64_t mask = size - 1;
    std::vector<int64_t> kx(size), ky(size), kz(size), head(size), nxt(n);
    std::vector<uint8_t> used(size, 0);
    std::vector<int64_t> keep;
    keep.reserve(n);
    auto slot = [&](int64_t ix, int64_t iy, int64_t iz) {
        int64_t s = detail::hash3(ix, iy, iz, mask);
        while (used[s]) {
            if (kx[s] == ix && ky[s] == iy && kz[s] == iz) return s;
            s = (s + 1) & mask;
        }
        return s;
    };
    for (std::size_t i = 0; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        const int64_t x0 = static_cast<int64_t>(std::floor((x - reach) * inv));
        const int64_t x1 = static_cast<int64_t>(std::floor((x + reach) * inv));
        const int64_t y0 = static_cast<int64_t>(std::floor((y - reach) * inv));
        const int64_t y1 = static_cast<int64_t>(std::floor((y + reach) * inv));
        const int64_t z0 = static_cast<int64_t>(std::floor((z - reach) * inv));
        const int64_t z1 = static_cast<int64_t>(std::floor((z + reach) * inv));
        bool include = true;
        for (int64_t jx = x0; include && jx <= x1; ++jx)
            for (int64_t jy = y0; include && jy <= y1; ++jy)
                for (int64_t jz = z0; include && jz <= z1; ++jz) {
                    const int64_t s = slot(jx, jy, jz);
                    if (!used[s]) continue;
                    for (int64_t j = head[s]; j >= 0; j = nxt[j]) {
                        const double dx = pts[3 * j] - x, dy = pts[3 * j + 1] - y, dz = pts[3 * j + 2] - z;
                        if (std::sqrt(dx * dx + dy * dy + dz * dz) < distance) {
                            include = false;
                            break;
                        }
                    }
                }
        if (include) {
            const int64_t s = slot(static_cast<int64_t>(std::floor(x * inv)), static_cast<int64_t>(std::floor(y * inv)),
                                   static_cast<int64_t>(std::floor(z * inv)));
            if (!used[s]) {
                used[s] = 1;
                kx[s] = static_cast<int64_t>(std::floor(x * inv));
                ky[s] = static_cast<int64_t>(std::floor(y * inv));
                kz[s] = static_cast<int64_t>(std::floor(z * inv));
                head[s] = -1;
            }
            nxt[i] = head[s];
            head[s] = static_cast<int64_t>(i);
            keep.push_back(static_cast<int64_t>(i));
        }
    }
    return keep;
}

/// The reference's O(N M) greedy subsampling (for checks and benchmarks).
inline std::vector<int64_t> subsample_naive(const double* pts, std::size_t n, double distance) {
    std::vector<int64_t> keep;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        bool include = true;
        for (const int64_t j : keep) {
            const double dx = pts[3 * j] - x, dy = pts[3 * j + 1] - y, dz = pts[3 * j + 2] - z;
            if (std::sqrt(dx * dx + dy * dy + dz * dz) < distance) {
                include = false;
                break;
            }
        }
        if (include) keep.push_back(static_cast<int64_t>(i));
    }
    return keep;
}

}  // namespace jointlimits

// Compiled exact k-DOP: the half-spaces G R^T (x - position) <= bnd (unit rows), projected to
// the true closest point (dual active set, a brute-force fallback).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "shape_frame.hpp"
#include "shapes.hpp"

namespace jointlimits {

/// An exact k-DOP: G [m, 3], bnd [m], and the per-shape constants prepare() derives from them.
struct KdopShape : ShapeFrame {
    static constexpr const char* kName = "kdop";
    std::vector<double> G, bnd;
    double bmax = 0.0;          // max |bnd|, for the tolerance
    bool paired = false;        // rows in opposite pairs (kdop_paired)
    std::vector<double> gram;   // the normals' Gram matrix (kdop_gram), for the shortcut
    double reach_ = 0.0;        // max |x| over the polytope (inflated for rounding); 0: unknown

    static KdopShape from_arrays(const ShapeArrays& a) {
        KdopShape s;
        s.frame_from(a);
        s.G = a.G, s.bnd = a.bnd;
        return s;
    }
    void to_arrays(ShapeArrays& a) const {
        frame_to(a);
        a.G = G, a.bnd = bnd;
    }
    void validate() const {
        require(G.size() == 3 * bnd.size(), "k-DOP half-spaces must be G [m, 3] and bnd [m]");
        for (std::size_t k = 0; k < bnd.size(); ++k) {
            const double nn = G[3 * k] * G[3 * k] + G[3 * k + 1] * G[3 * k + 1] + G[3 * k + 2] * G[3 * k + 2];
            require(std::abs(nn - 1.0) <= 1e-6, "k-DOP half-space normals must be unit rows");
        }
    }
    int n_g() const { return static_cast<int>(bnd.size()); }
    double reach() const { return reach_; }

    /// Per-shape constants the step would otherwise recompute for every row.
    void prepare() {
        bmax = 0.0;
        for (const double b : bnd) bmax = std::max(bmax, std::abs(b));
        paired = kdop_paired(G.data(), n_g());
        reach_ = paired ? vertex_reach() : 0.0;  // two-sided slabs with a vertex: bounded
        gram = kdop_gram(G.data(), n_g());
    }

    /// The largest |x| over the vertices (every triple of planes), slightly inflated; 0 if there
    /// are none (unbounded or empty).
    double vertex_reach() const {
        const int m = n_g();
        const double* g = G.data();
        double best = -1.0;
        for (int a = 0; a < m; ++a)
            for (int b = a + 1; b < m; ++b)
                for (int c = b + 1; c < m; ++c) {
                    const double* A = g + 3 * a;
                    const double* B = g + 3 * b;
                    const double* C = g + 3 * c;
                    const double bc0 = B[1] * C[2] - B[2] * C[1], bc1 = B[2] * C[0] - B[0] * C[2], bc2 = B[0] * C[1] - B[1] * C[0];
                    const double det = A[0] * bc0 + A[1] * bc1 + A[2] * bc2;
                    if (std::abs(det) <= 1e-9) continue;
                    const double ca0 = C[1] * A[2] - C[2] * A[1], ca1 = C[2] * A[0] - C[0] * A[2], ca2 = C[0] * A[1] - C[1] * A[0];
                    const double ab0 = A[1] * B[2] - A[2] * B[1], ab1 = A[2] * B[0] - A[0] * B[2], ab2 = A[0] * B[1] - A[1] * B[0];
                    const double u = (bnd[a] * bc0 + bnd[b] * ca0 + bnd[c] * ab0) / det;
                    const double v = (bnd[a] * bc1 + bnd[b] * ca1 + bnd[c] * ab1) / det;
                    const double w = (bnd[a] * bc2 + bnd[b] * ca2 + bnd[c] * ab2) / det;
                    const double tol = 1e-9 * (1.0 + std::abs(u) + std::abs(v) + std::abs(w));
                    bool feasible = true;
                    for (int j = 0; j < m && feasible; ++j)
                        feasible = g[3 * j] * u + g[3 * j + 1] * v + g[3 * j + 2] * w - bnd[j] <= tol;
                    if (!feasible) continue;
                    const Vec3 x = to_world(u, v, w);
                    best = std::max(best, std::sqrt(x.x * x.x + x.y * x.y + x.z * x.z));
                }
        // a bounded polytope's farthest point is a vertex; the projection lands in it up to its
        // tolerance (1e-12 relative), far below this margin
        return best > 0.0 ? best * (1.0 + 1e-6) + 1e-6 : 0.0;
    }

    /// Closest point in limit space (points inside come back unchanged, bit for bit).
    Vec3 project(const Vec3& p) const {
        const Vec3 l = to_local(p);
        const double u = l.x, v = l.y, w = l.z;
        const int m = n_g();
        const double tol = 1e-12 * (1.0 + bmax + std::max(std::abs(u), std::max(std::abs(v), std::abs(w))));
        double S[128];
        double top = std::numeric_limits<double>::quiet_NaN();
        if (kdop_inside(G.data(), bnd.data(), m, paired, u, v, w, tol, S, &top)) return p;
        double a, b, c;
        const int st = kdop_exact_local(u, v, w, G.data(), bnd.data(), m, tol, 64, a, b, c, paired,
                                        m <= 128 ? S : nullptr, gram.empty() ? nullptr : gram.data(), top);
        if (st == 2) kdop_brute_local(u, v, w, G.data(), bnd.data(), m, 10.0 * tol, a, b, c);
        return to_world(a, b, c);
    }
    bool contains(const Vec3& p, double tol) const { return distance(p) <= tol; }
    double distance(const Vec3& p) const { return gap(p, project(p)); }
};

}  // namespace jointlimits

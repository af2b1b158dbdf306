// Compiled convex polygon in a plane through the origin (a box's or k-DOP's swing section):
// vertices (u, v) in the basis e1 = f[3..6), e2 = f[6..9), counter-clockwise.
#pragma once
#include <algorithm>
#include <cmath>

#include "shape_frame.hpp"

namespace jointlimits {

/// A convex polygon: axes holds its vertices (u, v, 0); edges per edge (u0, v0, eu, ev, |e|^2).
struct PolygonShape : ShapeFrame {
    static constexpr const char* kName = "polygon";
    std::vector<double> axes, edges;

    static PolygonShape from_arrays(const ShapeArrays& a) {
        PolygonShape s;
        s.frame_from(a);
        s.axes = a.axes;
        return s;
    }
    void to_arrays(ShapeArrays& a) const {
        frame_to(a);
        a.axes = axes;
    }
    void validate() const { require(axes.size() % 3 == 0 && axes.size() >= 3, "a polygon needs vertices [n, 3]"); }
    int n_vertices() const { return static_cast<int>(axes.size() / 3); }

    /// The edge table project() reads, built once.
    void prepare() {
        edges.clear();
        const int nv = n_vertices();
        const double* ax = axes.data();
        for (int k = 0; k < nv; ++k) {
            const int k2 = k + 1 < nv ? k + 1 : 0;
            const double ex = ax[k2 * 3] - ax[k * 3], ey = ax[k2 * 3 + 1] - ax[k * 3 + 1];
            edges.insert(edges.end(), {ax[k * 3], ax[k * 3 + 1], ex, ey, ex * ex + ey * ey});
        }
    }

    /// Closest point in limit space, in the plane (points inside come back unchanged, bit for bit).
    Vec3 project(const Vec3& p) const {
        const double x = p.x, y = p.y, z = p.z;
        const double* e = edges.data();
        const int nv = static_cast<int>(edges.size() / 5);
        const double yu = f[3] * x + f[4] * y + f[5] * z;
        const double yv = f[6] * x + f[7] * y + f[8] * z;
        const double tol = -1e-12 * (1.0 + std::abs(yu) + std::abs(yv));
        double cross[64];
        const bool keep = nv <= 64;
        bool inside = true;
        for (int k = 0; k < nv; ++k) {
            const double* ek = e + 5 * k;
            const double c = ek[2] * (yv - ek[1]) - ek[3] * (yu - ek[0]);
            if (keep) cross[k] = c;
            inside = inside && !(c < tol);
            if (!inside && !keep) break;
        }
        if (inside) return p;
        // the closest boundary point lies on an edge whose line the point is beyond (cross < 0)
        double best = 1e300, bu = yu, bv = yv;
        for (int k = 0; k < nv; ++k) {
            if (keep && !(cross[k] < 0.0)) continue;
            const double* ek = e + 5 * k;
            const double ex = ek[2], ey = ek[3], ee = ek[4];
            double t = ee > 0 ? ((yu - ek[0]) * ex + (yv - ek[1]) * ey) / ee : 0.0;
            t = std::min(std::max(t, 0.0), 1.0);
            const double cu = ek[0] + t * ex, cv = ek[1] + t * ey;
            const double d = (cu - yu) * (cu - yu) + (cv - yv) * (cv - yv);
            if (d < best) best = d, bu = cu, bv = cv;
        }
        return {f[3] * bu + f[6] * bv, f[4] * bu + f[7] * bv, f[5] * bu + f[8] * bv};
    }
    bool contains(const Vec3& p, double tol) const { return distance(p) <= tol; }
    double distance(const Vec3& p) const { return gap(p, project(p)); }
};

}  // namespace jointlimits

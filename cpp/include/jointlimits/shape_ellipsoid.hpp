// Compiled ellipsoid |R^T (x - position) / scale| <= 1, and its flat form, the ellipse of a
// swing section (inside-ness decided on the in-plane coordinates only).
#pragma once
#include "shape_frame.hpp"
#include "shapes.hpp"

namespace jointlimits {

/// An ellipsoid with semi-axes f[12..15) along its frame's axes.
struct EllipsoidShape : ShapeFrame {
    static constexpr const char* kName = "ellipsoid";

    static EllipsoidShape from_arrays(const ShapeArrays& a) {
        EllipsoidShape s;
        s.frame_from(a);
        return s;
    }
    void to_arrays(ShapeArrays& a) const { frame_to(a); }
    void validate() const { require(f[12] >= 0.0 && f[13] >= 0.0 && f[14] >= 0.0, "ellipsoid semi-axes must be >= 0"); }
    void prepare() {}

    /// Closest point in limit space (exact Newton; points inside come back unchanged).
    Vec3 project(const Vec3& p) const {
        const Vec3 l = to_local(p);
        const double sx = f[12], sy = f[13], sz = f[14];
        if (ellipsoid_inside(l.x, l.y, l.z, sx, sy, sz)) return p;
        double u, v, w;
        ellipsoid_local(l.x, l.y, l.z, sx * sx, sy * sy, sz * sz, 32, u, v, w);
        return to_world(u, v, w);
    }
    bool contains(const Vec3& p, double tol) const { return distance(p) <= tol; }
    double distance(const Vec3& p) const { return gap(p, project(p)); }
};

/// The ellipse with semi-axes f[12], f[13] in its frame's first two axes (a swing section).
struct EllipseShape : ShapeFrame {
    static constexpr const char* kName = "ellipse";

    static EllipseShape from_arrays(const ShapeArrays& a) {
        EllipseShape s;
        s.frame_from(a);
        return s;
    }
    void to_arrays(ShapeArrays& a) const { frame_to(a); }
    void validate() const { require(f[12] >= 0.0 && f[13] >= 0.0, "ellipse semi-axes must be >= 0"); }
    void prepare() {}

    /// Closest point in limit space, the offset from the plane ignored (points inside unchanged).
    Vec3 project(const Vec3& p) const {
        const Vec3 l = to_local(p);
        const double sx = f[12], sy = f[13];
        if (ellipsoid_inside(l.x, l.y, 0.0, sx, sy, 0.0)) return p;
        double u, v, w;
        ellipsoid_local(l.x, l.y, 0.0, sx * sx, sy * sy, 0.0, 32, u, v, w);
        return to_world(u, v, w);
    }
    bool contains(const Vec3& p, double tol) const { return distance(p) <= tol; }
    double distance(const Vec3& p) const { return gap(p, project(p)); }
};

}  // namespace jointlimits

// Compiled slabs (the reference's k-DOP): mins <= axes . R^T (x - position) <= maxs, projected
// by one sequential pass of slab clamps (not the closest point; see shape_kdop.hpp for that).
#pragma once
#include "shape_frame.hpp"

namespace jointlimits {

/// Slabs in their frame: axes [n, 3] (not necessarily unit), mins / maxs [n].
struct SlabsShape : ShapeFrame {
    static constexpr const char* kName = "slabs";
    std::vector<double> axes, mins, maxs;

    static SlabsShape from_arrays(const ShapeArrays& a) {
        SlabsShape s;
        s.frame_from(a);
        s.axes = a.axes, s.mins = a.mins, s.maxs = a.maxs;
        return s;
    }
    void to_arrays(ShapeArrays& a) const {
        frame_to(a);
        a.axes = axes, a.mins = mins, a.maxs = maxs;
    }
    void validate() const {
        require(axes.size() % 3 == 0, "slab axes must be [n, 3]");
        require(3 * mins.size() == axes.size() && maxs.size() == mins.size(), "slabs need one min and max per axis");
        for (std::size_t k = 0; k < mins.size(); ++k) {
            const double nn = axes[3 * k] * axes[3 * k] + axes[3 * k + 1] * axes[3 * k + 1] + axes[3 * k + 2] * axes[3 * k + 2];
            require(nn > 1e-12 && nn < 1e12, "slab axes must be non-zero and of a sane length");
            require(mins[k] <= maxs[k], "empty slab (min > max)");
        }
    }
    void prepare() {}
    int n_axes() const { return static_cast<int>(axes.size() / 3); }

    /// The slab clamps applied in order, in limit space (points inside come back unchanged).
    Vec3 project(const Vec3& p) const {
        const Vec3 l = to_local(p);
        double u = l.x, v = l.y, w = l.z;
        const double* ax = axes.data();
        bool moved = false;
        for (int k = 0, n = n_axes(); k < n; ++k) {
            const double a0 = ax[3 * k], a1 = ax[3 * k + 1], a2 = ax[3 * k + 2];
            const double d = a0 * u + a1 * v + a2 * w;
            const double aa = a0 * a0 + a1 * a1 + a2 * a2;
            double t;
            if (d < mins[k])
                t = (mins[k] - d) / aa;
            else if (d > maxs[k])
                t = (maxs[k] - d) / aa;
            else
                continue;
            u += t * a0;
            v += t * a1;
            w += t * a2;
            moved = true;
        }
        if (!moved) return p;
        return to_world(u, v, w);
    }
    bool contains(const Vec3& p, double tol) const { return distance(p) <= tol; }
    double distance(const Vec3& p) const { return gap(p, project(p)); }
};

}  // namespace jointlimits

// Compiled box: lo <= R^T (x - position) <= hi (axis-aligned when R is the identity).
#pragma once
#include <algorithm>

#include "shape_frame.hpp"

namespace jointlimits {

/// A box in its frame: mins / maxs hold lo[3] and hi[3].
struct BoxShape : ShapeFrame {
    static constexpr const char* kName = "box";
    std::vector<double> mins, maxs;

    static BoxShape from_arrays(const ShapeArrays& a) {
        BoxShape s;
        s.frame_from(a);
        s.mins = a.mins, s.maxs = a.maxs;
        return s;
    }
    void to_arrays(ShapeArrays& a) const {
        frame_to(a);
        a.axes = {1, 0, 0, 0, 1, 0, 0, 0, 1};  // (the file form lists the box's own axes)
        a.mins = mins, a.maxs = maxs;
    }
    void validate() const { require(mins.size() == 3 && maxs.size() == 3, "a box needs 3 mins and 3 maxs"); }
    void prepare() {}

    /// Closest point in limit space (points inside come back unchanged, bit for bit).
    Vec3 project(const Vec3& p) const {
        const Vec3 l = to_local(p);
        const double cu = std::min(std::max(l.x, mins[0]), maxs[0]);
        const double cv = std::min(std::max(l.y, mins[1]), maxs[1]);
        const double cw = std::min(std::max(l.z, mins[2]), maxs[2]);
        if (cu == l.x && cv == l.y && cw == l.z) return p;
        return to_world(cu, cv, cw);
    }
    bool contains(const Vec3& p, double tol) const { return distance(p) <= tol; }
    double distance(const Vec3& p) const { return gap(p, project(p)); }
};

}  // namespace jointlimits

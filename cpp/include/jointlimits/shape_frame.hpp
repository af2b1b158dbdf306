// What every compiled shape shares: its arrays as the binding and the limits file give them
// (ShapeArrays), its frame and scalars (ShapeFrame), and the error a bad shape raises.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "quat.hpp"

namespace jointlimits {

/// A compiled shape rejected by its validate() (bad sizes, unknown code).
struct ShapeError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

/// A compiled shape as flat arrays (the binding's and the limits file's form): f[16] = position[3],
/// rotation[9] (row-major, columns are the axes), scale[3], radius; axes [n, 3], mins / maxs [n],
/// G [m, 3], bnd [m]. Each shape reads the arrays it needs and leaves the others empty.
struct ShapeArrays {
    double f[16] = {0};
    std::vector<double> axes, mins, maxs, G, bnd;
};

/// The frame and scalars of a compiled shape, in limit space: f as in ShapeArrays.
struct ShapeFrame {
    double f[16] = {0};

    /// An upper bound of |x| over the shape (past pi the step also tries the long cover).
    double radius() const { return f[15]; }
    /// A tighter bound of |x| that lets the step skip the long cover's projection (0: none).
    double reach() const { return 0.0; }

    /// Coordinates of p in the shape's frame: R^T (p - position).
    Vec3 to_local(const Vec3& p) const {
        const double dx = p.x - f[0], dy = p.y - f[1], dz = p.z - f[2];
        return {f[3] * dx + f[6] * dy + f[9] * dz, f[4] * dx + f[7] * dy + f[10] * dz,
                f[5] * dx + f[8] * dy + f[11] * dz};
    }
    /// The limit-space point of frame coordinates (u, v, w): R (u, v, w) + position.
    Vec3 to_world(double u, double v, double w) const {
        return {f[3] * u + f[4] * v + f[5] * w + f[0], f[6] * u + f[7] * v + f[8] * w + f[1],
                f[9] * u + f[10] * v + f[11] * w + f[2]};
    }
    void frame_from(const ShapeArrays& a) {
        for (int i = 0; i < 16; ++i) f[i] = a.f[i];
    }
    void frame_to(ShapeArrays& a) const {
        for (int i = 0; i < 16; ++i) a.f[i] = f[i];
    }
};

/// Distance from p to its projection h.
inline double gap(const Vec3& p, const Vec3& h) {
    const double dx = h.x - p.x, dy = h.y - p.y, dz = h.z - p.z;
    return std::sqrt(dx * dx + dy * dy + dz * dz);
}

/// Throws ShapeError(what) unless ok.
inline void require(bool ok, const std::string& what) {
    if (!ok) throw ShapeError(what);
}

}  // namespace jointlimits

// What every compiled shape shares: its arrays as the binding and the limits file give them
// (ShapeArrays), its frame and scalars (ShapeFrame), and the error a bad shape raises.
#pragma once
#include <cmath>
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

/// Limit space is rotation vectors (|x| <= 2 pi on either cover): a shape's position, scale or
/// an implicit grid's origin beyond this is corrupt, not a limit (and would cost time or NaN).
constexpr double kMaxLimitCoord = 1e3;
/// Most rows (slab axes, k-DOP half-spaces, polygon vertices) a compiled shape may have: the
/// k-DOP's vertex bound is O(m^4) at prepare() and its projection O(m^3) per point.
constexpr std::size_t kMaxShapeRows = 64;
/// An unbounded side is written as +-1e300 (strict JSON has no Infinity); anything past is refused.
constexpr double kMaxBound = 1e300;

/// Throws ShapeError unless every value is finite and |value| <= bound.
inline void require_finite(const double* a, std::size_t n, double bound, const std::string& what) {
    for (std::size_t i = 0; i < n; ++i)
        require(std::isfinite(a[i]) && std::abs(a[i]) <= bound, what + " must be finite and within +-" +
                                                                     std::to_string(bound) + " (index " +
                                                                     std::to_string(i) + ")");
}

/// Throws ShapeError unless the first `rows` columns of the row-major 3x3 rotation r (columns are
/// the axes) are orthonormal (to 1e-3: the reference writes float32 frames, 2e-5 off).
inline void require_orthonormal(const double* r, int cols, const std::string& what) {
    for (int a = 0; a < cols; ++a)
        for (int b = a; b < cols; ++b) {
            const double d = r[a] * r[b] + r[3 + a] * r[3 + b] + r[6 + a] * r[6 + b];
            require(std::abs(d - (a == b ? 1.0 : 0.0)) <= 1e-3, what + " must be orthonormal");
        }
}

/// Throws ShapeError unless the first `rows` rows of the row-major 3x3 r are orthonormal (a
/// polygon's plane basis e1, e2).
inline void require_orthonormal_rows(const double* r, int rows, const std::string& what) {
    for (int a = 0; a < rows; ++a)
        for (int b = a; b < rows; ++b) {
            const double d = r[3 * a] * r[3 * b] + r[3 * a + 1] * r[3 * b + 1] + r[3 * a + 2] * r[3 * b + 2];
            require(std::abs(d - (a == b ? 1.0 : 0.0)) <= 1e-3, what + " must be orthonormal");
        }
}

/// The checks every compiled shape's arrays pass before the shape reads them (make_shape): values
/// finite, position and scale within limit space's proportions, rows bounded, a frame of
/// orthonormal axes (`frame_axes` columns; -2: a polygon's two basis rows; 0: a shape with no rows
/// may have an all-zero frame).
inline void validate_arrays(const ShapeArrays& a, int frame_axes) {
    require_finite(a.f, 3, kMaxLimitCoord, "shape position");
    require_finite(a.f + 3, 9, 1.0 + 1e-6, "shape rotation");
    require_finite(a.f + 12, 3, kMaxLimitCoord, "shape scale");
    require_finite(a.f + 15, 1, kMaxBound, "shape radius");
    for (const auto* v : {&a.axes, &a.mins, &a.maxs, &a.G, &a.bnd}) {
        require(v->size() <= 3 * kMaxShapeRows, "a compiled shape has at most " + std::to_string(kMaxShapeRows) +
                                                    " rows (axes, half-spaces or vertices)");
        require_finite(v->data(), v->size(), kMaxBound, "shape arrays");
    }
    if (frame_axes > 0) require_orthonormal(a.f + 3, frame_axes, "shape rotation");
    if (frame_axes < 0) require_orthonormal_rows(a.f + 3, -frame_axes, "polygon plane basis");
}

}  // namespace jointlimits

// The compiled shapes as one std::variant, and the one place a shape is built from arrays (the
// binding's and the limits file's): make_shape validates before anything indexes the arrays.
//
// A new compiled shape is one header (a struct with from_arrays, to_arrays, validate, prepare,
// project, contains, distance; see shape_box.hpp) and one entry appended to CompiledShape. Its
// position in CompiledShape is its "code" in limits files, so entries are only ever appended.
#pragma once
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "shape_box.hpp"
#include "shape_ellipsoid.hpp"
#include "shape_kdop.hpp"
#include "shape_polygon.hpp"
#include "shape_slabs.hpp"

namespace jointlimits {

/// Every compiled shape; the index of an alternative is its code in limits files.
using CompiledShape = std::variant<SlabsShape, EllipsoidShape, KdopShape, BoxShape, PolygonShape, EllipseShape>;

/// Number of compiled shape kinds (codes are 0 .. kShapeKinds - 1).
constexpr int kShapeKinds = static_cast<int>(std::variant_size_v<CompiledShape>);

namespace detail {
template <std::size_t I = 0>
CompiledShape shape_of_code(int code, const ShapeArrays& a) {
    if constexpr (I < std::variant_size_v<CompiledShape>) {
        if (code != static_cast<int>(I)) return shape_of_code<I + 1>(code, a);
        using S = std::variant_alternative_t<I, CompiledShape>;
        S s = S::from_arrays(a);
        s.validate();  // the shape's own sizes first, then what every shape's arrays must pass:
        // a polygon's frame is its plane's two axes; empty slabs (a limit's unused shape) have none
        const bool empty = a.axes.empty() && a.G.empty() && a.mins.empty();
        validate_arrays(a, std::is_same_v<S, PolygonShape> ? -2 : (std::is_same_v<S, SlabsShape> && empty ? 0 : 3));
        s.prepare();
        return CompiledShape(std::in_place_index<I>, std::move(s));
    } else {
        throw ShapeError("unknown compiled shape code " + std::to_string(code));
    }
}
}  // namespace detail

/// The compiled shape of kind `code` from its arrays, validated and prepared (ShapeError if bad).
inline CompiledShape make_shape(int code, const ShapeArrays& a) { return detail::shape_of_code(code, a); }

namespace detail {
template <std::size_t I = 0>
int code_of_name(const std::string& name) {
    if constexpr (I < std::variant_size_v<CompiledShape>) {
        if (name == std::variant_alternative_t<I, CompiledShape>::kName) return static_cast<int>(I);
        return code_of_name<I + 1>(name);
    } else {
        throw ShapeError("unknown compiled shape kind '" + name + "'");
    }
}
}  // namespace detail

/// The compiled shape of kind `name` ("box", "kdop", ...; see each shape's kName) from its arrays.
inline CompiledShape make_shape(const std::string& name, const ShapeArrays& a) {
    return detail::shape_of_code(detail::code_of_name(name), a);
}

/// A shape's code and arrays (the inverse of make_shape; the limits file's form).
inline std::pair<int, ShapeArrays> shape_arrays(const CompiledShape& s) {
    ShapeArrays a;
    std::visit([&](const auto& x) { x.to_arrays(a); }, s);
    return {static_cast<int>(s.index()), a};
}

/// The name of a shape's kind ("box", "kdop", ...).
inline const char* shape_name(const CompiledShape& s) {
    return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kName; }, s);
}

/// An upper bound of |x| over the shape.
inline double shape_radius(const CompiledShape& s) {
    return std::visit([](const auto& x) { return x.radius(); }, s);
}

/// An empty slab set: the unused second shape of a limit.
inline CompiledShape empty_shape() { return CompiledShape(std::in_place_type<SlabsShape>); }

}  // namespace jointlimits

// Shared by the binding files of jointlimits._core: nanobind, array aliases and one registration
// function per kernel group (each defined in its own bind_<group>.cpp).
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nb = nanobind;

namespace jlbind {

// C-contiguous float64 / int64 arrays on the CPU; inputs are never copied (a wrong dtype or
// layout is a TypeError: the Python wrappers pass contiguous float64).
using Arr = nb::ndarray<double, nb::c_contig, nb::device::cpu>;
using CArr = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using IArr = nb::ndarray<const int64_t, nb::c_contig, nb::device::cpu>;
using release = nb::call_guard<nb::gil_scoped_release>;

/// Raise ValueError unless a.shape == expected (-1 matches any extent).
template <typename A, size_t N>
inline void check_shape(const A& a, const char* name, const int64_t (&expected)[N]) {
    bool ok = a.ndim() == N;
    for (size_t i = 0; ok && i < N; ++i) ok = expected[i] < 0 || int64_t(a.shape(i)) == expected[i];
    if (!ok) throw std::invalid_argument(std::string("_core: array '") + name + "' has the wrong shape");
}

void bind_fk(nb::module_& m);        // skeleton FK (bind_fk.cpp)
void bind_limits(nb::module_& m);    // limit steps, shapes, soften, pose sets (bind_limits.cpp)
void bind_shapes(nb::module_& m);    // ellipsoid and k-DOP kernels (bind_shapes.cpp)
void bind_implicit(nb::module_& m);  // implicit surfaces, coupled limits, cloud subsampling (bind_implicit.cpp)
void bind_reach(nb::module_& m);     // reach windows (bind_reach.cpp)
void bind_springs(nb::module_& m);   // springs and tracking (bind_springs.cpp)
void bind_ik(nb::module_& m);        // two-bone, CCD, whole-body IK (bind_ik.cpp)
void bind_io(nb::module_& m);        // BVH number parsing and writing (bind_io.cpp)

}  // namespace jlbind

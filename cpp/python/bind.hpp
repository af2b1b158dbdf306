// Shared by the binding files of jointlimits._core: nanobind, array aliases and one registration
// function per kernel group (each defined in its own bind_<group>.cpp).
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

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

/// f(lo, hi) over [0, n) in one contiguous range per core when there are at least min_rows rows
/// per core (independent rows only; call with the GIL released).
template <class F>
inline void parallel_rows(int64_t n, int64_t min_rows, F&& f) {
    const int64_t cores = std::max<int64_t>(1, std::min<int64_t>(std::thread::hardware_concurrency(), 8));
    const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(cores, n / std::max<int64_t>(min_rows, 1)));
    if (workers == 1) {
        f(int64_t(0), n);
        return;
    }
    std::vector<std::thread> pool;
    for (int64_t w = 1; w < workers; ++w) pool.emplace_back(f, n * w / workers, n * (w + 1) / workers);
    f(int64_t(0), n / workers);
    for (auto& t : pool) t.join();
}

void bind_fk(nb::module_& m);        // skeleton FK (bind_fk.cpp)
void bind_limits(nb::module_& m);    // limit steps, shapes, soften, pose sets (bind_limits.cpp)
void bind_shapes(nb::module_& m);    // ellipsoid and k-DOP kernels (bind_shapes.cpp)
void bind_implicit(nb::module_& m);  // implicit surfaces, coupled limits, cloud subsampling (bind_implicit.cpp)
void bind_reach(nb::module_& m);     // reach windows (bind_reach.cpp)
void bind_springs(nb::module_& m);   // springs and tracking (bind_springs.cpp)
void bind_ik(nb::module_& m);        // two-bone, CCD, whole-body IK (bind_ik.cpp)
void bind_io(nb::module_& m);        // BVH number parsing and writing (bind_io.cpp)
void bind_quat(nb::module_& m);      // batched quaternion ops (bind_quat.cpp)

}  // namespace jlbind

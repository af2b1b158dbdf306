// Batched limit-space projections (box, oriented box, ellipsoid, k-DOP slabs and exact), soften and
// greedy subsampling: the kernels of jointlimits.limits.{box,ellipsoid,kdop,cloud}.
#include <nanobind/stl/pair.h>

#include <cmath>
#include <utility>

#include "bind.hpp"
#include "jointlimits/shapes.hpp"

namespace jlbind {

namespace {
using jointlimits::Frame;

int64_t rows3(const CArr& pts, Arr& out) {
    const int64_t n = pts.shape(0);
    check_shape(pts, "pts", {n, 3});
    check_shape(out, "out", {n, 3});
    return n;
}
Frame frame(const CArr& pos, const CArr& rot) {
    check_shape(pos, "pos", {3});
    check_shape(rot, "rot", {3, 3});
    return Frame(pos.data(), rot.data());
}
// Thin calls: one C++ check of arrays already right (exact dtype, C-contiguous; nanobind's
// noconvert raises TypeError for anything else), returning the result array, or None where the
// Python wrapper's checked path must run (it reports the clear error, or converts the input).
using NArr = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using FIn = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using FOut = nb::ndarray<float, nb::c_contig, nb::device::cpu>;

bool finite3(const NArr& a, std::size_t n) {
    if (a.ndim() != 1 || a.shape(0) != n) return false;
    for (std::size_t k = 0; k < n; ++k)
        if (!std::isfinite(a.data()[k])) return false;
    return true;
}

/// rows of a [..., 3] input (-1 if its shape is not that)
template <class A>
int64_t rows_of(const A& pts) {
    if (pts.ndim() == 0 || pts.ndim() > 16 || pts.shape(pts.ndim() - 1) != 3) return -1;
    return static_cast<int64_t>(pts.size() / 3);
}

/// out (float64 or float32 T, the points' shape), or a new array of that shape when out is None;
/// false if out is not such an array.
template <class T, class A>
bool out_like(const A& pts, nb::handle out, nb::object& res, T*& data) {
    if (out.is_none()) {
        std::size_t shape[16];
        for (std::size_t d = 0; d < pts.ndim(); ++d) shape[d] = pts.shape(d);
        T* buf = new T[pts.size() ? pts.size() : 1];
        nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
        res = nb::cast(nb::ndarray<nb::numpy, T>(buf, pts.ndim(), shape, owner));
        data = buf;
        return true;
    }
    nb::ndarray<T, nb::c_contig, nb::device::cpu> o;
    if (!nb::try_cast(out, o, false) || o.ndim() != pts.ndim()) return false;
    for (std::size_t d = 0; d < pts.ndim(); ++d)
        if (o.shape(d) != pts.shape(d)) return false;
    res = nb::borrow(out);
    data = o.data();
    return true;
}
}  // namespace

void bind_thin_calls(nb::module_& m) {
    m.def(
        "project_box_fast",
        [](NArr pts, NArr lo, NArr hi, nb::handle out) -> nb::object {
            const int64_t n = rows_of(pts);
            if (n < 0 || !finite3(lo, 3) || !finite3(hi, 3)) return nb::none();
            for (int k = 0; k < 3; ++k)
                if (lo.data()[k] > hi.data()[k]) return nb::none();
            nb::object res;
            double* o;
            if (!out_like(pts, out, res, o)) return nb::none();
            bool ok;
            {
                nb::gil_scoped_release nogil;
                ok = jointlimits::project_box_aa(pts.data(), n, lo.data(), hi.data(), o);
            }
            return ok ? res : nb::none();
        },
        nb::arg("pts").noconvert(), nb::arg("lo").noconvert(), nb::arg("hi").noconvert(), nb::arg("out").none(),
        "project_box_aa with its checks in one call: the result (out, or a new array), or None where the "
        "checked path must run (wrong shapes, non-finite values, lo > hi).");
    m.def(
        "project_box_f32_fast",
        [](FIn pts, NArr lo, NArr hi, nb::handle out) -> nb::object {
            const int64_t n = rows_of(pts);
            if (n < 0 || !finite3(lo, 3) || !finite3(hi, 3)) return nb::none();
            float l[3], h[3];
            for (int k = 0; k < 3; ++k) {
                if (lo.data()[k] > hi.data()[k]) return nb::none();
                l[k] = static_cast<float>(lo.data()[k]);
                h[k] = static_cast<float>(hi.data()[k]);
            }
            nb::object res;
            float* o;
            if (out.is_none() || !out_like(pts, out, res, o)) return nb::none();
            bool ok;
            {
                nb::gil_scoped_release nogil;
                ok = jointlimits::project_box_aa(pts.data(), n, l, h, o);
            }
            return ok ? res : nb::none();
        },
        nb::arg("pts").noconvert(), nb::arg("lo").noconvert(), nb::arg("hi").noconvert(), nb::arg("out").none(),
        "project_box_aa_f32 with its checks in one call: out, or None where the checked path must run.");
    m.def(
        "project_box_oriented_fast",
        [](NArr pts, NArr lo, NArr hi, NArr pos, NArr rot, bool always_map, nb::handle out) -> nb::object {
            const int64_t n = rows_of(pts);
            if (n < 0 || !finite3(lo, 3) || !finite3(hi, 3) || !finite3(pos, 3)) return nb::none();
            if (rot.ndim() != 2 || rot.shape(0) != 3 || rot.shape(1) != 3) return nb::none();
            for (int k = 0; k < 9; ++k)
                if (!std::isfinite(rot.data()[k])) return nb::none();
            for (int k = 0; k < 3; ++k)
                if (lo.data()[k] > hi.data()[k]) return nb::none();
            nb::object res;
            double* o;
            if (!out_like(pts, out, res, o)) return nb::none();
            const Frame fr(pos.data(), rot.data());
            bool ok;
            {
                nb::gil_scoped_release nogil;
                ok = jointlimits::project_box_oriented(pts.data(), n, lo.data(), hi.data(), fr, always_map, o);
            }
            return ok ? res : nb::none();
        },
        nb::arg("pts").noconvert(), nb::arg("lo").noconvert(), nb::arg("hi").noconvert(), nb::arg("pos").noconvert(),
        nb::arg("rot").noconvert(), nb::arg("always_map"), nb::arg("out").none(),
        "project_box_oriented with its checks in one call: the result, or None where the checked path must run.");
    m.def(
        "project_ellipsoid_fast",
        [](NArr pts, NArr scale, double eps, NArr pos, NArr rot, int iterations, nb::handle out) -> nb::object {
            const int64_t n = rows_of(pts);
            if (n < 0 || !finite3(scale, 3) || !finite3(pos, 3) || iterations < 1) return nb::none();
            if (!(std::isfinite(eps) && eps >= 0.0)) return nb::none();
            if (rot.ndim() != 2 || rot.shape(0) != 3 || rot.shape(1) != 3) return nb::none();
            for (int k = 0; k < 9; ++k)
                if (!std::isfinite(rot.data()[k])) return nb::none();
            for (int k = 0; k < 3; ++k)
                if (scale.data()[k] < 0.0) return nb::none();
            nb::object res;
            double* o;
            if (!out_like(pts, out, res, o)) return nb::none();
            const Frame fr(pos.data(), rot.data());
            int64_t bad;
            {
                nb::gil_scoped_release nogil;
                bad = jointlimits::project_ellipsoid(pts.data(), n, scale.data(), eps, fr, iterations, o);
            }
            return bad < 0 ? res : nb::none();
        },
        nb::arg("pts").noconvert(), nb::arg("scale").noconvert(), nb::arg("eps"), nb::arg("pos").noconvert(),
        nb::arg("rot").noconvert(), nb::arg("iterations"), nb::arg("out").none(),
        "project_ellipsoid with its checks in one call: the result, or None where the checked path must run.");
}

void bind_shapes(nb::module_& m) {
    bind_thin_calls(m);
    m.def(
        "project_box_aa",
        [](CArr pts, CArr lo, CArr hi, Arr out) {
            const int64_t n = rows3(pts, out);
            check_shape(lo, "lo", {3});
            check_shape(hi, "hi", {3});
            nb::gil_scoped_release nogil;
            return jointlimits::project_box_aa(pts.data(), n, lo.data(), hi.data(), out.data());
        },
        nb::arg("pts"), nb::arg("lo"), nb::arg("hi"), nb::arg("out").noconvert(),
        "Clamp points [n, 3] to lo <= p <= hi into out; False if any input is not finite.");
    using FArr = nb::ndarray<float, nb::c_contig, nb::device::cpu>;
    using CFArr = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
    m.def(
        "project_box_aa_f32",
        [](CFArr pts, CFArr lo, CFArr hi, FArr out) {
            const int64_t n = pts.ndim() == 2 ? int64_t(pts.shape(0)) : -1;
            check_shape(pts, "pts", {n, 3});
            check_shape(out, "out", {n, 3});
            check_shape(lo, "lo", {3});
            check_shape(hi, "hi", {3});
            nb::gil_scoped_release nogil;
            return jointlimits::project_box_aa(pts.data(), n, lo.data(), hi.data(), out.data());
        },
        nb::arg("pts").noconvert(), nb::arg("lo"), nb::arg("hi"), nb::arg("out").noconvert(),
        "project_box_aa for float32 points and out; False if any input is not finite.");
    m.def(
        "project_box_oriented",
        [](CArr pts, CArr lo, CArr hi, CArr pos, CArr rot, bool always_map, Arr out) {
            const int64_t n = rows3(pts, out);
            check_shape(lo, "lo", {3});
            check_shape(hi, "hi", {3});
            const Frame fr = frame(pos, rot);
            nb::gil_scoped_release nogil;
            return jointlimits::project_box_oriented(pts.data(), n, lo.data(), hi.data(), fr, always_map, out.data());
        },
        nb::arg("pts"), nb::arg("lo"), nb::arg("hi"), nb::arg("pos"), nb::arg("rot"), nb::arg("always_map"),
        nb::arg("out").noconvert(),
        "Closest points of the box lo <= R^T (p - pos) <= hi into out; False if any input is not finite.");
    m.def(
        "project_ellipsoid",
        [](CArr pts, CArr scale, double eps, CArr pos, CArr rot, int iterations, Arr out) {
            const int64_t n = rows3(pts, out);
            check_shape(scale, "scale", {3});
            const Frame fr = frame(pos, rot);
            nb::gil_scoped_release nogil;
            return jointlimits::project_ellipsoid(pts.data(), n, scale.data(), eps, fr, iterations, out.data());
        },
        nb::arg("pts"), nb::arg("scale"), nb::arg("eps"), nb::arg("pos"), nb::arg("rot"), nb::arg("iterations"),
        nb::arg("out").noconvert(),
        "Closest points of the ellipsoid |R^T (p - pos) / scale| <= 1 into out; first non-finite row or -1.");
    m.def(
        "project_kdop_slabs",
        [](CArr pts, CArr mins, CArr maxs, CArr pos, CArr rot, CArr axes, CArr aa, bool always_map, Arr out) {
            const int64_t n = rows3(pts, out);
            const int64_t k = axes.shape(0);
            check_shape(axes, "axes", {k, 3});
            check_shape(mins, "mins", {k});
            check_shape(maxs, "maxs", {k});
            check_shape(aa, "aa", {k});
            const Frame fr = frame(pos, rot);
            nb::gil_scoped_release nogil;
            return jointlimits::project_kdop_slabs(pts.data(), n, mins.data(), maxs.data(), fr, axes.data(), aa.data(),
                                                   static_cast<int>(k), always_map, out.data());
        },
        nb::arg("pts"), nb::arg("mins"), nb::arg("maxs"), nb::arg("pos"), nb::arg("rot"), nb::arg("axes"),
        nb::arg("aa"), nb::arg("always_map"), nb::arg("out").noconvert(),
        "The reference's k-DOP: one pass of slab clamps into out; first non-finite row or -1.");
    m.def(
        "project_kdop_exact",
        [](CArr pts, CArr G, CArr bnd, CArr pos, CArr rot, Arr out) {
            const int64_t n = rows3(pts, out);
            const int64_t mm = G.shape(0);
            check_shape(G, "G", {mm, 3});
            check_shape(bnd, "bnd", {mm});
            const Frame fr = frame(pos, rot);
            int64_t empty = -1, bad;
            {
                nb::gil_scoped_release nogil;
                bad = jointlimits::project_kdop_exact(pts.data(), n, G.data(), bnd.data(), static_cast<int>(mm), fr,
                                                      out.data(), &empty);
            }
            return std::make_pair(bad, empty);
        },
        nb::arg("pts"), nb::arg("G"), nb::arg("bnd"), nb::arg("pos"), nb::arg("rot"), nb::arg("out").noconvert(),
        "Exact closest points of {G x <= bnd} (local frame) into out; (first non-finite row, first row "
        "the polytope is empty for), each -1 if none.");
    m.def(
        "soften",
        [](CArr orig, CArr proj, double falloff, double radius, double eps, Arr out) {
            const int64_t n = rows3(orig, out);
            check_shape(proj, "proj", {n, 3});
            nb::gil_scoped_release nogil;
            return jointlimits::soften(orig.data(), proj.data(), n, falloff, radius, eps, out.data());
        },
        nb::arg("orig"), nb::arg("proj"), nb::arg("falloff"), nb::arg("radius"), nb::arg("eps"),
        nb::arg("out").noconvert(), "projection_soften of points [n, 3] into out; False if any input is not finite.");
    m.def(
        "subsample_grid",
        [](CArr pts, double distance, double margin, double cell) {
            const int64_t n = pts.shape(0);
            check_shape(pts, "pts", {n, 3});
            auto* keep = new std::vector<int64_t>();
            {
                nb::gil_scoped_release nogil;
                *keep = jointlimits::subsample_grid(pts.data(), n, distance, margin, cell);
            }
            nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
            return nb::ndarray<nb::numpy, int64_t, nb::ndim<1>>(keep->data(), {keep->size()}, owner);
        },
        nb::arg("pts"), nb::arg("distance"), nb::arg("margin"), nb::arg("cell"),
        "Indices of the greedily kept points (hash grid; no kept point strictly closer than distance).");
    m.def(
        "subsample_naive",
        [](CArr pts, double distance) {
            const int64_t n = pts.shape(0);
            check_shape(pts, "pts", {n, 3});
            auto* keep = new std::vector<int64_t>();
            {
                nb::gil_scoped_release nogil;
                *keep = jointlimits::subsample_naive(pts.data(), n, distance);
            }
            nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
            return nb::ndarray<nb::numpy, int64_t, nb::ndim<1>>(keep->data(), {keep->size()}, owner);
        },
        nb::arg("pts"), nb::arg("distance"), "The reference's O(N M) greedy subsampling (for checks).");
}

}  // namespace jlbind

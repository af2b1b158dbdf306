// Batched limit-space projections (box, oriented box, ellipsoid, k-DOP slabs and exact), soften and
// greedy subsampling: the kernels of jointlimits.limits.{box,ellipsoid,kdop,cloud}.
#include <nanobind/stl/pair.h>

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
}  // namespace

void bind_shapes(nb::module_& m) {
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

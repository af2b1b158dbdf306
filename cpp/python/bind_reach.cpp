// Reach windows (Blow 2002).
#include "bind.hpp"
#include "jointlimits/reach.hpp"

namespace jlbind {

/// Check a window table and wrap it (W windows, V vertices in all).
jointlimits::ReachWindows reach_windows(const CArr& wn, const CArr& we1, const CArr& we2, const CArr& wc,
                                        const IArr& wvs, const CArr& verts, const CArr& eg) {
    const int64_t W = wn.shape(0);
    check_shape(wn, "wn", {W, 3});
    check_shape(we1, "we1", {W, 3});
    check_shape(we2, "we2", {W, 3});
    check_shape(wc, "wc", {W, 2});
    check_shape(wvs, "wvs", {W + 1});
    const int64_t V = verts.shape(0);
    check_shape(verts, "verts", {V, 2});
    check_shape(eg, "eg", {V, 3});
    for (int64_t w = 0; w < W; ++w)
        if (wvs.data()[w] < 0 || wvs.data()[w + 1] < wvs.data()[w] || wvs.data()[w + 1] > V)
            throw std::invalid_argument("_core: corrupt window table");
    for (const CArr* a : {&wn, &we1, &we2, &wc, &verts, &eg})
        if (!jointlimits::reach_finite(a->data(), a->size()))
            throw std::invalid_argument("_core: non-finite window table");
    return {wn.data(), we1.data(), we2.data(), wc.data(), wvs.data(), verts.data(), eg.data()};
}

namespace {
std::vector<double> vec(const CArr& a) { return std::vector<double>(a.data(), a.data() + a.size()); }
}  // namespace

void bind_reach(nb::module_& m) {
    nb::class_<jointlimits::ReachLimit>(m, "ReachLimit",
                                        "One joint's reach windows and twist range: what ReachWindowLimit.compiled() "
                                        "returns (IK reads it).")
        .def(
            "__init__",
            [](jointlimits::ReachLimit* self, CArr ref, CArr axis, double tmid, double thalf, CArr wn, CArr we1,
               CArr we2, CArr wc, IArr wvs, CArr verts, CArr eg) {
                check_shape(ref, "ref", {4});
                check_shape(axis, "axis", {3});
                reach_windows(wn, we1, we2, wc, wvs, verts, eg);  // the table's shapes and ranges
                jointlimits::ReachLimit L;
                L.ref = {ref.data()[0], ref.data()[1], ref.data()[2], ref.data()[3]};
                L.axis = {axis.data()[0], axis.data()[1], axis.data()[2]};
                L.tmid = tmid, L.thalf = thalf;
                L.wn = vec(wn), L.we1 = vec(we1), L.we2 = vec(we2), L.wc = vec(wc), L.verts = vec(verts), L.eg = vec(eg);
                L.wvs.assign(wvs.data(), wvs.data() + wvs.size());
                L.validate();
                new (self) jointlimits::ReachLimit(std::move(L));
            },
            nb::arg("ref"), nb::arg("axis"), nb::arg("tmid"), nb::arg("thalf"), nb::arg("wn"), nb::arg("we1"),
            nb::arg("we2"), nb::arg("wc"), nb::arg("wvs"), nb::arg("verts"), nb::arg("eg"))
        .def(
            "project",
            [](const jointlimits::ReachLimit& L, CArr q, double slack, Arr out) {
                const int64_t n = q.shape(0);
                check_shape(q, "q", {n, 4});
                check_shape(out, "out", {n, 4});
                nb::gil_scoped_release nogil;
                jointlimits::reach_project(q.data(), n, L.ref, L.axis, L.tmid, L.thalf, L.n_windows(), L.windows(),
                                           slack, out.data());
            },
            nb::arg("q"), nb::arg("slack"), nb::arg("out").noconvert(),
            "Reach-window projection of rotations q [n, 4] into out [n, 4].");
    m.def(
        "reach_project",
        [](CArr q, CArr ref, CArr axis, double tmid, double thalf, CArr wn, CArr we1, CArr we2, CArr wc, IArr wvs,
           CArr verts, CArr eg, double slack, Arr out) {
            const int64_t n = q.shape(0);
            check_shape(q, "q", {n, 4});
            check_shape(out, "out", {n, 4});
            check_shape(ref, "ref", {4});
            check_shape(axis, "axis", {3});
            const jointlimits::ReachWindows W = reach_windows(wn, we1, we2, wc, wvs, verts, eg);
            const double tt[2] = {tmid, thalf};
            if (!jointlimits::reach_finite(ref.data(), 4) || !jointlimits::reach_finite(axis.data(), 3) ||
                !jointlimits::reach_finite(tt, 2))
                throw std::invalid_argument("_core: non-finite reference, axis or twist");
            const double* r = ref.data();
            const double* a = axis.data();
            nb::gil_scoped_release nogil;
            jointlimits::reach_project(q.data(), n, {r[0], r[1], r[2], r[3]}, {a[0], a[1], a[2]}, tmid, thalf,
                                       wn.shape(0), W, slack, out.data());
        },
        "Reach-window projection of rotations q [n, 4] into out [n, 4].");
}

}  // namespace jlbind

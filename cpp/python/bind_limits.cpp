// The per-joint limit step on packed limits, limit space maps, and whole-skeleton pose projection:
// the kernels of jointlimits.limits.{joint,_kernels} and the pose path of JointLimits.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <utility>

#include "bind.hpp"
#include "jointlimits/step.hpp"

namespace jlbind {

namespace {
using jointlimits::PackedLimit;
using jointlimits::PackedShape;
using jointlimits::PoseLimits;

std::vector<double> vec(const CArr& a) { return std::vector<double>(a.data(), a.data() + a.size()); }

/// A shape from the tuple Shape.pack() returns: (code, f[16], axes, mins, maxs, G, bnd).
PackedShape shape_from(const nb::tuple& t) {
    if (t.size() != 7) throw std::invalid_argument("_core: a packed shape is (code, f, axes, mins, maxs, G, bnd)");
    PackedShape s;
    s.code = nb::cast<int>(t[0]);
    const CArr f = nb::cast<CArr>(t[1]);
    if (f.size() != 16) throw std::invalid_argument("_core: a packed shape's f has 16 values");
    for (int i = 0; i < 16; ++i) s.f[i] = f.data()[i];
    s.axes = vec(nb::cast<CArr>(t[2]));
    s.mins = vec(nb::cast<CArr>(t[3]));
    s.maxs = vec(nb::cast<CArr>(t[4]));
    s.G = vec(nb::cast<CArr>(t[5]));
    s.bnd = vec(nb::cast<CArr>(t[6]));
    if (s.code < 0 || s.code > 5) throw std::invalid_argument("_core: unknown shape code");
    if (s.axes.size() % 3 || s.G.size() != 3 * s.bnd.size())
        throw std::invalid_argument("_core: a packed shape's axes / G must be [n, 3]");
    if (s.code == jointlimits::BOX && (s.mins.size() != 3 || s.maxs.size() != 3))
        throw std::invalid_argument("_core: a packed box needs 3 mins and maxs");
    if (s.code == jointlimits::SLABS && (s.mins.size() * 3 != s.axes.size() || s.maxs.size() != s.mins.size()))
        throw std::invalid_argument("_core: packed slabs need one min and max per axis");
    if (s.code == jointlimits::POLYGON && s.axes.size() < 3)
        throw std::invalid_argument("_core: a packed polygon needs vertices");
    s.prepare();
    return s;
}

int64_t rows4(const CArr& q, const char* name) {
    if (q.ndim() != 2 || q.shape(1) != 4)
        throw std::invalid_argument(std::string("_core: array '") + name + "' must be [n, 4]");
    return q.shape(0);
}
}  // namespace

void bind_limits(nb::module_& m) {
    nb::class_<PackedLimit>(m, "PackedLimit", "One joint's limit packed for the compiled step.")
        .def(
            "__init__",
            [](PackedLimit* self, int mode, bool covers, double tlo, double thi, CArr ref, CArr axis, nb::tuple a,
               nb::tuple b) {
                check_shape(ref, "ref", {4});
                check_shape(axis, "axis", {3});
                if (mode < 0 || mode > 2) throw std::invalid_argument("_core: limit mode must be 0, 1 or 2");
                PackedLimit L;
                L.mode = mode;
                L.covers = covers;
                L.tlo = tlo;
                L.thi = thi;
                L.ref = {ref.data()[0], ref.data()[1], ref.data()[2], ref.data()[3]};
                L.axis = {axis.data()[0], axis.data()[1], axis.data()[2]};
                L.a = shape_from(a);
                L.b = shape_from(b);
                new (self) PackedLimit(std::move(L));
            },
            nb::arg("mode"), nb::arg("covers"), nb::arg("tlo"), nb::arg("thi"), nb::arg("ref"), nb::arg("axis"),
            nb::arg("a"), nb::arg("b"))
        .def(
            "project",
            [](const PackedLimit& L, CArr q, bool soft_on, double falloff, double radius) {
                const size_t nd = q.ndim();
                if (nd == 0 || q.shape(nd - 1) != 4)
                    throw std::invalid_argument("_core: rotations must be [..., 4]");
                const size_t n = q.size() / 4;
                double* buf = new double[q.size() ? q.size() : 1];
                nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<double*>(p); });
                if (n >= 64) {  // releasing the GIL costs more than a few rotations
                    nb::gil_scoped_release nogil;
                    jointlimits::limit_step(L, q.data(), n, soft_on, falloff, radius, buf, nullptr);
                } else {
                    jointlimits::limit_step(L, q.data(), n, soft_on, falloff, radius, buf, nullptr);
                }
                size_t shape[8];
                if (nd > 8) throw std::invalid_argument("_core: at most 8 dimensions");
                for (size_t i = 0; i < nd; ++i) shape[i] = q.shape(i);
                return nb::ndarray<nb::numpy, double>(buf, nd, shape, owner);
            },
            nb::arg("q"), nb::arg("soft_on"), nb::arg("falloff"), nb::arg("radius"),
            "Limited rotations [..., 4] (a new array): the step with one call and one allocation.");

    m.def(
        "limit_step",
        [](const PackedLimit& L, CArr q, bool soft_on, double falloff, double radius, Arr out,
           std::optional<Arr> hard) {
            const int64_t n = rows4(q, "q");
            check_shape(out, "out", {n, 4});
            if (hard) check_shape(*hard, "hard", {n, 4});
            double* h = hard ? hard->data() : nullptr;
            nb::gil_scoped_release nogil;
            jointlimits::limit_step(L, q.data(), n, soft_on, falloff, radius, out.data(), h);
        },
        nb::arg("limit"), nb::arg("q"), nb::arg("soft_on"), nb::arg("falloff"), nb::arg("radius"),
        nb::arg("out").noconvert(), nb::arg("hard").noconvert() = nb::none(),
        "Limited rotations q [n, 4] into out (softened if soft_on) and the unsoftened ones into hard.");

    m.def(
        "to_limit_space",
        [](CArr q, CArr ref, Arr out) {
            const int64_t n = rows4(q, "q");
            check_shape(ref, "ref", {4});
            check_shape(out, "out", {n, 3});
            nb::gil_scoped_release nogil;
            jointlimits::to_limit_space(q.data(), n, ref.data(), out.data());
        },
        nb::arg("q"), nb::arg("ref"), nb::arg("out").noconvert(),
        "Scaled angle axis of abs(inv(ref) q) for q [n, 4] into out [n, 3].");
    m.def(
        "from_limit_space",
        [](CArr v, CArr ref, Arr out) {
            const int64_t n = v.shape(0);
            check_shape(v, "v", {n, 3});
            check_shape(ref, "ref", {4});
            check_shape(out, "out", {n, 4});
            nb::gil_scoped_release nogil;
            jointlimits::from_limit_space(v.data(), n, ref.data(), out.data());
        },
        nb::arg("v"), nb::arg("ref"), nb::arg("out").noconvert(), "ref * exp(v / 2) for v [n, 3] into out [n, 4].");

    nb::class_<PoseLimits>(m, "PoseLimits", "Every limited joint of a skeleton, projecting whole poses.")
        .def(
            "__init__",
            [](PoseLimits* self, int64_t num_joints, std::vector<int64_t> joints, std::vector<const PackedLimit*> lims) {
                if (joints.size() != lims.size()) throw std::invalid_argument("_core: one limit per joint");
                PoseLimits P;
                P.num_joints = num_joints;
                for (size_t k = 0; k < joints.size(); ++k) {
                    if (joints[k] < 0 || joints[k] >= num_joints || lims[k] == nullptr)
                        throw std::invalid_argument("_core: joint index out of range");
                    P.joints.push_back(joints[k]);
                    P.limits.push_back(*lims[k]);
                }
                new (self) PoseLimits(std::move(P));
            },
            nb::arg("num_joints"), nb::arg("joints"), nb::arg("limits"))
        .def(
            "project",
            [](const PoseLimits& P, CArr q, bool soft_on, double falloff, double radius, Arr out) {
                const int64_t J = P.num_joints;
                if (q.ndim() < 2 || q.shape(q.ndim() - 1) != 4 || q.shape(q.ndim() - 2) != size_t(J))
                    throw std::invalid_argument("_core: rotations must be [..., J, 4]");
                if (out.size() != q.size()) throw std::invalid_argument("_core: out must be the size of q");
                const size_t frames = q.size() / (4 * J);
                nb::gil_scoped_release nogil;
                return P.project(q.data(), frames, soft_on, falloff, radius, out.data());
            },
            nb::arg("q"), nb::arg("soft_on"), nb::arg("falloff"), nb::arg("radius"), nb::arg("out").noconvert(),
            "Limited poses q [..., J, 4] into out (joints without a limit copied); False (out unspecified) "
            "if q holds a non-finite value.")
        .def_prop_ro("num_joints", [](const PoseLimits& P) { return P.num_joints; })
        .def_prop_ro("joints", [](const PoseLimits& P) { return P.joints; });
}

}  // namespace jlbind

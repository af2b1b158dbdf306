// Compiled shapes and limits, the per-joint limit step, limit space maps, and whole-skeleton pose projection:
// the kernels of jointlimits.limits.{joint,_kernels} and the pose path of JointLimits.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <utility>

#include "bind.hpp"
#include "jointlimits/step.hpp"

namespace jlbind {

namespace {
using jointlimits::CompiledLimit;
using jointlimits::CompiledShape;
using jointlimits::PoseLimits;
using jointlimits::ShapeArrays;
using jointlimits::Vec3;

std::vector<double> vec(const CArr& a) { return std::vector<double>(a.data(), a.data() + a.size()); }

nb::ndarray<nb::numpy, double> to_numpy(const std::vector<double>& v, size_t cols) {
    double* buf = new double[v.empty() ? 1 : v.size()];
    std::copy(v.begin(), v.end(), buf);
    nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    if (cols == 1) {
        size_t shape[1] = {v.size()};
        return nb::ndarray<nb::numpy, double>(buf, 1, shape, owner);
    }
    size_t shape[2] = {v.size() / cols, cols};
    return nb::ndarray<nb::numpy, double>(buf, 2, shape, owner);
}

/// The shape of kind `kind` from Python arrays (validated by the shape: ValueError if bad).
CompiledShape shape_from(const std::string& kind, const CArr& f, const CArr& axes, const CArr& mins, const CArr& maxs,
                         const CArr& G, const CArr& bnd) {
    if (f.size() != 16) throw std::invalid_argument("_core: a compiled shape's f has 16 values");
    ShapeArrays a;
    for (int i = 0; i < 16; ++i) a.f[i] = f.data()[i];
    a.axes = vec(axes), a.mins = vec(mins), a.maxs = vec(maxs), a.G = vec(G), a.bnd = vec(bnd);
    return jointlimits::make_shape(kind, a);  // jointlimits::ShapeError is a ValueError
}

/// Points [..., 3] -> a new array [..., cols] of f(point) (cols values of T per point).
template <class T = double, class F>
nb::ndarray<nb::numpy, T> per_point(const CArr& p, size_t cols, F&& f) {
    const size_t nd = p.ndim();
    if (nd == 0 || p.shape(nd - 1) != 3 || nd > 8) throw std::invalid_argument("_core: points must be [..., 3]");
    const size_t n = p.size() / 3;
    T* buf = new T[n ? n * cols : 1];
    nb::capsule owner(buf, [](void* q) noexcept { delete[] static_cast<T*>(q); });
    {
        nb::gil_scoped_release nogil;
        const double* x = p.data();
        for (size_t i = 0; i < n; ++i) f(Vec3{x[3 * i], x[3 * i + 1], x[3 * i + 2]}, buf + cols * i);
    }
    size_t shape[8];
    for (size_t i = 0; i < nd; ++i) shape[i] = p.shape(i);
    const size_t ndo = cols == 3 ? nd : nd - 1;
    return nb::ndarray<nb::numpy, T>(buf, ndo, shape, owner);
}

int64_t rows4(const CArr& q, const char* name) {
    if (q.ndim() != 2 || q.shape(1) != 4)
        throw std::invalid_argument(std::string("_core: array '") + name + "' must be [n, 4]");
    return q.shape(0);
}
}  // namespace

void bind_limits(nb::module_& m) {
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const jointlimits::ShapeError& e) {
            PyErr_SetString(PyExc_ValueError, (std::string("_core: ") + e.what()).c_str());
        }
    });
    nb::class_<CompiledShape>(m, "CompiledShape",
                              "A compiled limit-space shape (box, slabs, ellipsoid, ellipse, kdop, polygon): what "
                              "Shape.compile() returns and the step projects onto.")
        .def(
            "__init__",
            [](CompiledShape* self, const std::string& kind, CArr f, CArr axes, CArr mins, CArr maxs, CArr G,
               CArr bnd) { new (self) CompiledShape(shape_from(kind, f, axes, mins, maxs, G, bnd)); },
            nb::arg("kind"), nb::arg("f"), nb::arg("axes"), nb::arg("mins"), nb::arg("maxs"), nb::arg("G"),
            nb::arg("bnd"),
            "The shape `kind` from f[16] = position, rotation (row-major), scale, radius and the flat arrays it "
            "reads (ValueError if they do not fit it).")
        .def_prop_ro("kind", [](const CompiledShape& s) { return std::string(jointlimits::shape_name(s)); })
        .def_prop_ro("code", [](const CompiledShape& s) { return static_cast<int>(s.index()); },
                     "The shape's code in limits files.")
        .def_prop_ro("radius", [](const CompiledShape& s) { return jointlimits::shape_radius(s); })
        .def(
            "arrays",
            [](const CompiledShape& s) {
                const ShapeArrays a = jointlimits::shape_arrays(s).second;
                nb::dict d;
                d["f"] = to_numpy(std::vector<double>(a.f, a.f + 16), 1);
                d["axes"] = to_numpy(a.axes, 3);
                d["mins"] = to_numpy(a.mins, 1);
                d["maxs"] = to_numpy(a.maxs, 1);
                d["G"] = to_numpy(a.G, 3);
                d["bnd"] = to_numpy(a.bnd, 1);
                return d;
            },
            "The shape's arrays as the limits file holds them: f, axes, mins, maxs, G, bnd.")
        .def(
            "project",
            [](const CompiledShape& s, CArr p) {
                return std::visit([&](const auto& x) {
                    return per_point(p, 3, [&](const Vec3& v, double* o) {
                        const Vec3 h = x.project(v);
                        o[0] = h.x, o[1] = h.y, o[2] = h.z;
                    });
                }, s);
            },
            nb::arg("points"), "Closest points [..., 3] in limit space (points inside unchanged, bit for bit).")
        .def(
            "distance",
            [](const CompiledShape& s, CArr p) {
                return std::visit([&](const auto& x) {
                    return per_point(p, 1, [&](const Vec3& v, double* o) { o[0] = x.distance(v); });
                }, s);
            },
            nb::arg("points"), "Distance [...] from each point to the shape (0 inside).")
        .def(
            "contains",
            [](const CompiledShape& s, CArr p, double tolerance) {
                return std::visit([&](const auto& x) {
                    return per_point<bool>(p, 1, [&](const Vec3& v, bool* o) { o[0] = x.contains(v, tolerance); });
                }, s);
            },
            nb::arg("points"), nb::arg("tolerance") = 1e-9,
            "Whether each point is within `tolerance` of the shape [...].");

    nb::class_<CompiledLimit>(m, "CompiledLimit", "One joint's compiled limit: what FittedLimit.compiled() returns.")
        .def(
            "__init__",
            [](CompiledLimit* self, int mode, bool covers, double tlo, double thi, CArr ref, CArr axis,
               const CompiledShape& a, const CompiledShape& b) {
                check_shape(ref, "ref", {4});
                check_shape(axis, "axis", {3});
                CompiledLimit L;
                L.mode = mode;
                L.covers = covers;
                L.tlo = tlo;
                L.thi = thi;
                L.ref = {ref.data()[0], ref.data()[1], ref.data()[2], ref.data()[3]};
                L.axis = {axis.data()[0], axis.data()[1], axis.data()[2]};
                L.a = a;
                L.b = b;
                L.validate();
                new (self) CompiledLimit(std::move(L));
            },
            nb::arg("mode"), nb::arg("covers"), nb::arg("tlo"), nb::arg("thi"), nb::arg("ref"), nb::arg("axis"),
            nb::arg("a"), nb::arg("b"))
        .def_prop_ro("mode", [](const CompiledLimit& L) { return L.mode; })
        .def_prop_ro("a", [](const CompiledLimit& L) { return L.a; })
        .def_prop_ro("b", [](const CompiledLimit& L) { return L.b; })
        .def(
            "project",
            [](const CompiledLimit& L, CArr q, bool soft_on, double falloff, double radius) {
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
        [](const CompiledLimit& L, CArr q, bool soft_on, double falloff, double radius, Arr out,
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
            [](PoseLimits* self, int64_t num_joints, std::vector<int64_t> joints, std::vector<const CompiledLimit*> lims) {
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
            [](const PoseLimits& P, CArr q, bool soft_on, double falloff, double radius, Arr out,
               std::optional<Arr> hard) {
                const int64_t J = P.num_joints;
                if (q.ndim() < 2 || q.shape(q.ndim() - 1) != 4 || q.shape(q.ndim() - 2) != size_t(J))
                    throw std::invalid_argument("_core: rotations must be [..., J, 4]");
                if (out.size() != q.size()) throw std::invalid_argument("_core: out must be the size of q");
                double* h = nullptr;
                if (hard) {
                    if (hard->size() != q.size()) throw std::invalid_argument("_core: hard must be the size of q");
                    h = hard->data();
                    if (h == out.data() || h == q.data())
                        throw std::invalid_argument("_core: hard must be an array of its own");
                }
                const size_t frames = q.size() / (4 * J);
                nb::gil_scoped_release nogil;
                return P.project(q.data(), frames, soft_on, falloff, radius, out.data(), h);
            },
            nb::arg("q"), nb::arg("soft_on"), nb::arg("falloff"), nb::arg("radius"), nb::arg("out").noconvert(),
            nb::arg("hard").noconvert() = nb::none(),
            "Limited poses q [..., J, 4] into out (joints without a limit copied) and, if given, the "
            "unsoftened result into hard in the same pass; False (out unspecified) if q holds a "
            "non-finite value.")
        .def_prop_ro("num_joints", [](const PoseLimits& P) { return P.num_joints; })
        .def_prop_ro("joints", [](const PoseLimits& P) { return P.joints; });
}

}  // namespace jlbind

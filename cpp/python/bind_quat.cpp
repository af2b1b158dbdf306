// Batched quaternion kernels of jointlimits.motion.quat (rows of contiguous float64; the Python
// wrappers check shapes, dtypes and broadcasting and take numpy's path for anything else).
#include "bind.hpp"
#include "jointlimits/quat_batch.hpp"

namespace jlbind {

namespace {
namespace qb = jointlimits::qb;
/// rows of width w in a (flat) array, ValueError if its size is not a multiple of w
std::size_t rows(const CArr& a, std::size_t w, const char* name) {
    if (a.size() % w) throw std::invalid_argument(std::string("_core: '") + name + "' has the wrong size");
    return a.size() / w;
}
void need(const Arr& out, std::size_t size) {
    if (out.size() != size) throw std::invalid_argument("_core: 'out' has the wrong size");
}
}  // namespace

void bind_quat(nb::module_& m) {
    m.def(
        "q_mul",
        [](CArr a, CArr b, Arr out) {
            const std::size_t n = rows(a, 4, "a");
            if (b.size() != a.size()) throw std::invalid_argument("_core: 'b' has the wrong size");
            need(out, 4 * n);
            nb::gil_scoped_release nogil;
            qb::mul(a.data(), b.data(), out.data(), n);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("out").noconvert(), "Hamilton products a b of [n, 4] rows into out.");
    m.def(
        "q_inv",
        [](CArr q, Arr out) {
            const std::size_t n = rows(q, 4, "q");
            need(out, 4 * n);
            nb::gil_scoped_release nogil;
            qb::inv(q.data(), out.data(), n);
        },
        nb::arg("q"), nb::arg("out").noconvert(), "Conjugates (w, -x, -y, -z) of [n, 4] rows into out.");
    m.def(
        "q_mul_vec",
        [](CArr q, CArr v, Arr out) {
            const std::size_t n = rows(q, 4, "q");
            if (v.size() != 3 * n) throw std::invalid_argument("_core: 'v' has the wrong size");
            need(out, 3 * n);
            nb::gil_scoped_release nogil;
            qb::mul_vec(q.data(), v.data(), out.data(), n);
        },
        nb::arg("q"), nb::arg("v"), nb::arg("out").noconvert(), "Vectors [n, 3] rotated by [n, 4] rows into out.");
    m.def(
        "q_to_matrix",
        [](CArr q, Arr out) {
            const std::size_t n = rows(q, 4, "q");
            need(out, 9 * n);
            nb::gil_scoped_release nogil;
            qb::to_matrix(q.data(), out.data(), n);
        },
        nb::arg("q"), nb::arg("out").noconvert(), "Rotation matrices [n, 3, 3] of [n, 4] rows into out.");
    m.def(
        "q_from_matrix",
        [](CArr mat, Arr out) {
            const std::size_t n = rows(mat, 9, "m");
            need(out, 4 * n);
            nb::gil_scoped_release nogil;
            return qb::from_matrix(mat.data(), out.data(), n);
        },
        nb::arg("m"), nb::arg("out").noconvert(),
        "Unit quaternions (w >= 0) of [n, 3, 3] matrices into out; False if a norm left the safe range.");
    m.def(
        "q_normalize",
        [](CArr q, Arr out) {
            const std::size_t n = rows(q, 4, "q");
            need(out, 4 * n);
            nb::gil_scoped_release nogil;
            return qb::normalize(q.data(), out.data(), n);
        },
        nb::arg("q"), nb::arg("out").noconvert(), "q / |q| of [n, 4] rows into out; False if a norm left the safe range.");
    m.def(
        "q_log2",
        [](CArr q, double eps, double scale, Arr out) {
            const std::size_t n = rows(q, 4, "q");
            need(out, 3 * n);
            nb::gil_scoped_release nogil;
            return qb::log2(q.data(), out.data(), n, eps, scale);
        },
        nb::arg("q"), nb::arg("eps"), nb::arg("scale"), nb::arg("out").noconvert(),
        "Scaled angle axis 2 log(q) times scale of [n, 4] rows into out; False if a norm is too large.");
    m.def(
        "q_exp2",
        [](CArr v, double pre, Arr out) {
            const std::size_t n = rows(v, 3, "v");
            need(out, 4 * n);
            nb::gil_scoped_release nogil;
            return qb::exp2(v.data(), out.data(), n, pre);
        },
        nb::arg("v"), nb::arg("pre"), nb::arg("out").noconvert(),
        "exp(pre v / 2) of [n, 3] rows into out; False if a norm left the safe range.");
    m.def(
        "q_slerp",
        [](CArr a, CArr b, CArr t, Arr out) {
            const std::size_t n = rows(a, 4, "a");
            if (b.size() != a.size()) throw std::invalid_argument("_core: 'b' has the wrong size");
            if (t.size() != n && t.size() != 1) throw std::invalid_argument("_core: 't' has the wrong size");
            need(out, 4 * n);
            const std::size_t ts = t.size() == 1 ? 0 : 1;
            nb::gil_scoped_release nogil;
            return qb::slerp(a.data(), b.data(), t.data(), ts, out.data(), n);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("t"), nb::arg("out").noconvert(),
        "Shortest-path slerp of [n, 4] rows at t (one or n values) into out; False if a norm left the safe range.");
    m.def(
        "q_from_euler3",
        [](CArr ang, int i, int j, int k, bool degrees, Arr out) {
            const std::size_t n = rows(ang, 3, "angles");
            if (i < 0 || j < 0 || k < 0 || i > 2 || j > 2 || k > 2 || i == j || j == k || i == k)
                throw std::invalid_argument("_core: axes must be a permutation of 0, 1, 2");
            need(out, 4 * n);
            nb::gil_scoped_release nogil;
            qb::from_euler3(ang.data(), i, j, k, degrees, out.data(), n);
        },
        nb::arg("angles"), nb::arg("i"), nb::arg("j"), nb::arg("k"), nb::arg("degrees"), nb::arg("out").noconvert(),
        "Products R_i(a0) R_j(a1) R_k(a2) of [n, 3] angle rows into out.");
    m.def(
        "q_to_euler",
        [](CArr q, int i, int j, int k, double scale, Arr out) {
            const std::size_t n = rows(q, 4, "q");
            if (i < 0 || j < 0 || k < 0 || i > 2 || j > 2 || k > 2 || i == j || j == k || i == k)
                throw std::invalid_argument("_core: axes must be a permutation of 0, 1, 2");
            need(out, 3 * n);
            nb::gil_scoped_release nogil;
            return qb::to_euler(q.data(), i, j, k, scale, out.data(), n);
        },
        nb::arg("q"), nb::arg("i"), nb::arg("j"), nb::arg("k"), nb::arg("scale"), nb::arg("out").noconvert(),
        "Intrinsic Euler angles (times scale) of [n, 4] rows into out; the first non-finite or zero row "
        "(n if none), or -2 if a norm left the safe range.");
}

}  // namespace jlbind

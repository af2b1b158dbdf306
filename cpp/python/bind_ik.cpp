// Inverse kinematics: two-bone (geometric and the demo's), whole-body DLS steps, CCD.
#include <nanobind/stl/optional.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "bind.hpp"
#include "jointlimits/ccd.hpp"
#include "jointlimits/two_bone.hpp"
#include "jointlimits/whole_body.hpp"

namespace jlbind {

namespace {
using I8 = nb::ndarray<int8_t, nb::c_contig, nb::device::cpu>;
using U8 = nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu>;
using BArr = nb::ndarray<const bool, nb::c_contig, nb::device::cpu>;
using OutB = nb::ndarray<bool, nb::c_contig, nb::device::cpu>;
using OutI = nb::ndarray<int64_t, nb::c_contig, nb::device::cpu>;

// Rows per core before a two-bone batch is split over the cores (a thread costs ~20-40 us).
constexpr int64_t kTwoBoneRowsPerCore = 1024;

/// A read-only C-contiguous float64 array seen through the buffer protocol, which costs less per
/// argument than nanobind's conversion; ok is false for anything else (lists, other dtypes or
/// layouts), which the Python wrapper then converts and checks.
struct View {
    Py_buffer v{};
    bool ok = false;
    explicit View(nb::handle h) {
        if (h.is_none()) return;
        if (PyObject_GetBuffer(h.ptr(), &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
            PyErr_Clear();
            return;
        }
        const char* f = v.format ? v.format : "B";
        if (*f == '<' || *f == '=' || *f == '@') ++f;
        ok = v.itemsize == 8 && f[0] == 'd' && f[1] == 0 && v.ndim >= 1 && v.ndim <= 8;
        if (!ok) PyBuffer_Release(&v);
    }
    ~View() {
        if (ok) PyBuffer_Release(&v);
    }
    View(const View&) = delete;
    View& operator=(const View&) = delete;
    const double* data() const { return static_cast<const double*>(v.buf); }
    size_t size() const { return size_t(v.len) / 8; }
    /// Same leading shape as ref and a last extent of `last`.
    bool like(const View& ref, Py_ssize_t last) const {
        if (!ok || v.ndim != ref.v.ndim || v.shape[v.ndim - 1] != last) return false;
        for (int i = 0; i + 1 < v.ndim; ++i)
            if (v.shape[i] != ref.v.shape[i]) return false;
        return true;
    }
    /// Every value of rows [lo, hi) finite (x - x is 0 only for finite x; vectorisable).
    bool finite(int64_t lo, int64_t hi) const {
        const size_t w = size_t(v.shape[v.ndim - 1]);
        const double* p = data() + w * size_t(lo);
        const size_t m = w * size_t(hi - lo);
        bool fin = true;
        for (size_t i = 0; i < m; ++i) fin &= (p[i] - p[i]) == 0.0;
        return fin;
    }
};

/// New numpy arrays of the leading shape of `a` for the outputs of a direct call: numpy.empty
/// with the buffer protocol for the pointer, cheaper than exporting nanobind ndarrays.
struct Outputs {
    nb::object lead, lead3, lead4;  // shape tuples: leading, then with a last extent of 3 and 4
    explicit Outputs(const View& a) {
        const int nd = a.v.ndim;
        PyObject* t[3] = {PyTuple_New(nd - 1), PyTuple_New(nd), PyTuple_New(nd)};
        for (int i = 0; i + 1 < nd; ++i)
            for (PyObject* x : t) PyTuple_SET_ITEM(x, i, PyLong_FromSsize_t(a.v.shape[i]));
        PyTuple_SET_ITEM(t[1], nd - 1, PyLong_FromLong(3));
        PyTuple_SET_ITEM(t[2], nd - 1, PyLong_FromLong(4));
        lead = nb::steal(t[0]), lead3 = nb::steal(t[1]), lead4 = nb::steal(t[2]);
    }
    template <class T>
    T* make(nb::object& out, int width) {
        return new_array<T>(out, width == 3 ? lead3 : width == 4 ? lead4 : lead);
    }
    /// numpy.empty(shape, T) into out; its data pointer.
    template <class T>
    static T* new_array(nb::object& out, const nb::object& shape) {
        // numpy.empty and the dtypes, looked up once and kept for the life of the process (never
        // released: the interpreter may be gone when static destructors run)
        static PyObject* empty = nb::object(nb::module_::import_("numpy").attr("empty")).release().ptr();
        static PyObject* dtype = [] {
            const char* name = std::is_same_v<T, int8_t>    ? "int8"
                               : std::is_same_v<T, int64_t> ? "int64"
                               : std::is_same_v<T, bool>    ? "bool"
                                                            : "float64";
            return nb::module_::import_("numpy").attr("dtype")(name).release().ptr();
        }();
        static_assert(std::is_same_v<T, double> || std::is_same_v<T, int8_t> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, bool>);
        PyObject* args[] = {shape.ptr(), dtype};
        out = nb::steal(PyObject_Vectorcall(empty, args, 2, nullptr));
        if (!out.is_valid()) throw nb::python_error();
        Py_buffer view;
        if (PyObject_GetBuffer(out.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
        T* p = static_cast<T*>(view.buf);
        PyBuffer_Release(&view);  // out keeps the memory alive
        return p;
    }
};

/// Rows of width w of an input that is either one row [w] (shared) or [N, w]: the stride between
/// rows (0 or w), or -1 for any other shape.
inline int64_t row_stride(const View& a, Py_ssize_t N, Py_ssize_t w) {
    if (!a.ok) return -1;
    if (a.v.ndim == 1 && a.v.shape[0] == w) return 0;
    if (a.v.ndim == 2 && a.v.shape[0] == N && a.v.shape[1] == w) return w;
    return -1;
}

/// Norms of the quaternions [m, 4] at p all where plain division normalises them as
/// jointlimits.motion.quat.normalize does (its unscaled branch); their norms into nrm.
inline bool quat_norms(const double* p, size_t m, std::vector<double>& nrm) {
    nrm.resize(m);
    for (size_t i = 0; i < m; ++i) {
        const double* q = p + 4 * i;
        const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(n > 1e-150 && n < 1e150)) return false;
        nrm[i] = n;
    }
    return true;
}

/// f(lo, hi) over [0, n), split over the cores for big batches (call without the GIL). Small
/// ones stay on this thread without asking the OS for the core count (~8 us in parallel_rows).
template <class F>
void split_rows(int64_t n, F&& f) {
    if (n < 2 * kTwoBoneRowsPerCore)
        f(int64_t(0), n);
    else
        parallel_rows(n, kTwoBoneRowsPerCore, f);
}

/// Run rows(lo, hi) over n rows in blocks whose inputs are checked finite first (while they are
/// in cache), with the GIL released and split over the cores for big batches. False (and the
/// outputs unspecified) when an input is not finite.
template <class Finite, class F>
bool run_rows(int64_t n, Finite&& finite, F&& rows) {
    std::atomic<bool> ok{true};
    auto blocks = [&](int64_t lo, int64_t hi) {
        for (int64_t s = lo; s < hi; s += 256) {
            const int64_t e = std::min(hi, s + 256);
            if (!finite(s, e)) {
                ok.store(false, std::memory_order_relaxed);
                return;
            }
            rows(s, e);
        }
    };
    if (n < 64) {  // releasing the GIL costs more than a few chains
        blocks(int64_t(0), n);
    } else {
        nb::gil_scoped_release nogil;
        split_rows(n, blocks);
    }
    return ok.load();
}
}  // namespace

namespace {
/// The per-joint limits of an n-joint chain: limits[k] is a CompiledLimit, a ReachLimit or None.
jointlimits::ChainLimits chain_limits(int64_t n, const nb::list& limits) {
    if (static_cast<int64_t>(limits.size()) != n) throw std::invalid_argument("_core: one limit entry per joint");
    jointlimits::ChainLimits lim;
    for (int64_t k = 0; k < n; ++k) {
        nb::handle h = limits[k];
        const jointlimits::CompiledLimit* f = nullptr;
        const jointlimits::ReachLimit* r = nullptr;
        if (nb::isinstance<jointlimits::CompiledLimit>(h))
            f = &nb::cast<const jointlimits::CompiledLimit&>(h);
        else if (nb::isinstance<jointlimits::ReachLimit>(h))
            r = &nb::cast<const jointlimits::ReachLimit&>(h);
        else if (!h.is_none())
            throw std::invalid_argument("_core: a chain limit is a CompiledLimit, a ReachLimit or None");
        lim.fitted.push_back(f);
        lim.reach.push_back(r);
    }
    return lim;
}
}  // namespace

void bind_ik(nb::module_& m) {
    m.def(
        "two_bone",
        [](CArr A, CArr B, CArr C, CArr T, CArr pole, bool has_pole, CArr P, CArr LK, CArr LJ, Arr root_out,
           Arr mid_out, Arr knee_out, Arr foot_out, I8 case_out) {
            const int64_t n = A.shape(0);
            for (auto* a : {&A, &B, &C, &T}) check_shape(*a, "position", {n, 3});
            if (has_pole) check_shape(pole, "pole", {n, 3});
            for (auto* a : {&P, &LK, &LJ}) check_shape(*a, "rotation", {n, 4});
            check_shape(root_out, "root_out", {n, 4});
            check_shape(mid_out, "mid_out", {n, 4});
            check_shape(knee_out, "knee_out", {n, 3});
            check_shape(foot_out, "foot_out", {n, 3});
            check_shape(case_out, "case_out", {n});
            nb::gil_scoped_release nogil;
            split_rows(n, [&](int64_t lo, int64_t hi) {
                jointlimits::two_bone(A.data() + 3 * lo, B.data() + 3 * lo, C.data() + 3 * lo, T.data() + 3 * lo,
                                      has_pole ? pole.data() + 3 * lo : nullptr, P.data() + 4 * lo, LK.data() + 4 * lo,
                                      LJ.data() + 4 * lo, hi - lo, root_out.data() + 4 * lo, mid_out.data() + 4 * lo,
                                      knee_out.data() + 3 * lo, foot_out.data() + 3 * lo, case_out.data() + lo);
            });
        },
        "Geometric two-bone solve over n chains (flat rows) into the outputs.");
    m.def(
        "ik_two_bone",
        [](CArr A, CArr B, CArr C, CArr T, CArr FWD, CArr RG, CArr MG, CArr PG, double buf, Arr root_out, Arr mid_out,
           I8 bad) {
            const int64_t n = A.shape(0);
            for (auto* a : {&A, &B, &C, &T, &FWD}) check_shape(*a, "vector", {n, 3});
            for (auto* a : {&RG, &MG, &PG}) check_shape(*a, "rotation", {n, 4});
            check_shape(root_out, "root_out", {n, 4});
            check_shape(mid_out, "mid_out", {n, 4});
            check_shape(bad, "bad", {n});
            nb::gil_scoped_release nogil;
            split_rows(n, [&](int64_t lo, int64_t hi) {
                jointlimits::ik_two_bone(A.data() + 3 * lo, B.data() + 3 * lo, C.data() + 3 * lo, T.data() + 3 * lo,
                                         FWD.data() + 3 * lo, RG.data() + 4 * lo, MG.data() + 4 * lo, PG.data() + 4 * lo,
                                         buf, hi - lo, root_out.data() + 4 * lo, mid_out.data() + 4 * lo, bad.data() + lo);
            });
        },
        "The joint-limits demo's two-bone IK over n chains into the outputs.");
    // Direct entries for the public API's common case (every input of one leading shape, no
    // broadcasting): one call that checks, allocates and solves. They return None whenever the
    // Python path must take over: other shapes, non-finite values or a zero-length bone (that
    // path raises the precise IKError).
    m.def(
        "two_bone_solve",
        [](nb::handle a_, nb::handle b_, nb::handle c_, nb::handle t_, nb::handle p_, nb::handle lk_, nb::handle lj_,
           nb::handle pole_) -> nb::object {
            const View A(a_), B(b_), C(c_), T(t_), P(p_), LK(lk_), LJ(lj_), PL(pole_);
            const bool has_pole = !pole_.is_none();
            if (!A.like(A, 3) || !B.like(A, 3) || !C.like(A, 3) || !T.like(A, 3) || !P.like(A, 4) ||
                !LK.like(A, 4) || !LJ.like(A, 4) || (has_pole && !PL.like(A, 3)))
                return nb::none();
            const int64_t n = int64_t(A.size() / 3);
            Outputs o(A);
            nb::object r_root, r_mid, r_knee, r_foot, r_case;
            double* ro = o.make<double>(r_root, 4);
            double* mo = o.make<double>(r_mid, 4);
            double* ko = o.make<double>(r_knee, 3);
            double* fo = o.make<double>(r_foot, 3);
            int8_t* co = o.make<int8_t>(r_case, 0);
            const double* pl = has_pole ? PL.data() : nullptr;
            auto finite = [&](int64_t lo, int64_t hi) {
                return A.finite(lo, hi) & B.finite(lo, hi) & C.finite(lo, hi) & T.finite(lo, hi) & P.finite(lo, hi) &
                       LK.finite(lo, hi) & LJ.finite(lo, hi) & (!has_pole || PL.finite(lo, hi));
            };
            const bool fin = run_rows(n, finite, [&](int64_t lo, int64_t hi) {
                jointlimits::two_bone(A.data() + 3 * lo, B.data() + 3 * lo, C.data() + 3 * lo, T.data() + 3 * lo,
                                      pl ? pl + 3 * lo : nullptr, P.data() + 4 * lo, LK.data() + 4 * lo,
                                      LJ.data() + 4 * lo, hi - lo, ro + 4 * lo, mo + 4 * lo, ko + 3 * lo, fo + 3 * lo,
                                      co + lo);
            });
            if (!fin) return nb::none();
            for (int64_t i = 0; i < n; ++i)
                if (co[i] < 0) return nb::none();
            return nb::make_tuple(r_root, r_mid, r_knee, r_foot, r_case);
        },
        nb::arg("root").none(), nb::arg("mid").none(), nb::arg("end").none(), nb::arg("target").none(),
        nb::arg("root_parent_rotation").none(), nb::arg("root_local").none(), nb::arg("mid_local").none(),
        nb::arg("pole").none() = nb::none(),
        "(root_local, mid_local, mid, end, case) of two_bone when every input is a float64 C-contiguous array "
        "of one leading shape, else None.");
    m.def(
        "ik_two_bone_solve",
        [](nb::handle a_, nb::handle b_, nb::handle c_, nb::handle t_, nb::handle f_, nb::handle rg_, nb::handle mg_,
           nb::handle pg_, double buf) -> nb::object {
            const View A(a_), B(b_), C(c_), T(t_), FWD(f_), RG(rg_), MG(mg_), PG(pg_);
            if (!A.like(A, 3) || !B.like(A, 3) || !C.like(A, 3) || !T.like(A, 3) || !FWD.like(A, 3) ||
                !RG.like(A, 4) || !MG.like(A, 4) || !PG.like(A, 4))
                return nb::none();
            const int64_t n = int64_t(A.size() / 3);
            Outputs o(A);
            nb::object r_root, r_mid;
            double* ro = o.make<double>(r_root, 4);
            double* mo = o.make<double>(r_mid, 4);
            std::vector<int8_t> codes(static_cast<size_t>(n));
            int8_t* bad = codes.data();
            auto finite = [&](int64_t lo, int64_t hi) {
                return A.finite(lo, hi) & B.finite(lo, hi) & C.finite(lo, hi) & T.finite(lo, hi) &
                       FWD.finite(lo, hi) & RG.finite(lo, hi) & MG.finite(lo, hi) & PG.finite(lo, hi);
            };
            const bool fin = run_rows(n, finite, [&](int64_t lo, int64_t hi) {
                jointlimits::ik_two_bone(A.data() + 3 * lo, B.data() + 3 * lo, C.data() + 3 * lo, T.data() + 3 * lo,
                                         FWD.data() + 3 * lo, RG.data() + 4 * lo, MG.data() + 4 * lo,
                                         PG.data() + 4 * lo, buf, hi - lo, ro + 4 * lo, mo + 4 * lo, bad + lo);
            });
            if (!fin) return nb::none();
            for (int64_t i = 0; i < n; ++i)
                if (bad[i] < 0) return nb::none();
            return nb::make_tuple(r_root, r_mid);
        },
        nb::arg("bone_root").none(), nb::arg("bone_mid").none(), nb::arg("bone_end").none(), nb::arg("target").none(),
        nb::arg("fwd").none(), nb::arg("bone_root_gr").none(), nb::arg("bone_mid_gr").none(),
        nb::arg("bone_par_gr").none(), nb::arg("max_length_buffer"),
        "(root_lr, mid_lr) of ik_two_bone when every input is a float64 C-contiguous array of one leading "
        "shape, else None.");
    // CCD in one call for the public API's common case: float64 C-contiguous inputs, each shared
    // ([w]) or per target ([N, w]), finite, quaternion norms in quat.normalize's plain range and no
    // zero-length bone; None otherwise (the Python path then checks, broadcasts and raises).
    m.def(
        "ccd_solve",
        [](nb::handle t_, nb::handle br_, nb::handle bp_, nb::handle off_, nb::handle init_, nb::handle tr_,
           nb::handle er_, nb::handle starts_, nb::handle seff_, nb::list limits, double tol,
           double ori_tol, double ori_weight, int64_t max_iter, int64_t max_restarts, int64_t stall_iters,
           double stall_ratio) -> nb::object {
            const View T(t_), BR(br_), BP(bp_), OFF(off_), INIT(init_), TR(tr_), ER(er_), ST(starts_), SE(seff_);
            if (!T.ok || T.v.ndim != 2 || T.v.shape[1] != 3 || !OFF.ok || !INIT.ok || !ST.ok || !SE.ok) return nb::none();
            const Py_ssize_t N = T.v.shape[0];
            const int64_t sbr = row_stride(BR, N, 4), sbp = row_stride(BP, N, 3);
            const bool has_ori = !tr_.is_none();
            const int64_t str = has_ori ? row_stride(TR, N, 4) : 0, ser = er_.is_none() ? 0 : row_stride(ER, N, 4);
            if (sbr < 0 || sbp < 0 || str < 0 || ser < 0) return nb::none();
            // offsets [n + 1, 3] or [N, n + 1, 3]; init [n, 4] or [N, n, 4]
            const int od = OFF.v.ndim;
            if (od < 2 || od > 3 || (od == 3 && OFF.v.shape[0] != N) || OFF.v.shape[od - 1] != 3 ||
                OFF.v.shape[od - 2] < 2)
                return nb::none();
            const int64_t n = OFF.v.shape[od - 2] - 1;
            const int64_t soff = od == 3 ? 3 * (n + 1) : 0;
            const int id = INIT.v.ndim;
            if (id < 2 || id > 3 || (id == 3 && INIT.v.shape[0] != N) || INIT.v.shape[id - 2] != n ||
                INIT.v.shape[id - 1] != 4)
                return nb::none();
            const int64_t sinit = id == 3 ? 4 * n : 0;
            const Py_ssize_t S = ST.v.ndim == 3 ? ST.v.shape[0] : -1;
            if (S < 0 || ST.v.shape[1] != n || ST.v.shape[2] != 4 || SE.v.ndim != 2 || SE.v.shape[0] != S ||
                SE.v.shape[1] != 3)
                return nb::none();
            // the limits: as ccd_batch checks them
            jointlimits::ChainLimits lim = chain_limits(n, limits);
            const int64_t rows = N > 0 ? 1 : 0;  // (nothing to check or solve without targets)
            if (rows && !(T.finite(0, N) && BR.finite(0, sbr ? N : 1) && BP.finite(0, sbp ? N : 1) &&
                          OFF.finite(0, od == 3 ? N * (n + 1) : n + 1) && INIT.finite(0, id == 3 ? N * n : n) &&
                          (!has_ori || TR.finite(0, str ? N : 1)) && (er_.is_none() || ER.finite(0, ser ? N : 1))))
                return nb::none();
            // no zero-length bone (the Python path names it)
            const double* O = OFF.data();
            for (int64_t r = 0; r < (od == 3 ? int64_t(N) : rows); ++r)
                for (int64_t k = 1; k <= n; ++k) {
                    const double* o = O + r * 3 * (n + 1) + 3 * k;
                    if (std::sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]) <= 1e-12) return nb::none();
                }
            // quaternions normalised as quat.normalize does when every norm is in its plain range
            std::vector<double> nbr, ninit, ntr, ner;
            if (!quat_norms(BR.data(), sbr ? N : rows, nbr) || !quat_norms(INIT.data(), (id == 3 ? N : rows) * n, ninit) ||
                (has_ori && !quat_norms(TR.data(), str ? N : rows, ntr)) ||
                (!er_.is_none() && !quat_norms(ER.data(), ser ? N : rows, ner)))
                return nb::none();
            const jointlimits::CCDOptions o{tol, ori_tol, ori_weight, max_iter, max_restarts, stall_iters, stall_ratio};
            nb::object r_out, r_succ, r_iters, r_err, r_oerr, r_rs;
            const nb::object lead = nb::make_tuple(N);
            double* out = Outputs::new_array<double>(r_out, nb::make_tuple(N, n, 4));
            bool* succ = Outputs::new_array<bool>(r_succ, lead);
            int64_t* iters = Outputs::new_array<int64_t>(r_iters, lead);
            double* err = Outputs::new_array<double>(r_err, lead);
            double* oerr = Outputs::new_array<double>(r_oerr, lead);
            int64_t* rs = Outputs::new_array<int64_t>(r_rs, lead);
            const double *brp = BR.data(), *bpp = BP.data(), *trp = has_ori ? TR.data() : nullptr,
                         *erp = er_.is_none() ? nullptr : ER.data(), *ip = INIT.data(), *tp = T.data();
            auto solve = [&](int64_t lo, int64_t hi) {
                std::vector<double> init(4 * n);
                for (int64_t k = lo; k < hi; ++k) {
                    const double* b = brp + sbr * k;
                    const double bn = nbr[sbr ? k : 0];
                    const double* p = bpp + sbp * k;
                    const double* q0 = ip + sinit * k;
                    const double* qn = ninit.data() + (sinit ? k * n : 0);
                    for (int64_t j = 0; j < n; ++j)
                        for (int c = 0; c < 4; ++c) init[4 * j + c] = q0[4 * j + c] / qn[j];
                    double tq[4] = {0.0, 0.0, 0.0, 0.0};
                    if (has_ori) {
                        const double* q = trp + str * k;
                        const double qn1 = ntr[str ? k : 0];
                        for (int c = 0; c < 4; ++c) tq[c] = q[c] / qn1;
                    }
                    jointlimits::Quat e{1.0, 0.0, 0.0, 0.0};
                    if (erp) {
                        const double* q = erp + ser * k;
                        const double en = ner[ser ? k : 0];
                        e = {q[0] / en, q[1] / en, q[2] / en, q[3] / en};
                    }
                    const jointlimits::CCDStats st = jointlimits::ccd_one(
                        {b[0] / bn, b[1] / bn, b[2] / bn, b[3] / bn}, {p[0], p[1], p[2]}, O + soff * k, tp + 3 * k, tq,
                        has_ori, e, init.data(), ST.data(), SE.data(), S, n, lim, o, out + 4 * n * k);
                    succ[k] = st.success;
                    iters[k] = st.iters;
                    err[k] = st.err;
                    oerr[k] = st.oerr;
                    rs[k] = st.restarts;
                }
            };
            if (N < 64) {  // (parallel_rows asks the OS for the core count: ~8 us)
                solve(0, N);
            } else {
                nb::gil_scoped_release nogil;
                parallel_rows(N, 32, solve);  // independent chains: big batches over the cores
            }
            return nb::make_tuple(r_out, r_succ, r_iters, r_err, r_oerr, r_rs);
        },
        nb::arg("targets").none(), nb::arg("base_rotation").none(), nb::arg("base_position").none(),
        nb::arg("offsets").none(), nb::arg("init").none(), nb::arg("target_rotations").none(),
        nb::arg("end_rotation").none(), nb::arg("starts"), nb::arg("start_effectors"), nb::arg("limits"),
        nb::arg("tolerance"), nb::arg("orientation_tolerance"),
        nb::arg("orientation_weight"), nb::arg("max_iterations"), nb::arg("max_restarts"),
        nb::arg("stall_iterations"), nb::arg("stall_ratio"),
        "(rotations, success, iterations, error, orientation_error, restarts) of ccd for its common case, "
        "or None.");
    m.def(
        "dls_normal_step",
        [](CArr gp, CArr tgt, CArr wp, CArr ro, CArr wo, CArr rp, CArr wr, CArr nrm, CArr lam, IArr chain,
           IArr chain_len, IArr off, IArr first, U8 free, Arr dx, Arr push) {
            const int64_t F = gp.shape(0), J = gp.shape(1), D = chain.shape(1), N = 3 + 3 * J;
            for (auto* a : {&gp, &tgt, &ro, &rp, &nrm}) check_shape(*a, "[F, J, 3] input", {F, J, 3});
            for (auto* a : {&wp, &wo, &wr}) check_shape(*a, "weights", {F, J});
            check_shape(lam, "lam", {F});
            check_shape(chain, "chain", {J, D});
            check_shape(chain_len, "chain_len", {J});
            check_shape(off, "off", {J});
            check_shape(first, "first", {N});
            check_shape(free, "free", {N});
            check_shape(dx, "dx", {F, N});
            check_shape(push, "push", {F, J});
            for (int64_t k = 0; k < J; ++k) {
                if (chain_len.data()[k] < 1 || chain_len.data()[k] > D || off.data()[k] < 0 || off.data()[k] + 3 > 3 * J)
                    throw std::invalid_argument("_core: corrupt chain table");
                for (int64_t i = 0; i < chain_len.data()[k]; ++i)
                    if (chain.data()[k * D + i] < 0 || chain.data()[k * D + i] >= J)
                        throw std::invalid_argument("_core: corrupt chain table");
            }
            for (int64_t i = 0; i < N; ++i)
                if (first.data()[i] < 0 || first.data()[i] > i) throw std::invalid_argument("_core: corrupt envelope");
            nb::gil_scoped_release nogil;
            // poses are independent: big batches over the cores (same bits per pose)
            auto poses = [&](int64_t lo, int64_t hi) {
                const int64_t v = lo * J * 3, s = lo * J;
                jointlimits::dls_normal_step(gp.data() + v, tgt.data() + v, wp.data() + s, ro.data() + v, wo.data() + s,
                                             rp.data() + v, wr.data() + s, nrm.data() + v, lam.data() + lo,
                                             chain.data(), chain_len.data(), D, off.data(), first.data(), free.data(),
                                             hi - lo, J, dx.data() + lo * N, push.data() + s);
            };
            if (F < 128)  // (parallel_rows asks the OS for the core count: ~8 us)
                poses(0, F);
            else
                parallel_rows(F, 64, poses);
        },
        "One damped least-squares step per pose (whole-body IK) into dx [F, 3 + 3J] and push [F, J].");
    m.def(
        "ccd_batch",
        [](CArr br, CArr bp, CArr off, CArr t, CArr tr, bool has_ori, CArr end_rot, CArr init, CArr starts,
           CArr start_eff, nb::list limits, double tol, double ori_tol, double ori_weight,
           int64_t max_iter, int64_t max_restarts, int64_t stall_iters, double stall_ratio, Arr out, OutB success,
           OutI iters, Arr err, Arr oerr, OutI restarts) {
            const int64_t N = init.shape(0), n = init.shape(1), S = starts.shape(0);
            check_shape(init, "init", {N, n, 4});
            check_shape(br, "base_rotation", {N, 4});
            check_shape(bp, "base_position", {N, 3});
            check_shape(off, "offsets", {N, n + 1, 3});
            check_shape(t, "targets", {N, 3});
            check_shape(tr, "target_rotations", {N, 4});
            check_shape(end_rot, "end_rotation", {N, 4});
            check_shape(starts, "starts", {S, n, 4});
            check_shape(start_eff, "start_effectors", {S, 3});
            check_shape(out, "out", {N, n, 4});
            for (auto* a : {&err, &oerr}) check_shape(*a, "err", {N});
            check_shape(success, "success", {N});
            check_shape(iters, "iters", {N});
            check_shape(restarts, "restarts", {N});
            jointlimits::ChainLimits lim = chain_limits(n, limits);
            const jointlimits::CCDOptions o{tol, ori_tol, ori_weight, max_iter, max_restarts, stall_iters, stall_ratio};
            nb::gil_scoped_release nogil;
            auto solve = [&](int64_t lo, int64_t hi) {
                for (int64_t k = lo; k < hi; ++k) {
                    const double* b = br.data() + 4 * k;
                    const double* p = bp.data() + 3 * k;
                    const double* e = end_rot.data() + 4 * k;
                    const jointlimits::CCDStats st = jointlimits::ccd_one(
                        {b[0], b[1], b[2], b[3]}, {p[0], p[1], p[2]}, off.data() + 3 * (n + 1) * k, t.data() + 3 * k,
                        tr.data() + 4 * k, has_ori, {e[0], e[1], e[2], e[3]}, init.data() + 4 * n * k, starts.data(),
                        start_eff.data(), S, n, lim, o, out.data() + 4 * n * k);
                    success.data()[k] = st.success;
                    iters.data()[k] = st.iters;
                    err.data()[k] = st.err;
                    oerr.data()[k] = st.oerr;
                    restarts.data()[k] = st.restarts;
                }
            };
            if (N < 64)  // (parallel_rows asks the OS for the core count: ~8 us)
                solve(0, N);
            else
                parallel_rows(N, 32, solve);  // independent chains: big batches over the cores
        },
        "CCD over N chains with limits and restarts into out [N, n, 4] and the per-chain statistics.");
}

}  // namespace jlbind

// Springs: exact spring-damper, tracking-spring updates, the error-form tracking recursion.
#include "bind.hpp"
#include "jointlimits/springs.hpp"

namespace jlbind {

namespace {
using jointlimits::SrcT;

template <class T>
using CArrT = nb::ndarray<const T, nb::c_contig, nb::device::cpu>;
template <class T>
using ArrT = nb::ndarray<T, nb::c_contig, nb::device::cpu>;

/// A flat input of n elements, or one value broadcast to all (size 1).
template <class T>
SrcT<T> src(const CArrT<T>& a, std::size_t n, const char* name) {
    if (a.size() == n) return {a.data(), 1};
    if (a.size() == 1) return {a.data(), 0};
    throw std::invalid_argument(std::string("_core: '") + name + "' must have 1 or n elements");
}

template <class A>
void check_out(const A& a, std::size_t n, const char* name) {
    if (a.size() != n) throw std::invalid_argument(std::string("_core: output '") + name + "' must have n elements");
}

/// The one-step kernels for one scalar type; suffix "" for float64, "_f32" for float32.
template <class T>
void bind_steps(nb::module_& m, const std::string& suffix) {
    using C = CArrT<T>;
    using A = ArrT<T>;
    m.def(
        ("spring_damper_exact" + suffix).c_str(),
        [](C x, C v, C g, C q, C s, C d, C t, bool approx, double eps, A xo, A vo) {
            const std::size_t n = xo.size();
            check_out(vo, n, "vo");
            const SrcT<T> X = src(x, n, "x"), V = src(v, n, "v"), G = src(g, n, "x_goal"), Q = src(q, n, "v_goal"),
                          S = src(s, n, "stiffness"), D = src(d, n, "damping"), Tt = src(t, n, "dt");
            nb::gil_scoped_release nogil;
            return jointlimits::spring_damper_exact<T>(X, V, G, Q, S, D, Tt, n, approx, T(eps), xo.data(), vo.data());
        },
        "Closed-form spring-damper step over n broadcast elements into (xo, vo); False if an input is invalid.");
    m.def(
        ("tracking_update" + suffix).c_str(),
        [](C x, C v, C xg, C vg, C ag, C kx, C kv, C ka, C dt, bool has_v, bool has_a, bool halflives, bool approx,
           A xo, A vo) {
            const std::size_t n = xo.size();
            check_out(vo, n, "vo");
            const SrcT<T> X = src(x, n, "x"), V = src(v, n, "v"), XG = src(xg, n, "x_goal"),
                          VG = src(vg, n, "v_goal"), AG = src(ag, n, "a_goal"), KX = src(kx, n, "x_gain"),
                          KV = src(kv, n, "v_gain"), KA = src(ka, n, "a_gain"), Tt = src(dt, n, "dt");
            nb::gil_scoped_release nogil;
            return jointlimits::tracking_update<T>(X, V, XG, VG, AG, KX, KV, KA, Tt, n, has_v, has_a, halflives,
                                                   approx, xo.data(), vo.data());
        },
        "One tracking-spring step (lerp gains, or half-lives) into (xo, vo); False if an input is invalid.");
    m.def(
        ("tracking_update_exact" + suffix).c_str(),
        [](C x, C v, C xg, C vg, C ag, C kx, C kv, C ka, C dt, C gdt, bool has_v, bool has_a, bool approx, double eps,
           A xo, A vo) {
            const std::size_t n = xo.size();
            check_out(vo, n, "vo");
            const SrcT<T> X = src(x, n, "x"), V = src(v, n, "v"), XG = src(xg, n, "x_goal"),
                          VG = src(vg, n, "v_goal"), AG = src(ag, n, "a_goal"), KX = src(kx, n, "x_gain"),
                          KV = src(kv, n, "v_gain"), KA = src(ka, n, "a_gain"), Tt = src(dt, n, "dt"),
                          GD = src(gdt, n, "gain_dt");
            nb::gil_scoped_release nogil;
            return jointlimits::tracking_update_exact<T>(X, V, XG, VG, AG, KX, KV, KA, Tt, GD, n, has_v, has_a, approx,
                                                         T(eps), xo.data(), vo.data());
        },
        "One dt-invariant tracking-spring step into (xo, vo); False if an input is invalid.");
}
}  // namespace

void bind_springs(nb::module_& m) {
    bind_steps<double>(m, "");
    bind_steps<float>(m, "_f32");
    m.def(
        "track_errors",
        [](CArr e0, CArr ev0, CArr vt, CArr adt, bool use_adt, nb::ndarray<const int8_t, nb::c_contig, nb::device::cpu> modes,
           CArr xg, CArr vg, CArr ag, CArr dt, double v_max, double a_max, double snap, Arr out_e, Arr out_ev) {
            const int64_t T = vt.shape(0), C = vt.shape(1);
            check_shape(vt, "vt", {T, C});
            check_shape(e0, "e0", {C});
            check_shape(ev0, "ev0", {C});
            if (use_adt) check_shape(adt, "adt", {T, C});
            check_shape(modes, "modes", {T});
            check_shape(xg, "xg", {T});
            check_shape(vg, "vg", {T});
            check_shape(ag, "ag", {T});
            check_shape(dt, "dt", {T});
            check_shape(out_e, "out_e", {T, C});
            check_shape(out_ev, "out_ev", {T, C});
            nb::gil_scoped_release nogil;
            jointlimits::track_errors(e0.data(), ev0.data(), vt.data(), adt.data(), use_adt, modes.data(), xg.data(),
                                      vg.data(), ag.data(), dt.data(), v_max, a_max, snap, T, C, out_e.data(),
                                      out_ev.data());
        },
        "The lerp tracking recursion in error form over vt [T, C] into (out_e, out_ev).");
}

}  // namespace jlbind

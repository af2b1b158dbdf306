// Springs: the exact spring-damper (stable closed form and the reference's approximations),
// tracking-spring updates (lerp gains and half-lives) and the lerp tracking recursion in error
// form. Ports of jointlimits.springs' numpy formulas, element by element, templated on the scalar
// type (float or double). When the parameters that set the per-step coefficients (stiffness,
// damping, dt, gains) are scalars, the coefficients are computed once and the element loop is a
// few multiply-adds without branches (it vectorises); otherwise every element solves its own
// regime.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace jointlimits {

constexpr double kLn2 = 0.69314718056;  // the reference's digits

/// A broadcast input: element i is p[i * inc] (inc 0 for a scalar).
template <class T>
struct SrcT {
    const T* p;
    std::size_t inc;
    T operator[](std::size_t i) const { return p[i * inc]; }
    bool scalar() const { return inc == 0; }
};
using Src = SrcT<double>;

template <class T>
inline T fast_negexp(T x) {
    return T(1) / (T(1) + x + T(0.48) * x * x + T(0.235) * x * x * x);
}

template <class T>
inline T fast_atan(T x) {
    const T z = std::abs(x);
    const bool big = z > T(1);
    const T w = big ? T(1) / z : z;
    const T y = T(3.141592653589793 / 4.0) * w - w * (w - T(1)) * (T(0.2447) + T(0.0663) * w);
    return std::copysign(big ? T(3.141592653589793 / 2.0) - y : y, x);
}

namespace detail {
/// (1 - exp(-z)) / z with the limit 1 at z = 0.
template <class T>
inline T phi(T z) {
    return std::abs(z) < T(1e-12) ? T(1) - T(0.5) * z : -std::expm1(-z) / z;
}
/// numpy's sinc(x) = sin(pi x) / (pi x).
template <class T>
inline T np_sinc(T x) {
    const T y = T(3.141592653589793) * (x == T(0) ? T(1.0e-20) : x);
    return std::sin(y) / y;
}
/// 1 if x is NaN or infinite, else 0 (branch-free, vectorises).
template <class T>
inline int bad(T x) {
    return !(std::abs(x) <= std::numeric_limits<T>::max());
}
/// Taylor coefficients (-1)^k / (2k)! and (-1)^k / (2k+1)!, k = 0..K.
template <int K>
struct SinCosCoef {
    double c[K + 1], s[K + 1];
    constexpr SinCosCoef() : c(), s() {
        double f = 1.0;
        for (int k = 0; k <= K; ++k) {
            if (k) f *= double(2 * k - 1) * double(2 * k);
            c[k] = (k % 2 ? -1.0 : 1.0) / f;
            s[k] = (k % 2 ? -1.0 : 1.0) / (f * double(2 * k + 1));
        }
    }
};
/// cos and sin of |p| <= pi/2 by their Taylor series, truncated below the type's rounding
/// (branch-free: vectorises where std::cos / std::sin would not).
template <class T>
inline void sincos_small(T p, T& c, T& s) {
    constexpr int K = sizeof(T) == 4 ? 6 : 11;
    static constexpr SinCosCoef<K> cf{};
    const T q = p * p;
    T rc = T(cf.c[K]), rs = T(cf.s[K]);
    for (int k = K - 1; k >= 0; --k) {
        rc = rc * q + T(cf.c[k]);
        rs = rs * q + T(cf.s[k]);
    }
    c = rc;
    s = p * rs;
}
}  // namespace detail

/// Regime coefficients of the exact step over t: ec = e^(-yt) cos(wt), es = e^(-yt) sin(wt) / w (and
/// their over-damped / critical continuations), with y = d / 2, k = s - y^2, w = sqrt(k).
template <class T>
inline void exact_coefficients(T s, T d, T t, T& y, T& k, T& ec, T& es) {
    y = T(0.5) * d;
    k = s - y * y;
    if (k > T(0)) {
        const T w = std::sqrt(k);
        const T ey = std::exp(-y * t);
        ec = ey * std::cos(w * t);
        es = ey * t * detail::np_sinc(w * t / T(3.141592653589793));
    } else {
        const T u = std::sqrt(-k);
        const T ypu = y + u;
        const T ymu = ypu > T(0) ? s / ypu : T(0);
        const T eslow = std::exp(-ymu * t);
        ec = eslow * T(0.5) * (T(1) + std::exp(T(-2) * u * t));
        es = eslow * t * detail::phi(T(2) * u * t);
    }
}

constexpr double kTinyStiffness = 1e-12;

/// Closed-form step of x'' = s (g - x) + d (q - v) over t, stable in every regime (s = 0 allowed).
template <class T>
inline void spring_exact(T x, T v, T g, T q, T s, T d, T t, T& xo, T& vo) {
    if (!(s > T(kTinyStiffness))) {
        xo = x + q * t + (v - q) * t * detail::phi(d * t);
        vo = q + (v - q) * std::exp(-d * t);
        return;
    }
    T y, k, ec, es;
    exact_coefficients(s, d, t, y, k, ec, es);
    const T c = g + d * q / s;
    const T j0 = x - c;
    const T j1 = v + y * j0;
    xo = c + j0 * ec + j1 * es;
    vo = v * ec - (y * j1 + k * j0) * es;
}

/// The reference's spring_damper_exact (fast_negexp, fast_atan, eps terms), per element.
template <class T>
inline void spring_reference(T x, T v, T g, T q, T s, T d, T t, T eps, T& xo, T& vo) {
    const T c = g + (d * q) / (s + eps);
    const T y = T(0.5) * d;
    const T k = s - (d * d) / T(4);
    const T xc = x - c;
    if (std::abs(k) < eps) {
        const T ey = fast_negexp(y * t);
        const T j1 = v + xc * y;
        xo = xc * ey + t * j1 * ey + c;
        vo = -y * xc * ey - y * t * j1 * ey + j1 * ey;
    } else if (k > T(0)) {
        const T ey = fast_negexp(y * t);
        const T w = std::sqrt(k);
        T amp = std::sqrt((v + y * xc) * (v + y * xc) / (w * w + eps) + xc * xc);
        const T ph = fast_atan((v + xc * y) / (-xc * w + eps));
        amp = xc > T(0) ? amp : -amp;
        const T cs = std::cos(w * t + ph), sn = std::sin(w * t + ph);
        xo = amp * ey * cs + c;
        vo = -y * amp * ey * cs - w * amp * ey * sn;
    } else if (k < T(0)) {
        const T r = std::sqrt(d * d - T(4) * s);
        const T y0 = (d + r) / T(2), y1 = (d - r) / T(2);
        const T j1 = (c * y0 - x * y0 - v) / (y1 - y0);
        const T j0 = x - j1 - c;
        const T e0 = fast_negexp(y0 * t), e1 = fast_negexp(y1 * t);
        xo = j0 * e0 + j1 * e1 + c;
        vo = -y0 * j0 * e0 - y1 * j1 * e1;
    } else {
        xo = x;
        vo = v;
    }
}

// ---- one step for scalar stiffness, damping and dt: coefficients once, then linear in the element

namespace step {

/// spring_exact with s <= tiny: a damper on the velocity.
template <class T>
struct ExactFree {
    T t, a, e;
    ExactFree(T d, T t_) : t(t_), a(t_ * detail::phi(d * t_)), e(std::exp(-d * t_)) {}
    void operator()(T x, T v, T, T q, T& xo, T& vo) const {
        xo = x + q * t + (v - q) * a;
        vo = q + (v - q) * e;
    }
};

/// spring_exact with s > tiny (every regime: the coefficients carry it).
template <class T>
struct Exact {
    T y, k, ec, es, dos;
    Exact(T s, T d, T t) : dos(d / s) { exact_coefficients(s, d, t, y, k, ec, es); }
    void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + dos * q;
        const T j0 = x - c;
        const T j1 = v + y * j0;
        xo = c + j0 * ec + j1 * es;
        vo = v * ec - (y * j1 + k * j0) * es;
    }
};

/// spring_reference, critically damped branch.
template <class T>
struct RefCritical {
    T cq, y, t, ey;
    RefCritical(T s, T d, T t_, T eps) : cq(d / (s + eps)), y(T(0.5) * d), t(t_), ey(fast_negexp(y * t_)) {}
    void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + cq * q;
        const T xc = x - c;
        const T j1 = v + xc * y;
        xo = xc * ey + t * j1 * ey + c;
        vo = -y * xc * ey - y * t * j1 * ey + j1 * ey;
    }
};

/// spring_reference, under-damped branch: cos(wt + p) = cos(wt) cos(p) - sin(wt) sin(p) with the
/// per-element phase p = fast_atan(.) in [-pi/2, pi/2] by series.
template <class T>
struct RefUnder {
    T cq, y, w, eps, ey, inv, cwt, swt;
    RefUnder(T s, T d, T t, T eps_) : cq(d / (s + eps_)), y(T(0.5) * d), eps(eps_) {
        w = std::sqrt(s - (d * d) / T(4));
        ey = fast_negexp(y * t);
        inv = T(1) / (w * w + eps);
        cwt = std::cos(w * t);
        swt = std::sin(w * t);
    }
    void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + cq * q;
        const T xc = x - c;
        const T j1 = v + y * xc;
        // selects as arithmetic on 0/1 (GCC keeps conditional float ops as branches: no vectorising)
        const T amp = std::sqrt(j1 * j1 * inv + xc * xc) * (T(2) * T(xc > T(0)) - T(1));
        // fast_atan without a branch (min(z, 1/z) is its w)
        const T r = j1 / (-xc * w + eps);
        const T z = std::abs(r);
        const T wz = std::min(z, T(1) / z);
        const T a = T(3.141592653589793 / 4.0) * wz - wz * (wz - T(1)) * (T(0.2447) + T(0.0663) * wz);
        const T ph = std::copysign(a + T(z > T(1)) * (T(3.141592653589793 / 2.0) - T(2) * a), r);
        T cp, sp;
        detail::sincos_small(ph, cp, sp);
        const T cs = cwt * cp - swt * sp, sn = swt * cp + cwt * sp;
        const T ae = amp * ey;
        xo = ae * cs + c;
        vo = -y * ae * cs - w * ae * sn;
    }
};

/// spring_reference, over-damped branch.
template <class T>
struct RefOver {
    T cq, y0, y1, e0, e1, inv;
    RefOver(T s, T d, T t, T eps) : cq(d / (s + eps)) {
        const T r = std::sqrt(d * d - T(4) * s);
        y0 = (d + r) / T(2);
        y1 = (d - r) / T(2);
        e0 = fast_negexp(y0 * t);
        e1 = fast_negexp(y1 * t);
        inv = T(1) / (y1 - y0);
    }
    void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + cq * q;
        const T j1 = (c * y0 - x * y0 - v) * inv;
        const T j0 = x - j1 - c;
        xo = j0 * e0 + j1 * e1 + c;
        vo = -y0 * j0 * e0 - y1 * j1 * e1;
    }
};

/// spring_reference when k == 0 is not caught by |k| < eps (eps <= 0): the state is kept.
template <class T>
struct RefKeep {
    void operator()(T x, T v, T, T, T& xo, T& vo) const {
        xo = x;
        vo = v;
    }
};

/// Calls f(step) with the element step of spring_exact (approx: spring_reference) for scalar s, d, t.
template <class T, class F>
inline bool with_spring_step(T s, T d, T t, bool approx, T eps, F&& f) {
    if (!approx) return s > T(kTinyStiffness) ? f(Exact<T>(s, d, t)) : f(ExactFree<T>(d, t));
    const T k = s - (d * d) / T(4);
    if (std::abs(k) < eps) return f(RefCritical<T>(s, d, t, eps));
    if (k > T(0)) return f(RefUnder<T>(s, d, t, eps));
    if (k < T(0)) return f(RefOver<T>(s, d, t, eps));
    return f(RefKeep<T>());
}

/// f(a[j], b[j], c[j], d[j], e[j], xo[j], vo[j]) over one block of distinct arrays; 0 if every input
/// was finite.
template <class T, class F>
[[gnu::noinline]] int block(const T* __restrict a, const T* __restrict b, const T* __restrict c, const T* __restrict d,
                 const T* __restrict e, std::size_t m, T* __restrict xo, T* __restrict vo, F f) {
    // not inlined: GCC honours restrict on parameters, where inlined copies get runtime alias checks
    // (too many pairs here: the scalar loop ran)
    int bad = 0;
#pragma GCC ivdep
    for (std::size_t j = 0; j < m; ++j) bad |= f(a[j], b[j], c[j], d[j], e[j], xo[j], vo[j]);
    return bad;
}

/// True if [a, a + na) and [b, b + nb) share memory.
template <class T, class U>
inline bool overlap(const T* a, std::size_t na, const U* b, std::size_t nb) {
    const auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
    return pa < pb + nb * sizeof(U) && pb < pa + na * sizeof(T);
}

/// True when the outputs share no memory with each other or the inputs (the blocked loop may then
/// read and write in any order).
template <class T>
inline bool distinct(const SrcT<T>* in, int nin, std::size_t n, const T* xo, const T* vo) {
    if (overlap(xo, n, vo, n)) return false;
    for (int k = 0; k < nin; ++k) {
        const std::size_t len = in[k].inc ? n : 1;
        if (overlap(in[k].p, len, xo, n) || overlap(in[k].p, len, vo, n)) return false;
    }
    return true;
}

/// f over n elements of five broadcast inputs in blocks (scalar inputs read from a filled block, so
/// every access is unit-stride). Returns false if an input was not finite.
template <class T, class F>
inline bool map5(const SrcT<T> (&in)[5], std::size_t n, T* xo, T* vo, const F& f) {
    constexpr std::size_t B = 512;
    alignas(64) T buf[5][B];
    const T* base[5];
    std::size_t stride[5];
    for (int k = 0; k < 5; ++k) {
        if (in[k].inc == 0) {
            std::fill(buf[k], buf[k] + std::min(B, n), in[k].p[0]);
            base[k] = buf[k];
            stride[k] = 0;
        } else {
            base[k] = in[k].p;
            stride[k] = 1;
        }
    }
    int bad = 0;
    for (std::size_t i = 0; i < n; i += B) {
        const std::size_t m = std::min(B, n - i);
        bad |= block(base[0] + stride[0] * i, base[1] + stride[1] * i, base[2] + stride[2] * i, base[3] + stride[3] * i,
                     base[4] + stride[4] * i, m, xo + i, vo + i, f);
    }
    return bad == 0;
}

}  // namespace step

/// Batched spring_damper_exact over n broadcast elements. Returns false (outputs unspecified) if an
/// input is not finite, s or d < 0 or t <= 0: the caller then reports which.
template <class T>
inline bool spring_damper_exact(SrcT<T> x, SrcT<T> v, SrcT<T> g, SrcT<T> q, SrcT<T> s, SrcT<T> d, SrcT<T> t,
                                std::size_t n, bool approx, T eps, T* xo, T* vo) {
    if (n == 0) return true;
    const SrcT<T> in[5] = {x, v, g, q, x};
    if (s.scalar() && d.scalar() && t.scalar() && step::distinct(in, 4, n, xo, vo)) {
        const T si = s[0], di = d[0], ti = t[0];
        if (detail::bad(si) | detail::bad(di) | detail::bad(ti) | !(si >= T(0)) | !(di >= T(0)) | !(ti > T(0)))
            return false;
        return step::with_spring_step(si, di, ti, approx, eps, [&](const auto& st) {
            return step::map5(in, n, xo, vo, [st](T xi, T vi, T gi, T qi, T, T& xr, T& vr) {
                st(xi, vi, gi, qi, xr, vr);
                return detail::bad(xi) | detail::bad(vi) | detail::bad(gi) | detail::bad(qi);
            });
        });
    }
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
        const T xi = x[i], vi = v[i], gi = g[i], qi = q[i], si = s[i], di = d[i], ti = t[i];
        ok &= std::isfinite(xi) & std::isfinite(vi) & std::isfinite(gi) & std::isfinite(qi) & std::isfinite(si) &
              std::isfinite(di) & std::isfinite(ti) & (si >= T(0)) & (di >= T(0)) & (ti > T(0));
        if (approx)
            spring_reference(xi, vi, gi, qi, si, di, ti, eps, xo[i], vo[i]);
        else
            spring_exact(xi, vi, gi, qi, si, di, ti, xo[i], vo[i]);
    }
    return ok;
}

/// halflife_to_gain(h, t) = 1 - exp(-ln2 t / (h + 1e-5)) (fast_negexp when approx).
template <class T>
inline T halflife_gain(T h, T t, bool approx) {
    const T z = (T(kLn2) * t) / (h + T(1e-5));
    return T(1) - (approx ? fast_negexp(z) : std::exp(-z));
}

namespace step {
/// One lerp tracking step with scalar gains and dt.
template <class T, bool HasV, bool HasA>
struct Lerp {
    T wa, wv, wx, t, it;
    int operator()(T x, T v0, T xg, T vg, T ag, T& xo, T& vo) const {
        T v = v0;
        if constexpr (HasA) v = (T(1) - wa) * v + wa * (v + ag * t);
        if constexpr (HasV) v = (T(1) - wv) * v + wv * vg;
        v = (T(1) - wx) * v + wx * ((xg - x) * it);
        xo = x + t * v;
        vo = v;
        return detail::bad(x) | detail::bad(v0) | detail::bad(xg) | detail::bad(vg) | detail::bad(ag);
    }
};
}  // namespace step

/// One tracking-spring step: v <- lerp(v, v + a_goal dt, a_gain) (if has_a); v <- lerp(v, v_goal,
/// v_gain) (if has_v); v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v. With halflives the gains
/// are halflife_to_gain(h, dt) = 1 - exp(-ln2 dt / (h + 1e-5)) (fast_negexp when approx).
/// Returns false if an input is not finite, dt <= 0, a gain is outside [0, 1] or a half-life < 0.
template <class T>
inline bool tracking_update(SrcT<T> x, SrcT<T> v, SrcT<T> xg, SrcT<T> vg, SrcT<T> ag, SrcT<T> xgain,
                            SrcT<T> vgain, SrcT<T> again, SrcT<T> dt, std::size_t n, bool has_v, bool has_a,
                            bool halflives, bool approx, T* xo, T* vo) {
    if (n == 0) return true;
    bool ok = true;
    auto gain = [&](T h, T t) {
        if (!halflives) {  // lerp gains are taken as given (any finite weight)
            ok &= std::isfinite(h);
            return h;
        }
        ok &= std::isfinite(h) & (h >= T(0));
        return halflife_gain(h, t, approx);
    };
    const SrcT<T> in[5] = {x, v, xg, vg, ag};
    if (xgain.scalar() && vgain.scalar() && again.scalar() && dt.scalar() && step::distinct(in, 5, n, xo, vo)) {
        const T t = dt[0];
        ok &= std::isfinite(t) & (t > T(0));
        const T wa = has_a ? gain(again[0], t) : T(0), wv = has_v ? gain(vgain[0], t) : T(0);
        const T wx = gain(xgain[0], t);
        if (!ok) return false;
        auto run = [&](auto st) {
            st.wa = wa, st.wv = wv, st.wx = wx, st.t = t, st.it = T(1) / t;
            return step::map5(in, n, xo, vo, st);
        };
        if (has_v && has_a) return run(step::Lerp<T, true, true>{});
        if (has_v) return run(step::Lerp<T, true, false>{});
        if (has_a) return run(step::Lerp<T, false, true>{});
        return run(step::Lerp<T, false, false>{});
    }
    auto lerp = [](T a, T b, T w) { return (T(1) - w) * a + w * b; };
    for (std::size_t i = 0; i < n; ++i) {
        const T xi = x[i], t = dt[i];
        T vi = v[i];
        ok &= std::isfinite(xi) & std::isfinite(vi) & std::isfinite(t) & (t > T(0)) & std::isfinite(xg[i]);
        if (has_a) {
            const T a = ag[i];
            ok &= std::isfinite(a);
            vi = lerp(vi, vi + a * t, gain(again[i], t));
        }
        if (has_v) {
            ok &= std::isfinite(vg[i]);
            vi = lerp(vi, vg[i], gain(vgain[i], t));
        }
        vi = lerp(vi, (xg[i] - xi) / t, gain(xgain[i], t));
        xo[i] = xi + t * vi;
        vo[i] = vi;
    }
    return ok;
}

/// One dt-invariant tracking step (the seed's appendix): spring_exact with s = xg / gdt^2,
/// d = (1 - (1 - vg)(1 - xg)) / gdt and velocity goal (vg (1 - xg) / gdt v_goal + ag (1 - vg)(1 - xg)
/// a_goal) / d. has_v / has_a drop the velocity / acceleration terms (vg = 0 without has_v).
/// Returns false if an input is not finite, dt or gdt <= 0, or a gain is outside [0, 1].
template <class T>
inline bool tracking_update_exact(SrcT<T> x, SrcT<T> v, SrcT<T> xg, SrcT<T> vg, SrcT<T> ag, SrcT<T> xgain,
                                  SrcT<T> vgain, SrcT<T> again, SrcT<T> dt, SrcT<T> gdt, std::size_t n, bool has_v,
                                  bool has_a, bool approx, T eps, T* xo, T* vo) {
    if (n == 0) return true;
    auto gain_ok = [](T k) { return (k >= T(0)) & (k <= T(1)); };
    const SrcT<T> in[5] = {x, v, xg, vg, ag};
    if (xgain.scalar() && vgain.scalar() && again.scalar() && dt.scalar() && gdt.scalar() &&
        step::distinct(in, 5, n, xo, vo)) {
        const T kx = xgain[0], kv = has_v ? vgain[0] : T(0), ka = has_a ? again[0] : T(0), h = gdt[0], t = dt[0];
        if (!(std::isfinite(h) & std::isfinite(t) & (h > T(0)) & (t > T(0)) & gain_ok(kx) & gain_ok(kv) &
              gain_ok(ka)))
            return false;
        const T t0 = (T(1) - kv) * (T(1) - kx);
        const T t2 = has_v ? (kv * (T(1) - kx)) / h : T(0);
        const T t1 = has_a ? ka * (T(1) - kv) * (T(1) - kx) : T(0);
        const T s = kx / (h * h);
        const T d = (T(1) - t0) / h;
        const T id = d > T(0) ? T(1) / d : T(0);
        return step::with_spring_step(s, d, t, approx, eps, [&](const auto& st) {
            return step::map5(in, n, xo, vo, [st, t1, t2, id](T xi, T vi, T gi, T vgi, T agi, T& xr, T& vr) {
                st(xi, vi, gi, (t2 * vgi + t1 * agi) * id, xr, vr);
                return detail::bad(xi) | detail::bad(vi) | detail::bad(gi) | detail::bad(vgi) | detail::bad(agi);
            });
        });
    }
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
        const T kx = xgain[i], kv = has_v ? vgain[i] : T(0), ka = has_a ? again[i] : T(0);
        const T h = gdt[i], t = dt[i], xi = x[i], vi = v[i], gi = xg[i];
        const T vgi = has_v ? vg[i] : T(0), agi = has_a ? ag[i] : T(0);
        ok &= std::isfinite(xi) & std::isfinite(vi) & std::isfinite(gi) & std::isfinite(vgi) & std::isfinite(agi) &
              std::isfinite(h) & std::isfinite(t) & (h > T(0)) & (t > T(0)) & gain_ok(kx) & gain_ok(kv) &
              gain_ok(ka);
        const T t0 = (T(1) - kv) * (T(1) - kx);
        const T t2 = (kv * (T(1) - kx)) / h;
        const T s = kx / (h * h);
        const T d = (T(1) - t0) / h;
        T force = has_v ? t2 * vgi : T(0);
        if (has_a) force = force + ka * (T(1) - kv) * (T(1) - kx) * agi;
        const T q = d > T(0) ? force / d : T(0);
        if (approx)
            spring_reference(xi, vi, gi, q, s, d, t, eps, xo[i], vo[i]);
        else
            spring_exact(xi, vi, gi, q, s, d, t, xo[i], vo[i]);
    }
    return ok;
}
/// The lerp tracking recursion in error form over vt [T, C] (see jointlimits.springs.track_errors),
/// a frame at a time over all channels (rows stay in cache and the channel loop vectorises).
inline void track_errors(const double* e0, const double* ev0, const double* vt, const double* adt, bool use_adt,
                         const int8_t* modes, const double* xg, const double* vg, const double* ag, const double* dt,
                         double v_max, double a_max, double snap, std::size_t T, std::size_t C, double* out_e,
                         double* out_ev) {
    for (std::size_t i = 0; i < T; ++i) {
        const double h = dt[i], kx = xg[i], kv = vg[i], ka = ag[i], lim = a_max * h;
        const int m = modes[i];
        const double* vrow = vt + i * C;
        const double* vprev = i ? vt + (i - 1) * C : nullptr;
        const double* arow = use_adt ? adt + i * C : nullptr;
        const double* e_in = i ? out_e + (i - 1) * C : e0;
        const double* ev_in = i ? out_ev + (i - 1) * C : ev0;
        double* e_out = out_e + i * C;
        double* ev_out = out_ev + i * C;
        for (std::size_t c = 0; c < C; ++c) {
            const double vti = vrow[c];
            const double dv = vti - (vprev ? vprev[c] : 0.0);
            const double e = e_in[c], ev = ev_in[c];
            double ev_pre;
            if (m == 2) {
                double a = arow ? arow[c] : dv;
                a = a > lim ? lim : (a < -lim ? -lim : a);
                ev_pre = ev + (ka * a - dv);
            } else {
                ev_pre = ev - dv;
            }
            double ev1 = ev_pre;
            if (m >= 1) {
                const double vc = vti > v_max ? v_max : (vti < -v_max ? -v_max : vti);
                ev1 = ev_pre + kv * ((vc - vti) - ev_pre);
            }
            double ev2 = ev1 + kx * (-e / h - ev1);
            double e2 = e + h * ev2;
            if (snap > 0.0 && std::abs(e2) < snap && std::abs(ev2) * h < snap) e2 = 0.0, ev2 = 0.0;
            e_out[c] = e2;
            ev_out[c] = ev2;
        }
    }
}

}  // namespace jointlimits

// Springs: the exact spring-damper (stable closed form and the reference's approximations),
// tracking-spring updates (lerp gains and half-lives) and the lerp tracking recursion in error
// form. Ports of jointlimits.cleanup.springs' numpy formulas, element by element, templated on the scalar
// type (float or double). When the parameters that set the per-step coefficients (stiffness,
// damping, dt, gains) are scalars, the coefficients are computed once and the element loop is a
// few multiply-adds without branches (it vectorises); otherwise every element solves its own
// regime: branch-free (all regimes computed, the element's selected; exp and sincos by series) where
// that vectorises (float; double with AVX2), else the scalar loop.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fastmath.hpp"

// The element loops are also built for AVX2 + FMA (x86-64-v3), see JL_TARGET_CLONES.
#if defined(JL_TARGET_CLONES)
#define JL_ELEMENT_LOOP gnu::noinline, gnu::target_clones("arch=x86-64-v3", "default")
#define JL_ELEMENT_CLONES 1
#else
#define JL_ELEMENT_LOOP gnu::noinline
#endif

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
JL_INLINE T fast_negexp(T x) {
    return T(1) / (T(1) + x + T(0.48) * x * x + T(0.235) * x * x * x);
}

template <class T>
JL_INLINE T fast_atan(T x) {
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
/// True when the element loops run vectorised for double: SSE2 has no 64-bit mask operations, AVX2
/// (the x86-64-v3 clone, or a build for it) has.
inline bool wide_doubles() {
#if defined(__AVX2__)
    return true;
#elif defined(JL_ELEMENT_CLONES)
    static const bool v3 = __builtin_cpu_supports("x86-64-v3");
    return v3;
#else
    return false;
#endif
}

/// Per-element flags in an integer as wide as T (mixed widths keep GCC from vectorising with SSE2).
template <class T>
using Flag = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

/// The sign bit of T's integer if x is NaN or infinite, else 0: three integer operations (the
/// exponent field all ones carries into the sign bit).
template <class T>
JL_INLINE Flag<T> nonfinite_bit(T x) {
    constexpr int sh = 8 * sizeof(T) - 1;
    constexpr Flag<T> exp_mask = sizeof(T) == 4 ? Flag<T>(0x7f800000u) : Flag<T>(0x7ff0000000000000ull);
    constexpr Flag<T> exp_one = sizeof(T) == 4 ? Flag<T>(0x00800000u) : Flag<T>(0x0010000000000000ull);
    Flag<T> u;
    std::memcpy(&u, &x, sizeof(T));
    return ((u & exp_mask) + exp_one) & (Flag<T>(1) << sh);
}

/// 1 if x is NaN or infinite, else 0 (branch-free, vectorises).
template <class T>
JL_INLINE Flag<T> bad(T x) {
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
/// (branch-free: vectorises where std::cos / std::sin would not). Not fastmath::sincos_small: this
/// one also runs in float, and the springs' results (f32 and f64) are these bits.
template <class T>
JL_INLINE void cos_sin_taylor(T p, T& c, T& s) {
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

// Branch-free exp / sincos for the per-element loops (std::exp, std::cos do not vectorise); within a
// few ulp of libm on the ranges used.
template <class T>
struct Bits;
template <>
struct Bits<float> {
    using U = std::uint32_t;
    static constexpr int kMant = 23, kBias = 127;
    static constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
};
template <>
struct Bits<double> {
    using U = std::uint64_t;
    static constexpr int kMant = 52, kBias = 1023;
    static constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
};

template <class T>
JL_INLINE typename Bits<T>::U to_bits(T x) {
    typename Bits<T>::U u;
    std::memcpy(&u, &x, sizeof(T));
    return u;
}
template <class T>
JL_INLINE T from_bits(typename Bits<T>::U u) {
    T x;
    std::memcpy(&x, &u, sizeof(T));
    return x;
}

/// c ? a : b on the bits: GCC would turn a ternary into a branch around a's or b's arithmetic and
/// not vectorise the loop.
template <class T>
JL_INLINE T select(bool c, T a, T b) {
    using U = typename Bits<T>::U;
    const U m = U(0) - U(c);
    return from_bits<T>((to_bits(a) & m) | (to_bits(b) & ~m));
}

/// max / min as selects (std::max lets GCC thread a branch through the loop).
template <class T>
JL_INLINE T vmax(T a, T b) {
    return select(a < b, b, a);
}
template <class T>
JL_INLINE T vmin(T a, T b) {
    return select(b < a, b, a);
}

/// Taylor coefficients 1 / n!, n = 0..N.
template <int N>
struct ExpCoef {
    double c[N + 1];
    constexpr ExpCoef() : c() {
        double f = 1.0;
        for (int k = 0; k <= N; ++k) {
            if (k) f *= k;
            c[k] = 1.0 / f;
        }
    }
};

/// exp(x) for x <= 0 (x below the normal range gives the smallest normal power instead of 0).
template <class T>
JL_INLINE T vexp(T x) {
    constexpr bool f32 = sizeof(T) == 4;
    constexpr int N = f32 ? 8 : 13;
    static constexpr ExpCoef<N> cf{};
    const T lo = f32 ? T(-87.0) : T(-708.0);
    x = vmax(vmin(x, T(0)), lo);
    const T kr = x * T(1.4426950408889634) + Bits<T>::kRound;  // round(x / ln2) in the low bits
    const T k = kr - Bits<T>::kRound;
    const T r = f32 ? (x - k * T(0.693359375)) - k * T(-2.12194440e-4)
                    : (x - k * T(6.93147180369123816490e-01)) - k * T(1.90821492927058770002e-10);
    T p = T(cf.c[N]);
    for (int j = N - 1; j >= 0; --j) p = p * r + T(cf.c[j]);
    using U = typename Bits<T>::U;
    const U e = (to_bits(kr) + U(Bits<T>::kBias)) << Bits<T>::kMant;
    return p * from_bits<T>(e);
}

/// phi(z) = (1 - exp(-z)) / z for z >= 0 given ez = exp(-z): series below 1/2, where 1 - ez cancels.
template <class T>
JL_INLINE T vphi(T z, T ez) {
    constexpr int N = sizeof(T) == 4 ? 9 : 16;  // terms (-z)^n / (n + 1)!
    static constexpr ExpCoef<N + 1> cf{};
    T p = T(cf.c[N + 1]) * ((N % 2) ? T(-1) : T(1));
    for (int j = N - 1; j >= 0; --j) p = p * z + T(cf.c[j + 1]) * ((j % 2) ? T(-1) : T(1));
    const T big = (T(1) - ez) / vmax(z, T(0.5));
    return select(z < T(0.5), p, big);
}

/// The largest |x| vsincos reduces accurately (the caller redoes larger arguments with std::cos/sin).
template <class T>
constexpr T kSinCosLimit = sizeof(T) == 4 ? T(8192) : T(500000);

/// cos and sin of |x| <= kSinCosLimit: x = k pi/2 + r (Cody-Waite), series on r, quadrant of k.
template <class T>
JL_INLINE void vsincos(T x, T& c, T& s) {
    constexpr bool f32 = sizeof(T) == 4;
    const T kr = x * T(0.63661977236758134) + Bits<T>::kRound;
    const T k = kr - Bits<T>::kRound;
    const T r = f32 ? ((x - k * T(1.5703125)) - k * T(4.837512969970703125e-4)) - k * T(7.54978995489188216e-8)
                    : (x - k * T(1.57079632673412561417e+00)) - k * T(6.07710050650619224932e-11);
    T c0, s0;
    cos_sin_taylor(r, c0, s0);
    using U = typename Bits<T>::U;
    const U q = to_bits(kr);
    const bool swap = q & 1;
    constexpr int sh = 8 * sizeof(T) - 2;  // bit 1 of the quadrant to the sign bit
    c = from_bits<T>(to_bits(select(swap, s0, c0)) ^ (((q + 1) & 2) << sh));
    s = from_bits<T>(to_bits(select(swap, c0, s0)) ^ ((q & 2) << sh));
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
    JL_INLINE void operator()(T x, T v, T, T q, T& xo, T& vo) const {
        xo = x + q * t + (v - q) * a;
        vo = q + (v - q) * e;
    }
    JL_INLINE detail::Flag<T> unused(T g, T) const { return detail::nonfinite_bit(g); }
};

/// spring_exact with s > tiny (every regime: the coefficients carry it).
template <class T>
struct Exact {
    // x' = c + j0 ec + j1 es with j1 = v + y j0, regrouped per input: x' = c + j0 a + v es,
    // v' = v b - j0 e (fewer operations per element, no chain through j1)
    T dos, es, a, b, e;
    Exact(T s, T d, T t) : dos(d / s) {
        T y, k, ec;
        exact_coefficients(s, d, t, y, k, ec, es);
        a = ec + y * es;
        b = ec - y * es;
        e = (y * y + k) * es;
    }
    JL_INLINE void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + dos * q;
        const T j0 = x - c;
        xo = c + j0 * a + v * es;
        vo = v * b - j0 * e;
    }
    JL_INLINE detail::Flag<T> unused(T, T) const { return 0; }
};

/// spring_reference, critically damped branch.
template <class T>
struct RefCritical {
    // the reference's x' = xc ey + t j1 ey + c, v' = -y xc ey - y t j1 ey + j1 ey with j1 = v + y xc,
    // regrouped per input: x' = xc a + v b + c, v' = v e - xc f
    T cq, a, b, e, f;
    RefCritical(T s, T d, T t, T eps) : cq(d / (s + eps)) {
        const T y = T(0.5) * d, ey = fast_negexp(y * t);
        a = ey + t * y * ey;
        b = t * ey;
        e = ey - y * t * ey;
        f = y * y * t * ey;
    }
    JL_INLINE void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + cq * q;
        const T xc = x - c;
        xo = xc * a + v * b + c;
        vo = v * e - xc * f;
    }
    JL_INLINE detail::Flag<T> unused(T, T) const { return 0; }
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
    JL_INLINE void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + cq * q;
        const T xc = x - c;
        const T j1 = v + y * xc;
        // selects as arithmetic on 0/1 (GCC keeps conditional float ops as branches: no vectorising)
        const T amp = std::sqrt(j1 * j1 * inv + xc * xc) * detail::select(xc > T(0), T(1), T(-1));
        // fast_atan without a branch (min(z, 1/z) is its w)
        const T r = j1 / (-xc * w + eps);
        const T z = std::abs(r);
        const T wz = detail::vmin(z, T(1) / z);
        const T a = T(3.141592653589793 / 4.0) * wz - wz * (wz - T(1)) * (T(0.2447) + T(0.0663) * wz);
        const T ph = std::copysign(a + T(z > T(1)) * (T(3.141592653589793 / 2.0) - T(2) * a), r);
        T cp, sp;
        detail::cos_sin_taylor(ph, cp, sp);
        const T cs = cwt * cp - swt * sp, sn = swt * cp + cwt * sp;
        const T ae = amp * ey;
        xo = ae * cs + c;
        vo = -y * ae * cs - w * ae * sn;
    }
    JL_INLINE detail::Flag<T> unused(T, T) const { return 0; }
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
    JL_INLINE void operator()(T x, T v, T g, T q, T& xo, T& vo) const {
        const T c = g + cq * q;
        const T j1 = (c * y0 - x * y0 - v) * inv;
        const T j0 = x - j1 - c;
        xo = j0 * e0 + j1 * e1 + c;
        vo = -y0 * j0 * e0 - y1 * j1 * e1;
    }
    JL_INLINE detail::Flag<T> unused(T, T) const { return 0; }
};

/// spring_reference when k == 0 is not caught by |k| < eps (eps <= 0): the state is kept.
template <class T>
struct RefKeep {
    JL_INLINE void operator()(T x, T v, T, T, T& xo, T& vo) const {
        xo = x;
        vo = v;
    }
    JL_INLINE detail::Flag<T> unused(T g, T q) const { return detail::nonfinite_bit(g) | detail::nonfinite_bit(q); }
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

/// f(a[j], .., g[j], xo[j], vo[j]) over one block of distinct arrays; returns the OR of f's flags
/// (1: an input is invalid; any other bit: redo the block, see map7).
template <class T, class F>
[[JL_ELEMENT_LOOP]] detail::Flag<T> block(const T* __restrict a, const T* __restrict b, const T* __restrict c,
                            const T* __restrict d, const T* __restrict e, const T* __restrict f_,
                            const T* __restrict g, std::size_t m, T* __restrict xo, T* __restrict vo, F f) {
    // not inlined: GCC honours restrict on parameters, where inlined copies get runtime alias checks
    // (too many pairs here: the scalar loop ran)
    detail::Flag<T> flags = 0;
#pragma GCC ivdep
    for (std::size_t j = 0; j < m; ++j) flags |= f(a[j], b[j], c[j], d[j], e[j], f_[j], g[j], xo[j], vo[j]);
    return flags;
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

/// f over n elements of seven broadcast inputs in blocks (scalar inputs read from a filled block, so
/// every access is unit-stride); redo(i, m) handles a block that f flagged with any bit but bit 0
/// (recomputes or re-checks it) and returns its validity. Returns false if an input was invalid.
template <class T, class F, class R>
inline bool map7(const SrcT<T> (&in)[7], std::size_t n, T* xo, T* vo, const F& f, const R& redo) {
    constexpr std::size_t B = 512;
    alignas(64) T buf[7][B];
    const T* base[7];
    std::size_t stride[7];
    for (int k = 0; k < 7; ++k) {
        if (in[k].inc == 0) {
            std::fill(buf[k], buf[k] + std::min(B, n), in[k].p[0]);
            base[k] = buf[k];
            stride[k] = 0;
        } else {
            base[k] = in[k].p;
            stride[k] = 1;
        }
    }
    bool ok = true;
    for (std::size_t i = 0; i < n; i += B) {
        const std::size_t m = std::min(B, n - i);
        const detail::Flag<T> flags = block(base[0] + stride[0] * i, base[1] + stride[1] * i, base[2] + stride[2] * i,
                                base[3] + stride[3] * i, base[4] + stride[4] * i, base[5] + stride[5] * i,
                                base[6] + stride[6] * i, m, xo + i, vo + i, f);
        if (flags & ~detail::Flag<T>(1))
            ok &= redo(i, m);
        else
            ok &= !(flags & 1);
    }
    return ok;
}

/// A five-input element function as a seven-input one.
template <class T, class F>
struct Five {
    F f;
    JL_INLINE detail::Flag<T> operator()(T a, T b, T c, T d, T e, T, T, T& xr, T& vr) const {
        return f(a, b, c, d, e, xr, vr);
    }
};

/// A spring step on (x, v, x_goal, v_goal), checked through its outputs; Q: v_goal is the constant qc.
template <class T, class St, bool Q>
struct SpringElem {
    St st;
    T qc;
    JL_INLINE detail::Flag<T> operator()(T x, T v, T g, T q, T, T& xr, T& vr) const {
        if constexpr (Q) q = qc;
        st(x, v, g, q, xr, vr);
        return detail::nonfinite_bit(xr + vr) | st.unused(g, q);
    }
};

/// The dt-invariant tracking step: a spring step with velocity goal (t2 v_goal + t1 a_goal) / d.
template <class T, class St>
struct TrackExactElem {
    St st;
    T t1, t2, id;
    JL_INLINE detail::Flag<T> operator()(T x, T v, T g, T vg, T ag, T& xr, T& vr) const {
        st(x, v, g, (t2 * vg + t1 * ag) * id, xr, vr);
        return detail::nonfinite_bit(xr + vr) | st.unused(g, T(0));
    }
};

/// map7 for five inputs. f flags nonfinite_bit of its outputs (cheaper than testing every input: a
/// non-finite input reaches an output); that block's inputs are then tested one by one.
template <class T, class F>
inline bool map5(const SrcT<T> (&in)[5], std::size_t n, T* xo, T* vo, const F& f) {
    const SrcT<T> in7[7] = {in[0], in[1], in[2], in[3], in[4], in[0], in[0]};
    return map7(
        in7, n, xo, vo, Five<T, F>{f},
        [&in](std::size_t i0, std::size_t m) {
            bool ok = true;
            for (std::size_t i = i0; i < i0 + m; ++i)
                for (int k = 0; k < 5; ++k) ok &= std::isfinite(in[k][i]);
            return ok;
        });
}

}  // namespace step

namespace step {
using detail::bad;
using detail::select;

/// 1 if an input is not finite or s < 0, d < 0, t <= 0.
template <class T>
JL_INLINE detail::Flag<T> invalid(T x, T v, T g, T q, T s, T d, T t) {
    return bad(x) | bad(v) | bad(g) | bad(q) | bad(s) | bad(d) | bad(t) | !(s >= T(0)) | !(d >= T(0)) |
           !(t > T(0));
}

/// spring_exact per element without branches: every regime computed, the element's selected. The
/// regimes exclude each other, so they share one sqrt, two exp and three divisions.
template <class T>
struct ExactAny {
    JL_INLINE detail::Flag<T> operator()(T x, T v, T g, T q, T s, T d, T t, T& xo, T& vo) const {
        constexpr T tiny = std::numeric_limits<T>::min();
        const T y = T(0.5) * d, k = s - y * y;
        const bool under = k > T(0), stiff = s > T(kTinyStiffness);
        const T w = std::sqrt(std::abs(k)), wt = w * t;  // under: the frequency; else u = sqrt(-k)
        T cw, sw;
        detail::vsincos(wt, cw, sw);
        const T ypu = y + w;
        // under: sin(wt) / wt; over: s / (y + u)
        const T quo = select(under, sw, s) / detail::vmax(select(under, wt, ypu), tiny);
        const T sinc = select(wt == T(0), T(1), quo), ymu = select(ypu > T(0), quo, T(0));
        const T e1 = detail::vexp(select(under, -y * t, -ymu * t));  // e^(-yt), or the slow decay
        // over: phi(2ut); s <= tiny (a damper on the velocity): phi(dt)
        const T z = select(stiff, T(2) * w * t, d * t), ez = detail::vexp(-z), ph = detail::vphi(z, ez);
        const T ec = select(under, e1 * cw, e1 * T(0.5) * (T(1) + ez));
        const T es = select(under, e1 * t * sinc, e1 * t * ph);
        const T c = g + d * q / detail::vmax(s, T(kTinyStiffness));
        const T j0 = x - c, j1 = v + y * j0;
        xo = select(stiff, c + j0 * ec + j1 * es, x + q * t + (v - q) * t * ph);
        vo = select(stiff, v * ec - (y * j1 + k * j0) * es, q + (v - q) * ez);
        return invalid(x, v, g, q, s, d, t) | detail::Flag<T>(!(wt <= detail::kSinCosLimit<T>) & under) << 1;
    }
};

/// spring_reference per element without branches (regimes share square roots and divisions).
template <class T>
struct ReferenceAny {
    T eps;
    JL_INLINE detail::Flag<T> operator()(T x, T v, T g, T q, T s, T d, T t, T& xo, T& vo) const {
        const T c = g + (d * q) / (s + eps);
        const T y = T(0.5) * d;
        const T k = s - (d * d) / T(4);
        const bool crit = std::abs(k) < eps, under = k > T(0), over = k < T(0);
        const T xc = x - c;
        // under: w = sqrt(k); over: r = sqrt(d^2 - 4 s)
        const T root = std::sqrt(detail::vmax(select(under, k, d * d - T(4) * s), T(0)));
        const T w = root, rr = root;
        const T y0 = (d + rr) / T(2), y1 = (d - rr) / T(2);
        // fast_negexp: e^(-yt) (or e^(-y0 t)) and e^(-y1 t) from one division (arguments capped so
        // the product stays finite)
        auto den = [](T a) { return T(1) + a + T(0.48) * a * a + T(0.235) * a * a * a; };
        const T cap = T(1e6);
        const T pa = den(detail::vmin(select(over & !crit, y0, y) * t, cap)), pb = den(detail::vmin(y1 * t, cap));
        const T inv = T(1) / (pa * pb);
        const T ey = pb * inv, e0 = ey, e1 = pa * inv;
        // critical
        const T j1 = v + xc * y;
        const T xcr = xc * ey + t * j1 * ey + c;
        const T vcr = -y * xc * ey - y * t * j1 * ey + j1 * ey;
        // under: amp^2 = (v + y xc)^2 / (w^2 + eps) + xc^2; over: j1 = (c y0 - x y0 - v) / (y1 - y0)
        const T vy = v + y * xc;
        const T quo = select(over, c * y0 - x * y0 - v, vy * vy) / select(over, y1 - y0, w * w + eps);
        const T amp = std::sqrt(quo + xc * xc) * detail::select(xc > T(0), T(1), T(-1));
        // fast_atan(num / den) with w = min(|num|, |den|) / max(|num|, |den|)
        const T num = v + xc * y, dn = -xc * w + eps;
        const T an = std::abs(num), ad = std::abs(dn);
        const T wz = detail::vmin(an, ad) / detail::vmax(an, ad);
        const T a = T(3.141592653589793 / 4.0) * wz - wz * (wz - T(1)) * (T(0.2447) + T(0.0663) * wz);
        const T sgn = std::copysign(T(1), num) * std::copysign(T(1), dn);
        const T ph = std::copysign(select(an > ad, T(3.141592653589793 / 2.0) - a, a), sgn);
        const T arg = w * t + ph;
        T cs, sn;
        detail::vsincos(arg, cs, sn);
        const T xu = amp * ey * cs + c;
        const T vu = -y * amp * ey * cs - w * amp * ey * sn;
        // over-damped
        const T jo1 = quo, jo0 = x - jo1 - c;
        const T xov = jo0 * e0 + jo1 * e1 + c;
        const T vov = -y0 * jo0 * e0 - y1 * jo1 * e1;
        xo = select(crit, xcr, select(under, xu, select(over, xov, x)));
        vo = select(crit, vcr, select(under, vu, select(over, vov, v)));
        return invalid(x, v, g, q, s, d, t) |
               detail::Flag<T>(!(std::abs(arg) <= detail::kSinCosLimit<T>) & under & !crit) << 1;
    }
};
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
            using St = std::decay_t<decltype(st)>;
            if (q.scalar())  // a constant velocity goal (often 0): its terms leave the loop
                return step::map5(in, n, xo, vo, step::SpringElem<T, St, true>{st, q[0]});
            return step::map5(in, n, xo, vo, step::SpringElem<T, St, false>{st, T(0)});
        });
    }
    auto scalar_loop = [&](std::size_t i0, std::size_t i1) {
        bool ok = true;
        for (std::size_t i = i0; i < i1; ++i) {
            const T xi = x[i], vi = v[i], gi = g[i], qi = q[i], si = s[i], di = d[i], ti = t[i];
            ok &= !step::invalid(xi, vi, gi, qi, si, di, ti);
            if (approx)
                spring_reference(xi, vi, gi, qi, si, di, ti, eps, xo[i], vo[i]);
            else
                spring_exact(xi, vi, gi, qi, si, di, ti, xo[i], vo[i]);
        }
        return ok;
    };
    const SrcT<T> in7[7] = {x, v, g, q, s, d, t};
    // double only where it vectorises: a scalar loop over every regime would be slower than branching
    if ((sizeof(T) != 4 && !detail::wide_doubles()) || !step::distinct(in7, 7, n, xo, vo)) return scalar_loop(0, n);
    auto redo = [&](std::size_t i, std::size_t m) { return scalar_loop(i, i + m); };
    if (approx) return step::map7(in7, n, xo, vo, step::ReferenceAny<T>{eps}, redo);
    return step::map7(in7, n, xo, vo, step::ExactAny<T>{}, redo);
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
    JL_INLINE detail::Flag<T> operator()(T x, T v0, T xg, T vg, T ag, T& xo, T& vo) const {
        T v = v0;
        if constexpr (HasA) v = (T(1) - wa) * v + wa * (v + ag * t);
        if constexpr (HasV) v = (T(1) - wv) * v + wv * vg;
        v = (T(1) - wx) * v + wx * ((xg - x) * it);
        xo = x + t * v;
        vo = v;
        return detail::nonfinite_bit(xo + vo);
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
            return step::map5(in, n, xo, vo, step::TrackExactElem<T, std::decay_t<decltype(st)>>{st, t1, t2, id});
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
/// The lerp tracking recursion in error form over vt [T, C] (see jointlimits.cleanup.springs.track_errors),
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

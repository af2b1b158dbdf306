// Inline double-precision atan2 (first quadrant), sin/cos, exp and tanh for the limit step, and
// the ellipsoid projection's Newton start.
// glibc's versions are out-of-line calls with slow paths, which also keep loops from vectorising;
// these are select-only polynomials (Cephes' coefficients, S. Moshier's public-domain algorithms)
// accurate to 1-2 ulp, written so GCC vectorises the loops that call them. The step's batched
// phases and its one-rotation path call the same functions, so both give identical bits.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

// Loops built twice, for AVX2 and the portable baseline, with the version picked at load time (GCC's
// target_clones on x86-64), unless the whole build already targets AVX2. What such a loop calls is
// forced inline (JL_INLINE): GCC does not inline default-target code into a clone by itself, and a
// call out of the clone would not vectorise.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__) && \
    !defined(JL_NO_TARGET_CLONES)
#define JL_TARGET_CLONES 1
#endif
#define JL_INLINE [[gnu::always_inline]] inline

namespace jointlimits {
namespace fastmath {

constexpr double kPiO2 = 1.57079632679489661923;
constexpr double kPiO4 = 0.78539816339744830962;
constexpr double kMoreBits = 6.123233995736765886130e-17;

/// floor(x) for 0 <= x < 2^51 in double arithmetic only (vectorises without SSE4.1 or int lanes).
JL_INLINE double floor_pos(double x) {
    const double r = (x + 4503599627370496.0) - 4503599627370496.0;  // x rounded to an integer
    const double rm = r - 1.0;
    return r > x ? rm : r;
}

/// The integer value of 0 <= f < 2^51 (integer-valued) as uint64 bits (64-bit lanes only).
JL_INLINE uint64_t int_bits(double f) {
    const double magic = f + 6755399441055744.0;  // 1.5 * 2^52: f lands in the low mantissa bits
    uint64_t b;
    std::memcpy(&b, &magic, sizeof b);
    return b - uint64_t(0x4338000000000000);
}

/// atan2(n, w) for n >= 0, w >= 0 (a rotation's half angle on its short cover), in [0, pi/2].
JL_INLINE double atan2_q1(double n, double w) {
    // every operand is computed before the selects: no arithmetic under a condition, so GCC
    // if-converts and vectorises the callers' loops (IEEE trapping semantics stay on)
    const bool c1 = n > 2.41421356237309504880 * w;  // tan(3 pi / 8)
    const bool c2 = n <= 0.66 * w;
    const double mw = -w, nmw = n - w, npw = n + w;
    const double num = c1 ? mw : (c2 ? n : nmw);
    const double den = c1 ? n : (c2 ? w : npw);
    const double y = c1 ? kPiO2 : (c2 ? 0.0 : kPiO4);
    const double more = c1 ? kMoreBits : (c2 ? 0.0 : 0.5 * kMoreBits);
    const double x = num / den;
    const double z = x * x;
    const double p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z - 7.500855792314704667340e1) * z -
                      1.228866684490136173410e2) * z - 6.485021904942025371773e1;
    const double q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z + 4.328810604912902668951e2) * z +
                      4.853903996359136964868e2) * z + 1.945506571482613964425e2;
    return y + (x * (z * p / q) + x + more);
}

/// sin(x) and cos(x) for 0 <= x < 1e6 (reduction by pi/4 in three exact parts).
JL_INLINE void sincos_small(double x, double& s, double& c) {
    const double y0 = floor_pos(x / kPiO4);
    uint64_t j = int_bits(y0);
    const uint64_t odd = j & 1u;
    j += odd;
    const double y1 = y0 + 1.0;
    const double y = odd ? y1 : y0;
    const double z = ((x - y * 7.85398125648498535156e-1) - y * 3.77489470793079817668e-8) - y * 2.69515142907905952645e-15;
    const double zz = z * z;
    const double ps = z + z * (zz * (((((1.58962301576546568060e-10 * zz - 2.50507477628578072866e-8) * zz +
                                         2.75573136213857245213e-6) * zz - 1.98412698295895385996e-4) * zz +
                                       8.33333333332211858878e-3) * zz - 1.66666666666666307295e-1));
    const double pc = 1.0 - 0.5 * zz + zz * zz * (((((-1.13585365213876817300e-11 * zz + 2.08757008419747316778e-9) * zz -
                                                       2.75573141792967388112e-7) * zz + 2.48015872888517045348e-5) * zz -
                                                     1.38888888888730564116e-3) * zz + 4.16666666666665929218e-2);
    // octant j in {0, 2, 4, 6}: (sin, cos) of j pi/4 + z
    const bool swap = (j & 2u) != 0;
    const double s0 = swap ? pc : ps, c0 = swap ? ps : pc;
    const double ns0 = -s0, nc0 = -c0;
    s = (j & 4u) ? ns0 : s0;
    c = ((j + 2u) & 4u) ? nc0 : c0;
}

/// sin(x) and cos(x) for 0 <= x (glibc past 1e6).
JL_INLINE void sincos_pos(double x, double& s, double& c) {
    if (!(x < 1e6)) {
        s = std::sin(x);
        c = std::cos(x);
        return;
    }
    sincos_small(x, s, c);
}

/// exp(x) for 0 <= x <= 45 (Pade form of e^r on |r| <= ln2 / 2, times 2^n built from bits).
JL_INLINE double exp_small(double x) {
    const double fn = floor_pos(1.4426950408889634073599 * x + 0.5);
    const double r = (x - fn * 6.93145751953125e-1) - fn * 1.42860682030941723212e-6;
    const double rr = r * r;
    const double px = r * ((1.26177193074810590878e-4 * rr + 3.02994407707441961300e-2) * rr + 9.99999999999999999910e-1);
    const double qx = ((3.00198505138664455042e-6 * rr + 2.52448340349684104192e-3) * rr + 2.27265548208155028766e-1) * rr +
                      2.00000000000000000009e0;
    const double e = 1.0 + 2.0 * (px / (qx - px));
    const uint64_t bits = (int_bits(fn) + 1023u) << 52;  // 2^fn
    double p2;
    std::memcpy(&p2, &bits, sizeof p2);
    return e * p2;
}

/// tanh(x) for x >= 0.
JL_INLINE double tanh_pos(double x) {
    const double xe = x < 22.0 ? x : 22.0;  // 1 - tanh(22) is below half an ulp of 1
    const double s = exp_small(2.0 * xe);
    const double big = 1.0 - 2.0 / (s + 1.0);
    const double ss = x * x;
    const double p = (-9.64399179425052238628e-1 * ss - 9.92877231001918586564e1) * ss - 1.61468768441708447952e3;
    const double q = ((ss + 1.12811678491632931402e2) * ss + 2.23548839060100448583e3) * ss + 4.84406305325125486048e3;
    const double small = x + x * ss * (p / q);
    return x < 0.625 ? small : big;
}

/// The start of the ellipsoid projection's Newton iteration (ellipsoid_local, and the lanes of
/// project_ellipsoid) on squared radii ss: the lower bound of the root h it starts Newton from (0 when the point
/// is inside, S(0) <= 1) and `lo`, the smallest positive squared radius.
inline bool ellipsoid_start(double u, double v, double w, double ssx, double ssy, double ssz, double& h,
                            double& lo) {
    double s0 = 0.0;
    if (ssx > 0.0) s0 += u * u / ssx;
    if (ssy > 0.0) s0 += v * v / ssy;
    if (ssz > 0.0) s0 += w * w / ssz;
    h = 0.0;
    lo = 0.0;
    if (!(s0 > 1.0)) return false;
    double m = ssx;
    if (ssy > m) m = ssy;
    if (ssz > m) m = ssz;
    lo = ssx;
    if (ssy > 0.0 && (ssy < lo || lo == 0.0)) lo = ssy;
    if (ssz > 0.0 && (ssz < lo || lo == 0.0)) lo = ssz;
    // for points far out (|p|^2 past the double range) the bound is taken on the scaled point:
    // the Newton steps only ever form p / (ss + h), which stays finite
    const double big = std::max(std::abs(u), std::max(std::abs(v), std::abs(w)));
    double b;
    if (big > 1e150) {
        const double su = u / big, sv = v / big, sw = w / big;
        b = big * std::sqrt(ssx * su * su + ssy * sv * sv + ssz * sw * sw) - m;
    } else {
        b = std::sqrt(ssx * u * u + ssy * v * v + ssz * w * w) - m;
    }
    if (b > h) h = b;
    b = std::sqrt(ssx) * std::abs(u) - ssx;
    if (b > h) h = b;
    b = std::sqrt(ssy) * std::abs(v) - ssy;
    if (b > h) h = b;
    b = std::sqrt(ssz) * std::abs(w) - ssz;
    if (b > h) h = b;
    return true;
}

}  // namespace fastmath
}  // namespace jointlimits

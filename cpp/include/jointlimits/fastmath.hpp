// Inline double-precision atan2 (first quadrant), sin/cos and tanh for the limit step. glibc's
// versions are out-of-line calls with slow paths; these are branch-light polynomials (Cephes'
// coefficients, Moshier, public domain algorithms) accurate to 1-2 ulp, so the step keeps its
// float64 results to ~1e-16 while its transcendental cost drops by half.
#pragma once
#include <cmath>

namespace jointlimits {
namespace fastmath {

constexpr double kPiO2 = 1.57079632679489661923;
constexpr double kPiO4 = 0.78539816339744830962;
constexpr double kMoreBits = 6.123233995736765886130e-17;

/// atan2(n, w) for n >= 0, w >= 0 (a rotation's half angle on its short cover), in [0, pi/2].
inline double atan2_q1(double n, double w) {
    double y, x, more;
    if (n > 2.41421356237309504880 * w) {  // tan(3 pi / 8)
        y = kPiO2, x = -w / n, more = kMoreBits;
    } else if (n <= 0.66 * w) {
        y = 0.0, x = n / w, more = 0.0;
    } else {
        y = kPiO4, x = (n - w) / (n + w), more = 0.5 * kMoreBits;
    }
    const double z = x * x;
    const double p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z - 7.500855792314704667340e1) * z -
                      1.228866684490136173410e2) * z - 6.485021904942025371773e1;
    const double q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z + 4.328810604912902668951e2) * z +
                      4.853903996359136964868e2) * z + 1.945506571482613964425e2;
    return y + (x * (z * p / q) + x + more);
}

/// sin(x) and cos(x) for 0 <= x (exact reduction by pi/4 in three parts; glibc past 1e6).
inline void sincos_pos(double x, double& s, double& c) {
    if (!(x < 1e6)) {
        s = std::sin(x);
        c = std::cos(x);
        return;
    }
    double y = std::floor(x / kPiO4);
    long j = static_cast<long>(y);
    if (j & 1) ++j, y += 1.0;
    j &= 7;
    const double z = ((x - y * 7.85398125648498535156e-1) - y * 3.77489470793079817668e-8) - y * 2.69515142907905952645e-15;
    const double zz = z * z;
    const double ps = z + z * (zz * (((((1.58962301576546568060e-10 * zz - 2.50507477628578072866e-8) * zz +
                                         2.75573136213857245213e-6) * zz - 1.98412698295895385996e-4) * zz +
                                       8.33333333332211858878e-3) * zz - 1.66666666666666307295e-1));
    const double pc = 1.0 - 0.5 * zz + zz * zz * (((((-1.13585365213876817300e-11 * zz + 2.08757008419747316778e-9) * zz -
                                                       2.75573141792967388112e-7) * zz + 2.48015872888517045348e-5) * zz -
                                                     1.38888888888730564116e-3) * zz + 4.16666666666665929218e-2);
    // octant j in {0, 2, 4, 6}: rotate (sin, cos) by j * pi/4
    switch (j) {
        case 0: s = ps, c = pc; break;
        case 2: s = pc, c = -ps; break;
        case 4: s = -ps, c = -pc; break;
        default: s = -pc, c = ps; break;
    }
}

/// tanh(x) for x >= 0.
inline double tanh_pos(double x) {
    if (x >= 0.625) {
        if (x > 22.0) return 1.0;  // 1 - tanh(22) < 2^-63
        const double s = std::exp(2.0 * x);
        return 1.0 - 2.0 / (s + 1.0);
    }
    const double s = x * x;
    const double p = (-9.64399179425052238628e-1 * s - 9.92877231001918586564e1) * s - 1.61468768441708447952e3;
    const double q = ((s + 1.12811678491632931402e2) * s + 2.23548839060100448583e3) * s + 4.84406305325125486048e3;
    return x + x * s * (p / q);
}

}  // namespace fastmath
}  // namespace jointlimits

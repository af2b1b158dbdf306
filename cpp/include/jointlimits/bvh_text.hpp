// BVH motion text: channel values written as the shortest exact decimals.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace jointlimits {

/// Write each of n values as the shortest decimal with at most 22 places that is exactly it
/// (round(v 10^k) / 10^k == v, correctly rounded like the parse), space separated, a newline every
/// n_ch values, into out (room for 42 bytes per value). Returns the bytes written, or -1 if some
/// value is not such a decimal (the caller then writes the shortest repr instead).
inline int64_t format_fixed(const double* v, std::size_t n, std::size_t n_ch, char* out) {
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    char* p = out;
    char digits[40];
    for (std::size_t i = 0; i < n; ++i) {
        const double x = v[i];
        int k = -1;
        double r = 0.0;
        for (int kk = 0; kk < 23; ++kk) {
            r = std::nearbyint(x * pow10[kk]);  // round half to even, as numpy's rint
            if (std::abs(r) >= 1e15) break;
            if (r / pow10[kk] == x) {
                k = kk;
                break;
            }
        }
        if (k < 0) return -1;
        auto m = static_cast<int64_t>(std::abs(r));
        if (r < 0 && m != 0) *p++ = '-';
        int nd = 0;
        while (m > 0 || nd <= k) {
            digits[nd++] = static_cast<char>('0' + m % 10);
            m /= 10;
        }
        for (int d = nd - 1; d >= 0; --d) {
            *p++ = digits[d];
            if (d == k && k > 0) *p++ = '.';
        }
        *p++ = (i + 1) % n_ch == 0 ? '\n' : ' ';
    }
    return p - out;
}

}  // namespace jointlimits

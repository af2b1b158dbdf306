// BVH motion text: channel values written as the shortest exact decimals, in a file's own
// number style, and rows of a source file rewritten with only their changed tokens replaced.
#pragma once
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace jointlimits {

/// Bytes put_value may write for one value.
constexpr std::size_t kValueBytes = 64;

/// Write x in the shortest fixed notation that parses back to x, with at least min_dec decimals
/// (zeros appended; min_dec <= 20), no exponent for 1e-20 <= |x| < 1e21 (the shortest scientific
/// form outside), -0 as 0. Returns the end.
inline char* put_value(char* p, double x, int min_dec) {
    if (x == 0.0) x = 0.0;  // -0 -> 0
    const double a = std::abs(x);
    if (a != 0.0 && (a < 1e-20 || a >= 1e21)) return std::to_chars(p, p + kValueBytes, x).ptr;
    char* e = std::to_chars(p, p + kValueBytes, x, std::chars_format::fixed).ptr;
    if (min_dec > 0) {
        const char* dot = static_cast<const char*>(std::memchr(p, '.', static_cast<std::size_t>(e - p)));
        int have = dot ? static_cast<int>(e - dot - 1) : 0;
        if (!dot) *e++ = '.';
        for (; have < min_dec; ++have) *e++ = '0';
    }
    return e;
}

/// n values, space separated, eol after every n_ch, each by put_value. Needs kValueBytes + eol_len
/// bytes per value. Returns the bytes written.
inline int64_t format_rows(const double* v, std::size_t n, std::size_t n_ch, int min_dec, const char* eol,
                           std::size_t eol_len, char* out) {
    char* p = out;
    for (std::size_t i = 0; i < n; ++i) {
        p = put_value(p, v[i], min_dec);
        if ((i + 1) % n_ch == 0) {
            std::memcpy(p, eol, eol_len);
            p += eol_len;
        } else {
            *p++ = ' ';
        }
    }
    return p - out;
}

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

/// Rows of a source text with their changed values replaced: row i is src[starts[i], ends[i])
/// (its line ending included); where same[i n_ch + c] is 0 its c-th token is replaced by
/// put_value(v[i n_ch + c]); separators, unchanged tokens and line endings are copied. A row
/// without a line ending gets eol unless it is the last. Returns the bytes written (at most the
/// rows' bytes + kValueBytes per changed value + eol_len per row), or -1 if a row does not hold
/// n_ch tokens.
inline int64_t merge_rows(const char* src, const int64_t* starts, const int64_t* ends, std::size_t rows,
                          std::size_t n_ch, const uint8_t* same, const double* v, int min_dec, const char* eol,
                          std::size_t eol_len, char* out) {
    char* p = out;
    for (std::size_t i = 0; i < rows; ++i) {
        const char* a = src + starts[i];
        const char* b = src + ends[i];
        std::size_t c = 0;
        while (a < b) {
            const char* t = a;
            while (t < b && is_space(*t)) ++t;
            std::memcpy(p, a, static_cast<std::size_t>(t - a));
            p += t - a;
            if (t == b) break;
            const char* u = t;
            while (u < b && !is_space(*u)) ++u;
            if (c >= n_ch) return -1;
            const std::size_t k = i * n_ch + c;
            if (same[k]) {
                std::memcpy(p, t, static_cast<std::size_t>(u - t));
                p += u - t;
            } else {
                p = put_value(p, v[k], min_dec);
            }
            ++c;
            a = u;
        }
        if (c != n_ch) return -1;
        if (i + 1 < rows && (ends[i] == starts[i] || src[ends[i] - 1] != '\n')) {
            std::memcpy(p, eol, eol_len);
            p += eol_len;
        }
    }
    return p - out;
}

/// [+-]digits[.digits] with at most 19 digits, a value below 2^53 and at most 22 decimals: the
/// exact integer divided by an exact power of ten, so correctly rounded (Clinger's fast path),
/// the sign kept (-0.000 is -0). Returns the end, or nullptr for anything else (exponents, long
/// values), which std::from_chars then reads.
inline const char* plain_decimal(const char* p, const char* end, double& out) {
    static constexpr double kPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                          1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const bool neg = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) ++p;
    uint64_t m = 0;
    int digits = 0, decimals = 0;
    for (; p < end && static_cast<unsigned>(*p - '0') < 10u; ++p, ++digits) m = m * 10 + static_cast<unsigned>(*p - '0');
    if (p < end && *p == '.') {
        for (++p; p < end && static_cast<unsigned>(*p - '0') < 10u; ++p, ++digits, ++decimals)
            m = m * 10 + static_cast<unsigned>(*p - '0');
    }
    if (digits == 0 || digits > 19 || decimals > 22 || m > (uint64_t(1) << 53)) return nullptr;
    if (p < end && (*p == 'e' || *p == 'E')) return nullptr;
    const double v = static_cast<double>(m) / kPow10[decimals];
    out = neg ? -v : v;
    return p;
}

/// Parse rows of n_ch ASCII numbers from s[0, n): lines end at '\n', lines holding only ' ', '\t'
/// and '\r' are skipped, values are separated by those bytes. Writes the values of row r to
/// out[r n_ch, (r + 1) n_ch) and its byte range (line ending included) to ranges[2 r], ranges[2 r + 1];
/// at most max_rows rows. Returns the rows parsed, or -1 at anything but plain finite decimals
/// ([+-]digits[.digits][e[+-]digits]) in rows of exactly n_ch values: the caller then takes its
/// checked (slow) path, which reports the error. Correctly rounded (std::from_chars).
/// One value of a row at ``p`` (plain decimals fast, else from_chars; a leading '+' allowed, a
/// non-finite value refused), ``p`` moved past it; false when it is not a number or does not end at
/// a separator or the line's end (from_chars stops before "1.5x", "1e").
inline bool read_value(const char*& p, const char* end, double& v) {
    const char* fast = plain_decimal(p, end, v);
    if (fast) {
        p = fast;
    } else {
        const char* t = p;
        if (*t == '+') {
            ++t;
            if (t == end || *t == '-' || *t == '+') return false;
        }
        const auto res = std::from_chars(t, end, v, std::chars_format::general);
        if (res.ec != std::errc() || !std::isfinite(v)) return false;
        p = res.ptr;
    }
    return !(p < end && !(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'));
}

inline int64_t parse_rows(const char* s, std::size_t n, std::size_t n_ch, double* out, int64_t* ranges,
                          std::size_t max_rows) {
    const char* p = s;
    const char* const end = s + n;
    std::size_t r = 0;
    while (p < end) {
        const char* line = p;
        std::size_t c = 0;
        double* row = out + r * n_ch;
        for (;;) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
            if (p == end || *p == '\n') break;
            if (c == n_ch || r == max_rows) return -1;
            double v;
            if (!read_value(p, end, v)) return -1;
            row[c++] = v;
        }
        const char* stop = p < end ? p + 1 : end;  // past the '\n'
        if (c != 0) {
            if (c != n_ch) return -1;
            ranges[2 * r] = line - s;
            ranges[2 * r + 1] = stop - s;
            ++r;
        }
        p = stop;
    }
    return static_cast<int64_t>(r);
}

}  // namespace jointlimits

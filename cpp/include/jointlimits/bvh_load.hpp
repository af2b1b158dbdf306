// BVH frame rows straight into a clip's arrays: one pass parses a block of rows, scatters the
// position channels, turns each joint's three Euler channels into a quaternion, fingerprints it
// and records each row's byte range, with no [rows, channels] array in between.
#pragma once
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bvh_text.hpp"
#include "quat_batch.hpp"

namespace jointlimits {

/// 64-bit fingerprint of a quaternion's exact bits (w, x, y, z): how a save tells an unchanged
/// rotation from a changed one. The same function as jointlimits.io.bvh._source._qhash.
inline uint64_t quat_fingerprint(const double* q) {
    constexpr uint64_t H0 = 0x9E3779B97F4A7C15ull, H[4] = {0, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                                                           0x27D4EB2F165667C5ull};
    uint64_t u[4];
    std::memcpy(u, q, sizeof u);
    uint64_t h = u[0] * H0;
    for (int k = 1; k < 4; ++k) h = (h ^ (h >> 29)) * H[k] + u[k];
    h ^= h >> 32;
    return h * H0;
}

/// Where the channels of a row go. Columns index the row's values; joints the skeleton's.
struct BvhRowPlan {
    std::size_t n_ch = 0, n_joints = 0;
    const double* offsets = nullptr;  ///< [n_joints, 3]: positions of channels a joint lacks
    const int64_t* pos_col = nullptr;  ///< [n_pos]: column of each position channel
    const int64_t* pos_dst = nullptr;  ///< [n_pos]: its index in a frame's [n_joints, 3] positions
    std::size_t n_pos = 0;
    const int64_t* rot_joint = nullptr;  ///< [n_rot]: joints with three distinct rotation axes
    const int64_t* rot_col = nullptr;    ///< [n_rot, 3]: their columns, in channel order
    const int64_t* rot_axes = nullptr;   ///< [n_rot, 3]: their axes (0 x, 1 y, 2 z), in channel order
    std::size_t n_rot = 0;
    const int64_t* extra_col = nullptr;  ///< [n_extra]: columns copied out for the caller (other rotations)
    std::size_t n_extra = 0;
};

/// The destination of rows: frame r's positions at positions[r J 3], rotations at rotations[r J 4]
/// (identity where no joint channel sets them), fingerprints at hashes[r J], byte range at
/// ranges[2 r] (start, end: base + offset in the block, line ending included), extra columns at
/// extra[r n_extra].
struct BvhRowOut {
    double* positions;
    double* rotations;
    uint64_t* hashes;
    int64_t* ranges;
    double* extra;
};

/// Rows of plan.n_ch plain numbers in s[0, n) (the syntax of parse_rows: lines end at '\n', blank
/// lines skipped) into out, at most max_rows rows. Euler angles are degrees. Returns the rows
/// written, or -1 at anything parse_rows rejects or a row past max_rows (the caller then takes
/// its checked path; rows written so far are overwritten there). *newlines gets the block's '\n' count.
inline int64_t load_rows(const char* s, std::size_t n, const BvhRowPlan& plan, const BvhRowOut& out,
                         std::size_t max_rows, int64_t base, int64_t* newlines) {
    const char* p = s;
    const char* const end = s + n;
    const std::size_t n_ch = plan.n_ch, J = plan.n_joints;
    std::vector<double> row(n_ch > 0 ? n_ch : 1);
    uint64_t ident_hash;
    {
        const double id[4] = {1.0, 0.0, 0.0, 0.0};
        ident_hash = quat_fingerprint(id);
    }
    std::size_t r = 0;
    int64_t lines = 0;
    while (p < end) {
        const char* line = p;
        std::size_t c = 0;
        for (;;) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
            if (p == end || *p == '\n') break;
            if (c == n_ch || r == max_rows) return -1;
            double v;
            if (!read_value(p, end, v)) return -1;
            row[c++] = v;
        }
        const char* stop = p;
        if (p < end) {
            ++stop;  // past the '\n'
            ++lines;
        }
        if (c != 0) {
            if (c != n_ch) return -1;
            double* pos = out.positions + r * J * 3;
            double* rot = out.rotations + r * J * 4;
            uint64_t* hs = out.hashes + r * J;
            for (std::size_t k = 0; k < 3 * J; ++k) pos[k] = plan.offsets[k];
            for (std::size_t j = 0; j < J; ++j) {
                rot[4 * j] = 1.0;
                rot[4 * j + 1] = rot[4 * j + 2] = rot[4 * j + 3] = 0.0;
                hs[j] = ident_hash;
            }
            for (std::size_t k = 0; k < plan.n_pos; ++k) pos[plan.pos_dst[k]] = row[plan.pos_col[k]];
            for (std::size_t g = 0; g < plan.n_rot; ++g) {
                const int64_t* col = plan.rot_col + 3 * g;
                const int64_t* ax = plan.rot_axes + 3 * g;
                const double ang[3] = {row[col[0]], row[col[1]], row[col[2]]};
                double* q = rot + 4 * plan.rot_joint[g];
                qb::from_euler3(ang, static_cast<int>(ax[0]), static_cast<int>(ax[1]), static_cast<int>(ax[2]), true,
                                q, 1);
                hs[plan.rot_joint[g]] = quat_fingerprint(q);
            }
            for (std::size_t k = 0; k < plan.n_extra; ++k) out.extra[r * plan.n_extra + k] = row[plan.extra_col[k]];
            out.ranges[2 * r] = base + (line - s);
            out.ranges[2 * r + 1] = base + (stop - s);
            ++r;
        }
        p = stop;
    }
    *newlines = lines;
    return static_cast<int64_t>(r);
}

}  // namespace jointlimits

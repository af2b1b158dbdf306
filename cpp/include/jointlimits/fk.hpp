// Forward kinematics of whole poses: global rotations and positions from local ones.
#pragma once
#include <cstdint>

#include "quat.hpp"

namespace jointlimits {

/// n poses of J joints, parents listed before children (parents[0] = -1):
/// gr_j = gr_p lr_j, gp_j = gp_p + gr_p lp_j. Arrays are C-contiguous [n, J, 4] / [n, J, 3].
inline void forward_kinematics(const double* lr, const double* lp, const int64_t* parents, int64_t n,
                               int64_t J, double* gr, double* gp) {
    for (int64_t f = 0; f < n; ++f) {
        const double* r = lr + f * J * 4;
        const double* p = lp + f * J * 3;
        double* R = gr + f * J * 4;
        double* P = gp + f * J * 3;
        for (int c = 0; c < 4; ++c) R[c] = r[c];
        for (int c = 0; c < 3; ++c) P[c] = p[c];
        for (int64_t j = 1; j < J; ++j) {
            const int64_t k = parents[j];
            const Quat a{R[k * 4], R[k * 4 + 1], R[k * 4 + 2], R[k * 4 + 3]};
            const Quat g = qmul(a, Quat{r[j * 4], r[j * 4 + 1], r[j * 4 + 2], r[j * 4 + 3]});
            R[j * 4] = g.w, R[j * 4 + 1] = g.x, R[j * 4 + 2] = g.y, R[j * 4 + 3] = g.z;
            const Vec3 v = qrotate(a, Vec3{p[j * 3], p[j * 3 + 1], p[j * 3 + 2]});
            P[j * 3] = P[k * 3] + v.x, P[j * 3 + 1] = P[k * 3 + 1] + v.y, P[j * 3 + 2] = P[k * 3 + 2] + v.z;
        }
    }
}

}  // namespace jointlimits

// Whole-body IK: one damped least-squares step per pose on the normal equations, solved by an
// envelope Cholesky factorisation (the kernels of jointlimits.ik.whole_body).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jointlimits {

/// Solve A x = b (A n x n, row-major, symmetric positive definite) whose row i is zero left of
/// first[i]; A is overwritten by its Cholesky factor, which keeps that envelope.
inline void envelope_cholesky_solve(double* A, const int64_t* first, const double* b, double* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const int64_t fi = first[i];
        double* Ai = A + i * n;
        for (int64_t j = fi; j < i; ++j) {
            const double* Aj = A + j * n;
            const int64_t k0 = fi > first[j] ? fi : first[j];
            double s = Ai[j];
            for (int64_t k = k0; k < j; ++k) s -= Ai[k] * Aj[k];
            Ai[j] = s / Aj[j];
        }
        double s = Ai[i];
        for (int64_t k = fi; k < i; ++k) s -= Ai[k] * Ai[k];
        Ai[i] = std::sqrt(s > 1e-300 ? s : 1e-300);
    }
    for (int64_t i = 0; i < n; ++i) {
        const double* Ai = A + i * n;
        double s = b[i];
        for (int64_t k = first[i]; k < i; ++k) s -= Ai[k] * x[k];
        x[i] = s / Ai[i];
    }
    for (int64_t i = n - 1; i >= 0; --i) {
        const double* Ai = A + i * n;
        x[i] /= Ai[i];
        const double xi = x[i];
        for (int64_t k = first[i]; k < i; ++k) x[k] -= Ai[k] * xi;
    }
}

/// One damped least-squares step per pose f of F (see jointlimits.ik.whole_body._dls_normal_step):
/// gp [F, J, 3] global positions, tgt/wp position targets and weights (0 = none), ro/wo
/// orientation residuals and weights, rp/wr posture residuals and weights, nrm [F, J, 3] blocked
/// directions of clamped joints (0 = free), lam [F] damping, chain [J, D] each joint then its
/// ancestors, off [J] the joints' unknowns in the system, first [3J + 3] its envelope, free
/// [3 + 3J] (translation, joints). Writes dx [F, 3 + 3J] and push [F, J].
inline void dls_normal_step(const double* gp, const double* tgt, const double* wp, const double* ro,
                            const double* wo, const double* rp, const double* wr, const double* nrm,
                            const double* lam, const int64_t* chain, const int64_t* chain_len, int64_t D,
                            const int64_t* off, const int64_t* first, const uint8_t* free, int64_t F, int64_t J,
                            double* dx, double* push) {
    const int64_t N = 3 + 3 * J, ot = 3 * J;
    std::vector<double> Av(N * N), bv(N), xv(N);
    std::vector<uint8_t> fr(N);
    double* A = Av.data();
    double* b = bv.data();
    auto at = [&](int64_t r, int64_t c) -> double& { return A[r * N + c]; };
    for (int i = 0; i < 3; ++i) fr[ot + i] = free[i];
    for (int64_t a = 0; a < J; ++a)
        for (int r = 0; r < 3; ++r) fr[off[a] + r] = free[3 + 3 * a + r];
    for (int64_t f = 0; f < F; ++f) {
        const double* G = gp + f * J * 3;
        for (int64_t i = 0; i < N * N; ++i) A[i] = 0.0;
        for (int64_t i = 0; i < N; ++i) b[i] = 0.0;
        for (int64_t k = 0; k < J; ++k) {
            const int64_t L = chain_len[k];
            const int64_t* ch = chain + k * D;
            double w = wp[f * J + k];
            if (w > 0.0) {
                const double* T = tgt + (f * J + k) * 3;
                const double ex = T[0] - G[k * 3], ey = T[1] - G[k * 3 + 1], ez = T[2] - G[k * 3 + 2];
                at(ot, ot) += w, at(ot + 1, ot + 1) += w, at(ot + 2, ot + 2) += w;
                b[ot] += w * ex, b[ot + 1] += w * ey, b[ot + 2] += w * ez;
                for (int64_t ia = 1; ia < L; ++ia) {
                    const int64_t a = ch[ia], oa = off[a];
                    const double dax = G[k * 3] - G[a * 3], day = G[k * 3 + 1] - G[a * 3 + 1],
                                 daz = G[k * 3 + 2] - G[a * 3 + 2];
                    // column block of a is -[d_a]x: rhs gets d_a x e, translation coupling -[d_a]x
                    b[oa] += w * (day * ez - daz * ey);
                    b[oa + 1] += w * (daz * ex - dax * ez);
                    b[oa + 2] += w * (dax * ey - day * ex);
                    at(ot, oa + 1) += w * daz, at(ot, oa + 2) -= w * day;
                    at(ot + 1, oa) -= w * daz, at(ot + 1, oa + 2) += w * dax;
                    at(ot + 2, oa) += w * day, at(ot + 2, oa + 1) -= w * dax;
                    at(oa + 1, ot) += w * daz, at(oa + 2, ot) -= w * day;
                    at(oa, ot + 1) -= w * daz, at(oa + 2, ot + 1) += w * dax;
                    at(oa, ot + 2) += w * day, at(oa + 1, ot + 2) -= w * dax;
                    for (int64_t ib = 1; ib < L; ++ib) {
                        const int64_t c = ch[ib], oc = off[c];
                        const double dcx = G[k * 3] - G[c * 3], dcy = G[k * 3 + 1] - G[c * 3 + 1],
                                     dcz = G[k * 3 + 2] - G[c * 3 + 2];
                        const double dot = dax * dcx + day * dcy + daz * dcz;
                        // [d_a]x^T [d_c]x = (d_a . d_c) I - d_c d_a^T
                        at(oa, oc) += w * (dot - dcx * dax);
                        at(oa, oc + 1) -= w * dcx * day;
                        at(oa, oc + 2) -= w * dcx * daz;
                        at(oa + 1, oc) -= w * dcy * dax;
                        at(oa + 1, oc + 1) += w * (dot - dcy * day);
                        at(oa + 1, oc + 2) -= w * dcy * daz;
                        at(oa + 2, oc) -= w * dcz * dax;
                        at(oa + 2, oc + 1) -= w * dcz * day;
                        at(oa + 2, oc + 2) += w * (dot - dcz * daz);
                    }
                }
            }
            w = wo[f * J + k];
            if (w > 0.0) {
                const double* R = ro + (f * J + k) * 3;
                for (int64_t ia = 0; ia < L; ++ia) {
                    const int64_t oa = off[ch[ia]];
                    b[oa] += w * R[0], b[oa + 1] += w * R[1], b[oa + 2] += w * R[2];
                    for (int64_t ib = 0; ib < L; ++ib) {
                        const int64_t oc = off[ch[ib]];
                        at(oa, oc) += w, at(oa + 1, oc + 1) += w, at(oa + 2, oc + 2) += w;
                    }
                }
            }
        }
        for (int64_t a = 0; a < J; ++a) {
            const int64_t oa = off[a];
            const double w = wr[f * J + a];
            for (int r = 0; r < 3; ++r) at(oa + r, oa + r) += w, b[oa + r] += w * rp[(f * J + a) * 3 + r];
        }
        for (int64_t i = 0; i < N; ++i) at(i, i) += lam[f];
        // clamped joints: project their columns and rows onto the plane normal to the blocked
        // direction n (P = I - n n^T), then pin the motion along n to zero
        for (int64_t a = 0; a < J; ++a) {
            const double* nv = nrm + (f * J + a) * 3;
            const double nx = nv[0], ny = nv[1], nz = nv[2];
            if (nx * nx + ny * ny + nz * nz == 0.0) continue;
            const int64_t oa = off[a];
            for (int64_t r = 0; r < N; ++r) {
                const double s = at(r, oa) * nx + at(r, oa + 1) * ny + at(r, oa + 2) * nz;
                at(r, oa) -= s * nx, at(r, oa + 1) -= s * ny, at(r, oa + 2) -= s * nz;
            }
            for (int64_t c = 0; c < N; ++c) {
                const double s = at(oa, c) * nx + at(oa + 1, c) * ny + at(oa + 2, c) * nz;
                at(oa, c) -= s * nx, at(oa + 1, c) -= s * ny, at(oa + 2, c) -= s * nz;
            }
            const double s = b[oa] * nx + b[oa + 1] * ny + b[oa + 2] * nz;
            push[f * J + a] = s;
            b[oa] -= s * nx, b[oa + 1] -= s * ny, b[oa + 2] -= s * nz;
            const double n3[3] = {nx, ny, nz};
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) at(oa + r, oa + c) += n3[r] * n3[c];
        }
        for (int64_t i = 0; i < N; ++i)
            if (fr[i] == 0) {
                for (int64_t c = 0; c < N; ++c) at(i, c) = 0.0, at(c, i) = 0.0;
                at(i, i) = 1.0;
                b[i] = 0.0;
            }
        envelope_cholesky_solve(A, first, b, xv.data(), N);
        double* d = dx + f * N;
        for (int i = 0; i < 3; ++i) d[i] = fr[ot + i] ? xv[ot + i] : 0.0;
        for (int64_t a = 0; a < J; ++a)
            for (int r = 0; r < 3; ++r) d[3 + 3 * a + r] = fr[off[a] + r] ? xv[off[a] + r] : 0.0;
    }
}

}  // namespace jointlimits

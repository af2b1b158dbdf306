// Inverse kinematics: two-bone (geometric and the demo's), whole-body DLS steps, CCD.
#include "bind.hpp"
#include "jointlimits/ccd.hpp"
#include "jointlimits/two_bone.hpp"
#include "jointlimits/whole_body.hpp"

namespace jlbind {

namespace {
using I8 = nb::ndarray<int8_t, nb::c_contig, nb::device::cpu>;
using U8 = nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu>;
using BArr = nb::ndarray<const bool, nb::c_contig, nb::device::cpu>;
using OutB = nb::ndarray<bool, nb::c_contig, nb::device::cpu>;
using OutI = nb::ndarray<int64_t, nb::c_contig, nb::device::cpu>;
}  // namespace

jointlimits::ReachWindows reach_windows(const CArr& wn, const CArr& we1, const CArr& we2, const CArr& wc,
                                        const IArr& wvs, const CArr& verts, const CArr& eg);  // bind_reach.cpp

void bind_ik(nb::module_& m) {
    m.def(
        "two_bone",
        [](CArr A, CArr B, CArr C, CArr T, CArr pole, bool has_pole, CArr P, CArr LK, CArr LJ, Arr root_out,
           Arr mid_out, Arr knee_out, Arr foot_out, I8 case_out) {
            const int64_t n = A.shape(0);
            for (auto* a : {&A, &B, &C, &T}) check_shape(*a, "position", {n, 3});
            if (has_pole) check_shape(pole, "pole", {n, 3});
            for (auto* a : {&P, &LK, &LJ}) check_shape(*a, "rotation", {n, 4});
            check_shape(root_out, "root_out", {n, 4});
            check_shape(mid_out, "mid_out", {n, 4});
            check_shape(knee_out, "knee_out", {n, 3});
            check_shape(foot_out, "foot_out", {n, 3});
            check_shape(case_out, "case_out", {n});
            nb::gil_scoped_release nogil;
            parallel_rows(n, 20000, [&](int64_t lo, int64_t hi) {
                jointlimits::two_bone(A.data() + 3 * lo, B.data() + 3 * lo, C.data() + 3 * lo, T.data() + 3 * lo,
                                      has_pole ? pole.data() + 3 * lo : nullptr, P.data() + 4 * lo, LK.data() + 4 * lo,
                                      LJ.data() + 4 * lo, hi - lo, root_out.data() + 4 * lo, mid_out.data() + 4 * lo,
                                      knee_out.data() + 3 * lo, foot_out.data() + 3 * lo, case_out.data() + lo);
            });
        },
        "Geometric two-bone solve over n chains (flat rows) into the outputs.");
    m.def(
        "ik_two_bone",
        [](CArr A, CArr B, CArr C, CArr T, CArr FWD, CArr RG, CArr MG, CArr PG, double buf, Arr root_out, Arr mid_out,
           I8 bad) {
            const int64_t n = A.shape(0);
            for (auto* a : {&A, &B, &C, &T, &FWD}) check_shape(*a, "vector", {n, 3});
            for (auto* a : {&RG, &MG, &PG}) check_shape(*a, "rotation", {n, 4});
            check_shape(root_out, "root_out", {n, 4});
            check_shape(mid_out, "mid_out", {n, 4});
            check_shape(bad, "bad", {n});
            nb::gil_scoped_release nogil;
            parallel_rows(n, 20000, [&](int64_t lo, int64_t hi) {
                jointlimits::ik_two_bone(A.data() + 3 * lo, B.data() + 3 * lo, C.data() + 3 * lo, T.data() + 3 * lo,
                                         FWD.data() + 3 * lo, RG.data() + 4 * lo, MG.data() + 4 * lo, PG.data() + 4 * lo,
                                         buf, hi - lo, root_out.data() + 4 * lo, mid_out.data() + 4 * lo, bad.data() + lo);
            });
        },
        "The joint-limits demo's two-bone IK over n chains into the outputs.");
    m.def(
        "dls_normal_step",
        [](CArr gp, CArr tgt, CArr wp, CArr ro, CArr wo, CArr rp, CArr wr, CArr nrm, CArr lam, IArr chain,
           IArr chain_len, IArr off, IArr first, U8 free, Arr dx, Arr push) {
            const int64_t F = gp.shape(0), J = gp.shape(1), D = chain.shape(1), N = 3 + 3 * J;
            for (auto* a : {&gp, &tgt, &ro, &rp, &nrm}) check_shape(*a, "[F, J, 3] input", {F, J, 3});
            for (auto* a : {&wp, &wo, &wr}) check_shape(*a, "weights", {F, J});
            check_shape(lam, "lam", {F});
            check_shape(chain, "chain", {J, D});
            check_shape(chain_len, "chain_len", {J});
            check_shape(off, "off", {J});
            check_shape(first, "first", {N});
            check_shape(free, "free", {N});
            check_shape(dx, "dx", {F, N});
            check_shape(push, "push", {F, J});
            for (int64_t k = 0; k < J; ++k) {
                if (chain_len.data()[k] < 1 || chain_len.data()[k] > D || off.data()[k] < 0 || off.data()[k] + 3 > 3 * J)
                    throw std::invalid_argument("_core: corrupt chain table");
                for (int64_t i = 0; i < chain_len.data()[k]; ++i)
                    if (chain.data()[k * D + i] < 0 || chain.data()[k * D + i] >= J)
                        throw std::invalid_argument("_core: corrupt chain table");
            }
            for (int64_t i = 0; i < N; ++i)
                if (first.data()[i] < 0 || first.data()[i] > i) throw std::invalid_argument("_core: corrupt envelope");
            nb::gil_scoped_release nogil;
            jointlimits::dls_normal_step(gp.data(), tgt.data(), wp.data(), ro.data(), wo.data(), rp.data(), wr.data(),
                                         nrm.data(), lam.data(), chain.data(), chain_len.data(), D, off.data(),
                                         first.data(), free.data(), F, J, dx.data(), push.data());
        },
        "One damped least-squares step per pose (whole-body IK) into dx [F, 3 + 3J] and push [F, J].");
    m.def(
        "ccd_batch",
        [](CArr br, CArr bp, CArr off, CArr t, CArr tr, bool has_ori, CArr end_rot, CArr init, CArr starts,
           CArr start_eff, BArr has, CArr ref, CArr axis, CArr tmid, CArr thalf, IArr jw, CArr wn, CArr we1, CArr we2,
           CArr wc, IArr wvs, CArr verts, CArr eg, nb::list fitted, double tol, double ori_tol, double ori_weight,
           int64_t max_iter, int64_t max_restarts, int64_t stall_iters, double stall_ratio, Arr out, OutB success,
           OutI iters, Arr err, Arr oerr, OutI restarts) {
            const int64_t N = init.shape(0), n = init.shape(1), S = starts.shape(0);
            check_shape(init, "init", {N, n, 4});
            check_shape(br, "base_rotation", {N, 4});
            check_shape(bp, "base_position", {N, 3});
            check_shape(off, "offsets", {N, n + 1, 3});
            check_shape(t, "targets", {N, 3});
            check_shape(tr, "target_rotations", {N, 4});
            check_shape(end_rot, "end_rotation", {N, 4});
            check_shape(starts, "starts", {S, n, 4});
            check_shape(start_eff, "start_effectors", {S, 3});
            check_shape(has, "has", {n});
            check_shape(ref, "ref", {n, 4});
            check_shape(axis, "axis", {n, 3});
            check_shape(tmid, "tmid", {n});
            check_shape(thalf, "thalf", {n});
            check_shape(jw, "jw", {n + 1});
            check_shape(out, "out", {N, n, 4});
            for (auto* a : {&err, &oerr}) check_shape(*a, "err", {N});
            check_shape(success, "success", {N});
            check_shape(iters, "iters", {N});
            check_shape(restarts, "restarts", {N});
            if (static_cast<int64_t>(fitted.size()) != n) throw std::invalid_argument("_core: one fitted entry per joint");
            jointlimits::ChainLimits lim{{}, has.data(), ref.data(), axis.data(), tmid.data(), thalf.data(), jw.data(),
                                         reach_windows(wn, we1, we2, wc, wvs, verts, eg)};
            for (int64_t k = 0; k < n; ++k) {
                if (jw.data()[k] < 0 || jw.data()[k + 1] < jw.data()[k] || jw.data()[k + 1] > int64_t(wn.shape(0)))
                    throw std::invalid_argument("_core: corrupt joint window ranges");
                nb::handle h = fitted[k];
                lim.fitted.push_back(h.is_none() ? nullptr : &nb::cast<const jointlimits::PackedLimit&>(h));
            }
            const jointlimits::CCDOptions o{tol, ori_tol, ori_weight, max_iter, max_restarts, stall_iters, stall_ratio};
            nb::gil_scoped_release nogil;
            auto solve = [&](int64_t lo, int64_t hi) {
                for (int64_t k = lo; k < hi; ++k) {
                    const double* b = br.data() + 4 * k;
                    const double* p = bp.data() + 3 * k;
                    const double* e = end_rot.data() + 4 * k;
                    const jointlimits::CCDStats st = jointlimits::ccd_one(
                        {b[0], b[1], b[2], b[3]}, {p[0], p[1], p[2]}, off.data() + 3 * (n + 1) * k, t.data() + 3 * k,
                        tr.data() + 4 * k, has_ori, {e[0], e[1], e[2], e[3]}, init.data() + 4 * n * k, starts.data(),
                        start_eff.data(), S, n, lim, o, out.data() + 4 * n * k);
                    success.data()[k] = st.success;
                    iters.data()[k] = st.iters;
                    err.data()[k] = st.err;
                    oerr.data()[k] = st.oerr;
                    restarts.data()[k] = st.restarts;
                }
            };
            parallel_rows(N, 32, solve);  // independent chains: big batches over the cores
        },
        "CCD over N chains with limits and restarts into out [N, n, 4] and the per-chain statistics.");
}

}  // namespace jlbind

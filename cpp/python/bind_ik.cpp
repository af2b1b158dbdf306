// Inverse kinematics: two-bone (geometric and the demo's), whole-body DLS steps, CCD.
#include "bind.hpp"
#include "jointlimits/two_bone.hpp"
#include "jointlimits/whole_body.hpp"

namespace jlbind {

namespace {
using I8 = nb::ndarray<int8_t, nb::c_contig, nb::device::cpu>;
using U8 = nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu>;
}  // namespace

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
            jointlimits::two_bone(A.data(), B.data(), C.data(), T.data(), has_pole ? pole.data() : nullptr, P.data(),
                                  LK.data(), LJ.data(), n, root_out.data(), mid_out.data(), knee_out.data(),
                                  foot_out.data(), case_out.data());
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
            jointlimits::ik_two_bone(A.data(), B.data(), C.data(), T.data(), FWD.data(), RG.data(), MG.data(),
                                     PG.data(), buf, n, root_out.data(), mid_out.data(), bad.data());
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
}

}  // namespace jlbind

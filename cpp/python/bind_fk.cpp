#include "bind.hpp"
#include "jointlimits/fk.hpp"

namespace jlbind {

void bind_fk(nb::module_& m) {
    m.def(
        "forward_kinematics",
        [](CArr lr, CArr lp, IArr parents, Arr gr, Arr gp) {
            const int64_t n = lr.shape(0), J = lr.shape(1);
            check_shape(lr, "lr", {n, J, 4});
            check_shape(lp, "lp", {n, J, 3});
            check_shape(parents, "parents", {J});
            check_shape(gr, "gr", {n, J, 4});
            check_shape(gp, "gp", {n, J, 3});
            for (int64_t j = 1; j < J; ++j)
                if (parents.data()[j] < 0 || parents.data()[j] >= j)
                    throw std::invalid_argument("_core: parents must be listed before their children");
            nb::gil_scoped_release nogil;
            jointlimits::forward_kinematics(lr.data(), lp.data(), parents.data(), n, J, gr.data(), gp.data());
        },
        nb::arg("lr"), nb::arg("lp"), nb::arg("parents"), nb::arg("gr").noconvert(), nb::arg("gp").noconvert(),
        "Global rotations gr [n, J, 4] and positions gp [n, J, 3] from local ones (written in place).");
}

}  // namespace jlbind

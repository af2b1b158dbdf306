// jointlimits._core: the compiled kernels under the Python API (headers in cpp/include).
#include "bind.hpp"

NB_MODULE(_core, m) {
    m.doc() = "jointlimits' compiled core: C++17 kernels over whole batches (see cpp/include/jointlimits)";
    jlbind::bind_fk(m);
    jlbind::bind_limits(m);
    jlbind::bind_shapes(m);
    jlbind::bind_implicit(m);
    jlbind::bind_reach(m);
    jlbind::bind_springs(m);
    jlbind::bind_ik(m);
    jlbind::bind_io(m);
    jlbind::bind_quat(m);
}

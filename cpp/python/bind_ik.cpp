#include "bind.hpp"

namespace jlbind {

void bind_ik(nb::module_& m) { (void)m; }

}  // namespace jlbind

#include "bind.hpp"

namespace jlbind {

void bind_limits(nb::module_& m) { (void)m; }

}  // namespace jlbind

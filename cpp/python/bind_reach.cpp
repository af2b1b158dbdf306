#include "bind.hpp"

namespace jlbind {

void bind_reach(nb::module_& m) { (void)m; }

}  // namespace jlbind

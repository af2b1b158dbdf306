#include "bind.hpp"

namespace jlbind {

void bind_implicit(nb::module_& m) { (void)m; }

}  // namespace jlbind

#include "bind.hpp"

namespace jlbind {

void bind_shapes(nb::module_& m) { (void)m; }

}  // namespace jlbind

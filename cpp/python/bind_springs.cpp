#include "bind.hpp"

namespace jlbind {

void bind_springs(nb::module_& m) { (void)m; }

}  // namespace jlbind

#include "bind.hpp"

namespace jlbind {

void bind_io(nb::module_& m) { (void)m; }

}  // namespace jlbind

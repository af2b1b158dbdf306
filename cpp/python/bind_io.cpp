// File formats: BVH motion text.
#include "bind.hpp"
#include "jointlimits/bvh_text.hpp"

namespace jlbind {

void bind_io(nb::module_& m) {
    m.def(
        "format_fixed",
        [](CArr data, int64_t n_ch, nb::ndarray<uint8_t, nb::c_contig, nb::device::cpu> out) {
            if (n_ch <= 0) throw std::invalid_argument("_core: n_ch must be > 0");
            if (out.size() < data.size() * 42) throw std::invalid_argument("_core: out needs 42 bytes per value");
            nb::gil_scoped_release nogil;
            return jointlimits::format_fixed(data.data(), data.size(), static_cast<std::size_t>(n_ch),
                                             reinterpret_cast<char*>(out.data()));
        },
        nb::arg("data"), nb::arg("n_ch"), nb::arg("out").noconvert(),
        "BVH rows of exact short decimals into out; the bytes written, or -1 if a value is not one.");
}

}  // namespace jlbind

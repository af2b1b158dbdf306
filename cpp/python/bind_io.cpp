// File formats: BVH motion text.
#include "bind.hpp"
#include "jointlimits/bvh_text.hpp"

namespace jlbind {

void bind_io(nb::module_& m) {
    m.def(
        "format_rows",
        [](CArr data, int64_t n_ch, int min_dec, nb::bytes eol, nb::ndarray<uint8_t, nb::c_contig, nb::device::cpu> out) {
            if (n_ch <= 0) throw std::invalid_argument("_core: n_ch must be > 0");
            if (min_dec < 0 || min_dec > 20) throw std::invalid_argument("_core: min_dec must be in [0, 20]");
            const std::size_t el = eol.size();
            if (out.size() < data.size() * (jointlimits::kValueBytes + el) + 1)
                throw std::invalid_argument("_core: out too small");
            const std::string e(eol.c_str(), el);
            nb::gil_scoped_release nogil;
            return jointlimits::format_rows(data.data(), data.size(), static_cast<std::size_t>(n_ch), min_dec,
                                            e.data(), el, reinterpret_cast<char*>(out.data()));
        },
        nb::arg("data"), nb::arg("n_ch"), nb::arg("min_dec"), nb::arg("eol"), nb::arg("out").noconvert(),
        "Rows of shortest exact fixed-notation values (at least min_dec decimals) into out; the bytes written.");
    m.def(
        "merge_rows",
        [](nb::bytes src, nb::ndarray<const int64_t, nb::c_contig, nb::device::cpu> starts,
           nb::ndarray<const int64_t, nb::c_contig, nb::device::cpu> ends, int64_t n_ch,
           nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu> same, CArr data, int min_dec, nb::bytes eol,
           nb::ndarray<uint8_t, nb::c_contig, nb::device::cpu> out) {
            const std::size_t rows = starts.size();
            if (n_ch <= 0 || ends.size() != rows || same.size() != rows * n_ch || data.size() != rows * n_ch)
                throw std::invalid_argument("_core: merge_rows sizes disagree");
            if (min_dec < 0 || min_dec > 20) throw std::invalid_argument("_core: min_dec must be in [0, 20]");
            const auto n = static_cast<int64_t>(src.size());
            std::size_t need = rows * eol.size() + 1, changed = 0;
            for (std::size_t i = 0; i < rows; ++i) {
                if (starts.data()[i] < 0 || ends.data()[i] < starts.data()[i] || ends.data()[i] > n)
                    throw std::invalid_argument("_core: merge_rows row outside the source");
                need += static_cast<std::size_t>(ends.data()[i] - starts.data()[i]);
            }
            for (std::size_t k = 0; k < same.size(); ++k) changed += same.data()[k] == 0;
            if (out.size() < need + changed * jointlimits::kValueBytes) throw std::invalid_argument("_core: out too small");
            const std::string e(eol.c_str(), eol.size());
            const char* s = src.c_str();
            nb::gil_scoped_release nogil;
            return jointlimits::merge_rows(s, starts.data(), ends.data(), rows, static_cast<std::size_t>(n_ch),
                                           same.data(), data.data(), min_dec, e.data(), e.size(),
                                           reinterpret_cast<char*>(out.data()));
        },
        nb::arg("src"), nb::arg("starts"), nb::arg("ends"), nb::arg("n_ch"), nb::arg("same"), nb::arg("data"),
        nb::arg("min_dec"), nb::arg("eol"), nb::arg("out").noconvert(),
        "Source rows with their changed tokens replaced (same == 0) into out; the bytes written, or -1.");
    m.def(
        "parse_rows",
        [](nb::bytes src, int64_t n_ch, nb::ndarray<double, nb::c_contig, nb::device::cpu> out,
           nb::ndarray<int64_t, nb::c_contig, nb::device::cpu> ranges) {
            if (n_ch <= 0) throw std::invalid_argument("_core: n_ch must be > 0");
            const std::size_t max_rows = out.size() / static_cast<std::size_t>(n_ch);
            if (ranges.size() < 2 * max_rows) throw std::invalid_argument("_core: ranges too small");
            const char* s = src.c_str();
            const std::size_t n = src.size();
            nb::gil_scoped_release nogil;
            return jointlimits::parse_rows(s, n, static_cast<std::size_t>(n_ch), out.data(), ranges.data(), max_rows);
        },
        nb::arg("src"), nb::arg("n_ch"), nb::arg("out").noconvert(), nb::arg("ranges").noconvert(),
        "Rows of n_ch plain decimals (blank lines skipped) into out [rows, n_ch] and their byte ranges "
        "into ranges [rows, 2]; the rows parsed, or -1 at anything else (the checked path reports it).");
}

}  // namespace jlbind

// File formats: BVH motion text.
#include "bind.hpp"
#include <nanobind/stl/pair.h>

#include "jointlimits/bvh_load.hpp"
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
    m.def(
        "bvh_load_rows",
        [](nb::bytes src, int64_t n_ch, CArr offsets, IArr pos_col, IArr pos_dst, IArr rot_joint, IArr rot_col,
           IArr rot_axes, IArr extra_col, Arr positions, Arr rotations,
           nb::ndarray<uint64_t, nb::c_contig, nb::device::cpu> hashes,
           nb::ndarray<int64_t, nb::c_contig, nb::device::cpu> ranges, Arr extra, int64_t first, int64_t max_rows,
           int64_t base) {
            if (n_ch <= 0) throw std::invalid_argument("_core: n_ch must be > 0");
            if (offsets.size() % 3) throw std::invalid_argument("_core: offsets must be [J, 3]");
            const std::size_t J = offsets.size() / 3, nc = static_cast<std::size_t>(n_ch);
            const std::size_t n_rot = rot_joint.size(), n_extra = extra_col.size();
            if (pos_dst.size() != pos_col.size() || rot_col.size() != 3 * n_rot || rot_axes.size() != 3 * n_rot)
                throw std::invalid_argument("_core: bvh_load_rows plan sizes disagree");
            for (std::size_t k = 0; k < pos_col.size(); ++k)
                if (pos_col.data()[k] < 0 || pos_col.data()[k] >= n_ch || pos_dst.data()[k] < 0 ||
                    pos_dst.data()[k] >= static_cast<int64_t>(3 * J))
                    throw std::invalid_argument("_core: bvh_load_rows position plan out of range");
            for (std::size_t g = 0; g < n_rot; ++g) {
                if (rot_joint.data()[g] < 0 || rot_joint.data()[g] >= static_cast<int64_t>(J))
                    throw std::invalid_argument("_core: bvh_load_rows rotation joint out of range");
                const int64_t* a = rot_axes.data() + 3 * g;
                const int64_t* c = rot_col.data() + 3 * g;
                for (int t = 0; t < 3; ++t)
                    if (a[t] < 0 || a[t] > 2 || c[t] < 0 || c[t] >= n_ch)
                        throw std::invalid_argument("_core: bvh_load_rows rotation plan out of range");
                if (a[0] == a[1] || a[1] == a[2] || a[0] == a[2])
                    throw std::invalid_argument("_core: bvh_load_rows axes must be distinct");
            }
            for (std::size_t k = 0; k < n_extra; ++k)
                if (extra_col.data()[k] < 0 || extra_col.data()[k] >= n_ch)
                    throw std::invalid_argument("_core: bvh_load_rows extra column out of range");
            if (first < 0 || max_rows < 0) throw std::invalid_argument("_core: first and max_rows must be >= 0");
            const std::size_t stop = static_cast<std::size_t>(first + max_rows);
            if (positions.size() < stop * J * 3 || rotations.size() < stop * J * 4 || hashes.size() < stop * J ||
                ranges.size() < 2 * stop || extra.size() < stop * n_extra)
                throw std::invalid_argument("_core: bvh_load_rows outputs too small");
            const std::size_t f = static_cast<std::size_t>(first);
            jointlimits::BvhRowPlan plan;
            plan.n_ch = nc;
            plan.n_joints = J;
            plan.offsets = offsets.data();
            plan.pos_col = pos_col.data();
            plan.pos_dst = pos_dst.data();
            plan.n_pos = pos_col.size();
            plan.rot_joint = rot_joint.data();
            plan.rot_col = rot_col.data();
            plan.rot_axes = rot_axes.data();
            plan.n_rot = n_rot;
            plan.extra_col = extra_col.data();
            plan.n_extra = n_extra;
            const jointlimits::BvhRowOut out{positions.data() + f * J * 3, rotations.data() + f * J * 4,
                                             hashes.data() + f * J, ranges.data() + 2 * f,
                                             extra.data() + f * n_extra};
            const char* s = src.c_str();
            const std::size_t n = src.size();
            int64_t lines = 0, rows;
            {
                nb::gil_scoped_release nogil;
                rows = jointlimits::load_rows(s, n, plan, out, static_cast<std::size_t>(max_rows), base, &lines);
            }
            return std::make_pair(rows, lines);
        },
        nb::arg("src"), nb::arg("n_ch"), nb::arg("offsets"), nb::arg("pos_col"), nb::arg("pos_dst"),
        nb::arg("rot_joint"), nb::arg("rot_col"), nb::arg("rot_axes"), nb::arg("extra_col"),
        nb::arg("positions").noconvert(), nb::arg("rotations").noconvert(), nb::arg("hashes").noconvert(),
        nb::arg("ranges").noconvert(), nb::arg("extra").noconvert(), nb::arg("first"), nb::arg("max_rows"),
        nb::arg("base"),
        "BVH frame rows (plain decimals, blank lines skipped) straight into a clip's positions, rotations "
        "(three-axis Euler joints, degrees), fingerprints, row byte ranges (plus base) and extra columns, "
        "from row first on, at most max_rows rows: (rows written or -1, the block's line endings).");
}

}  // namespace jlbind

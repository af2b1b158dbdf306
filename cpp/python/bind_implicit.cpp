// Implicit-surface limits and coupled (parent-conditioned) blends.
#include "bind.hpp"
#include "jointlimits/implicit.hpp"

#include <limits>

namespace jlbind {

namespace {
using F32 = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using I32 = nb::ndarray<const int32_t, nb::c_contig, nb::device::cpu>;
using OutB = nb::ndarray<bool, nb::c_contig, nb::device::cpu>;
using OutI = nb::ndarray<int64_t, nb::c_contig, nb::device::cpu>;

/// The field arguments (F [K, nx, ny, nz] and optionally D, NEAR of the same shape) checked and wrapped.

jointlimits::ImplicitField field(const CArr& pos, const CArr& rot, const CArr& origin, double cell, const F32& F,
                                 const F32* D, const I32* NEAR, const F32& cmax) {
    check_shape(pos, "position", {3});
    check_shape(rot, "rotation", {3, 3});
    check_shape(origin, "origin", {3});
    if (F.ndim() != 4 || F.shape(1) < 2 || F.shape(2) < 2 || F.shape(3) < 2)
        throw std::invalid_argument("_core: the field must be [K, nx, ny, nz] with each extent >= 2");
    const int64_t K = F.shape(0), nx = F.shape(1), ny = F.shape(2), nz = F.shape(3);
    if (D) check_shape(*D, "D", {K, nx, ny, nz});
    if (NEAR) check_shape(*NEAR, "NEAR", {K, nx, ny, nz});
    jointlimits::validate_field(pos.data(), rot.data(), origin.data(), cell, K, nx, ny, nz);
    if (cmax.size() != 0) check_shape(cmax, "cell maxima", {nx - 1, ny - 1, nz - 1});
    return {F.data(), D ? D->data() : nullptr, NEAR ? NEAR->data() : nullptr, K, nx, ny, nz, pos.data(), rot.data(),
            origin.data(), cell, cmax.size() ? cmax.data() : nullptr};
}

/// Blend rows ids/ws [R, m] for n points (R = 1 or n), ids within the K fields.
void check_blend(const IArr& ids, const CArr& ws, int64_t n, int64_t K) {
    if (ids.ndim() != 2 || ws.ndim() != 2 || ids.shape(0) != ws.shape(0) || ids.shape(1) != ws.shape(1))
        throw std::invalid_argument("_core: blend ids and weights must be [R, m] alike");
    const int64_t R = ids.shape(0);
    if (!(R == 1 || R == n) || ids.shape(1) < 1 || ids.shape(1) > 62)
        throw std::invalid_argument("_core: blend rows must be 1 or one per point, 1..62 fields each");
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids.data()[i] < 0 || ids.data()[i] >= K) throw std::invalid_argument("_core: blend field index out of range");
}
}  // namespace

void bind_implicit(nb::module_& m) {
    m.def(
        "implicit_contains",
        [](CArr pts, CArr pos, CArr rot, CArr origin, double cell, double thr, F32 F, F32 cmax, IArr ids, CArr ws,
           double tol, OutB out) {
            const int64_t n = pts.shape(0);
            check_shape(pts, "points", {n, 3});
            check_shape(out, "out", {n});
            const auto S = field(pos, rot, origin, cell, F, nullptr, nullptr, cmax);
            check_blend(ids, ws, n, S.K);
            nb::gil_scoped_release nogil;
            jointlimits::implicit_contains(S, pts.data(), n, thr, ids.data(), ws.data(), ids.shape(0), ids.shape(1), tol,
                                           out.data());
        },
        "Inside test of limit-space points [n, 3] against a blended implicit field into out [n].");
    m.def(
        "implicit_field",
        [](CArr pts, CArr pos, CArr rot, CArr origin, double cell, F32 F, F32 cmax, IArr ids, CArr ws, Arr out) {
            const int64_t n = pts.shape(0);
            check_shape(pts, "points", {n, 3});
            check_shape(out, "out", {n, 4});
            const auto S = field(pos, rot, origin, cell, F, nullptr, nullptr, cmax);
            check_blend(ids, ws, n, S.K);
            nb::gil_scoped_release nogil;
            jointlimits::implicit_field(S, pts.data(), n, ids.data(), ws.data(), ids.shape(0), ids.shape(1), out.data());
        },
        "Field value and limit-space gradient [n, 4] of points [n, 3].");
    m.def(
        "implicit_project",
        [](CArr pts, CArr pos, CArr rot, CArr origin, double cell, double thr, F32 F, F32 cmax, F32 D, I32 NEAR, IArr ids,
           CArr ws, CArr normal, Arr out) {
            const int64_t n = pts.shape(0);
            check_shape(pts, "points", {n, 3});
            check_shape(out, "out", {n, 3});
            check_shape(normal, "normal", {3});
            const auto S = field(pos, rot, origin, cell, F, &D, &NEAR, cmax);
            check_blend(ids, ws, n, S.K);
            const int64_t total = S.nx * S.ny * S.nz;
            for (size_t i = 0; i < NEAR.size(); ++i)
                if (NEAR.data()[i] < 0 || NEAR.data()[i] >= total) throw std::invalid_argument("_core: corrupt NEAR table");
            nb::gil_scoped_release nogil;
            jointlimits::implicit_project(S, pts.data(), n, thr, ids.data(), ws.data(), ids.shape(0), ids.shape(1),
                                          normal.data(), out.data());
        },
        "Project limit-space points [n, 3] onto a blended implicit limit into out [n, 3].");
    m.def(
        "implicit_splat",
        [](IArr centres, double radius, Arr F) {
            const int64_t n = centres.shape(0);
            check_shape(centres, "centres", {n, 3});
            if (F.ndim() != 3) throw std::invalid_argument("_core: F must be [nx, ny, nz]");
            nb::gil_scoped_release nogil;
            jointlimits::implicit_splat(centres.data(), n, radius, F.data(), F.shape(0), F.shape(1), F.shape(2));
        },
        "Add a metaball of `radius` cells at each integer centre [n, 3] to F [nx, ny, nz], in place.");
    m.def(
        "implicit_lift_points",
        [](CArr g, double lift, Arr F) {
            const int64_t n = g.shape(0);
            check_shape(g, "g", {n, 3});
            if (F.ndim() != 3 || F.shape(0) < 2 || F.shape(1) < 2 || F.shape(2) < 2)
                throw std::invalid_argument("_core: F must be [nx, ny, nz], each >= 2");
            nb::gil_scoped_release nogil;
            return jointlimits::implicit_lift_points(g.data(), n, lift, F.data(), F.shape(0), F.shape(1), F.shape(2));
        },
        "Raise the corners of cells holding points below `lift` (in place); how many points were lifted.");
    m.def(
        "coupled_weights",
        [](CArr vp, CArr porigin, double pcell, IArr cells, OutI ids, Arr ws) {
            const int64_t n = vp.shape(0);
            check_shape(vp, "parent points", {n, 3});
            check_shape(porigin, "porigin", {3});
            if (cells.ndim() != 3) throw std::invalid_argument("_core: cells must be [nx, ny, nz]");
            check_shape(ids, "ids", {n, 8});
            check_shape(ws, "ws", {n, 8});
            // the field count is not known here: the blend's users check ids against it (check_blend)
            jointlimits::validate_coupled(porigin.data(), pcell, cells.data(), cells.shape(0), cells.shape(1),
                                          cells.shape(2), std::numeric_limits<int64_t>::max());
            nb::gil_scoped_release nogil;
            jointlimits::coupled_weights(vp.data(), n, porigin.data(), pcell, cells.data(), cells.shape(0),
                                         cells.shape(1), cells.shape(2), ids.data(), ws.data());
        },
        "Trilinear weights [n, 8] of the parent cells around parent limit-space points [n, 3].");
    m.def(
        "coupled_contains",
        [](CArr q, CArr ref, CArr pq, CArr pref, CArr porigin, double pcell, IArr cells, CArr pos, CArr rot,
           CArr origin, double cell, double thr, F32 F, F32 cmax, double tol, bool long_cover, OutB out) {
            const int64_t n = q.ndim() == 2 ? int64_t(q.shape(0)) : -1;
            check_shape(q, "rotations", {n, 4});
            check_shape(pq, "parent rotations", {n, 4});
            check_shape(ref, "reference", {4});
            check_shape(pref, "parent reference", {4});
            check_shape(porigin, "porigin", {3});
            check_shape(out, "out", {n});
            if (cells.ndim() != 3) throw std::invalid_argument("_core: cells must be [nx, ny, nz]");
            const auto S = field(pos, rot, origin, cell, F, nullptr, nullptr, cmax);
            jointlimits::validate_coupled(porigin.data(), pcell, cells.data(), cells.shape(0), cells.shape(1),
                                          cells.shape(2), S.K);
            jointlimits::require_finite(ref.data(), 4, 1e6, "reference");
            jointlimits::require_finite(pref.data(), 4, 1e6, "parent reference");
            nb::gil_scoped_release nogil;
            jointlimits::coupled_contains(S, q.data(), ref.data(), pq.data(), pref.data(), n, porigin.data(), pcell,
                                          cells.data(), cells.shape(0), cells.shape(1), cells.shape(2), thr, tol,
                                          long_cover, out.data());
        },
        "Inside test of child rotations [n, 4] for their parents' rotations [n, 4] against a coupled limit, in one "
        "pass (limit space, the parent cells' blend, the field at both covers when long_cover) into out [n].");
}

}  // namespace jlbind

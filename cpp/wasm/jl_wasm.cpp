// The C binding of the core for WebAssembly (Emscripten; scripts/build_wasm.py builds it): compiled
// shapes and limits, the limit step, swing-twist, two-bone, CCD, look-at and FK over flat double
// arrays in the module's memory. web/jointlimits.js wraps it as the documented JS API.
//
// Shapes and limits are "records": flat arrays of doubles the JS side writes from a limits file's
// "compiled" objects (src/jointlimits/limits/compiled.py):
//   shape:  code, f[16], nAxes, axes..., nMins, mins..., nMaxs, maxs..., nG, G..., nBnd, bnd...
//   limit:  mode, covers, ref[4], twist_axis[3], twist_lo, twist_hi, shape a, shape b
// Functions return 0 (or a handle > 0) on success and -1 on bad input; jl_error() says why.
#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jointlimits/ccd.hpp"
#include "jointlimits/fk.hpp"
#include "jointlimits/two_bone.hpp"

#if defined(__EMSCRIPTEN__)
#include <emscripten/emscripten.h>
#define JL_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define JL_EXPORT extern "C"
#endif

using namespace jointlimits;

namespace {

std::string g_error;
int g_next = 1;
std::map<int, std::unique_ptr<CompiledShape>> g_shapes;
std::map<int, std::unique_ptr<PoseLimits>> g_sets;

int fail(const std::string& msg) {
    g_error = msg;
    return -1;
}

/// Reads a record left to right; throws ShapeError past its end.
struct Reader {
    const double* p;
    int n, i = 0;
    double next() {
        if (i >= n) throw ShapeError("record too short");
        return p[i++];
    }
    int count() {
        const double c = next();
        if (!(c >= 0.0 && c <= 1e7) || c != std::floor(c)) throw ShapeError("bad array length in record");
        return static_cast<int>(c);
    }
    std::vector<double> array() {
        const int c = count();
        std::vector<double> v;
        v.reserve(c);
        for (int k = 0; k < c; ++k) v.push_back(next());
        return v;
    }
};

CompiledShape read_shape(Reader& r) {
    const double code = r.next();
    if (!(code >= 0.0 && code < kShapeKinds) || code != std::floor(code)) throw ShapeError("unknown compiled shape code");
    ShapeArrays a;
    for (int k = 0; k < 16; ++k) a.f[k] = r.next();
    a.axes = r.array(), a.mins = r.array(), a.maxs = r.array(), a.G = r.array(), a.bnd = r.array();
    return make_shape(static_cast<int>(code), a);
}

CompiledLimit read_limit(Reader& r) {
    CompiledLimit L;
    const double mode = r.next();
    if (mode != 0.0 && mode != 1.0 && mode != 2.0) throw ShapeError("unknown limit mode");
    L.mode = static_cast<int>(mode);
    L.covers = r.next() != 0.0;
    L.ref = {r.next(), r.next(), r.next(), r.next()};
    L.axis = {r.next(), r.next(), r.next()};
    L.tlo = r.next(), L.thi = r.next();
    L.a = read_shape(r);
    L.b = read_shape(r);
    L.validate();
    return L;
}

PoseLimits* set_of(int h) {
    auto it = g_sets.find(h);
    return it == g_sets.end() ? nullptr : it->second.get();
}

/// The limit of joint j in set s (nullptr if s is null or j has none).
const CompiledLimit* limit_of(const PoseLimits* s, int64_t j) {
    if (s == nullptr) return nullptr;
    for (std::size_t k = 0; k < s->joints.size(); ++k)
        if (s->joints[k] == j) return &s->limits[k];
    return nullptr;
}

bool finite(const double* p, std::size_t n) {
    double acc = 0.0;
    for (std::size_t i = 0; i < n; ++i) acc += p[i] - p[i];
    return acc == 0.0;
}

/// Parents before children, the root first (-1).
bool parents_ok(const int32_t* parents, int J) {
    if (J < 1 || parents[0] != -1) return false;
    for (int j = 1; j < J; ++j)
        if (parents[j] < 0 || parents[j] >= j) return false;
    return true;
}

void fk_pose(const double* lr, const double* lp, const int32_t* parents, int J, double* gr, double* gp) {
    std::vector<int64_t> p(parents, parents + J);
    forward_kinematics(lr, lp, p.data(), 1, J, gr, gp);
}

double qangle(const Quat& a, const Quat& b) {
    const Quat q = qmul(qconj(a), b);
    return 2.0 * std::atan2(std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z), std::abs(q.w));
}

}  // namespace

/// The message of the last failure.
JL_EXPORT const char* jl_error() { return g_error.c_str(); }

/// Number of compiled shape kinds (codes 0 .. n-1).
JL_EXPORT int jl_shape_kinds() { return kShapeKinds; }

/// A compiled shape from a shape record: its handle, or -1.
JL_EXPORT int jl_shape_new(const double* rec, int len) {
    try {
        Reader r{rec, len};
        auto s = std::make_unique<CompiledShape>(read_shape(r));
        g_shapes[g_next] = std::move(s);
        return g_next++;
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}

JL_EXPORT void jl_shape_free(int h) { g_shapes.erase(h); }

/// The name of a shape's kind ("box", "kdop", ...), or "" for a bad handle.
JL_EXPORT const char* jl_shape_name(int h) {
    auto it = g_shapes.find(h);
    return it == g_shapes.end() ? "" : shape_name(*it->second);
}

/// Closest points of shape h to n limit-space points p [n, 3] -> out [n, 3].
JL_EXPORT int jl_shape_project(int h, const double* p, int n, double* out) {
    auto it = g_shapes.find(h);
    if (it == g_shapes.end()) return fail("no such shape");
    std::visit(
        [&](const auto& s) {
            for (int i = 0; i < n; ++i) {
                const Vec3 v = s.project(Vec3{p[3 * i], p[3 * i + 1], p[3 * i + 2]});
                out[3 * i] = v.x, out[3 * i + 1] = v.y, out[3 * i + 2] = v.z;
            }
        },
        *it->second);
    return 0;
}

/// An empty limits set for a skeleton of J joints: its handle, or -1.
JL_EXPORT int jl_set_new(int J) {
    if (J < 1 || J > 100000) return fail("a skeleton has 1 to 100000 joints");
    auto s = std::make_unique<PoseLimits>();
    s->num_joints = J;
    g_sets[g_next] = std::move(s);
    return g_next++;
}

JL_EXPORT void jl_set_free(int h) { g_sets.erase(h); }

/// Adds joint j's limit (a limit record) to set h.
JL_EXPORT int jl_set_add(int h, int j, const double* rec, int len) {
    PoseLimits* s = set_of(h);
    if (s == nullptr) return fail("no such limits set");
    if (j < 0 || j >= s->num_joints) return fail("joint index out of range");
    if (limit_of(s, j) != nullptr) return fail("joint listed twice");
    try {
        Reader r{rec, len};
        CompiledLimit L = read_limit(r);
        s->joints.push_back(j);
        s->limits.push_back(std::move(L));
        return 0;
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}

/// Every limited joint of `frames` poses q [frames, J, 4] -> out (may equal q); softened with
/// (falloff, radius) when soft is nonzero.
JL_EXPORT int jl_set_project(int h, const double* q, int frames, double* out, int soft, double falloff, double radius) {
    const PoseLimits* s = set_of(h);
    if (s == nullptr) return fail("no such limits set");
    if (frames < 0) return fail("negative frame count");
    if (!s->project(q, static_cast<std::size_t>(frames), soft != 0, falloff, radius, out))
        return fail("rotations must be finite");
    return 0;
}

/// Joint j's limit step on n rotations q [n, 4] -> out [n, 4]: 1 if j has a limit, 0 if it has
/// none (out = q), -1 on error.
JL_EXPORT int jl_joint_project(int h, int j, const double* q, int n, double* out) {
    const PoseLimits* s = set_of(h);
    if (s == nullptr) return fail("no such limits set");
    if (!finite(q, 4 * static_cast<std::size_t>(n))) return fail("rotations must be finite");
    const CompiledLimit* L = limit_of(s, j);
    if (L == nullptr) {
        for (int i = 0; i < 4 * n; ++i) out[i] = q[i];
        return 0;
    }
    limit_step(*L, q, static_cast<std::size_t>(n), false, 0.0, 0.0, out, nullptr);
    return 1;
}

/// Swing and twist of n rotations q [n, 4] about the unit axis -> swing [n, 4], twist [n, 4].
JL_EXPORT int jl_swing_twist(const double* q, int n, const double* axis, double* swing, double* twist) {
    const Vec3 t{axis[0], axis[1], axis[2]};
    if (std::abs(t.x * t.x + t.y * t.y + t.z * t.z - 1.0) > 1e-6) return fail("twist axis must be a unit vector");
    for (int i = 0; i < n; ++i) {
        Quat sw, tw;
        swing_twist({q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]}, t, sw, tw);
        swing[4 * i] = sw.w, swing[4 * i + 1] = sw.x, swing[4 * i + 2] = sw.y, swing[4 * i + 3] = sw.z;
        twist[4 * i] = tw.w, twist[4 * i + 1] = tw.x, twist[4 * i + 2] = tw.y, twist[4 * i + 3] = tw.z;
    }
    return 0;
}

/// Forward kinematics of `frames` poses: local rotations lr [frames, J, 4] and offsets lp
/// [frames, J, 3] -> global gr, gp.
JL_EXPORT int jl_fk(const double* lr, const double* lp, const int32_t* parents, int frames, int J, double* gr, double* gp) {
    if (!parents_ok(parents, J)) return fail("parents must list the root first (-1) and every parent before its child");
    std::vector<int64_t> p(parents, parents + J);
    forward_kinematics(lr, lp, p.data(), frames, J, gr, gp);
    return 0;
}

/// Geometric two-bone solve of N chains (see two_bone.hpp): root, mid, end, target [N, 3], pole
/// [N, 3] or null, root's parent global rotation P [N, 4], local rotations of root and mid
/// [N, 4] -> new locals, knee and end positions [N, 3] and the case (0 reached, 1 too close, 2
/// too far, negative: a zero-length bone) as doubles.
JL_EXPORT int jl_two_bone(const double* A, const double* B, const double* C, const double* T, const double* POLE,
                          const double* P, const double* LK, const double* LJ, int N, double* root_out,
                          double* mid_out, double* knee_out, double* end_out, double* case_out) {
    std::vector<int8_t> cs(static_cast<std::size_t>(N > 0 ? N : 1));
    two_bone(A, B, C, T, POLE, P, LK, LJ, static_cast<std::size_t>(N), root_out, mid_out, knee_out, end_out, cs.data());
    for (int i = 0; i < N; ++i) case_out[i] = cs[i];
    return 0;
}

/// CCD on a chain of n joints (see ccd.hpp): base global rotation br [4] and position bp [3],
/// offsets off [n + 1, 3] (the end's last), target t [3], initial locals init [n, 4]; each chain
/// joint k limited by joint idx[k]'s limit in set h (h = 0: no limits). opts: tolerance,
/// max_iterations, stall_iterations, stall_ratio. Best locals -> out [n, 4]; stats: success,
/// iterations, error.
JL_EXPORT int jl_ccd(int h, const double* br, const double* bp, const double* off, int n, const int32_t* idx,
                     const double* t, const double* init, const double* opts, double* out, double* stats) {
    const PoseLimits* s = nullptr;
    if (h != 0 && (s = set_of(h)) == nullptr) return fail("no such limits set");
    if (n < 1) return fail("a CCD chain has at least one joint");
    ChainLimits lim;
    for (int k = 0; k < n; ++k) {
        lim.fitted.push_back(limit_of(s, idx[k]));
        lim.reach.push_back(nullptr);
    }
    const CCDOptions o{opts[0], 0.0, 1.0, static_cast<int64_t>(opts[1]), 0, static_cast<int64_t>(opts[2]), opts[3]};
    const CCDStats st = ccd_one({br[0], br[1], br[2], br[3]}, {bp[0], bp[1], bp[2]}, off, t, nullptr, false,
                                {1.0, 0.0, 0.0, 0.0}, init, nullptr, nullptr, 0, n, lim, o, out);
    stats[0] = st.success ? 1.0 : 0.0, stats[1] = static_cast<double>(st.iters), stats[2] = st.err;
    return 0;
}

/// Look-at over a chain (jointlimits.ik.look_at.look_at_chain, weights 1, one pose): chain idx
/// [n] (lowest first, the head last) of a skeleton of J joints with locals lr [J, 4], offsets lp
/// [J, 3] and parents; turns the head's local `fwd` axis toward target t [3], each chain joint
/// projected into its limit in set h (h = 0: free), lower joints first. New locals -> out [J, 4].
JL_EXPORT int jl_look_at(int h, const double* lr, const double* lp, const int32_t* parents, int J, const int32_t* idx,
                         int n, const double* t, const double* fwd, int iterations, int inner, double* out) {
    const PoseLimits* s = nullptr;
    if (h != 0 && (s = set_of(h)) == nullptr) return fail("no such limits set");
    if (!parents_ok(parents, J)) return fail("parents must list the root first (-1) and every parent before its child");
    if (n < 1) return fail("look-at chain is empty");
    for (int k = 0; k < n; ++k)
        if (idx[k] < 0 || idx[k] >= J) return fail("look-at chain: joint index out of range");
    const double fn = std::sqrt(fwd[0] * fwd[0] + fwd[1] * fwd[1] + fwd[2] * fwd[2]);
    if (!(fn > 1e-12)) return fail("forward axis has zero length");
    const Vec3 f{fwd[0] / fn, fwd[1] / fn, fwd[2] / fn};
    for (int i = 0; i < 4 * J; ++i) out[i] = lr[i];
    std::vector<double> gr(4 * J), gp(3 * J);
    const int head = idx[n - 1];
    for (int it = 0; it < (iterations > 1 ? iterations : 1); ++it) {
        for (int k = 0; k < n; ++k) {
            const int j = idx[k];
            const CompiledLimit* L = limit_of(s, j);
            for (int in = 0; in < inner; ++in) {
                fk_pose(out, lp, parents, J, gr.data(), gp.data());
                const Vec3 hp{gp[3 * head], gp[3 * head + 1], gp[3 * head + 2]};
                const double dist = std::sqrt((t[0] - hp.x) * (t[0] - hp.x) + (t[1] - hp.y) * (t[1] - hp.y) +
                                              (t[2] - hp.z) * (t[2] - hp.z));
                const Quat gh{gr[4 * head], gr[4 * head + 1], gr[4 * head + 2], gr[4 * head + 3]};
                const Vec3 d = qrotate(gh, f);
                const Vec3 gz{hp.x + dist * d.x, hp.y + dist * d.y, hp.z + dist * d.z};
                const double px = gp[3 * j], py = gp[3 * j + 1], pz = gp[3 * j + 2];
                const Quat R = tb::simple_rotation(gz.x - px, gz.y - py, gz.z - pz, t[0] - px, t[1] - py, t[2] - pz);
                const int pj = parents[j];
                const Quat par = pj < 0 ? Quat{1.0, 0.0, 0.0, 0.0} : Quat{gr[4 * pj], gr[4 * pj + 1], gr[4 * pj + 2], gr[4 * pj + 3]};
                const Quat g{gr[4 * j], gr[4 * j + 1], gr[4 * j + 2], gr[4 * j + 3]};
                Quat local = qmul(qconj(par), qmul(R, g));
                if (L != nullptr) {
                    double q[4] = {local.w, local.x, local.y, local.z}, o[4];
                    limit_step(*L, q, 1, false, 0.0, 0.0, o, nullptr);
                    local = {o[0], o[1], o[2], o[3]};
                }
                const double step = qangle({out[4 * j], out[4 * j + 1], out[4 * j + 2], out[4 * j + 3]}, local);
                out[4 * j] = local.w, out[4 * j + 1] = local.x, out[4 * j + 2] = local.y, out[4 * j + 3] = local.z;
                if (step < 1e-13) break;
            }
        }
    }
    return 0;
}

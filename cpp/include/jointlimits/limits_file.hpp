// Reading a limits file written by jointlimits (JointLimits.save) into the core's pose limits, for
// programs without Python (engines, DCC plugins). Uses nlohmann/json (Debian: nlohmann-json3-dev).
//
//   jointlimits::LimitsFile lf = jointlimits::read_limits_file("limits.json");
//   lf.limits.project(pose, 1, false, 0, 0, pose);   // one pose [J, 4] (w, x, y, z), in place
//
// Each joint entry's "compiled" object (src/jointlimits/limits/compiled.py) holds the arrays the
// step projects with, so results equal JointLimits.project's. Joints whose limit has no compiled
// form (implicit, coupled, reach windows) are refused unless disabled in the file.
#pragma once
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <string>
#include <vector>

#include "step.hpp"

namespace jointlimits {

/// A limits file: the skeleton's joint names (parents first) and the limits of its enabled joints.
struct LimitsFile {
    std::vector<std::string> names;
    std::vector<int64_t> parents;
    PoseLimits limits;

    /// Index of a joint by name (-1 if absent).
    int64_t index(const std::string& name) const {
        for (std::size_t j = 0; j < names.size(); ++j)
            if (names[j] == name) return static_cast<int64_t>(j);
        return -1;
    }
};

/// The largest limits file read (bytes), as the Python reader (jointlimits.limits.file).
constexpr std::size_t kMaxLimitsFileBytes = 32u * 1024u * 1024u;

/// Raised for a file that is missing, not a jointlimits limits file, or corrupt.
struct LimitsFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

namespace detail {

inline std::vector<double> numbers(const nlohmann::json& a, const std::string& what) {
    if (!a.is_array()) throw LimitsFileError(what + ": expected an array of numbers");
    std::vector<double> out;
    out.reserve(a.size());
    for (const auto& x : a) {
        if (!x.is_number()) throw LimitsFileError(what + ": expected numbers");
        const double v = x.get<double>();
        if (!std::isfinite(v)) throw LimitsFileError(what + ": values must be finite");
        out.push_back(v);
    }
    return out;
}

/// A small integer field (a code, mode or version): never a float cast to int (undefined past its range).
inline int small_int(const nlohmann::json& v, const std::string& what) {
    if (!v.is_number_integer()) throw LimitsFileError(what + ": expected an integer");
    const int64_t x = v.get<int64_t>();
    if (x < -1000000 || x > 1000000) throw LimitsFileError(what + ": out of range");
    return static_cast<int>(x);
}

/// A shape entry, validated by the shape itself (make_shape, as the Python binding builds them).
inline CompiledShape shape(const nlohmann::json& d, const std::string& what) {
    if (!d.is_object()) throw LimitsFileError(what + ": expected an object");
    ShapeArrays a;
    const std::vector<double> f = numbers(d.at("f"), what + ".f");
    if (f.size() != 16) throw LimitsFileError(what + ".f: expected 16 numbers");
    for (int i = 0; i < 16; ++i) a.f[i] = f[i];
    a.axes = numbers(d.at("axes"), what + ".axes");
    a.mins = numbers(d.at("mins"), what + ".mins");
    a.maxs = numbers(d.at("maxs"), what + ".maxs");
    a.G = numbers(d.at("G"), what + ".G");
    a.bnd = numbers(d.at("bnd"), what + ".bnd");
    try {
        return make_shape(small_int(d.at("code"), what + ".code"), a);
    } catch (const ShapeError& e) {
        throw LimitsFileError(what + ": " + e.what());
    }
}

inline CompiledLimit limit(const nlohmann::json& c, const std::string& what) {
    if (small_int(c.at("version"), what + ".version") != 1) throw LimitsFileError(what + ": unsupported compiled version");
    CompiledLimit L;
    L.mode = small_int(c.at("mode"), what + ".mode");
    L.covers = c.at("covers").get<bool>();
    const std::vector<double> r = numbers(c.at("reference"), what + ".reference");
    const std::vector<double> t = numbers(c.at("twist_axis"), what + ".twist_axis");
    const std::vector<double> tw = numbers(c.at("twist"), what + ".twist");
    if (r.size() != 4 || t.size() != 3 || tw.size() != 2) throw LimitsFileError(what + ": wrong sizes");
    L.ref = {r[0], r[1], r[2], r[3]};
    L.axis = {t[0], t[1], t[2]};
    L.tlo = tw[0], L.thi = tw[1];
    L.a = shape(c.at("a"), what + ".a");
    L.b = shape(c.at("b"), what + ".b");
    try {
        L.validate();
    } catch (const ShapeError& e) {
        throw LimitsFileError(what + ": " + e.what());
    }
    return L;
}

}  // namespace detail

/// Parse the text of a limits file.
inline LimitsFile parse_limits_file(const std::string& text) {
    LimitsFile lf;
    try {
        const nlohmann::json d = nlohmann::json::parse(text);
        if (!d.is_object() || d.value("schema", std::string()) != "jointlimits/limits")
            throw LimitsFileError("not a jointlimits limits file");
        const auto& sk = d.at("skeleton");
        lf.names = sk.at("names").get<std::vector<std::string>>();
        const auto& ps = sk.at("parents");
        if (!ps.is_array()) throw LimitsFileError("skeleton.parents: expected an array of integers");
        for (const auto& v : ps) lf.parents.push_back(detail::small_int(v, "skeleton.parents"));
        if (lf.parents.size() != lf.names.size()) throw LimitsFileError("skeleton: names and parents differ in length");
        if (lf.names.empty()) throw LimitsFileError("skeleton: no joints");
        for (std::size_t j = 0; j < lf.parents.size(); ++j)
            if (j == 0 ? lf.parents[0] != -1 : (lf.parents[j] < 0 || lf.parents[j] >= static_cast<int64_t>(j)))
                throw LimitsFileError("skeleton: parents must list the root first (-1) and every parent before its child");
        std::vector<bool> listed(lf.names.size(), false);
        lf.limits.num_joints = static_cast<int64_t>(lf.names.size());
        for (const auto& e : d.at("joints")) {
            const std::string name = e.at("name").get<std::string>();
            const int64_t j = lf.index(name);
            if (j < 0) throw LimitsFileError("joint '" + name + "' is not in the skeleton");
            if (listed[static_cast<std::size_t>(j)]) throw LimitsFileError("joint '" + name + "' is listed twice");
            listed[static_cast<std::size_t>(j)] = true;
            if (!e.at("enabled").get<bool>()) continue;
            if (!e.contains("compiled"))
                throw LimitsFileError("joint '" + name + "': its limit kind has no compiled form (disable it to skip)");
            lf.limits.joints.push_back(j);
            lf.limits.limits.push_back(detail::limit(e.at("compiled"), "joint '" + name + "'"));
        }
    } catch (const nlohmann::json::exception& e) {
        throw LimitsFileError(std::string("corrupt limits file: ") + e.what());
    }
    return lf;
}

/// Read a limits file from disk (LimitsFileError if missing, not a regular file, over
/// kMaxLimitsFileBytes, or corrupt): a FIFO would block and /dev/zero never end.
inline LimitsFile read_limits_file(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) throw LimitsFileError(path + ": cannot read limits file");
    if (!S_ISREG(st.st_mode)) throw LimitsFileError(path + ": not a regular file");
    if (static_cast<std::size_t>(st.st_size) > kMaxLimitsFileBytes)
        throw LimitsFileError(path + ": larger than " + std::to_string(kMaxLimitsFileBytes) + " bytes");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw LimitsFileError(path + ": cannot read limits file");
    std::ostringstream ss;
    ss << in.rdbuf();
    try {
        return parse_limits_file(ss.str());
    } catch (const LimitsFileError& e) {
        throw LimitsFileError(path + ": " + e.what());
    }
}

}  // namespace jointlimits

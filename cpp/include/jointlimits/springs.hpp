// Springs: the exact spring-damper (stable closed form and the reference's approximations),
// tracking-spring updates (lerp gains and half-lives) and the lerp tracking recursion in error
// form. Ports of jointlimits.springs' numpy formulas, element by element.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace jointlimits {

constexpr double kLn2 = 0.69314718056;  // the reference's digits

/// A broadcast input: element i is p[i * inc] (inc 0 for a scalar).
struct Src {
    const double* p;
    std::size_t inc;
    double operator[](std::size_t i) const { return p[i * inc]; }
};

inline double fast_negexp(double x) { return 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x); }

inline double fast_atan(double x) {
    const double z = std::abs(x);
    const bool big = z > 1.0;
    const double w = big ? 1.0 / z : z;
    const double y = (3.141592653589793 / 4.0) * w - w * (w - 1.0) * (0.2447 + 0.0663 * w);
    return std::copysign(big ? 3.141592653589793 / 2.0 - y : y, x);
}

namespace detail {
/// (1 - exp(-z)) / z with the limit 1 at z = 0.
inline double phi(double z) { return std::abs(z) < 1e-12 ? 1.0 - 0.5 * z : -std::expm1(-z) / z; }
/// numpy's sinc(x) = sin(pi x) / (pi x).
inline double np_sinc(double x) {
    const double y = 3.141592653589793 * (x == 0.0 ? 1.0e-20 : x);
    return std::sin(y) / y;
}
}  // namespace detail

/// Closed-form step of x'' = s (g - x) + d (q - v) over t, stable in every regime (s = 0 allowed).
inline void spring_exact(double x, double v, double g, double q, double s, double d, double t, double& xo,
                         double& vo) {
    constexpr double kTinyStiffness = 1e-12;
    if (!(s > kTinyStiffness)) {
        xo = x + q * t + (v - q) * t * detail::phi(d * t);
        vo = q + (v - q) * std::exp(-d * t);
        return;
    }
    const double y = 0.5 * d;
    const double k = s - y * y;
    double ec, es;
    if (k > 0.0) {
        const double w = std::sqrt(k);
        const double ey = std::exp(-y * t);
        ec = ey * std::cos(w * t);
        es = ey * t * detail::np_sinc(w * t / 3.141592653589793);
    } else {
        const double u = std::sqrt(-k);
        const double ypu = y + u;
        const double ymu = ypu > 0.0 ? s / ypu : 0.0;
        const double eslow = std::exp(-ymu * t);
        ec = eslow * 0.5 * (1.0 + std::exp(-2.0 * u * t));
        es = eslow * t * detail::phi(2.0 * u * t);
    }
    const double c = g + d * q / s;
    const double j0 = x - c;
    const double j1 = v + y * j0;
    xo = c + j0 * ec + j1 * es;
    vo = v * ec - (y * j1 + k * j0) * es;
}

/// The reference's spring_damper_exact (fast_negexp, fast_atan, eps terms), per element.
inline void spring_reference(double x, double v, double g, double q, double s, double d, double t, double eps,
                             double& xo, double& vo) {
    const double c = g + (d * q) / (s + eps);
    const double y = 0.5 * d;
    const double k = s - (d * d) / 4.0;
    const double xc = x - c;
    if (std::abs(k) < eps) {
        const double ey = fast_negexp(y * t);
        const double j1 = v + xc * y;
        xo = xc * ey + t * j1 * ey + c;
        vo = -y * xc * ey - y * t * j1 * ey + j1 * ey;
    } else if (k > 0.0) {
        const double ey = fast_negexp(y * t);
        const double w = std::sqrt(k);
        double amp = std::sqrt((v + y * xc) * (v + y * xc) / (w * w + eps) + xc * xc);
        const double ph = fast_atan((v + xc * y) / (-xc * w + eps));
        amp = xc > 0.0 ? amp : -amp;
        const double cs = std::cos(w * t + ph), sn = std::sin(w * t + ph);
        xo = amp * ey * cs + c;
        vo = -y * amp * ey * cs - w * amp * ey * sn;
    } else if (k < 0.0) {
        const double r = std::sqrt(d * d - 4.0 * s);
        const double y0 = (d + r) / 2.0, y1 = (d - r) / 2.0;
        const double j1 = (c * y0 - x * y0 - v) / (y1 - y0);
        const double j0 = x - j1 - c;
        const double e0 = fast_negexp(y0 * t), e1 = fast_negexp(y1 * t);
        xo = j0 * e0 + j1 * e1 + c;
        vo = -y0 * j0 * e0 - y1 * j1 * e1;
    } else {
        xo = x;
        vo = v;
    }
}

/// Batched spring_damper_exact over n broadcast elements. Returns false (outputs unspecified) if an
/// input is not finite, s or d < 0 or t <= 0: the caller then reports which.
inline bool spring_damper_exact(Src x, Src v, Src g, Src q, Src s, Src d, Src t, std::size_t n, bool approx,
                                double eps, double* xo, double* vo) {
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
        const double xi = x[i], vi = v[i], gi = g[i], qi = q[i], si = s[i], di = d[i], ti = t[i];
        ok &= std::isfinite(xi) & std::isfinite(vi) & std::isfinite(gi) & std::isfinite(qi) & std::isfinite(si) &
              std::isfinite(di) & std::isfinite(ti) & (si >= 0.0) & (di >= 0.0) & (ti > 0.0);
        if (approx)
            spring_reference(xi, vi, gi, qi, si, di, ti, eps, xo[i], vo[i]);
        else
            spring_exact(xi, vi, gi, qi, si, di, ti, xo[i], vo[i]);
    }
    return ok;
}

/// One tracking-spring step: v <- lerp(v, v + a_goal dt, a_gain) (if has_a); v <- lerp(v, v_goal,
/// v_gain) (if has_v); v <- lerp(v, (x_goal - x)/dt, x_gain); x += dt v. With halflives the gains
/// are halflife_to_gain(h, dt) = 1 - exp(-ln2 dt / (h + 1e-5)) (fast_negexp when approx).
/// Returns false if an input is not finite, dt <= 0, a gain is outside [0, 1] or a half-life < 0.
inline bool tracking_update(Src x, Src v, Src xg, Src vg, Src ag, Src xgain, Src vgain, Src again, Src dt,
                            std::size_t n, bool has_v, bool has_a, bool halflives, bool approx, double* xo,
                            double* vo) {
    bool ok = true;
    auto gain = [&](double h, double t) {
        if (!halflives) {  // lerp gains are taken as given (any finite weight)
            ok &= std::isfinite(h);
            return h;
        }
        ok &= std::isfinite(h) & (h >= 0.0);
        const double z = (kLn2 * t) / (h + 1e-5);
        return 1.0 - (approx ? fast_negexp(z) : std::exp(-z));
    };
    auto lerp = [](double a, double b, double w) { return (1.0 - w) * a + w * b; };
    for (std::size_t i = 0; i < n; ++i) {
        const double xi = x[i], t = dt[i];
        double vi = v[i];
        ok &= std::isfinite(xi) & std::isfinite(vi) & std::isfinite(t) & (t > 0.0) & std::isfinite(xg[i]);
        if (has_a) {
            const double a = ag[i];
            ok &= std::isfinite(a);
            vi = lerp(vi, vi + a * t, gain(again[i], t));
        }
        if (has_v) {
            ok &= std::isfinite(vg[i]);
            vi = lerp(vi, vg[i], gain(vgain[i], t));
        }
        vi = lerp(vi, (xg[i] - xi) / t, gain(xgain[i], t));
        xo[i] = xi + t * vi;
        vo[i] = vi;
    }
    return ok;
}

/// One dt-invariant tracking step (the seed's appendix): spring_exact with s = xg / gdt^2,
/// d = (1 - (1 - vg)(1 - xg)) / gdt and velocity goal (vg (1 - xg) / gdt v_goal + ag (1 - vg)(1 - xg)
/// a_goal) / d. has_v / has_a drop the velocity / acceleration terms (vg = 0 without has_v).
/// Returns false if an input is not finite, dt or gdt <= 0, or a gain is outside [0, 1].
inline bool tracking_update_exact(Src x, Src v, Src xg, Src vg, Src ag, Src xgain, Src vgain, Src again, Src dt,
                                  Src gdt, std::size_t n, bool has_v, bool has_a, bool approx, double eps,
                                  double* xo, double* vo) {
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
        const double kx = xgain[i], kv = has_v ? vgain[i] : 0.0, ka = has_a ? again[i] : 0.0;
        const double h = gdt[i], t = dt[i], xi = x[i], vi = v[i], gi = xg[i];
        const double vgi = has_v ? vg[i] : 0.0, agi = has_a ? ag[i] : 0.0;
        ok &= std::isfinite(xi) & std::isfinite(vi) & std::isfinite(gi) & std::isfinite(vgi) & std::isfinite(agi) &
              std::isfinite(h) & std::isfinite(t) & (h > 0.0) & (t > 0.0) & (kx >= 0.0) & (kx <= 1.0) &
              (kv >= 0.0) & (kv <= 1.0) & (ka >= 0.0) & (ka <= 1.0);
        const double t0 = (1.0 - kv) * (1.0 - kx);
        const double t2 = (kv * (1.0 - kx)) / h;
        const double s = kx / (h * h);
        const double d = (1.0 - t0) / h;
        double force = has_v ? t2 * vgi : 0.0;
        if (has_a) force = force + ka * (1.0 - kv) * (1.0 - kx) * agi;
        const double q = d > 0.0 ? force / d : 0.0;
        if (approx)
            spring_reference(xi, vi, gi, q, s, d, t, eps, xo[i], vo[i]);
        else
            spring_exact(xi, vi, gi, q, s, d, t, xo[i], vo[i]);
    }
    return ok;
}

/// The lerp tracking recursion in error form over vt [T, C] (see jointlimits.springs.track_errors),
/// a frame at a time over all channels (rows stay in cache and the channel loop vectorises).
inline void track_errors(const double* e0, const double* ev0, const double* vt, const double* adt, bool use_adt,
                         const int8_t* modes, const double* xg, const double* vg, const double* ag, const double* dt,
                         double v_max, double a_max, double snap, std::size_t T, std::size_t C, double* out_e,
                         double* out_ev) {
    for (std::size_t i = 0; i < T; ++i) {
        const double h = dt[i], kx = xg[i], kv = vg[i], ka = ag[i], lim = a_max * h;
        const int m = modes[i];
        const double* vrow = vt + i * C;
        const double* vprev = i ? vt + (i - 1) * C : nullptr;
        const double* arow = use_adt ? adt + i * C : nullptr;
        const double* e_in = i ? out_e + (i - 1) * C : e0;
        const double* ev_in = i ? out_ev + (i - 1) * C : ev0;
        double* e_out = out_e + i * C;
        double* ev_out = out_ev + i * C;
        for (std::size_t c = 0; c < C; ++c) {
            const double vti = vrow[c];
            const double dv = vti - (vprev ? vprev[c] : 0.0);
            const double e = e_in[c], ev = ev_in[c];
            double ev_pre;
            if (m == 2) {
                double a = arow ? arow[c] : dv;
                a = a > lim ? lim : (a < -lim ? -lim : a);
                ev_pre = ev + (ka * a - dv);
            } else {
                ev_pre = ev - dv;
            }
            double ev1 = ev_pre;
            if (m >= 1) {
                const double vc = vti > v_max ? v_max : (vti < -v_max ? -v_max : vti);
                ev1 = ev_pre + kv * ((vc - vti) - ev_pre);
            }
            double ev2 = ev1 + kx * (-e / h - ev1);
            double e2 = e + h * ev2;
            if (snap > 0.0 && std::abs(e2) < snap && std::abs(ev2) * h < snap) e2 = 0.0, ev2 = 0.0;
            e_out[c] = e2;
            ev_out[c] = ev2;
        }
    }
}

}  // namespace jointlimits

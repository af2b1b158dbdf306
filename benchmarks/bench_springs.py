"""Springs and tracking filters (jointlimits.cleanup.springs / .tracking) against the reference C++.

    python -m benchmarks.bench_springs [--quick]

ns per channel-update of the one-step spring functions on independent channels: float64 with new
arrays against the reference -O3 (full mode also -O2), then float32 with out= (like for like) against
the reference -O3 on the same float32 values, with the largest difference of our approximations
from the reference; the whole-signal kernel; and the seconds needed to filter a 5,000-frame,
22-joint clip (a real LAFAN1 clip from ../shared when present, else a synthetic one).
Full: 1e6 channels, 7-9 interleaved rounds, 600 x 1e4 signal; quick: 1e5 channels, 5 rounds,
600 x 1e3 signal, filter best of 2.
"""

from __future__ import annotations

import numpy as np

from . import _compat as C
from ._common import LAFAN, main_single, record, refbench, refbench_missing, skipped
from ._timing import best, clock

BENCH = "springs"
CLIP = LAFAN / "walk4_subject1.bvh"
REF = "refbench C++ -O3, same run"


def _ours(S, x, v, g, vg, ag, s, d, dt, dh, sc, sf, out=None):
    kw = {} if out is None else {"out": out}
    return {
        "simple_spring_damper_exact": lambda ap: S.spring_damper_exact(x, v, g, 0.0, sc, dh, dt, approx=ap, **kw),
        "critical_spring_damper_exact": lambda ap: S.spring_damper_exact(x, v, g, vg, sc, dh, dt, approx=ap, **kw),
        "spring_damper_exact (frequency, halflife)": lambda ap: S.spring_damper_exact(
            x, v, g, vg, sf, dh, dt, approx=ap, **kw
        ),
        "spring_damper_exact (mixed regimes)": lambda ap: S.spring_damper_exact(x, v, g, vg, s, d, dt, approx=ap, **kw),
        "tracking_spring_update": lambda ap: S.tracking_spring_update(x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, **kw),
        "tracking_spring_update_improved": lambda ap: S.tracking_spring_update_improved(
            x, v, g, vg, ag, 1.0, 0.05, 0.0, dt, approx=ap, **kw
        ),
        "tracking_spring_update_exact": lambda ap: S.tracking_spring_update_exact(
            x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, dt, approx=ap, **kw
        ),
    }


def _refs(rb, var, x, v, g, vg, ag, s, d, dt, hl, freq):
    return {
        "simple_spring_damper_exact": rb.simple_spring_damper_exact.bind(x, v, g, hl, dt, variant=var),
        "critical_spring_damper_exact": rb.critical_spring_damper_exact.bind(x, v, g, vg, hl, dt, variant=var),
        "spring_damper_exact (frequency, halflife)": rb.spring_damper_exact.bind(
            x, v, g, vg, freq, hl, dt, variant=var
        ),
        "spring_damper_exact (mixed regimes)": rb.spring_damper_exact_stiffness_damping.bind(
            x, v, g, vg, s, d, dt, variant=var
        ),
        "tracking_spring_update": rb.tracking_spring_update.bind(x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, variant=var),
        "tracking_spring_update_improved": rb.tracking_spring_update_improved.bind(
            x, v, g, vg, ag, 1.0, 0.05, 0.0, dt, variant=var
        ),
        "tracking_spring_update_exact": rb.tracking_spring_update_exact.bind(
            x, v, g, vg, ag, 0.01, 0.2, 1.0, dt, dt, variant=var
        ),
    }


def bench_updates(quick: bool) -> list[dict]:
    """One step on n independent channels per spring family: ours (float64, exact and the
    reference's approximations) against the reference C++ (float32), same inputs, same run."""
    S = C.mod("cleanup.springs")
    n = 100_000 if quick else 1_000_000
    repeat = 5 if quick else 7
    rng = np.random.default_rng(0)
    x, v, g, vg, ag = (rng.normal(size=n) for _ in range(5))
    # mixed regimes per channel: a third each under-, critically and over-damped
    d = rng.uniform(1, 40, n)
    s = (d * d / 4) * rng.choice([0.25, 1.0, 4.0], n)
    dt, hl, freq = 1 / 60, 0.1, 2.0
    dh = float(S.halflife_to_damping(hl))
    sf = float(S.frequency_to_stiffness(freq))
    ours = _ours(S, x, v, g, vg, ag, s, d, dt, dh, dh * dh / 4, sf)
    rb = refbench()
    refs = (
        {var: _refs(rb, var, x, v, g, vg, ag, s, d, dt, hl, freq) for var in (("O3",) if quick else ("O2", "O3"))}
        if rb is not None
        else {}
    )
    data = f"{n:.0e} channels, float64 inputs, new arrays; median of {repeat} interleaved rounds"
    recs = [] if rb is not None else [skipped(BENCH, "reference C++ columns", refbench_missing())]
    for name, fn in ours.items():
        cases = {"exact": lambda fn=fn: fn(False), "approx": lambda fn=fn: fn(True)}
        for var in refs:
            cases[var] = refs[var][name]
        if rb is not None:
            t = rb.compare(cases, reps=1, repeat=repeat, timer=clock)
        else:
            t = {k: best(c, 5) for k, c in cases.items()}
        ns = {k: t[k] / n * 1e9 for k in t}
        extra = {"ref_O2": ns["O2"]} if "O2" in ns else {}
        for k in ("exact", "approx"):
            recs.append(
                record(
                    BENCH,
                    f"{name} float64 {k}",
                    ns[k],
                    "ns/update",
                    data=data,
                    anchor=REF if "O3" in ns else None,
                    anchor_value=ns.get("O3"),
                    **extra,
                )
            )
    if rb is not None:
        recs += bench_updates_f32(rb, S, x, v, g, vg, ag, s, d, dt, hl, freq, 5 if quick else 9)
    # whole-signal kernel (error form): 600 frames x 1e4 channels (1e3 quick)
    T, Cn = 600, 1_000 if quick else 10_000
    goal = np.cumsum(rng.normal(size=(T, Cn)), axis=0)
    t = best(lambda: S.track_signal(goal, 1 / 60, method="improved", cuts=[150, 300]), 3)
    recs.append(
        record(
            BENCH,
            "track_signal improved",
            T * Cn / t / 1e6,
            "M updates/s",
            kind="rate",
            data=f"{T} frames x {Cn:,} channels, cuts at 150 and 300; best of 3",
        )
    )
    return recs


def bench_updates_f32(rb, S, x, v, g, vg, ag, s, d, dt: float, hl: float, freq: float, repeat: int) -> list[dict]:
    """The reference's conditions: float32 inputs (the values the reference gets) and outputs written
    into preallocated arrays (out=), against the reference -O3 on the same values, same run."""
    n = len(x)
    f32 = np.float32
    x, v, g, vg, ag, s, d = (np.asarray(a, f32) for a in (x, v, g, vg, ag, s, d))
    out = (np.empty(n, f32), np.empty(n, f32))
    dh = f32(S.halflife_to_damping(hl))
    sc = dh * dh / f32(4)  # critical in float32 arithmetic too (s - d^2/4 == 0)
    sf = f32(S.frequency_to_stiffness(freq))
    ours = _ours(S, x, v, g, vg, ag, s, d, dt, dh, sc, sf, out=out)
    refs = _refs(rb, "O3", x, v, g, vg, ag, s, d, dt, hl, freq)
    data = f"{n:.0e} channels, float32 inputs, out= (like for like); median of {repeat} interleaved rounds"
    recs = []
    for name, fn in ours.items():
        cases = {"exact": lambda fn=fn: fn(False), "approx": lambda fn=fn: fn(True), "O3": refs[name]}
        t = rb.compare(cases, reps=1, repeat=repeat, timer=clock)
        ns = {k: t[k] / n * 1e9 for k in t}
        xa, va = (a.copy() for a in fn(True))
        xr, vr = refs[name].run()
        diff = max(float(np.max(np.abs(xa - xr))), float(np.max(np.abs(va - vr))))
        for k in ("exact", "approx"):
            recs.append(
                record(
                    BENCH, f"{name} float32 out= {k}", ns[k], "ns/update", data=data, anchor=REF, anchor_value=ns["O3"]
                )
            )
        recs.append(
            record(BENCH, f"{name} float32 approx: max |ours - reference|", diff, "", kind="quality", data=data)
        )
    return recs


def load_clip(frames: int = 5000):
    sk_mod, quat = C.mod("motion.skeleton"), C.mod("motion.quat")
    if CLIP.exists():
        m = C.mod("io.bvh").load(CLIP)
        reps = int(np.ceil(frames / m.num_frames))
        rot = np.concatenate([m.rotations] * reps)[:frames]
        pos = np.concatenate([m.positions] * reps)[:frames]
        return sk_mod.Motion(m.skeleton, rot, pos, m.frame_time), f"lafan1/{CLIP.name} looped to {frames} frames"
    J = 22
    rng = np.random.default_rng(1)
    sk = sk_mod.Skeleton([f"j{k}" for k in range(J)], np.arange(-1, J - 1), rng.normal(size=(J, 3)))
    t = np.arange(frames) / 30
    rot = quat.from_scaled_angle_axis(0.5 * np.sin(t[:, None, None] + rng.uniform(0, 6, (1, J, 3))))
    pos = np.repeat(sk.offsets[None], frames, 0)
    pos[:, 0] += t[:, None]
    return sk_mod.Motion(sk, rot, pos, 1 / 30), "synthetic 22-joint clip (../shared not found)"


def bench_filter(quick: bool) -> list[dict]:
    TR, quat = C.mod("cleanup.tracking"), C.mod("motion.quat")
    m, label = load_clip()
    cuts = [1000, 2500, 4000]
    popped = m.copy()
    popped.rotations[2500:] = quat.mul(quat.from_scaled_angle_axis([0.0, 0.7, 0.0]), popped.rotations[2500:])
    repeat = 2 if quick else 5
    data = f"{m.num_frames} frames x {m.num_joints} joints, {label}, a pop at frame 2500; best of {repeat}"
    recs = []
    for name, fn in {
        "cuts=[1000, 2500, 4000]": lambda: TR.filter_motion(popped, cuts=cuts),
        "detect=True": lambda: TR.filter_motion(popped, detect=True),
        "clipping (v_max, a_max)": lambda: TR.filter_motion(popped, v_max=10.0, a_max=300.0),
    }.items():
        recs.append(record(BENCH, f"filter_motion {name}", best(fn, repeat), "s", data=data, target=0.5))
    return recs


def run(quick: bool) -> list[dict]:
    return bench_updates(quick) + bench_filter(quick)


if __name__ == "__main__":
    main_single(BENCH, run)

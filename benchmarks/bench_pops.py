"""Pop detector on the shared clips: injected pops (recall, precision) and clean clips (false cuts).

The injection below is the independent definition of a pop (it does not use the detector's
quantities). Kinds, each starting at a random frame ``s`` on a random joint:

* ``rot``: the joint's local rotation turned by ``angle`` about a random axis for ``k`` frames
  (1-10), then back: events at ``s`` and ``s + k``;
* ``step``: the same turn kept to the end of the clip (a jump, e.g. a bad splice): event ``s``;
* ``flip``: turned 180 degrees about its bone (a solver flipping to the other cover of a twist)
  for ``k`` frames: events ``s``, ``s + k``;
* ``root``: the root moved by ``cm`` centimetres for ``k`` frames (or kept to the end, ``root-step``);
* ``sign``: ``q -> -q`` for ``k`` frames: the same rotations, so *not* a pop; any cut near it is a
  false cut (the detector must not care about the quaternion cover).

A cut is correct if it lies within ``WINDOW`` frames of an event. A pop is *found* when every one
of its events has a cut within the window (start and end for bursts). Pops are injected one per
300 frames (at least one per clip), 40+ frames apart, ``REPEATS`` times per clip.

Clean clips: every cut on the uninjected clips counts as false, reported per 10,000 frames; the
records list them (frame, joint, change) so that real glitches in the data can be told apart.

Tuning split: the detector's defaults were tuned on TUNING (LAFAN1 subject 1, Bandai Namco dataset-1,
CMU MotionBuilder); figures are given for the tuning clips, the held-out clips (other conventions:
Adelaide, CMU 3dsMax, CMU Second Life, Perfume, SFU, plus LAFAN1 subject 2 and Bandai dataset-2)
and all.

    python -m benchmarks.bench_pops [--quick]

Full: every shared clip (47), 4 injections per clip; quick: the first clip of each convention's
folder, 1 injection per clip (other figures: compare quick with quick).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from . import _compat as C
from ._common import MOCAP, main_single, record, skipped
from ._timing import clock

BENCH = "pops"
bvh = C.mod("io.bvh")
quat = C.mod("motion.quat")
guess_units = C.mod("motion.units").guess_units
channel_velocities = C.mod("cleanup.pops").channel_velocities
detect_pops = C.mod("cleanup.pops").detect_pops
WINDOW = 2
REPEATS = 4
ANGLES = [10, 20, 30, 45, 60, 90]
ROOT_CM = [5, 10, 20, 50]


def is_tuning(rel: str) -> bool:
    return (
        (rel.startswith("lafan1/") and "subject1" in rel)
        or rel.startswith("bandai_namco/dataset-1")
        or rel.startswith("cmu_cgspeed_mb/")
    )


def _bone_axis(sk, j: int, rng) -> np.ndarray:
    kids = sk.children(j)
    if kids:
        o = sk.offsets[kids[0]]
        if np.linalg.norm(o) > 1e-9:
            return o / np.linalg.norm(o)
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def inject(m, rng, n: int):
    """A copy of ``m`` with ``n`` pops; returns (motion, list of (kind, magnitude, events))."""
    F = m.num_frames
    rot, pos = m.rotations.copy(), m.positions.copy()
    mpu = guess_units(m).metres_per_unit
    starts: list[int] = []
    pops = []
    tries = 0
    while len(pops) < n and tries < 1000:
        tries += 1
        s = int(rng.integers(5, max(6, F - 15)))
        if any(abs(s - t) < 40 for t in starts) or s >= F - 12:
            continue
        k = int(rng.integers(1, 11))
        kind = rng.choice(["rot", "rot", "step", "flip", "root", "root-step", "sign"])
        j = int(rng.integers(0, m.num_joints))
        end = F if kind in ("step", "root-step") else s + k
        if kind in ("rot", "step"):
            mag = float(rng.choice(ANGLES))
            ax = rng.normal(size=3)
            r = quat.from_scaled_angle_axis(ax / np.linalg.norm(ax) * np.radians(mag))
            rot[s:end, j] = quat.mul(r, rot[s:end, j])
        elif kind == "flip":
            mag = 180.0
            r = quat.from_scaled_angle_axis(_bone_axis(m.skeleton, j, rng) * np.pi)
            rot[s:end, j] = quat.mul(r, rot[s:end, j])
        elif kind == "sign":
            mag = 0.0
            rot[s:end, j] = -rot[s:end, j]
        else:
            mag = float(rng.choice(ROOT_CM))
            d = rng.normal(size=3)
            pos[s:end, 0] += d / np.linalg.norm(d) * mag / 100.0 / mpu
        events = [s] if end >= F else [s, end]
        starts.append(s)
        pops.append((str(kind), mag, events, j))
    return m.with_rotations(rot, pos), pops


def describe(m, f: int) -> str:
    w, v, moving = channel_velocities(m)
    g = min(max(f, 2), m.num_frames - 1)
    a = np.linalg.norm(w[g] - w[g - 1], axis=-1)
    b = np.linalg.norm(w[g + 1] - w[g], axis=-1) if g + 1 < m.num_frames else a
    a = np.minimum(a, b) if f > 1 else b
    j = int(np.argmax(a))
    return f"frame {f} {m.skeleton.names[j]} ({np.degrees(a[j]):.1f} deg/frame change)"


#: a joint turning faster than this (deg/s) from one frame to the next is no human motion
#: (the fastest human joint motion, a pitcher's shoulder, stays under ~7,000 deg/s for a few frames)
IMPOSSIBLE_DEG_PER_S = 5000.0


def data_glitch(m, f: int, window: int = WINDOW) -> str | None:
    """Whether frame ``f`` is at a pop in the data itself, by a definition that shares nothing with
    the detector: some joint's local rotation jumps by more than IMPOSSIBLE_DEG_PER_S x frame time
    between two consecutive frames within ``window`` of ``f`` (raw rotations, no velocity model).
    The injected ``rot``, ``step`` and ``flip`` pops are such jumps. Returns a description or None."""
    q = quat.normalize(m.rotations)
    F = m.num_frames
    lim = np.radians(IMPOSSIBLE_DEG_PER_S) * m.frame_time
    for g in range(max(f - window, 1), min(f + window, F - 1) + 1):
        step = quat.angle(q[g - 1], q[g])
        j = int(np.argmax(step))
        if step[j] > lim:
            return f"{m.skeleton.names[j]} turns {np.degrees(step[j]):.0f} deg between frames {g - 1} and {g}"
    return None


def start_pose_jump(m) -> bool:
    """Frame 0 is another pose (e.g. the T-pose some converters prepend): two or more joints turn
    by over 30 degrees between frames 0 and 1, which no captured motion does in one frame."""
    return m.num_frames > 1 and int(np.sum(np.degrees(quat.angle(m.rotations[0], m.rotations[1])) > 30.0)) >= 2


def run(quick: bool, seed: int = 0) -> list[dict]:
    if not MOCAP.is_dir():
        return [skipped(BENCH, "pop detector", f"shared clips not found at {MOCAP}")]
    files = sorted(MOCAP.glob("*/*.bvh"))
    repeats = REPEATS
    if quick:
        firsts: dict = {}
        for p in files:
            firsts.setdefault(p.parent.name, p)
        files, repeats = sorted(firsts.values()), 1
    rng = np.random.default_rng(seed)
    clean = {"tuning": [0, 0], "held-out": [0, 0]}  # frames, cuts
    listed = []
    # per (group, kind, magnitude): [found, total]
    found: dict = defaultdict(lambda: [0, 0])
    found_any: dict = defaultdict(int)  # a cut near the start or the end
    prec: dict = defaultdict(lambda: [0, 0])  # group -> [correct cuts, cuts]
    sign_cuts = [0, 0]
    start_cuts: list[str] = []
    glitches = 0
    det_time = 0.0
    det_frames = 0
    for path in files:
        rel = f"{path.parent.name}/{path.name}"
        grp = "tuning" if is_tuning(rel) else "held-out"
        m = bvh.load(path)
        t = clock()
        cuts = detect_pops(m)
        det_time += clock() - t
        det_frames += m.num_frames
        if start_pose_jump(m) and 1 in cuts:
            start_cuts.append(rel)
            cuts = cuts[cuts != 1]
        clean[grp][0] += m.num_frames
        clean[grp][1] += cuts.size
        for c in cuts.tolist():
            why = data_glitch(m, c)
            listed.append(f"{rel}: {describe(m, c)}" + (f" <- a pop in the data: {why}" if why else ""))
            glitches += why is not None
        for _ in range(repeats):
            n = max(1, m.num_frames // 300)
            mm, pops = inject(m, rng, n)
            cuts = detect_pops(mm)
            ev = [(e, p) for p in pops if p[0] != "sign" for e in p[2]]
            sign_ev = [e for p in pops if p[0] == "sign" for e in p[2]]
            for c in cuts.tolist():
                near = any(abs(c - e) <= WINDOW for e, _ in ev)
                prec[grp][0] += int(near)
                prec[grp][1] += 1
                if not near and any(abs(c - e) <= WINDOW for e in sign_ev):
                    sign_cuts[0] += 1
            for kind, mag, events, _j in pops:
                if kind == "sign":
                    sign_cuts[1] += 1
                    continue
                hit = [bool(np.any(np.abs(cuts - e) <= WINDOW)) for e in events]
                for g in (grp, "all"):
                    found[(g, kind, mag)][0] += int(all(hit))
                    found[(g, kind, mag)][1] += 1
                    found_any[(g, kind, mag)] += int(any(hit))
    frames = clean["tuning"][0] + clean["held-out"][0]
    data = (
        f"{len(files)} shared clips ({frames:,} frames), {repeats} injection(s) per clip, seed {seed}, "
        f"window +-{WINDOW} frames"
    )
    recs = [record(BENCH, "detection time", 1e6 * det_time / det_frames, "us/frame", data=data)]
    keys = sorted({(k, mg) for (_, k, mg) in found}, key=lambda x: (x[0], x[1]))
    for kind, mag in keys:
        f, n = found[("all", kind, mag)]
        unit = "cm" if kind.startswith("root") else "deg"
        recs.append(
            record(
                BENCH,
                f"recall {kind} {mag:.0f} {unit}",
                100.0 * f / n,
                "%",
                kind="quality",
                data=data,
                found=f,
                injected=n,
            )
        )
    for g in ("tuning", "held-out", "all"):
        big = [
            (k, mg)
            for (k, mg) in keys
            if (k.startswith("root") and mg >= 10) or (not k.startswith("root") and mg >= 20)
        ]
        f, n = sum(found[(g, *x)][0] for x in big), sum(found[(g, *x)][1] for x in big)
        fa = sum(found_any[(g, *x)] for x in big)
        recs += [
            record(
                BENCH,
                f"{g}: recall, pops >= 20 deg / 10 cm, every event cut",
                100.0 * f / max(n, 1),
                "%",
                kind="quality",
                data=data,
                found=f,
                injected=n,
            ),
            record(
                BENCH,
                f"{g}: recall, pops >= 20 deg / 10 cm, start or end cut",
                100.0 * fa / max(n, 1),
                "%",
                kind="quality",
                data=data,
                target=95.0,
            ),
        ]
    for g in ("tuning", "held-out"):
        c, n = prec[g]
        recs.append(
            record(
                BENCH,
                f"{g}: precision on injected clips",
                100.0 * c / max(n, 1),
                "%",
                kind="quality",
                data=data,
                correct=c,
                cuts=n,
            )
        )
    recs.append(
        record(
            BENCH,
            "cuts near a q -> -q cover change (not a pop)",
            sign_cuts[0],
            "cuts",
            kind="count",
            data=data,
            injected=sign_cuts[1],
        )
    )
    tf = tc = 0
    for g in ("tuning", "held-out"):
        f, c = clean[g]
        tf += f
        tc += c
        recs.append(
            record(
                BENCH,
                f"clean clips, {g}: cuts",
                c,
                "cuts",
                kind="count",
                data=data,
                frames=f,
                per_10k_frames=1e4 * c / max(f, 1),
            )
        )
    recs += [
        record(
            BENCH,
            "clean clips, all: cuts per 10,000 frames",
            1e4 * tc / max(tf, 1),
            "per 10k frames",
            kind="quality",
            data=data,
            cuts=tc,
            frames=tf,
            not_counted=f"frame 1 of clips whose frame 0 is another pose: {', '.join(start_cuts) or 'none'}",
        ),
        record(
            BENCH,
            "clean clips: cuts at pops in the data itself",
            glitches,
            "cuts",
            kind="count",
            data=data,
            note=f"a joint turning faster than {IMPOSSIBLE_DEG_PER_S:.0f} deg/s between two frames",
        ),
        record(
            BENCH,
            "clean clips: false cuts per 10,000 frames (data pops excluded)",
            1e4 * (tc - glitches) / max(tf, 1),
            "per 10k frames",
            kind="quality",
            data=data,
            target=1.0,
            cuts_listed=listed,
        ),
    ]
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

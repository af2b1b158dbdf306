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

Clean clips: every cut on the 47 uninjected clips counts as false, reported per 10,000 frames and
listed (frame, joint, change) so that real glitches in the data can be told apart.

Tuning split: the detector's defaults were tuned on TUNING (LAFAN1 subject 1, Bandai Namco dataset-1,
CMU MotionBuilder); figures are printed for the tuning clips, the held-out clips (other conventions:
Adelaide, CMU 3dsMax, CMU Second Life, Perfume, SFU, plus LAFAN1 subject 2 and Bandai dataset-2)
and all.

Run: ``PYTHONPATH=src python benchmarks/bench_pops.py [--repeats N]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from jointlimits.io import bvh
from jointlimits.motion import quat  # noqa: E402
from jointlimits.cleanup.pops import channel_velocities, detect_pops  # noqa: E402
from jointlimits.motion.units import guess_units  # noqa: E402

MOCAP = Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"
WINDOW = 2
REPEATS = 4
ANGLES = [10, 20, 30, 45, 60, 90]
ROOT_CM = [5, 10, 20, 50]


def is_tuning(rel: str) -> bool:
    return (rel.startswith("lafan1/") and "subject1" in rel) or rel.startswith("bandai_namco/dataset-1") \
        or rel.startswith("cmu_cgspeed_mb/")


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=REPEATS)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not MOCAP.is_dir():
        print(f"shared clips not found at {MOCAP}")
        return
    files = sorted(MOCAP.glob("*/*.bvh"))
    rng = np.random.default_rng(args.seed)
    clean = {"tuning": [0, 0], "held-out": [0, 0]}  # frames, cuts
    listed = []
    # per (group, kind, magnitude): [found, total]
    found: dict = defaultdict(lambda: [0, 0])
    found_any: dict = defaultdict(int)  # a cut near the start or the end
    prec: dict = defaultdict(lambda: [0, 0])  # group -> [correct cuts, cuts]
    sign_cuts = [0, 0]
    start_cuts: list[str] = []
    glitches = 0
    t0 = time.perf_counter()
    det_time = 0.0
    det_frames = 0
    for path in files:
        rel = f"{path.parent.name}/{path.name}"
        grp = "tuning" if is_tuning(rel) else "held-out"
        m = bvh.load(path)
        t = time.perf_counter()
        cuts = detect_pops(m)
        det_time += time.perf_counter() - t
        det_frames += m.num_frames
        if start_pose_jump(m) and 1 in cuts:
            start_cuts.append(rel)
            cuts = cuts[cuts != 1]
        clean[grp][0] += m.num_frames
        clean[grp][1] += cuts.size
        for c in cuts.tolist():
            why = data_glitch(m, c)
            listed.append(f"  {rel}: {describe(m, c)}" + (f"  <- a pop in the data: {why}" if why else ""))
            glitches += why is not None
        for _ in range(args.repeats):
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
    elapsed = time.perf_counter() - t0
    print(f"pop detector on {len(files)} clips, {args.repeats} injections per clip, window +-{WINDOW} frames "
          f"({elapsed:.1f} s; detection {1e6 * det_time / det_frames:.1f} us/frame)")
    print("\nrecall (pop found = a cut within the window of each of its events)")
    print(f"{'kind':10s} {'size':>6s} | {'tuning':>14s} | {'held-out':>14s} | {'all':>14s}")
    keys = sorted({(k, mg) for (_, k, mg) in found}, key=lambda x: (x[0], x[1]))
    for kind, mag in keys:
        unit = "cm" if kind.startswith("root") else "deg"
        cells = []
        for g in ("tuning", "held-out", "all"):
            f, n = found[(g, kind, mag)]
            cells.append(f"{100.0 * f / n:5.1f}% ({f:3d}/{n:3d})" if n else f"{'-':>14s}")
        print(f"{kind:10s} {mag:4.0f}{unit:>2s} | " + " | ".join(cells))
    for g in ("tuning", "held-out", "all"):
        big = [found[(g, k, mg)] for (k, mg) in keys if (k.startswith("root") and mg >= 10) or
               (not k.startswith("root") and mg >= 20)]
        f, n = sum(x[0] for x in big), sum(x[1] for x in big)
        fa = sum(found_any[(g, k, mg)] for (k, mg) in keys if (k.startswith("root") and mg >= 10) or
                 (not k.startswith("root") and mg >= 20))
        print(f"  {g}: recall of rotation pops >= 20 deg and root pops >= 10 cm: {100.0 * f / max(n, 1):.1f}% ({f}/{n}) "
              f"with every event cut; {100.0 * fa / max(n, 1):.1f}% with a cut at its start or end")
    print("\nprecision on injected clips (cuts within the window of an injected event / all cuts)")
    for g in ("tuning", "held-out"):
        c, n = prec[g]
        print(f"  {g}: {100.0 * c / max(n, 1):.1f}% ({c}/{n})")
    print(f"  cuts near a q -> -q cover change (not a pop): {sign_cuts[0]} over {sign_cuts[1]} injected")
    print("\nclean clips (no injection): false cuts")
    print(f"  not counted: frame 1 of {len(start_cuts)} clips whose frame 0 is another pose (a real jump): "
          f"{', '.join(start_cuts)}")
    tf = tc = 0
    for g in ("tuning", "held-out"):
        f, c = clean[g]
        tf += f
        tc += c
        print(f"  {g}: {c} cuts in {f} frames = {1e4 * c / max(f, 1):.2f} per 10,000 frames")
    print(f"  all: {tc} cuts in {tf} frames = {1e4 * tc / max(tf, 1):.2f} per 10,000 frames")
    print(f"  of these, {glitches} are at pops in the data itself (a joint turning faster than "
          f"{IMPOSSIBLE_DEG_PER_S:.0f} deg/s between two frames, judged on the raw rotations, see data_glitch): false cuts "
          f"{tc - glitches} in {tf} frames = {1e4 * (tc - glitches) / max(tf, 1):.2f} per 10,000 frames (target <= 1)")
    for line in listed:
        print(line)


if __name__ == "__main__":
    main()

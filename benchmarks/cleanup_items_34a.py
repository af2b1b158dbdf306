"""Issue 34 (part A): one pop repair, no flips, smoothing without new steps, recovery without flips,
measured on every shared clip of the 8 conventions with independent measures (own local rotation
steps and own forward kinematics, never the pop detector). Imported by ``bench_cleanup.py``
(``ITEMS``: callables ``(quick) -> list[dict]``).

* **One repair**: every shared clip, and the same clip with pops injected (``bench_cleanup.inject``,
  seed 34), written as BVH; ``clean --detect`` (``corpus.clean``, one worker) against the
  ``filter --detect`` path (``repair_pops`` then ``io.save``): files byte-identical; joint-frames
  changed that are more than 0.25 s from a raw jump (a local rotation step over 3,000 deg/s or over
  90 deg in one frame) and from an injected pop (target 0); injected pops *restored* (a burst or
  flip: the output within 10 deg of the clean clip over its frames; a turn that stays: no output
  step within 2 frames of it over half the injected angle).
* **No flips**: local rotation steps over 90 deg in one frame after ``repair_pops`` (``filter
  --detect``), every shared clip (target 0).
* **apply --smooth**, every shape (box, ellipsoid, k-DOP, implicit, coupled, swing-twist), per
  skeleton: each clip limited by limits fitted on up to 6 other clips of its skeleton (a different
  person where the folder has one: LAFAN1 subjects, CMU 60/61; else other takes of the same person);
  joint-frames outside (``contains``, target 0) and joint-frames whose step exceeds the input's
  largest step at that joint within 0.25 s by more than 2 deg (target 0).
* **recover**: positions from forward kinematics of every shared clip plus 1 cm (RMS, 3-D) Gaussian
  noise, recovered on the clip's own rig (its BVH) without limits and with ellipsoid limits fitted
  on the other clips of its skeleton (up to 24, another person's first): MPJPE against the
  noiseless positions (target <= 1.5 cm) and local rotation steps over 3,000 deg/s where the source
  has none (at any joint) within 3 frames (target 0).

Quick: the first clip of each folder (cut to 600 frames for recover, 1,500 otherwise); full: all.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from . import _compat as C
from ._common import MOCAP, record, skipped

BENCH = "cleanup"
bvh = C.mod("io.bvh")
quat = C.mod("motion.quat")

RAW_DEG_PER_S = 3000.0
FLIP_DEG = 90.0
SEED = 34
SHAPES = ("box", "ellipsoid", "kdop", "implicit", "coupled", "swing-twist")


def _bc():
    from . import bench_cleanup

    return bench_cleanup


def _files(quick: bool) -> list[Path]:
    files = sorted(MOCAP.glob("*/*.bvh"))
    if quick:
        firsts: dict = {}
        for p in files:
            firsts.setdefault(p.parent.name, p)
        files = sorted(firsts.values())
    return files


def steps_deg(m) -> np.ndarray:
    """Local rotation step of every joint between frames t-1 and t, degrees ``[F, J]`` (row 0 zero)."""
    q = quat.normalize(m.rotations)
    s = np.zeros(q.shape[:2])
    s[1:] = np.degrees(quat.angle(q[1:], q[:-1]))
    return s


def raw_mask(m) -> np.ndarray:
    s = steps_deg(m)
    return (s / m.frame_time > RAW_DEG_PER_S) | (s > FLIP_DEG)


def _dilate(mask: np.ndarray, w: int) -> np.ndarray:
    out = mask.copy()
    for k in range(1, w + 1):
        out[k:] |= mask[:-k]
        out[:-k] |= mask[k:]
    return out


def item_one_repair(quick: bool) -> list[dict]:
    if not MOCAP.is_dir():
        return [skipped(BENCH, "one repair", f"shared clips not found at {MOCAP}")]
    bc = _bc()
    corpus = C.mod("corpus")
    repair_pops = C.mod("cleanup.repair").repair_pops
    io = C.mod("io")
    rng = np.random.default_rng(SEED)
    files = _files(quick)
    same = total = 0
    differ: list[str] = []
    checked = changed = leg_changed = 0
    where: list[str] = []
    restored = injected = 0
    frames = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as td:
        src, out_c, out_f = Path(td, "in"), Path(td, "clean"), Path(td, "filter")
        meta = {}
        for p in files:
            m = bvh.load(p)
            m = m[:1500] if quick and m.num_frames > 1500 else m
            frames += 2 * m.num_frames
            d = src / p.parent.name
            d.mkdir(parents=True, exist_ok=True)
            bvh.save(d / p.name, m)
            popped, pops = bc.inject(m, rng, max(1, m.num_frames // 300))
            bvh.save(d / f"{p.stem}__popped.bvh", popped)
            meta[f"{p.parent.name}/{p.stem}__popped.bvh"] = (pops, popped)
        corpus.clean([src], out_c, settings=corpus.CleanSettings(detect=True), workers=1, progress=False)
        for f in sorted(src.rglob("*.bvh")):
            rel = f.relative_to(src)
            m = io.load(f)
            res, _ = repair_pops(m, [], True, 1.0)
            (out_f / rel).parent.mkdir(parents=True, exist_ok=True)
            io.save(out_f / rel, res)
            total += 1
            if (out_f / rel).read_bytes() == (out_c / rel).read_bytes():
                same += 1
            else:
                differ.append(str(rel))
            got = io.load(out_c / rel)
            w = int(round(0.25 / m.frame_time))
            free = ~_dilate(raw_mask(m), w)
            key = str(rel)
            if key in meta:
                pops, popped = meta[key]
                for j, _ev, (s, e) in pops:
                    free[max(s - w, 0) : e + w, j] = False
                clean = io.load(src / rel.parent / (rel.name.replace("__popped", "")))
                injected += len(pops)
                restored += _restored_pops(clean, got, pops)
            # the leg below a changed joint may be re-solved to keep a planted foot: counted apart
            legs = np.zeros(free.shape, bool)
            hit = np.zeros(free.shape, bool)
            hit[:, :] = ~free
            for chain in bc._leg_chains(m.skeleton):
                near = hit[:, bc._ancestors(m.skeleton, chain[-1])].any(axis=1)
                legs[:, chain] |= near[:, None]
            diff = np.any(got.rotations != m.rotations, axis=-1)
            checked += int((free & ~legs).sum())
            bad = diff & free & ~legs
            leg_changed += int((diff & free & legs).sum())
            changed += int(bad.sum())
            if bad.any():
                where.append(f"{rel}: " + ", ".join(sorted({m.skeleton.names[j] for j in np.nonzero(bad.any(0))[0]})))
    cut = ", first 1,500" if quick else ""
    data = f"{len(files)} shared clips and the same with injected pops ({frames:,} frames{cut})"
    return [
        record(
            BENCH,
            "one repair: clean --detect writes the file filter --detect writes",
            100.0 * same / max(total, 1),
            "% of files",
            kind="quality",
            data=data,
            target=100.0,
            files=total,
            differ=differ,
            seconds=round(time.perf_counter() - t0, 1),
        ),
        record(
            BENCH,
            "one repair: joint-frames changed more than 0.25 s from a raw jump or injected pop",
            changed,
            "joint-frames",
            kind="count",
            data=data,
            target=0,
            checked=checked,
            where=where,
            leg_joint_frames_kept_planted=leg_changed,
        ),
        record(
            BENCH,
            "one repair: injected pops restored (own measure, clean --detect = filter --detect)",
            100.0 * restored / max(injected, 1),
            "%",
            kind="quality",
            data=data,
            target=93.0,
            restored=restored,
            injected=injected,
        ),
    ]


def _restored_pops(clean, out, pops) -> int:
    """Injected pops the output undid, judged against the clean clip: a burst or flip (two events)
    is back within 10 deg of the clean clip over its frames; a turn that stays leaves no output step
    within 2 frames of it larger than the clean clip's largest step there + half the turn."""
    n = 0
    s_out, s_clean = steps_deg(out), steps_deg(clean)
    for j, events, (s, e) in pops:
        if len(events) == 2:
            err = np.degrees(quat.angle(quat.normalize(out.rotations[s:e, j]), quat.normalize(clean.rotations[s:e, j])))
            n += int(err.max() <= 10.0)
        else:
            lo, hi = max(s - 2, 1), s + 3
            turn = float(
                np.degrees(quat.angle(quat.normalize(out.rotations[s, j]), quat.normalize(clean.rotations[s, j])))
            )
            n += int(s_out[lo:hi, j].max() <= s_clean[lo:hi, j].max() + 0.5 * max(turn, 20.0))
    return n


def item_no_flips(quick: bool) -> list[dict]:
    if not MOCAP.is_dir():
        return [skipped(BENCH, "no flips", f"shared clips not found at {MOCAP}")]
    repair_pops = C.mod("cleanup.repair").repair_pops
    files = _files(quick)
    before = after = frames = 0
    where: list[str] = []
    for p in files:
        m = bvh.load(p)
        frames += m.num_frames
        out, _ = repair_pops(m)
        b, a = int((steps_deg(m) > FLIP_DEG).sum()), int((steps_deg(out) > FLIP_DEG).sum())
        before, after = before + b, after + a
        if a:
            where.append(f"{p.parent.name}/{p.name}: {a}")
    return [
        record(
            BENCH,
            "no flips: local steps over 90 deg/frame after filter --detect",
            after,
            "joint-frames",
            kind="count",
            data=f"{len(files)} shared clips ({frames:,} frames)",
            target=0,
            before=before,
            where=where,
        )
    ]


def _groups(quick: bool) -> list[tuple[str, list[Path]]]:
    """Clips by skeleton (joint names) and folder."""
    out: dict = {}
    for p in sorted(MOCAP.glob("*/*.bvh")):
        names = tuple(bvh.load(p)[:1].skeleton.names)
        out.setdefault((p.parent.name, names), []).append(p)
    return [(k[0], v) for k, v in out.items()]


def _other(paths: list[Path], p: Path, n: int = 6) -> list[Path]:
    """Up to ``n`` clips of ``paths`` other than ``p``, another person's first where the folder
    names people (LAFAN1 ``subjectN``, CMU 60/61)."""

    def person(q: Path) -> str:
        s = q.stem
        return s.split("_")[-1] if "subject" in s else s.split("_")[0]

    rest = [q for q in paths if q != p]
    rest.sort(key=lambda q: (person(q) == person(p), q.name))
    return rest[:n]


def item_smooth_all(quick: bool) -> list[dict]:
    if not MOCAP.is_dir():
        return [skipped(BENCH, "apply --smooth, every convention", f"shared clips not found at {MOCAP}")]
    bc = _bc()
    smooth_switches = C.mod("cleanup.smoothing").smooth_switches
    recs = []
    groups = [(f, ps) for f, ps in _groups(quick) if len(ps) > 1]
    tally = {s: [0, 0, 0.0, [], 0] for s in SHAPES}
    for _folder, paths in groups:
        targets = paths[:1] if quick else (paths if len(paths) <= 6 else paths[:6])
        for p in targets:
            m = bvh.load(p)
            m = m[:1500] if quick and m.num_frames > 1500 else m
            fit_on = [bvh.load(q) for q in _other(paths, p)]
            for shape in SHAPES:
                lim = bc._fit(shape, fit_on)
                out = lim.apply(m, smooth=smooth_switches, root=True)
                n = int((~lim.contains(out.rotations)).sum())
                ex = bc.step_excess(m, out)
                t = tally[shape]
                t[0] += n
                t[1] += int((ex > 0).sum())
                t[2] = max(t[2], float(ex.max()))
                if n or (ex > 0).any():
                    t[3].append(f"{p.parent.name}/{p.name}: {n} outside, {int((ex > 0).sum())} over")
                t[4] += m.num_frames
    for shape, (outside, over, worst, where, frames) in tally.items():
        d = f"{sum(1 for _ in groups)} skeletons, {frames:,} frames, limits fitted on other clips of the skeleton"
        recs += [
            record(
                BENCH,
                f"apply --smooth, {shape}, every convention: joint-frames outside",
                outside,
                "joint-frames",
                kind="count",
                data=d,
                target=0,
                where=where,
            ),
            record(
                BENCH,
                f"apply --smooth, {shape}, every convention: steps over the input's local largest + 2 deg",
                over,
                "joint-frames",
                kind="count",
                data=d,
                target=0,
                largest_excess_deg=round(worst, 2),
            ),
        ]
    return recs


def item_recover(quick: bool) -> list[dict]:
    if not MOCAP.is_dir():
        return [skipped(BENCH, "recover", f"shared clips not found at {MOCAP}")]
    bc = _bc()
    recover = C.mod("ik.recover").recover
    fk = C.mod("motion.skeleton").forward_kinematics
    guess_units = C.mod("motion.units").guess_units
    rng = np.random.default_rng(SEED)
    rows: dict = {}
    for folder, paths in _groups(quick):
        targets = paths[:1] if quick else paths
        for p in targets:
            m = bvh.load(p)
            m = m[:600] if quick and m.num_frames > 600 else m
            cm = guess_units(m).metres_per_unit * 100.0
            _, g = fk(m)
            noisy = g + rng.normal(size=g.shape) * (1.0 / cm) / np.sqrt(3.0)
            # a raw jump of the source (any joint: the whole body is re-fitted there) within 3 frames
            src_raw = _dilate(raw_mask(m).any(axis=1, keepdims=True), 3)
            lims = [("without limits", None)]
            if len(paths) > 1:
                lims.append(("with limits", bc._fit("ellipsoid", [bvh.load(q) for q in _other(paths, p, 24)])))
            for label, lim in lims:
                out, _ = recover(noisy, m, lim)
                _, go = fk(out)
                err = float(np.linalg.norm(go - g, axis=-1).mean() * cm)
                new = int((raw_mask(out) & ~src_raw).sum())
                r = rows.setdefault((folder, label), [0.0, 0, 0, 0, []])
                r[0] = max(r[0], err)
                r[1] += new
                r[2] += 1
                r[3] += m.num_frames
                if new:
                    r[4].append(f"{p.name}: {new}")
    recs = []
    for (folder, label), (worst, new, clips, frames, where) in rows.items():
        d = f"{folder}: {clips} clip(s), {frames:,} frames, FK + 1 cm noise, the clip's own rig"
        recs += [
            record(BENCH, f"recover {label}, {folder}: largest MPJPE", worst, "cm", kind="quality", data=d, target=1.5),
            record(
                BENCH,
                f"recover {label}, {folder}: raw jumps where the source has none",
                new,
                "joint-frames",
                kind="count",
                data=d,
                target=0,
                where=where[:10],
            ),
        ]
    return recs


ITEMS = [item_one_repair, item_no_flips, item_smooth_all, item_recover]

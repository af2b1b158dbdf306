"""Issue 34 (part B) Done-when items: coupled fits over the --padding range, the per-clip floor of
``scan``, and foot locking against an independent skating measure (imported by
``cleanup_items_b.py``; not a benchmark of its own).

``ITEMS``: callables ``(quick) -> list[dict]`` of ``_common.record`` lines:

* ``fit --coupled`` (the CLI) at --padding 0, 0.25 and 0.5 (the option's range) on every shared
  skeleton (8 conventions, Adelaide's two skeletons): fits that fail; full: up to 6,000 frames of
  the skeleton's clips, quick: the first 600 frames of one clip.

* ``scan``'s airborne frames (``corpus.scan.airborne``, what ``measure`` counts): on every shared
  clip where some foot point (foot or toe joint, or a toe end site) stays within 5 cm of its own
  lowest height, as recorded and raised 5 cm (the issue's standing clips 5 cm above y=0), the
  largest share of frames marked airborne (target <= 2%); on the jump clips (cmu_cgspeed_mb/01_01,
  sfu/0005_JumpRope001) the flight phases longer than 0.1 s, found independently from the root's
  height (its vertical acceleration within 4 m/s^2 of free fall, 50 ms moving average), that no
  airborne frame overlaps (target 0).

* ``footlock`` (the CLI's settings: steps bounded by the input's local largest + 2 deg) against the
  issue's skating measure, computed here from own FK and nothing of the project's: per foot point
  (ankle joints; toe joints, or the toe end sites of a rig without toe joints) the horizontal
  distance travelled between consecutive frames on which it is *low* (below its own 10th-percentile
  height + 3 cm) and *slow* (horizontal speed under 0.6 m/s), each clip judged on its own frames;
  per clip the reduction of ankles and of toes, the least over LAFAN1 (target >= 85%) and over the
  other clips (target >= 70%); foot points whose skating went up (target 0); the largest gap
  between the reduction the CLI prints (its ``independent`` line, total) and this one (target
  <= 10 points).

    python -m benchmarks.cleanup_items_34b [--quick]
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import numpy as np

from . import _compat as C
from ._common import MOCAP, main_single, record, skipped

BENCH = "cleanup"
bvh = C.mod("io.bvh")

PADDINGS = (0.0, 0.25, 0.5)


def _skeleton_groups(quick: bool) -> dict[str, list[Path]]:
    """Clips of ../shared by skeleton (folder, joint count, topology): quick one clip each."""
    groups: dict[str, list[Path]] = {}
    for f in sorted(MOCAP.glob("*/*.bvh")):
        m = bvh.load(f)
        groups.setdefault(f"{f.parent.name}-{m.skeleton.num_joints}j-{m.skeleton.fingerprint()[:6]}", []).append(f)
    return {k: v[:1] for k, v in groups.items()} if quick else groups


def coupled_padding_items(quick: bool) -> list[dict]:
    """``fit --coupled --padding P`` over the option's range on every shared skeleton."""
    name = "fit --coupled over --padding 0..0.5: failed fits"
    if not MOCAP.is_dir():
        return [skipped(BENCH, name, f"{MOCAP} not found")]
    from click.testing import CliRunner

    from jointlimits.cli import main

    limit = 600 if quick else 6000
    fails: list[str] = []
    runs = 0
    with tempfile.TemporaryDirectory() as d:
        clips: list[str] = []
        for key, files in _skeleton_groups(quick).items():
            motions, n = [], 0
            for f in files:
                m = bvh.load(f)
                take = min(m.num_frames, limit - n)
                motions.append(m.frames(0, take))
                n += take
                if n >= limit:
                    break
            paths = []
            for k, m in enumerate(motions):
                p = Path(d) / f"{key}-{k}.bvh"
                bvh.save(p, m)
                paths.append(str(p))
            clips.append(key)
            for pad in PADDINGS:
                args = ["fit", *paths, "--shape", "implicit", "--coupled", "--padding", str(pad)]
                res = CliRunner().invoke(main, [*args, "-o", str(Path(d) / "l.json"), "--force", "--quiet"])
                runs += 1
                if res.exit_code != 0:
                    fails.append(f"{key} padding {pad}: {(res.output or str(res.exception)).strip()[-160:]}")
    return [
        record(
            BENCH,
            name,
            len(fails),
            f"of {runs} fits",
            kind="count",
            data=f"{len(clips)} skeletons of 8 conventions, up to {limit:,} frames each; paddings {PADDINGS}",
            target=0,
            where=fails,
        )
    ]


JUMP_CLIPS = ["cmu_cgspeed_mb/01_01.bvh", "sfu/0005_JumpRope001.bvh"]


def _heights(m) -> tuple[np.ndarray, list[str]]:
    """Heights (metres, own FK) of every foot point: foot and toe joints and their end sites."""
    sk_mod = C.mod("motion.skeleton")
    units = C.mod("motion.units")
    k, sign = units.up_axis_index(units.guess_up_axis(m))
    mpu = units.guess_units(m).metres_per_unit
    gr, gp = sk_mod.forward_kinematics(m)
    pts = np.concatenate([gp, sk_mod.end_site_positions(m, gr, gp)], axis=1)
    sk = m.skeleton
    names = [n.lower() for n in sk.names]
    legs = [j for j, n in enumerate(names) if any(w in n for w in ("foot", "toe", "ankle"))]
    ends = [sk.num_joints + e for e, (p, _) in enumerate(sk.end_sites) if p in legs]
    return sign * pts[:, legs + ends, k] * mpu, [sk.names[j] for j in legs]


def _flights(m, tol: float = 4.0, window_s: float = 0.05, shortest_s: float = 0.1) -> list[tuple[int, int]]:
    """Stretches longer than ``shortest_s`` whose root falls freely (vertical acceleration within
    ``tol`` m/s^2 of -9.81, heights smoothed over ``window_s``)."""
    units = C.mod("motion.units")
    k, sign = units.up_axis_index(units.guess_up_axis(m))
    y = sign * m.positions[:, 0, k] * units.guess_units(m).metres_per_unit
    dt = m.frame_time
    w = max(1, int(round(window_s / dt)))
    ys = np.convolve(y, np.ones(w) / w, mode="same")
    a = np.full_like(y, np.nan)
    a[1:-1] = (ys[2:] - 2 * ys[1:-1] + ys[:-2]) / dt**2
    ok = np.concatenate([[0], (np.abs(a + 9.81) < tol).astype(np.int8), [0]])
    d = np.diff(ok)
    return [(s, e) for s, e in zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]) if (e - s) * dt > shortest_s]


def scan_floor_items(quick: bool) -> list[dict]:
    """Airborne share on grounded clips (as recorded and raised 5 cm); jump flights still found."""
    name = "scan: largest share of frames airborne on clips with a foot always within 5 cm of its lowest"
    if not MOCAP.is_dir():
        return [skipped(BENCH, name, f"{MOCAP} not found")]
    scan = C.mod("corpus.scan")
    units = C.mod("motion.units")
    files = sorted(MOCAP.glob("*/*.bvh"))
    worst, grounded, where = 0.0, 0, []
    for f in files:
        m = bvh.load(f)
        if quick:
            m = m.frames(0, min(m.num_frames, 1500))
        h, _ = _heights(m)
        if not h.size or not np.any(h.max(0) - h.min(0) <= 0.05):
            continue
        grounded += 1
        k, sign = units.up_axis_index(units.guess_up_axis(m))
        raised = copy.deepcopy(m)
        raised.positions[:, 0, k] += sign * 0.05 / units.guess_units(m).metres_per_unit
        for label, clip in (("", m), (" +5 cm", raised)):
            share = float(np.mean(scan.airborne(clip)))
            worst = max(worst, share)
            if share > 0.02:
                where.append(f"{f.parent.name}/{f.name}{label}: {100 * share:.1f}%")
    missed, total, per = 0, 0, {}
    for rel in JUMP_CLIPS:
        m = bvh.load(MOCAP / rel)
        air = scan.airborne(m)
        fl = _flights(m)
        lost = [f"{a}-{b - 1}" for a, b in fl if not air[a:b].any()]
        missed += len(lost)
        total += len(fl)
        per[rel] = f"{len(fl) - len(lost)} of {len(fl)} found" + (f" (missed {', '.join(lost)})" if lost else "")
    return [
        record(
            BENCH,
            name,
            100 * worst,
            "%",
            kind="quality",
            data=f"{grounded} of {len(files)} shared clips, each as recorded and raised 5 cm"
            + (", first 1,500 frames" if quick else ""),
            target=2.0,
            where=where,
        ),
        record(
            BENCH,
            "scan: flight phases > 0.1 s in the jump clips with no frame marked airborne",
            missed,
            f"of {total} flights",
            kind="count",
            data=", ".join(JUMP_CLIPS) + "; flights from the root's free fall (own FK)",
            target=0,
            per_clip=per,
        ),
    ]


def skating_by_point(m) -> dict[str, tuple[str, float]]:
    """The issue's skating (cm) per foot point: name -> (ankle | toe, cm)."""
    sk_mod = C.mod("motion.skeleton")
    units = C.mod("motion.units")
    k, sign = units.up_axis_index(units.guess_up_axis(m))
    mpu = units.guess_units(m).metres_per_unit
    gr, gp = sk_mod.forward_kinematics(m)
    sk = m.skeleton
    ends = sk_mod.end_site_positions(m, gr, gp)
    names = [n.lower() for n in sk.names]
    points: dict[str, tuple[str, np.ndarray]] = {}
    for j, n in enumerate(names):
        if ("foot" in n or "ankle" in n) and "toe" not in n:
            kids = [c for c in range(sk.num_joints) if sk.parents[c] == j]
            points[sk.names[j]] = ("ankle", gp[:, j])
            toe_kids = [c for c in kids if "toe" in names[c]]
            if not toe_kids:
                for e, (p, _) in enumerate(sk.end_sites):
                    if p == j:
                        points[f"{sk.names[j]}/end"] = ("toe", ends[:, e])
        elif "toe" in n and "end" not in n:
            points[sk.names[j]] = ("toe", gp[:, j])
    out: dict[str, tuple[str, float]] = {}
    dt = m.frame_time
    for name, (kind, p) in points.items():
        p = p * mpu
        h = sign * p[:, k]
        hor = np.delete(p, k, axis=-1)
        low = h < np.percentile(h, 10) + 0.03
        step = np.linalg.norm(np.diff(hor, axis=0), axis=-1)
        use = low[1:] & low[:-1] & (step / dt < 0.6)
        out[name] = (kind, float(100 * (step * use).sum()))
    return out


def _reduction(before: float, after: float) -> float:
    return 100.0 * (1 - after / before) if before > 0 else 100.0


def footlock_items(quick: bool) -> list[dict]:
    """footlock against the issue's independent skating measure."""
    name = "footlock: least independent skating reduction, ankles and toes"
    if not MOCAP.is_dir():
        return [skipped(BENCH, name, f"{MOCAP} not found")]
    fl = C.mod("cleanup.footlock")
    files = sorted(MOCAP.glob("*/*.bvh"))
    if quick:
        files = [
            MOCAP / f for f in ("lafan1/walk4_subject1.bvh", "cmu_cgspeed_mb/01_01.bvh", "sfu/0005_JumpRope001.bvh")
        ]
    per: dict[str, list[float]] = {}
    worse: list[str] = []
    gaps: dict[str, float] = {}
    for f in files:
        m = bvh.load(f)
        if quick:
            m = m.frames(0, min(m.num_frames, 1500))
        key = f"{f.parent.name}/{f.stem}"
        try:
            out, rep = fl.footlock(m, step_margin=fl.STEP_MARGIN_DEGREES)
        except Exception as e:  # a clip the tool refuses counts as not reduced
            per[key] = [0.0, 0.0]
            worse.append(f"{key}: {type(e).__name__}: {e}")
            continue
        b, a = skating_by_point(m), skating_by_point(out)
        sums = {}
        for kind in ("ankle", "toe"):
            sb = sum(v for kk, v in b.values() if kk == kind)
            sa = sum(v for kk, v in a.values() if kk == kind)
            sums[kind] = (sb, sa)
        per[key] = [round(_reduction(*sums["ankle"]), 1), round(_reduction(*sums["toe"]), 1)]
        worse += [f"{key} {p}: {b[p][1]:.1f} -> {a[p][1]:.1f} cm" for p in b if a[p][1] > b[p][1] + 1e-9]
        printed = (getattr(rep, "low_slow_reduction", None) or rep.independent_reduction or {}).get("total")
        mine = _reduction(sum(x for x, _ in sums.values()), sum(y for _, y in sums.values()))
        gaps[key] = round(abs((printed if printed is not None else 100.0) - mine), 1)
    laf = {k: v for k, v in per.items() if k.startswith("lafan1/")}
    other = {k: v for k, v in per.items() if not k.startswith("lafan1/")}
    data = f"{len(files)} shared clips" + (", first 1,500 frames" if quick else "") + "; own FK, the issue's measure"
    recs = []
    for label, group, target in (("LAFAN1", laf, 85.0), ("other clips", other, 70.0)):
        if group:
            recs.append(
                record(
                    BENCH,
                    f"{name}, {label}",
                    min(min(v) for v in group.values()),
                    "%",
                    kind="quality",
                    better="higher",
                    data=data,
                    target=target,
                    below=sorted(k for k, v in group.items() if min(v) < target),
                    per_clip=group,
                )
            )
    recs.append(
        record(
            BENCH,
            "footlock: foot points with more independent skating",
            len(worse),
            "points",
            kind="count",
            data=data,
            target=0,
            where=worse,
        )
    )
    recs.append(
        record(
            BENCH,
            "footlock: largest gap, printed independent reduction vs the issue's measure",
            max(gaps.values(), default=0.0),
            "points",
            kind="quality",
            data=data,
            target=10.0,
            per_clip=gaps,
        )
    )
    return recs


ITEMS = [coupled_padding_items, scan_floor_items, footlock_items]


def run(quick: bool) -> list[dict]:
    return [r for item in ITEMS for r in item(quick)]


if __name__ == "__main__":
    main_single(BENCH, run)

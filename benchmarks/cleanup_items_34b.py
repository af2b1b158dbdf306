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
    """Clips of ../shared by skeleton (folder and joint count): quick one clip each."""
    groups: dict[str, list[Path]] = {}
    for f in sorted(MOCAP.glob("*/*.bvh")):
        m = bvh.load(f)
        groups.setdefault(f"{f.parent.name}-{m.skeleton.num_joints}j", []).append(f)
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


ITEMS = [coupled_padding_items, scan_floor_items]


def run(quick: bool) -> list[dict]:
    return [r for item in ITEMS for r in item(quick)]


if __name__ == "__main__":
    main_single(BENCH, run)

"""Issue 23's Done-when items on resampling, coupled pairs and recovery without limits, measured
as a user gets them (imported by ``bench_cleanup.py``; not a benchmark of its own).

``ITEMS``: callables ``(quick) -> list[dict]`` of ``_common.record`` lines:

* ``resample`` (the CLI's path: ``motion.resample.resample`` then ``io.bvh.save(round_new=True)``)
  at each shared clip's own rate: files byte-identical to the input; at half the rate: the data
  rows are exactly every second row of the input (the header's hierarchy bytes kept too);
* ``fit --coupled`` (the CLI, on the first 200 frames of one clip per skeleton: 8 conventions,
  Adelaide's two skeletons): the fewest pairs it lists (``--json`` ``pairs``), target >= 8;
* ``recover`` without limits (the CLI's path: ``ik.recover.recover`` with the rig's BVH):
  positions of LAFAN1 obstacles1_subject1 (forward kinematics, every joint observed) on the rig
  of walk4_subject1 (same actor, another clip): mean local-rotation error against the clip's own
  rotations, all joints and the shoulders (LeftShoulder/RightShoulder/LeftArm/RightArm).

    python -m benchmarks.cleanup_items_b [--quick]

Full: every shared clip, the whole of obstacles1_subject1; quick: one clip per skeleton, its first
600 frames.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

from . import _compat as C
from ._common import LAFAN, MOCAP, main_single, record, skipped

BENCH = "cleanup"
bvh = C.mod("io.bvh")
quat = C.mod("motion.quat")

#: one clip per skeleton of ../shared (8 conventions; Adelaide has two skeletons)
ONE_PER_SKELETON = [
    "lafan1/push1_subject2.bvh",
    "bandai_namco/dataset-1_kick_normal_001.bvh",
    "cmu_cgspeed_mb/cmu_12_01_walk.bvh",
    "cmu_cgspeed_max/131_01.bvh",
    "cmu_secondlife/60_05_scaled.bvh",
    "sfu/0005_Jogging001.bvh",
    "perfume/A_test.bvh",
    "adelaide/louise.bvh",
    "adelaide/milad.bvh",
]


def _rows(raw: bytes) -> tuple[bytes, list[bytes]]:
    """(the bytes before MOTION, the data rows with their line endings)."""
    head, motion = raw.split(b"MOTION", 1)
    return head, motion.split(b"Frame Time:", 1)[1].splitlines(keepends=True)[1:]


def resample_items(quick: bool) -> list[dict]:
    """At the clip's own rate the same bytes; at half the rate every second row."""
    if not MOCAP.is_dir():
        return [skipped(BENCH, "resample at the clip's own rate: byte-identical files", f"{MOCAP} not found")]
    resample = C.mod("motion.resample")
    files = [MOCAP / f for f in ONE_PER_SKELETON] if quick else sorted(MOCAP.glob("*/*.bvh"))
    same = half = 0
    bad_same: list[str] = []
    bad_half: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            m = bvh.load(f)
            rate = resample.nominal_fps(m.fps)
            bvh.save(Path(d) / "same.bvh", resample.resample(m, rate), round_new=True)
            raw = f.read_bytes()
            if (Path(d) / "same.bvh").read_bytes() == raw:
                same += 1
            else:
                bad_same.append(f.name)
            bvh.save(Path(d) / "half.bvh", resample.resample(m, rate / 2), round_new=True)
            head, rows = _rows(raw)
            head_h, rows_h = _rows((Path(d) / "half.bvh").read_bytes())
            if rows_h == rows[::2] and head_h == head:
                half += 1
            else:
                bad_half.append(f.name)
    data = f"{len(files)} shared clips of 8 conventions" + (" (one per skeleton)" if quick else "")
    return [
        record(
            BENCH,
            "resample at the clip's own rate: byte-identical files",
            same,
            f"of {len(files)} clips",
            kind="count",
            better="higher",
            data=data,
            note="target: all" + (f"; differ: {', '.join(bad_same)}" if bad_same else ""),
        ),
        record(
            BENCH,
            "resample at half the rate: exactly every second row",
            half,
            f"of {len(files)} clips",
            kind="count",
            better="higher",
            data=data,
            note="target: all" + (f"; differ: {', '.join(bad_half)}" if bad_half else ""),
        ),
    ]


def coupled_pairs_items(quick: bool) -> list[dict]:
    """The fewest pairs ``fit --coupled --json`` lists over the shared skeletons."""
    if not MOCAP.is_dir():
        return [skipped(BENCH, "fit --coupled: pairs listed, fewest over the conventions", f"{MOCAP} not found")]
    from click.testing import CliRunner

    from jointlimits.cli import main

    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as d:
        for name in ONE_PER_SKELETON:
            cut = Path(d) / Path(name).name
            bvh.save(cut, bvh.load(MOCAP / name).frames(0, 200))
            args = ["fit", str(cut), "--shape", "implicit", "--coupled", "--json"]
            res = CliRunner().invoke(main, [*args, "-o", str(Path(d) / "l.json"), "--force"])
            counts[name.split("/")[0] + "/" + Path(name).stem] = (
                len(json.loads(res.output)["pairs"]) if res.exit_code == 0 else -1
            )
    low = min(counts.values())
    return [
        record(
            BENCH,
            "fit --coupled: pairs listed, fewest over the shared skeletons",
            low,
            "pairs",
            kind="count",
            better="higher",
            data=f"{len(counts)} skeletons of 8 conventions, first 200 frames each",
            note="target >= 8; " + ", ".join(f"{k} {v}" for k, v in counts.items()),
        )
    ]


def recover_items(quick: bool) -> list[dict]:
    """Local-rotation error of recover without limits (the rig's mean posture as prior)."""
    clip_p, rig_p = LAFAN / "obstacles1_subject1.bvh", LAFAN / "walk4_subject1.bvh"
    if not (clip_p.is_file() and rig_p.is_file()):
        return [skipped(BENCH, "recover without limits: local-rotation error", "LAFAN1 clips not found")]
    recover = C.mod("ik.recover").recover
    forward_kinematics = C.mod("motion.skeleton").forward_kinematics
    clip = bvh.load(clip_p)
    if quick:
        clip = clip.frames(0, 600)
    rig = bvh.load(rig_p)
    _, p = forward_kinematics(clip)
    m, rep = recover(p, rig)
    ang = np.degrees(quat.angle(m.rotations, clip.rotations))
    sk = clip.skeleton
    shoulders = [sk.index(n) for n in ("LeftShoulder", "RightShoulder", "LeftArm", "RightArm")]
    data = (
        f"obstacles1_subject1 ({clip.num_frames} frames, every joint observed) on the walk4_subject1 rig; "
        f"prior: {rep.extra.get('posture_prior', 'rest')}"
    )
    return [
        record(
            BENCH,
            "recover without limits: mean local-rotation error",
            float(ang.mean()),
            "deg",
            kind="quality",
            better="lower",
            data=data,
            note="72.9 deg before (the rig's rest pose as prior)",
        ),
        record(
            BENCH,
            "recover without limits: shoulders and upper arms",
            float(ang[:, shoulders].mean()),
            "deg",
            kind="quality",
            better="lower",
            data=data,
            note="LeftShoulder 177, LeftArm 117 deg before",
        ),
    ]


ITEMS = [resample_items, coupled_pairs_items, recover_items]


def run(quick: bool) -> list[dict]:
    return [r for item in ITEMS for r in item(quick)]


if __name__ == "__main__":
    main_single(BENCH, run)

# issue 34 part B's items (coupled fits over --padding, scan's floor, ...): their own module
from .cleanup_items_34b import ITEMS as _ITEMS_34B  # noqa: E402

ITEMS += _ITEMS_34B

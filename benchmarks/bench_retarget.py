"""Retargeting with mink onto the exported MJCF humanoid: no limits, mink's box limits from the
export, and the fitted limits through ``jointlimits.integrations.mink.FittedLimits``.

Protocol: for each held-out LAFAN1 clip, limits (ellipsoid) are fitted on the other nine shared
LAFAN1 clips, ``export --to mujoco`` (covering variant) writes the humanoid, and frames
1000-1300 of the held-out clip are retargeted with the same tasks and weights in the three runs
(``RetargetSettings``' defaults: root frame, end effectors, every other joint's position, a light
posture task; 3 QP solves per frame, daqp). Recorded per run: joint-frames outside the fitted
limits (``JointLimits.contains``, 1e-6 rad), mean end-effector and joint-position errors against
the targets (mm), and frames per CPU second of the solve, the box run as the speed anchor.

    python -m benchmarks --only retarget [--quick]

Full: push1_subject2, obstacles1_subject1 and dance1_subject2 held out, 300 frames each; quick:
push1_subject2, 60 frames.
"""

from __future__ import annotations

from ._common import LAFAN, main_single, record

BENCH = "retarget"
CLIPS = [
    "dance1_subject1",
    "dance1_subject2",
    "fallAndGetUp2_subject2",
    "fallAndGetUp3_subject1",
    "ground1_subject1",
    "ground2_subject2",
    "multipleActions1_subject1",
    "obstacles1_subject1",
    "push1_subject2",
    "walk4_subject1",
]


def run(quick: bool = False) -> list[dict]:
    import tempfile
    from pathlib import Path

    from jointlimits.export import export_limits
    from jointlimits.integrations.mink import RUNS, run_three
    from jointlimits.io import load
    from jointlimits.limits.model import JointLimits

    held = ["push1_subject2"] if quick else ["push1_subject2", "obstacles1_subject1", "dance1_subject2"]
    n = 60 if quick else 300
    recs: list[dict] = []
    tot = {r: {"outside": 0, "ee": 0.0, "jp": 0.0, "frames": 0, "sec": 0.0} for r in RUNS}
    for h in held:
        train = [load(LAFAN / f"{c}.bvh") for c in CLIPS if c != h]
        lim = JointLimits.fit(train, shape="ellipsoid")
        ex = export_limits(lim, "mujoco", clips=train, variants=("covering",))
        with tempfile.TemporaryDirectory() as d:
            xml = Path(d) / "body.xml"
            xml.write_text(ex.mjcf("covering"))
            src = load(LAFAN / f"{h}.bvh").frames(1000, 1000 + n)
            runs = run_three(src, xml, lim)
        data = f"{h} frames 1000-{1000 + n}, limits fitted on the other 9 LAFAN1 clips"
        box_fps = runs["box"].fps
        for r, res in runs.items():
            t = tot[r]
            t["outside"] += res.outside
            t["ee"] += res.ee_error * n
            t["jp"] += res.joint_error * n
            t["frames"] += n
            t["sec"] += res.result.seconds
            recs += [
                record(BENCH, f"{h} {r}: joint-frames outside", res.outside, "joint-frames", kind="count", data=data),
                record(BENCH, f"{h} {r}: end-effector error", 1000 * res.ee_error, "mm", kind="quality", data=data),
                record(
                    BENCH, f"{h} {r}: joint-position error", 1000 * res.joint_error, "mm", kind="quality", data=data
                ),
                record(
                    BENCH,
                    f"{h} {r}: solve",
                    res.fps,
                    "frames/CPU-s",
                    kind="rate",
                    data=data,
                    anchor="mink box limits, same run",
                    anchor_value=box_fps,
                ),
            ]
    data = f"{', '.join(held)}: {n} frames each"
    none, fit = tot["none"], tot["fitted"]
    for r in RUNS:
        recs.append(
            record(BENCH, f"all: {r}: joint-frames outside", tot[r]["outside"], "joint-frames", kind="count", data=data)
        )
    recs += [
        record(
            BENCH,
            "all: end-effector error, fitted / none",
            fit["ee"] / max(none["ee"], 1e-12),
            "x",
            kind="quality",
            data=data,
        ),
        record(
            BENCH,
            "all: joint-position error, fitted / none",
            fit["jp"] / max(none["jp"], 1e-12),
            "x",
            kind="quality",
            data=data,
        ),
        record(
            BENCH,
            "all: fitted solve",
            fit["frames"] / fit["sec"],
            "frames/CPU-s",
            kind="rate",
            data=data,
            anchor="mink box limits, same run",
            anchor_value=tot["box"]["frames"] / tot["box"]["sec"],
        ),
    ]
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

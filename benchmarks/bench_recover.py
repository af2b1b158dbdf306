"""Posture recovery benchmark: 3D joint positions -> rotations, without and with joint limits.

Protocol: limits (ellipsoid, swing-twist) fitted on LAFAN1 clips that are NOT evaluated
(dance1_subject1, fallAndGetUp3_subject1, ground1_subject1, multipleActions1_subject1,
walk4_subject1, dance1_subject2, fallAndGetUp2_subject2, ground2_subject2); evaluated on excerpts of
obstacles1_subject1 and push1_subject2. The clean joint positions (forward kinematics of the clip)
are corrupted with Gaussian noise of 1, 2 and 4 cm per coordinate, then 5% of frames get one
random joint moved 20 cm, then 10% of joint-frames are removed (NaN). Recovered by
``jointlimits.ik.recover`` (a) without limits, (b) with the limits, (c) with coupled limits when
``JointLimits.fit`` accepts ``coupled=True``. Both (a) and (b) use the same rest posture (the
limits' reference pose) for what positions do not observe.

Recorded per noise level: MPJPE against the clean positions (cm, every joint-frame, missing ones
included), the angle between recovered and original local rotations (degrees; all joints, and
the joints with a child, whose swing the positions observe), the share of joint-frames outside
the limits, and recovery frames per second. Then the solver's own speed: ``WholeBodyIK.solve``
on 22 joints all observed, batched, against forward kinematics timed in the same run, as wall
time and per CPU-second of this process (one thread: what the solve costs on an idle core when
the machine is shared).

    python -m benchmarks.bench_recover [--quick]

Full: 1,500 frames of each clip, the three noise levels, coupled limits, 2,000 poses for the solver
speed; quick: 300 frames of obstacles1_subject1, 2 cm noise, no coupled limits, 500 poses.
"""

from __future__ import annotations

import inspect
import time

import numpy as np

from jointlimits import JointLimits
from jointlimits.ik import WholeBodyIK

from . import _compat as C
from ._common import LAFAN, main_single, record, skipped
from ._timing import best_with_result, clock

BENCH = "recover"
TRAIN = [
    "dance1_subject1",
    "fallAndGetUp3_subject1",
    "ground1_subject1",
    "multipleActions1_subject1",
    "walk4_subject1",
    "dance1_subject2",
    "fallAndGetUp2_subject2",
    "ground2_subject2",
]
TEST = [("obstacles1_subject1", 1000), ("push1_subject2", 500)]
NOISE_CM = (1.0, 2.0, 4.0)
bvh = C.mod("io.bvh")
quat = C.mod("motion.quat")
forward_kinematics = C.mod("motion.skeleton").forward_kinematics
forward_kinematics_arrays = C.mod("motion.skeleton").forward_kinematics_arrays


def corrupt(
    clean: np.ndarray,
    noise: float,
    rng: np.random.Generator,
    outlier_frames: float = 0.05,
    outlier_cm: float = 20.0,
    missing: float = 0.10,
) -> np.ndarray:
    """Gaussian noise (cm), one joint moved ``outlier_cm`` in ``outlier_frames`` of frames, and
    ``missing`` of joint-frames set to NaN."""
    F, J = clean.shape[:2]
    obs = clean + rng.normal(size=clean.shape) * noise
    hit = np.nonzero(rng.random(F) < outlier_frames)[0]
    d = rng.normal(size=(hit.size, 3))
    obs[hit, rng.integers(0, J, hit.size)] += outlier_cm * d / np.linalg.norm(d, axis=1, keepdims=True)
    obs[rng.random((F, J)) < missing] = np.nan
    return obs


def evaluate(name, clip, clean, obs, limits, rest, check):
    t = clock()
    m, _ = C.mod("ik.recover").recover(obs, clip, limits, rest=rest)
    dt = clock() - t
    _, p = forward_kinematics(m)
    mpjpe = float(np.linalg.norm(p - clean, axis=-1).mean())
    ang = np.degrees(quat.angle(m.rotations, clip.rotations))
    inner = [j for j in range(clip.num_joints) if clip.skeleton.children(j)]
    outside = float((~check.contains(m.rotations, 1e-6)).mean())
    return {
        "name": name,
        "mpjpe": mpjpe,
        "rot": float(ang.mean()),
        "rot_inner": float(ang[:, inner].mean()),
        "outside": outside,
        "fps": clip.num_frames / dt,
    }


def solver_speed(clip, limits, frames: int) -> list[dict]:
    sk = clip.skeleton
    _, clean = forward_kinematics(clip)
    reps = int(np.ceil(frames / clip.num_frames))
    pos = np.concatenate([clean] * reps)[:frames]
    lr = np.concatenate([clip.rotations] * reps)[:frames]
    lp = np.concatenate([clip.positions] * reps)[:frames]
    _, t_fk = best_with_result(lambda: forward_kinematics_arrays(lr, lp, sk.parents), 5)
    data = f"{sk.num_joints} joints all observed, {frames} poses of obstacles1_subject1 in one batch"
    recs = [
        record(BENCH, "forward kinematics (anchor)", frames / t_fk, "frames/s", kind="rate", data=data + "; best of 5")
    ]
    noisy = pos + np.random.default_rng(1).normal(size=pos.shape) * 2.0
    for d, what in ((pos, "clean"), (noisy, "2 cm noise")):
        for label, lim in (("no limits", None), ("with limits", limits)):
            ik = WholeBodyIK(sk, lim, local_positions=clip.positions[0])
            ik.solve(d[:8])  # load the compiled kernel
            res, dt = best_with_result(lambda: ik.solve(d), 3)
            c0 = time.process_time()
            ik.solve(d)
            cpu = time.process_time() - c0
            name = f"WholeBodyIK.solve {what}, {label}"
            recs += [
                record(
                    BENCH,
                    f"{name}: wall",
                    frames / dt,
                    "frames/s",
                    kind="rate",
                    data=data + "; best of 3",
                    anchor="forward kinematics, same run",
                    anchor_value=frames / t_fk,
                    target=1000,
                    iterations=ik.iterations,
                ),
                record(
                    BENCH,
                    f"{name}: per CPU-second",
                    frames / cpu,
                    "frames/s",
                    kind="rate",
                    data=data + "; one run, process CPU time",
                ),
                record(BENCH, f"{name}: fit error", float(np.nanmean(res.error)), "cm", kind="quality", data=data),
            ]
    return recs


def run(quick: bool, seed: int = 0) -> list[dict]:
    if not LAFAN.is_dir():
        return [skipped(BENCH, "posture recovery", f"LAFAN1 clips not found at {LAFAN}")]
    frames = 300 if quick else 1500
    tests = TEST[:1] if quick else TEST
    noises = (2.0,) if quick else NOISE_CM
    train = [bvh.load(LAFAN / f"{n}.bvh") for n in TRAIN]
    t = clock()
    limits = JointLimits.fit(train, shape="ellipsoid", swing_twist=True)
    recs = [
        record(
            BENCH,
            "fit ellipsoid swing-twist limits",
            clock() - t,
            "s",
            data=f"{len(train)} LAFAN1 clips ({sum(m.num_frames for m in train)} frames); one run",
        )
    ]
    coupled = None
    if quick:
        recs.append(skipped(BENCH, "(c) coupled limits", "full mode only"))
    elif "coupled" in inspect.signature(JointLimits.fit).parameters:
        # coupled limits are implicit shapes conditioned on the parent's rotation (no swing-twist)
        t = clock()
        coupled = JointLimits.fit(train, shape="implicit", coupled=True)
        recs.append(
            record(BENCH, "fit coupled implicit limits", clock() - t, "s", data=f"{len(train)} LAFAN1 clips; one run")
        )
    else:
        recs.append(skipped(BENCH, "(c) coupled limits", "JointLimits.fit has no coupled=True in this build"))
    rest = WholeBodyIK(train[0].skeleton, limits).rest  # the limits' reference pose, used by every variant
    rng = np.random.default_rng(seed)
    rows = []
    for clip_name, start in tests:
        clip = bvh.load(LAFAN / f"{clip_name}.bvh")[start : start + frames]
        _, clean = forward_kinematics(clip)
        inside = float(limits.contains(clip.rotations, 1e-6).mean())
        data = f"lafan1/{clip_name} frames {start}..{start + clip.num_frames}"
        recs.append(
            record(
                BENCH,
                f"{clip_name}: original joint-frames outside the limits",
                100 * (1 - inside),
                "%",
                kind="quality",
                data=data,
            )
        )
        for noise in noises:
            obs = corrupt(clean, noise, rng)
            variants = [("(a) no limits", None), ("(b) limits", limits)]
            if coupled is not None:
                variants.append(("(c) coupled", coupled))
            d = f"{data}, {noise:.0f} cm noise + 5% 20 cm outliers + 10% missing, seed {seed}"
            for name, lim in variants:
                r = evaluate(name, clip, clean, obs, lim, rest, limits if lim is None else lim)
                r.update(noise=noise, clip=clip_name)
                rows.append(r)
                p = f"{clip_name} {noise:.0f} cm {name}"
                recs += [
                    record(BENCH, f"{p}: MPJPE", r["mpjpe"], "cm", kind="quality", data=d),
                    record(
                        BENCH,
                        f"{p}: rotation error",
                        r["rot"],
                        "deg",
                        kind="quality",
                        data=d,
                        inner_joints_deg=r["rot_inner"],
                    ),
                    record(BENCH, f"{p}: joint-frames outside", 100 * r["outside"], "%", kind="quality", data=d),
                    record(BENCH, f"{p}: recovery rate", r["fps"], "frames/s", kind="rate", data=d + "; one run"),
                ]
    recs += solver_speed(bvh.load(LAFAN / "obstacles1_subject1.bvh")[:2000], limits, 500 if quick else 2000)
    for noise in noises:
        a = [r for r in rows if r["noise"] == noise and r["name"].startswith("(a)")]
        b = [r for r in rows if r["noise"] == noise and r["name"].startswith("(b)")]
        d = f"{', '.join(c for c, _ in tests)}; {noise:.0f} cm noise"
        recs += [
            record(
                BENCH,
                f"{noise:.0f} cm: with limits, joint-frames outside (max over clips)",
                100 * max(r["outside"] for r in b),
                "%",
                kind="quality",
                data=d,
            ),
            record(
                BENCH,
                f"{noise:.0f} cm: rotation error, limits minus no limits",
                float(np.mean([rb["rot"] - ra["rot"] for ra, rb in zip(a, b)])),
                "deg",
                kind="quality",
                data=d,
            ),
            record(
                BENCH,
                f"{noise:.0f} cm: MPJPE, limits minus no limits",
                float(np.mean([rb["mpjpe"] - ra["mpjpe"] for ra, rb in zip(a, b)])),
                "cm",
                kind="quality",
                data=d,
            ),
        ]
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

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

Printed per noise level: MPJPE against the clean positions (cm, every joint-frame, missing ones
included), the angle between recovered and original local rotations (degrees; all joints, and
the joints with a child, whose swing the positions observe), the share of joint-frames outside
the limits, and recovery frames per second. Then the solver's own speed: ``WholeBodyIK.solve``
on 22 joints all observed, batched, against forward kinematics timed in the same run, as wall
time and per CPU-second of this process (one thread: what the solve costs on an idle core when
the machine is shared).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_recover.py [--frames 1500] [--seed 0]
"""

from __future__ import annotations

import argparse
import inspect
import time
from pathlib import Path

import numpy as np

from jointlimits import JointLimits
from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.ik import WholeBodyIK
from jointlimits.ik.recover import recover
from jointlimits.motion.skeleton import forward_kinematics, forward_kinematics_arrays
from _timing import best_with_result

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LAFAN = SHARED / "data" / "mocap" / "lafan1"
TRAIN = ["dance1_subject1", "fallAndGetUp3_subject1", "ground1_subject1", "multipleActions1_subject1",
         "walk4_subject1", "dance1_subject2", "fallAndGetUp2_subject2", "ground2_subject2"]
TEST = [("obstacles1_subject1", 1000), ("push1_subject2", 500)]
NOISE_CM = (1.0, 2.0, 4.0)


def corrupt(clean: np.ndarray, noise: float, rng: np.random.Generator, outlier_frames: float = 0.05,
            outlier_cm: float = 20.0, missing: float = 0.10) -> np.ndarray:
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
    t = time.perf_counter()
    m, _ = recover(obs, clip, limits, rest=rest)
    dt = time.perf_counter() - t
    _, p = forward_kinematics(m)
    mpjpe = float(np.linalg.norm(p - clean, axis=-1).mean())
    ang = np.degrees(quat.angle(m.rotations, clip.rotations))
    inner = [j for j in range(clip.num_joints) if clip.skeleton.children(j)]
    outside = float((~check.contains(m.rotations, 1e-6)).mean())
    return {"name": name, "mpjpe": mpjpe, "rot": float(ang.mean()), "rot_inner": float(ang[:, inner].mean()),
            "outside": outside, "fps": clip.num_frames / dt}


def solver_speed(clip, limits, frames: int) -> None:
    sk = clip.skeleton
    _, clean = forward_kinematics(clip)
    reps = int(np.ceil(frames / clip.num_frames))
    pos = np.concatenate([clean] * reps)[:frames]
    lr = np.concatenate([clip.rotations] * reps)[:frames]
    lp = np.concatenate([clip.positions] * reps)[:frames]
    _, t_fk = best_with_result(lambda: forward_kinematics_arrays(lr, lp, sk.parents), 5)
    print(f"\nsolver speed, {sk.num_joints} joints all observed, {frames} poses in one batch "
          f"(anchor: forward kinematics {frames / t_fk / 1e6:.2f} M frames/s in this run)")
    noisy = pos + np.random.default_rng(1).normal(size=pos.shape) * 2.0
    for data, what in ((pos, "clean"), (noisy, "2 cm noise")):
        for label, lim in (("no limits", None), ("with limits", limits)):
            ik = WholeBodyIK(sk, lim, local_positions=clip.positions[0])
            ik.solve(data[:8])  # load the compiled kernel
            res, dt = best_with_result(lambda: ik.solve(data), 3)
            c0 = time.process_time()
            ik.solve(data)
            cpu = time.process_time() - c0
            err = float(np.nanmean(res.error))
            print(f"  WholeBodyIK.solve {what:10s} {label:12s} {frames / dt:7.0f} frames/s wall, "
                  f"{frames / cpu:7.0f} per CPU-second  (<= {ik.iterations} iterations; {t_fk / dt * 1e3:.2f} "
                  f"per mille of FK speed; fit error {err:.3f} cm)  target >= 1,000 frames/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=1500, help="frames per evaluated excerpt")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--speed-frames", type=int, default=2000)
    args = ap.parse_args()
    if not LAFAN.is_dir():
        raise SystemExit(f"shared LAFAN1 clips not found at {LAFAN}")
    train = [bvh.load(LAFAN / f"{n}.bvh") for n in TRAIN]
    t = time.perf_counter()
    limits = JointLimits.fit(train, shape="ellipsoid", swing_twist=True)
    print(f"limits: ellipsoid, swing-twist, fitted on {len(train)} clips "
          f"({sum(m.num_frames for m in train)} frames) in {time.perf_counter() - t:.1f} s")
    coupled = None
    if "coupled" in inspect.signature(JointLimits.fit).parameters:
        # coupled limits are implicit shapes conditioned on the parent's rotation (no swing-twist)
        t = time.perf_counter()
        coupled = JointLimits.fit(train, shape="implicit", coupled=True)
        print(f"(c) coupled: implicit, parent-conditioned, fitted in {time.perf_counter() - t:.1f} s")
    else:
        print("(c) coupled limits: unavailable in this build (JointLimits.fit has no coupled=True)")
    rest = WholeBodyIK(train[0].skeleton, limits).rest  # the limits' reference pose, used by every variant
    rng = np.random.default_rng(args.seed)
    rows = []
    for clip_name, start in TEST:
        clip = bvh.load(LAFAN / f"{clip_name}.bvh")[start:start + args.frames]
        _, clean = forward_kinematics(clip)
        inside = float(limits.contains(clip.rotations, 1e-6).mean())
        print(f"\n{clip_name} frames {start}..{start + clip.num_frames}: original clip "
              f"{100 * (1 - inside):.2f}% joint-frames outside the limits")
        print(f"  {'noise':>5} {'variant':<16} {'MPJPE cm':>8} {'rot deg':>8} {'(inner)':>8} {'outside':>8} {'frames/s':>8}")
        for noise in NOISE_CM:
            obs = corrupt(clean, noise, rng)
            variants = [("(a) no limits", None), ("(b) limits", limits)]
            if coupled is not None:
                variants.append(("(c) coupled", coupled))
            for name, lim in variants:
                r = evaluate(name, clip, clean, obs, lim, rest, limits if lim is None else lim)
                r.update(noise=noise, clip=clip_name)
                rows.append(r)
                print(f"  {noise:5.0f} {name:<16} {r['mpjpe']:8.3f} {r['rot']:8.2f} {r['rot_inner']:8.2f} "
                      f"{100 * r['outside']:7.2f}% {r['fps']:8.0f}")
    solver_speed(bvh.load(LAFAN / "obstacles1_subject1.bvh")[:2000], limits, args.speed_frames)

    print("\nDone-when checks (over both clips):")
    for noise in NOISE_CM:
        a = [r for r in rows if r["noise"] == noise and r["name"].startswith("(a)")]
        b = [r for r in rows if r["noise"] == noise and r["name"].startswith("(b)")]
        out_b = max(r["outside"] for r in b)
        drot = np.mean([rb["rot"] - ra["rot"] for ra, rb in zip(a, b)])
        dmp = np.mean([rb["mpjpe"] - ra["mpjpe"] for ra, rb in zip(a, b)])
        print(f"  noise {noise:.0f} cm: with limits {100 * out_b:.3f}% joint-frames outside; rotation error "
              f"{drot:+.2f} deg vs no limits; MPJPE {dmp:+.3f} cm vs no limits")


if __name__ == "__main__":
    main()

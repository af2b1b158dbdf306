"""IK benchmark: two-bone throughput, CCD with limits (with/without restarts) on the LAFAN1 arm
protocol, single-solve latency, and ikpy on the same chain when it is installed.

Protocol: left arm (LeftShoulder, LeftArm, LeftForeArm -> LeftHand) of ``dance1_subject1.bvh``;
limits fitted on the OTHER shared LAFAN1 clips; targets are the LeftHand positions of 1,000
frames of the test clip; solve from the limits' reference pose with the clip's root/spine;
success = within 1 mm (0.1 cm) with every chain joint inside its limits.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_ik.py [--frames 1000] [--no-model] [--ikpy-frames 100]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.ik import CCDSolver, ik_two_bone, precompute_start_poses, two_bone
from jointlimits.ik.two_bone import ik_two_bone_numpy, two_bone_numpy
from jointlimits.limits.reach import ReachWindowLimit
from jointlimits.motion.skeleton import forward_kinematics
from _timing import best_with_result

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LAFAN = SHARED / "data" / "mocap" / "lafan1"
TEST_CLIP = "dance1_subject1.bvh"
ARM = ["LeftShoulder", "LeftArm", "LeftForeArm"]


def _per_call(fn, calls=20_000, repeat=5):
    """Fastest mean time of one call over ``calls`` back-to-back calls (seconds)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def bench_two_bone(n=1_000_000, mid=100_000):
    """Throughput at n and mid chains per call, and the cost of one call for one chain (the
    interactive case): its fixed part is that time minus one row of the big batch. Anchor: an
    empty numpy call (np.empty(4)) timed the same way in this run."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, 3))
    b = a + rng.normal(size=(n, 3))
    c = b + rng.normal(size=(n, 3))
    t = a + 1.5 * rng.normal(size=(n, 3))
    P, Lk, Lj = (quat.normalize(rng.normal(size=(n, 4))) for _ in range(3))
    fwd = rng.normal(size=(n, 3))
    two_bone(a[:10], b[:10], c[:10], t[:10], P[:10], Lk[:10], Lj[:10])  # load the compiled core
    ik_two_bone(a[:10], b[:10], c[:10], t[:10], fwd[:10], P[:10], Lk[:10], Lj[:10])
    anchor = _per_call(lambda: np.empty(4))
    print(f"anchor: np.empty(4) {1e6 * anchor:.3f} us per call in this run")
    runs = (("two_bone (geometric)", two_bone, (a, b, c, t, P, Lk, Lj), two_bone_numpy),
            ("ik_two_bone (demo)", ik_two_bone, (a, b, c, t, fwd, P, Lk, Lj), ik_two_bone_numpy))
    for name, fn, args, ref in runs:
        _, dt = best_with_result(lambda: fn(*args))
        part = tuple(x[:mid] for x in args)
        _, dm = best_with_result(lambda: fn(*part), 5)
        _, dnp = best_with_result(lambda: ref(*args), 1)
        one = tuple(x[0] for x in args)  # one chain: [3] / [4] inputs
        d1 = _per_call(lambda: fn(*one))
        print(f"{name:22s} {n / dt / 1e6:6.2f} M solves/s at {n:,}, {mid / dm / 1e6:6.2f} M at {mid:,} "
              f"({2 * mid / dm / 1e6:.2f} M rotations/s; target >= 2 M solves/s; numpy reference {n / dnp / 1e6:.2f} M/s)")
        print(f"{'':22s} one chain per call: {1e6 * d1:.2f} us = {1 / d1 / 1e3:.0f} k solves/s "
              f"({2 / d1 / 1e3:.0f} k rotations/s); fixed cost {1e6 * (d1 - dm / mid):.2f} us "
              f"= {(d1 - dm / mid) / anchor:.1f}x np.empty(4) (target <= 1 us)")


def bench_ikpy(test, idx, hand, train, rot, pos, targets, count):
    """ikpy on the same chain: each joint as three revolute links in the clip's channel order with
    per-axis Euler bounds (min/max over the training frames); targets in the chain's base frame."""
    import warnings

    from ikpy.chain import Chain
    from ikpy.link import OriginLink, URDFLink

    from jointlimits.motion.skeleton import forward_kinematics_arrays

    sk = test.skeleton
    order = "".join(c[0].lower() for c in sk.channels[idx[0]] if c.endswith("rotation"))
    eul = quat.to_euler(train, order)  # [F, 3 joints, 3 angles]
    lo, hi = eul.min(0), eul.max(0)
    links = [OriginLink()]
    off = test.positions[0, idx + [hand]]
    axes = {"x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]}
    for k, j in enumerate(idx):
        for m, ch in enumerate(order):
            links.append(URDFLink(f"{sk.names[j]}_{ch}", origin_translation=off[k] if m == 0 else np.zeros(3),
                                  origin_orientation=np.zeros(3), rotation=axes[ch], bounds=(lo[k, m], hi[k, m])))
    links.append(URDFLink("hand", origin_translation=off[-1], origin_orientation=np.zeros(3), joint_type="fixed"))
    chain = Chain(links, active_links_mask=[False] + [True] * (3 * len(idx)) + [False])
    base = sk.parents[idx[0]]
    sel = np.linspace(0, len(targets) - 1, min(count, len(targets))).astype(int)
    gr, gp = forward_kinematics_arrays(rot[sel, : base + 1], pos[sel, : base + 1], sk.parents[: base + 1])
    lt = quat.inv_mul_vec(gr[:, base], targets[sel] - gp[:, base])
    ok, t0 = 0, time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in range(len(sel)):
            ang = chain.inverse_kinematics(lt[f])
            err = np.linalg.norm(chain.forward_kinematics(ang)[:3, 3] - lt[f])
            ok += err <= 0.1
    dt = time.perf_counter() - t0
    print(f"{'ikpy (Euler bounds from data)':34s} success {100 * ok / len(sel):6.2f}%  {len(sel) / dt:9.0f} solves/s  "
          f"single {1e3 * dt / len(sel):.3f} ms mean  ({len(sel)} frames, 1 mm tolerance)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=1000)
    ap.add_argument("--no-model", action="store_true", help="skip the JointLimits(ellipsoid) model runs")
    ap.add_argument("--ikpy-frames", type=int, default=100, help="frames solved by ikpy (it is slow)")
    args = ap.parse_args()
    bench_two_bone()
    if not LAFAN.is_dir():
        print(f"LAFAN1 clips not found at {LAFAN}: skipping the CCD protocol")
        return
    clips = {p.name: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    test = clips[TEST_CLIP]
    sk = test.skeleton
    idx = [sk.index(j) for j in ARM]
    hand = sk.index("LeftHand")
    train = np.concatenate([m.rotations[:, idx] for k, m in clips.items() if k != TEST_CLIP])
    axes = sk.bone_directions()
    t0 = time.perf_counter()
    lims = [ReachWindowLimit.fit(train[:, k], axes[j], padding=0.05) for k, j in enumerate(idx)]
    off = test.positions[0, idx + [hand]]
    sp = precompute_start_poses(train, off, count=6, limits=lims)
    print(f"fit reach windows + 6 start poses on {len(train)} training frames: {time.perf_counter() - t0:.2f} s")
    for j, lim in zip(ARM, lims):
        print(f"  {j:13s} {lim}")
    frames = np.linspace(0, test.num_frames - 1, args.frames).astype(int)
    _, gp = forward_kinematics(test)
    targets = gp[frames, hand]
    rot, pos = test.rotations[frames], test.positions[frames]

    def report(name, solver, backend="auto", limits=None):
        limits = limits or solver.limits
        solver.solve_arrays(rot[:2], pos[:2], targets[:2], backend=backend)  # compile / warm up
        res, dt = best_with_result(lambda: solver.solve_arrays(rot, pos, targets, backend=backend))
        inside = np.all([limits[k].contains(res.rotations[:, k]) for k in range(3)], axis=0)
        ok = res.success & inside
        one, lat = best_with_result(lambda: solver.solve_arrays(rot[:1], pos[:1], targets[:1], backend=backend), repeat=50)
        lats = []
        for f in range(0, len(frames), max(1, len(frames) // 100)):
            _, l1 = best_with_result(lambda: solver.solve_arrays(rot[f:f + 1], pos[f:f + 1], targets[f:f + 1], backend=backend), 1)
            lats.append(l1)
        print(f"{name:34s} success {100 * ok.mean():6.2f}% (target >= 99%)  {len(frames) / dt:9.0f} solves/s "
              f"(target >= 2000)  single {1e6 * np.median(lats):.0f} us median / {1e6 * max(lats):.0f} us max "
              f"(target < 1 ms)  iters {res.iterations.mean():.1f}  restarts {res.restarts.mean():.3f}  "
              f"max err {res.error.max():.3f} cm  limits violated {int((~inside).sum())}")

    report("CCD reach-window, no restarts", CCDSolver(sk, ARM, "LeftHand", lims, None, tolerance=0.1))
    report("CCD reach-window, restarts", CCDSolver(sk, ARM, "LeftHand", lims, sp, tolerance=0.1))
    report("CCD reach-window, restarts (numpy)", CCDSolver(sk, ARM, "LeftHand", lims, sp, tolerance=0.1), "numpy")
    report("CCD no limits", CCDSolver(sk, ARM, "LeftHand", None, None, tolerance=0.1),
           limits=[type("Free", (), {"contains": staticmethod(lambda q: np.ones(q.shape[:-1], bool))})()] * 3)

    if not args.no_model:
        try:
            from jointlimits.limits.model import JointLimits
        except ImportError as e:
            print(f"JointLimits model unavailable: {e}")
        else:
            model = JointLimits.fit([m for k, m in clips.items() if k != TEST_CLIP], shape="ellipsoid", padding=0.05)
            s = CCDSolver(sk, ARM, "LeftHand", model, None, tolerance=0.1)
            report("CCD JointLimits(ellipsoid), no restarts", s)
            s.start_poses = precompute_start_poses(train, off, count=6, limits=s.limits)
            report("CCD JointLimits(ellipsoid), restarts", s)
            report("CCD JointLimits(ellipsoid) (numpy)", s, "numpy")

    try:
        import ikpy.chain  # noqa: F401
    except ImportError:
        print("ikpy not installed: skipping the ikpy comparison (pip install ikpy)")
    else:
        bench_ikpy(test, idx, hand, train, rot, pos, targets, args.ikpy_frames)


if __name__ == "__main__":
    main()

"""IK: two-bone throughput, CCD with limits (with/without restarts) on the LAFAN1 arm protocol,
single-solve latency, and ikpy on the same chain when it is installed.

Protocol: left arm (LeftShoulder, LeftArm, LeftForeArm -> LeftHand) of ``dance1_subject1.bvh``;
limits fitted on the OTHER shared LAFAN1 clips; targets are the LeftHand positions of 1,000
frames of the test clip (200 in quick mode); solve from the limits' reference pose with the clip's
root/spine; success = within 1 mm (0.1 cm) with every chain joint inside its limits.
Anchors in the same run: an empty numpy call (np.empty(4)) for the per-call costs, the numpy
two-bone solvers for the throughput, ikpy for the CCD rate (when installed).

    python -m benchmarks.bench_ik [--quick]

Full: 1M chains (100k at a time for the mid figure), 1,000 CCD frames, numpy backends, 100 ikpy
frames; quick: 100k / 10k chains, 200 frames, no numpy backends, 10 ikpy frames.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from jointlimits.ik import CCDSolver, ik_two_bone, precompute_start_poses, two_bone
from jointlimits.limits.reach import ReachWindowLimit

from . import _compat as C

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ik"))
try:  # the numpy reference of the two-bone kernels lives with the tests
    from two_bone_reference import ik_two_bone_numpy, two_bone_numpy
except ImportError:  # trees before it moved there
    from jointlimits.ik.two_bone import ik_two_bone_numpy, two_bone_numpy  # type: ignore[attr-defined,no-redef]
from ._common import LAFAN, main_single, record, skipped
from ._timing import best_with_result, clock

BENCH = "ik"
TEST_CLIP = "dance1_subject1.bvh"
ARM = ["LeftShoulder", "LeftArm", "LeftForeArm"]
EMPTY = "np.empty(4) call, same run"


def _per_call(fn, calls=20_000, repeat=5):
    """Fastest mean time of one call over ``calls`` back-to-back calls (seconds)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = clock()
        for _ in range(calls):
            fn()
        best = min(best, (clock() - t) / calls)
    return best


def bench_two_bone(quick: bool) -> list[dict]:
    """Throughput at n and mid chains per call, and the cost of one call for one chain (the
    interactive case): its fixed part is that time minus one row of the big batch."""
    quat = C.mod("motion.quat")
    n, mid, calls = (100_000, 10_000, 5_000) if quick else (1_000_000, 100_000, 20_000)
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, 3))
    b = a + rng.normal(size=(n, 3))
    c = b + rng.normal(size=(n, 3))
    t = a + 1.5 * rng.normal(size=(n, 3))
    P, Lk, Lj = (quat.normalize(rng.normal(size=(n, 4))) for _ in range(3))
    fwd = rng.normal(size=(n, 3))
    two_bone(a[:10], b[:10], c[:10], t[:10], P[:10], Lk[:10], Lj[:10])  # load the compiled core
    ik_two_bone(a[:10], b[:10], c[:10], t[:10], fwd[:10], P[:10], Lk[:10], Lj[:10])
    anchor = _per_call(lambda: np.empty(4), calls)
    recs = [record(BENCH, "np.empty(4) call (anchor)", 1e6 * anchor, "us", data=f"fastest mean of {calls:,} calls")]
    runs = (
        ("two_bone (geometric)", two_bone, (a, b, c, t, P, Lk, Lj), two_bone_numpy),
        ("ik_two_bone (demo)", ik_two_bone, (a, b, c, t, fwd, P, Lk, Lj), ik_two_bone_numpy),
    )
    for name, fn, args, ref in runs:
        _, dt = best_with_result(lambda: fn(*args))
        part = tuple(x[:mid] for x in args)
        _, dm = best_with_result(lambda: fn(*part), 5)
        _, dnp = best_with_result(lambda: ref(*args), 1)
        one = tuple(x[0] for x in args)  # one chain: [3] / [4] inputs
        d1 = _per_call(lambda: fn(*one), calls)
        npref = f"numpy {ref.__name__}, same run"
        recs += [
            record(
                BENCH,
                f"{name} throughput, big batch",
                n / dt / 1e6,
                "M solves/s",
                kind="rate",
                data=f"{n:,} random chains per call, best of 3 (both cores)",
                anchor=npref,
                anchor_value=n / dnp / 1e6,
                target=2.0,
            ),
            record(
                BENCH,
                f"{name} throughput, mid batch",
                mid / dm / 1e6,
                "M solves/s",
                kind="rate",
                data=f"{mid:,} random chains per call, best of 5",
                target=2.0,
            ),
            record(
                BENCH,
                f"{name} one chain per call",
                1e6 * d1,
                "us",
                anchor=EMPTY,
                anchor_value=1e6 * anchor,
                data=f"fastest mean of {calls:,} calls",
            ),
            record(
                BENCH,
                f"{name} fixed cost per call",
                1e6 * (d1 - dm / mid),
                "us",
                anchor=EMPTY,
                anchor_value=1e6 * anchor,
                data="one chain per call minus one row of the mid batch",
                target=1.0,
            ),
        ]
    return recs


def bench_ikpy(test, idx, hand, train, rot, pos, targets, count) -> list[dict]:
    """ikpy on the same chain: each joint as three revolute links in the clip's channel order with
    per-axis Euler bounds (min/max over the training frames); targets in the chain's base frame."""
    import warnings

    from ikpy.chain import Chain
    from ikpy.link import OriginLink, URDFLink

    quat = C.mod("motion.quat")
    forward_kinematics_arrays = C.mod("motion.skeleton").forward_kinematics_arrays
    sk = test.skeleton
    order = "".join(c[0].lower() for c in sk.channels[idx[0]] if c.endswith("rotation"))
    eul = quat.to_euler(train, order)  # [F, 3 joints, 3 angles]
    lo, hi = eul.min(0), eul.max(0)
    links = [OriginLink()]
    off = test.positions[0, idx + [hand]]
    axes = {"x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]}
    for k, j in enumerate(idx):
        for m, ch in enumerate(order):
            links.append(
                URDFLink(
                    f"{sk.names[j]}_{ch}",
                    origin_translation=off[k] if m == 0 else np.zeros(3),
                    origin_orientation=np.zeros(3),
                    rotation=axes[ch],
                    bounds=(lo[k, m], hi[k, m]),
                )
            )
    links.append(URDFLink("hand", origin_translation=off[-1], origin_orientation=np.zeros(3), joint_type="fixed"))
    chain = Chain(links, active_links_mask=[False] + [True] * (3 * len(idx)) + [False])
    base = sk.parents[idx[0]]
    sel = np.linspace(0, len(targets) - 1, min(count, len(targets))).astype(int)
    gr, gp = forward_kinematics_arrays(rot[sel, : base + 1], pos[sel, : base + 1], sk.parents[: base + 1])
    lt = quat.inv_mul_vec(gr[:, base], targets[sel] - gp[:, base])
    ok, t0 = 0, clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in range(len(sel)):
            ang = chain.inverse_kinematics(lt[f])
            err = np.linalg.norm(chain.forward_kinematics(ang)[:3, 3] - lt[f])
            ok += err <= 0.1
    dt = clock() - t0
    data = f"LAFAN1 left arm, {len(sel)} frames of {TEST_CLIP}, Euler bounds from the other clips, 1 mm tolerance"
    return [
        record(BENCH, "ikpy success", 100 * ok / len(sel), "%", kind="quality", data=data),
        record(BENCH, "ikpy rate", len(sel) / dt, "solves/s", kind="rate", data=data),
    ]


def bench_ccd(quick: bool) -> list[dict]:
    if not LAFAN.is_dir():
        return [skipped(BENCH, "CCD protocol", f"LAFAN1 clips not found at {LAFAN}")]
    bvh = C.mod("io.bvh")
    forward_kinematics = C.mod("motion.skeleton").forward_kinematics
    nframes = 200 if quick else 1000
    clips = {p.name: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    test = clips[TEST_CLIP]
    sk = test.skeleton
    idx = [sk.index(j) for j in ARM]
    hand = sk.index("LeftHand")
    train = np.concatenate([m.rotations[:, idx] for k, m in clips.items() if k != TEST_CLIP])
    axes = sk.bone_directions()
    t0 = clock()
    lims = [ReachWindowLimit.fit(train[:, k], axes[j], padding=0.05) for k, j in enumerate(idx)]
    off = test.positions[0, idx + [hand]]
    sp = precompute_start_poses(train, off, count=6, limits=lims)
    recs = [
        record(
            BENCH, "fit reach windows + 6 start poses", clock() - t0, "s", data=f"{len(train)} training frames, one run"
        )
    ]
    frames = np.linspace(0, test.num_frames - 1, nframes).astype(int)
    _, gp = forward_kinematics(test)
    targets = gp[frames, hand]
    rot, pos = test.rotations[frames], test.positions[frames]
    data = f"LAFAN1 left arm, {nframes} frames of {TEST_CLIP}, limits from the other clips"
    rates = {}

    def report(name, solver, backend="auto", limits=None):
        limits = limits or solver.limits
        solver.solve_arrays(rot[:2], pos[:2], targets[:2], backend=backend)  # compile / warm up
        res, dt = best_with_result(lambda: solver.solve_arrays(rot, pos, targets, backend=backend))
        inside = np.all([limits[k].contains(res.rotations[:, k]) for k in range(3)], axis=0)
        ok = res.success & inside
        lats = []
        for f in range(0, len(frames), max(1, len(frames) // 100)):
            _, l1 = best_with_result(
                lambda: solver.solve_arrays(rot[f : f + 1], pos[f : f + 1], targets[f : f + 1], backend=backend), 1
            )
            lats.append(l1)
        rates[name] = len(frames) / dt
        return [
            record(BENCH, f"{name} success", 100 * ok.mean(), "%", kind="quality", data=data, target=99.0),
            record(
                BENCH, f"{name} rate", len(frames) / dt, "solves/s", kind="rate", data=data + "; best of 3", target=2000
            ),
            record(
                BENCH,
                f"{name} single solve (median)",
                1e6 * np.median(lats),
                "us",
                data=data,
                max_us=1e6 * max(lats),
                target=1000.0,
            ),
            record(BENCH, f"{name} mean iterations", res.iterations.mean(), "", kind="quality", data=data),
            record(BENCH, f"{name} mean restarts", res.restarts.mean(), "", kind="quality", data=data),
            record(BENCH, f"{name} max error", res.error.max(), "cm", kind="quality", data=data),
            record(BENCH, f"{name} limits violated", int((~inside).sum()), "frames", kind="count", data=data),
        ]

    free = [type("Free", (), {"contains": staticmethod(lambda q: np.ones(q.shape[:-1], bool))})()] * 3
    recs += report("CCD reach-window, no restarts", CCDSolver(sk, ARM, "LeftHand", lims, None, tolerance=0.1))
    recs += report("CCD reach-window, restarts", CCDSolver(sk, ARM, "LeftHand", lims, sp, tolerance=0.1))
    if not quick:
        recs += report(
            "CCD reach-window, restarts (numpy)", CCDSolver(sk, ARM, "LeftHand", lims, sp, tolerance=0.1), "numpy"
        )
    recs += report("CCD no limits", CCDSolver(sk, ARM, "LeftHand", None, None, tolerance=0.1), limits=free)

    JointLimits = C.mod("limits.model").JointLimits
    model = JointLimits.fit([m for k, m in clips.items() if k != TEST_CLIP], shape="ellipsoid", padding=0.05)
    s = CCDSolver(sk, ARM, "LeftHand", model, None, tolerance=0.1)
    recs += report("CCD JointLimits(ellipsoid), no restarts", s)
    s.start_poses = precompute_start_poses(train, off, count=6, limits=s.limits)
    recs += report("CCD JointLimits(ellipsoid), restarts", s)
    if not quick:
        recs += report("CCD JointLimits(ellipsoid) (numpy)", s, "numpy")

    try:
        import ikpy.chain  # noqa: F401
    except ImportError:
        recs.append(skipped(BENCH, "ikpy on the same chain", "ikpy not installed (pip install -e '.[bench]')"))
    else:
        ik = bench_ikpy(test, idx, hand, train, rot, pos, targets, 10 if quick else 100)
        recs += ik
        for r in recs:  # the peer library as the rates' anchor
            if r["name"].startswith("CCD") and r["name"].endswith(" rate"):
                r.update(
                    record(
                        BENCH,
                        r["name"],
                        r["value"],
                        r["unit"],
                        kind="rate",
                        data=r["data"],
                        anchor="ikpy, same run",
                        anchor_value=ik[1]["value"],
                    )
                )
    return recs


def run(quick: bool) -> list[dict]:
    return bench_two_bone(quick) + bench_ccd(quick)


if __name__ == "__main__":
    main_single(BENCH, run)

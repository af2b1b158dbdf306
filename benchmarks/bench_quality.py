"""How well fitted limits generalise: leave-one-clip-out on the shared LAFAN1 clips.

    python benchmarks/bench_quality.py [--folds 10] [--random 200000] [--png quality.png] [--mirror]
                                       [--implicit-paddings 0,0.05,0.1,0.15]

Fit on nine clips, test on the tenth, for every clip. Per joint and on average:

* held-out recall: the fraction of the held-out clip's frames the limit admits;
* false accept: the fraction of Haar-uniform random rotations it admits (``contains`` tries
  both covers), the share of rotation space the limit lets through.

Shapes: box, ellipsoid, k-DOP (default padding) and implicit at several paddings; the "Done
when" check picks the smallest implicit padding whose mean recall is at least the k-DOP's with
no joint below 98.5%, and compares the mean false accepts. A PNG plots recall against false
accept as the padding varies, k-DOP and implicit on one plot. Measures only: nothing here drives
a fit.

``--mirror`` fits every shape (box, ellipsoid, k-DOP, implicit, coupled) with the training clips'
left/right mirror images added (``JointLimits.fit(mirror=True)``); the held-out clip is never
mirrored.
"""

from __future__ import annotations

import argparse
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from jointlimits import JointLimits, bvh, quat  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAFAN = ROOT.parent / "shared" / "data" / "mocap" / "lafan1"
BASE = [("box", 0.05), ("ellipsoid", 0.05), ("kdop", 0.05)]
KDOP_SWEEP = [0.0, 0.05, 0.1, 0.2]
IMPLICIT_SWEEP = [0.0, 0.05, 0.1, 0.15]


def evaluate(ms: list, shape: str, padding: float, folds: int, R: np.ndarray, coupled: bool = False,
             pairs: list[tuple[int, int]] = (), mirror: bool = False) -> tuple:
    """(recall [J], false accept [J], fit seconds per fold, pair recall [P], pair false accept [P])
    pooled over the folds; NaN for joints without a limit. A pair is admitted when both joints are."""
    J = ms[0].num_joints
    hit, seen, fa = np.zeros(J), np.zeros(J), np.zeros(J)
    phit, pfa = np.zeros(len(pairs)), np.zeros(len(pairs))
    tfit = 0.0
    active = None
    for k in range(folds):
        train = [m for i, m in enumerate(ms) if i != k]
        t = time.perf_counter()
        lim = JointLimits.fit(train, shape=shape, padding=padding, coupled=coupled, mirror=mirror)
        tfit += time.perf_counter() - t
        active = lim.active()
        c = lim.contains(ms[k].rotations)
        hit += c.sum(0)
        seen += c.shape[0]
        cr = lim.contains(R)
        fa += cr.mean(0)
        for n, (p, ch) in enumerate(pairs):
            phit[n] += (c[:, p] & c[:, ch]).sum()
            pfa[n] += (cr[:, p] & cr[:, ch]).mean()
    recall, falsea = hit / seen, fa / folds
    mask = np.ones(J, bool)
    mask[active] = False
    recall[mask] = np.nan
    falsea[mask] = np.nan
    return recall, falsea, tfit / folds, phit / seen[0], pfa / folds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--random", type=int, default=200_000)
    ap.add_argument("--png", default="bench_quality.png")
    ap.add_argument("--mirror", action="store_true", help="fit every shape with the clips' mirror images added")
    ap.add_argument("--implicit-paddings", default=",".join(map(str, IMPLICIT_SWEEP)),
                    help="comma list of the implicit paddings swept")
    args = ap.parse_args()
    sweep = [float(p) for p in args.implicit_paddings.split(",")]
    shown_pad = 0.1 if 0.1 in sweep else sweep[len(sweep) // 2]
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        print("(../shared/data/mocap/lafan1 not found: nothing to measure)")
        return
    ms = [bvh.load(p) for p in clips]
    folds = min(args.folds, len(ms))
    names = ms[0].skeleton.names
    rng = np.random.default_rng(0)
    # random local rotations, built per joint from one Haar-uniform batch (shuffled per joint)
    base = quat.normalize(rng.normal(size=(args.random, 4)))
    R = np.stack([base[rng.permutation(args.random)] for _ in range(ms[0].num_joints)], axis=1)
    print(f"leave-one-clip-out on {folds} of {len(ms)} LAFAN1 clips; {args.random:,} random rotations"
          f"{'; every shape fitted with mirrored clips added' if args.mirror else ''}")
    res = {}
    for shape, pad in BASE + [("implicit", p) for p in sweep] + [("kdop", p) for p in KDOP_SWEEP if p != 0.05]:
        res[shape, pad] = evaluate(ms, shape, pad, folds, R, mirror=args.mirror)
        rec, fa, tf = res[shape, pad][:3]
        print(f"  {shape:<10} padding {pad:<5}: recall mean {np.nanmean(rec):.4f} min {np.nanmin(rec):.4f} "
              f"({names[int(np.nanargmin(rec))]}), false accept mean {np.nanmean(fa):.4f} max {np.nanmax(fa):.4f} "
              f"({names[int(np.nanargmax(fa))]}); fit {tf:.2f} s")
    print(f"\nper joint (recall / false accept); padding 0.05, implicit {shown_pad}:")
    shown = [("box", 0.05), ("ellipsoid", 0.05), ("kdop", 0.05), ("implicit", shown_pad)]
    print(f"  {'joint':<16}" + "".join(f"{s:>20}" for s, _ in shown))
    rec0 = res["kdop", 0.05][0]
    for j in np.nonzero(np.isfinite(rec0))[0]:
        print(f"  {names[j]:<16}" + "".join(f"{res[c][0][j]:>10.4f}{res[c][1][j]:>10.4f}" for c in shown))
    kr, kf = res["kdop", 0.05][:2]
    root = [j for j in range(len(names)) if ms[0].skeleton.parents[j] < 0]
    for label, drop in (("all limited joints", []), ("without the root (its rotation is the facing)", root)):
        keep = np.ones(len(names), bool)
        keep[drop] = False
        km, kfa = np.nanmean(kr[keep]), np.nanmean(kf[keep])
        print(f"\nDone when, {label}: k-DOP (padding 0.05) recall {km:.4f} (min {np.nanmin(kr[keep]):.4f}), "
              f"false accept {kfa:.4f}")
        for p in sweep:
            ir, ifa = res["implicit", p][:2]
            good = np.nanmean(ir[keep]) >= km and np.nanmin(ir[keep]) >= 0.985
            print(f"  implicit padding {p:<5}: recall {np.nanmean(ir[keep]):.4f} (min {np.nanmin(ir[keep]):.4f}), "
                  f"false accept {np.nanmean(ifa[keep]):.4f} = {np.nanmean(ifa[keep]) / kfa:.2f}x"
                  f"{'  <- meets the recall conditions' if good else ''}")
    # coupled pairs: pair false accept against the product of the uncoupled ones, at the same padding
    from jointlimits.limits.coupled import humanoid_pairs

    sk = ms[0].skeleton
    pairs = [(sk.index(a), sk.index(b)) for a, b in humanoid_pairs(sk.names, sk.parents)]
    pad = 0.1
    unc = evaluate(ms, "implicit", pad, folds, R, pairs=pairs, mirror=args.mirror)
    cou = evaluate(ms, "implicit", pad, folds, R, coupled=True, pairs=pairs, mirror=args.mirror)
    print(f"\ncoupled implicit (padding {pad}): recall mean {np.nanmean(cou[0]):.4f}, false accept mean "
          f"{np.nanmean(cou[1]):.4f}; fit {cou[2]:.2f} s")
    print(f"  {'pair':<28}{'recall unc':>11}{'coupled':>9}{'FA product':>12}{'unc pair':>10}{'coupled':>10}{'ratio':>7}")
    for n, (p, c) in enumerate(pairs):
        prod = unc[1][p] * unc[1][c]
        print(f"  {names[p] + ' -> ' + names[c]:<28}{unc[3][n]:>11.4f}{cou[3][n]:>9.4f}{prod:>12.5f}"
              f"{unc[4][n]:>10.5f}{cou[4][n]:>10.5f}{cou[4][n] / max(prod, 1e-12):>7.2f}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4.5))
        for shape, pads, mk in (("kdop", KDOP_SWEEP, "o-"), ("implicit", sweep, "s-")):
            xs = [np.nanmean(res[shape, p][1]) for p in pads]
            ys = [np.nanmean(res[shape, p][0]) for p in pads]
            ax.plot(xs, ys, mk, label=shape)
            for p, x, y in zip(pads, xs, ys):
                ax.annotate(f"{p}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
        for shape in ("box", "ellipsoid"):
            ax.plot([np.nanmean(res[shape, 0.05][1])], [np.nanmean(res[shape, 0.05][0])], "x", label=shape)
        ax.set_xlabel("mean false accept (random rotations admitted)")
        ax.set_ylabel("mean held-out recall")
        ax.set_title(f"LAFAN1 leave-one-clip-out{', mirrored data' if args.mirror else ''} (labels: padding, rad)")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"wrote {args.png}")
    except ImportError:
        pass


if __name__ == "__main__":
    main()

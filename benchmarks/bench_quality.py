"""How well fitted limits generalise: leave-one-clip-out on the shared LAFAN1 clips.

    python -m benchmarks.bench_quality [--quick]

Full: 10 folds, 200,000 random rotations, the padding sweeps below; quick: 3 folds, 20,000 random
rotations, box / ellipsoid / k-DOP at 0.05 and implicit at 0.1 (other figures: compare quick with
quick). JL_BENCH_QUALITY_PNG=path writes the plot (full mode); JL_BENCH_QUALITY_PARTS=calibration runs
only the calibrated-padding figures (:func:`calibration`).

Fit on nine clips, test on the tenth, for every clip. Per joint and on average:

* held-out recall: the fraction of the held-out clip's frames the limit admits;
* false accept: the fraction of Haar-uniform random rotations it admits (``contains`` tries
  both covers), the share of rotation space the limit lets through. A coupled child's limit
  depends on its parent's rotation: its false accept is taken with the parent drawn from the
  random rotations the parent's own limit admits (the child's share of rotation space while its
  parent is within its limit; for any other limit that is the plain false accept).

Shapes: box, ellipsoid, k-DOP (default padding), implicit and implicit + coupled at several
paddings; the "Done when" check takes each implicit padding whose mean recall is at least the
k-DOP's with no joint below 98.5% and compares the mean false accepts. Coupled pairs: the pair
false accept (parent and child admitted together) against the uncoupled pair's at the same pair
recall (interpolated over the implicit padding sweep) and at the same padding. The PNG plots
recall against false accept as the padding varies. Measures only: nothing here drives a fit.

``run(quick, mirror=True)`` fits every shape (box, ellipsoid, k-DOP, implicit, coupled) with the training clips'
left/right mirror images added (``JointLimits.fit(mirror=True)``); the held-out clip is never
mirrored.
"""

from __future__ import annotations

import os

import numpy as np

from jointlimits import JointLimits

from . import _compat as C
from ._common import LAFAN, main_single, record, skipped
from ._timing import clock

BENCH = "quality"
bvh = C.mod("io.bvh")
quat = C.mod("motion.quat")
BASE = [("box", 0.05), ("ellipsoid", 0.05), ("kdop", 0.05)]
KDOP_SWEEP = [0.0, 0.05, 0.1, 0.2]
IMPLICIT_SWEEP = [0.0, 0.05, 0.1, 0.105, 0.11, 0.12, 0.15]
COUPLED_SWEEP = [0.1, 0.105, 0.11, 0.12]


def _own(limit):
    """A joint's own limit (a coupled child's: its uncoupled base)."""
    return getattr(limit, "base", limit)


def evaluate(
    ms: list,
    shape: str,
    padding: float,
    folds: int,
    R: np.ndarray,
    coupled: bool = False,
    pairs: list[tuple[int, int]] = (),
    mirror: bool = False,
    seed: int = 1,
) -> tuple:
    """(recall [J], false accept [J], fit seconds per fold, pair recall [P], pair false accept [P])
    pooled over the folds; NaN for joints without a limit. A pair is admitted when both joints are.

    A coupled child's false accept is its share of the random rotations admitted with its parent
    drawn from the random rotations the parent's own limit admits (for a limit that does not
    depend on the parent, that is its plain false accept). A pair's false accept is estimated
    as FA(parent) x FA(child's own limit) x P(the pair is admitted | each is admitted by its own
    limit), the last from pairs drawn from the rotations each admits: exact for uncoupled pairs
    (the product) and without the sampling noise of counting random pairs when both are small."""
    from jointlimits.limits.coupled import CoupledLimit

    rng = np.random.default_rng(seed)
    J = ms[0].num_joints
    hit, seen, fa = np.zeros(J), np.zeros(J), np.zeros(J)
    phit, pfa = np.zeros(len(pairs)), np.zeros(len(pairs))
    tfit = 0.0
    active = None
    for k in range(folds):
        train = [m for i, m in enumerate(ms) if i != k]
        t = clock()
        lim = JointLimits.fit(train, shape=shape, padding=padding, coupled=coupled, mirror=mirror)
        tfit += clock() - t
        active = lim.active()
        c = lim.contains(ms[k].rotations)
        hit += c.sum(0)
        seen += c.shape[0]
        own = {j: _own(lim.joints[j]).contains(R[:, j]) for j in active}  # random rotations admitted alone
        for j in active:
            child = lim.joints[j]
            ok = np.flatnonzero(own[lim.skeleton.index(child.parent)]) if isinstance(child, CoupledLimit) else []
            if len(ok):
                p = lim.skeleton.index(child.parent)
                fa[j] += child.contains(R[:, j], parent=R[ok[rng.integers(0, len(ok), len(R))], p]).mean()
            else:  # uncoupled (or a parent no random rotation reaches: the child's own limit)
                fa[j] += own[j].mean()
        for n, (p, ch) in enumerate(pairs):
            phit[n] += (c[:, p] & c[:, ch]).sum()
            pf = own[p].mean() * own[ch].mean()
            child = lim.joints[ch]
            if isinstance(child, CoupledLimit) and pf > 0:
                ip, ic = np.flatnonzero(own[p]), np.flatnonzero(own[ch])
                pf *= child.contains(
                    R[ic[rng.integers(0, len(ic), len(R))], ch], parent=R[ip[rng.integers(0, len(ip), len(R))], p]
                ).mean()
            pfa[n] += pf
    recall, falsea = hit / seen, fa / folds
    mask = np.ones(J, bool)
    mask[active] = False
    recall[mask] = np.nan
    falsea[mask] = np.nan
    return recall, falsea, tfit / folds, phit / seen[0], pfa / folds


def _at_recall(target: float, recall: list, fa: list) -> float:
    """The false accept of the uncoupled limits (paddings ascending) where their recall first
    reaches ``target``: interpolated between the paddings around it, the first padding's if it
    already does, NaN if none does."""
    for i, (r, f) in enumerate(zip(recall, fa)):
        if r >= target:
            if i == 0 or r == recall[i - 1]:
                return float(f)
            t = (target - recall[i - 1]) / (r - recall[i - 1])
            return float(fa[i - 1] + t * (f - fa[i - 1]))
    return float("nan")


def run(
    quick: bool, mirror: bool = False, folds: int | None = None, nrandom: int | None = None, sweeps: tuple | None = None
) -> list[dict]:
    """Records; ``folds``, ``nrandom`` and ``sweeps`` (implicit, coupled, k-DOP paddings) override the mode's."""
    if os.environ.get("JL_BENCH_QUALITY_PARTS") == "calibration":
        return calibration(quick)
    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        return [skipped(BENCH, "leave-one-clip-out", f"LAFAN1 clips not found at {LAFAN}")]
    from jointlimits.limits.coupled import humanoid_pairs

    nfolds = folds or (3 if quick else 10)
    nrandom = nrandom or (20_000 if quick else 200_000)
    sweep = [0.1] if quick else IMPLICIT_SWEEP
    csweep = [] if quick else COUPLED_SWEEP
    kdop_sweep = [] if quick else KDOP_SWEEP
    if sweeps is not None:
        sweep, csweep, kdop_sweep = (list(x) for x in sweeps)
    kdop_sweep = [p for p in kdop_sweep if p != 0.05]
    ms = [bvh.load(p) for p in clips]
    folds = min(nfolds, len(ms))
    sk = ms[0].skeleton
    names = sk.names
    pairs = [(sk.index(a), sk.index(b)) for a, b in humanoid_pairs(sk.names, sk.parents)]
    rng = np.random.default_rng(0)
    # random local rotations, built per joint from one Haar-uniform batch (shuffled per joint)
    base = quat.normalize(rng.normal(size=(nrandom, 4)))
    R = np.stack([base[rng.permutation(nrandom)] for _ in range(ms[0].num_joints)], axis=1)
    data = (
        f"leave-one-clip-out on {folds} of {len(ms)} LAFAN1 clips; {nrandom:,} random rotations"
        f"{'; every shape fitted with mirrored clips added' if mirror else ''}"
    )
    q = "quality"
    recs = []
    res = {}
    runs = (
        BASE + [("implicit", p) for p in sweep] + [("coupled", p) for p in csweep] + [("kdop", p) for p in kdop_sweep]
    )
    for shape, pad in runs:
        kind = "implicit" if shape == "coupled" else shape
        res[shape, pad] = evaluate(
            ms,
            kind,
            pad,
            folds,
            R,
            coupled=shape == "coupled",
            pairs=pairs if kind == "implicit" else (),
            mirror=mirror,
        )
        rec, fa, tf = res[shape, pad][:3]
        label = f"{shape} padding {pad}"
        per_joint = {names[j]: [float(rec[j]), float(fa[j])] for j in np.nonzero(np.isfinite(rec))[0]}
        recs += [
            record(
                BENCH,
                f"{label}: recall mean",
                np.nanmean(rec),
                "",
                kind=q,
                data=data,
                per_joint_recall_false_accept=per_joint,
            ),
            record(
                BENCH,
                f"{label}: recall min",
                np.nanmin(rec),
                "",
                kind=q,
                data=data,
                joint=names[int(np.nanargmin(rec))],
            ),
            record(BENCH, f"{label}: false accept mean", np.nanmean(fa), "", kind=q, data=data),
            record(
                BENCH,
                f"{label}: false accept max",
                np.nanmax(fa),
                "",
                kind=q,
                data=data,
                joint=names[int(np.nanargmax(fa))],
            ),
            record(BENCH, f"{label}: fit time per fold", tf, "s", data=data),
        ]
    kr, kf = res["kdop", 0.05][:2]
    root = [j for j in range(len(names)) if ms[0].skeleton.parents[j] < 0]
    for label, drop in (("all limited joints", []), ("without the root", root)):
        keep = np.ones(len(names), bool)
        keep[drop] = False
        km, kfa = np.nanmean(kr[keep]), np.nanmean(kf[keep])
        for shape, pads in (("implicit", sweep), ("coupled", csweep)):
            for p in pads:
                ir, ifa = res[shape, p][:2]
                good = np.nanmean(ir[keep]) >= km and np.nanmin(ir[keep]) >= 0.985
                what = "implicit" if shape == "implicit" else "implicit + coupled"
                recs.append(
                    record(
                        BENCH,
                        f"Done when, {label}: {what} padding {p} false accept",
                        np.nanmean(ifa[keep]),
                        "",
                        kind=q,
                        data=data,
                        anchor="k-DOP padding 0.05",
                        anchor_value=kfa,
                        recall=np.nanmean(ir[keep]),
                        recall_min=np.nanmin(ir[keep]),
                        kdop_recall=km,
                        meets_recall_conditions=bool(good),
                    )
                )
    # coupled pairs: pair false accept against the uncoupled pair's at the same pair recall (read
    # off the uncoupled limits' padding sweep, interpolated) and at the same padding
    for cp in csweep:
        cou = res["coupled", cp]
        for n, (p, c) in enumerate(pairs):
            same = _at_recall(
                cou[3][n],
                [res["implicit", x][3][n] for x in sorted(sweep)],
                [res["implicit", x][4][n] for x in sorted(sweep)],
            )
            pad_row = res["implicit", cp][4][n] if ("implicit", cp) in res else np.nan
            recs.append(
                record(
                    BENCH,
                    f"coupled padding {cp}, pair {names[p]} -> {names[c]}: false accept",
                    cou[4][n],
                    "",
                    kind=q,
                    data=data,
                    anchor="uncoupled at the same pair recall",
                    anchor_value=same,
                    pair_recall=cou[3][n],
                    uncoupled_same_padding=pad_row,
                )
            )
    recs += calibration(quick)
    png = os.environ.get("JL_BENCH_QUALITY_PNG")
    if png and not quick:
        plot(res, {"kdop": sorted([0.05] + kdop_sweep), "implicit": sweep, "coupled": csweep}, png, mirror)
    return recs


# --------------------------------------------------------------------------- calibrated paddings

TARGET = 0.99  # the target recall the calibration figures are taken at
UNIFORM_SWEEP = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3]  # one padding for every joint (allocation check)


def _subject(path) -> str:
    import re

    m = re.search(r"_subject\d+", path.name)
    return m.group(0) if m else path.name


def _recall(lim, test: list, joints: list[int]) -> np.ndarray:
    """Per joint of ``joints``: the fraction of the ``test`` clips' frames the limits admit."""
    c = np.concatenate([lim.contains(m.rotations)[:, joints] for m in test], axis=0)
    return c.mean(axis=0)


def _false_accept(lim, R: np.ndarray, joints: list[int]) -> np.ndarray:
    """Per joint: the fraction of random rotations its own limit admits."""
    return np.array([_own(lim.joints[j]).contains(R[:, j]).mean() for j in joints])


def _fold_fit(train: list, groups: list, correct: bool, allocation: str = "uniform"):
    """(limits, calibration) of implicit limits with calibrated paddings (warnings kept quiet)."""
    import warnings

    from jointlimits.limits.calibrate import calibrate, fitted_joints
    from jointlimits.limits.fit import _reference_pose

    todo = fitted_joints(train, None, None, False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal = calibrate(train, todo, _reference_pose(train, "mean"), TARGET, groups, 0.05, allocation, correct)
    return JointLimits.fit(train, shape="implicit", paddings=cal.paddings), cal, todo


def calibration(quick: bool, nrandom: int | None = None) -> list[dict]:
    """Calibrated paddings (``fit --target-recall``) on the shared LAFAN1 clips, leave one subject
    out (fit on subject 1, test on subject 2 and back) next to leave one clip out: how far the
    stored expected recall is from the held-out recall (corrected for the folds' smaller training
    sets and plain leave-one-out), the per-joint allocation against one padding at equal recall,
    the default implicit limit against the default k-DOP, and the fitting time."""
    import time
    import warnings

    clips = sorted(LAFAN.glob("*.bvh"))
    if not clips:
        return [skipped(BENCH, "calibration", f"LAFAN1 clips not found at {LAFAN}")]
    ms = [bvh.load(p) for p in clips]
    subj = [_subject(p) for p in clips]
    names = ms[0].skeleton.names
    nrandom = nrandom or (20_000 if quick else 100_000)
    rng = np.random.default_rng(0)
    base = quat.normalize(rng.normal(size=(nrandom, 4)))
    R = np.stack([base[rng.permutation(nrandom)] for _ in range(ms[0].num_joints)], axis=1)
    people = sorted(set(subj))
    loso = [([i for i, s in enumerate(subj) if s == p], [i for i, s in enumerate(subj) if s != p]) for p in people]
    nloco = 3 if quick else len(ms)
    loco = [([i for i in range(len(ms)) if i != k], [k]) for k in range(nloco)]
    q, recs = "quality", []
    # (outer folds, inner folds by subject): one subject's clips hold one group, so its inner
    # folds are clips (and fit warns)
    schemes = {
        "leave-one-subject-out": (loso, True),
        "leave-one-clip-out, inner folds by subject": (loco, True),
        "leave-one-clip-out, inner folds by clip": (loco, False),
    }
    joint_fits: dict = {}
    for scheme, (splits, by_subject) in schemes.items():
        data = f"LAFAN1, {scheme} ({len(splits)} folds), target recall {TARGET}"
        for correct in (True, False) if scheme != "leave-one-clip-out, inner folds by subject" else (True,):
            diffs, exps, meas, worst = [], [], [], (-1.0, "", 0)
            for k, (tr, te) in enumerate(splits):
                train = [ms[i] for i in tr]
                lim, cal, todo = _fold_fit(train, [subj[i] for i in tr] if by_subject else None, correct)
                got = _recall(lim, [ms[i] for i in te], todo)
                exp = np.array([cal.expected[names[j]] for j in todo])
                diffs.append(exp - got)
                exps.append(exp.mean())
                meas.append(got.mean())
                w = int(np.argmax(exp - got))
                if exp[w] - got[w] > worst[0]:
                    worst = (float(exp[w] - got[w]), names[todo[w]], k)
                if correct:
                    joint_fits[scheme, k] = (lim, todo, got)
            d = np.concatenate(diffs)
            per_joint = np.mean(diffs, axis=0)  # each joint over the folds
            label = f"calibration, {scheme}, {'corrected' if correct else 'plain leave-one-out'}"
            recs += [
                record(
                    BENCH,
                    f"{label}: expected recall, mean over joints and folds",
                    float(np.mean(exps)),
                    "",
                    kind=q,
                    data=data,
                    anchor="measured held-out recall",
                    anchor_value=float(np.mean(meas)),
                ),
                record(
                    BENCH,
                    f"{label}: expected - measured recall, mean over joints and folds",
                    float(d.mean()),
                    "",
                    kind=q,
                    data=data,
                    mean_abs=float(np.abs(d).mean()),
                    expected_mean=float(np.mean(exps)),
                    measured_mean=float(np.mean(meas)),
                    per_fold_expected=[float(x) for x in exps],
                    per_fold_measured=[float(x) for x in meas],
                    meets=bool(abs(d.mean()) <= 0.005 and per_joint.max() <= 0.01),
                ),
                record(
                    BENCH,
                    f"{label}: worst joint, expected - measured",
                    worst[0],
                    "",
                    kind=q,
                    data=data,
                    joint=worst[1],
                    fold=worst[2],
                    joints_more_than_1_point_below=int(np.sum(d > 0.01)),
                    of=int(d.size),
                ),
                record(
                    BENCH,
                    f"{label}: worst joint over the folds, expected - measured",
                    float(per_joint.max()),
                    "",
                    kind=q,
                    data=data,
                    joint=names[todo[int(np.argmax(per_joint))]],
                    joints_more_than_1_point_below=int(np.sum(per_joint > 0.01)),
                    of=int(per_joint.size),
                ),
            ]
    # allocation and defaults on the leave-one-subject-out folds
    data = f"LAFAN1, leave-one-subject-out (2 folds); {nrandom:,} random rotations"
    for k, (tr, te) in enumerate(loso):
        train, test = [ms[i] for i in tr], [ms[i] for i in te]
        ur, uf = [], []
        todo = joint_fits["leave-one-subject-out", k][1]
        for p in UNIFORM_SWEEP:
            u = JointLimits.fit(train, shape="implicit", padding=p)
            ur.append(float(_recall(u, test, todo).mean()))
            uf.append(float(_false_accept(u, R, todo).mean()))
        for alloc in ("joint", "balanced"):
            lim, _, todo = _fold_fit(train, [subj[i] for i in tr], True, alloc)
            got = _recall(lim, test, todo)
            fj = _false_accept(lim, R, todo).mean()
            same = _at_recall(float(got.mean()), ur, uf)
            recs.append(
                record(
                    BENCH,
                    f"allocation {alloc}, fold {k} (fit {people[k]}): false accept",
                    float(fj),
                    "",
                    kind=q,
                    data=data,
                    anchor="one padding at equal mean recall",
                    anchor_value=same,
                    recall=float(got.mean()),
                    recall_min=float(got.min()),
                    uniform_sweep={str(p): [r, f] for p, r, f in zip(UNIFORM_SWEEP, ur, uf)},
                    meets=bool(fj < same),
                )
            )
        kd = JointLimits.fit(train, shape="kdop")
        im = JointLimits.fit(train, shape="implicit")
        kr, kf = _recall(kd, test, todo), _false_accept(kd, R, todo)
        ir, ifa = _recall(im, test, todo), _false_accept(im, R, todo)
        recs.append(
            record(
                BENCH,
                f"default, fold {k} (fit {people[k]}): implicit at its defaults, mean recall",
                float(ir.mean()),
                "",
                kind=q,
                data=data,
                anchor="k-DOP at its defaults",
                anchor_value=float(kr.mean()),
                false_accept=float(ifa.mean()),
                kdop_false_accept=float(kf.mean()),
                false_accept_ratio=float(ifa.mean() / kf.mean()),
                recall_min=float(ir.min()),
                kdop_recall_min=float(kr.min()),
                implicit_padding=float(im.settings["padding"]),
                meets=bool(ir.mean() >= kr.mean() and ifa.mean() <= 0.9 * kf.mean()),
            )
        )
    # time: the 10 clips, coupled, with and without a target (CPU seconds)
    groups = subj
    t = time.process_time()
    JointLimits.fit(ms, shape="implicit", coupled=True)
    plain = time.process_time() - t
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        JointLimits.fit(ms, shape="implicit", coupled=True, target_recall=TARGET, groups=groups)
    target = time.process_time() - t
    recs.append(
        record(
            BENCH,
            "fit --target-recall, 10 LAFAN1 clips, coupled (CPU)",
            target,
            "s",
            data="10 LAFAN1 clips, groups by subject",
            anchor="plain fit (CPU)",
            anchor_value=plain,
        )
    )
    return recs


def plot(res: dict, sweeps: dict, path: str, mirror: bool = False) -> None:
    """Mean recall against mean false accept as the padding varies: all paddings, and a zoom on
    the recall the "Done when" asks for (the k-DOP's at padding 0.05, dashed; 0.75x its false
    accept, dotted)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    kr, kf = np.nanmean(res["kdop", 0.05][0]), np.nanmean(res["kdop", 0.05][1])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for n, ax in enumerate(axes):
        for (shape, pads), mk in zip(sweeps.items(), ("o-", "s-", "^-")):
            xs = [np.nanmean(res[shape, p][1]) for p in pads]
            ys = [np.nanmean(res[shape, p][0]) for p in pads]
            ax.plot(xs, ys, mk, label="implicit + coupled" if shape == "coupled" else shape)
            if n == 1:
                for p, x, y in zip(pads, xs, ys):
                    ax.annotate(f"{p}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
        for shape in ("box", "ellipsoid"):
            ax.plot([np.nanmean(res[shape, 0.05][1])], [np.nanmean(res[shape, 0.05][0])], "x", label=shape)
        ax.set_xlabel("mean false accept (random rotations admitted)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean held-out recall")
    axes[0].set_title(f"LAFAN1 leave-one-clip-out{', mirrored data' if mirror else ''}: every padding")
    axes[0].legend(loc="lower right")
    zoom = axes[1]
    zoom.axhline(kr, ls="--", c="0.4", lw=1, label="k-DOP (padding 0.05) recall")
    zoom.axvline(0.75 * kf, ls=":", c="0.4", lw=1, label="0.75x its false accept")
    zoom.set_ylim(kr - 0.004, 1.0003)
    zoom.set_xlim(0.5 * kf, 1.6 * kf)
    zoom.set_title("near the k-DOP's recall (labels: padding, rad)")
    zoom.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main_single(BENCH, run)

"""The human joint-limit model (issue #33): leave one person out over every person of the shared
clips, against per-convention k-DOP fits and a clinical (AAOS) box model.

    python -m benchmarks --only human          # or: python -m benchmarks.bench_human [--quick]

Who is who: ``benchmarks/people.py`` (one table). For each person P:

- *human (all)*: the model built on every other person of every convention; *human (shipped)*:
  built on the other people whose licences allow any use (CMU, Perfume, Adelaide); recall on P's
  joint-frames (every canonical segment's rig joint, every frame), the mean and the weakest segment;
- *k-DOP (convention)*: ``JointLimits.fit(shape="kdop")`` on the other people of P's convention,
  where there are any, measured on the same rig joints;
- FA: the fraction of Haar-uniform random local rotations each limit admits, averaged over the
  rig joints the human model limits (on P's first clip's rig);
- *clinical*: AAOS normal ranges as per-axis boxes on the anatomical angles (each asymmetric axis
  oriented the way that admits more of the pooled frames), recall over every person's frames and
  FA over Haar-uniform rotations; the human model's FA at the same frames is beside it.

Quick: the LOPO tables without the k-DOP baseline and with fewer random rotations.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from ._common import MOCAP, record, skipped

BENCH = "human"

#: AAOS normal ranges (degrees), as (flexion axis, abduction axis, rotation axis) intervals in the
#: anatomical frames; the sign of each axis is not fixed across sides, so each asymmetric interval
#: is tried both ways (see ``_orient``). Clavicle: no AAOS figure, +-30/+-45/+-30 (generous).
CLINICAL: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    "spine": ((-25, 80), (-35, 35), (-45, 45)),
    "neck": ((-45, 45), (-45, 45), (-60, 60)),
    "clavicle": ((-30, 30), (-45, 45), (-30, 30)),
    "upper_arm": ((-60, 180), (-180, 180), (-70, 90)),
    "forearm": ((0, 150), (-5, 5), (-80, 80)),
    "hand": ((-70, 80), (-20, 30), (-10, 10)),
    "thigh": ((-30, 120), (-30, 45), (-45, 45)),
    "shin": ((0, 135), (-5, 5), (-10, 10)),
    "foot": ((-50, 20), (-15, 35), (-10, 10)),
    "toes": ((-70, 40), (-5, 5), (-5, 5)),
}


def _part(seg: str) -> str:
    return seg.split("_", 1)[1] if seg.startswith(("left_", "right_")) else seg


def _haar(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _load() -> list[dict[str, Any]]:
    from jointlimits import io
    from jointlimits.limits.human import HumanModel
    from jointlimits.motion.anatomy import anatomical_rotations, anatomy

    from .people import clips

    out = []
    for rel, person, conv, _lic, ships in clips():
        m = io.load(MOCAP / rel)
        if rel.startswith("cmu_cgspeed_mb/"):
            m = m.frames(1, None)  # frame 0 is the converter's T-pose, not capture
        body = anatomy(m.skeleton, m)
        out.append(
            {
                "rel": rel,
                "person": person,
                "conv": conv,
                "ships": ships,
                "motion": m,
                "body": body,
                "points": HumanModel.points([m]),
                "anat": anatomical_rotations(m, body),
            }
        )
    return out


def _pool(items: list[dict[str, Any]], key: str = "points") -> dict[str, np.ndarray]:
    acc: dict[str, list[np.ndarray]] = {}
    for d in items:
        for k, v in d[key].items():
            acc.setdefault(k, []).append(v)
    return {k: np.concatenate(v) for k, v in acc.items()}


def _recall(inside: dict[str, np.ndarray]) -> tuple[float, str, float, dict[str, float]]:
    """(mean over every joint-frame, weakest segment, its recall, per segment)."""
    per = {k: float(v.mean()) for k, v in inside.items() if len(v)}
    tot = sum(len(v) for v in inside.values())
    mean = sum(float(v.sum()) for v in inside.values()) / tot
    worst = min(per, key=lambda k: per[k])
    return mean, worst, per[worst], per


def _rig_fa(lim: Any, joints: list[int], n: int, seed: int) -> float:
    q = _haar(n, seed)
    return float(np.mean([lim.joints[j].contains(q).mean() for j in joints if j in lim.joints]))


def _segment_joints(body: Any) -> dict[str, list[int]]:
    return {n: list(s.joints) for n, s in body.segments.items()}


def _orient(seg: str, angles: np.ndarray) -> list[tuple[float, float]]:
    """The clinical box of a segment, each asymmetric axis the way more of ``angles`` fit."""
    box = []
    for i, (lo, hi) in enumerate(CLINICAL[_part(seg)]):
        a = angles[:, i]
        fwd = np.mean((a >= lo) & (a <= hi))
        back = np.mean((a >= -hi) & (a <= -lo))
        box.append((lo, hi) if fwd >= back else (-hi, -lo))
    return box


def _in_box(angles: np.ndarray, box: list[tuple[float, float]]) -> np.ndarray:
    ok = np.ones(len(angles), bool)
    for i, (lo, hi) in enumerate(box):
        ok &= (angles[:, i] >= lo) & (angles[:, i] <= hi)
    return ok


def run(quick: bool = False) -> list[dict]:
    if not MOCAP.is_dir():
        return [skipped(BENCH, "leave one person out", f"shared clips not found at {MOCAP}")]
    from jointlimits import JointLimits
    from jointlimits.limits.human import HumanModel, load_model
    from jointlimits.motion import quat
    from jointlimits.motion.anatomy import anatomical_angles

    data = _load()
    people = sorted({d["person"] for d in data})
    n_rand = 4000 if quick else 20000
    recs: list[dict] = []
    print(f"  {len(data)} clips, {len(people)} people")
    header = "  person              conv         human(all) mean / weakest          human(shipped) mean / weakest"
    header += "      FA human   k-DOP(conv) mean / weakest / FA"
    print(header)
    lopo_all: dict[str, dict[str, float]] = {}
    for p in people:
        mine = [d for d in data if d["person"] == p]
        test = _pool(mine)
        row = {}
        for variant, train_sel in (
            ("all", [d for d in data if d["person"] != p]),
            ("shipped", [d for d in data if d["person"] != p and d["ships"]]),
        ):
            model = HumanModel.from_points(_pool(train_sel))
            mean, worst, wv, per = _recall(model.contains(test))
            row[variant] = (mean, worst, wv, model)
            if variant == "all":
                lopo_all[p] = per
            recs.append(
                record(
                    BENCH,
                    f"LOPO recall, human ({variant}), {p}",
                    mean,
                    "fraction",
                    kind="quality",
                    better="higher",
                    weakest=worst,
                    weakest_recall=wv,
                    per_segment=per,
                )
            )
        rig = mine[0]
        joints = [j for js in _segment_joints(rig["body"]).values() for j in js]
        lim_h = row["all"][3].limits(rig["motion"].skeleton, rig["motion"])
        fa_h = _rig_fa(lim_h, joints, n_rand, 1)
        recs.append(record(BENCH, f"FA, human (all), {p}", fa_h, "fraction", kind="quality", better="lower"))
        kd_txt = "-"
        others = [d for d in data if d["conv"] == rig["conv"] and d["person"] != p]
        if others and not quick:
            kd = JointLimits.fit([d["motion"] for d in others], shape="kdop")
            ins: dict[str, list[np.ndarray]] = {}
            for d in mine:
                c = kd.contains(d["motion"].rotations)
                for seg, js in _segment_joints(d["body"]).items():
                    ins.setdefault(seg, []).append(np.all(c[:, js], axis=1))
            kmean, kworst, kwv, _ = _recall({k: np.concatenate(v) for k, v in ins.items()})
            kfa = _rig_fa(kd, joints, n_rand, 1)
            kd_txt = f"{kmean * 100:6.2f}% / {kworst} {kwv * 100:.1f}% / {kfa:.4f}"
            recs.append(
                record(
                    BENCH,
                    f"LOPO recall, k-DOP ({rig['conv']}), {p}",
                    kmean,
                    "fraction",
                    kind="quality",
                    better="higher",
                    weakest=kworst,
                    weakest_recall=kwv,
                    fa=kfa,
                )
            )
        a, s = row["all"], row["shipped"]
        print(
            f"  {p:19s} {rig['conv']:12s} {a[0] * 100:6.2f}% / {a[1]} {a[2] * 100:.1f}%".ljust(72)
            + f"{s[0] * 100:6.2f}% / {s[1]} {s[2] * 100:.1f}%".ljust(36)
            + f"{fa_h:.4f}   {kd_txt}"
        )
        sys.stdout.flush()
    # the clinical model and the human model on the same frames (every person, pooled)
    anat = _pool(data, "anat")
    q = _haar(n_rand, 2)
    model_all = HumanModel.from_points(_pool(data))
    rand_pts = quat.to_scaled_angle_axis(quat.abs(q))
    rand_ang = anatomical_angles(q)
    c_in, c_fa, h_fa = [], [], []
    for seg, rot in anat.items():
        ang = anatomical_angles(rot)
        box = _orient(seg, ang)
        c_in.append(_in_box(ang, box))
        c_fa.append(float(_in_box(rand_ang, box).mean()))
        h_fa.append(float(model_all.segments[seg].contains(rand_pts, 1e-9).mean()))
    c_recall = float(np.concatenate(c_in).mean())
    lopo_mean = float(np.mean([np.mean(list(v.values())) for v in lopo_all.values()]))
    print(
        f"  clinical (AAOS boxes): recall {c_recall * 100:.2f}% of every person's joint-frames, "
        f"FA {np.mean(c_fa):.4f}; human (all, LOPO mean {lopo_mean * 100:.2f}%) "
        f"FA {np.mean(h_fa):.4f} (ratio {np.mean(h_fa) / np.mean(c_fa):.2f})"
    )
    recs.append(
        record(
            BENCH,
            "clinical AAOS boxes, recall (all people)",
            c_recall,
            "fraction",
            kind="quality",
            better="higher",
            fa=float(np.mean(c_fa)),
        )
    )
    recs.append(
        record(
            BENCH,
            "human (all), FA per segment (composed rotation)",
            float(np.mean(h_fa)),
            "fraction",
            kind="quality",
            better="lower",
            anchor="clinical AAOS FA",
            anchor_value=float(np.mean(c_fa)),
        )
    )
    # the shipped model's stored expected recall against the people it never saw (non-shipping sets)
    shipped = load_model()
    if shipped.expected_recall:
        test = _pool([d for d in data if not d["ships"]])
        _, _, _, per = _recall(shipped.contains(test))
        gaps = {k: abs(shipped.expected_recall[k] - v) for k, v in per.items() if k in shipped.expected_recall}
        print(
            f"  shipped model on LAFAN1, Bandai Namco, SFU: expected vs measured per segment, mean |gap| "
            f"{np.mean(list(gaps.values())) * 100:.2f} points, "
            f"worst {max(gaps.values()) * 100:.2f} ({max(gaps, key=lambda k: gaps[k])})"
        )
        recs.append(
            record(
                BENCH,
                "shipped model: |expected - measured| recall, mean over segments",
                float(np.mean(list(gaps.values()))),
                "fraction",
                kind="quality",
                better="lower",
                worst=max(gaps.values()),
            )
        )
    recs += _apply_checks(data, quick)
    recs += prior_check(data)
    return recs


def prior_check(data: list[dict[str, Any]]) -> list[dict]:
    """``fit --prior human`` on one clip of a person the shipped model never saw (LAFAN1 subject 2,
    push1): recall on their other clips against the shipped model alone and a fit on that clip."""
    from jointlimits import JointLimits
    from jointlimits.limits.human import load_model

    shipped = load_model()
    one = next(d for d in data if d["rel"] == "lafan1/push1_subject2.bvh")
    rest = [d for d in data if d["person"] == "lafan1/subject2" and d is not one]
    widened, _ = shipped.widened([one["motion"]])
    fitted = JointLimits.fit([one["motion"]])
    hit = {"human": 0, "one-clip fit": 0, "prior": 0}
    total = 0
    for d in rest:
        m = d["motion"]
        joints = [j for s in d["body"].segments.values() for j in s.joints]
        for name, lim in (
            ("human", shipped.limits_for_clip(m)),
            ("one-clip fit", fitted),
            ("prior", widened.limits_for_clip(m)),
        ):
            hit[name] += int(lim.contains(m.rotations)[:, joints].sum())
        total += m.num_frames * len(joints)
    rec = {k: v / total for k, v in hit.items()}
    print(
        "  fit --prior human on lafan1 push1_subject2, recall on subject 2's other clips: "
        + ", ".join(f"{k} {v * 100:.2f}%" for k, v in rec.items())
    )
    return [
        record(BENCH, f"prior check: recall, {k}", v, "fraction", kind="quality", better="higher")
        for k, v in rec.items()
    ]


def _apply_checks(data: list[dict[str, Any]], quick: bool) -> list[dict]:
    """``limits_for`` + apply on every shared clip: joint-frames outside after a BVH round trip
    (limits made again from the written clip), and the speed against a per-convention k-DOP."""
    import tempfile
    from pathlib import Path

    from jointlimits import JointLimits, io
    from jointlimits.limits.human import limits_for, load_model

    shipped = load_model()
    recs = []
    outside = limited = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in data:
            m = d["motion"]
            lim = shipped.limits_for_clip(m).select(None, None, m, False)
            out = lim.apply(m)
            path = Path(tmp) / Path(d["rel"]).name
            io.save(path, out)
            back = io.load(path)
            again = limits_for(back.skeleton, None, back).select(None, None, back, False)
            outside += int((again.violation(back.rotations) > 1e-6).sum())
            limited += int(np.any(lim.violation(m.rotations) > 1e-6, axis=1).sum())
    print(
        f"  apply human on all {len(data)} shared clips: {limited} frames limited, "
        f"{outside} joint-frames outside after (limits made again from the written BVH)"
    )
    recs.append(
        record(
            BENCH,
            "apply human, every shared clip: joint-frames outside after",
            outside,
            "joint-frames",
            kind="count",
            better="lower",
            frames_limited=limited,
        )
    )
    # speed: the human model against a k-DOP fitted on the same rig (same shape), same clip
    clip = next(d for d in data if d["rel"] == "lafan1/dance1_subject1.bvh")["motion"]
    other = [d["motion"] for d in data if d["person"] == "lafan1/subject2"]
    lim_h = limits_for(clip.skeleton, None, clip).select(None, None, clip, False)
    lim_k = JointLimits.fit(other, shape="kdop").select(None, None, clip, False)
    rates = {}
    for name, lim in (("human", lim_h), ("k-DOP file", lim_k)):
        best = float("inf")
        for _ in range(2 if quick else 5):
            t = time.perf_counter()
            lim.apply(clip)
            best = min(best, time.perf_counter() - t)
        rates[name] = clip.num_frames / best
    print(
        f"  apply speed on dance1_subject1: human {rates['human']:,.0f} frames/s, per-convention k-DOP "
        f"{rates['k-DOP file']:,.0f} frames/s (ratio {rates['human'] / rates['k-DOP file']:.2f})"
    )
    recs.append(
        record(
            BENCH,
            "apply human, frames/s (lafan1 dance1_subject1)",
            rates["human"],
            "frames/s",
            kind="rate",
            anchor="per-convention k-DOP file, same run",
            anchor_value=rates["k-DOP file"],
        )
    )
    return recs


if __name__ == "__main__":
    run("--quick" in sys.argv)

"""Before/after identity check of a refactor that must not change behaviour: run it once with the
old tree on PYTHONPATH and once with the new one, then compare the two output folders.

    PYTHONPATH=<old>/src python scripts/identity_check.py run /tmp/before
    PYTHONPATH=src       python scripts/identity_check.py run /tmp/after
    python scripts/identity_check.py compare /tmp/before /tmp/after

``run`` loads and saves every shared clip as BVH (bytes compared), and on two clips per convention
(the smallest and the median-sized) records the body-part and up-axis guesses, the contact
detectors (footlock's and the pop detector's), pop scores and cuts, the studio's IK chains and
footlock's output (default settings and a non-default set; rotations, positions, report, BVH bytes).
``compare`` prints per clip IDENTICAL or the items that differ (arrays compared bit for bit).
"""

from __future__ import annotations

import glob
import os
import pickle
import sys
from pathlib import Path

import numpy as np

ROOT = os.environ.get("JOINTLIMITS_MOCAP", str(Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"))


def run(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    from jointlimits.cleanup import footlock as fl
    from jointlimits.cleanup import pops
    from jointlimits.io import bvh
    from jointlimits.motion import units
    from jointlimits.studio import posing

    clips = sorted(glob.glob(f"{ROOT}/*/*.bvh"))
    # 1) BVH load -> save bytes, every clip
    bdir = out / "bvh"
    bdir.mkdir(exist_ok=True)
    for p in clips:
        m = bvh.load(p)
        dst = bdir / (Path(p).parent.name + "__" + Path(p).name)
        bvh.save(dst, m)
    print("bvh saved", len(clips), flush=True)
    # 2) per convention: the smallest and the median-sized clip
    res = {}
    picks = []
    for d in sorted(glob.glob(f"{ROOT}/*/")):
        fs = sorted(glob.glob(d + "*.bvh"), key=os.path.getsize)
        picks += sorted({fs[0], fs[len(fs) // 2]})
    for p in picks:
        m = bvh.load(p)
        sk = m.skeleton
        r = {}
        r["up"] = units.guess_up_axis(m)
        r["stature"] = units.stature(m)
        r["body_height"] = units.body_height(m)
        r["feet"] = fl.find_feet(sk)
        r["toes"] = fl.find_toes(sk, r["feet"])
        if r["feet"]:
            r["contacts"] = fl.detect_contacts(m)
            r["toe_contacts"] = (
                fl.detect_contacts(m, [t for t in r["toes"] if t is not None])
                if any(t is not None for t in r["toes"])
                else None
            )
        r["ground"] = pops.ground_contacts(m)
        r["ground_wide"] = pops.ground_contacts(m, 0.1, 3)
        rs, ps = pops.pop_scores(m)
        r["rs"], r["ps"] = rs, ps
        r["pops"] = pops.detect_pops(m)
        r["ik"] = {k: (v.joints, v.effector) for k, v in posing.available_ik_modes(sk).items()}
        if r["feet"]:
            mo, rep = fl.footlock(m)
            r["fl_rot"], r["fl_pos"] = mo.rotations, mo.positions
            r["fl_rep"] = repr(rep)
            fp = out / ("fl__" + Path(p).parent.name + "__" + Path(p).name)
            bvh.save(fp, mo)
            r["fl_bvh"] = fp.read_bytes()
            mo, rep = fl.footlock(
                m,
                height_threshold=0.09,
                velocity_threshold=0.5,
                min_frames=4,
                blend_frames=4,
                lock_height=True,
                toe_first=True,
                margin=2,
                hold_toe=False,
                refine=False,
            )
            r["fl2_rot"], r["fl2_pos"] = mo.rotations, mo.positions
            r["fl2_rep"] = repr(rep)
        res[Path(p).parent.name + "/" + Path(p).name] = r
        print(p, m.num_frames, "frames; feet", r["feet"], "pops", len(r["pops"]), flush=True)
    with open(out / "res.pkl", "wb") as f:
        pickle.dump(res, f)


def compare(a: Path, b: Path) -> None:
    fa = sorted((a / "bvh").iterdir())
    nb = 0
    for f in fa:
        same = f.read_bytes() == (b / "bvh" / f.name).read_bytes()
        nb += same
        if not same:
            print("BVH DIFF", f.name)
    print(f"BVH byte-identical: {nb}/{len(fa)}")
    ra, rb = pickle.load(open(a / "res.pkl", "rb")), pickle.load(open(b / "res.pkl", "rb"))

    def eq(x, y):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            return (
                x.shape == y.shape
                and x.dtype == y.dtype
                and np.array_equal(x, y, equal_nan=True)
                and x.tobytes() == y.tobytes()
            )
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(eq(x[k], y[k]) for k in x)
        return x == y

    for clip in ra:
        bad = [k for k in ra[clip] if k not in rb[clip] or not eq(ra[clip][k], rb[clip][k])]
        r = ra[clip]
        print(
            f"{clip}: {'IDENTICAL' if not bad else 'DIFF ' + str(bad)} ({len(ra[clip])} items; "
            f"pops {len(r['pops'])}, "
            f"contact frames {r['contacts'].sum(0).tolist() if 'contacts' in r else '-'}, "
            f"up {r['up']}, feet {r['feet']})"
        )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        run(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(__doc__)

"""Rebuild the shipped human model (src/jointlimits/limits/human_model.json).

    PYTHONPATH=src python scripts/build_human_model.py

Fits on the shared clips whose licences allow use in any product (``ships`` in
benchmarks/people.py: CMU, Perfume (MIT), Adelaide (Apache-2.0)), stores per segment the expected
recall measured by leaving each of those people out in turn, and the provenance: every clip with
its person and licence as the clips' README states it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.people import MOCAP, clips  # noqa: E402
from jointlimits import io  # noqa: E402
from jointlimits.limits.human import DEFAULT_PADDING, HumanModel  # noqa: E402


def main() -> None:
    rows = [c for c in clips() if c[4]]
    pts = []
    for rel, person, _conv, _lic, _ships in rows:
        m = io.load(MOCAP / rel)
        if rel.startswith("cmu_cgspeed_mb/"):
            m = m.frames(1, None)
        pts.append((person, HumanModel.points([m]), m.num_frames))

    def pool(sel):
        acc: dict[str, list] = {}
        for _, p, _ in sel:
            for k, v in p.items():
                acc.setdefault(k, []).append(v)
        return {k: np.concatenate(v) for k, v in acc.items()}

    people = sorted({p for p, _, _ in pts})
    hit: dict[str, float] = {}
    tot: dict[str, int] = {}
    for person in people:
        model = HumanModel.from_points(pool([x for x in pts if x[0] != person]))
        for k, c in model.contains(pool([x for x in pts if x[0] == person])).items():
            hit[k] = hit.get(k, 0.0) + float(c.sum())
            tot[k] = tot.get(k, 0) + len(c)
    provenance = {
        "built_by": "scripts/build_human_model.py",
        "people": len(people),
        "frames": int(sum(f for _, _, f in pts)),
        "clips": [{"clip": r[0], "person": r[1], "convention": r[2], "licence": r[3]} for r in rows],
        "expected_recall": "per segment, leave one person out over these people (pooled joint-frames)",
        "cmu_acknowledgement": "The data used in this project was obtained from mocap.cs.cmu.edu. "
        "The database was created with funding from NSF EIA-0196217.",
    }
    model = HumanModel.from_points(pool(pts), DEFAULT_PADDING, provenance)
    model.expected_recall = {k: round(hit[k] / tot[k], 5) for k in model.segments if tot.get(k)}
    out = ROOT / "src" / "jointlimits" / "limits" / "human_model.json"
    model.save(out)
    print(f"wrote {out} ({out.stat().st_size / 1000:.1f} kB): {len(people)} people, {provenance['frames']} frames")
    for k, v in model.expected_recall.items():
        print(f"  {k:16s} expected recall {v * 100:.2f}%")


if __name__ == "__main__":
    main()

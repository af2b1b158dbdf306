"""Who is who in the shared clips (../shared/data/mocap from the repository root): one table, used by the human model's
build (its provenance) and by ``bench_human`` (leave one person out).

Each entry: a clip pattern (relative to the mocap folder) -> (person, convention, licence, ships).
``ships`` is True only where the folder's README states terms that allow use in any product
(CMU: "You may include this data in commercially-sold products"; Perfume: MIT; Adelaide: Apache
2.0). Bandai Namco's clips come from 3 actors not identified per file: they count as one group.
"""

from __future__ import annotations

import re
from pathlib import Path

MOCAP = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap"

CMU = (
    "CMU Graphics Lab Motion Capture Database terms (free for research; may be included in "
    "commercially-sold products, not resold)"
)
#: (clip regex on the path relative to MOCAP, person, convention, licence as the README states it, ships)
PEOPLE: list[tuple[str, str, str, str, bool]] = [
    (r"^lafan1/.*_subject1\.bvh$", "lafan1/subject1", "lafan1", "CC BY-NC-ND 4.0", False),
    (r"^lafan1/.*_subject2\.bvh$", "lafan1/subject2", "lafan1", "CC BY-NC-ND 4.0", False),
    (r"^bandai_namco/", "bandai/actors1-3", "bandai", "CC BY-NC 4.0", False),
    (r"^cmu_cgspeed_mb/01_", "cmu/01", "cmu", CMU, True),
    (r"^cmu_cgspeed_mb/cmu_12_", "cmu/12", "cmu", CMU, True),
    (r"^cmu_cgspeed_max/131_", "cmu/131", "cmu_max", CMU, True),
    (r"^cmu_secondlife/60_", "cmu/60", "secondlife", CMU, True),
    (r"^cmu_secondlife/61_", "cmu/61", "secondlife", CMU, True),
    (r"^sfu/0005_", "sfu/0005", "sfu", "not stated (research use reported)", False),
    (r"^perfume/A_", "perfume/A", "perfume", "MIT", True),
    (r"^perfume/B_", "perfume/B", "perfume", "MIT", True),
    (r"^adelaide/louise", "adelaide/louise", "optitrack", "Apache-2.0", True),
    (r"^adelaide/milad", "adelaide/milad", "neuron", "Apache-2.0", True),
]


def person_of(rel: str) -> tuple[str, str, str, bool] | None:
    """(person, convention, licence, ships) of a clip path relative to MOCAP, or None."""
    for pat, person, conv, lic, ships in PEOPLE:
        if re.search(pat, rel):
            return person, conv, lic, ships
    return None


def clips() -> list[tuple[str, str, str, str, bool]]:
    """Every shared clip: (relative path, person, convention, licence, ships)."""
    out = []
    for p in sorted(MOCAP.glob("*/*.bvh")):
        rel = p.relative_to(MOCAP).as_posix()
        who = person_of(rel)
        if who is not None:
            out.append((rel, *who))
    return out

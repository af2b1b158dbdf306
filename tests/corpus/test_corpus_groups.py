"""Skeleton group names (a convention only when the names really follow it) and ``report`` on a
folder (one line per clip plus a summary)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.corpus.groups import Grouping, group_convention
from jointlimits.motion.naming import CONVENTIONS
from jointlimits.motion.skeleton import Skeleton

from conftest import MOCAP, needs_shared


def _chain(names: list[str]) -> Skeleton:
    J = len(names)
    offsets = np.tile([0.0, 1.0, 0.0], (J, 1))
    offsets[0] = 0
    return Skeleton(names, np.arange(-1, J - 1), offsets)


def test_group_names_a_convention_only_when_most_names_match():
    lafan = list(dict.fromkeys(CONVENTIONS["lafan1"].values()))
    assert group_convention(_chain(lafan)) == "lafan1"
    # 20 of 22 names and 2 of its own: 91% both ways, still lafan1
    assert group_convention(_chain(lafan[:20] + ["Extra1", "Extra2"])) == "lafan1"
    # the convention's names with 4 of 25 others (84%): custom
    assert group_convention(_chain(lafan[:21] + ["A", "B", "C", "D"])) == "custom"
    # every name is the convention's, but only 68% of the convention (a 31-joint table)
    cmu = list(dict.fromkeys(CONVENTIONS["cmu_max"].values()))
    assert group_convention(_chain(cmu[:21])) == "custom"
    assert Grouping().assign(_chain(cmu[:21]), []).startswith("custom-21j-")
    assert group_convention(_chain(["a", "b", "c"])) == "custom"


@needs_shared
def test_report_on_a_folder_is_one_line_per_clip(tmp_path: Path):
    folder = tmp_path / "clips"
    folder.mkdir()
    for name in ("A_test.bvh", "B_test.bvh"):
        (folder / name).symlink_to(MOCAP / "perfume" / name)
    lim = tmp_path / "lim.json"
    run = CliRunner().invoke
    assert run(main, ["fit", str(folder / "A_test.bvh"), "-o", str(lim)]).exit_code == 0
    res = run(main, ["report", str(lim), str(folder)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 3, res.output
    assert lines[0].startswith(f"{folder / 'A_test.bvh'}: 1300 frames, 0 of ")
    assert "most " in lines[1] and lines[2].startswith("all 2 clips (1 inside the limits): 2600 frames")
    detail = json.loads(run(main, ["report", str(lim), str(folder), "--json"]).output)
    assert len(detail["per_clip"]) == 2 and detail["per_clip"][1]["joints"][0]["frames_outside"] >= 0

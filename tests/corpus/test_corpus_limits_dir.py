"""``scan`` and ``clean`` take the folder ``fit -o DIR`` writes: each clip its skeleton's file; a clip
with none is listed with the reason and the command exits 3 (partial)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from jointlimits import JointLimits
from jointlimits.cli import main
from jointlimits.corpus.limitset import NO_LIMITS, load_limits, pick_limits
from jointlimits.errors import JointLimitsError
from jointlimits.io import bvh

from conftest import MOCAP, needs_shared


@pytest.fixture(scope="module")
def corpus_and_limits(tmp_path_factory):
    root = tmp_path_factory.mktemp("lim")
    clips, fitdir = root / "clips", root / "fit"
    clips.mkdir()
    fitdir.mkdir()
    sources = {
        "a.bvh": MOCAP / "bandai_namco" / "dataset-1_walk_normal_001.bvh",
        "b.bvh": MOCAP / "perfume" / "A_test.bvh",
        "c.bvh": MOCAP / "sfu" / "0005_Jogging001.bvh",
    }
    ms = {}
    for name, src in sources.items():
        ms[name] = bvh.load(src).frames(0, 150)
        bvh.save(clips / name, ms[name])
    for name in ("a.bvh", "b.bvh"):  # what fit -o DIR writes: one file per group
        JointLimits.fit(ms[name]).save(fitdir / f"{name[0]}.json")
    return clips, fitdir, ms


@needs_shared
def test_pick_limits_by_skeleton(corpus_and_limits):
    _, fitdir, ms = corpus_and_limits
    lims = load_limits(fitdir)
    assert len(lims) == 2
    assert pick_limits(lims, ms["b.bvh"].skeleton)[0] is lims[1]
    lim, why = pick_limits(lims, ms["c.bvh"].skeleton)
    assert lim is None and why.startswith(NO_LIMITS)
    with pytest.raises(JointLimitsError, match="no limits file"):
        load_limits(_empty(fitdir.parent))


def _empty(root: Path) -> Path:
    d = root / "empty"
    d.mkdir(exist_ok=True)
    return d


@needs_shared
def test_scan_and_clean_take_a_limits_folder(corpus_and_limits, threads, tmp_path):
    clips, fitdir, _ = corpus_and_limits
    run = CliRunner().invoke
    args = ["--limits", str(fitdir), "--scheduler", threads, "--json"]
    res = run(main, ["scan", str(clips), "-o", str(tmp_path / "s.parquet"), *args])
    assert res.exit_code == 3, res.output
    out = json.loads(res.output)
    assert [Path(d["file"]).name for d in out["without_limits"]] == ["c.bvh"] and out["clips"] == 3
    res = run(main, ["clean", str(clips), "--out", str(tmp_path / "clean"), *args])
    assert res.exit_code == 3, res.output
    out = json.loads(res.output)
    assert sorted(Path(p).name for p in out["outputs"]) == ["a.bvh", "b.bvh"]
    assert [(Path(d["file"]).name, d["reason"]) for d in out["skipped"]] == [("c.bvh", NO_LIMITS)]
    assert not (tmp_path / "clean" / "c.bvh").exists()
    # every clip has its limits: a complete run exits 0
    res = run(main, ["clean", str(clips / "a.bvh"), str(clips / "b.bvh"), "--out", str(tmp_path / "c2"), *args])
    assert res.exit_code == 0, res.output

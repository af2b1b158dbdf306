"""``human`` as the limits of recover, retarget, export, scan and clean (issue #33): limits from the
built-in human model for the clip's own skeleton, on two shared conventions (LAFAN1, CMU) and the
procedural humanoid; a skeleton the model cannot map is one error line, exit status 2.

Every count here is measured against the human limits made by the library
(:meth:`HumanModel.limits_for_clip`) on the input clip, not against what the command prints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import io
from jointlimits.cli import main
from jointlimits.limits.human import load_model
from jointlimits.motion.procedural import over_rotate, range_of_motion
from jointlimits.motion.skeleton import Motion, Skeleton

from conftest import MOCAP, SHARED_MISSING

#: name -> (shared clip, first frame, frames, over-rotation or 0): LAFAN1 outside the model as it
#: is; the CMU walk (inside the model, which was fitted on CMU clips) over-rotated
REAL = {
    "lafan1": ("lafan1/push1_subject2.bvh", 1170, 30, 0.0),
    "cmu": ("cmu_cgspeed_mb/cmu_12_01_walk.bvh", 0, 30, 0.6),
}
RIGS = ["lafan1", "cmu", "procedural"]


def run(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    return lines[0]


@pytest.fixture(scope="module")
def rigs(tmp_path_factory) -> dict[str, Path]:
    """Short clips in a folder: the real ones (when ../shared is there), the over-rotated procedural
    humanoid, and a chain with no humanoid body (``chain.bvh``, outside the folder)."""
    root = tmp_path_factory.mktemp("human")
    folder = root / "clips"
    folder.mkdir()
    out = {}
    for name, (rel, start, n, over) in REAL.items():
        if (MOCAP / rel).is_file():
            m = io.load(MOCAP / rel).frames(start, start + n)
            io.save(folder / f"{name}.bvh", over_rotate(m, over, seed=1) if over else m)
            out[name] = folder / f"{name}.bvh"
    io.save(folder / "procedural.bvh", range_of_motion(seconds=1.0, fps=30, over_rotation=0.5))
    out["procedural"] = folder / "procedural.bvh"
    sk = Skeleton(["root", "a", "b"], np.array([-1, 0, 1]), np.array([[0, 0, 0], [0, 1.0, 0], [0, 1.0, 0]]))
    rot = np.tile([1.0, 0, 0, 0], (5, 3, 1))
    io.save(root / "chain.bvh", Motion(sk, rot, np.broadcast_to(sk.offsets, (5, 3, 3)).copy(), 1 / 30))
    out["chain"] = root / "chain.bvh"
    out["folder"] = folder
    return out


def rig(rigs: dict[str, Path], name: str) -> Path:
    if name not in rigs:
        pytest.skip(SHARED_MISSING)
    return rigs[name]


def outside(clip: Motion, motion: Motion) -> int:
    """Joint-frames of ``motion`` outside the human limits made for ``clip`` (the library's)."""
    lim = load_model().limits_for_clip(clip)
    return int((lim.violation(motion.rotations) > 1e-6).sum())


@pytest.mark.parametrize("name", RIGS)
def test_recover_human_brings_every_frame_inside(rigs, name, tmp_path):
    src = rig(rigs, name)
    clip = io.load(src)
    assert outside(clip, clip) > 0  # the input has joint-frames outside the human limits
    out = tmp_path / "out.bvh"
    res = run("recover", src, "--skeleton", src, "--limits", "human", "-o", out, "--iterations", 4, "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["limits"] == "human" and d["outside_after"] == 0
    assert outside(clip, io.load(out)) == 0


def test_scan_human_counts_what_the_model_leaves_outside(rigs, threads, tmp_path):
    from jointlimits.corpus.scan import read_table

    res = run("scan", rigs["folder"], "--limits", "human", "-o", tmp_path / "s.csv", "--scheduler", threads, "--json")
    assert res.exit_code == 0, res.output
    rows = {Path(r["file"]).stem: r for r in read_table(tmp_path / "s.csv")}
    assert sorted(rows) == sorted(n for n in RIGS if n in rigs)
    for name, row in rows.items():
        clip = io.load(rigs[name])
        want = int((~load_model().limits_for_clip(clip).contains(clip.rotations)).sum())
        assert want > 0 and row["limits_joint_frames_outside"] == want, name


def test_clean_human_on_a_folder_of_three_conventions(rigs, threads, tmp_path):
    from jointlimits.corpus.scan import read_table

    out = tmp_path / "clean"
    res = run("clean", rigs["folder"], "--limits", "human", "--out", out, "--scheduler", threads, "--json")
    assert res.exit_code == 0, res.output
    names = [n for n in RIGS if n in rigs]
    assert sorted(Path(p).name for p in json.loads(res.output)["outputs"]) == sorted(f"{n}.bvh" for n in names)
    before = {Path(r["file"]).stem: r["limits_joint_frames_outside"] for r in read_table(out / "scan-before.parquet")}
    after = {Path(r["file"]).stem: r["limits_joint_frames_outside"] for r in read_table(out / "scan-after.parquet")}
    for n in names:
        clip = io.load(rigs[n])
        assert before[n] > 0 and after[n] == 0, n
        assert outside(clip, io.load(out / f"{n}.bvh")) == 0, n


#: export options that keep the tests short: the covering variant (no shrinking), few samples
EXPORT = ("--to", "mujoco", "--variant", "covering", "--samples", 100, "--random", 1000)


@pytest.fixture(scope="module")
def exported(rigs, tmp_path_factory) -> dict[str, Path]:
    """``export human --rig CLIP`` once per rig (its JSON beside): the export test reads it, the
    retarget test drives the MJCF body."""
    root = tmp_path_factory.mktemp("export")
    out = {}
    for name in RIGS:
        if name in rigs:
            xml = root / f"{name}.xml"
            res = run("export", "human", "--rig", rigs[name], *EXPORT, "-o", xml, "-q")
            assert res.exit_code == 0, res.output
            out[name] = xml
    return out


@pytest.mark.parametrize("name", RIGS)
def test_export_human_writes_the_human_limits_of_the_rig(rigs, exported, name):
    from jointlimits.export import export_limits

    src = rig(rigs, name)
    doc = json.loads(exported[name].with_suffix(".json").read_text())
    assert doc["limits"] == "human" and doc["rig"] == str(src)
    lim = load_model().limits_for_clip(io.load(src))
    want = export_limits(lim, "mujoco", variants=("covering",), samples=100, random=1000, seed=0).to_dict()
    assert doc["joints"] == json.loads(json.dumps(want["joints"]))
    assert exported[name].read_text().count("<joint") >= 3 * len(doc["joints"])


@pytest.mark.parametrize("name", ["lafan1", "procedural"])  # (mink's setup: 2-4 s a rig)
def test_retarget_human_onto_the_rig_it_was_exported_for(rigs, exported, name, tmp_path):
    pytest.importorskip("mink", reason="retarget needs jointlimits[mink]")
    src = rig(rigs, name)
    clip = io.load(src)
    start = int(np.argmax((load_model().limits_for_clip(clip).violation(clip.rotations) > 1e-6).any(axis=1)))
    out = tmp_path / "out.bvh"
    xml = exported[name]
    res = run("retarget", src, "--mjcf", xml, "--limits", "human", "-o", out, "--start", start, "--frames", 2, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["outside"] == 0
    m = io.load(out)
    assert m.skeleton.names == clip.skeleton.names
    assert outside(clip, clip.frames(start, start + 2)) > 0 and outside(clip, m) == 0


def test_a_skeleton_the_model_cannot_map_is_one_error_line(rigs, threads, exported, tmp_path):
    chain = rigs["chain"]
    out = tmp_path / "o.bvh"
    for args in (
        ("recover", chain, "--skeleton", chain, "--limits", "human", "-o", out),
        ("export", "human", "--rig", chain, "--to", "mujoco", "-o", tmp_path / "e.json"),
        ("scan", chain, "--limits", "human", "-o", tmp_path / "s.csv", "--scheduler", threads),
        ("clean", chain, "--limits", "human", "--out", tmp_path / "c", "--scheduler", threads),
    ):
        line = one_line_error(run(*args))
        assert "humanoid" in line, line
    xml = exported["procedural"]  # an MJCF of a humanoid, a source that is not one
    assert "humanoid" in one_line_error(run("retarget", chain, "--mjcf", xml, "--limits", "human", "-o", out))
    assert not list(tmp_path.iterdir())  # nothing written
    src = rigs["procedural"]
    # export needs a clip for the skeleton; --rig is for a human model only
    assert "--rig" in one_line_error(run("export", "human", "--to", "mujoco", "-o", tmp_path / "x.json"))
    lim = tmp_path / "lim.json"
    from jointlimits import JointLimits

    JointLimits.fit(io.load(src)).save(lim)
    assert "--rig is for a human model" in one_line_error(
        run("export", lim, "--rig", src, "--to", "mujoco", "-o", tmp_path / "x.json")
    )


def test_a_corpus_with_some_clips_the_model_cannot_map_is_partial(rigs, threads, tmp_path):
    chain, src = rigs["chain"], rigs["procedural"]
    args = ("--limits", "human", "--scheduler", threads, "--json")
    res = run("scan", src, chain, "-o", tmp_path / "s.csv", *args)
    assert res.exit_code == 3, res.output
    assert [Path(d["file"]).name for d in json.loads(res.output)["without_limits"]] == ["chain.bvh"]
    res = run("clean", src, chain, "--out", tmp_path / "c", *args)
    assert res.exit_code == 3, res.output
    d = json.loads(res.output)
    assert [Path(p).name for p in d["outputs"]] == ["procedural.bvh"]
    assert [Path(s["file"]).name for s in d["skipped"]] == ["chain.bvh"] and "humanoid" in d["skipped"][0]["reason"]


@pytest.mark.parametrize("command", ["recover", "retarget", "export", "scan", "clean"])
def test_help_and_guide_mention_human(command):
    res = run(command, "--help")
    assert res.exit_code == 0 and "'human'" in " ".join(res.output.split()), res.output
    guide = Path(__file__).resolve().parents[2] / "docs" / "guide"
    page = {"scan": "corpus", "clean": "corpus"}.get(command, command)
    lines = (guide / f"{page}.md").read_text().splitlines()
    assert any(line.startswith(f"$ jointlimits {command} ") and " human" in line for line in lines), page

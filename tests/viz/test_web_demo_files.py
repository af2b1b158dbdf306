"""The web demo's files (no browser): the copies agree, the writer refuses what the page cannot show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.errors import JointLimitsError
from jointlimits.limits.model import JointLimits
from jointlimits.motion import procedural
from jointlimits.viz.demo import ASSETS, STATIC_FILES, demo_rig, write_demo

ROOT = Path(__file__).resolve().parents[2]


def test_the_copies_agree():
    # scripts/build_wasm.py copies the JS API and the core into the package and writes docs/demo
    assert (ASSETS / "jointlimits.js").read_bytes() == (ROOT / "web" / "jointlimits.js").read_bytes()
    for f in ("jlcore.js", "jlcore.wasm"):
        assert (ASSETS / f).read_bytes() == (ROOT / "web" / "dist" / f).read_bytes(), f
    for f in STATIC_FILES:
        assert (ROOT / "docs" / "demo" / f).read_bytes() == (ASSETS / f).read_bytes(), f
    assert (ASSETS / "jlcore.wasm").stat().st_size <= 1_000_000


def test_rig_of_the_humanoid():
    sk = procedural.humanoid_skeleton()
    rig = demo_rig(sk)
    names = lambda js: [sk.names[j] for j in js]  # noqa: E731
    assert names(rig["twoBone"]) == ["LeftArm", "LeftForeArm", "LeftHand"]
    assert names(rig["ccd"]) == ["RightShoulder", "RightArm", "RightForeArm"] and sk.names[rig["ccdEnd"]] == "RightHand"
    assert names(rig["lookAt"]) == ["Spine", "Spine1", "Spine2", "Neck", "Head"]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    rom = procedural.range_of_motion(seconds=4.0, fps=15)
    p = tmp_path_factory.mktemp("lim") / "limits.json"
    JointLimits.fit([rom], shape="box").save(p)
    return p, rom


def test_write_demo_builds_in_the_limits_and_clip(tmp_path, fitted):
    p, rom = fitted
    page = write_demo(tmp_path / "d", JointLimits.load(p), rom, limits_name="mine.json")
    text = (tmp_path / "d" / "data.js").read_text()
    data = json.loads(text[text.index("=") + 1 :].strip().rstrip(";"))
    assert list(data["limitSets"]) == ["mine.json"] and len(data["clip"]["rotations"]) == rom.num_frames
    with pytest.raises(FileExistsError):
        write_demo(tmp_path / "d", JointLimits.load(p))
    assert page.is_file()


def test_view_demo_bad_input_is_one_line_exit_2(tmp_path, fitted):
    p, _ = fitted
    f = tmp_path / "file.txt"
    f.write_text("x")
    for args, msg in (
        (["view", str(p), "--demo", "-o", str(f)], "not a folder"),
        (["view", str(p), "a.bvh", "b.bvh", "--demo", "-o", str(tmp_path / "o")], "one clip"),
    ):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and msg in r.output and "Traceback" not in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()

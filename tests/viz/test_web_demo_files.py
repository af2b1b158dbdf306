"""The web demo's files (no browser): the copies agree, the writer refuses what the page cannot show."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.ik.ccd import ccd
from jointlimits.ik.look_at import look_at_chain
from jointlimits.ik.two_bone import two_bone
from jointlimits.limits.model import JointLimits
from jointlimits.motion import procedural
from jointlimits.motion.skeleton import forward_kinematics_arrays
from jointlimits.viz.demo import ASSETS, STATIC_FILES, demo_rig, write_demo

ROOT = Path(__file__).resolve().parents[2]


def test_one_copy_of_each_file():
    # the package's page assets are the only copy: the npm package and the docs page link to them
    pairs = [(ROOT / "web" / "jointlimits.js", "jointlimits.js")]
    pairs += [(ROOT / "web" / "dist" / f, f) for f in ("jlcore.js", "jlcore.wasm")]
    pairs += [(ROOT / "docs" / "demo" / f, f) for f in STATIC_FILES]
    for link, f in pairs:
        assert link.is_symlink() and link.resolve() == (ASSETS / f).resolve(), link
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


def _node_cases() -> tuple[dict, dict]:
    if shutil.which("node") is None:
        pytest.skip("node not found: the JS API's tests run in Node")
    demo = ROOT / "docs" / "demo" / "data.js"
    r = subprocess.run(
        ["node", str(ROOT / "web" / "test" / "cases.js"), str(demo)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    text = demo.read_text(encoding="utf-8")
    return json.loads(r.stdout), json.loads(text[text.index("=") + 1 :].strip().rstrip(";"))


def test_the_js_api_gives_the_python_packages_numbers(tmp_path):
    """web/test/cases.js under Node against the same calls of the Python package (native core)."""
    out, data = _node_cases()
    sk_d, rig = data["skeleton"], data["rig"]
    name = next(iter(data["limitSets"]))
    p = tmp_path / "l.json"
    p.write_text(json.dumps(data["limitSets"][name]))
    lim = JointLimits.load(p)
    J = len(sk_d["names"])
    parents = np.asarray(sk_d["parents"], np.int64)
    offsets = np.asarray(sk_d["offsets"], np.float64)
    pose = np.asarray(out["testPose"], np.float64).reshape(J, 4)
    close = lambda a, b, tol=1e-9: np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b))) <= tol  # noqa: E731
    assert close(out["project"], lim.project(pose[None])[0].reshape(-1))
    gr, gp = forward_kinematics_arrays(pose, offsets, parents)
    assert close(out["fk"][0], gr.reshape(-1), 1e-12) and close(out["fk"][1], gp.reshape(-1), 1e-12)
    a, b, c = rig["twoBone"]
    tgt = gp[c] + np.array([0.05, -0.1, 0.1])
    tb = two_bone(gp[a], gp[b], gp[c], tgt, gr[parents[a]], pose[a], pose[b])
    assert close(out["twoBone"][0], tb.root_local) and close(out["twoBone"][1], tb.mid_local)
    assert close(out["twoBone"][3], tb.end) and out["twoBone"][4] == int(tb.case)
    ch, e = rig["ccd"], rig["ccdEnd"]
    rest = pose.copy()
    rest[ch] = [1.0, 0.0, 0.0, 0.0]
    ct = forward_kinematics_arrays(rest, offsets, parents)[1][e]
    base = parents[ch[0]]
    off = np.vstack([offsets[ch], offsets[e]])
    for key, L in (("ccd", None), ("ccdLimited", [lim.joint(j) for j in ch])):
        r = ccd(
            gr[base][None],
            gp[base][None],
            off,
            ct[None],
            pose[ch][None],
            limits=L,
            tolerance=1e-3,
            max_iterations=100,
            max_restarts=0,
        )
        assert close(out[key][0], r.rotations[0].reshape(-1)), key
        assert out[key][2] == int(r.iterations[0]) and abs(out[key][3] - float(r.error[0])) <= 1e-9, key
    h = rig["lookAt"][-1]
    lt = gp[h] + np.array([0.8, 0.1, 1.0])
    chain = [sk_d["names"][j] for j in rig["lookAt"]]
    sk = lim.skeleton
    for key, L in (("lookAt", None), ("lookAtLimited", lim)):
        py = look_at_chain((pose[None], offsets[None], sk), chain, lt, forward=rig["forward"], limits=L)
        assert close(out[key], py[0].reshape(-1), 1e-9), key

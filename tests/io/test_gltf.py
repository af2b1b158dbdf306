"""glTF 2.0 import/export: round trips, foreign files with every interpolation, errors, the Khronos
validator and three.js's GLTFLoader in headless Chromium."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pygltflib
import pytest
from click.testing import CliRunner

from jointlimits import io as motion_io
from jointlimits.cli import main
from jointlimits.errors import FormatError, JointLimitsError
from jointlimits.io import bvh, gltf
from jointlimits.motion import quat

from conftest import MOCAP, ROOT, needs_shared

JS = ROOT / "tests" / "js"
NODE_MODULES = JS / "node_modules"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def rot_err(a: np.ndarray, b: np.ndarray) -> float:
    """Largest angle (radians) between two rotation arrays, computed without acos's flat spot."""
    d = quat.inv_mul(a, b)
    return float(np.max(2 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))))


@pytest.fixture(scope="module")
def clip(clips):
    return clips[0].frames(0, 120)


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("ext", [".glb", ".gltf"])
def test_round_trip_keeps_rotations_positions_and_layout(tmp_path, clip, ext):
    p = tmp_path / f"clip{ext}"
    motion_io.save(p, clip)
    back = motion_io.load(p)
    assert back.skeleton.names == clip.skeleton.names
    assert np.array_equal(back.skeleton.parents, clip.skeleton.parents)
    assert back.skeleton.channels == clip.skeleton.channels
    assert len(back.skeleton.end_sites) == len(clip.skeleton.end_sites)
    assert back.num_frames == clip.num_frames and back.frame_time == clip.frame_time
    assert rot_err(back.rotations, clip.rotations) < 1e-6
    # offsets are JSON doubles; animated translations are float32 (relative precision ~6e-8)
    assert np.allclose(back.skeleton.offsets, clip.skeleton.offsets, rtol=0, atol=1e-12)
    scale = np.abs(clip.positions).max()
    assert np.abs(back.positions - clip.positions).max() <= 1e-6 * scale


def test_units_and_up_axis_are_converted_and_undone(tmp_path, clip):
    p = tmp_path / "zup.gltf"
    gltf.save(p, clip, metres_per_unit=0.01, up="+z")
    doc = json.loads(p.read_text())
    root = doc["nodes"][0]
    # the root's rest translation is the offset in metres, turned from +Z up to +Y up
    off = clip.skeleton.offsets[0] * 0.01
    assert np.allclose(root["translation"], [off[0], off[2], -off[1]], atol=1e-12)
    assert doc["extras"]["jointlimits"]["metres_per_unit"] == 0.01
    back = gltf.load(p)
    assert rot_err(back.rotations, clip.rotations) < 1e-6
    assert np.allclose(back.skeleton.offsets, clip.skeleton.offsets, atol=1e-9)
    assert np.abs(back.positions - clip.positions).max() <= 1e-6 * np.abs(clip.positions).max()


def test_save_is_atomic_and_refuses_bad_input(tmp_path, clip):
    p = tmp_path / "clip.glb"
    p.write_bytes(b"keep me")
    bad = clip.copy()
    bad.rotations[3, 2] = np.nan
    with pytest.raises(JointLimitsError):
        motion_io.save(p, bad)
    assert p.read_bytes() == b"keep me"
    with pytest.raises(FormatError, match="metres_per_unit"):
        gltf.save(p, clip, metres_per_unit=-1.0)
    with pytest.raises(FormatError, match="up axis"):
        gltf.save(p, clip, up="up")
    assert p.read_bytes() == b"keep me"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["clip.glb"]


# --------------------------------------------------------------------------- foreign files
def _foreign(
    tmp_path: Path,
    interp: str,
    keys: np.ndarray,
    rot_values: np.ndarray,
    trans_values: np.ndarray,
    skin: bool = True,
    name: str = "foreign.gltf",
    wrapper: dict | None = None,
) -> Path:
    """A 3-joint chain (root has a non-identity rest rotation) written with pygltflib by hand."""
    import base64

    blob = bytearray()
    g = pygltflib.GLTF2(asset=pygltflib.Asset(version="2.0"))

    def acc(arr: np.ndarray, kind: str, minmax: bool = False) -> int:
        a = np.ascontiguousarray(arr, np.float32)
        off = len(blob)
        blob.extend(a.tobytes())
        g.bufferViews.append(pygltflib.BufferView(buffer=0, byteOffset=off, byteLength=a.nbytes))
        ac = pygltflib.Accessor(bufferView=len(g.bufferViews) - 1, componentType=5126, count=a.shape[0], type=kind)
        if minmax:
            ac.min, ac.max = [float(a.min())], [float(a.max())]
        g.accessors.append(ac)
        return len(g.accessors) - 1

    g.nodes = [
        pygltflib.Node(name="wrapper", children=[1], **(wrapper or {})),
        pygltflib.Node(name="pelvis", children=[2], translation=[0, 1, 0], rotation=[0, 0, 0.6, 0.8]),
        pygltflib.Node(name="spine", children=[3], translation=[0, 0.2, 0]),
        pygltflib.Node(name="head", translation=[0, 0.3, 0]),
    ]
    if skin:
        g.skins = [pygltflib.Skin(joints=[1, 2, 3])]
    t = acc(keys[:, None], "SCALAR", minmax=True)
    a = pygltflib.Animation(
        samplers=[
            pygltflib.AnimationSampler(input=t, output=acc(rot_values, "VEC4"), interpolation=interp),
            pygltflib.AnimationSampler(input=t, output=acc(trans_values, "VEC3"), interpolation=interp),
        ]
    )
    a.channels = [
        pygltflib.AnimationChannel(sampler=0, target=pygltflib.AnimationChannelTarget(node=2, path="rotation")),
        pygltflib.AnimationChannel(sampler=1, target=pygltflib.AnimationChannelTarget(node=1, path="translation")),
    ]
    g.animations = [a]
    g.scenes = [pygltflib.Scene(nodes=[0])]
    g.buffers = [
        pygltflib.Buffer(
            byteLength=len(blob), uri="data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()
        )
    ]
    p = tmp_path / name
    p.write_text(g.gltf_to_json())
    return p


KEYS = np.array([0.0, 0.5, 0.7, 1.5])
AXES = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 1, 0]]) / np.linalg.norm(
    [[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 1, 0]], axis=1, keepdims=True
)
ROTS = quat.from_angle_axis(np.array([0.1, 0.9, 1.4, 0.3]), AXES)  # w, x, y, z
TRANS = np.array([[0, 1, 0], [0.2, 1, 0], [0.2, 0.9, 0.4], [1, 1, 1]], float)


def _expected_linear(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    i = np.clip(np.searchsorted(KEYS, t, side="right") - 1, 0, len(KEYS) - 2)
    u = (t - KEYS[i]) / (KEYS[i + 1] - KEYS[i])
    from scipy.spatial.transform import Rotation, Slerp

    r = Slerp(KEYS, Rotation.from_quat(ROTS[:, [1, 2, 3, 0]]))(t).as_quat()[:, [3, 0, 1, 2]]
    return r, TRANS[i] + (TRANS[i + 1] - TRANS[i]) * u[:, None]


@pytest.mark.parametrize("skin", [True, False])
def test_linear_samplers_resampled_with_slerp(tmp_path, skin):
    p = _foreign(tmp_path, "LINEAR", KEYS, ROTS[:, [1, 2, 3, 0]], TRANS, skin=skin)
    m = gltf.load(p, fps=10)
    assert m.skeleton.names == ["pelvis", "spine", "head"]
    assert m.num_frames == 16 and m.frame_time == pytest.approx(0.1)
    t = np.arange(16) / 10
    r, x = _expected_linear(t)
    assert rot_err(m.rotations[:, 1], r) < 1e-6
    assert np.allclose(m.positions[:, 0], x, atol=1e-6)
    # joints without channels keep their rest rotation and translation
    assert rot_err(m.rotations[:, 0], np.array([0.8, 0, 0, 0.6])) < 1e-6
    assert np.allclose(m.positions[:, 2], [0, 0.3, 0])
    assert np.allclose(m.skeleton.offsets, [[0, 1, 0], [0, 0.2, 0], [0, 0.3, 0]])


def test_transforms_above_the_skeleton_are_folded_into_the_root(tmp_path):
    # an armature node turning Z-up into Y-up with a centimetre scale, as exporters write
    wrapper = {"rotation": [-np.sqrt(0.5), 0, 0, np.sqrt(0.5)], "scale": [0.01] * 3, "translation": [1, 2, 3]}
    plain = gltf.load(_foreign(tmp_path, "LINEAR", KEYS, ROTS[:, [1, 2, 3, 0]], TRANS, name="a.gltf"), fps=10)
    m = gltf.load(
        _foreign(tmp_path, "LINEAR", KEYS, ROTS[:, [1, 2, 3, 0]], TRANS, name="b.gltf", wrapper=wrapper), fps=10
    )
    from jointlimits import forward_kinematics

    gr0, gp0 = forward_kinematics(plain)
    gr, gp = forward_kinematics(m)
    w = quat.from_angle_axis(-np.pi / 2, np.array([1.0, 0, 0]))
    assert np.allclose(gp, np.array([1, 2, 3]) + 0.01 * quat.mul_vec(w, gp0), atol=1e-9)
    assert rot_err(gr, quat.mul(w, gr0)) < 1e-9
    assert rot_err(m.rotations[:, 1:], plain.rotations[:, 1:]) < 1e-12  # local rotations below the root unchanged


def test_default_rate_comes_from_the_key_times(tmp_path):
    keys = np.arange(5) / 24.0
    p = _foreign(tmp_path, "LINEAR", keys, ROTS[[0, 1, 2, 3, 3]][:, [1, 2, 3, 0]], TRANS[[0, 1, 2, 3, 3]])
    m = gltf.load(p)
    assert m.fps == 24 and m.num_frames == 5
    assert rot_err(m.rotations[:4, 1], ROTS) < 1e-6


def test_step_samplers_hold_the_previous_key(tmp_path):
    p = _foreign(tmp_path, "STEP", KEYS, ROTS[:, [1, 2, 3, 0]], TRANS)
    m = gltf.load(p, fps=10)
    t = np.arange(16) / 10
    i = np.searchsorted(KEYS, t + 1e-9, side="right") - 1
    assert rot_err(m.rotations[:, 1], ROTS[i]) < 1e-6
    assert np.allclose(m.positions[:, 0], TRANS[i], atol=1e-6)


def test_cubic_spline_samplers_follow_hermite_curves(tmp_path):
    tangents = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, 0.0], [0.0, 3.0, 1.0], [2.0, 2.0, 2.0]])
    trans = np.stack([tangents, TRANS, -tangents], axis=1).reshape(-1, 3)  # in-tangent, value, out-tangent
    zero4 = np.zeros((4, 4))
    rots = np.stack([zero4, ROTS[:, [1, 2, 3, 0]], zero4], axis=1).reshape(-1, 4)
    p = _foreign(tmp_path, "CUBICSPLINE", KEYS, rots, trans)
    m = gltf.load(p, fps=20)
    t = np.arange(m.num_frames) / 20
    i = np.clip(np.searchsorted(KEYS, t, side="right") - 1, 0, 2)
    d = KEYS[i + 1] - KEYS[i]
    s = (t - KEYS[i]) / d
    h = [2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2]
    x = (
        h[0][:, None] * TRANS[i]
        + (h[1] * d)[:, None] * -tangents[i]
        + h[2][:, None] * TRANS[i + 1]
        + (h[3] * d)[:, None] * tangents[i + 1]
    )
    assert np.allclose(m.positions[:, 0], x, atol=1e-5)
    # zero tangents: normalised blend with smoothstep weights (unit quaternions, keys hit exactly)
    assert np.allclose(np.linalg.norm(m.rotations, axis=-1), 1)
    on_key = np.isin(np.round(t, 6), KEYS)
    assert rot_err(m.rotations[on_key, 1], ROTS[np.searchsorted(KEYS, t[on_key])]) < 1e-6


def test_errors_name_the_problem(tmp_path):
    p = tmp_path / "bad.glb"
    p.write_bytes(b"not a glb at all")
    with pytest.raises(FormatError, match="bad.glb"):
        gltf.load(p)
    p = _foreign(tmp_path, "LINEAR", KEYS, ROTS[:3, [1, 2, 3, 0]], TRANS[:3], name="short.gltf")
    doc = json.loads(p.read_text())
    doc["accessors"][0]["count"] = 4  # claim 4 keys for 3 values
    p.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="key times"):
        gltf.load(p)
    doc["animations"][0]["samplers"][0]["interpolation"] = "BEZIER"
    p.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="BEZIER"):
        gltf.load(p)
    doc["buffers"][0]["uri"] = "missing.bin"
    p.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="missing.bin"):
        gltf.load(p)
    with pytest.raises(JointLimitsError, match="unknown motion file type"):
        motion_io.load(tmp_path / "clip.c3d")


# --------------------------------------------------------------------------- real clips
REAL = [
    "lafan1/walk4_subject1.bvh",
    "bandai_namco/dataset-1_bow_normal_001.bvh",
    "cmu_cgspeed_max/131_01.bvh",
    "cmu_cgspeed_mb/01_01.bvh",
    "sfu/0005_Jogging001.bvh",
    "perfume/A_test.bvh",
    "adelaide/milad.bvh",
    "cmu_secondlife/60_05_scaled.bvh",
]


@needs_shared
@pytest.mark.parametrize("name", REAL)
def test_bvh_gltf_bvh_on_real_clips(tmp_path, name):
    src = bvh.load(MOCAP / name).frames(0, 240)
    bvh.save(tmp_path / "a.bvh", src)
    a = bvh.load(tmp_path / "a.bvh")
    motion_io.save(tmp_path / "a.glb", a)
    bvh.save(tmp_path / "b.bvh", motion_io.load(tmp_path / "a.glb"))
    b = bvh.load(tmp_path / "b.bvh")
    assert b.skeleton.names == a.skeleton.names and b.skeleton.channels == a.skeleton.channels
    assert b.num_frames == a.num_frames and b.frame_time == a.frame_time
    assert rot_err(b.rotations, a.rotations) < 1e-6
    assert np.abs(b.skeleton.offsets - a.skeleton.offsets).max() < 1e-9
    assert np.abs(b.positions - a.positions).max() <= 1e-6 * np.abs(a.positions).max()


# --------------------------------------------------------------------------- the CLI
def test_commands_accept_gltf(tmp_path, clips):
    clip, over = clips
    motion_io.save(tmp_path / "train.glb", clip.frames(0, 200))
    motion_io.save(tmp_path / "over.gltf", over.frames(0, 200))
    r = CliRunner()
    res = r.invoke(main, ["info", str(tmp_path / "train.glb")])
    assert res.exit_code == 0 and "200 frames" in res.output
    res = r.invoke(main, ["fit", str(tmp_path / "train.glb"), "-o", str(tmp_path / "lim.json"), "-q"])
    assert res.exit_code == 0, res.output
    res = r.invoke(
        main, ["apply", str(tmp_path / "lim.json"), str(tmp_path / "over.gltf"), "-o", str(tmp_path / "limited.glb")]
    )
    assert res.exit_code == 0, res.output
    from jointlimits import JointLimits

    lim = JointLimits.load(tmp_path / "lim.json")
    limited = motion_io.load(tmp_path / "limited.glb")
    assert lim.violation(limited.rotations).max() < 1e-5
    res = r.invoke(main, ["report", str(tmp_path / "lim.json"), str(tmp_path / "limited.glb"), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["joints"]
    (tmp_path / "broken.glb").write_bytes(b"glTF\x02\x00\x00\x00garbage")
    res = r.invoke(main, ["info", str(tmp_path / "broken.glb")])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "broken.glb" in res.output


# --------------------------------------------------------------------------- Khronos validator
def _node_or_skip(package: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the glTF validator and three.js tests need it (apt-get install nodejs)")
    if not (NODE_MODULES / package).is_dir():
        pytest.skip(f"{NODE_MODULES / package} not found: run `npm ci` in tests/js")
    return node


def _validate(paths: list[Path]) -> list[dict]:
    node = _node_or_skip("gltf-validator")
    out = subprocess.run(
        [node, str(JS / "validate.mjs"), *map(str, paths)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_exports_pass_the_khronos_validator(tmp_path, clip):
    paths = [tmp_path / "clip.glb", tmp_path / "clip.gltf"]
    for p in paths:
        motion_io.save(p, clip)
    gltf.save(tmp_path / "zup.glb", clip, metres_per_unit=0.01, up="+z")
    paths.append(tmp_path / "zup.glb")
    if MOCAP.is_dir():
        motion_io.save(tmp_path / "cmu.glb", bvh.load(MOCAP / "cmu_cgspeed_max/131_01.bvh").frames(0, 120))
        paths.append(tmp_path / "cmu.glb")
    reports = _validate(paths)
    assert len(reports) == len(paths)
    for p, rep in zip(paths, reports):
        issues = rep["issues"]
        msgs = [(m["code"], m.get("pointer")) for m in issues["messages"] if m["severity"] <= 1]
        assert issues["numErrors"] == 0 and issues["numWarnings"] == 0, f"{p.name}: {msgs}"
        assert rep["info"]["animationCount"] == 1 and rep["info"]["hasSkins"]


def test_the_validator_catches_a_broken_file(tmp_path, clip):
    p = tmp_path / "clip.gltf"
    motion_io.save(p, clip)
    doc = json.loads(p.read_text())
    doc["accessors"][doc["animations"][0]["samplers"][0]["output"]]["count"] += 1
    p.write_text(json.dumps(doc))
    assert _validate([p])[0]["issues"]["numErrors"] > 0


# --------------------------------------------------------------------------- three.js in Chromium
_PAGE = """<!doctype html><html><head><script type="importmap">
{"imports": {"three": "/three/build/three.module.js", "three/addons/": "/three/examples/jsm/"}}
</script></head><body><script type="module">
import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";
new GLTFLoader().load("/%s", (g) => {
  const clip = g.animations[0];
  let bones = 0;
  g.scene.traverse((o) => { if (o.isBone) bones += 1; });
  const mixer = new THREE.AnimationMixer(g.scene);
  mixer.clipAction(clip).play();
  mixer.setTime(clip.duration / 2);
  window.result = {duration: clip.duration, tracks: clip.tracks.length, bones,
                   names: clip.tracks.map((t) => t.name), ok: true};
}, undefined, (e) => { window.result = {ok: false, error: String(e)}; });
</script></body></html>"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def test_three_gltfloader_in_headless_chromium(tmp_path, clip):
    _node_or_skip("three")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium) for the browser test")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    motion_io.save(tmp_path / "clip.glb", clip)
    (tmp_path / "three").symlink_to(NODE_MODULES / "three")
    (tmp_path / "index.html").write_text(_PAGE % "clip.glb")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(tmp_path))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    errors: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
                page.wait_for_function("() => window.result !== undefined", timeout=30_000)
                res = page.evaluate("() => window.result")
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    assert res["ok"], res.get("error")
    assert not errors, errors
    sk = clip.skeleton
    rotating = [j for j in range(sk.num_joints) if sk.rotation_order(j) or j == 0]
    moving = [j for j in range(sk.num_joints) if sk.has_position_channels(j)]
    assert res["tracks"] == len(rotating) + len(moving)
    assert res["duration"] == pytest.approx((clip.num_frames - 1) * clip.frame_time, abs=1e-5)
    assert res["bones"] == sk.num_joints
    assert f"{sk.names[0]}.position" in res["names"] and f"{sk.names[1]}.quaternion" in res["names"]

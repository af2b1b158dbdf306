"""The web demo (docs/demo, issue 37) in headless Chromium, driven by the npm package playwright-core
(web/test/page_eval.cjs; nothing downloads a browser), and its JS API under Node.

One browser session over a static server runs every in-page check (tests read its result): the
core's projections against the native core on the shared golden points for every compiled shape,
the same numbers as the JS API under Node, the limits toggle after a real mouse drag, look-at
spreading over spine and head, and that the update loop runs (its rate and the page's load time
are measured by ``python -m benchmarks --only web_demo``). A second session opens the page
that ``jointlimits view --demo`` writes, from file://.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from jointlimits import _core
from jointlimits.limits.box import Box, OrientedBox
from jointlimits.limits.compiled import _shape_dict
from jointlimits.limits.ellipsoid import Ellipsoid
from jointlimits.limits.kdop import KDop
from jointlimits.limits.model import JointLimits
from jointlimits.motion import quat

from conftest import GOLDEN, SHARED_MISSING

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
DEMO = ROOT / "docs" / "demo"
CHROMIUM = Path("/usr/bin/chromium")
EVAL = WEB / "test" / "page_eval.cjs"


def _missing() -> str | None:
    if os.environ.get("JL_BROWSER_TESTS") != "1":
        return "the web demo's browser tests (30 s of setup) need JL_BROWSER_TESTS=1 (.ci/run runs them apart)"
    if shutil.which("node") is None:
        return "node not found: the web demo's tests run in Node and headless Chromium"
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        return "web/node_modules/playwright-core not installed (cd web && npm ci): the web demo's browser tests skip"
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium) for the web demo's tests"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def page_eval(url: str, body: str, size: str = "1000x700", shot: Path | None = None) -> dict:
    cmd = ["node", str(EVAL), url, size] + ([str(shot)] if shot else [])
    r = subprocess.run(cmd, input=body, capture_output=True, text=True, timeout=180, cwd=WEB)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["pageError"] is None, out["pageError"]
    assert not [e for e in out["errors"] if "favicon" not in e and "404" not in e], out["errors"]
    return out


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(_Quiet, directory=str(DEMO))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    httpd.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def golden_shapes() -> tuple[dict[str, dict], np.ndarray]:
    """A compiled shape of every kind fitted on the golden cloud, and the golden points."""
    if not (GOLDEN / "projections.json").is_file():
        pytest.skip(SHARED_MISSING)
    d = json.loads((GOLDEN / "projections.json").read_text())
    cloud = np.asarray(d["limits"]["source_cloud"], np.float64)
    pts = np.asarray(d["points"], np.float64)
    e, k = Ellipsoid.fit(cloud), KDop.fit(cloud)
    axis = np.array([0.0, 0.6, 0.8])
    shapes = [Box.fit(cloud).compile(), OrientedBox.fit(cloud).compile(), e.compile(), e.compile_section(axis)]
    slabs = KDop(position=k.position, rotation=k.rotation, axes=k.axes, mins=k.mins, maxs=k.maxs, exact=False)
    shapes += [k.compile(), k.compile_section(axis), slabs.compile()]
    out = {}
    for s in shapes:
        out.setdefault(s.kind, _shape_dict(s))
    return out, pts


def _data() -> dict:
    text = (DEMO / "data.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("=") + 1 :].strip().rstrip(";"))


@pytest.fixture(scope="module")
def cli_page(tmp_path_factory):
    """The page `jointlimits view LIMITS.json --demo -o DIR` writes, and clips to drop on it."""
    from click.testing import CliRunner

    from jointlimits import io
    from jointlimits.cli import main
    from jointlimits.motion import procedural

    tmp = tmp_path_factory.mktemp("cli")
    data = _data()
    lim = tmp / "limits.json"
    lim.write_text(json.dumps(data["limitSets"][next(iter(data["limitSets"]))]))
    out = tmp / "demo"
    runs = [CliRunner().invoke(main, ["view", str(lim), "--demo", "-o", str(out)]) for _ in range(2)]
    clip = procedural.over_rotate(procedural.range_of_motion(procedural.humanoid_skeleton(units="m"), seconds=2.0), 1.4)
    io.save(tmp / "c.bvh", clip)
    io.save(tmp / "c.glb", clip)
    files = {n: base64.b64encode((tmp / n).read_bytes()).decode() for n in ("c.bvh", "c.glb")}
    return {"out": out, "runs": runs, "clip": clip, "files": files}


@pytest.fixture(scope="module")
def session(server, cli_page, tmp_path_factory):
    """Everything the pages compute, in one browser session (the docs page over http, then the
    CLI's page from file://)."""
    shapes, pts = golden_shapes()
    data = _data()
    rng = np.random.default_rng(37)
    q_rot = quat.normalize(rng.normal(size=(40, len(data["skeleton"]["names"]), 4)))
    shot = tmp_path_factory.mktemp("shot") / "demo.png"
    inputs = {
        "shapes": shapes,
        "points": pts.reshape(-1).tolist(),
        "poses": q_rot.reshape(-1).tolist(),
        "fileUrl": (cli_page["out"] / "index.html").as_uri(),
        "files": cli_page["files"],
    }
    body = (
        "//node\nconst IN = " + json.dumps(inputs) + ";\n" + (WEB / "test" / "session.js").read_text(encoding="utf-8")
    )
    out = page_eval(server, body, shot=shot)
    return {"out": out, "shapes": shapes, "points": pts, "poses": q_rot, "data": data, "shot": shot}


def test_projections_match_the_native_core_for_every_shape(session):
    shapes, pts, res = session["shapes"], session["points"], session["out"]["result"]["shapes"]
    assert len(shapes) == 6, sorted(shapes)  # every compiled kind (compiled_shape.hpp)
    for kind, d in shapes.items():
        native = _core.CompiledShape(
            kind, *(np.asarray(d[k], np.float64) for k in ("f", "axes", "mins", "maxs", "G", "bnd"))
        ).project(pts)
        page = np.asarray(res[kind]).reshape(-1, 3)
        assert np.max(np.abs(page - native)) <= 1e-6, kind
        assert np.mean(np.any(native != pts, axis=1)) > 0.05, kind  # the golden points reach outside


def test_pose_projection_matches_the_native_core_for_every_limits_set(session, tmp_path):
    data, res = session["data"], session["out"]["result"]["poses"]
    q = session["poses"]
    for name, doc in data["limitSets"].items():
        p = tmp_path / "l.json"
        p.write_text(json.dumps(doc))
        native = JointLimits.load(p).project(q)
        page = np.asarray(res[name]).reshape(q.shape)
        ang = quat.angle(native, page)
        assert np.max(ang) <= 1e-6, (name, float(np.max(ang)))
        assert np.max(quat.angle(native, q)) > 0.1, name  # the limits moved some rotations


def test_node_gives_the_same_numbers_as_the_page(session):
    r = subprocess.run(
        ["node", str(WEB / "test" / "cases.js"), str(DEMO / "data.js")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=WEB,
    )
    assert r.returncode == 0, r.stderr
    node = json.loads(r.stdout)
    page = session["out"]["result"]["cases"]
    assert sorted(node) == sorted(page)
    for k in node:
        assert node[k] == page[k], k


def test_limits_toggle_after_dragging_the_elbow_past_its_range(session):
    t = session["out"]["result"]["toggle"]
    assert t["dragged"] < 0.01  # metres: the drag put the target where the elbow must fold past its range
    assert "0 joints outside their limits" in t["on"], t["on"]
    assert "joint(s) outside their limits" in t["off"] and "LeftForeArm" in t["off"], t["off"]
    assert t["onOutside"] == [] and "LeftForeArm" in t["offOutside"]


def test_look_at_spreads_over_spine_then_head(session):
    look = session["out"]["result"]["look"]
    chain = look["chain"]
    on = {int(k): v for k, v in look["on"].items()}
    off = {int(k): v for k, v in look["off"].items()}
    yaws = sorted(on)
    # without limits the lowest joint turns all the way; nothing above it moves
    for y in yaws:
        assert off[y][0] > np.radians(y) * 0.9 and max(off[y][1:]) < 1e-5, (y, off[y])
    # with limits: a small turn stays in the spine; the head turns only once every joint below
    # has stopped turning further (used its range)
    assert on[yaws[0]][-1] < 1e-5 and on[yaws[0]][0] > 0
    head_moves = [y for y in yaws if on[y][-1] > 1e-3]
    assert head_moves, on
    y0 = head_moves[0]
    before = yaws[yaws.index(y0) - 1]
    assert on[before][-1] < 1e-5
    for y in head_moves:
        # the spine joints (all but neck and head) hold the angle they had when the head started
        for k in range(len(chain) - 2):
            assert on[y][k] <= on[before][k] + np.radians(1.0), (chain[k], y, on[y][k], on[before][k])
    assert on[yaws[-1]][-1] > on[y0][-1]


def test_every_shape_of_the_choice_keeps_the_pose_inside(session):
    res = session["out"]["result"]["shapesOutside"]
    assert list(res) == list(session["data"]["limitSets"])
    for name, (shown, on, _off) in res.items():
        assert shown == name and on == 0, (name, on)
    assert any(off > 0 for _, _, off in res.values()), res  # the default pose leaves some limit


def test_page_loop_runs_and_the_wasm_is_small(session):
    # the rate and the load time are measured by `python -m benchmarks --only web_demo`, not here
    r = session["out"]["result"]
    assert r["bench"]["joints"] == 22 and r["bench"]["updates"] > 0 and r["bench"]["vertices"] > 0
    assert 0 < r["readyAt"]
    assert (DEMO / "jlcore.wasm").stat().st_size <= 1_000_000
    assert (DEMO / "jlcore.wasm").read_bytes() == (ROOT / "web" / "dist" / "jlcore.wasm").read_bytes()
    assert session["shot"].stat().st_size > 10_000


def test_view_demo_writes_a_page_that_runs_from_file_and_takes_dropped_clips(session, cli_page):
    first, second = cli_page["runs"]
    assert first.exit_code == 0, first.output
    assert (cli_page["out"] / "index.html").is_file() and (cli_page["out"] / "jlcore.wasm.js").is_file()
    assert second.exit_code == 2 and "--force" in second.output
    res = session["out"]["result"]["file"]
    assert "0 joints outside their limits" in res["status"], res["status"]
    assert res["shapes"] == ["limits.json"]
    clip = cli_page["clip"]
    for n, tol in (("c.bvh", 1e-4), ("c.glb", 1e-6)):
        d = res[n]
        assert d["names"] == list(clip.skeleton.names), n
        assert d["frames"] == clip.num_frames, (n, d["frames"])
        first_frame = np.asarray(d["first"]).reshape(-1, 4)
        assert np.max(quat.angle(first_frame, clip.rotations[0])) <= tol, n
        assert d["limitedOutside"] == 0 and len(d["rawOutside"]) > 0, (n, d)

"""The interactive HTML page of fitted limits: what the page holds (read back from its plotly
figure), the geometry of the drawn surfaces, the points drawn outside, safe writing, the ``view``
command, and the page in a real headless Chromium."""

from __future__ import annotations

import base64
import functools
import http.server
import io
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jointlimits.cli import main
from jointlimits.errors import LimitsError
from jointlimits.io import bvh
from jointlimits.limits.model import SHAPES, FittedLimit, JointLimits, twist_interval
from jointlimits.motion.skeleton import Motion, Skeleton
from jointlimits.viz.viewer import DIV_ID, write_limits_page

from conftest import MOCAP, needs_shared

JOINTS = ["Neck", "LeftArm", "LeftUpLeg"]  # in the skeleton's order, as the page lists them
K = float(np.degrees(1.0))  # the page is in degrees
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# --------------------------------------------------------------------------- reading a page back


def _decode(x: Any) -> Any:
    """plotly's JSON back to Python: typed arrays ({"dtype", "bdata"}, plotly >= 6) to numpy."""
    if isinstance(x, dict):
        if "bdata" in x and "dtype" in x:
            a = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
            if "shape" in x:
                a = a.reshape([int(n) for n in str(x["shape"]).split(",")])
            return a
        return {k: _decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_decode(v) for v in x]
    return x


def read_page(path: Path) -> tuple[list[dict], dict, str]:
    """The figure's traces and layout from the page's ``Plotly.newPlot(id, data, layout, config)``."""
    text = path.read_text(encoding="utf-8")
    pos = text.rindex("Plotly.newPlot(") + len("Plotly.newPlot(")
    dec = json.JSONDecoder()
    values = []
    for _ in range(3):
        while text[pos] in " \t\r\n,":
            pos += 1
        v, pos = dec.raw_decode(text, pos)
        values.append(v)
    div, data, layout = values
    assert div == DIV_ID
    return _decode(data), _decode(layout), text


def arr(x: Any) -> np.ndarray:
    return np.asarray([np.nan if v is None else v for v in x] if isinstance(x, list) else x, np.float64)


def xyz(trace: dict) -> np.ndarray:
    """A trace's points in radians, ``[N, 3]``."""
    return np.column_stack([arr(trace["x"]), arr(trace["y"]), arr(trace["z"])]) / K


def role(trace: dict) -> str:
    return trace["meta"]["role"]


def groups(data: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for t in data:
        out.setdefault(t["meta"]["joint"], []).append(t)
    return out


def shown_frames(trace: dict, bounds: np.ndarray) -> np.ndarray:
    """Global frame indices of a point trace (its customdata rows are clip, frame, violation)."""
    cd = np.asarray(trace["customdata"], np.float64).reshape(-1, 3)
    return bounds[cd[:, 0].astype(int)] + cd[:, 1].astype(int)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def fitted(clips) -> dict[tuple[str, bool], JointLimits]:
    clip, _ = clips
    return {
        (s, sw): JointLimits.fit(clip, shape=s, swing_twist=sw, joints=JOINTS) for s in SHAPES for sw in (False, True)
    }


@pytest.fixture(scope="module")
def pages(tmp_path_factory, clips, fitted) -> dict[tuple[str, bool], tuple[Path, list, dict]]:
    """One page per shape and swing-twist setting: the fitted clip and the over-rotated copy, 300
    of their 480 frames shown."""
    clip, over = clips
    d = tmp_path_factory.mktemp("pages")
    out = {}
    for (s, sw), lim in fitted.items():
        p = write_limits_page(lim, [clip, over], d / f"{s}-{sw}.html", max_points=300)
        data, layout, _ = read_page(p)
        out[s, sw] = (p, data, layout)
    return out


ALL = [(s, sw) for s in SHAPES for sw in (False, True)]


# --------------------------------------------------------------------------- what the page holds


@pytest.mark.parametrize("shape,swing_twist", ALL)
def test_one_trace_group_per_joint_and_a_dropdown(pages, fitted, clips, shape, swing_twist):
    p, data, layout = pages[shape, swing_twist]
    g = groups(data)
    assert list(g) == JOINTS  # in the skeleton's order, one group each
    (menu,) = layout["updatemenus"]
    buttons = menu["buttons"]
    assert [b["label"] for b in buttons] == JOINTS
    owner = [t["meta"]["joint"] for t in data]
    rows = {r["joint"]: r for r in fitted[shape, swing_twist].report(list(clips))}
    for b, name in zip(buttons, JOINTS):
        vis, lay = b["args"]
        assert vis["visible"] == [o == name for o in owner]  # the button shows exactly its joint
        title = lay["title.text"]
        r = rows[name]
        assert title.startswith(f"<b>{name}</b>")
        assert f"{r['frames_outside']} of {r['frames']} frames outside" in title
        assert f"max violation {r['max_violation_deg']:.1f}°" in title
        for a in "xyz":  # a cube around the joint's points
            lo, hi = lay[f"scene.{a}axis.range"]
            assert hi - lo == pytest.approx(lay["scene.xaxis.range"][1] - lay["scene.xaxis.range"][0])
    assert [t.get("visible") for t in data] == [o == JOINTS[0] for o in owner]  # first joint shown first
    assert layout["title"]["text"] == buttons[0]["args"][1]["title.text"]
    roles = {role(t) for t in g["LeftArm"]}
    if swing_twist:
        assert {"swing-section", "twist-interval", "twist-axis"} <= roles
        assert roles & {"swing-inside", "swing-outside"} and roles & {"twist-inside", "twist-outside"}
    else:
        edges = set() if shape == "implicit" else {"edges"}  # an iso-surface has no edges
        assert {"surface"} | edges <= roles and roles & {"inside", "outside"}


def test_page_works_offline(pages):
    _, _, text = read_page(pages["kdop", False][0])
    assert not re.findall(r"<script[^>]*\bsrc=", text)  # plotly.js is inline, nothing fetched
    assert "https://cdn" not in text.split("Plotly.newPlot(")[-1]
    assert len(text) > 3_000_000  # the plotly.js bundle itself
    assert "<title>jointlimits: Neck, LeftArm, LeftUpLeg</title>" in text.split("</head>")[0]


@pytest.mark.parametrize("shape", ["ellipsoid"])
def test_ellipsoid_surface_vertices_lie_on_the_ellipsoid(pages, fitted, shape):
    _, data, _ = pages[shape, False]
    for name, traces in groups(data).items():
        ell = fitted[shape, False].joint(name).shape
        (mesh,) = [t for t in traces if role(t) == "surface"]
        v = xyz(mesh)
        local = (v - ell.position) @ ell.rotation / ell.scale
        assert np.abs(np.linalg.norm(local, axis=1) - 1.0).max() < 1e-9
        tri = np.column_stack([mesh["i"], mesh["j"], mesh["k"]]).astype(int)
        assert tri.min() == 0 and tri.max() == len(v) - 1 and len(tri) >= 2 * len(v) - 4


def _slab_values(shape, pts: np.ndarray) -> np.ndarray:
    """Each point's coordinate along each slab axis, in the units of the shape's mins/maxs."""
    if shape.kind == "box":
        return pts
    local = (pts - shape.position) @ shape.rotation
    if shape.kind == "oriented-box":
        return local
    return local @ shape.axes.T / np.einsum("ij,ij->i", shape.axes, shape.axes)


def _bounds(shape) -> tuple[np.ndarray, np.ndarray]:
    return (shape.lo, shape.hi) if shape.kind in ("box", "oriented-box") else (shape.mins, shape.maxs)


@pytest.mark.parametrize("shape", ["box", "oriented-box", "kdop"])
def test_polytope_vertices_satisfy_every_slab(pages, fitted, shape):
    _, data, _ = pages[shape, False]
    for name, traces in groups(data).items():
        sh = fitted[shape, False].joint(name).shape
        (mesh,) = [t for t in traces if role(t) == "surface"]
        s = _slab_values(sh, xyz(mesh))
        lo, hi = _bounds(sh)
        assert np.all(s >= lo - 1e-9) and np.all(s <= hi + 1e-9)  # inside every slab
        on = (np.abs(s - lo) < 1e-9) | (np.abs(s - hi) < 1e-9)
        assert np.all(on.sum(axis=1) >= 3)  # a polytope vertex: three or more boundaries meet there
        assert np.all(on.any(axis=0) | _redundant(sh, lo, hi))  # every slab that bounds it is touched
        if shape != "kdop":
            assert len(xyz(mesh)) == 8


def _redundant(sh, lo, hi) -> np.ndarray:
    """Slabs of a k-DOP that never bound it (the others already cut deeper): not touched."""
    from scipy.optimize import linprog

    if sh.kind != "kdop":
        return np.zeros(len(lo), bool)
    a = sh.axes / np.einsum("ij,ij->i", sh.axes, sh.axes)[:, None]
    A = np.vstack([a, -a])
    b = np.r_[hi, -lo]
    out = np.zeros(len(lo), bool)
    for k in range(len(lo)):
        top = linprog(-a[k], A_ub=A, b_ub=b, bounds=[(None, None)] * 3, method="highs")
        bot = linprog(a[k], A_ub=A, b_ub=b, bounds=[(None, None)] * 3, method="highs")
        out[k] = (-top.fun < hi[k] - 1e-9) and (bot.fun > lo[k] + 1e-9)
    return out


@pytest.mark.parametrize("shape", SHAPES)
def test_swing_twist_section_and_interval(pages, fitted, shape):
    _, data, _ = pages[shape, True]
    for name, traces in groups(data).items():
        lim = fitted[shape, True].joint(name)
        assert isinstance(lim, FittedLimit) and lim.swing_twist
        axis = lim.twist_axis
        (outline,) = [t for t in traces if role(t) == "swing-outline"]
        pts = xyz(outline)
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        assert len(pts) >= 4
        assert np.abs(pts @ axis).max() < 1e-9  # in the plane perpendicular to the twist axis
        sw = lim.swing
        if shape == "ellipsoid":  # the section's edge is on the 3D swing ellipsoid
            local = (pts - sw.position) @ sw.rotation / sw.scale
            assert np.abs(np.linalg.norm(local, axis=1) - 1.0).max() < 1e-9
        elif shape == "implicit":  # the section's edge is on the iso-line of the swing field
            f = sw.value(pts)[:, 0]
            assert np.abs(f - sw.threshold).max() < 0.1 * sw.threshold
        else:
            s = _slab_values(sw, pts)
            lo, hi = _bounds(sw)
            assert np.all(s >= lo - 1e-9) and np.all(s <= hi + 1e-9)
            assert np.all(((np.abs(s - lo) < 1e-9) | (np.abs(s - hi) < 1e-9)).any(axis=1))
        (seg,) = [t for t in traces if role(t) == "twist-interval"]
        ends = xyz(seg)
        assert np.allclose(ends, np.outer(twist_interval(lim.twist, axis), axis), atol=1e-12)
        for t in traces:  # swing points in the plane, twist points on the axis
            if role(t).startswith("swing-") and "customdata" in t:
                assert np.abs(xyz(t) @ axis).max() < 1e-5
            if role(t).startswith("twist-") and "customdata" in t:
                p = xyz(t)
                assert np.linalg.norm(p - np.outer(p @ axis, axis), axis=1).max() < 1e-5


def _check_points(data: list[dict], lim: JointLimits, ms: list[Motion], max_points: int) -> None:
    """Outside points are exactly the shown frames that JointLimits.contains rejects, and the
    shown frames are an even subsample of all frames."""
    q = np.concatenate([m.rotations for m in ms], axis=0)
    total = q.shape[0]
    bounds = np.cumsum([0] + [m.num_frames for m in ms])
    inside_all = lim.contains(q)
    sk = lim.skeleton
    for name, traces in groups(data).items():
        j = sk.index(name)
        joint = lim.joint(name)
        st_ = isinstance(joint, FittedLimit) and joint.swing_twist
        parts = ["swing", "twist"] if st_ else [""]
        out_frames: set[int] = set()
        for part in parts:
            pre = f"{part}-" if part else ""
            by_role = {role(t): t for t in traces}
            shown = []
            for r in ("inside", "outside"):
                t = by_role.get(pre + r)
                if t is not None:
                    f = shown_frames(t, bounds)
                    shown.append(f)
                    if r == "outside":
                        out_frames |= set(f.tolist())
                        if not st_ and isinstance(joint, FittedLimit):  # the drawn point is out of the shape
                            assert not joint.shape.contains(xyz(t), tolerance=1e-9).any()
                    elif not st_ and isinstance(joint, FittedLimit):
                        assert joint.shape.contains(xyz(t), tolerance=1e-5).all()
            f = np.sort(np.concatenate(shown))
            # an even subsample: every frame once, first and last kept, steady steps
            assert len(f) == min(total, max_points) and np.all(np.diff(f) > 0)
            assert f[0] == 0 and (f[-1] == total - 1 or max_points == 1)
            if len(f) > 2:
                step = (total - 1) / (len(f) - 1)
                assert np.all(np.abs(np.diff(f) - step) < 1.0 + 1e-9)
        rejected = set(f[~inside_all[f, j]].tolist())
        assert out_frames == rejected, name


@pytest.mark.parametrize("shape,swing_twist", ALL)
def test_outside_points_are_the_rejected_frames(pages, fitted, clips, shape, swing_twist):
    _, data, _ = pages[shape, swing_twist]
    lim = fitted[shape, swing_twist]
    _check_points(data, lim, list(clips), 300)
    q = np.concatenate([c.rotations for c in clips])
    assert not lim.contains(q).all()  # the test has teeth: the over-rotated copy is partly outside


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(max_points=st.integers(1, 400), split=st.integers(1, 239))
def test_any_subsample_and_split(tmp_path, clips, fitted, max_points, split):
    _, over = clips
    lim = fitted["kdop", True]
    ms = [over[:split], over[split:]]
    p = write_limits_page(lim, ms, tmp_path / "p.html", joints=["Neck"], max_points=max_points, overwrite=True)
    data, _, _ = read_page(p)
    _check_points(data, lim, ms, max_points)


def test_surfaces_only(tmp_path, fitted):
    p = write_limits_page(fitted["ellipsoid", False], None, tmp_path / "s.html")
    data, layout, _ = read_page(p)
    assert list(groups(data)) == JOINTS
    assert {role(t) for t in data} == {"surface", "edges"}
    assert "frames outside" not in layout["title"]["text"]


def test_limits_with_a_reach_window(tmp_path, clips):
    clip, over = clips
    lim = JointLimits.fit(clip, shape="box", joints=["LeftArm", "Neck"], shapes={"LeftArm": "reach-window"})
    p = write_limits_page(lim, over, tmp_path / "r.html")
    data, _, _ = read_page(p)
    g = groups(data)
    assert list(g) == ["Neck", "LeftArm"]
    assert {role(t) for t in g["LeftArm"]} <= {"inside", "outside"}  # cloud only, no surface
    _check_points(data, lim, [over], 3000)
    p = write_limits_page(lim, None, tmp_path / "r2.html")
    assert [role(t) for t in groups(read_page(p)[0])["LeftArm"]] == ["empty"]


# --------------------------------------------------------------------------- writing safely, bad input


def test_existing_file_is_not_overwritten(tmp_path, clips, fitted):
    clip, _ = clips
    p = tmp_path / "page.html"
    p.write_text("keep me")
    with pytest.raises(FileExistsError):
        write_limits_page(fitted["box", False], clip, p)
    assert p.read_text() == "keep me"
    assert write_limits_page(fitted["box", False], clip, p, overwrite=True) == p
    assert list(groups(read_page(p)[0])) == JOINTS
    assert sorted(x.name for x in tmp_path.iterdir()) == ["page.html"]  # no temporary file left


def test_bad_input_raises_and_writes_nothing(tmp_path, clips, fitted):
    clip, _ = clips
    lim = fitted["kdop", False]
    p = tmp_path / "x.html"
    with pytest.raises(LimitsError, match=r"unknown joint 'Tail'; joints with a limit: Neck, LeftArm, LeftUpLeg$"):
        write_limits_page(lim, clip, p, joints=["LeftArm", "Tail"])
    with pytest.raises(LimitsError, match="joint 'Head' has no limit"):
        write_limits_page(lim, clip, p, joints=["Head"])
    with pytest.raises(LimitsError, match="no joints given"):
        write_limits_page(lim, clip, p, joints=[])
    with pytest.raises(LimitsError, match="no clips given"):
        write_limits_page(lim, [], p)
    with pytest.raises(LimitsError, match="clip 1: the clip has no frames"):
        write_limits_page(lim, [clip, clip[:0]], p)
    stranger = Motion.rest(Skeleton(["Root", "A"], [-1, 0], [[0, 0, 0], [0, 1, 0]]), 5)
    with pytest.raises(LimitsError, match="clip 0: .*another skeleton"):
        write_limits_page(lim, stranger, p)
    with pytest.raises(LimitsError, match="max_points"):
        write_limits_page(lim, clip, p, max_points=0)
    off = JointLimits.fit(clip, shape="box", joints=["Neck"])
    off = off.with_enabled(["Neck"], False)
    with pytest.raises(LimitsError, match="no joint has an active limit"):
        write_limits_page(off, clip, p)
    with pytest.raises(LimitsError, match="disabled"):
        write_limits_page(off, clip, p, joints=["Neck"])
    assert list(tmp_path.iterdir()) == []


def test_demo_writes_the_page(tmp_path):
    from jointlimits.cli.limits import run_demo

    rep = run_demo(None, tmp_path, "ellipsoid", False, 0.5, quiet=True)
    page = Path(rep["files"]["limits_html"])
    assert page == tmp_path / "limits.html"
    plotted = [k[len("joint_") :] for k in rep["files"] if k.startswith("joint_")]
    data, layout, _ = read_page(page)
    assert list(groups(data)) == plotted and len(plotted) == 3
    assert "2 clips (range_of_motion.bvh, over_rotated.bvh)" in layout["title"]["text"]


# --------------------------------------------------------------------------- the command


def run(*args: Any) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_line_error(res: Any) -> str:
    assert res.exit_code != 0, res.output
    err = res.stderr if hasattr(res, "stderr") else res.output
    lines = [l for l in err.strip().splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in res.output
    return lines[0]


@pytest.fixture()
def files(tmp_path, clips, fitted) -> tuple[Path, Path]:
    _, over = clips
    lim_path, clip_path = tmp_path / "lim.json", tmp_path / "over.bvh"
    fitted["ellipsoid", True].save(lim_path)
    bvh.save(clip_path, over)
    return lim_path, clip_path


def test_view_command(tmp_path, files):
    lim_path, clip_path = files
    out = tmp_path / "page.html"
    res = run("view", lim_path, clip_path, "-o", out, "--joint", "Neck", "--joint", "LeftArm")
    assert res.exit_code == 0, res.output
    assert f"wrote {out}" in res.output
    data, layout, _ = read_page(out)
    assert list(groups(data)) == ["Neck", "LeftArm"]  # in the order asked for
    assert "over.bvh" in layout["title"]["text"]
    res = run("view", lim_path, "-o", tmp_path / "surfaces.html", "--max-points", "10")
    assert res.exit_code == 0, res.output
    assert not [t for t in read_page(tmp_path / "surfaces.html")[0] if "customdata" in t]


def test_view_command_errors(tmp_path, files):
    lim_path, clip_path = files
    out = tmp_path / "page.html"
    assert "no joint named 'Tail'" in one_line_error(run("view", lim_path, clip_path, "-o", out, "--joint", "Tail"))
    assert not out.exists()
    assert "give a .html path" in one_line_error(run("view", lim_path, clip_path, "-o", tmp_path / "p.png"))
    assert "cannot read limits file" in one_line_error(run("view", tmp_path / "none.json", "-o", out))
    assert "missing.bvh" in one_line_error(run("view", lim_path, tmp_path / "missing.bvh", "-o", out))
    other = tmp_path / "other.bvh"
    bvh.save(other, Motion.rest(Skeleton(["Root", "A"], [-1, 0], [[0, 0, 0], [0, 1, 0]]), 3))
    assert "another skeleton" in one_line_error(run("view", lim_path, other, "-o", out))
    assert not out.exists()
    out.write_text("keep me")
    assert "--force" in one_line_error(run("view", lim_path, clip_path, "-o", out))
    assert out.read_text() == "keep me"
    assert run("view", lim_path, clip_path, "-o", out, "--force").exit_code == 0
    assert list(groups(read_page(out)[0])) == JOINTS


@needs_shared
def test_view_command_on_a_real_clip(tmp_path):
    walk = MOCAP / "lafan1" / "walk4_subject1.bvh"
    m = bvh.load(walk)
    lim = JointLimits.fit(m, shape="kdop", joints=["LeftArm", "RightUpLeg"])
    lim.save(tmp_path / "lim.json")
    res = run(
        "view", tmp_path / "lim.json", walk, MOCAP / "lafan1" / "push1_subject2.bvh", "-o", tmp_path / "walk.html"
    )
    assert res.exit_code == 0, res.output
    data, layout, _ = read_page(tmp_path / "walk.html")
    assert list(groups(data)) == ["RightUpLeg", "LeftArm"]
    ms = [m, bvh.load(MOCAP / "lafan1" / "push1_subject2.bvh")]
    _check_points(data, lim, ms, 3000)
    assert "3000 shown" in layout["title"]["text"]


# --------------------------------------------------------------------------- a real browser


def _browser_or_skip() -> Any:
    if os.environ.get("JL_BROWSER_TESTS") != "1":
        pytest.skip("the page's browser test (12 s) needs JL_BROWSER_TESTS=1 (.ci/run runs it apart)")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium) for the browser test")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    return sync_playwright


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


_READY = (
    """() => { const gd = document.getElementById('%s');
  return !!(gd && gd._fullLayout && gd._fullLayout.scene && gd._fullLayout.scene._scene
            && gd.querySelector('.gl-container canvas')); }"""  # noqa: UP031 - JavaScript: % keeps its braces
    % DIV_ID
)
_STATE = (
    """() => { const gd = document.getElementById('%s');
  return {title: gd.layout.title.text,
          visible: [...new Set(gd.data.filter(t => t.visible !== false).map(t => t.meta.joint))],
          range: gd.layout.scene.xaxis.range,
          points: gd._fullData.filter(t => t.visible === true && t.customdata)
                              .map(t => [t.customdata.length, t.x.length, Array.from(t.customdata[0])])}; }"""  # noqa: UP031
    % DIV_ID
)


def _red_pixels(png: bytes) -> tuple[float, int, tuple[int, int]]:
    """Of a screenshot: standard deviation, count of pixels near the 'outside' red #d62728, and
    (x, y) of the reddest spot in the left three quarters (away from the legend)."""
    import matplotlib.image as mpimg
    from scipy.ndimage import uniform_filter

    img = mpimg.imread(io.BytesIO(png), format="png")[..., :3]
    red = np.array([0xD6, 0x27, 0x28]) / 255.0
    mask = np.abs(img - red).max(axis=-1) < 0.12
    density = uniform_filter(mask.astype(float), size=5)
    density[:, int(0.75 * density.shape[1]) :] = 0.0
    y, x = np.unravel_index(np.argmax(density), density.shape)
    return float(img.std()), int(mask.sum()), (int(x), int(y))


def test_page_in_headless_chromium(tmp_path, clips, fitted):
    sync_playwright = _browser_or_skip()
    _, over = clips
    lim = JointLimits.fit(clips[0], shape="ellipsoid", joints=JOINTS, shapes={"LeftArm": "kdop"})
    write_limits_page(lim, over, tmp_path / "page.html")
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    problems: list[str] = []
    requests: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.on(
                    "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
                )
                page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
                page.on("request", lambda r: requests.append(r.url))
                page.goto(f"{origin}/page.html")
                page.wait_for_function(_READY, timeout=30_000)
                page.wait_for_timeout(300)
                first = page.evaluate(_STATE)
                assert first["visible"] == ["Neck"] and first["title"].startswith("<b>Neck</b>")
                # the typed arrays decoded in the page: one (clip, frame, violation) row per point
                assert first["points"] and all(n == m > 0 and len(row) == 3 for n, m, row in first["points"])
                std0, red0, _ = _red_pixels(page.screenshot())
                # the dropdown: open it, pick the second joint
                page.click(".updatemenu-header")
                page.locator(".updatemenu-dropdown-button").nth(1).click()
                page.wait_for_function(
                    f"() => document.getElementById('{DIV_ID}').layout.title.text.startsWith('<b>LeftArm</b>')",
                    timeout=10_000,
                )
                page.wait_for_timeout(300)
                second = page.evaluate(_STATE)
                assert second["visible"] == ["LeftArm"] and second["title"] != first["title"]
                assert second["range"] != first["range"]
                shot = page.screenshot()
                (tmp_path / "screenshot.png").write_bytes(shot)
                std1, red1, spot = _red_pixels(shot)
                # hover a red point as a user would: its clip and frame show up
                page.evaluate(
                    "() => { window.hovered = null; document.getElementById('%s')"  # noqa: UP031
                    ".on('plotly_hover', d => { window.hovered = d.points.map(p => p.text); }); }" % DIV_ID
                )
                for dx, dy in ((0, 0), (1, 1), (-1, -1), (2, 0), (0, 2), (-2, 0), (0, -2)):
                    page.mouse.move(spot[0] + dx, spot[1] + dy, steps=2)
                    page.wait_for_timeout(150)
                    if page.evaluate("() => window.hovered"):
                        break
                assert page.evaluate("() => window.hovered") == ["clip 0"]
                label = page.locator(".gl-container g.hovertext text.nums").first.text_content(timeout=5_000) or ""
                assert re.match(r"clip 0, frame \d+violation \d+\.\d\d°", label), label
                drawn = page.locator(".gtitle").text_content() or ""  # the title as drawn (SVG text)
                assert drawn.startswith("LeftArm: kdop limit") and "frames outside" in drawn
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    assert not problems, problems
    assert requests and all(u.startswith(origin) or u.startswith(("data:", "blob:")) for u in requests), requests
    assert std0 > 0.02 and std1 > 0.02  # not a blank page
    assert red0 > 50 and red1 > 50  # WebGL drew the outside points

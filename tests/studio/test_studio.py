"""The studio: pose logic driven from Python through the running app, and the page in a real browser."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits.motion import procedural, quat
from jointlimits.studio import Clip, StudioState, posing

CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from jointlimits.studio.app import StudioApp

    rom = procedural.range_of_motion(seconds=10.0)
    lim = JointLimits.fit(rom)
    st = StudioState(
        [Clip("over", procedural.over_rotate(rom, 0.5))], lim, fit_clips=[rom], save_dir=tmp_path_factory.mktemp("out")
    )
    a = StudioApp(st, port=_free_port()).start()
    yield a
    a.stop()


def test_binds_localhost(app):
    assert app.host == "127.0.0.1"


def test_gizmo_beyond_limit_is_projected(app):
    st = app.state
    st.set_frame(0)
    st.set_limits_on(True)
    j = st.select_joint("LeftArm")
    gr_parent, _ = st.joint_global(int(st.skeleton.parents[j]))
    wild = quat.mul(gr_parent, quat.from_angle_axis(np.radians(175.0), [0.0, 0.0, 1.0]))
    out = app.on_joint_gizmo(wild)
    lim = st.limits.joint(j)
    assert lim.violation(quat.inv_mul(gr_parent, wild)[None])[0] > np.radians(20)  # the gizmo is outside
    assert lim.violation(out[None])[0] < 1e-6  # the pose is inside
    np.testing.assert_allclose(quat.angle(lim.project(out[None]), out[None]), 0.0, atol=1e-9)  # idempotent
    assert quat.angle(st.raw[j], st.pose[j]) > np.radians(20)  # the ghost keeps the raw rotation
    st.set_limits_on(False)
    assert quat.angle(st.raw[j], st.pose[j]) < 1e-9
    st.set_limits_on(True)


def test_ik_target_arm_respects_limits(app):
    st = app.state
    st.set_frame(5)
    st.set_ik_mode("left-arm")
    ch = st.ik_chains["left-arm"]
    t0 = st.ik_target.copy()
    near = t0 + np.array([0.0, -10.0, 8.0])
    app.on_ik_target(near * st.metres_per_unit)
    v = st.limits.violation(st.pose[None])[0]
    assert v[list(ch.joints)].max() < 1e-6
    far = t0 + np.array([0.0, 60.0, -60.0])
    app.on_ik_target(far * st.metres_per_unit)
    assert st.limits.violation(st.pose[None])[0][list(ch.joints)].max() < 1e-6
    st.ik_limits_on = False
    _, shoulder = st.joint_global(ch.joints[0])
    reach = 0.6 * shoulder + 0.4 * t0  # well inside the arm's reach
    app.on_ik_target(reach * st.metres_per_unit)
    assert st.effector_error() < 0.5  # free two-bone reaches a reachable target (cm)
    st.ik_limits_on = True
    st.set_ik_mode(None)


def test_whole_body_hand_target_inside_limits(app):
    st = app.state
    st.set_frame(3)
    st.set_ik_mode("left-hand-body")
    ch = st.ik_chains["left-hand-body"]
    _, feet_before = st.joint_global(st.skeleton.index("LeftFoot"))
    t0 = st.ik_target.copy()
    # a target the limits let the hand reach: where the range-of-motion clip (the limits' training
    # data) puts it at another frame (the pose starts limited: every frame is shown inside, #38)
    _, gp = posing.pose_fk(st.skeleton, st.fit_clips[0].rotations[40], st.positions)
    target = gp[ch.effector]
    assert np.linalg.norm(target - t0) > 5.0  # cm: a real move
    app.on_ik_target(target * st.metres_per_unit)
    assert st.limits.violation(st.pose[None])[0].max() < 1e-6  # every joint inside its limit
    assert st.effector_error() < 2.0  # the hand follows (cm)
    _, feet_after = st.joint_global(st.skeleton.index("LeftFoot"))
    assert np.linalg.norm(feet_after - feet_before) < 2.0  # the feet stay where they were
    assert ch.effector == st.skeleton.index("LeftHand")
    st.set_ik_mode(None)


def test_pole_handle_turns_the_elbow(app):
    st = app.state
    st.set_frame(7)
    st.set_ik_mode("left-arm")
    a, b = st.ik_chains["left-arm"].joints
    app.redraw()
    assert app.pole.visible
    t = st.ik_target.copy()
    _, shoulder = st.joint_global(a)
    reach = 0.55 * shoulder + 0.45 * t
    app.on_ik_target(reach * st.metres_per_unit)
    _, elbow0 = st.joint_global(b)
    side = np.cross(reach - shoulder, [0.0, 1.0, 0.0])
    elbows = []
    for sign in (1.0, -1.0):
        app.on_ik_pole((elbow0 + sign * 40.0 * side / np.linalg.norm(side)) * st.metres_per_unit)
        elbows.append(st.joint_global(b)[1])
        assert st.limits.violation(st.pose[None])[0][[a, b]].max() < 1e-6
    assert np.linalg.norm(elbows[0] - elbows[1]) > 1.0  # the pole moves the elbow (cm)
    st.ik_use_pole = False
    st.set_ik_mode(None)


def test_scrub_and_play(app):
    st = app.state
    assert st.set_frame(10**6) == st.num_frames - 1
    st.set_frame(3)
    assert np.array_equal(st.pose, st.work.motion.rotations[3])
    st.loop = True
    f = st.advance(st.work.motion.frame_time * 4.5)
    assert f == 7


def test_edit_and_save_never_replace(app, tmp_path):
    st = app.state
    st.apply_limits()
    assert st.limits.violation(st.work.motion.rotations).max() < 1e-6
    p1, p2 = st.save_clip(), st.save_clip()
    assert p1 != p2 and p1.exists() and p2.exists()
    from jointlimits.io import bvh

    assert bvh.load(st.save_pose()).num_frames == 1
    st.refit_joint("LeftArm", shape="box", swing_twist=True)
    assert JointLimits.load(st.save_limits()).joint("LeftArm").swing_twist


def test_splice_appends_and_smooths(app):
    st = app.state
    n0 = st.work.motion.num_frames
    msg = app._splice()
    assert st.work.motion.num_frames == n0 + st.inputs[0].motion.num_frames and "spliced" in msg
    assert app.frame_slider.max == st.num_frames - 1
    st.set_frame(st.work.motion.num_frames - 1)  # the new frames can be reached
    assert st.clip_frame(st.work) == st.work.motion.num_frames - 1


def test_footlock_shows_contacts(app):
    st = app.state
    st.footlock()
    assert st.work.contacts is not None and st.work.contacts.any()
    f = int(np.argmax(st.work.contacts.any(axis=1)))
    st.set_frame(f)
    app.redraw()
    scales = np.asarray(app.contacts.handle.batched_scales)
    assert (scales[st.work.contacts[st.clip_frame(st.work)], 0] > 0).all()  # a disc under each planted foot
    assert (scales[~st.work.contacts[st.clip_frame(st.work)], 0] == 0).all()


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's Chromium (/usr/bin/chromium) is not installed")
@pytest.mark.skipif(
    os.environ.get("JL_BROWSER_TESTS") != "1",
    reason="the studio's browser tests (25 s each) need JL_BROWSER_TESTS=1 (.ci/run runs them apart)",
)
def test_browser_page(app, tmp_path):
    from playwright.sync_api import sync_playwright

    args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        page = b.new_page(viewport={"width": 1000, "height": 650})
        page.goto(app.url)
        page.wait_for_selector("canvas", timeout=20000)
        page.wait_for_timeout(2500)
        shot = tmp_path / "a.png"
        page.screenshot(path=str(shot))
        import matplotlib.image as mpimg

        img = mpimg.imread(shot)
        assert img[..., :3].std() > 0.02  # not a blank canvas
        before = app.state.frame
        page.get_by_text("Play", exact=True).first.click()
        page.wait_for_timeout(1500)
        app.state.playing = False
        assert app.state.frame != before  # the GUI's Play checkbox moved the scene
        b.close()


# ------------------------------------------------------------------ remote access and formats (#25)
def _http(port: int, path: str, headers: dict | None = None) -> tuple[int, dict]:
    import http.client

    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    r.read()
    out = r.status, dict(r.getheaders())
    c.close()
    return out


@pytest.fixture(scope="module")
def token_app(app):
    from jointlimits.studio.app import StudioApp

    a = StudioApp(app.state, port=_free_port(), token="s3cret-token").start()
    yield a
    a.stop()


def test_a_token_app_refuses_requests_without_it(token_app):
    from jointlimits.studio.app import TOKEN_COOKIE

    port = token_app.port
    assert token_app.url.endswith("/?token=s3cret-token")
    assert _http(port, "/")[0] == 403
    assert _http(port, "/?token=wrong")[0] == 403
    upgrade = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
    }
    assert _http(port, "/", upgrade)[0] == 403  # the websocket too
    status, headers = _http(port, "/?token=s3cret-token")
    assert status == 200 and f"{TOKEN_COOKIE}=s3cret-token" in headers.get("Set-Cookie", "")
    assert _http(port, "/", {"Cookie": f"{TOKEN_COOKIE}=s3cret-token"})[0] == 200  # the page's own requests


def test_studio_command_binds_loopback_unless_allow_remote(tmp_path):
    from click.testing import CliRunner

    from jointlimits.cli import main
    from jointlimits.cli.studio import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.org")
    res = CliRunner().invoke(main, ["studio", "--host", "0.0.0.0", "--save-dir", str(tmp_path)])
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and "--allow-remote" in lines[0]


def test_studio_command_with_allow_remote_warns_and_prints_a_token_url(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from jointlimits.cli import main
    from jointlimits.studio import app as app_module

    seen = {}

    class FakeApp:
        def __init__(self, state, host, port, token):
            seen.update(host=host, token=token)
            self.url = f"http://{host}:{port}/?token={token}"

        def start(self):
            return self

        def stop(self):
            pass

    monkeypatch.setattr(app_module, "StudioApp", FakeApp)
    monkeypatch.setattr("time.sleep", lambda s: (_ for _ in ()).throw(KeyboardInterrupt))
    res = CliRunner().invoke(main, ["studio", "--host", "0.0.0.0", "--allow-remote", "--save-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert seen["host"] == "0.0.0.0" and len(seen["token"]) >= 16
    assert "warning:" in res.output and f"?token={seen['token']}" in res.output


def test_studio_reads_a_gltf_clip(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from jointlimits.cli import main
    from jointlimits.io import gltf
    from jointlimits.studio import app as app_module

    m = procedural.range_of_motion(seconds=1.0)
    gltf.save(tmp_path / "clip.glb", m)
    seen = {}

    class FakeApp:
        def __init__(self, state, host, port, token):
            seen["state"] = state
            self.url = "http://127.0.0.1"

        def start(self):
            return self

        def stop(self):
            pass

    monkeypatch.setattr(app_module, "StudioApp", FakeApp)
    monkeypatch.setattr("time.sleep", lambda s: (_ for _ in ()).throw(KeyboardInterrupt))
    res = CliRunner().invoke(main, ["studio", str(tmp_path / "clip.glb"), "--save-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert seen["state"].skeleton.names == m.skeleton.names  # the glTF clip, read as such

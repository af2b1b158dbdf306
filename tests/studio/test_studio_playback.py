"""#38: with "Limits on" the studio plays the limited clip (0 joint-frames outside on a clip the
limits were not fitted on), and the camera follows the root of a clip that walks away; in a real
browser (Debian's Chromium through Playwright)."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits.motion import procedural
from jointlimits.motion.units import guess_units
from jointlimits.studio import Clip, StudioState

pytest.importorskip("viser", reason="the studio needs the [studio] extra (viser)")
CHROMIUM = "/usr/bin/chromium"
WALK_M = 4.0  # metres the clip's root travels along x


def _walking_clip():
    """A held-out-style clip: the range of motion over-rotated by half (outside the limits fitted
    on the plain one) while its root walks WALK_M metres along x."""
    rom = procedural.range_of_motion(seconds=6.0)
    m = procedural.over_rotate(rom, 0.5)
    pos = m.positions.copy()
    pos[:, 0, 0] += np.linspace(0.0, WALK_M / float(guess_units(rom).metres_per_unit), m.num_frames)
    return rom, m.with_rotations(m.rotations, pos)


def _outside(limits: JointLimits, rotations: np.ndarray) -> int:
    return int((limits.violation(rotations) > 1e-6).sum())


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    rom, walk = _walking_clip()
    limits = JointLimits.fit(rom)
    assert _outside(limits, walk.rotations) > 100  # the clip itself is well outside
    return StudioState([Clip("walk", walk)], limits, fit_clips=[rom], save_dir=tmp_path_factory.mktemp("o"))


def test_limits_on_limits_every_frame_and_off_restores_the_clip(state):
    lim, work = state.limits, state.work.motion
    assert _outside(lim, work.rotations) == 0  # on by default: the whole working clip
    state.set_limits_on(False)
    assert _outside(lim, work.rotations) > 100
    assert np.array_equal(work.rotations, state.inputs[0].motion.rotations)  # off: the clip as it was
    state.set_limits_on(True)
    assert _outside(lim, work.rotations) == 0
    state.set_frame(40)
    assert np.allclose(state.raw, state.inputs[0].motion.rotations[40])  # the ghost: the unlimited frame


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's Chromium (/usr/bin/chromium) is not installed")
@pytest.mark.skipif(
    os.environ.get("JL_BROWSER_TESTS") != "1",
    reason="the studio's browser tests (25 s each) need JL_BROWSER_TESTS=1 (.ci/run runs them apart)",
)
def test_the_browser_plays_the_limited_clip_and_the_camera_follows_the_root(state):
    from playwright.sync_api import sync_playwright

    from jointlimits.studio.app import StudioApp

    app = StudioApp(state, port=0).start()
    mpu = state.metres_per_unit
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=CHROMIUM, args=args)
            page = b.new_page(viewport={"width": 1000, "height": 650})
            page.set_default_timeout(90000)  # a loaded 2-core machine: the page can take long to start
            page.goto(app.url)
            page.wait_for_selector("canvas")
            page.wait_for_timeout(2000)
            state.set_frame(0)
            app.redraw()
            page.get_by_text("Play", exact=True).first.click()
            frames, worst = set(), 0.0
            t_end = time.monotonic() + 90.0  # until a third of the clip played (slow on a loaded machine)
            while time.monotonic() < t_end and (len(frames) < 15 or state.frame < state.num_frames // 3):
                with state.lock:
                    frames.add(state.frame)
                    worst = max(worst, float(state.limits.violation(state.pose[None]).max()))
                page.wait_for_timeout(50)
            state.playing = False
            page.wait_for_timeout(1000)
            app.redraw()  # the stopped frame drawn once more
            page.wait_for_timeout(2000)  # its camera move reaches the browser and the browser's state comes back
            assert len(frames) > 10, frames  # it played
            assert worst < 1e-6  # every pose drawn while playing was inside the limits
            root = state.positions[0] * mpu
            assert abs(root[0]) > 0.5  # the root walked away from where the camera started
            cams = [c.camera for c in app.server.get_clients().values()]
            assert cams
            look = np.asarray(cams[0].look_at)
            assert np.hypot(look[0] - root[0], look[2] - root[2]) < 0.3, (look, root)
            b.close()
    finally:
        app.stop()

"""Untrusted joint and clip names through figures and the HTML page: shown as text, never run."""

from __future__ import annotations

import numpy as np

from jointlimits import JointLimits
from jointlimits.motion import procedural
from jointlimits.viz.plots import plot_joint_limit, plot_violation_report
from jointlimits.viz.viewer import write_limits_page

MATH = r"$\invalid$"
LINK = '<a href="http://x">y</a>'


def _clip():
    m = procedural.range_of_motion(seconds=2.0)
    sk = m.skeleton
    sk.names[sk.index("LeftArm")] = MATH
    sk.names[sk.index("RightArm")] = LINK
    return m


def test_mathtext_and_markup_names_in_figures(tmp_path):
    m = _clip()
    lim = JointLimits.fit(m, shape="ellipsoid")
    for name, out in ((MATH, "a.png"), (LINK, "b.png")):
        plot_joint_limit(lim, m, name, tmp_path / out)
        assert (tmp_path / out).stat().st_size > 1000
    plot_violation_report(lim, procedural.over_rotate(m, 0.5), tmp_path / "v.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png", "v.png"]


def test_markup_names_are_text_in_the_page(tmp_path):
    m = _clip()
    lim = JointLimits.fit(m, shape="ellipsoid")
    page = write_limits_page(lim, [m], tmp_path / "p.html", joints=[MATH, LINK], clip_names=[LINK])
    text = page.read_text()
    assert LINK not in text  # never raw markup
    # the dropdown label and the hover text carry the escaped name (plotly renders them as HTML)
    assert '"label":"&lt;a href=' in text
    assert '"text":["&lt;a href=' in text
    assert np.isfinite(lim.violation(m.rotations)).all()

"""A script that keeps fitted limits in its globals ends without nanobind's leak report: the
core's objects the package holds at module level are let go before the interpreter ends."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
from jointlimits.limits.model import JointLimits
from jointlimits.motion import procedural
clip = procedural.range_of_motion(seconds=0.5)
limits = JointLimits.fit([clip], shape="ellipsoid")
inside = limits.project(clip.rotations)
"""


def test_a_script_holding_limits_exits_without_a_leak_report():
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "leaked" not in run.stderr, run.stderr[-2000:]

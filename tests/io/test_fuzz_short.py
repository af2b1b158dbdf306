"""#39: CI runs a short version of every reader fuzzer (``scripts/fuzz_*.py``, small ``--n``):
each must end with 0 failures (only the reader's own error class, no hang over 10 s, finite
values in every accepted clip). The full runs (thousands of files) are the scripts themselves.
The fuzzers of optional formats skip when their package is missing."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"

#: about 40-100 s on two cores: .ci/run runs them after the suite (JL_FUZZ_SHORT=1), so README's
#: test command stays within its time
pytestmark = pytest.mark.skipif(
    os.environ.get("JL_FUZZ_SHORT") != "1", reason="the short fuzz runs need JL_FUZZ_SHORT=1 (.ci/run sets it)"
)

#: (script, extra args, module it needs or "$VARIABLE" it needs set): adding a fuzzer is one line
FUZZERS = [
    ("fuzz_bvh.py", ["--n", "40"], None),
    ("fuzz_gltf.py", ["--n", "30"], "pygltflib"),
    ("fuzz_amass.py", ["--n", "30", "--light"], None),
    ("fuzz_positions.py", ["--n", "30"], None),
    ("fuzz_limits.py", ["--n", "30"], None),
    ("fuzz_usd.py", ["--n", "15", "--quiet"], "pxr"),
    ("fuzz_fbx.py", ["--n", "3", "--seeds", "1", "--quiet"], "$JOINTLIMITS_BLENDER_PYTHON"),
]


@pytest.mark.parametrize("script,args,needs", FUZZERS, ids=[f[0] for f in FUZZERS])
def test_short_fuzz_run_has_no_failures(script, args, needs):
    if needs is not None and needs.startswith("$"):  # an environment variable (FBX: a Python with bpy)
        if not os.environ.get(needs[1:]):
            pytest.skip(f"{script} needs {needs[1:]} (a Python with bpy)")
    elif needs is not None and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{script} needs the optional package {needs!r}")
    r = subprocess.run([sys.executable, str(SCRIPTS / script), *args], capture_output=True, text=True, timeout=600)
    summary = [line for line in r.stdout.splitlines() if "failures" in line]
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert summary and all(" 0 failures" in line for line in summary), r.stdout[-2000:]
    last = r.stdout.strip().splitlines()[-1]
    if last.startswith("{"):  # fuzzlib.print_summary's counts (#38)
        counts = json.loads(last)
        assert counts["failed"] == 0 and counts["runs"] == counts["accepted"] + counts["rejected"], last

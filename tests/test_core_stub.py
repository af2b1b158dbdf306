"""The committed type stub of the compiled core (src/jointlimits/_core.pyi) is the one nanobind's
stubgen writes for the built core: regenerate it with scripts/stubgen.sh after changing the bindings."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import jointlimits

STUB = Path(__file__).resolve().parents[1] / "src" / "jointlimits" / "_core.pyi"


def _has_stubgen() -> bool:
    # find_spec of a submodule imports its parent, so without nanobind it raises instead of returning None
    try:
        return importlib.util.find_spec("nanobind.stubgen") is not None
    except ImportError:
        return False


@pytest.mark.skipif(not _has_stubgen(), reason="nanobind's stubgen is not installed (pip install -e '.[dev]')")
def test_committed_stub_matches_the_built_core(tmp_path: Path):
    out = tmp_path / "_core.pyi"
    # the jointlimits this test imported (sources with PYTHONPATH=src, or the installed package)
    pkg_root = str(Path(jointlimits.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [pkg_root, os.environ.get("PYTHONPATH")])))
    run = subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "jointlimits._core", "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert out.read_text() == STUB.read_text(), (
        "src/jointlimits/_core.pyi differs from the stub of the built core: run bash scripts/stubgen.sh"
    )

"""#38: FBX keeps the command line's output clean on both routes. ``info``/``fit``/``apply --json``
on a ``.fbx`` print exactly one JSON object and ``apply -q`` prints nothing, with bpy in-process (the
Python in JOINTLIMITS_BLENDER_PYTHON running the command itself) and through the subprocess bridge
(this Python, with JOINTLIMITS_BLENDER_PYTHON naming the one with bpy)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import jointlimits
from jointlimits.io import fbx
from jointlimits.motion import procedural

BPY = os.environ.get(fbx.ENV, "")
PKG_ROOT = str(Path(jointlimits.__file__).resolve().parents[1])  # the jointlimits under test

pytestmark = pytest.mark.skipif(
    not BPY, reason=f"{fbx.ENV} is not set: the FBX tests need a Python with bpy (.ci/run makes .venv-bpy)"
)


def _env(with_bridge: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != fbx.ENV and not k.startswith("BLENDER_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PKG_ROOT, os.environ.get("PYTHONPATH")]))
    if with_bridge:
        env[fbx.ENV] = BPY
    return env


@pytest.fixture(scope="module")
def clip_fbx(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fbx") / "rom.fbx"
    fbx.save(out, procedural.range_of_motion(seconds=1.0), blender=BPY)
    return out


def _runs(python: str, env: dict[str, str], clip: Path, work: Path) -> None:
    lim, out = work / "limits.json", work / "limited.fbx"
    commands = {
        "info": ["info", str(clip)],
        "fit": ["fit", str(clip), "-o", str(lim), "--force"],
        "apply": ["apply", str(lim), str(clip), "-o", str(out), "--force"],
    }
    for name, args in commands.items():
        run = subprocess.run(
            [python, "-m", "jointlimits", *args, "--json"], env=env, capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, (name, run.stderr[-2000:])
        text = run.stdout.strip()
        assert text.startswith("{") and text.endswith("}"), (name, run.stdout[:300])
        assert isinstance(json.loads(text), dict), name  # exactly one JSON object, nothing around it
        if name != "apply":  # -q: one command that reads and writes FBX (a Blender session each: 1-2 s)
            continue
        run = subprocess.run([python, "-m", "jointlimits", *args, "-q"], env=env, capture_output=True, text=True)
        assert run.returncode == 0, (name, run.stderr[-2000:])
        assert run.stdout == "" and run.stderr == "", (name, run.stdout[:300], run.stderr[:300])
    assert out.stat().st_size > 0


def test_the_subprocess_route_keeps_json_and_quiet_clean(clip_fbx, tmp_path):
    _runs(sys.executable, _env(with_bridge=True), clip_fbx, tmp_path)


def test_the_in_process_route_keeps_json_and_quiet_clean(clip_fbx, tmp_path):
    env = _env(with_bridge=False)
    probe = subprocess.run([BPY, "-c", "import bpy, jointlimits.cli"], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"the Python in {fbx.ENV} cannot import jointlimits with bpy (.ci/run installs the project there)")
    _runs(BPY, env, clip_fbx, tmp_path)

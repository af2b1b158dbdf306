"""The core without Python: cpp/examples/project_pose.cpp reads a limits file written by
JointLimits.save and projects poses with the same results as JointLimits.project."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import jointlimits as jl
from jointlimits.motion import procedural

ROOT = Path(__file__).resolve().parents[2]
CXX = shutil.which("g++") or shutil.which("c++")
HAVE_JSON = Path("/usr/include/nlohmann/json.hpp").exists()

pytestmark = pytest.mark.skipif(
    not (CXX and HAVE_JSON), reason="needs a C++ compiler and nlohmann/json (Debian: nlohmann-json3-dev)"
)


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("cpp") / "project_pose"
    subprocess.run(
        [
            CXX,
            "-O0",  # README builds it at -O2; -O0 compiles in 5 CPU-s instead of 8.6 (-O1) and agrees to 1e-12
            "-std=c++17",
            "-I",
            str(ROOT / "cpp/include"),
            str(ROOT / "cpp/examples/project_pose.cpp"),
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe


@pytest.fixture(scope="module")
def clips():
    m = procedural.range_of_motion(seconds=6.0)
    over = procedural.over_rotate(m, 1.6, seed=3)
    return m, over


def _run(exe: Path, limits: Path, poses: np.ndarray, *extra: str) -> subprocess.CompletedProcess:
    text = "\n".join(" ".join(repr(float(x)) for x in p.reshape(-1)) for p in poses) + "\n"
    return subprocess.run([str(exe), str(limits), *extra], input=text, capture_output=True, text=True)


@pytest.mark.parametrize(
    "shape,swing_twist",
    [
        ("box", False),
        ("oriented-box", True),
        ("ellipsoid", False),
        ("ellipsoid", True),
        ("kdop", False),
        ("kdop", True),
    ],
)
def test_example_matches_python(example, clips, tmp_path, shape, swing_twist):
    m, over = clips
    lim = jl.JointLimits.fit(m, shape=shape, swing_twist=swing_twist)
    path = tmp_path / "limits.json"
    lim.save(path)
    poses = over.rotations[::7]
    r = _run(example, path, poses)
    assert r.returncode == 0, r.stderr
    got = np.array([[float(x) for x in line.split()] for line in r.stdout.splitlines()]).reshape(poses.shape)
    want = jl.JointLimits.load(path).project(poses)
    assert np.abs(got - want).max() < 1e-12
    assert np.abs(got - poses).max() > 0.1  # the over-rotated poses were limited

    r = _run(example, path, poses, "--soften", "1.0", "0.1")
    got = np.array([[float(x) for x in line.split()] for line in r.stdout.splitlines()]).reshape(poses.shape)
    assert np.abs(got - jl.JointLimits.load(path).project(poses, soften=(1.0, 0.1))).max() < 1e-12


def test_example_refuses_bad_input(example, clips, tmp_path):
    m, _ = clips
    lim = jl.JointLimits.fit(m, shape="box")
    path = tmp_path / "limits.json"
    lim.save(path)
    d = json.loads(path.read_text())
    d["joints"][1]["compiled"]["a"]["f"] = [1.0, 2.0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    r = _run(example, bad, m.rotations[:1])
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1 and "16 numbers" in r.stderr
    r = _run(example, tmp_path / "missing.json", m.rotations[:1])
    assert r.returncode == 2 and "cannot read" in r.stderr
    r = _run(example, path, m.rotations[:1, :3])  # too few numbers on the line
    assert r.returncode == 2 and "expected" in r.stderr

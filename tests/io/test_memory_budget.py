"""#39: one memory budget for every reader, checked before allocation, values counted at their
float64 size; small files that declare (or compress) gigabytes are one error line of the
reader's own class, and the budget is settable (environment variable and API)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jointlimits import _budget
from jointlimits.errors import BVHError, FormatError, LimitsError
from jointlimits.io import amass, bvh
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion
from jointlimits.motion.skeleton import Motion, Skeleton


@pytest.fixture(autouse=True)
def _default_budget(monkeypatch):
    monkeypatch.delenv(_budget.ENV_VAR, raising=False)
    _budget.set_memory_budget(None)
    yield
    _budget.set_memory_budget(None)


def test_small_npz_of_uint8_poses_is_refused_before_expanding(tmp_path):
    p = tmp_path / "bomb.npz"
    F = 1_500_000  # 234 MB of uint8 poses, 1.9 GB as float64, in a 230 KB file
    np.savez_compressed(p, poses=np.zeros((F, 156), np.uint8), mocap_framerate=np.float64(120))
    assert p.stat().st_size < 1 << 20
    with pytest.raises(FormatError, match="memory budget") as ei:
        amass.load(p)
    assert "\n" not in str(ei.value)


def test_small_gltf_declaring_millions_of_keyframes_is_refused(tmp_path):
    pytest.importorskip("pygltflib")
    from jointlimits.io import gltf

    sk = Skeleton(["Hips"], np.array([-1]), np.zeros((1, 3)))
    gltf.save(tmp_path / "t.gltf", Motion(sk, np.tile([1.0, 0, 0, 0], (2, 1, 1)), np.zeros((2, 1, 3)), 1 / 30))
    d = json.loads((tmp_path / "t.gltf").read_text())
    for a in d["accessors"]:
        a["count"] = 8_000_000
        for k in ("bufferView", "byteOffset", "min", "max"):
            a.pop(k, None)
    (tmp_path / "huge.gltf").write_text(json.dumps(d))
    assert (tmp_path / "huge.gltf").stat().st_size < 1 << 20
    with pytest.raises(FormatError, match="memory budget"):
        gltf.load(tmp_path / "huge.gltf")


def test_bvh_of_joints_without_channels_is_charged_for_them(tmp_path):
    J, n = 500, 80_000
    lines = [
        "HIERARCHY",
        "ROOT Hips",
        "{",
        "  OFFSET 0 0 0",
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
    ]
    for k in range(1, J):
        lines += [f"JOINT J{k}", "{", "  OFFSET 0 1 0", "  CHANNELS 0"]
    lines += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * J
    lines += ["MOTION", f"Frames: {n}", "Frame Time: 0.033333"] + ["0 0 0 0 0 0"] * n
    p = tmp_path / "wide.bvh"
    p.write_text("\n".join(lines) + "\n")
    assert p.stat().st_size < 1 << 20
    with pytest.raises(BVHError, match="memory budget"):
        bvh.load(p)


def test_the_budget_is_settable_and_shared_by_a_limits_files_grids(tmp_path, monkeypatch):
    from jointlimits import JointLimits

    clip = range_of_motion(humanoid_skeleton(), seconds=2.0, fps=30, seed=3)
    JointLimits.fit([clip], shape="implicit").save(tmp_path / "l.json")
    JointLimits.load(tmp_path / "l.json")  # within the default
    monkeypatch.setenv(_budget.ENV_VAR, "1")
    with pytest.raises(LimitsError, match="memory budget") as ei:
        JointLimits.load(tmp_path / "l.json")
    assert "\n" not in str(ei.value)
    monkeypatch.setenv(_budget.ENV_VAR, "1_0")
    with pytest.raises(ValueError, match=_budget.ENV_VAR):
        _budget.memory_budget()
    monkeypatch.delenv(_budget.ENV_VAR)
    _budget.set_memory_budget(1 << 20)
    assert _budget.memory_budget() == 1 << 20
    with pytest.raises(LimitsError, match="memory budget"):
        JointLimits.load(tmp_path / "l.json")
    with pytest.raises(ValueError):
        _budget.set_memory_budget(10)
    _budget.set_memory_budget(None)
    assert _budget.memory_budget() == _budget.DEFAULT_BUDGET_BYTES

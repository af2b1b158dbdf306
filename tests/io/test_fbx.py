"""FBX without Blender: the one-line error naming the extra, bad names and paths. (With bpy, the
round trips and the Blender-written rig are in tests/integrations/test_blender.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.errors import FormatError, MissingExtraError
from jointlimits.io import fbx


def test_without_bpy_the_error_names_the_extra_and_the_variable(tmp_path, clips, monkeypatch):
    monkeypatch.delenv(fbx.ENV, raising=False)
    monkeypatch.setitem(__import__("sys").modules, "bpy", None)  # as if not installed here
    (tmp_path / "a.fbx").write_bytes(b"Kaydara FBX Binary  \x00")
    with pytest.raises(MissingExtraError, match=r"jointlimits\[blender\].*JOINTLIMITS_BLENDER_PYTHON"):
        fbx.load(tmp_path / "a.fbx")
    with pytest.raises(MissingExtraError):
        fbx.save(tmp_path / "b.fbx", clips[0].frames(0, 5))
    assert not (tmp_path / "b.fbx").exists()
    res = CliRunner().invoke(main, ["info", str(tmp_path / "a.fbx")])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "jointlimits[blender]" in res.output


def test_bad_names_and_paths(tmp_path, clips, monkeypatch):
    with pytest.raises(FormatError, match="ends in .fbx"):
        fbx.save(tmp_path / "a.fbz", clips[0].frames(0, 5))
    monkeypatch.setenv(fbx.ENV, str(tmp_path / "no-such-python"))
    with pytest.raises(FormatError, match="no such executable"):
        fbx.save(tmp_path / "a.fbx", clips[0].frames(0, 5))
    with pytest.raises(FileNotFoundError):
        fbx.load(tmp_path / "missing.fbx")


def test_arrays_for_blender_put_bones_at_the_joints(clips):
    m = clips[0].frames(0, 3)
    d = fbx.arrays_from_motion(m)
    from jointlimits.motion.skeleton import forward_kinematics

    _, gp = forward_kinematics(m)
    assert np.allclose(d["global_pose"][..., :3, 3], gp) and d["global_pose"].shape == (3, m.num_joints, 4, 4)
    assert np.all(np.linalg.norm(d["tails"] - d["heads"], axis=-1) > 0)  # Blender drops zero-length bones

"""The human joint-limit model: limits for any humanoid rig from one model file."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from jointlimits import io
from jointlimits.errors import LimitsError
from jointlimits.limits.human import HumanModel, limits_for, load_model
from jointlimits.motion.anatomy import anatomy, limit_points
from jointlimits.motion.naming import map_names
from jointlimits.motion.procedural import range_of_motion
from jointlimits.motion.skeleton import Motion

SHIPPING = ("CMU Graphics Lab", "MIT", "Apache-2.0")


def test_shipped_model_is_small_and_ships_only_permissive_clips():
    m = load_model()
    assert len(json.dumps(m.to_dict())) < 100_000
    clips = m.provenance["clips"]
    assert clips and all(c["licence"].startswith(SHIPPING) for c in clips)
    assert not any(c["clip"].startswith(("lafan1/", "bandai_namco/", "sfu/")) for c in clips)
    assert set(m.expected_recall) == set(m.segments)


def test_rig_limits_agree_with_the_model_space():
    """A rig joint's limit admits a frame exactly when the model admits its model-space point."""
    clip = range_of_motion(seconds=6.0, over_rotation=0.6)
    model = HumanModel.build([range_of_motion(seconds=6.0, seed=3)])
    body = anatomy(clip.skeleton, clip)
    lim = model.limits(clip.skeleton, clip)
    pts = limit_points(clip, body)
    inside = model.contains(pts)
    c = lim.contains(clip.rotations)
    for name, seg in body.segments.items():
        want = np.concatenate([c[:, j] for j in seg.joints])
        assert np.array_equal(want, inside[name]), name
    assert not all(v.all() for v in inside.values())  # the over-rotated clip is partly outside


def test_limits_for_any_convention_then_nothing_outside():
    clip = range_of_motion(seconds=4.0, over_rotation=0.8)
    for conv in ("mixamo", "smpl"):
        m = Motion(map_names(clip.skeleton, conv), clip.rotations, clip.positions, clip.frame_time)
        lim = limits_for(m.skeleton, None, m)
        out = lim.apply(m)
        assert (lim.violation(out.rotations) > 1e-6).sum() == 0
        assert (lim.violation(m.rotations) > 1e-6).sum() > 0


def test_model_file_round_trip_and_bad_file(tmp_path):
    model = HumanModel.build([range_of_motion(seconds=3.0)])
    p = tmp_path / "m.json"
    model.save(p)
    back = HumanModel.load(p)
    assert back.to_dict() == json.loads(p.read_text())
    (tmp_path / "bad.json").write_text('{"format": "something"}')
    with pytest.raises(LimitsError, match="not a human joint-limit model"):
        HumanModel.load(tmp_path / "bad.json")


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "jointlimits", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_apply_human_and_inside_clip_comes_back_byte_identical(tmp_path):
    src = tmp_path / "rom.bvh"
    io.save(src, range_of_motion(seconds=3.0, over_rotation=0.5))
    a, b = tmp_path / "a.bvh", tmp_path / "b.bvh"
    r = _cli("apply", "--limits", "human", str(src), "-o", str(a))
    assert r.returncode == 0, r.stderr
    r = _cli("apply", "human", str(a), "-o", str(b))
    assert r.returncode == 0, r.stderr
    assert "limited 0/" in r.stdout
    assert a.read_bytes() == b.read_bytes()


def test_cli_human_build_and_errors(tmp_path):
    src = tmp_path / "rom.bvh"
    io.save(src, range_of_motion(seconds=2.0))
    out = tmp_path / "model.json"
    r = _cli("human", "build", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert load_model(out).segments
    r = _cli("human", "build", str(src), "-o", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = _cli("report", str(out), str(src))
    assert r.returncode == 0, r.stderr
    r = _cli("apply", str(src), "-o", str(tmp_path / "x.bvh"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_prior_widened_by_clips_admits_both():
    prior = HumanModel.build([range_of_motion(seconds=4.0, seed=1)])
    user = range_of_motion(seconds=4.0, seed=2, over_rotation=0.7)
    widened, decided = prior.widened([user])
    pts_user = HumanModel.points([user])
    pts_prior = HumanModel.points([range_of_motion(seconds=4.0, seed=1)])
    for pts in (pts_user, pts_prior):
        assert all(v.all() for v in widened.contains(pts).values())
    assert not all(v.all() for v in prior.contains(pts_user).values())
    assert set(decided.values()) <= {"prior", "clips", "both"} and set(decided.values()) != {"prior"}

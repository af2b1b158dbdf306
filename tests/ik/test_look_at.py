"""Look-at: the demo's single-bone step (golden) and the chain version that uses lower joints first."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jointlimits.errors import IKError
from jointlimits.ik import ik_look_at, look_at_chain
from jointlimits.limits.reach import ReachWindow, ReachWindowLimit
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Motion, Skeleton, forward_kinematics

from conftest import SHARED_MISSING

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
GOLDEN = SHARED / "golden" / "ik.json"
CHAIN = ["Spine", "Spine1", "Neck", "Head"]
FWD = np.array([0.0, 0.0, 1.0])  # the head looks along its local +z


@pytest.mark.skipif(not GOLDEN.is_file(), reason=SHARED_MISSING)
def test_golden_ik_look_at():
    data = json.loads(GOLDEN.read_text())
    k, case = next((i, c) for i, c in enumerate(data["cases"]) if c["function"] == "ik_look_at")
    man = json.loads((SHARED / "golden" / "manifest.json").read_text())["files"]["ik.json"]["outputs"]
    tol = next(o["tolerance"] for o in man if o["path"] == f"cases/{k}/outputs/bone_rotation")
    inp = {key: np.asarray(v, np.float32).astype(np.float64) for key, v in case["inputs"].items()}
    got = ik_look_at(**inp, eps=float(np.float32(case["params"]["eps"])))
    exp = np.asarray(case["outputs"]["bone_rotation"], np.float32).astype(np.float64)
    bound = tol["atol"] + tol["rtol"] * np.abs(exp)
    ok = np.all(np.abs(got - exp) <= bound, axis=-1) | np.all(np.abs(got + exp) <= bound, axis=-1)
    assert ok.all(), f"rows {np.nonzero(~ok)[0][:10]} differ from the reference"
    # rows 0-2 already aim at the target: unchanged bit for bit
    assert np.array_equal(got[:3], inp["bone_rotation"][:3])


def _spine() -> Skeleton:
    return Skeleton(
        ["Hips", "Spine", "Spine1", "Neck", "Head"],
        [-1, 0, 1, 2, 3],
        [[0, 100, 0], [0, 10, 0], [0, 15, 0], [0, 20, 0], [0, 10, 0]],
    )


def _gaze_error(mot: Motion, target: np.ndarray) -> np.ndarray:
    gr, gp = forward_kinematics(mot)
    look = quat.mul_vec(gr[:, 4], FWD)
    to = target - gp[:, 4]
    to /= np.linalg.norm(to, axis=-1, keepdims=True)
    return np.arccos(np.clip(np.sum(look * to, -1), -1, 1))


def _targets(F: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ang = rng.uniform(-2.0, 2.0, F)
    return np.stack([300 * np.sin(ang), 150 + rng.uniform(-100, 100, F), 300 * np.cos(ang)], -1)


def test_free_chain_looks_exactly_at_target():
    mot = Motion.rest(_spine(), 40)
    tgt = _targets(40)
    out = look_at_chain(mot, CHAIN, tgt, forward=FWD)
    assert np.max(_gaze_error(out, tgt)) < 1e-6
    # without limits the lowest joint does all the work
    assert np.allclose(out.rotations[:, 2:], quat.identity(()), atol=1e-6)


def _tight(max_angle: float) -> ReachWindowLimit:
    """Bone along +y, direction inside a square window of half-width tan(max_angle), twist ±max_angle."""
    h = np.tan(max_angle)
    win = ReachWindow([0.0, 1.0, 0.0], [[-h, -h], [h, -h], [h, h], [-h, h]])
    return ReachWindowLimit(quat.identity(()), [0.0, 1.0, 0.0], [win], (-max_angle, max_angle))


def test_lower_joints_exhaust_their_limits_first():
    mot = Motion.rest(_spine(), 60)
    tgt = _targets(60, 1)
    lims = {1: _tight(0.15), 2: _tight(0.15), 3: _tight(0.3), 4: None}
    out = look_at_chain(mot, CHAIN, tgt, forward=FWD, limits=lims)
    rot = out.rotations
    for j, lim in lims.items():
        if lim is not None:
            assert np.all(lim.contains(rot[:, j])), f"joint {j} left its limit"
    assert np.max(_gaze_error(out, tgt)) < 1e-4  # the head makes up the rest
    moved = [quat.angle(rot[:, j]) for j in (1, 2, 3, 4)]
    big = moved[3] > 1e-3
    assert big.sum() > 10  # targets far enough to need the head
    # wherever a higher joint moves, the spine joints below it are against their limits
    for j in (1, 2):
        viol = lims[j].violation(quat.mul(rot[big, j], quat.from_angle_axis(np.array(0.05), [0.0, 1.0, 0.0])))
        edge = lims[j].violation(rot[big, j] * 1.0)
        assert np.all(edge == 0)
        assert np.all(quat.angle(rot[big, j]) > 0.1), "a lower joint stopped short of its limit"
        assert np.any(viol > 0)
    # a small turn is done by the lowest joint alone
    near = np.array([[0.0, 160.0, 300.0]])
    small = look_at_chain(Motion.rest(_spine(), 1), CHAIN, near, forward=FWD, limits=lims)
    assert quat.angle(small.rotations[0, 1]) > 1e-3
    assert np.allclose(small.rotations[0, 2:], quat.identity(()), atol=1e-9)


def test_look_at_errors():
    mot = Motion.rest(_spine(), 2)
    with pytest.raises(IKError, match="no joint named"):
        look_at_chain(mot, ["Spine", "Jaw"], [0, 0, 1])
    with pytest.raises(IKError, match="not below"):
        look_at_chain(mot, ["Head", "Spine"], [0, 0, 1])
    with pytest.raises(IKError, match="NaN"):
        look_at_chain(mot, CHAIN, [np.nan, 0, 1])

"""Shared test fixtures: where ../shared is, and skipping when it is absent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MOCAP = SHARED / "data" / "mocap"
GOLDEN = SHARED / "golden"

#: The one skip reason of every test that needs ../shared (real clips, golden vectors).
SHARED_MISSING = f"../shared not found at {SHARED}: the real clips and golden vectors live beside the repo"

needs_shared = pytest.mark.skipif(not MOCAP.is_dir() or not GOLDEN.is_dir(), reason=SHARED_MISSING)


def mocap_files() -> list[Path]:
    return sorted(MOCAP.glob("*/*.bvh")) if MOCAP.is_dir() else []


def golden(name: str) -> dict:
    path = GOLDEN / name
    if not path.is_file():
        pytest.skip(SHARED_MISSING)
    return json.loads(path.read_text())


def golden_tolerance(file: str, path: str) -> tuple[float, float]:
    """(atol, rtol) the manifest recommends for the output array at ``path`` (e.g.
    ``"cases/3/outputs/q"``) of a golden file."""
    man = json.loads((GOLDEN / "manifest.json").read_text())
    for out in man["files"][file]["outputs"]:
        if out["path"] == path:
            tol = out["tolerance"]
            return float(tol.get("atol", 0.0)), float(tol.get("rtol", 0.0))
    raise KeyError(f"{path} not in manifest of {file}")


def assert_golden(actual, expected, file: str, path: str, atol: float | None = None) -> None:
    """abs(actual - golden) <= atol + rtol*abs(golden) with the manifest's tolerance (or ``atol``)."""
    a_tol, r_tol = golden_tolerance(file, path)
    if atol is not None:
        a_tol = atol
    exp = f32(expected)
    act = np.asarray(actual, dtype=np.float64)
    assert act.shape == exp.shape, f"{file}:{path}: shape {act.shape} != {exp.shape}"
    err = np.abs(act - exp) - (a_tol + r_tol * np.abs(exp))
    worst = np.unravel_index(np.argmax(err), err.shape) if err.size else ()
    assert err.size == 0 or err.max() <= 0, (
        f"{file}:{path}: worst at {worst}: {act[worst]} vs golden {exp[worst]} (atol {a_tol}, rtol {r_tol})"
    )


def f32(x) -> np.ndarray:
    """Golden numbers back to the exact float32 reference bits, then float64 for our math."""
    return np.asarray(x, dtype=np.float32).astype(np.float64)


@pytest.fixture(scope="session")
def clips():
    """A procedural range-of-motion clip of the built-in humanoid and its over-rotated copy."""
    from jointlimits.motion.procedural import over_rotate, range_of_motion

    clip = range_of_motion(seconds=8.0, seed=2)
    return clip, over_rotate(clip, 0.5, seed=2)


def two_joint_limits(shape: str, swing_twist: bool, **kw):
    """Limits fitted on a synthetic chain root -> a -> b (a: a Lissajous of rotations, b: another
    with a phase), and the clip's rotations ``[600, 3, 4]``."""
    from jointlimits import JointLimits
    from jointlimits.motion import quat
    from jointlimits.motion.skeleton import Motion, Skeleton

    sk = Skeleton(["root", "a", "b"], np.array([-1, 0, 1]), np.array([[0, 0, 0], [0, 1.0, 0], [0, 1.0, 0]]))
    n = 600
    t = np.linspace(0, 6 * np.pi, n)
    v = np.zeros((n, 3, 3))
    v[:, 1] = np.column_stack([0.6 * np.sin(t), 0.3 * np.cos(1.3 * t), 0.2 * np.sin(0.7 * t)])
    v[:, 2] = np.column_stack([0.5 * np.sin(t + 0.3), 0.1 * np.sin(2.1 * t), 0.3 * (1 + np.cos(t))])
    rot = quat.from_scaled_angle_axis(v)
    m = Motion(sk, rot, np.zeros((n, 3, 3)), 1 / 30)
    return JointLimits.fit(m, shape=shape, swing_twist=swing_twist, **kw), rot


@pytest.fixture(scope="module")
def threads():
    """An in-process Dask cluster (threads) the CLI reaches over TCP, for ``scan``/``clean``/``fit
    --scheduler``: no worker processes to start."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address

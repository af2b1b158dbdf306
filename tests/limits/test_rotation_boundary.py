"""#41: rotations are validated at the API boundary the way NaN is. A zero or near-zero quaternion
raises LimitsError; a scaled one is normalised first (documented in ``limits._checks``), so
project, contains, violation and apply give for ``s * q`` exactly what they give for ``q``;
``io.save`` refuses non-unit or non-finite rotations and writes nothing."""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from jointlimits import JointLimits  # noqa: E402
from jointlimits import io as motion_io  # noqa: E402
from jointlimits.errors import LimitsError, SkeletonError  # noqa: E402
from jointlimits.motion import quat  # noqa: E402
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion  # noqa: E402
from jointlimits.motion.skeleton import Motion  # noqa: E402


@pytest.fixture(scope="module")
def model():
    clip = range_of_motion(humanoid_skeleton(), seconds=3.0, fps=30, seed=2)
    return JointLimits.fit([clip], shape="box"), clip


quats = st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4).filter(lambda v: float(np.dot(v, v)) > 1e-2)
scales = st.one_of(st.floats(1e-5, 1e-2), st.floats(2.0, 1e10))


@settings(max_examples=40, deadline=None)
@given(q=quats, scale=scales, frame=st.integers(0, 89), joint=st.integers(1, 21))
def test_scaled_quaternions_give_what_unit_ones_give(model, q, scale, frame, joint):
    lim, clip = model
    J = clip.skeleton.num_joints
    unit = clip.rotations[frame : frame + 1].copy()
    unit[0, joint % J] = quat.normalize(np.asarray(q))
    scaled = unit.copy()
    scaled[0, joint % J] *= scale
    p_unit, p_scaled = lim.project(unit), lim.project(scaled)
    np.testing.assert_allclose(p_scaled, p_unit, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(p_scaled, axis=-1), 1.0, atol=1e-9)
    assert np.array_equal(lim.contains(scaled), lim.contains(unit))
    np.testing.assert_allclose(lim.violation(scaled), lim.violation(unit), atol=1e-7)
    m_unit = Motion(clip.skeleton, unit, clip.positions[:1], clip.frame_time)
    m_scaled = Motion(clip.skeleton, scaled, clip.positions[:1], clip.frame_time)
    np.testing.assert_allclose(lim.apply(m_scaled).rotations, lim.apply(m_unit).rotations, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(tiny=st.one_of(st.just(0.0), st.floats(0, 1e-7)), joint=st.integers(0, 21))
def test_zero_quaternions_are_refused_everywhere(model, tiny, joint):
    lim, clip = model
    q = clip.rotations[:2].copy()
    q[1, joint % clip.skeleton.num_joints] = [tiny, 0.0, 0.0, 0.0]
    for call in (lim.project, lim.contains, lim.violation):
        with pytest.raises(LimitsError, match="zero"):
            call(q)
    with pytest.raises(LimitsError, match="zero"):
        lim.apply(Motion(clip.skeleton, q, clip.positions[:2], clip.frame_time), root=True)


@pytest.mark.parametrize("bad", [1e10, 0.0, np.nan, np.inf, 1.5])
@pytest.mark.parametrize("ext", [".bvh", ".glb"])
def test_save_refuses_rotations_that_are_not_unit(model, tmp_path, bad, ext):
    if ext == ".glb":
        pytest.importorskip("pygltflib")
    _, clip = model
    q = clip.rotations[:3].copy()
    q[2, 4] = q[2, 4] * bad if np.isfinite(bad) and bad else [bad, 0, 0, 0]
    m = Motion(clip.skeleton, q, clip.positions[:3], clip.frame_time)
    out = tmp_path / f"x{ext}"
    with pytest.raises(SkeletonError, match="unit quaternion"):
        motion_io.save(out, m)
    assert not out.exists()

"""Skeleton validation and queries, Motion copy and slicing, forward kinematics against a plain
numpy loop written here, and End Site positions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimits.errors import SkeletonError
from jointlimits.motion import quat
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion
from jointlimits.motion.skeleton import (
    Motion,
    Skeleton,
    end_site_positions,
    forward_kinematics,
    forward_kinematics_arrays,
)

from conftest import MOCAP, needs_shared

RNG = np.random.default_rng(11)


def numpy_fk(rotations: np.ndarray, positions: np.ndarray, parents) -> tuple[np.ndarray, np.ndarray]:
    """Global rotations and positions by a loop over joints: gr_j = gr_p lr_j, gp_j = gp_p + gr_p lp_j."""
    gr, gp = np.empty_like(rotations), np.empty_like(positions)
    for j, p in enumerate(parents):
        if p < 0:
            gr[..., j, :], gp[..., j, :] = rotations[..., j, :], positions[..., j, :]
        else:
            gr[..., j, :] = quat.mul(gr[..., p, :], rotations[..., j, :])
            gp[..., j, :] = gp[..., p, :] + quat.mul_vec(gr[..., p, :], positions[..., j, :])
    return gr, gp


def random_skeleton(J: int, rng: np.random.Generator) -> Skeleton:
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, J)]
    names = [f"j{j}" for j in range(J)]
    ends = [(int(p), rng.normal(size=3)) for p in rng.integers(0, J, 3)]
    return Skeleton(names, parents, rng.normal(size=(J, 3)), end_sites=ends)


def random_motion(sk: Skeleton, F: int, rng: np.random.Generator) -> Motion:
    rot = quat.normalize(rng.normal(size=(F, sk.num_joints, 4)))
    pos = sk.offsets[None] + 0.1 * rng.normal(size=(F, sk.num_joints, 3))
    return Motion(sk, rot, pos, 1 / 30)


def three() -> Skeleton:
    return Skeleton(["root", "a", "b"], [-1, 0, 1], [[0, 0, 0], [0, 1.0, 0], [0, 1.0, 0]])


# --------------------------------------------------------------------------- skeleton validation


@pytest.mark.parametrize(
    "parents,match",
    [
        ([0, 0, 1], "root first"),  # root is its own parent
        ([1, -1, 1], "root first"),  # root not first
        ([-1, -1, 1], "root first"),  # a second root
        ([-1, 2, 1], "before its child"),  # a cycle a <-> b (a child listed before its parent)
        ([-1, 0, 2], "before its child"),  # a joint its own parent
        ([-1, 0, 7], "before its child"),  # a parent that does not exist
    ],
)
def test_bad_parents_and_cycles_raise(parents, match):
    with pytest.raises(SkeletonError, match=match):
        Skeleton(["root", "a", "b"], parents, np.zeros((3, 3)))


@pytest.mark.parametrize(
    "kw",
    [
        {"parents": [-1, 0]},  # two parents for three names
        {"offsets": np.zeros((2, 3))},
        {"offsets": np.zeros((3, 2))},
        {"channels": [["Xrotation"], ["Xrotation"]]},
    ],
)
def test_arrays_of_the_wrong_size_raise(kw):
    args = {"names": ["root", "a", "b"], "parents": [-1, 0, 1], "offsets": np.zeros((3, 3))} | kw
    with pytest.raises(SkeletonError, match="disagree"):
        Skeleton(**args)


def test_no_joints_and_duplicate_names_raise():
    with pytest.raises(SkeletonError):
        Skeleton([], [], np.zeros((0, 3)))
    with pytest.raises(SkeletonError, match=r"duplicate joint names: \['a'\]"):
        Skeleton(["root", "a", "a"], [-1, 0, 0], np.zeros((3, 3)))


@pytest.mark.parametrize("parent", [-1, 3])
def test_end_site_with_a_parent_outside_the_skeleton_raises(parent):
    with pytest.raises(SkeletonError):
        Skeleton(["root", "a", "b"], [-1, 0, 1], np.zeros((3, 3)), end_sites=[(parent, [0, 1.0, 0])])


def test_default_channels_root_moves_others_turn():
    sk = three()
    assert sk.has_position_channels("root") and not sk.has_position_channels("a")
    assert [sk.rotation_order(j) for j in range(3)] == ["zyx"] * 3


def test_index_children_descendants_chain_depth_match_a_brute_force_walk():
    sk = random_skeleton(12, np.random.default_rng(2))
    P = sk.parents

    def ancestors(j):
        out = []
        while P[j] >= 0:
            j = int(P[j])
            out.append(j)
        return out

    for j in range(sk.num_joints):
        assert sk.index(sk.names[j]) == j == sk.index(j)
        assert sk.children(j) == [c for c in range(sk.num_joints) if P[c] == j]
        assert sk.descendants(j) == [c for c in range(sk.num_joints) if j in ancestors(c)]
        assert sk.depth()[j] == len(ancestors(j))
        for c in sk.descendants(j):
            assert sk.chain(j, c) == [a for a in ancestors(c)[::-1] if a == j or j in ancestors(a)] + [c]
    with pytest.raises(SkeletonError, match="no joint named 'nope'"):
        sk.index("nope")
    with pytest.raises(SkeletonError, match="out of range"):
        sk.index(12)
    with pytest.raises(SkeletonError, match="is not below"):
        three().chain("b", "root")


def test_copy_is_independent_and_fingerprint_ignores_offsets():
    sk = humanoid_skeleton()
    c = sk.copy()
    c.offsets[1] += 5.0
    c.end_sites[0][1][1] += 5.0
    c.names[0] = "Pelvis"
    assert sk.names[0] == "Hips" and not np.array_equal(c.offsets, sk.offsets)
    assert not np.array_equal(c.end_sites[0][1], sk.end_sites[0][1])
    other_actor = Skeleton(sk.names, sk.parents, sk.offsets * 1.1)
    assert other_actor.fingerprint() == sk.fingerprint() != c.fingerprint()


# --------------------------------------------------------------------------- motion


@pytest.mark.parametrize(
    "rot,pos,ft,match",
    [
        ((5, 2, 4), (5, 3, 3), 0.1, "rotations"),
        ((5, 3, 3), (5, 3, 3), 0.1, "rotations"),
        ((3, 4), (3, 3), 0.1, "rotations"),
        ((5, 3, 4), (4, 3, 3), 0.1, "positions"),
        ((5, 3, 4), (5, 3), 0.1, "positions"),
        ((5, 3, 4), (5, 3, 3), 0.0, "frame_time"),
        ((5, 3, 4), (5, 3, 3), -1 / 30, "frame_time"),
        ((5, 3, 4), (5, 3, 3), float("nan"), "frame_time"),
        ((5, 3, 4), (5, 3, 3), float("inf"), "frame_time"),
    ],
)
def test_motion_of_the_wrong_shape_or_rate_raises(rot, pos, ft, match):
    with pytest.raises(SkeletonError, match=match):
        Motion(three(), quat.identity(rot[:-1]) if rot[-1] == 4 else np.zeros(rot), np.zeros(pos), ft)


def test_motion_copy_owns_its_arrays():
    m = random_motion(three(), 6, RNG)
    c = m.copy()
    assert np.array_equal(c.rotations, m.rotations) and np.array_equal(c.positions, m.positions)
    c.rotations[0, 0] = [0.0, 1.0, 0.0, 0.0]
    c.positions[0, 0] = 99.0
    assert not np.array_equal(c.rotations, m.rotations) and m.positions[0, 0, 0] != 99.0


def test_slices_are_copies_with_the_step_in_the_frame_time():
    m = random_motion(three(), 10, RNG)
    for sub, sl in (
        (m[2:8], slice(2, 8)),
        (m[1::3], slice(1, None, 3)),
        (m.frames(-4), slice(-4, None)),
        (m[5:5], slice(5, 5)),
    ):
        assert np.array_equal(sub.rotations, m.rotations[sl]) and np.array_equal(sub.positions, m.positions[sl])
        assert sub.frame_time == m.frame_time * (sl.step or 1)
        assert sub.num_frames == len(range(10)[sl])
        assert sub.duration == pytest.approx(sub.num_frames * sub.frame_time)
    sub = m[2:8]
    sub.rotations[:] = 0.0
    sub.positions[:] = 0.0
    assert np.all(np.linalg.norm(m.rotations, axis=-1) > 0.99)  # the original untouched
    with pytest.raises(TypeError, match="slice"):
        m[3]


def _rows(path) -> list[str]:
    lines = path.read_text().splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("Frame Time")) + 1 :]


@pytest.mark.parametrize(
    "sl",
    [
        slice(3, 9),
        slice(None, -2),
        slice(3, 9, 2),
        slice(None, None, 2),
    ],
)
def test_slicing_a_loaded_clip_slices_its_source_angles_and_tokens(tmp_path, sl):
    from jointlimits.io import bvh

    src = tmp_path / "c.bvh"
    bvh.save(src, range_of_motion(seconds=0.5, seed=1))
    head, rows = src.read_text().split("Frame Time", 1)
    rows = rows.splitlines()  # the clip's values to 4 decimals: tokens the writer would not write itself
    src.write_text(
        head
        + "Frame Time"
        + "\n".join(rows[:1] + [" ".join(f"{float(v):.4f}" for v in r.split()) for r in rows[1:]])
        + "\n"
    )
    m = bvh.load(src)
    sub = m[sl]
    for a, b in zip(sub.source_euler, m.source_euler):
        assert np.array_equal(np.asarray(a), np.asarray(b)[sl])
    bvh.save(tmp_path / "sub.bvh", sub)
    assert _rows(tmp_path / "sub.bvh") == _rows(src)[sl]


def test_with_rotations_keeps_the_skeleton_and_copies_positions():
    m = random_motion(three(), 4, RNG)
    new = quat.identity((4, 3))
    w = m.with_rotations(new)
    assert w.skeleton is m.skeleton and np.array_equal(w.rotations, new)
    w.positions[:] = 0.0
    assert np.any(m.positions != 0.0)


def test_rest_motion_and_check_finite():
    sk = humanoid_skeleton()
    m = Motion.rest(sk, 4, frame_time=0.01)
    assert m.num_frames == 4 and m.fps == pytest.approx(100.0)
    _, gp = forward_kinematics(m)
    np.testing.assert_allclose(gp[0, sk.index("Head")], [0, 0.9 * 175, 0], atol=1e-9)  # Winter: 0.900 H
    m.check_finite()
    m.positions[2, sk.index("LeftHand"), 1] = np.nan
    with pytest.raises(SkeletonError, match="positions of joint 'LeftHand' at frame 2"):
        m.check_finite()


# --------------------------------------------------------------------------- forward kinematics


def test_fk_matches_a_numpy_loop_on_random_rotations():
    sk = random_skeleton(15, RNG)
    m = random_motion(sk, 40, RNG)
    gr, gp = forward_kinematics(m)
    wr, wp = numpy_fk(m.rotations, m.positions, sk.parents)
    np.testing.assert_allclose(gr, wr, atol=1e-12)
    np.testing.assert_allclose(gp, wp, atol=1e-12)
    assert np.array_equal(m.global_transforms()[1], gp)


def test_fk_of_one_bone_turned_a_quarter_turn():
    m = Motion.rest(three())
    m.rotations[0, 1] = quat.from_angle_axis(np.pi / 2, [0, 0, 1.0])  # a about +Z: its child's +Y -> -X
    _, gp = forward_kinematics(m)
    np.testing.assert_allclose(gp[0], [[0, 0, 0], [0, 1, 0], [-1, 1, 0]], atol=1e-15)


def test_fk_batched_shapes_broadcast_and_match_one_at_a_time():
    sk = random_skeleton(6, RNG)
    rot = quat.normalize(RNG.normal(size=(2, 3, 5, 6, 4)))
    pos = RNG.normal(size=(6, 3))  # one set of local positions for every batch
    gr, gp = forward_kinematics_arrays(rot, pos, sk.parents)
    assert gr.shape == (2, 3, 5, 6, 4) and gp.shape == (2, 3, 5, 6, 3)
    for i in range(2):
        for k in range(3):
            r1, p1 = forward_kinematics_arrays(rot[i, k], np.broadcast_to(pos, (5, 6, 3)), sk.parents)
            assert np.array_equal(gr[i, k], r1) and np.array_equal(gp[i, k], p1)
    r0, p0 = forward_kinematics_arrays(rot[0, 0, 0], pos, sk.parents)  # no frame axis at all
    assert r0.shape == (6, 4) and np.array_equal(p0, gp[0, 0, 0])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 9))
def test_fk_same_positions_for_q_and_minus_q(seed, J):
    rng = np.random.default_rng(seed)
    sk = random_skeleton(J, rng)
    m = random_motion(sk, 3, rng)
    flip = np.where(rng.random((3, J, 1)) < 0.5, -1.0, 1.0)
    gr, gp = forward_kinematics(m)
    fr, fp = forward_kinematics(m.with_rotations(m.rotations * flip))
    np.testing.assert_allclose(fp, gp, atol=1e-12)
    # the same global rotations, each up to its sign
    np.testing.assert_allclose(np.abs(np.sum(fr * gr, axis=-1)), 1.0, atol=1e-12)


@needs_shared
def test_fk_matches_a_numpy_loop_on_a_shared_clip():
    from jointlimits.io import bvh

    m = bvh.load(MOCAP / "cmu_cgspeed_max" / "131_01.bvh")[::20]  # mixed rotation orders
    gr, gp = forward_kinematics(m)
    wr, wp = numpy_fk(m.rotations, m.positions, m.skeleton.parents)
    np.testing.assert_allclose(gr, wr, atol=1e-12)
    np.testing.assert_allclose(gp, wp, atol=1e-9)  # CMU units, ~20 across
    # and End Sites sit at their parent plus the parent's global rotation of their offset
    ends = end_site_positions(m)
    for e, (p, off) in enumerate(m.skeleton.end_sites):
        np.testing.assert_allclose(ends[:, e], wp[:, p] + quat.mul_vec(wr[:, p], off), atol=1e-9)


# --------------------------------------------------------------------------- End Sites


def test_end_sites_of_the_humanoid_at_rest_are_its_extremities():
    sk = humanoid_skeleton(1.75, "cm")
    m = Motion.rest(sk, 2)
    ends = end_site_positions(m)
    assert ends.shape == (2, len(sk.end_sites), 3)
    tips = {sk.names[p]: ends[0, e] for e, (p, _) in enumerate(sk.end_sites)}
    np.testing.assert_allclose(tips["Head"], [0, 175.0, 0], atol=1e-9)  # top of the head: 1.0 H
    # finger tips: half the shoulder width plus the arm, at shoulder height (Winter: 0.818 H)
    reach = (0.02 + 0.1095 + 0.186 + 0.146 + 0.108) * 175
    np.testing.assert_allclose(tips["LeftHand"], [reach, 0.818 * 175, 0], atol=1e-9)
    np.testing.assert_allclose(tips["RightHand"], [-reach, 0.818 * 175, 0], atol=1e-9)
    assert tips["LeftToe"][1] == pytest.approx(0.0, abs=1e-9)


def test_end_sites_follow_their_parent_and_take_given_transforms():
    sk = random_skeleton(8, RNG)
    m = random_motion(sk, 5, RNG)
    wr, wp = numpy_fk(m.rotations, m.positions, sk.parents)
    ends = end_site_positions(m)
    for e, (p, off) in enumerate(sk.end_sites):
        np.testing.assert_allclose(ends[:, e], wp[:, p] + quat.mul_vec(wr[:, p], off), atol=1e-12)
    # given transforms are used as they are (not recomputed)
    moved = end_site_positions(m, wr, wp + [1.0, 2.0, 3.0])
    np.testing.assert_allclose(moved, ends + [1.0, 2.0, 3.0], atol=1e-12)


def test_skeleton_without_end_sites_has_none():
    m = Motion.rest(three(), 3)
    assert end_site_positions(m).shape == (3, 0, 3)

"""Coupled (parent-conditioned) implicit limits (limits/coupled.py): the tests moved here from
test_implicit.py, then invariants on a constructed example whose child range flips with the
parent: training rotations inside and kept bit for bit, projection idempotent, q and -q alike
(child and parent), a child rotation admitted for one parent cell and refused for another, and
a save/load round trip equal bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jointlimits import JointLimits
from jointlimits.errors import LimitsError
from jointlimits.limits.coupled import CoupledLimit
from jointlimits.limits.implicit import Implicit, fit_field
from jointlimits.limits.joint import FittedLimit
from jointlimits.motion import quat
from jointlimits.motion.skeleton import Motion, Skeleton

from conftest import two_joint_limits

RNG = np.random.default_rng(7)


_limits = two_joint_limits


# --------------------------------------------------------------------------- moved from test_implicit.py


def test_coupled_with_one_parent_cell_equals_uncoupled():
    from jointlimits.limits.coupled import CoupledLimit

    plain, rot = _limits("implicit", False, padding=0.05)
    one, _ = _limits("implicit", False, coupled=True, pairs=[("a", "b")])
    assert isinstance(one.joint("b"), CoupledLimit)
    # one parent cell holding every frame: its field is the child's own
    lim = one.joint("b")
    vp = np.zeros((len(rot), 3))
    single = CoupledLimit.fit(
        vp,
        lim.base.limit_space(rot[:, 2]),
        lim.base.reference,
        lim.base.twist_axis,
        lim.parent_reference,
        "a",
        parent_cell=100.0,
    )
    assert single.cells.size == 1
    q = quat.normalize(RNG.normal(size=(1500, 4)))
    parent = quat.normalize(RNG.normal(size=(1500, 4)))
    own = FittedLimit(lim.base.reference, lim.base.twist_axis, shape=Implicit.fit(lim.base.limit_space(rot[:, 2])))
    np.testing.assert_array_equal(single.project(q, parent=parent), own.project(q))
    np.testing.assert_array_equal(single.contains(q, parent=parent), own.contains(q))
    np.testing.assert_allclose(own.project(q), plain.joint("b").project(q), atol=1e-9)


def test_coupled_pose_projection_parent_first_inside_idempotent(tmp_path):
    lim, rot = _limits("implicit", False, coupled=True, pairs=[("a", "b")])
    assert lim.contains(rot).all() and np.array_equal(lim.project(rot), rot)
    q = quat.normalize(RNG.normal(size=(1500, 3, 4)))
    p = lim.project(q)
    assert lim.contains(p).all()
    np.testing.assert_allclose(lim.project(p), p, atol=1e-12)
    # the child is limited for the parent's projected rotation, not its input
    child = lim.joint("b")
    np.testing.assert_array_equal(p[:, 2], child.project(q[:, 2], parent=p[:, 1]))
    lim.save(tmp_path / "c.json")
    back = JointLimits.load(tmp_path / "c.json")
    np.testing.assert_allclose(back.project(q), p, atol=1e-9)
    # the conditioned fields live on their own, coarser grid, kept in the file
    assert child.fcell == 2.0 * child.base.shape.cell and len(child.fields) > 2
    assert back.joint("b").fcell == child.fcell and np.array_equal(back.joint("b").forigin, child.forigin)
    for key, bad in (("fields", lambda f: f[:-8]), ("fields_cell", lambda c: -c)):
        d = json.loads((tmp_path / "c.json").read_text())
        d["joints"][-1]["limit"][key] = bad(d["joints"][-1]["limit"][key])
        (tmp_path / "bad.json").write_text(json.dumps(d))
        with pytest.raises(LimitsError, match="bad.json"):
            JointLimits.load(tmp_path / "bad.json")


def test_humanoid_pairs_by_name():
    from jointlimits.limits.coupled import humanoid_pairs

    names = [
        "Hips",
        "Spine",
        "Spine1",
        "Neck",
        "LeftShoulder",
        "LeftArm",
        "LeftForeArm",
        "LeftUpLeg",
        "LeftLeg",
        "Head",
        "LeftHand",
        "LeftFoot",
        "LeftToeBase",
    ]
    parents = [-1, 0, 1, 2, 2, 4, 5, 0, 7, 3, 6, 8, 11]
    assert set(humanoid_pairs(names, parents)) == {
        ("Spine", "Spine1"),
        ("Spine1", "Neck"),
        ("Neck", "Head"),
        ("LeftShoulder", "LeftArm"),
        ("LeftArm", "LeftForeArm"),
        ("LeftUpLeg", "LeftLeg"),
    }
    # another convention: hip -> knee, chest -> neck -> head
    names = ["Hips", "LeftHip", "LeftKnee", "LeftAnkle", "Chest", "Neck", "Head"]
    parents = [-1, 0, 1, 2, 0, 4, 5]
    assert set(humanoid_pairs(names, parents)) == {("LeftHip", "LeftKnee"), ("Chest", "Neck"), ("Neck", "Head")}


@pytest.mark.parametrize("tol", [0.0, 1e-6, 1e-3])
def test_coupled_contains_in_one_pass_equals_the_steps(tol):
    """The compiled coupled inside test (limit space, parent blend, cell maxima shortcut, fields)
    answers as the step-by-step path does: on random poses, on projected ones (on the surface) and
    on projected ones nudged by 1e-7 either way (where the shortcut's bound is tight)."""
    from jointlimits._native import _core
    from jointlimits.limits.joint import to_limit_space

    lim, _ = _limits("implicit", False, coupled=True, pairs=[("a", "b")])
    child = lim.joint("b")
    q = quat.normalize(RNG.normal(size=(4000, 3, 4)))
    p = lim.project(q)
    nudge = quat.from_scaled_angle_axis(RNG.normal(size=(4000, 3)) * 1e-7)
    for c, par in ((q[:, 2], q[:, 1]), (p[:, 2], p[:, 1]), (quat.mul(nudge, p[:, 2]), p[:, 1])):
        got = child.contains(c, tol, parent=par)
        ids, ws = child.weights(par)
        v = to_limit_space(c, child.base.reference)
        s, want = child.base.shape, np.empty(len(v), bool)
        # every field read at every point: no cell maxima (an empty array)
        _core.implicit_contains(
            v,
            s.position,
            s.rotation,
            child.forigin,
            child.fcell,
            s.threshold,
            child._F,
            np.zeros((0, 0, 0), np.float32),
            ids,
            ws,
            tol,
            want,
        )
        assert np.array_equal(got, want)
    assert 0.0 < child.contains(q[:, 2], tol, parent=q[:, 1]).mean() < 1.0
    with pytest.raises(LimitsError, match="parent rotations"):
        child.contains(q[:, 2], tol, parent=q[:10, 1])


def test_coupled_contains_past_pi_reads_both_covers():
    """A coupled child whose limit reaches past pi: the one-pass inside test (which settles most
    points from the cell bounds before any parent blend) answers as the step-by-step path reading
    both covers, and admits the training rotations whose short cover is the other side."""
    from jointlimits._native import _core
    from jointlimits.limits.joint import to_limit_space

    sk = Skeleton(["root", "a", "b"], np.array([-1, 0, 1]), np.array([[0, 0, 0], [0, 1.0, 0], [0, 1.0, 0]]))
    n = 600
    t = np.linspace(0, 6 * np.pi, n)
    v = np.zeros((n, 3, 3))
    v[:, 1] = np.column_stack([0.6 * np.sin(t), 0.3 * np.cos(1.3 * t), 0.2 * np.sin(0.7 * t)])
    ang = np.pi - 0.1 + 0.35 * np.sin(0.9 * t)  # up to pi + 0.25 about x
    v[:, 2] = np.column_stack([ang, 0.05 * np.sin(7 * t), 0.05 * np.cos(5 * t)])
    rot = quat.from_scaled_angle_axis(v)
    lim = JointLimits.fit(
        Motion(sk, rot, np.zeros((n, 3, 3)), 1 / 30),
        shape="implicit",
        coupled=True,
        pairs=[("a", "b")],
        reference=np.tile([1.0, 0, 0, 0], (3, 1)),
    )
    child = lim.joint("b")
    assert child.base.shape.radius() > np.pi
    assert child.contains(rot[:, 2], parent=rot[:, 1]).all()
    q = quat.normalize(RNG.normal(size=(6000, 3, 4)))
    q[:, 2] = quat.mul(quat.from_scaled_angle_axis(RNG.normal(size=(6000, 3)) * 0.15), rot[RNG.integers(0, n, 6000), 2])
    q[:, 1] = rot[RNG.integers(0, n, 6000), 1]
    got = child.contains(q[:, 2], 1e-6, parent=q[:, 1])
    ids, ws = child.weights(q[:, 1])
    s = child.base.shape
    want = np.zeros(len(q), bool)
    x = to_limit_space(q[:, 2], child.base.reference)
    nx = np.linalg.norm(x, axis=1, keepdims=True)
    for pts in (x, x * (1 - 2 * np.pi / nx)):
        one = np.empty(len(q), bool)
        _core.implicit_contains(
            np.ascontiguousarray(pts),
            s.position,
            s.rotation,
            child.forigin,
            child.fcell,
            s.threshold,
            child._F,
            np.zeros((0, 0, 0), np.float32),
            ids,
            ws,
            1e-6,
            one,
        )
        want |= one
    assert np.array_equal(got, want)
    assert 0.05 < got.mean() < 0.95


def test_coupled_cell_fields_use_every_frame_their_weight_reaches():
    """Each parent cell gets the field of exactly the child points whose parent lies within r cells
    of its centre, for the smallest r (<= grow) giving min_frames (the frames found through the
    cell index and the cropped sub-grid equal a scan of every frame on the whole grid); cells
    where no r does read the child's own field, and cells with the same frames share one."""
    import math

    from jointlimits.limits.coupled import CoupledLimit

    rng = np.random.default_rng(3)
    vp = rng.normal(size=(3000, 3)) * [0.6, 0.4, 0.3]
    vc = np.column_stack([np.sin(vp[:, 0]), 0.5 * vp[:, 1] + 0.1 * rng.normal(size=3000), 0.2 * vp[:, 2]])
    lim = CoupledLimit.fit(
        vp,
        vc,
        [1.0, 0, 0, 0],
        [1.0, 0, 0],
        [1.0, 0, 0, 0],
        "p",
        padding=0.05,
        parent_cell=0.4,
        min_frames=40,
        grow=2,
        condition_padding=0.03,
    )
    s = lim.base.shape
    local = (vc - s.position) @ s.rotation
    assert lim.fcell == 2.0 * s.cell  # the conditioned fields' coarser grid, balls of the same size
    radius = (s.settings["radius_cells"] * s.cell + 0.08 / math.sqrt(1.0 - s.threshold ** (1 / 3))) / lim.fcell
    grown, fallback, frames = 0, 0, {}
    for c in np.ndindex(*lim.cells.shape):
        centre = lim.porigin + (np.array(c) + 0.5) * lim.pcell
        d = np.max(np.abs(vp - centre), axis=1)
        near = next((m for r in (1, 2) if (m := d < r * lim.pcell).sum() >= 40), None)
        if near is None or not (d < 1.5 * lim.pcell).any():
            assert lim.cells[c] == 0
            fallback += 1
            continue
        grown += not np.all(d[near] < lim.pcell)
        want = fit_field(local[near], lim.forigin, lim.fields.shape[1:], lim.fcell, radius, s.threshold, True, False)
        assert np.array_equal(lim.fields[lim.cells[c]], want)
        frames.setdefault(np.flatnonzero(near).tobytes(), set()).add(int(lim.cells[c]))
    assert all(len(k) == 1 for k in frames.values()) and len(lim.fields) == len(frames) + 1
    assert grown >= 3 and fallback >= 1


def test_parent_cell_from_the_parent_range():
    from jointlimits.limits.coupled import PARENT_CELL, parent_cell_size

    rng = np.random.default_rng(4)
    assert parent_cell_size(rng.uniform(-1, 1, (5000, 3)) * [0.3, 0.1, 0.05]) == pytest.approx(0.6 * 0.98 / 3, rel=0.02)
    assert parent_cell_size(rng.uniform(-2, 2, (5000, 3))) == PARENT_CELL
    assert parent_cell_size(np.zeros((10, 3))) == 0.05


def test_coupled_fit_without_cell_fields_keeps_the_child_grid_and_refuses_bad_parents():
    """Too few frames for any cell's own field: the child's own field on its own grid (not a
    coarser copy); parent points off the short cover (|v| > pi), NaNs or a count mismatch: LimitsError."""
    from jointlimits.limits.coupled import CoupledLimit

    rng = np.random.default_rng(5)
    vp = rng.normal(size=(100, 3)) * [0.6, 0.4, 0.3]
    vc = rng.normal(size=(100, 3)) * 0.3
    lim = CoupledLimit.fit(vp, vc, [1.0, 0, 0, 0], [1.0, 0, 0], [1.0, 0, 0, 0], "p")
    assert lim.cells.size > 1 and len(lim.fields) == 1 and lim.fcell == lim.base.shape.cell
    assert np.array_equal(lim.fields[0], lim.base.shape.grid)
    for bad_vp, bad_vc in ((vp * 10, vc), (np.where(vp > 1, np.nan, vp), vc), (vp[:50], vc)):
        with pytest.raises(LimitsError, match="coupled limit"):
            CoupledLimit.fit(bad_vp, bad_vc, [1.0, 0, 0, 0], [1.0, 0, 0], [1.0, 0, 0, 0], "p")


# --------------------------------------------------------------------------- a child whose range flips with its parent

IDENTITY = np.array([1.0, 0, 0, 0])
PARENT_A, PARENT_B = np.array([-0.6, 0, 0]), np.array([0.6, 0, 0])  # two parent postures 1.2 rad apart
CHILD_A, CHILD_B = np.array([0, 0, 0.5]), np.array([0, 0, -0.5])  # the child's own posture in each


def _flip_data(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Parent and child limit-space points (identity references): with the parent near A the child
    bends +0.5 rad about z, near B -0.5 rad."""
    rng = np.random.default_rng(1)
    vp = np.concatenate([PARENT_A + 0.05 * rng.normal(size=(n, 3)), PARENT_B + 0.05 * rng.normal(size=(n, 3))])
    vc = np.concatenate([CHILD_A + 0.08 * rng.normal(size=(n, 3)), CHILD_B + 0.08 * rng.normal(size=(n, 3))])
    return vp, vc


@pytest.fixture(scope="module")
def flip() -> tuple[CoupledLimit, np.ndarray, np.ndarray]:
    """The fitted coupled limit and its training parent and child rotations."""
    vp, vc = _flip_data()
    lim = CoupledLimit.fit(vp, vc, IDENTITY, [1.0, 0, 0], IDENTITY, "p", parent_cell=0.4, min_frames=40)
    return lim, quat.from_scaled_angle_axis(vp), quat.from_scaled_angle_axis(vc)


def _random_pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Child rotations anywhere, parent rotations near the training parents (unit, random signs)."""
    rng = np.random.default_rng(seed)
    vp, _ = _flip_data()
    q = quat.normalize(rng.normal(size=(n, 4)))
    par = quat.from_scaled_angle_axis(vp[rng.integers(0, len(vp), n)] + 0.2 * rng.normal(size=(n, 3)))
    return q, par * np.where(rng.random((n, 1)) < 0.5, -1.0, 1.0)


def test_flip_example_has_its_own_field_per_parent_posture(flip):
    lim, _, _ = flip
    assert lim.cells.shape[0] >= 3 and len(lim.fields) >= 3  # the child's own field and at least one per side
    ids_a, _ = lim.weights(quat.from_scaled_angle_axis(PARENT_A))
    ids_b, _ = lim.weights(quat.from_scaled_angle_axis(PARENT_B))
    assert set(ids_a.ravel()).isdisjoint(set(ids_b.ravel()) - {0})


def test_child_rotation_admitted_for_one_parent_and_refused_for_the_other(flip):
    lim, _, _ = flip
    pa, pb = quat.from_scaled_angle_axis(np.stack([PARENT_A, PARENT_B]))
    ca, cb = quat.from_scaled_angle_axis(np.stack([CHILD_A, CHILD_B]))
    child = np.stack([ca, cb, ca, cb])
    parent = np.stack([pa, pb, pb, pa])
    assert lim.contains(child, parent=parent).tolist() == [True, True, False, False]
    # the child's own limit (no parent) admits both
    assert lim.contains(child).all()
    # refused: projected to the other posture's side, well away; admitted: unchanged
    p = lim.project(child, parent=parent)
    assert np.array_equal(p[:2], child[:2])
    moved = quat.angle(p[2:], child[2:])
    assert np.all(moved > 0.2) and lim.contains(p, parent=parent).all()
    np.testing.assert_allclose(lim.violation(child, parent=parent)[2:], moved, atol=1e-12)


def test_training_rotations_inside_and_unchanged_bit_for_bit(flip):
    lim, par, child = flip
    assert lim.contains(child, tolerance=0.0, parent=par).all()
    assert np.array_equal(lim.project(child, parent=par), child)
    assert np.array_equal(lim.project(child), child)  # inside the child's own limit too


def test_projection_inside_and_idempotent(flip):
    lim, _, _ = flip
    q, par = _random_pairs(3000, 2)
    inside = lim.contains(q, tolerance=0.0, parent=par)
    assert 0 < inside.sum() < len(q) // 2
    p = lim.project(q, parent=par)
    np.testing.assert_allclose(np.linalg.norm(p, axis=-1), 1.0, atol=1e-12)
    assert lim.contains(p, tolerance=0.0, parent=par).all()
    assert np.array_equal(p[inside], q[inside])  # inside: unchanged bit for bit
    assert np.array_equal(lim.project(p, parent=par), p)  # idempotent


def test_q_and_minus_q_alike_for_child_and_parent(flip):
    lim, _, _ = flip
    q, par = _random_pairs(2000, 3)
    p = lim.project(q, parent=par)
    inside = lim.contains(q, parent=par)
    assert np.array_equal(lim.contains(-q, parent=par), inside)
    assert np.array_equal(lim.contains(q, parent=-par), inside)
    np.testing.assert_allclose(lim.project(-q, parent=par), -p, atol=1e-12)  # on the caller's cover
    np.testing.assert_allclose(lim.project(q, parent=-par), p, atol=1e-12)
    ids, ws = lim.weights(par)
    ids_n, ws_n = lim.weights(-par)
    assert np.array_equal(ids, ids_n) and np.allclose(ws, ws_n, atol=1e-12)


def test_blend_weights_are_a_partition_of_unity_over_existing_fields(flip):
    lim, _, _ = flip
    _, par = _random_pairs(500, 4)
    ids, ws = lim.weights(par)
    assert ids.shape == ws.shape == (500, 8)
    assert ids.min() >= 0 and ids.max() < len(lim.fields)
    assert ws.min() >= 0.0
    np.testing.assert_allclose(ws.sum(1), 1.0, atol=1e-12)


def test_save_load_round_trip_bit_for_bit(flip):
    lim, _, _ = flip
    back = CoupledLimit.from_dict(json.loads(json.dumps(lim.to_dict())))
    assert back.parent == lim.parent and back.settings == lim.settings
    for name in ("parent_reference", "porigin", "cells", "fields", "forigin"):
        a, b = getattr(back, name), getattr(lim, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert back.pcell == lim.pcell and back.fcell == lim.fcell
    assert np.array_equal(back.base.shape.grid, lim.base.shape.grid)
    q, par = _random_pairs(1000, 5)
    assert np.array_equal(back.project(q, parent=par), lim.project(q, parent=par))
    assert np.array_equal(back.contains(q, parent=par), lim.contains(q, parent=par))
    assert np.array_equal(back.project(q), lim.project(q))


@pytest.mark.parametrize(
    "edit,match",
    [
        ("negative field", "negative or non-finite"),
        ("cell past the fields", "index fields that do not exist"),
        ("empty field", "nowhere above its threshold"),
        ("flat fields", r"must be \[K, nx, ny, nz\]"),
        ("zero parent cell", "parent grid is not finite"),
    ],
)
def test_inconsistent_coupled_limits_are_refused(flip, edit, match):
    lim, _, _ = flip
    kw = {
        "base": lim.base,
        "parent": "p",
        "parent_reference": IDENTITY,
        "porigin": lim.porigin,
        "pcell": lim.pcell,
        "cells": lim.cells.copy(),
        "fields": lim.fields.copy(),
        "forigin": lim.forigin,
        "fcell": lim.fcell,
    }
    if edit == "negative field":
        kw["fields"][1, 0, 0, 0] = -1.0
    elif edit == "cell past the fields":
        kw["cells"].flat[0] = len(lim.fields)
    elif edit == "empty field":
        kw["fields"][1] = 0.0
    elif edit == "flat fields":
        kw["fields"] = lim.fields[:, :, :, 0]
    else:
        kw["pcell"] = 0.0
    with pytest.raises(LimitsError, match=match):
        CoupledLimit(**kw)


def test_only_an_implicit_child_limit_can_be_coupled(flip):
    lim, _, _ = flip
    kdop, _ = _limits("kdop", False)
    assert isinstance(kdop.joint("b"), FittedLimit) and not isinstance(kdop.joint("b").shape, Implicit)
    for base in (kdop.joint("b"), object()):
        with pytest.raises(LimitsError, match="needs an implicit"):
            CoupledLimit(base, "p", IDENTITY, lim.porigin, lim.pcell, lim.cells, lim.fields)


def test_humanoid_pairs_from_the_topology_whatever_the_names():
    """Bandai Namco's names (UpperArm_L, LowerLeg_R) and made-up ones: the pairs come from the
    skeleton's shape (pelvis with three limbs, a chest with two arms and a neck)."""
    from jointlimits.limits.coupled import humanoid_pairs
    from jointlimits.motion.skeleton import Skeleton

    def body(n: dict[str, str]) -> Skeleton:
        parts = [
            ("root", None, (0, 0, 0)),
            ("pelvis", "root", (0, 90, 0)),
            ("s1", "pelvis", (0, 10, 0)),
            ("s2", "s1", (0, 10, 0)),
            ("neck", "s2", (0, 15, 0)),
            ("head", "neck", (0, 8, 0)),
        ]
        for sd, x in (("L", 1), ("R", -1)):
            parts += [
                (f"cla_{sd}", "s2", (x * 3, 12, 0)),
                (f"up_{sd}", f"cla_{sd}", (x * 14, 0, 0)),
                (f"lo_{sd}", f"up_{sd}", (x * 28, 0, 0)),
                (f"hd_{sd}", f"lo_{sd}", (x * 25, 0, 0)),
                (f"th_{sd}", "pelvis", (x * 9, 0, 0)),
                (f"sh_{sd}", f"th_{sd}", (0, -42, 0)),
                (f"ft_{sd}", f"sh_{sd}", (0, -42, 0)),
            ]
        names = [n.get(p[0], p[0]) for p in parts]
        return Skeleton(names, [-1] + [names.index(n.get(p[1], p[1])) for p in parts[1:]], [p[2] for p in parts])

    sk = body({})
    pairs = set(humanoid_pairs(sk))
    assert pairs == {
        ("s1", "s2"),
        ("s2", "neck"),
        ("neck", "head"),
        ("cla_L", "up_L"),
        ("up_L", "lo_L"),
        ("th_L", "sh_L"),
        ("cla_R", "up_R"),
        ("up_R", "lo_R"),
        ("th_R", "sh_R"),
    }
    bandai = body({"lo_L": "LowerArm_L", "lo_R": "LowerArm_R", "sh_L": "LowerLeg_L", "sh_R": "LowerLeg_R"})
    assert ("up_L", "LowerArm_L") in humanoid_pairs(bandai) and ("th_R", "LowerLeg_R") in humanoid_pairs(bandai)

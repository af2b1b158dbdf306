"""Foot locking on the shared LAFAN1 walk: contacts, skating reduction, limits, untouched frames,
BVH output and the ``jointlimits footlock`` command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jointlimits.cleanup.footlock import (
    contact_segments,
    detect_contacts,
    find_feet,
    find_toes,
    foot_skating,
    footlock,
    measure_skating,
)
from jointlimits.errors import IKError
from jointlimits.io import bvh
from jointlimits.motion import quat
from jointlimits.motion.skeleton import forward_kinematics

from conftest import SHARED_MISSING

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
LAFAN = SHARED / "data" / "mocap" / "lafan1"
WALK = "walk4_subject1.bvh"

pytestmark = pytest.mark.skipif(not (LAFAN / WALK).is_file(), reason=SHARED_MISSING)


@pytest.fixture(scope="module")
def data():
    from jointlimits.limits.model import JointLimits

    clips = {p.name: bvh.load(p) for p in sorted(LAFAN.glob("*.bvh"))}
    walk = clips[WALK]
    limits = JointLimits.fit([m for k, m in clips.items() if k != WALK], shape="ellipsoid")
    out, rep = footlock(walk, limits)
    return walk, limits, rep.contacts, out, rep


def test_feet_found_by_name(data):
    walk = data[0]
    assert [walk.skeleton.names[j] for j in find_feet(walk.skeleton)] == ["LeftFoot", "RightFoot"]


def test_contacts_both_feet_alternating(data):
    walk, _, c, _, _ = data
    assert c.shape == (walk.num_frames, 2)
    segs = contact_segments(c)
    assert all(len(s) >= 20 for s in segs), [len(s) for s in segs]
    # while one foot swings (a gap between two of its contacts) the other one is planted
    for i in range(2):
        other = c[:, 1 - i]
        covered = [other[e:s2].mean() for (_, e), (s2, _) in zip(segs[i][:-1], segs[i][1:])]
        assert np.median(covered) >= 0.9
    assert (c[:, 0] & ~c[:, 1]).any() and (c[:, 1] & ~c[:, 0]).any()


def test_skating_reduced_by_90_percent(data):
    walk, _, c, out, rep = data
    before, after = measure_skating(walk, c), measure_skating(out, c)
    assert before["total_m"] > 0
    assert rep.skating_before["total_m"] == pytest.approx(before["total_m"])
    assert 100.0 * (1.0 - after["total_m"] / before["total_m"]) >= 90.0
    assert rep.reduction_percent >= 90.0
    assert set(before["per_foot"]) == {"LeftFoot", "RightFoot"}


def test_limits_never_violated_and_foot_keeps_its_orientation(data):
    walk, limits, _, out, _ = data
    sk = walk.skeleton
    for name in ("LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg", "LeftFoot", "RightFoot"):
        j = sk.index(name)
        changed = np.any(out.rotations[:, j] != walk.rotations[:, j], axis=-1)
        assert changed.sum() > 100
        assert limits.joint(j).contains(out.rotations[changed, j]).all(), name
    # locking the ankle alone (no toe pivot, no ankle limit) keeps the foot's global orientation
    ankle_only, _ = footlock(walk[:900], toes=False)
    gr0, _ = forward_kinematics(walk[:900])
    gr1, _ = forward_kinematics(ankle_only)
    for name in ("LeftFoot", "RightFoot"):
        j = sk.index(name)
        assert np.max(quat.angle(gr0[:, j], gr1[:, j])) < 1e-6


def test_frames_far_from_contacts_unchanged(data):
    walk = data[0][:1500]
    sk = walk.skeleton
    B = 6  # the default blend_frames
    # contacts in the first half only (a walk's swing is too short to leave frames far from any contact)
    c = detect_contacts(walk)
    toe_idx = find_toes(sk, find_feet(sk))
    tc = detect_contacts(walk, toe_idx)
    c[750:] = False
    tc[750:] = False
    out, rep = footlock(walk, None, c, toe_contacts=tc)
    legs = set()
    for i, j in enumerate(find_feet(sk)):
        chain = [int(sk.parents[sk.parents[j]]), int(sk.parents[j]), j]
        legs.update(chain)
        near = np.zeros(walk.num_frames, bool)
        held = c[:, i] | tc[:, i]  # heel or toe planted (gaps of <= 2 frames are bridged)
        for s, e in contact_segments(held[:, None])[0]:
            near[max(0, s - B - 2) : e + B + 2] = True
        assert (~near).sum() > 50, (~near).sum()
        np.testing.assert_array_equal(out.rotations[~near][:, chain], walk.rotations[~near][:, chain])
    others = [j for j in range(sk.num_joints) if j not in legs]
    np.testing.assert_array_equal(out.rotations[:, others], walk.rotations[:, others])
    np.testing.assert_array_equal(out.positions, walk.positions)


def test_bvh_output_has_the_same_skeleton(data, tmp_path):
    walk, _, c, out, _ = data
    p = tmp_path / "locked.bvh"
    bvh.save(p, out)
    back = bvh.load(p)
    assert back.skeleton.fingerprint() == walk.skeleton.fingerprint()
    assert back.skeleton.names == walk.skeleton.names
    assert back.num_frames == walk.num_frames and back.frame_time == pytest.approx(walk.frame_time)
    assert np.max(quat.angle(back.rotations, out.rotations)) < 1e-5
    assert measure_skating(back, c)["total_m"] <= 0.1 * measure_skating(walk, c)["total_m"]


def test_cli_end_to_end(data, tmp_path):
    from click.testing import CliRunner

    from jointlimits.cli import main

    walk, limits, _, _, _ = data
    clip = tmp_path / "walk.bvh"
    bvh.save(clip, walk[600:1800])  # walking (its first 600 frames stand and shuffle)
    lim = tmp_path / "limits.json"
    limits.save(lim)
    out = tmp_path / "out.bvh"
    runner = CliRunner()
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(out), "--limits", str(lim), "--blend-frames", "4"])
    assert r.exit_code == 0, r.output
    assert "reduction" in r.output and out.is_file()
    assert bvh.load(out).skeleton.fingerprint() == walk.skeleton.fingerprint()
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(tmp_path / "o.bvh"), "--json"])
    assert r.exit_code == 0, r.output
    import json

    assert json.loads(r.output)["reduction_percent"] >= 90.0
    # --free-ankle: hip and knee limited, the ankle left free (the toe held better)
    toe_after = {}
    for flag in ([], ["--free-ankle"]):
        o = tmp_path / f"l{len(flag)}.bvh"
        r = runner.invoke(main, ["footlock", str(clip), "-o", str(o), "--limits", str(lim), "--json"] + flag)
        assert r.exit_code == 0, r.output
        toe_after[bool(flag)] = json.loads(r.output)["independent_skating_after"]["toe_cm"]
        got = bvh.load(o)
        for name in ("LeftUpLeg", "LeftLeg", "LeftFoot"):
            j = got.skeleton.index(name)
            ch = np.any(np.abs(got.rotations[:, j] - walk.rotations[600:1800, j]) > 1e-6, axis=-1)
            inside = limits.joint(j).contains(got.rotations[ch, j])
            if name != "LeftFoot" or not flag:
                assert inside.all(), (name, flag, inside.mean())
    assert toe_after[True] < toe_after[False]
    # refuses to overwrite the input without --force
    before = clip.read_bytes()
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(clip)])
    assert r.exit_code == 2 and "--force" in r.output and clip.read_bytes() == before
    # a bad file: one line, exit code 2
    bad = tmp_path / "bad.bvh"
    bad.write_text("not a bvh\n")
    r = runner.invoke(main, ["footlock", str(bad), "-o", str(tmp_path / "x.bvh")])
    assert r.exit_code == 2 and r.output.strip().startswith("error:") and len(r.output.strip().splitlines()) == 1
    r = runner.invoke(main, ["footlock", str(tmp_path / "missing.bvh"), "-o", str(tmp_path / "x.bvh")])
    assert r.exit_code == 2
    r = runner.invoke(main, ["footlock", str(clip), "-o", str(tmp_path / "x.bvh"), "--height-threshold", "-1"])
    assert r.exit_code == 2


def test_blend_ramps_are_smooth_and_tight_limits_are_kept(data):
    """With tight limits (fitted on the walk itself, no padding, then shrunk) the projection bites
    and CCD refines; every changed hip/knee rotation is still inside."""
    from jointlimits.limits.model import JointLimits

    walk = data[0][:900]
    sk = walk.skeleton
    lim = JointLimits.fit(walk[:300], shape="ellipsoid", padding=0.0)
    out, rep = footlock(walk, lim)
    assert rep.limited > 0
    for name in ("LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg"):
        j = sk.index(name)
        ch = np.any(out.rotations[:, j] != walk.rotations[:, j], axis=-1)
        assert lim.joint(j).contains(out.rotations[ch, j]).all(), name


def test_independent_measure_reported_and_reduced(data):
    """The independent measure (not the detector's contacts) falls by >= 90% for ankles and toes on
    the walk locked without limits, and the report carries it; with the limits fitted on the other
    clips the ankle's limit costs part of the toe's gain (ankles still >= 90% less)."""
    walk, _, _, out, rep = data
    b = foot_skating(walk)
    a = foot_skating(out, reference=walk)
    assert set(b["per_joint"]) == {"LeftFoot", "RightFoot", "LeftToe", "RightToe"}
    assert b["ankle_cm"] > 100 and b["toe_cm"] > 100
    assert rep.independent_before["total_cm"] == pytest.approx(b["total_cm"])
    assert rep.independent_after["total_cm"] == pytest.approx(a["total_cm"])
    assert a["ankle_cm"] <= 0.1 * b["ankle_cm"] and a["toe_cm"] < 0.7 * b["toe_cm"]
    free, rep2 = footlock(walk)
    a2 = foot_skating(free, reference=walk)
    assert a2["ankle_cm"] <= 0.1 * b["ankle_cm"] and a2["toe_cm"] <= 0.1 * b["toe_cm"]
    assert rep2.to_dict()["independent_reduction_percent"]["toe"] >= 90.0


def test_independent_measure_on_synthetic_sliding_foot():
    """A leg standing still except the whole body sliding 1 cm per frame: every low-and-slow frame
    skates 1 cm per ankle and toe; standing still skates 0."""
    from jointlimits.motion.skeleton import Motion, Skeleton

    names = ["Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToe", "Head"]
    parents = np.array([-1, 0, 1, 2, 3, 0])
    offs = np.array([[0, 66, 0], [10, 0, 0], [0, -30, 20], [0, -30, -20], [0, -6, 12], [0, 70, 0]], float)
    sk = Skeleton(names, parents, offs)
    F = 40
    pos = np.repeat(offs[None], F, axis=0)
    still = Motion(sk, quat.identity((F, 6)), pos.copy(), 1 / 30)
    assert foot_skating(still)["total_cm"] == 0.0
    pos[:, 0, 0] += np.arange(F) * 0.5  # 0.5 cm per frame (centimetre clip)
    slide = Motion(sk, quat.identity((F, 6)), pos, 1 / 30)
    s = foot_skating(slide)
    assert s["per_joint"]["LeftFoot"]["frames"] == F - 1
    assert s["ankle_cm"] == pytest.approx(0.5 * (F - 1)) and s["toe_cm"] == pytest.approx(0.5 * (F - 1))
    locked, rep = footlock(slide, blend_frames=0)
    assert rep.toe_contacts[:, 0].all() and rep.contacts[:, 0].all()
    after = foot_skating(locked, reference=slide)
    assert after["ankle_cm"] < 0.05 * s["ankle_cm"] and after["toe_cm"] < 0.05 * s["toe_cm"]


def test_toe_pivot_keeps_the_toe_put():
    """Heel planted, then only the toe: during the toe run the toe stays where it was when the heel
    lifted, while the ankle follows the animated foot about it."""
    from jointlimits.cleanup.footlock import _planted_offsets

    F = 40
    pa = np.zeros((F, 3))
    pa[:, 0] = np.arange(F) * 0.5  # the animated foot drifts 0.5 per frame
    pt = pa + np.array([0.0, -6.0, 12.0])
    heel = np.zeros(F, bool)
    heel[:20] = True
    toe = np.zeros(F, bool)
    toe[10:30] = True
    o, R, need = _planted_offsets(pa, pt, heel, toe, 4, 1, 1)
    ankle = pa + o
    toe_out = ankle + quat.mul_vec(R, pt - pa)
    np.testing.assert_allclose(ankle[:20, [0, 2]], np.repeat(pa[:1, [0, 2]], 20, axis=0), atol=1e-9)
    np.testing.assert_allclose(toe_out[10:30, [0, 2]], np.repeat(toe_out[10:11, [0, 2]], 20, axis=0), atol=1e-9)
    assert need[30:34].all() and not need[35:].any()
    step = np.linalg.norm(np.diff(ankle, axis=0), axis=-1)
    assert step[:29].max() < 1e-9  # no jump at the heel-to-toe switch (the foot does not turn here)
    assert step[29:].max() < 0.5 * np.linalg.norm(o[29])  # the release is spread over the blend


# --------------------------------------------------------------------------- issue 14 item 4
MULTI = "multipleActions1_subject1.bvh"


def _pop_sizes(m):
    """Largest two-sided spike (see jointlimits.cleanup.pops) of the leg joints' local rotations (degrees)
    and of the ankle and toe positions (cm)."""
    from jointlimits.cleanup.pops import two_sided_spikes
    from jointlimits.motion.units import guess_units

    sk = m.skeleton
    feet = find_feet(sk)
    legs = [j for f in feet for j in (int(sk.parents[sk.parents[f]]), int(sk.parents[f]), f)]
    pts = feet + [t for t in find_toes(sk, feet) if t is not None]
    q = quat.normalize(m.rotations[:, legs])
    w = np.zeros(q.shape[:-1] + (3,))
    w[1:] = quat.to_scaled_angle_axis(quat.abs(quat.mul_inv(q[1:], q[:-1])))
    _, gp = forward_kinematics(m)
    v = np.zeros((m.num_frames, len(pts), 3))
    v[1:] = np.diff(gp[:, pts], axis=0) * guess_units(m).metres_per_unit * 100.0
    return float(np.degrees(two_sided_spikes(w)[0].max())), float(two_sided_spikes(v)[0].max())


@pytest.fixture(scope="module")
def segments():
    """The walk and multipleActions1 (whole clips, as the issue measures them), locked without limits."""
    out = {}
    for name in (WALK, MULTI):
        if not (LAFAN / name).is_file():
            continue
        m = bvh.load(LAFAN / name)
        out[name] = (m,) + footlock(m)
    return out


@pytest.mark.parametrize("name", [WALK, MULTI])
def test_independent_toe_and_ankle_skating_reduced_90_percent(segments, name):
    m, out, rep = segments[name]
    b = foot_skating(m)
    a = foot_skating(out, reference=m)
    assert b["ankle_cm"] > 50 and b["toe_cm"] > 30  # there is skating to remove
    assert a["ankle_cm"] <= 0.1 * b["ankle_cm"], (b["ankle_cm"], a["ankle_cm"])
    assert a["toe_cm"] <= 0.1 * b["toe_cm"], (b["toe_cm"], a["toe_cm"])


@pytest.mark.parametrize("name", [WALK, MULTI])
def test_locking_adds_no_pops(segments, name):
    """No new pops: the pop detector finds no cut in the output that is not (within 2 frames) one of
    the input's, and the largest two-sided spike of the leg rotations and of the ankle and toe
    positions stays within 1.5x the input's largest or the detector's floor (12 deg, 4 cm),
    whichever is larger (a toe that stops on landing may sharpen the input's own largest impact:
    4.7 -> 4.9 cm and 3.7 -> 5.0 cm here; a release of a 27 cm lock in 3 frames or a knee flip is
    2-3x)."""
    from jointlimits.cleanup.pops import PopParams, detect_pops

    m, out, _ = segments[name]
    c0, c1 = detect_pops(m), detect_pops(out)
    new = [int(f) for f in c1 if not np.any(np.abs(c0 - f) <= 2)]
    assert new == []
    r0, p0 = _pop_sizes(m)
    r1, p1 = _pop_sizes(out)
    P = PopParams()
    assert r1 <= max(1.5 * r0, P.floor_degrees), (r0, r1)
    assert p1 <= max(1.5 * p0, P.floor_cm), (p0, p1)


def test_feet_that_do_not_skate_are_left_alone(data):
    """A clip whose feet stand still (the walk's frame 100 held for 300 frames while the spine and
    arms move) has no skating and comes back unchanged."""
    walk = data[0]
    sk = walk.skeleton
    F = 300
    rot = np.repeat(walk.rotations[100:101], F, axis=0)
    pos = np.repeat(walk.positions[100:101], F, axis=0)
    t = np.arange(F) * walk.frame_time
    for k, name in enumerate(("Spine", "Spine1", "LeftArm", "RightArm", "LeftForeArm", "Neck")):
        j = sk.index(name)
        rot[:, j] = quat.mul(
            quat.from_scaled_angle_axis(np.outer(0.4 * np.sin(1.3 * t + k), [0.3, 0.8, 0.5])), rot[:, j]
        )
    clean = walk.with_rotations(rot, pos)[0:F]
    out, rep = footlock(clean)
    assert rep.independent_before["total_cm"] == 0.0
    assert np.degrees(quat.angle(clean.rotations, out.rotations)).max() < 1e-6
    np.testing.assert_array_equal(out.positions, clean.positions)


def test_soft_reach_rises_keeping_the_horizontal_place():
    from jointlimits.cleanup.footlock import SOFT_REACH, _soft_reach

    hip = np.array([[0.0, 90.0, 0.0]])
    knee = np.array([[0.0, 45.0, 10.0]])
    ankle = np.array([[0.0, 0.0, 0.0]])  # the leg slightly bent, L = 92.2, the ankle 90 from the hip
    L = 2 * np.hypot(45.0, 10.0)
    target = np.array([[20.0, -5.0, 10.0]])  # out of reach (97.6), horizontally near
    t = _soft_reach(hip, knee, ankle, target, up=1)
    np.testing.assert_allclose(t[0, [0, 2]], target[0, [0, 2]])  # the foot does not slide ...
    assert t[0, 1] > target[0, 1]  # ... it rises
    assert 90.0 <= np.linalg.norm(t - hip) < L
    # without an up axis the target is pulled toward the hip, its direction kept
    t2 = _soft_reach(hip, knee, ankle, target)
    d = target - hip
    np.testing.assert_allclose(np.cross(t2 - hip, d), 0.0, atol=1e-9)
    # a reachable target is not touched
    near = np.array([[10.0, 30.0, 0.0]])
    np.testing.assert_array_equal(_soft_reach(hip, knee, ankle, near, up=1), near)
    assert SOFT_REACH < 1.0


def test_hold_toe_turns_the_foot_about_the_ankle_onto_the_toe_lock():
    from jointlimits.cleanup.footlock import _hold_toe

    rng = np.random.default_rng(3)
    n = 50
    foot = quat.normalize(rng.normal(size=(n, 4)))
    ankle = rng.normal(size=(n, 3)) * 10
    toe_off = np.array([[0.0, -5.0, 14.0]] * n)
    cur = quat.mul_vec(foot, toe_off)
    want = ankle + cur + rng.normal(size=(n, 3)) * 2.0
    g = _hold_toe(foot, ankle, toe_off, want, np.ones(n), up=1)
    toe = ankle + quat.mul_vec(g, toe_off)
    ln = np.linalg.norm(toe_off, axis=-1)
    reach = np.linalg.norm((want - ankle)[:, [0, 2]], axis=-1) < ln
    assert reach.sum() > 20 and (~reach).sum() > 5
    # horizontally on the lock where the foot's length allows, on the same side (toe below or above)
    np.testing.assert_allclose(toe[reach][:, [0, 2]], want[reach][:, [0, 2]], atol=1e-9)
    np.testing.assert_allclose(np.sign(toe[reach, 1] - ankle[reach, 1]), np.sign(cur[reach, 1]))
    # else the foot lies flat pointing at it
    np.testing.assert_allclose(toe[~reach, 1], ankle[~reach, 1], atol=1e-6)
    dirs = (want - ankle)[~reach][:, [0, 2]]
    got = (toe - ankle)[~reach][:, [0, 2]]
    np.testing.assert_allclose(dirs[:, 0] * got[:, 1] - dirs[:, 1] * got[:, 0], 0.0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(toe - ankle, axis=-1), ln)  # rigid
    np.testing.assert_allclose(np.linalg.norm(g, axis=-1), 1.0)
    # weight 0 leaves the foot as it was
    np.testing.assert_allclose(np.abs(np.sum(_hold_toe(foot, ankle, toe_off, want, np.zeros(n), 1) * foot, -1)), 1.0)


def test_a_shuffle_step_is_released_a_still_foot_bridged():
    """A one-frame detection gap: bridged while the foot stays (the lock holds on), released and
    locked anew where the animated foot steps 10 units meanwhile."""
    from jointlimits.cleanup.footlock import _planted_offsets

    F = 30
    heel = np.ones(F, bool)
    heel[14] = False
    still = np.zeros((F, 3))
    still[:, 0] = np.arange(F) * 0.05  # a slow drift
    o, _, _ = _planted_offsets(still, None, heel, np.zeros(F, bool), 4, 1, 1, bridge_step=0.5)
    np.testing.assert_allclose((still + o)[:, 0], 0.0, atol=1e-12)  # held all through
    step = still.copy()
    step[14:, 0] += 10.0
    o2, _, _ = _planted_offsets(step, None, heel, np.zeros(F, bool), 4, 1, 1, bridge_step=0.5)
    a = step + o2
    assert abs(a[20, 0] - 10.0) < 1.0 and abs(a[29, 0] - a[20, 0]) < 1e-12  # stepped, then held again


def test_release_fades_at_a_bounded_acceleration():
    """A lock 28.5 units from its animation released in a 3-frame gap: the fade keeps its bounded
    acceleration past the gap, into the next contact (whose own lock is taken afresh: corrections do
    not pile up from step to step), and is gone before that contact ends."""
    from jointlimits.cleanup.footlock import _planted_offsets

    F = 60
    pa = np.zeros((F, 3))
    pa[:20, 0] = np.arange(20) * 1.5  # the animated foot slides 28.5 units while planted
    pa[20:, 0] = pa[19, 0]
    heel = np.zeros(F, bool)
    heel[:20] = True
    heel[23:40] = True
    acc = 1.0
    o, _, _ = _planted_offsets(pa, None, heel, np.zeros(F, bool), 4, 1, 1, release_acc=acc)
    assert np.abs(np.diff(pa[:20, 0] + o[:20, 0])).max() < 1e-12  # held in the first contact
    d2 = np.abs(np.diff(o[:, 0], 2))
    assert d2[19:].max() <= 1.25 * acc  # the fade's own acceleration, across the landing too
    assert np.all(np.diff(o[19:, 0]) >= -1e-12) and o[19, 0] < -20  # fading monotonically
    assert np.abs(o[36:, 0]).max() < 1e-9  # gone within the next contact
    # without the bound the fade completes inside the 3-frame gap (a jump of ~10 units per frame)
    o2, _, _ = _planted_offsets(pa, None, heel, np.zeros(F, bool), 4, 1, 1)
    assert np.abs(np.diff(o2[19:24, 0])).max() > 5.0 and o2[23, 0] == 0.0


def test_locks_do_not_pile_up_from_step_to_step(segments):
    """Independent of any skating figure: the locked walk's ankles and toes stay near their
    animation (horizontal distance, 95th percentile) and its feet keep their heading. Before locks
    were taken afresh after each gap, walk4's shuffling start piled them up to 30 cm and 68 degrees
    (over the clip: 18.7 cm 95th percentile, mean heading change 12.1 and 16.0 degrees)."""
    from jointlimits.cleanup.footlock import foot_drift

    m, out, _ = segments[WALK]
    d = foot_drift(out, m)
    assert d["cm"].shape == (m.num_frames, 4) and len(d["heading_deg"]) == 2
    assert np.percentile(d["cm"], 95) < 10.0, np.percentile(d["cm"], 95)
    for dy in d["heading_deg"]:
        assert dy.mean() < 10.0, dy.mean()  # before: 12.1 and 16.0 degrees
    assert foot_drift(m, m)["cm"].max() == 0.0  # a clip against itself: nothing moved
    with pytest.raises(IKError, match="same clip"):
        foot_drift(out[:100], m)

"""The one contact detector (cleanup.contacts) and footlock's settings, on a procedural clip."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jointlimits.cleanup.contacts import detect_contacts, find_feet, find_toes
from jointlimits.cleanup.footlock import FootlockSettings, footlock
from jointlimits.cleanup.pops import ground_contacts
from jointlimits.errors import IKError
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion


@pytest.fixture(scope="module")
def clip():
    return range_of_motion(humanoid_skeleton(), seconds=6.0, fps=30)


def test_feet_and_toes(clip):
    sk = clip.skeleton
    feet = find_feet(sk)
    assert [sk.names[j] for j in feet] == ["LeftFoot", "RightFoot"]
    assert [sk.names[t] for t in find_toes(sk, feet)] == ["LeftToe", "RightToe"]


def test_height_only_contacts_are_the_pop_detectors(clip):
    """ground_contacts (pops) is detect_contacts in body-height units without a speed test."""
    g = ground_contacts(clip, 0.06, 2)
    feet = [j for j, n in enumerate(clip.skeleton.names) if "Foot" in n or "Toe" in n]
    c = detect_contacts(clip, feet, 0.06, None, 1, height_unit="body", margin=2, legs=False)
    np.testing.assert_array_equal(g[:, feet], c)


def test_margin_widens_and_min_frames_cleans(clip):
    c0 = detect_contacts(clip)
    c1 = detect_contacts(clip, margin=1)
    assert c0.shape == (clip.num_frames, 2) and np.all(c1 >= c0)
    with pytest.raises(IKError, match="height_unit"):
        detect_contacts(clip, height_unit="feet")
    with pytest.raises(IKError, match="velocity_threshold"):
        detect_contacts(clip, velocity_threshold=-1.0)


def test_settings_and_keywords_agree(clip):
    s = FootlockSettings(height_threshold=0.1, blend_frames=3, toe_first=True)
    a, ra = footlock(clip, settings=s)
    b, rb = footlock(clip, height_threshold=0.1, blend_frames=3, toe_first=True)
    c, _ = footlock(clip, settings=FootlockSettings(height_threshold=0.1), blend_frames=3, toe_first=True)
    np.testing.assert_array_equal(a.rotations, b.rotations)
    np.testing.assert_array_equal(a.rotations, c.rotations)
    np.testing.assert_array_equal(ra.contacts, rb.contacts)
    with pytest.raises(TypeError, match="blend"):
        footlock(clip, blend=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.margin = 2  # type: ignore[misc]

"""JointLimits.fit's settings as one FitOptions: the same limits as the keywords, keywords replace
its fields, and a keyword that is no setting fails as a function's unknown keyword does."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jointlimits
from jointlimits import JointLimits, limits
from jointlimits.errors import LimitsError
from jointlimits.limits import FitOptions

KEYWORDS = dict(shape="kdop", padding=0.1, swing_twist=True, exclude=["Head"], paddings={"LeftArm": 0.2})


def test_options_and_keywords_fit_identical_limits(clips):
    clip, probe = clips
    by_keywords = JointLimits.fit(clip, **KEYWORDS)
    by_options = JointLimits.fit(clip, FitOptions(**KEYWORDS))
    assert by_options.to_dict() == by_keywords.to_dict()
    assert np.array_equal(by_options.project(probe.rotations), by_keywords.project(probe.rotations))
    # a keyword replaces that field of the options
    mixed = JointLimits.fit(clip, FitOptions(**{**KEYWORDS, "padding": 0.3}), padding=0.1)
    assert mixed.to_dict() == by_keywords.to_dict()
    assert JointLimits.fit(clip, FitOptions(shape="box")).to_dict() != by_keywords.to_dict()


def test_unknown_keyword_and_bad_options_fail(clips):
    clip = clips[0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'shpae'"):
        JointLimits.fit(clip, shpae="kdop")
    with pytest.raises(TypeError, match="unexpected keyword argument 'shpae'"):
        JointLimits.fit(clip, FitOptions(), shpae="kdop")
    with pytest.raises(TypeError, match="FitOptions"):
        JointLimits.fit(clip, "kdop")  # type: ignore[arg-type]
    with pytest.raises(LimitsError, match="unknown limit shape"):
        FitOptions(shape="sphere")
    with pytest.raises(LimitsError, match="target_recall needs shape='implicit'"):
        FitOptions(shape="kdop", target_recall=0.9)


def test_fit_options_is_exported_and_normalised():
    assert jointlimits.FitOptions is FitOptions is limits.FitOptions
    o = FitOptions(shape="implicit", joints=["a"], groups=["p", "q"])
    assert o.padding == 0.095 and o.joints == ("a",) and o.groups == ("p", "q")
    assert dataclasses.replace(o, padding=0.2).padding == 0.2
    # the calibration fields leave the cache key of an uncalibrated fit as it was
    assert "uniform" not in FitOptions().key()

"""#38: limits files at the edges found by scripts/fuzz_limits.py: JSON values are counted before
the file is parsed (a 31 MB file of ``[],[],...`` under an unknown key loaded in 24 s with a peak
of 880 MB), and a coupled limit's parent must be a joint (such a file loaded, then ``project``
raised SkeletonError)."""

from __future__ import annotations

import copy
import json

import pytest

import jointlimits as jl
from jointlimits.errors import LimitsError
from jointlimits.limits import schema
from jointlimits.motion import procedural


@pytest.fixture(scope="module")
def doc():
    return jl.JointLimits.fit(procedural.range_of_motion(seconds=0.25), shape="box").to_dict()


def _with_lists(doc, n):
    return json.dumps(doc)[:-1] + ', "x": [' + "[]," * (n - 1) + "[]]}"


def test_more_json_values_than_the_cap_is_one_line_limits_error(doc, tmp_path, monkeypatch):
    text = json.dumps(doc)
    cap = text.count(",") + text.count("[") + text.count("{") + 1000
    monkeypatch.setattr(schema, "MAX_JSON_VALUES", cap)
    p = tmp_path / "many.json"
    p.write_text(_with_lists(doc, 1500))
    with pytest.raises(LimitsError, match="JSON values") as e:
        jl.JointLimits.load(p)
    assert "\n" not in str(e.value) and str(p) in str(e.value)
    p.write_text(_with_lists(doc, 400))  # under the cap: loads, the unknown key ignored as before
    assert jl.JointLimits.load(p).skeleton.names == list(doc["skeleton"]["names"])


def test_a_fitted_file_holds_far_fewer_values_than_the_cap(doc):
    text = json.dumps(doc)
    assert (text.count(",") + text.count("[") + text.count("{")) * 50 < schema.MAX_JSON_VALUES


@pytest.fixture(scope="module")
def coupled_doc():
    from conftest import two_joint_limits

    return two_joint_limits("implicit", False, coupled=True, pairs=[("a", "b")])[0].to_dict()


@pytest.mark.parametrize("parent", ["nope", 0.5])
def test_a_coupled_limit_whose_parent_is_no_joint_is_refused_at_load(coupled_doc, tmp_path, parent):
    d = copy.deepcopy(coupled_doc)
    d["joints"][-1]["limit"]["parent"] = parent
    d["joints"][-1].pop("compiled", None)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(d))
    with pytest.raises(LimitsError, match=r"the parent .* of its coupled limit is not a joint") as e:
        jl.JointLimits.load(p)
    assert "\n" not in str(e.value)
    d["joints"][-1]["limit"]["parent"] = "a"  # the joint it was fitted with: loads
    p.write_text(json.dumps(d))
    assert jl.JointLimits.load(p).skeleton.names == d["skeleton"]["names"]

"""#38: a limits file's JSON values are counted before it is parsed (scripts/fuzz_limits.py found
a 31 MB file of ``[],[],...`` under an unknown key loading in 24 s with a peak of 880 MB)."""

from __future__ import annotations

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

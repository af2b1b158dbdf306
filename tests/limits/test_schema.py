"""Corrupt limits files: every field of the file format gives one precise LimitsError, through the
API and through the command line (one stderr line, exit 2, nothing written)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from click.testing import CliRunner

import jointlimits as jl
from jointlimits.cli import main
from jointlimits.errors import LimitsError
from jointlimits.io import bvh
from jointlimits.motion import procedural


@pytest.fixture(scope="module")
def docs():
    m = procedural.range_of_motion(seconds=3.0)
    out = {sh: jl.JointLimits.fit(m, shape=sh).to_dict() for sh in ("box", "ellipsoid", "kdop")}
    out["st"] = jl.JointLimits.fit(m, shape="kdop", swing_twist=True).to_dict()
    return m, out


def _limit(d):
    return d["joints"][1]["limit"]


def _set(path_fn, key, value):
    return lambda d: path_fn(d).__setitem__(key, value)


CASES = {
    # top level
    "schema missing": ("box", lambda d: d.pop("schema"), "not a jointlimits limits file"),
    "version true": ("box", _set(lambda d: d, "version", True), "version True"),
    "version 1.0": ("box", _set(lambda d: d, "version", 1.0), "version 1.0"),
    "version 2": ("box", _set(lambda d: d, "version", 2), "version 2"),
    "skeleton a list": ("box", _set(lambda d: d, "skeleton", [1]), "'skeleton' must be an object"),
    "joints an object": ("box", _set(lambda d: d, "joints", {"a": 1}), "'joints' must be a list"),
    "settings a list": ("box", _set(lambda d: d, "settings", [1]), "'settings' must be an object"),
    "fingerprint edited": ("box", lambda d: d["skeleton"].__setitem__("fingerprint", "x"), "fingerprint"),
    "parents corrupt": (
        "box",
        lambda d: d["skeleton"].__setitem__("parents", [5] * len(d["skeleton"]["names"])),
        "parents",
    ),
    # joint entries
    "entry a number": ("box", lambda d: d["joints"].__setitem__(1, 7), "joints[1] must be an object"),
    "name a number": ("box", _set(lambda d: d["joints"][1], "name", 3), "'name' must be a string"),
    "name unknown": ("box", _set(lambda d: d["joints"][1], "name", "Tail"), "Tail"),
    "name twice": ("box", lambda d: d["joints"].append(copy.deepcopy(d["joints"][1])), "listed twice"),
    "enabled a string": ("box", _set(lambda d: d["joints"][1], "enabled", "false"), "'enabled' must be true or false"),
    "limit a list": ("box", _set(lambda d: d["joints"][1], "limit", [1, 2]), "'limit' must be an object"),
    "limit kind unknown": ("box", _set(_limit, "kind", "blob"), "unknown joint limit kind"),
    "zero reference": ("box", _set(_limit, "reference", [0, 0, 0, 0]), "non-zero reference"),
    "nan reference": ("box", _set(_limit, "reference", [float("nan"), 0, 0, 1]), "reference"),
    "zero twist axis": ("st", _set(_limit, "twist_axis", [0, 0, 0]), "twist axis"),
    "swing missing": ("st", lambda d: _limit(d).pop("swing"), "swing"),
    # shapes
    "shape kind unknown": ("box", _set(lambda d: _limit(d)["shape"], "kind", "blob"), "unknown limit shape"),
    "box lo > hi": ("box", _set(lambda d: _limit(d)["shape"], "lo", [10.0, 10.0, 10.0]), "empty box"),
    "box lo nan": ("box", _set(lambda d: _limit(d)["shape"], "lo", [float("nan"), 0, 0]), "finite 'lo'"),
    "box hi short": ("box", _set(lambda d: _limit(d)["shape"], "hi", [1.0]), "hi"),
    "ellipsoid negative scale": ("ellipsoid", _set(lambda d: _limit(d)["shape"], "scale", [-1, 1, 1]), "scale"),
    "ellipsoid rotation short": ("ellipsoid", _set(lambda d: _limit(d)["shape"], "rotation", [1, 0]), "rotation"),
    "kdop empty": ("kdop", _set(lambda d: _limit(d)["shape"], "mins", []), "mins"),
    "kdop zero axis": ("kdop", lambda d: _limit(d)["shape"]["axes"].__setitem__(0, [0, 0, 0]), "zero vector"),
    "kdop mins > maxs": ("kdop", lambda d: _limit(d)["shape"]["mins"].__setitem__(0, 99.0), "empty k-DOP slab"),
    # the compiled form the C++ reader uses
    "compiled edited": ("box", lambda d: d["joints"][1]["compiled"]["a"].__setitem__("f", [1.0]), "'compiled'"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_corrupt_field_is_a_precise_error(docs, case):
    _, base = docs
    shape, mutate, words = CASES[case]
    d = copy.deepcopy(base[shape])
    mutate(d)
    with pytest.raises(LimitsError, match=None) as exc:
        jl.JointLimits.from_dict(json.loads(json.dumps(d)))
    assert words.lower() in str(exc.value).lower(), str(exc.value)


def test_a_valid_file_round_trips_with_its_compiled_entries(docs, tmp_path):
    m, base = docs
    for d in base.values():
        p = tmp_path / "ok.json"
        p.write_text(json.dumps(d))
        lim = jl.JointLimits.load(p)
        np.testing.assert_allclose(
            lim.project(m.rotations[::30]), jl.JointLimits.from_dict(d).project(m.rotations[::30]), atol=1e-14
        )


def test_deeply_nested_json_is_a_limits_error(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(LimitsError, match="nested too deeply"):
        jl.JointLimits.load(p)


@pytest.mark.parametrize("case", ["enabled a string", "limit a list", "box lo > hi", "version true"])
def test_cli_reports_a_corrupt_file_in_one_line(docs, tmp_path, case):
    m, base = docs
    shape, mutate, words = CASES[case]
    d = copy.deepcopy(base[shape])
    mutate(d)
    lim = tmp_path / "bad.json"
    lim.write_text(json.dumps(d))
    clip = tmp_path / "clip.bvh"
    bvh.save(clip, m)
    out = tmp_path / "out.bvh"
    res = CliRunner().invoke(main, ["apply", str(lim), str(clip), "-o", str(out)])
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words.lower() in lines[0].lower(), res.stderr
    assert not out.exists()


@pytest.mark.parametrize("at", [float("nan"), float("inf"), "3", 2.5, True])
def test_splice_at_must_be_a_frame(at):
    from jointlimits.cleanup import tracking
    from jointlimits.cleanup.tracking import TrackingError

    m = procedural.range_of_motion(seconds=1.0)
    with pytest.raises(TrackingError, match="at must be a frame"):
        tracking.splice(m, m, at=at)

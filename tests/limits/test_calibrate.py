"""Calibrated paddings (#28): the required padding against a lone metaball's analytic answer,
group labels, the stored calibration (round trip, old files, malformed entries), report and CLI."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits import io
from jointlimits.cli import main
from jointlimits.errors import LimitsError
from jointlimits.limits.calibrate import CalibrationWarning, group_labels, read_calibration, required_padding
from jointlimits.limits.fit import default_padding
from jointlimits.limits.implicit import RADIUS_CELLS, iso_fraction
from jointlimits.limits.model import JointLimits
from jointlimits.motion import procedural


@pytest.fixture(scope="module")
def clips():
    """Three short procedural clips (seeds), 90 frames each."""
    return [procedural.range_of_motion(seconds=3.0, seed=seed) for seed in range(3)]


@pytest.fixture(scope="module")
def calibrated(clips):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        return JointLimits.fit(clips, shape="implicit", target_recall=0.95, joints=["LeftArm", "LeftForeArm"])


def test_required_padding_of_a_lone_ball_is_analytic():
    # one voxel at the origin: the field reads the threshold at R * iso, so a point at d cells
    # needs R = d / iso cells, a padding of (R - radius_cells) * iso * cell radians
    cell = 0.1
    d = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 500.0])
    pts = np.column_stack([d, np.zeros_like(d), np.zeros_like(d)])
    got = required_padding(np.zeros((1, 3), np.int64), pts, cell)
    iso = iso_fraction()
    want = np.maximum(d / iso - RADIUS_CELLS, 0.0) * iso * cell
    want[-1] = np.inf  # beyond MAX_PADDING
    np.testing.assert_allclose(got[:-1], want[:-1], atol=1e-5)
    assert got[-1] == np.inf


def test_required_padding_matches_a_fitted_limit():
    # the padding found admits the point in an Implicit fitted at it, and a little less does not
    from jointlimits.limits.implicit import Implicit

    rng = np.random.default_rng(3)
    pts = rng.normal(size=(300, 3)) * 0.3
    shape = Implicit.fit(pts, padding=0.0, subsample=None)
    local = (pts - shape.position) @ shape.rotation
    vox = np.unique(np.rint(local / shape.cell).astype(np.int64), axis=0)
    probe = np.array([[1.2, 0.0, 0.0], [0.0, -1.0, 0.4]])
    g = ((probe - shape.position) @ shape.rotation) / shape.cell
    need = required_padding(vox, g, shape.cell)
    for p, n in zip(probe, need):
        assert np.isfinite(n) and n > 0
        assert Implicit.fit(pts, padding=n + 0.01, subsample=None, cell=shape.cell).contains(p[None])[0]
        assert not Implicit.fit(pts, padding=max(n - 0.02, 0.0), subsample=None, cell=shape.cell).contains(p[None])[0]


def test_group_labels(tmp_path):
    files = ["a/walk1_subject1.bvh", "b/run_subject2.bvh", "c/dance_subject1.bvh", "odd.bvh"]
    assert group_labels(files, [r"_subject\d+"]) == ["_subject1", "_subject2", "_subject1", "odd.bvh"]
    assert group_labels(["01_02.bvh", "01_05.bvh", "13_01.bvh"], [r"^(\d+)_"]) == ["01", "01", "13"]
    csv = tmp_path / "groups.csv"
    csv.write_text("walk1_subject1.bvh,anna\nb/run_subject2.bvh,ben\ndance_subject1.bvh,anna\nodd.bvh,ben\n")
    assert group_labels(files, [str(csv)]) == ["anna", "ben", "anna", "ben"]
    with pytest.raises(LimitsError, match="no group"):
        group_labels(["other.bvh"], [str(csv)])
    with pytest.raises(LimitsError, match="regular expression"):
        group_labels(files, ["(unclosed"])


def test_calibration_is_stored_and_read_back(calibrated, tmp_path):
    cal = calibrated.calibration
    assert set(cal) == {"LeftArm", "LeftForeArm"}
    for row in cal.values():
        assert 0 <= row["padding"] <= 0.5 and 0 < row["expected_recall"] <= 1 and row["spread"] >= 0
    # uniform allocation: one padding, whose mean expected recall meets the target
    assert len({r["padding"] for r in cal.values()}) == 1
    assert np.mean([r["expected_recall"] for r in cal.values()]) >= 0.95
    p = tmp_path / "lim.json"
    calibrated.save(p)
    assert JointLimits.load(p).calibration == cal
    d = json.loads(p.read_text())
    assert d["settings"]["joint_padding"] == {} or isinstance(d["settings"]["joint_padding"], dict)
    # an old file (no calibration) still loads, and reads as uncalibrated
    del d["settings"]["calibration"]
    assert JointLimits.from_dict(d).calibration is None
    with pytest.raises(LimitsError, match="expected_recall"):
        read_calibration({"calibration": {"joints": {"LeftArm": {"padding": 0.1, "expected_recall": 2, "spread": 0}}}})


@pytest.mark.filterwarnings("ignore:too few clips")
def test_warns_with_one_group_and_rejects_other_shapes(clips):
    with pytest.warns(CalibrationWarning, match="one group"):
        JointLimits.fit(clips[:2], shape="implicit", target_recall=0.9, groups=["p", "p"], joints=["LeftForeArm"])
    with pytest.raises(LimitsError, match="implicit"):
        JointLimits.fit(clips, shape="kdop", target_recall=0.9)


def test_report_puts_measured_next_to_expected(calibrated, clips):
    rows = calibrated.report(clips[0])
    for r in rows:
        assert r["recall"] == pytest.approx(1 - r["fraction_outside"])
        assert r["below_expected"] == (r["recall"] < r["expected_recall"])


def test_implicit_default_padding():
    assert default_padding("implicit") == 0.095 and default_padding("kdop") == 0.05


def test_cli_fit_target_recall_report_and_plot(clips, tmp_path):
    paths = []
    for k, m in enumerate(clips):
        p = tmp_path / f"take{k}_subject{k % 2 + 1}.bvh"
        io.save(p, m)
        paths.append(str(p))
    out = tmp_path / "lim.json"
    r = CliRunner().invoke(
        main,
        ["fit", *paths, "-o", str(out), "--shape", "implicit", "--target-recall", "0.95", "--groups", r"_subject\d+"]
        + ["--joints", "LeftForeArm", "-q"],
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["report", str(out), paths[0], "--json"])
    row = json.loads(r.output)["joints"][0]
    assert {"recall", "expected_recall", "expected_spread", "below_expected"} <= set(row)
    r = CliRunner().invoke(main, ["report", str(out), paths[0]])
    assert "expected" in r.output and "joints below their expected recall" in r.output
    fig = tmp_path / "cal.png"
    r = CliRunner().invoke(main, ["plot", str(out), *paths, "--calibration", "-o", str(fig), "-q"])
    assert r.exit_code == 0, r.output
    assert fig.stat().st_size > 1000
    r = CliRunner().invoke(main, ["fit", paths[0], "-o", str(tmp_path / "x.json"), "--target-recall", "0.9"])
    assert r.exit_code == 2 and "--shape implicit" in r.output

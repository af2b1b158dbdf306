"""Figures: valid PNGs of the expected size, every shape, and no files left behind on failure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jointlimits.errors import LimitsError, SkeletonError
from jointlimits.limits.model import SHAPES, JointLimits
from jointlimits.motion.procedural import humanoid_skeleton
from jointlimits.motion.skeleton import Motion, Skeleton
from jointlimits.viz import plots

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def fitted(clips) -> dict[tuple[str, bool], JointLimits]:
    clip, _ = clips
    return {
        (s, st): JointLimits.fit(
            clip, shape=s, swing_twist=st, joints=["Hips", "LeftArm", "LeftUpLeg", "RightForeArm", "Neck"]
        )
        for s in SHAPES
        for st in (False, True)
    }


def check_png(path: Path, size: tuple[int, int]) -> None:
    """A complete PNG of ``size`` (width, height) pixels that matplotlib can read back."""
    import matplotlib.image as mpimg

    data = path.read_bytes()
    assert data[:8] == PNG
    assert len(data) > 10_000
    img = mpimg.imread(path)
    assert img.shape[:2] == (size[1], size[0])
    assert img.std() > 0.01  # not a blank canvas
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("swing_twist", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_joint_limit_figure_for_every_shape(tmp_path, clips, fitted, shape, swing_twist):
    clip, over = clips
    lim = fitted[shape, swing_twist]
    out = plots.plot_joint_limit(
        lim, clip, "LeftArm", tmp_path / "arm.png", projected=lim.apply(over), over_rotated=over
    )
    assert out == tmp_path / "arm.png"
    check_png(out, (1600, 1000))


def test_joint_limit_figure_options(tmp_path, clips, fitted):
    clip, over = clips
    lim = fitted["kdop", False]
    # several clips, no projected clip, radians, another size, joint by index
    out = plots.plot_joint_limit(
        lim,
        [clip[:100], clip[100:]],
        clip.skeleton.index("LeftUpLeg"),
        tmp_path / "leg.png",
        degrees=False,
        figsize=(12.0, 8.0),
        dpi=80,
    )
    check_png(out, (960, 640))
    # overwriting an existing figure replaces it
    out.write_bytes(b"old")
    plots.plot_joint_limit(lim, clip, "Neck", out)
    check_png(out, (1600, 1000))


def test_violation_report(tmp_path, clips, fitted):
    clip, over = clips
    lim = JointLimits.fit(clip, shape="kdop")
    out = plots.plot_violation_report(
        lim, over, tmp_path / "report.png", projected=lim.apply(over), figsize=(12.0, 8.0)
    )
    check_png(out, (1200, 800))
    out2 = plots.plot_violation_report(fitted["ellipsoid", True], over, tmp_path / "small.png")
    import matplotlib.image as mpimg

    h, w = mpimg.imread(out2).shape[:2]
    assert w == 1200 and h >= 400
    check_png(out2, (w, h))


def test_shape_geometry_matches_the_shape(fitted):
    box = fitted["box", False].joint("LeftArm").shape
    geo = plots.shape_geometry(box)
    assert len(geo["faces"]) == 6 and geo["points"].shape == (8, 3)
    kdop = fitted["kdop", False].joint("LeftArm").shape
    geo = plots.shape_geometry(kdop)
    assert 6 <= len(geo["faces"]) <= 26
    assert kdop.contains(geo["points"], tolerance=1e-7).all()  # polytope vertices lie on the k-DOP
    inside_pts = 0.999 * (geo["points"] - kdop.position) + kdop.position
    assert kdop.contains(inside_pts).all()
    ell = fitted["ellipsoid", False].joint("LeftArm").shape
    pts = plots.shape_geometry(ell)["points"]
    local = (pts - ell.position) @ ell.rotation / ell.scale
    assert np.allclose(np.linalg.norm(local, axis=1), 1.0)


def test_unknown_joint_writes_nothing(tmp_path, clips, fitted):
    clip, _ = clips
    with pytest.raises(SkeletonError, match="Elbow"):
        plots.plot_joint_limit(fitted["kdop", False], clip, "Elbow", tmp_path / "x.png")
    with pytest.raises(LimitsError, match="Head"):  # a joint without a limit
        plots.plot_joint_limit(fitted["kdop", False], clip, "Head", tmp_path / "x.png")
    assert list(tmp_path.iterdir()) == []


def test_other_skeleton_writes_nothing(tmp_path, clips, fitted):
    clip, _ = clips
    other = Skeleton(["Root", "A"], [-1, 0], [[0, 0, 0], [0, 1, 0]])
    stranger = Motion.rest(other, 5)
    with pytest.raises(LimitsError):
        plots.plot_joint_limit(fitted["box", False], stranger, "Hips", tmp_path / "x.png")
    with pytest.raises(LimitsError):
        plots.plot_joint_limit(fitted["box", False], clip, "LeftArm", tmp_path / "x.png", projected=stranger)
    with pytest.raises(LimitsError):
        plots.plot_violation_report(fitted["box", False], stranger, tmp_path / "r.png")
    empty = JointLimits(humanoid_skeleton())
    with pytest.raises(LimitsError, match="no joint"):
        plots.plot_violation_report(empty, clip, tmp_path / "r.png")
    assert list(tmp_path.iterdir()) == []


def test_failure_while_writing_leaves_no_file(tmp_path, clips, fitted, monkeypatch):
    from matplotlib.figure import Figure

    clip, _ = clips

    def broken(self, fh, **kwargs):
        fh.write(PNG + b"half a figure")
        raise OSError("disk full")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(OSError, match="disk full"):
        plots.plot_joint_limit(fitted["ellipsoid", False], clip, "LeftArm", tmp_path / "x.png")
    with pytest.raises(OSError, match="disk full"):
        plots.plot_violation_report(fitted["ellipsoid", False], clip, tmp_path / "r.png")
    assert list(tmp_path.iterdir()) == []

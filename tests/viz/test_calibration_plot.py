"""#38: the calibration figure keeps its legend outside the axes, shows the worst joint, and no
joint label overlaps another label, a marker or an error bar."""

from __future__ import annotations

import itertools

import numpy as np

from jointlimits.viz import plots
from jointlimits.viz.labels import overlaps, text_box


def _rows() -> list[dict]:
    rng = np.random.default_rng(3)
    names = [
        f"{side}{part}"
        for side in ("Left", "Right")
        for part in ("UpLeg", "Leg", "Foot", "Toe", "Shoulder", "Arm", "ForeArm", "Hand")
    ] + ["Spine", "Neck", "Head"]
    rows = []
    for n in names:
        e = 0.99 - 0.004 * rng.random()
        m = min(1.0, e + rng.normal(0, 0.006))
        rows.append({"joint": n, "expected_recall": e, "recall": m, "expected_spread": 0.003 + 0.004 * rng.random()})
    rows[5]["recall"] = 0.86  # the worst joint, low and to the right: where a lower-right legend sat
    rows[6]["recall"] = 0.975
    rows[7]["recall"] = 0.974  # two close together
    return rows


def test_legend_outside_worst_joint_visible_no_label_overlaps(tmp_path, monkeypatch):
    figs = []
    make = plots._figure
    monkeypatch.setattr(plots, "_figure", lambda *a, **k: figs.append(make(*a, **k)) or figs[-1])
    rows = _rows()
    plots.plot_calibration(rows, tmp_path / "cal.png")
    assert (tmp_path / "cal.png").stat().st_size > 0
    fig = figs[0]
    ax = fig.axes[0]
    r = fig.canvas.get_renderer()
    frame = ax.get_window_extent(r)
    legend = ax.get_legend().get_window_extent(r)
    assert overlaps(frame, legend) == 0.0 and legend.x0 >= frame.x1  # outside, to the right
    labels = {t.get_text(): text_box(t, r) for t in ax.texts}
    below = [row for row in rows if row["recall"] < row["expected_recall"]]
    assert set(labels) == {row["joint"] for row in below}
    worst = min(below, key=lambda row: row["recall"] - row["expected_recall"])
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert x0 < worst["expected_recall"] < x1 and y0 < worst["recall"] < y1  # its marker is in view
    wx, wy = ax.transData.transform((worst["expected_recall"], worst["recall"]))
    assert not legend.contains(wx, wy)
    for (a, ba), (b, bb) in itertools.combinations(labels.items(), 2):
        assert overlaps(ba, bb) == 0.0, (a, b)
    for name, box in labels.items():
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, name
        for row in rows:
            px, py = ax.transData.transform((row["expected_recall"], row["recall"]))
            lo = ax.transData.transform((row["expected_recall"] - row["expected_spread"], row["recall"]))[0]
            hi = ax.transData.transform((row["expected_recall"] + row["expected_spread"], row["recall"]))[0]
            assert not (box.x0 < px + 3 and px - 3 < box.x1 and box.y0 < py + 3 and py - 3 < box.y1), (
                name,
                row["joint"],
            )
            assert not (box.x0 < hi and lo < box.x1 and box.y0 < py < box.y1), (name, "error bar of " + row["joint"])

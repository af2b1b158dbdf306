"""A coupled fit with many parent cells and a wide padding coarsens its conditioned fields' grid
until they fit what a limits file may hold (it used to stop with "more than supported")."""

from __future__ import annotations

import numpy as np

import jointlimits.limits.coupled as coupled


def _fit(padding: float) -> coupled.CoupledLimit:
    rng = np.random.default_rng(3)
    vp = rng.normal(size=(3000, 3)) * [0.6, 0.4, 0.3]
    vc = np.column_stack([np.sin(vp[:, 0]), 0.5 * vp[:, 1] + 0.1 * rng.normal(size=3000), 0.2 * vp[:, 2]])
    return coupled.CoupledLimit.fit(
        vp, vc, [1.0, 0, 0, 0], [1.0, 0, 0], [1.0, 0, 0, 0], "p", padding=padding, parent_cell=0.4, min_frames=40
    )


def test_many_wide_fields_are_coarsened_to_fit(monkeypatch):
    narrow = _fit(0.05)
    assert narrow.fcell == 2.0 * narrow.base.shape.cell  # the default coarsening where it fits
    budget = narrow.fields.size  # a file that holds exactly the narrow fit
    monkeypatch.setattr(coupled, "MAX_FIELDS_NODES", budget)
    again = _fit(0.05)
    assert again.fcell == narrow.fcell and np.array_equal(again.fields, narrow.fields)  # unchanged where it fits
    wide = _fit(0.5)  # a wider ball: more nodes per field on the default grid
    assert wide.fields.size <= budget and wide.fcell > 2.0 * wide.base.shape.cell
    assert len(wide.fields) == len(narrow.fields)

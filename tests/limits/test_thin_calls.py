"""The thin compiled calls of the projections (arrays already right are checked once in C++) give
the checked path's results bit for bit, and every wrong input still gets the checked path's error."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits import limits as L
from jointlimits._native import _core
from jointlimits.errors import LimitsError

rng = np.random.default_rng(4)
P = rng.normal(size=(5, 16, 3))
LO, HI = np.array([-0.5, -0.4, -0.3]), np.array([0.5, 0.6, 0.2])
POS = np.array([0.1, -0.2, 0.05])
ROT = np.linalg.qr(rng.normal(size=(3, 3)))[0]
SCALE = np.array([0.5, 0.4, 0.3])


def test_box_equals_the_compiled_kernel():
    got = L.project_box(P, LO, HI)
    want = np.empty((80, 3))
    assert _core.project_box_aa(P.reshape(-1, 3), LO, HI, want)
    assert got.shape == P.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("frame", [(None, None), (POS, ROT), (POS, None), (None, ROT)])
def test_fast_and_checked_paths_agree(frame):
    pos, rot = frame
    slow_pts = P.tolist()  # a list takes the checked path
    if pos is None and rot is None:
        fast, slow = L.project_box(P, LO, HI), L.project_box(slow_pts, LO, HI)
    else:
        fast = L.project_box(P, LO, HI, pos, rot, always_map=True)
        slow = L.project_box(slow_pts, LO, HI, pos, rot, always_map=True)
    assert fast.tobytes() == slow.tobytes()
    e_fast = L.project_ellipsoid(P, SCALE, pos, rot)
    e_slow = L.project_ellipsoid(slow_pts, SCALE, pos, rot)
    assert e_fast.tobytes() == e_slow.tobytes()


def test_out_is_filled_and_returned():
    out = np.empty_like(P)
    assert L.project_box(P, LO, HI, out=out) is out
    assert L.project_ellipsoid(P, SCALE, POS, ROT, out=out) is out
    out32 = np.empty(P.shape, np.float32)
    p32 = P.astype(np.float32)
    assert L.project_box(p32, LO, HI, out=out32) is out32
    assert np.array_equal(out32, np.clip(p32, LO.astype(np.float32), HI.astype(np.float32)))


def test_the_fast_call_declines_what_it_does_not_check():
    out = np.empty_like(P)
    assert _core.project_box_fast(P, LO, HI, out) is out
    assert _core.project_box_fast(P, HI, LO, out) is None  # lo > hi
    assert _core.project_box_fast(P, LO, HI, np.empty((80, 3))) is None  # other shape
    bad = P.copy()
    bad[1, 2, 0] = np.nan
    assert _core.project_box_fast(bad, LO, HI, None) is None
    assert _core.project_ellipsoid_fast(P, -SCALE, 0.0, POS, ROT, 32, None) is None
    with pytest.raises(TypeError):
        _core.project_box_fast(P.astype(np.float32), LO, HI, None)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: L.project_box(P, HI, LO), "empty box"),
        (lambda: L.project_box(np.full((2, 3), np.nan), LO, HI), "non-finite value"),
        (lambda: L.project_box(P, LO, HI, out=np.empty((80, 3))), "out must be"),
        (lambda: L.project_box(P, LO, HI, out=np.empty(P.shape)[..., ::-1]), "out must be"),
        (lambda: L.project_box(P[..., :2], LO, HI), "shape"),
        (lambda: L.project_box(P, LO, [np.inf, 1, 1]), "non-finite"),
        (lambda: L.project_box(P, LO, HI, POS, np.full((3, 3), np.nan)), "rotation"),
        (lambda: L.project_ellipsoid(P, -SCALE), "scale must be >= 0"),
        (lambda: L.project_ellipsoid(P, SCALE, iterations=0), "iterations must be >= 1"),
        (lambda: L.project_ellipsoid(P, SCALE, eps=-1.0), "eps must be"),
        (lambda: L.project_ellipsoid(np.full((2, 3), np.inf), SCALE), "non-finite value"),
    ],
)
def test_wrong_input_gets_the_checked_error(call, message):
    with pytest.raises(LimitsError, match=message):
        call()

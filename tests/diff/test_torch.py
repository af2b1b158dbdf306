"""jointlimits.torch: values equal the compiled core, gradients pass gradcheck (float64) at
rotations inside, outside and within 1e-4 rad of the boundary, no NaN/inf anywhere (random,
identity, antipodal, on-boundary), the three input formats agree, bad input is one clear error."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the [torch] extra: pip install -e '.[torch]'")

from _cases import CASES, IDS, limits_of, points, special  # noqa: E402

from jointlimits.errors import LimitsError  # noqa: E402
from jointlimits.motion import quat  # noqa: E402

#: rotations per shape of the NaN sweep (the issue's 1e6 with JOINTLIMITS_DIFF_FULL=1)
SWEEP = 1_000_000 if os.environ.get("JOINTLIMITS_DIFF_FULL") else 3_000


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_equal_the_core(case):
    lim, rot = limits_of(*case)
    rng = np.random.default_rng(1)
    q = np.concatenate([quat.normalize(rng.normal(size=(300, 3, 4))), rot[::5]])
    tl = lim.to_torch("cpu")
    v64 = tl.violation(torch.tensor(q)).numpy()
    assert np.abs(v64 - lim.violation(q)).max() <= 1e-9
    p64 = tl.project(torch.tensor(q)).numpy()
    assert quat.angle(p64, lim.project(q)).max() <= 1e-9
    v32 = tl.violation(torch.tensor(q, dtype=torch.float32)).numpy()
    assert v32.dtype == np.float32 and np.abs(v32 - lim.violation(q.astype(np.float32))).max() <= 1e-5


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradcheck(case):
    lim, rot = limits_of(*case)
    tl = lim.to_torch()
    pts = points(lim, rot)
    if case[0] == "implicit":
        # the core's projection onto a metaball grid is piecewise smooth at a finer scale than
        # 1e-4 rad: its derivative is checked away from the boundary only (see docs)
        pts = {k: v for k, v in pts.items() if not k.startswith("near")}
    for where, q0 in pts.items():
        q = torch.tensor(q0, requires_grad=True)
        fs = [tl.violation, tl.project]
        if case[2]:  # a coupled limit passes no gradient to its parent: check the child's column
            q = torch.tensor(q0[:, 2:], requires_grad=True)
            rest = torch.tensor(q0[:, :2])
            fs = [
                lambda c, rest=rest: tl.violation(torch.cat([rest, c], 1)),
                lambda c, rest=rest: tl.project(torch.cat([rest, c], 1)),
            ]
        for f in fs:
            # eps 1e-7: the violation's curvature near the boundary is 1 / distance, so the
            # numerical derivative with a larger step is off by more than the tolerance there
            assert torch.autograd.gradcheck(f, (q,), eps=1e-7, atol=1e-5, rtol=1e-3, fast_mode=True), where


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_no_nan_values_or_gradients(case):
    lim, rot = limits_of(*case)
    tl = lim.to_torch()
    rng = np.random.default_rng(2)
    q = np.concatenate([special(lim, rot), quat.normalize(rng.normal(size=(SWEEP // 3, 3, 4)))])
    for dtype in (torch.float64, torch.float32):
        x = torch.tensor(q, dtype=dtype, requires_grad=True)
        v = tl.violation(x)
        p = tl.project(x)
        (v.sum() + (p * torch.linspace(-1, 1, 4, dtype=dtype)).sum()).backward()
        assert torch.isfinite(v).all() and torch.isfinite(p).all() and torch.isfinite(x.grad).all()
    # identity and on-boundary rows: violation 0 with a zero gradient (nothing to push)
    x = torch.tensor(special(lim, rot)[:2], requires_grad=True)
    tl.violation(x).sum().backward()
    assert float(x.grad.abs().max()) == 0.0


def test_formats_agree():
    lim, _ = limits_of("ellipsoid", False, False)
    tl = lim.to_torch()
    q = quat.abs(quat.normalize(np.random.default_rng(4).normal(size=(50, 3, 4))))
    aa = quat.to_scaled_angle_axis(q) / 2.0 * 2.0  # scaled angle axis is angle * axis
    R = quat.to_matrix(q)
    six = np.concatenate([R[..., :, 0], R[..., :, 1]], axis=-1)
    v = tl.violation(torch.tensor(q)).numpy()
    assert np.abs(tl.violation(torch.tensor(aa), rotation_format="axis-angle").numpy() - v).max() < 1e-9
    assert np.abs(tl.violation(torch.tensor(six), rotation_format="6d").numpy() - v).max() < 1e-9
    x = torch.zeros(2, 3, 3, dtype=torch.float64, requires_grad=True)  # the identity in axis-angle
    tl.loss(x, rotation_format="axis-angle").backward()
    assert torch.isfinite(x.grad).all()


def test_loss_reductions_and_descent():
    lim, rot = limits_of("kdop", True, False)
    tl = lim.to_torch()
    q = torch.tensor(points(lim, rot)["outside"], requires_grad=True)
    per = tl.loss(q, reduction="none")
    assert per.shape == (3, 3)
    assert torch.allclose(tl.loss(q, reduction="sum"), per.sum())
    assert torch.allclose(tl.loss(q), per.mean())
    tl.loss(q, reduction="sum").backward()
    with torch.no_grad():  # a small step down the gradient lowers the loss
        lower = tl.loss(q - 1e-3 * q.grad, reduction="sum")
    assert float(lower) < float(tl.loss(q, reduction="sum"))


def test_bad_input_is_one_clear_error():
    lim, _ = limits_of("box", False, False)
    tl = lim.to_torch()
    with pytest.raises(LimitsError, match=r"quat rotations must be \[\.\.\., 3, 4\]"):
        tl.violation(torch.zeros(5, 4, dtype=torch.float64))
    with pytest.raises(LimitsError, match="unknown rotation format"):
        tl.violation(torch.zeros(5, 3, 4), rotation_format="euler")
    with pytest.raises(LimitsError, match="unknown reduction"):
        tl.loss(torch.zeros(5, 3, 4), reduction="max")

"""The compiled one-pass parse of frame rows equals the checked path bit for bit, and hands every
row it cannot read plainly to the checked path (which reports it)."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits.io import bvh
from jointlimits.io.bvh._parse import _parse_block, _parse_plain, _row_ranges

from conftest import MOCAP, needs_shared


def _checked(block: bytes, n_ch: int):
    lines = block.decode("latin-1").split("\n")
    return _parse_block(lines, 1, n_ch, None), _row_ranges(block)


@pytest.mark.parametrize(
    "block",
    [
        b"1 2 3\n4 5 6\n",
        b"  +1.5\t-.5 1.\r\n\n \t\r\n0.25e3 -1E-3 +7e+2\r\n",
        b"-0 0.0 -0.000\n1e-300 4.9e-324 1.7976931348623157e308",  # no final line ending
        b"0.1 0.2 0.30000000000000004\n000012.5000 -0 123456789012345678901234567890\n",
        b"\n\n\n",
        b"",
    ],
)
def test_plain_rows_equal_the_checked_path(block):
    fast = _parse_plain(block, 3)
    assert fast is not None
    vals, ranges = _checked(block, 3)
    assert fast[0].tobytes() == vals.reshape(-1, 3).tobytes()
    assert np.array_equal(fast[1], ranges)


@pytest.mark.parametrize(
    "block",
    [
        b"1 2\n",  # too few values
        b"1 2 3 4\n",  # too many
        b"1 2 +-3\n",
        b"1 2 ++3\n",
        b"1 2 3e\n",
        b"1 2 .\n",
        b"1 2 1.5.5\n",
        b"1 2 1e999\n",  # not finite
        b"1 2 nan\n",
        b"1 2 3,5\n",
        b"1 2 3\x0b\n",
        b"1 2 1_0\n",
        b"1 2 3\x00\n",
    ],
)
def test_anything_else_goes_to_the_checked_path(block):
    assert _parse_plain(block, 3) is None


@needs_shared
def test_rows_of_every_convention_parse_as_before():
    for d in sorted(p for p in MOCAP.iterdir() if p.is_dir()):
        raw = sorted(d.glob("*.bvh"))[0].read_bytes()
        i = raw.index(b"\n", raw.index(b"Frame Time")) + 1
        block = raw[i : raw.index(b"\n", i + 60_000) + 1]  # a few hundred rows
        n_ch = len(block.split(b"\n", 1)[0].split())
        fast = _parse_plain(block, n_ch)
        assert fast is not None, d.name
        vals, ranges = _checked(block, n_ch)
        assert fast[0].tobytes() == vals.tobytes(), d.name
        assert np.array_equal(fast[1], ranges), d.name


@needs_shared
def test_round_trip_of_every_convention_is_byte_identical(tmp_path):
    for d in sorted(p for p in MOCAP.iterdir() if p.is_dir()):
        raw = sorted(d.glob("*.bvh"))[0].read_bytes()
        m = bvh.loads(raw.decode("latin-1"))
        assert bvh.dumps(m).encode("latin-1") == raw, d.name


def test_random_decimals_are_correctly_rounded():
    rng = np.random.default_rng(5)
    toks = []
    for _ in range(3000):
        whole = str(rng.integers(0, 10 ** int(rng.integers(1, 12))))
        frac = "".join(rng.choice(list("0123456789"), int(rng.integers(0, 24))))
        sign = rng.choice(["", "-", "+"])
        form = rng.integers(0, 4)
        tok = sign + (
            whole + "." + frac
            if form == 0
            else whole
            if form == 1
            else "." + (frac or "5")
            if form == 2
            else whole + "."
        )
        if rng.random() < 0.1:
            tok += f"e{int(rng.integers(-30, 30))}"
        toks.append(tok)
    block = ("\n".join(" ".join(toks[i : i + 3]) for i in range(0, len(toks), 3)) + "\n").encode()
    fast = _parse_plain(block, 3)
    assert fast is not None
    assert fast[0].reshape(-1).tobytes() == np.array([float(t) for t in toks]).tobytes()

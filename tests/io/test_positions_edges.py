"""Positions files at the edges of issue #38 (found by scripts/fuzz_positions.py): a CSV whose
values pass the memory budget, fps whose frame time is out of a clip's range, line ends."""

from __future__ import annotations

import numpy as np
import pytest

from jointlimits._budget import set_memory_budget
from jointlimits.io.positions import PositionsError, load_positions, save_positions


@pytest.fixture
def one_mb_budget():
    set_memory_budget(1 << 20)  # 131,072 float64 values
    try:
        yield
    finally:
        set_memory_budget(None)


def test_csv_over_the_memory_budget_is_a_positions_error(tmp_path, one_mb_budget):
    # 50,000 rows of 3 empty cells: 150 KB of text, 150,000 values (1.14 MB as float64); a
    # 60 MB file of such rows raised MemoryError under a 1 GB address-space limit
    path = tmp_path / "p.csv"
    path.write_text("a.x,a.y,a.z\n" + ",,\n" * 50_000)
    with pytest.raises(PositionsError, match="memory budget") as e:
        load_positions(path)
    assert "\n" not in str(e.value) and str(path) in str(e.value)


def test_csv_under_the_memory_budget_still_loads(tmp_path, one_mb_budget):
    path = tmp_path / "p.csv"
    path.write_text("a.x,a.y,a.z\n" + "1,,2.5\n" * 40_000)
    p = load_positions(path).positions
    assert p.shape == (40_000, 1, 3) and np.isnan(p[:, 0, 1]).all() and (p[:, 0, 2] == 2.5).all()


@pytest.mark.parametrize("fps", ["1e-308", "1e9", "1e-9", "0.0001"])
def test_fps_out_of_a_clips_frame_time_range_is_refused(tmp_path, fps):
    path = tmp_path / "p.csv"
    path.write_text(f"# fps: {fps}\na.x,a.y,a.z\n1,2,3\n")
    with pytest.raises(PositionsError, match="outside"):
        load_positions(path)
    np.savez(tmp_path / "p.npz", positions=np.zeros((1, 1, 3)), names=np.array(["a"]), fps=np.float64(fps))
    with pytest.raises(PositionsError, match="outside"):
        load_positions(tmp_path / "p.npz")


@pytest.mark.parametrize("fps", [1e6, 1 / 3600, 29.97])
def test_fps_at_the_ends_of_the_range_round_trips(tmp_path, fps):
    save_positions(tmp_path / "p.csv", np.zeros((2, 1, 3)), ["a"], fps)
    assert load_positions(tmp_path / "p.csv").fps == fps


def test_csv_rows_end_where_str_splitlines_ends_them(tmp_path):
    # the rows are read a line at a time; the line ends are those of str.splitlines, as before
    path = tmp_path / "p.csv"
    path.write_bytes("\ufeffa.x,a.y,a.z\r\n1,2,3\r4,5,6\x857,8,9\u2028\n".encode())
    jp = load_positions(path)
    assert jp.names == ["a"]
    assert jp.positions.reshape(-1, 3)[:3].tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    # "\u2028\n" inside the file ends a line and then an empty one: a row of no values
    path.write_bytes("a.x,a.y,a.z\n1,2,3\u2028\n4,5,6\n".encode())
    with pytest.raises(PositionsError, match="line 3: 0 values"):
        load_positions(path)


def test_a_header_cell_holding_a_line_end_is_named_in_one_line(tmp_path):
    # found by scripts/fuzz_positions.py: a quoted header cell with a newline made a two-line error
    path = tmp_path / "p.csv"
    path.write_text('a.x,a.y,"a\nz"\n1,2,3\n')
    with pytest.raises(PositionsError, match=r"columns a\.x, a\.y, 'a\\nz' are not") as e:
        load_positions(path)
    assert "\n" not in str(e.value)

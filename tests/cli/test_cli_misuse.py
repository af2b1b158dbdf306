"""The misuse matrix (#25): every command's numeric flags refuse values out of range, NaN, infinity
and text with one line on stderr and exit status 2, before any file is touched; every numeric flag
has a checked range (a new one without fails here)."""

from __future__ import annotations

import os

import click
import pytest
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.cli._common import WORKERS_PER_CORE, StrictFloat, StrictInt, max_workers

FLOAT_BAD = ["nan", "inf", "-inf", "NaN", "1e308", "-1e308", "-1", "x", "", "1_0", "0x10", "1e1_0", "1 0"]
INT_BAD = ["-1", "x", "1.5", "99999999999999999999999", "1_0", "0x10", "1e1", "+1_0", "1 0"]


def _numeric_options() -> list[tuple[str, click.Option]]:
    out = []
    for name, cmd in sorted(main.commands.items()):
        for p in cmd.params:
            if (
                isinstance(p, click.Parameter)
                and not getattr(p, "is_flag", False)
                and isinstance(p.type, (click.types.FloatParamType, click.types.IntParamType))
            ):
                out.append((name, p))
    return out


OPTIONS = _numeric_options()


def test_every_numeric_flag_has_a_checked_range():
    unchecked = [
        f"{name} {p.opts[-1]}"
        for name, p in OPTIONS
        if not isinstance(p.type, (click.FloatRange, click.IntRange)) and p.callback is None
    ]
    assert not unchecked, f"numeric flags without a range: {unchecked}"
    lax = [f"{name} {p.opts[-1]}" for name, p in OPTIONS if not isinstance(p.type, (StrictFloat, StrictInt))]
    assert not lax, f"numeric parameters that read more than plain decimal numbers: {lax}"
    assert len(OPTIONS) >= 20


def _base_args(cmd: click.Command) -> list[str]:
    """Positional arguments and required options, as dummies (nothing is read: the bad flag stops
    the command first)."""
    args: list[str] = []
    for p in cmd.params:
        if isinstance(p, click.Option) and p.required:
            if isinstance(p.type, click.Choice):
                args += [p.opts[-1], str(p.type.choices[0])]
            else:
                args += [p.opts[-1], "misuse-out.json"]
    for p in cmd.params:
        if isinstance(p, click.Argument):
            args.append("misuse-missing-input.bvh")
    return args


def _bad_values(p: click.Option) -> list[str]:
    if isinstance(p.type, click.types.IntParamType):
        vals = list(INT_BAD)
        if isinstance(p.type, click.IntRange) and p.type.min is not None and p.type.min > 0:
            vals.append(str(p.type.min - 1))
        if isinstance(p.type, click.IntRange) and p.type.max is not None:
            vals.append(str(p.type.max + 1))
        return vals
    vals = list(FLOAT_BAD)
    if isinstance(p.type, click.FloatRange) and p.type.min == 0 and p.type.min_open:
        vals.append("0")
    return vals


@pytest.mark.parametrize("name,opt", OPTIONS, ids=[f"{n} {p.opts[-1]}" for n, p in OPTIONS])
def test_bad_numeric_flags_give_one_line_and_exit_2(tmp_path, monkeypatch, name, opt):
    monkeypatch.chdir(tmp_path)
    cmd = main.commands[name]
    runner = CliRunner()
    for value in _bad_values(opt):
        if value == "-1" and isinstance(opt.type, click.FloatRange) and opt.type.min is None:
            continue
        given = [value] * opt.nargs
        res = runner.invoke(main, [name, *_base_args(cmd), opt.opts[-1], *given])
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert res.exit_code == 2, (name, opt.opts[-1], value, res.output)
        assert len(lines) == 1 and lines[0].startswith("error:"), (name, opt.opts[-1], value, res.output)
        assert "Traceback" not in res.output
    assert not list(tmp_path.iterdir()), "a refused command wrote a file"


@pytest.mark.parametrize(
    "argv,match",
    [
        (["filter", "a.bvh", "-o", "b.bvh", "--cuts", ""], "--cuts"),
        (["filter", "a.bvh", "-o", "b.bvh", "--cuts", "5,-3"], "--cuts"),
        (["fit", "a.bvh", "-o", "x.txt"], ".json"),
        (["recover", "p.npz", "--skeleton", "s.bvh", "-o", "o.bvh", "--iterations", "0"], "--iterations"),
        (["rename", "a.bvh", "--to", "lafan1", "-o", "b.bvh", "--tolerance", "nan"], "--tolerance"),
        (["resample", "a.bvh", "--fps", "1e308", "-o", "b.bvh"], "--fps"),
        (["export", "l.json", "--to", "unity", "-o", "e", "--seed", "-1"], "--seed"),
        (["fit", "a.bvh", "-o", "x.json", "--padding", "1e300"], "--padding"),
        (["fit", "a.bvh", "-o", "x.json", "--shape", "implicit", "--padding", "10"], "--padding"),
    ],
)
def test_the_audits_misuses_are_refused(tmp_path, monkeypatch, argv, match):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.bvh").write_text("HIERARCHY\n")
    res = CliRunner().invoke(main, argv)
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and match in lines[0], res.output


@pytest.mark.parametrize("name", ["fit", "scan", "clean"])
def test_workers_are_at_most_a_few_per_core(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    cmd = main.commands[name]
    (opt,) = [p for p in cmd.params if p.name == "workers"]
    assert opt.type.max == max_workers() == WORKERS_PER_CORE * (os.cpu_count() or 1)
    assert f"At most {WORKERS_PER_CORE} per core" in (opt.help or "")
    for value in (str(max_workers() + 1), "99999999999999999999"):
        res = CliRunner().invoke(main, [name, *_base_args(cmd), "--workers", value])
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and "--workers" in lines[0], res.output
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX) to plant a FIFO list")
@pytest.mark.parametrize("argv", [["fit", "@list", "-o", "x.json"], ["scan", "@list", "-o", "x.csv"]])
def test_a_fifo_list_is_refused_at_once(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "list")  # reading it would block forever
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 2 and "not a regular file" in res.output, res.output
    assert "Traceback" not in res.output

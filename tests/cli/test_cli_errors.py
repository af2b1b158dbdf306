"""The CLI misuse matrix: every subcommand x every way its inputs and outputs can be wrong.

Each case must end in exactly one line on stderr (``error: ...``), exit status 2, no traceback,
and no file left at the target or beside it (no temporary files). Read-only and full file
systems are real tmpfs mounts where the test may mount them, else injected errors.
"""

from __future__ import annotations

import errno
import os
import subprocess
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from jointlimits import _atomic
from jointlimits.cli import main
from jointlimits.io import bvh

LONG = "a" * 300


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A clip, a limits file, and mounts for a read-only and a full file system."""
    from jointlimits.limits.model import JointLimits
    from jointlimits.motion import procedural

    d = tmp_path_factory.mktemp("misuse")
    m = procedural.range_of_motion(seconds=2.0, fps=30)
    clip = d / "clip.bvh"
    bvh.save(clip, m)
    lim = d / "limits.json"
    JointLimits.fit([m], shape="box").save(lim)
    mounts = {}
    can_mount = os.geteuid() == 0 and not os.environ.get("JL_TEST_NO_MOUNT")  # set it to test the injected errors
    for name, opts in (("ro", "ro,size=64k"), ("full", "size=4k")):
        mp = d / name
        mp.mkdir()
        ok = (
            subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(mp)], capture_output=True).returncode == 0
            if can_mount
            else False
        )
        if ok:
            mounts[name] = mp
            if name == "full":  # fill it: every later write gets ENOSPC
                with open(mp / "filler", "wb") as fh:
                    try:
                        fh.write(b"x" * 65536)
                    except OSError:
                        pass
    yield {"dir": d, "clip": clip, "limits": lim, "mounts": mounts, "joint": m.skeleton.names[3]}
    for mp in mounts.values():
        subprocess.run(["umount", "-l", str(mp)], capture_output=True)


# command -> (argv builder given (inputs, output), does it write an output)
def _argv(cmd: str, w: dict, clip: str, out: str | None) -> list[str]:
    lim, j = str(w["limits"]), w["joint"]
    if cmd in NEW:
        return [cmd]
    return {
        "info": ["info", clip],
        "report": ["report", lim, clip],
        "fit": ["fit", clip, "-o", out, "--shape", "box", "-q"],
        "apply": ["apply", lim, clip, "-o", out],
        "plot": ["plot", lim, clip, "--joint", j, "-o", out],
        "view": ["view", lim, clip, "-o", out],
        "filter": ["filter", clip, "-o", out, "-q"],
        "splice": ["splice", clip, clip, "-o", out, "-q"],
        "footlock": ["footlock", clip, "-o", out],
        "demo": ["demo", "--input", clip, "--out", out, "-q"],
    }[cmd]


OUT_NAME = {
    "fit": "o.json",
    "apply": "o.bvh",
    "plot": "o.png",
    "view": "o.html",
    "filter": "o.bvh",
    "splice": "o.bvh",
    "footlock": "o.bvh",
    "demo": "demo_out",
}
COMMANDS = ["info", "report", "fit", "apply", "plot", "view", "filter", "splice", "footlock", "demo"]
WRITERS = [c for c in COMMANDS if c in OUT_NAME]
INPUT_CASES = ["missing input", "input is a folder", "usage error"]
OUTPUT_CASES = [
    "output is a folder",
    "read-only target",
    "full disk",
    "name too long",
    "parent is a file",
    "output equals an input",
]
#: subcommands added since (other modules in COMMANDS): at least their usage errors are checked
NEW = sorted(set(main.commands) - set(COMMANDS))
MATRIX = (
    [(c, k) for c in COMMANDS for k in INPUT_CASES]
    + [(c, k) for c in WRITERS for k in OUTPUT_CASES]
    + [(c, "usage error") for c in NEW]
)


def test_matrix_covers_every_subcommand():
    assert set(COMMANDS) <= set(main.commands)
    assert len(MATRIX) == 10 * 3 + 8 * 6 + len(NEW)


def _listing(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")} if d.is_dir() else set()


class _FullFile:
    """A file object whose writes fail as on a full disk."""

    def __init__(self, fh):
        self._fh = fh

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


@pytest.mark.parametrize("cmd,case", MATRIX, ids=[f"{c}-{k.replace(' ', '_')}" for c, k in MATRIX])
def test_misuse_is_one_line_exit_2_and_leaves_nothing(work, cmd, case, tmp_path, monkeypatch):
    w = work
    clip = str(w["clip"])
    out_dir = tmp_path
    out = str(out_dir / OUT_NAME.get(cmd, "o"))
    watch = [out_dir, w["dir"]]
    if case == "missing input":
        clip = str(tmp_path / "nope.bvh")
    elif case == "input is a folder":
        (tmp_path / "folder.bvh").mkdir()
        clip = str(tmp_path / "folder.bvh")
    elif case == "output is a folder":
        (tmp_path / OUT_NAME[cmd]).mkdir() if cmd != "demo" else None
        out = str(tmp_path / OUT_NAME[cmd]) if cmd != "demo" else clip  # demo: --out an existing file
    elif case == "read-only target":
        if "ro" in w["mounts"]:
            out_dir = w["mounts"]["ro"]
        else:
            real = _atomic.check_writable

            def ro(path):
                if Path(path).parent == tmp_path / "ro" or Path(path) == tmp_path / "ro" / OUT_NAME[cmd]:
                    raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
                return real(path)

            (tmp_path / "ro").mkdir()
            out_dir = tmp_path / "ro"
            monkeypatch.setattr(_atomic, "check_writable", ro)
            monkeypatch.setattr("jointlimits.cli._common.check_writable", ro)
        out = str(out_dir / OUT_NAME[cmd])
        watch.append(out_dir)
    elif case == "full disk":
        if "full" in w["mounts"]:
            out_dir = w["mounts"]["full"]
        else:
            real_fdopen = os.fdopen
            monkeypatch.setattr(_atomic.os, "fdopen", lambda *a, **k: _FullFile(real_fdopen(*a, **k)))
        out = str(out_dir / (f"{uuid.uuid4().hex[:6]}_" + OUT_NAME[cmd]))
        watch.append(out_dir)
    elif case == "name too long":
        out = str(tmp_path / (LONG + Path(OUT_NAME[cmd]).suffix))
    elif case == "parent is a file":
        out = str(w["clip"] / OUT_NAME[cmd])
    elif case == "output equals an input":
        out = clip if cmd != "fit" or True else clip
        if cmd in ("fit", "view"):
            out = str(w["limits"]) if cmd == "view" else clip
    before = {str(d): _listing(d) for d in watch}
    clip_bytes = w["clip"].read_bytes()
    lim_bytes = w["limits"].read_bytes()
    argv = _argv(cmd, w, clip, out)
    if case == "usage error":
        argv = argv + ["--no-such-option"]
    res = CliRunner().invoke(main, argv, catch_exceptions=True)
    err = res.stderr
    assert res.exit_code == 2, (res.exit_code, err, res.exception)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and ".jl-" not in err and ".tmp" not in err, err
    for d in watch:
        after = _listing(d)
        new = after - before[str(d)]
        if cmd == "demo" and case == "full disk":
            new = {n for n in new if not (d / n).is_dir()}  # the empty --out folder may stay
        assert not new, f"left behind in {d}: {new}"
    assert w["clip"].read_bytes() == clip_bytes and w["limits"].read_bytes() == lim_bytes


def test_bare_usage_errors_are_one_line():
    r = CliRunner().invoke(main, ["fit"])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1
    r = CliRunner().invoke(main, ["no-such-command"])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and r.stderr.startswith("error: ")


def test_plot_of_filter_is_checked_before_anything_is_written(work, tmp_path):
    out = tmp_path / "f.bvh"
    for plot, msg in ((tmp_path / "p.bvh", "PNG"), (work["clip"], "PNG"), (out, "two different outputs")):
        r = CliRunner().invoke(
            main, ["filter", str(work["clip"]), "--detect", "-o", str(out), "--plot", str(plot), "-q"]
        )
        assert r.exit_code == 2 and msg in r.stderr, r.stderr
    r = CliRunner().invoke(
        main,
        [
            "filter",
            str(work["clip"]),
            "--detect",
            "-o",
            str(out),
            "--plot",
            str(tmp_path / "p.png"),
            "--joint",
            "NoSuchJoint",
            "-q",
        ],
    )
    assert r.exit_code == 2 and "NoSuchJoint" in r.stderr
    assert list(tmp_path.iterdir()) == []
    r = CliRunner().invoke(
        main, ["filter", str(work["clip"]), "--detect", "-o", str(out), "--plot", str(tmp_path / "p.png"), "-q"]
    )
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bvh", "p.png"]


def test_zero_frame_clips_are_one_line_errors_or_work(work, tmp_path):
    m = bvh.load(work["clip"])
    z = tmp_path / "zero.bvh"
    bvh.save(z, m[:0])
    for argv in (
        ["apply", str(work["limits"]), str(z), "-o", str(tmp_path / "o.bvh")],
        ["plot", str(work["limits"]), str(z), "--joint", work["joint"], "-o", str(tmp_path / "o.png")],
        ["filter", str(z), "--detect", "-o", str(tmp_path / "o.bvh")],
        ["fit", str(z), "-o", str(tmp_path / "o.json")],
    ):
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "frames" in r.stderr, (argv, r.stderr)
    for argv in (
        ["info", str(z)],
        ["report", str(work["limits"]), str(z)],
        ["footlock", str(z), "-o", str(tmp_path / "f.bvh")],
    ):
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 0 and r.stderr == "", (argv, r.stderr)


def test_demo_joint_file_names_stay_inside_out(tmp_path):
    from jointlimits._names import html_text, plot_label, safe_filename

    for name in ("../../../x", "/etc/passwd", "..", ".hidden", "a/b\\c", "<a href=x>", "$\\invalid$", "", "é" * 200):
        s = safe_filename(name)
        assert s and "/" not in s and "\\" not in s and not s.startswith(".") and len(s) <= 80
        assert (tmp_path / f"joint_{s}.png").resolve().parent == tmp_path.resolve()
    assert safe_filename("LeftArm") == "LeftArm"
    assert safe_filename("a/b") != safe_filename("a_b")
    assert html_text("<a href=x>") == "&lt;a href=x&gt;"
    assert plot_label("$x$") == r"\$x\$"


def test_deeply_nested_limits_file_is_one_line(work, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    for argv in (
        ["report", str(deep), str(work["clip"])],
        ["apply", str(deep), str(work["clip"]), "-o", str(tmp_path / "o.bvh")],
    ):
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and r.stderr.startswith("error: "), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.json"]


def test_json_outputs_are_strict(work, tmp_path, monkeypatch):
    import json

    from jointlimits.limits.model import JointLimits

    def strict(text):
        return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))

    m = bvh.load(work["clip"])
    z = tmp_path / "zero.bvh"
    bvh.save(z, m[:0])
    r = CliRunner().invoke(main, ["info", str(z), "--json"])
    assert r.exit_code == 0 and strict(r.stdout)["frames"] == 0
    r = CliRunner().invoke(main, ["report", str(work["limits"]), str(work["clip"]), "--json"])
    assert r.exit_code == 0 and strict(r.stdout)["joints"]
    real = JointLimits.report

    def nan_report(self, *a, **k):
        rows = real(self, *a, **k)
        rows[0]["max_violation_deg"] = float("nan")
        return rows

    monkeypatch.setattr(JointLimits, "report", nan_report)
    r = CliRunner().invoke(main, ["report", str(work["limits"]), str(work["clip"]), "--json"])
    assert r.exit_code == 2 and r.stdout == "" and "NaN" in r.stderr and len(r.stderr.splitlines()) == 1

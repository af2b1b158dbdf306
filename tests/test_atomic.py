"""The one output helper: atomic, short temporary names, nothing left on errors or signals, the
umask read and never changed, errors that name the target."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from jointlimits import _atomic
from jointlimits._atomic import atomic_write, current_umask

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(params=["O_TMPFILE", "named"])
def mode(request, monkeypatch):
    """Run each test with the anonymous-file path and with the named-temporary-file fallback."""
    if request.param == "named":
        monkeypatch.setattr(_atomic, "_open_anonymous", lambda folder: None)
    return request.param


def test_replaces_the_target_and_leaves_nothing_else(tmp_path, mode):
    p = tmp_path / "out.txt"
    p.write_text("old")
    with atomic_write(p) as fh:
        fh.write("new")
        assert p.read_text() == "old"  # not visible before the end
    assert p.read_text() == "new"
    assert [q.name for q in tmp_path.iterdir()] == ["out.txt"]


def test_error_keeps_the_target_and_removes_the_temporary(tmp_path, mode):
    p = tmp_path / "out.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(p) as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert p.read_text() == "old"
    assert [q.name for q in tmp_path.iterdir()] == ["out.txt"]


def test_a_valid_name_of_255_bytes_can_be_written(tmp_path, mode):
    p = tmp_path / ("n" * 251 + ".bvh")
    with atomic_write(p) as fh:
        fh.write("x")
    assert p.read_text() == "x"


@pytest.mark.parametrize(
    "case,code",
    [
        ("long", errno.ENAMETOOLONG),
        ("dir", errno.EISDIR),
        ("parent_file", errno.ENOTDIR),
        ("missing_parent", errno.ENOENT),
    ],
)
def test_errors_name_the_target_not_a_temporary_file(tmp_path, case, code, mode):
    (tmp_path / "file").write_text("x")
    (tmp_path / "adir").mkdir()
    p = {
        "long": tmp_path / ("n" * 300),
        "dir": tmp_path / "adir",
        "parent_file": tmp_path / "file" / "x",
        "missing_parent": tmp_path / "nope" / "x",
    }[case]
    with pytest.raises(OSError) as ei:
        with atomic_write(p) as fh:
            fh.write("x")
    assert ei.value.errno == code and ei.value.filename == str(p)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["adir", "file"]


def test_disk_full_names_the_target(tmp_path, monkeypatch, mode):
    p = tmp_path / "out.bin"
    with pytest.raises(OSError) as ei:
        with atomic_write(p, binary=True) as fh:
            fh.write(b"x")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert ei.value.errno == errno.ENOSPC and ei.value.filename == str(p)
    assert list(tmp_path.iterdir()) == []


def test_umask_is_read_and_never_changed(tmp_path, monkeypatch, mode):
    old = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        calls = []
        monkeypatch.setattr(os, "umask", lambda m: calls.append(m) or 0)
        p = tmp_path / "new.txt"
        with atomic_write(p) as fh:
            fh.write("x")
        assert calls == []
        assert p.stat().st_mode & 0o777 == 0o640  # what open() gives under umask 027
        p.chmod(0o604)
        with atomic_write(p) as fh:
            fh.write("y")
        assert p.stat().st_mode & 0o777 == 0o604  # a replaced file keeps its mode
    finally:
        monkeypatch.undo()
        os.umask(old)


CHILD = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from jointlimits import _atomic
    if sys.argv[3] == "named":
        _atomic._open_anonymous = lambda folder: None
    with _atomic.atomic_write(os.path.join(sys.argv[2], "big.bin"), binary=True) as fh:
        fh.write(b"x" * 100000)
        fh.flush()
        print("writing", flush=True)
        time.sleep(60)
""")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("how", ["O_TMPFILE", "named"])
def test_signal_mid_write_leaves_no_file(tmp_path, sig, how):
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(SRC), str(tmp_path), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
        if how == "named":
            assert any(p.name.startswith(".jl-") for p in tmp_path.iterdir())  # the temp file exists now
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    # ends as it would without the handler: death by the signal (Python re-raises an unhandled
    # KeyboardInterrupt as SIGINT)
    assert proc.returncode == -sig
    assert list(tmp_path.iterdir()) == []


def test_sigkill_leaves_nothing_with_anonymous_files(tmp_path):
    if _atomic._open_anonymous(str(tmp_path)) is None:
        pytest.skip("this file system has no O_TMPFILE")
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(SRC), str(tmp_path), "O_TMPFILE"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "writing"
    proc.kill()
    proc.wait(timeout=30)
    time.sleep(0.05)
    assert list(tmp_path.iterdir()) == []

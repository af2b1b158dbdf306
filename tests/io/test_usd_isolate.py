"""#39: usd-core's crate parser runs first in a child process (``jointlimits.io.usd_isolate``), so a
corrupted ``.usdc`` that makes usd-core allocate gigabytes or crash is a one-line FormatError, and
a text layer naming files outside its folder is refused before usd-core reads them."""

from __future__ import annotations

import os
import resource
import stat
import sys

import numpy as np
import pytest

from jointlimits.errors import FormatError

pxr = pytest.importorskip("pxr", reason="usd-core is not installed (pip install -e '.[usd]')")
from jointlimits.io import usd, usd_isolate  # noqa: E402
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion  # noqa: E402


@pytest.fixture(scope="module")
def clip():
    return range_of_motion(humanoid_skeleton(), seconds=0.7, fps=30)


def _fake_python(tmp_path, body: str) -> str:
    """An executable standing in for the child's Python (the check's mapping of its ends)."""
    exe = tmp_path / "fake-python"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and shell scripts")
def test_a_child_that_crashes_or_hangs_is_a_format_error(tmp_path):
    f = tmp_path / "a.usdc"
    f.write_bytes(b"PXR-USDC" + bytes(100))
    with pytest.raises(FormatError, match="crashed on it: SIGSEGV") as e:
        usd_isolate.check(f, python=_fake_python(tmp_path, "kill -SEGV $$"))
    assert "\n" not in str(e.value) and str(f) in str(e.value)
    with pytest.raises(FormatError, match=r"did not finish reading it in 0\.5 s"):
        usd_isolate.check(f, timeout=0.5, python=_fake_python(tmp_path, "sleep 30"))
    with pytest.raises(FormatError, match="boom"):
        usd_isolate.check(f, python=_fake_python(tmp_path, "echo 'RuntimeError: boom'; exit 3"))


def test_which_files_are_checked_in_a_child(tmp_path, clip):
    a, c = tmp_path / "a.usda", tmp_path / "c.usdc"
    usd.save(a, clip)
    usd.save(c, clip)
    assert not usd_isolate.needs_check(a)  # a plain text layer: parsed in-process, no child
    assert usd_isolate.needs_check(c)
    # a text layer that sublayers the crate file beside it
    text = a.read_text()
    s = tmp_path / "s.usda"
    s.write_text(text.replace("(\n", "(\n    subLayers = [@c.usdc@]\n", 1))
    assert usd_isolate.needs_check(s)
    m = usd.load(s)
    assert np.all(np.isfinite(m.rotations))


@pytest.mark.parametrize("ref", ["/etc/hostname", "../outside.usda"])
def test_a_layer_outside_the_folder_is_refused_before_it_is_read(tmp_path, clip, ref):
    (tmp_path / "in").mkdir()
    a = tmp_path / "in" / "a.usda"
    usd.save(a, clip)
    (tmp_path / "outside.usda").write_text(a.read_text())
    a.write_text(a.read_text().replace("(\n", f"(\n    subLayers = [@{ref}@]\n", 1))
    with pytest.raises(FormatError, match="outside its own folder"):
        usd_isolate.needs_check(a)
    with pytest.raises(FormatError, match="outside its own folder"):
        usd.load(a)


def test_the_fuzzers_runaway_crate_file_ends_in_the_child(tmp_path, clip):
    """The recipe of the fuzz campaign's two 10 s hangs, on the procedural clip: byte 216 of its
    .usdc from 0x00 to 0x1b makes usd-core 26.11 fill 3.5 GB for 12 s before it gives up
    in-process. In the child (address space capped) it fails at once; this process never grows."""
    c = tmp_path / "c.usdc"
    usd.save(c, clip)
    data = bytearray(c.read_bytes())
    if data[216] != 0:
        pytest.skip("this usd-core lays the crate file out differently (byte 216 is not 0)")
    data[216] = 0x1B
    c.write_bytes(bytes(data))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(FormatError, match="not a readable USD file") as e:
        usd.load(c)
    assert "\n" not in str(e.value)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 500, f"the reader grew this process by {grown_mb:.0f} MB"


def test_isolate_false_opens_in_process(tmp_path, clip, monkeypatch):
    c = tmp_path / "c.usdc"
    usd.save(c, clip)
    called = []
    monkeypatch.setattr(usd_isolate, "check", lambda p, *a, **k: called.append(p))
    usd.load(c, isolate=False)
    assert called == []
    usd.load(c)
    assert called == [c]
    a = tmp_path / "a.usda"
    usd.save(a, clip)
    usd.load(a, isolate=True)
    assert called == [c, a]
    assert os.path.exists(a)

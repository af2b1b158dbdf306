"""usd-core's crate parser run first in a short-lived child process (#39).

usd-core parses binary ``.usdc`` ("crate") files in C++. A few corrupted crate files make it
misbehave in ways no Python code can catch in-process: a flipped byte in an array's element
count makes it allocate and fill gigabytes before it gives up (3.6 GB and 9 s for one 17 KB
fuzzed file), and another crashes it with SIGSEGV, which would end the caller's process.

:func:`check` therefore opens such a file in a child Python that imports only usd-core, caps
its own address space at what it uses after the import plus ``max(512 MB, 4 x`` the memory
budget ``)`` (:mod:`jointlimits._budget`), runs with one usd-core worker thread, composes the
stage and reads every attribute of every prim at every time sample (crate values are decoded
lazily, so opening alone proves little), and stops after ``timeout`` seconds. A child that
crashes, runs out of its memory cap, fails to read a value or does not finish is a one-line
:class:`~jointlimits.errors.FormatError`; a child that reads everything lets the caller parse the
file in-process. It costs one Python start and usd-core import (about 1 s on a loaded 2-core
machine, see docs/measurements.md) per file, so :func:`jointlimits.io.usd.load` does it only for
files that need it (:func:`needs_check`): crate files, and text layers that name a crate file
beside them (as a sublayer, reference or payload).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from .._budget import memory_budget
from ..errors import FormatError

__all__ = ["check", "needs_check", "CRATE_MAGIC", "TIMEOUT_S"]

#: first bytes of a binary USD (crate) file
CRATE_MAGIC = b"PXR-USDC"
#: seconds the child may take to open and read the file
TIMEOUT_S = 30.0
_EXIT_UNREADABLE = 3

# Runs in the child: usd-core and the standard library only. argv: path, extra address space.
_CHILD = r"""
import resource, sys
path, extra = sys.argv[1], int(sys.argv[2])
from pxr import Usd
try:
    with open("/proc/self/status") as fh:
        size = [ln for ln in fh if ln.startswith("VmSize:")][0].split()[1]
    cap = int(size) * 1024 + extra
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard < 0 else min(cap, hard), hard))
except (OSError, IndexError, ValueError):
    pass  # no /proc (not Linux): the timeout still holds
try:
    stage = Usd.Stage.Open(path)
    if stage is None:
        raise RuntimeError("usd-core returned no stage")
    for prim in stage.TraverseAll():
        prim.GetAllMetadata()
        for attr in prim.GetAttributes():
            attr.Get()
            for t in attr.GetTimeSamples():
                attr.Get(t)
except BaseException as e:
    try:
        lines = str(e).strip().splitlines()
    except Exception:
        lines = []
    print(type(e).__name__ + ": " + (lines[-1].strip() if lines else "")[:200])
    sys.stdout.flush()
    sys.exit(3)
"""


def needs_check(path: str | os.PathLike) -> bool:
    """Whether ``path`` must be checked in a child first: a crate file, or a text layer that names
    (sublayers, references, payloads, recursively) a crate file. A text layer naming a file
    outside its own folder is refused here, before usd-core reads that file (#41). A text layer
    is opened alone for this (usd-core's text parser; nothing it names is read)."""
    p = Path(path)
    folder = p.resolve().parent
    todo, seen = [p.resolve()], set()
    while todo:
        layer_path = todo.pop()
        if layer_path in seen:
            continue
        seen.add(layer_path)
        if _is_crate(layer_path):
            return True
        if not _names_files(layer_path):
            continue
        from pxr import Sdf

        try:
            layer = Sdf.Layer.FindOrOpen(str(layer_path))
        except Exception:  # a malformed layer: in-process opening gives the reader's own message
            continue
        if layer is None:
            continue
        for dep in layer.GetCompositionAssetDependencies():
            real = Path(layer.ComputeAbsolutePath(dep)).resolve()
            try:
                real.relative_to(folder)
            except ValueError:
                raise FormatError(
                    f"{p}: names the layer {dep!r} outside its own folder; only files beside the input are read"
                ) from None
            if real.is_file():
                todo.append(real)
    return False


def _is_crate(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(CRATE_MAGIC)) == CRATE_MAGIC
    except OSError:
        return False


def _names_files(path: Path) -> bool:
    """Whether a text layer holds ``@`` (asset paths' delimiter) anywhere."""
    try:
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                if b"@" in block:
                    return True
    except OSError:
        pass
    return False


def check(path: str | os.PathLike, timeout: float = TIMEOUT_S, python: str | None = None) -> None:
    """Open and read ``path`` with usd-core in a child process (see the module docstring); raise
    :class:`FormatError` in one line if the child crashes, exceeds its memory cap, fails to read
    a value or runs past ``timeout`` seconds. ``python``: the child's interpreter (default
    ``sys.executable``; it must import ``pxr``)."""
    p = Path(path)
    extra = max(512 << 20, 4 * memory_budget())
    env = dict(os.environ, PXR_WORK_THREAD_LIMIT="1", MALLOC_ARENA_MAX="2", PYTHONWARNINGS="ignore")
    try:
        res = subprocess.run(
            [python or sys.executable, "-c", _CHILD, str(p), str(extra)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise FormatError(
            f"{p}: not a readable USD file (usd-core did not finish reading it in {timeout:g} s)"
        ) from None
    except OSError as e:
        raise FormatError(f"{p}: cannot start a Python to check the USD file ({e.strerror or e})") from None
    if res.returncode == 0:
        return
    if res.returncode < 0:
        try:
            name = signal.Signals(-res.returncode).name
        except ValueError:
            name = f"signal {-res.returncode}"
        raise FormatError(f"{p}: not a readable USD file (usd-core's reader crashed on it: {name})")
    lines = [ln for ln in (res.stdout if res.returncode == _EXIT_UNREADABLE else res.stderr).splitlines() if ln.strip()]
    why = lines[-1].strip()[:200] if lines else f"exit status {res.returncode}"
    if res.returncode == _EXIT_UNREADABLE:
        raise FormatError(f"{p}: not a readable USD file ({why})")
    raise FormatError(f"{p}: cannot check the USD file in a child Python ({why})")

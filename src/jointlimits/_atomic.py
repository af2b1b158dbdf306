"""Atomic file output: write to a temporary file beside the target, then rename over it."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator


def _default_mode(target: Path) -> int:
    """The mode a plain ``open`` would give: the target's if it exists, else 0o666 minus the umask
    (mkstemp's files are 0o600, which would hide results from other users and web servers)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@contextmanager
def atomic_write(path: str | os.PathLike, binary: bool = False) -> Iterator[IO]:
    """Open a temporary file in ``path``'s folder; on success it replaces ``path``, on any error
    it is removed and ``path`` is left as it was (never a half-written file)."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"newline": "\n"})) as fh:
            yield fh
        os.chmod(tmp, _default_mode(p))
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

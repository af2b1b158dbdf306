"""Corpus sources: files, folders (recursive), glob patterns and ``@LIST.txt`` files expanded to
clips in a fixed order, each with the path it keeps under an output folder; loading a clip with
a one-line reason when it fails."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .._atomic import read_input_bytes
from ..errors import JointLimitsError
from ..io import FORMATS

__all__ = ["Clip", "expand", "load_clip", "reason"]


@dataclass(frozen=True)
class Clip:
    """One clip of a corpus: its ``path`` and ``rel``, the path it keeps below an output folder."""

    path: str
    rel: str

    @property
    def format(self) -> str:
        """The file format (``bvh``, ``gltf``, ``npz``...): the extension without its dot."""
        return Path(self.path).suffix.lower().lstrip(".")


def _motion_files(folder: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for f in sorted(files):
            if Path(f).suffix.lower() in FORMATS:
                found.append(Path(root) / f)
    return found


def _glob_base(pattern: str) -> Path:
    parts = Path(pattern).parts
    base: list[str] = []
    for p in parts:
        if glob.has_magic(p):
            break
        base.append(p)
    return Path(*base) if base else Path(".")


def expand(sources: Iterable[str | os.PathLike], strict: bool = False) -> tuple[list[Clip], list[tuple[str, str]]]:
    """The clips of ``sources`` in order (each source's files sorted, duplicates dropped) and the
    sources that gave nothing, with why: ``(clips, [(source, reason)])``. A folder gives its motion
    files at any depth (by extension), a pattern with ``*``/``?``/``[`` its matches (``**`` spans
    folders), ``@LIST.txt`` the sources listed in it one per line (relative to the list's folder,
    ``#`` comments; a list names only files inside its own folder: an absolute path, a ``..`` or a
    link that leads outside it is refused). With ``strict`` the first bad source raises
    JointLimitsError."""
    clips: list[Clip] = []
    bad: list[tuple[str, str]] = []
    seen: set[str] = set()

    def fail(src: str, why: str) -> None:
        if strict:
            raise JointLimitsError(f"{src}: {why}")
        bad.append((src, why))

    def add(path: Path, rel: Path, src: str, root: str | None) -> None:
        key = os.path.realpath(path)
        if root is not None and not key.startswith(root + os.sep):
            fail(src, f"{path}: outside the list's folder (a list names only files inside its own folder)")
            return
        if key not in seen:
            seen.add(key)
            clips.append(Clip(str(path), rel.as_posix()))

    def visit(src: str, here: Path, depth: int, root: str | None = None) -> None:
        if src.startswith("@"):
            lst = Path(src[1:]) if Path(src[1:]).is_absolute() else here / src[1:]
            if depth > 8:
                fail(src, "list files nested too deep")
                return
            try:  # a regular file only (a FIFO would wait forever), of at most 64 MB
                lines = read_input_bytes(lst, 64 * 1024 * 1024).decode("utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as e:
                fail(src, f"cannot read the list ({e.strerror if isinstance(e, OSError) else 'not text'})")
                return
            except ValueError as e:  # not a regular file, or too big
                fail(src, f"cannot read the list ({e})")
                return
            for line in lines:
                line = line.split("#", 1)[0].strip()
                if line:
                    visit(line, lst.parent, depth + 1, os.path.realpath(lst.parent))
            return
        p = Path(src) if Path(src).is_absolute() else here / src
        if glob.has_magic(src):
            base = _glob_base(str(p))
            hits = sorted(Path(h) for h in glob.glob(str(p), recursive=True))
            files = [h for h in hits if h.is_file() and h.suffix.lower() in FORMATS]
            for h in hits:
                if h.is_dir():
                    files += _motion_files(h)
            if not files:
                fail(src, "no motion files match")
            for f in files:
                add(f, f.relative_to(base), src, root)
        elif p.is_dir():
            files = _motion_files(p)
            if not files:
                fail(src, "no motion files in this folder")
            for f in files:
                add(f, f.relative_to(p), src, root)
        elif p.is_file():
            if p.suffix.lower() not in FORMATS:
                fail(src, f"unknown motion file type {p.suffix or '(none)'!r}")
            else:
                add(p, Path(p.name), src, root)
        else:
            fail(src, "no such file or folder")

    for s in sources:
        visit(os.fspath(s), Path("."), 0)
    return clips, bad


def reason(e: BaseException) -> str:
    """A one-line reason for a failure."""
    text = str(e).strip().splitlines()
    msg = text[0] if text else ""
    if isinstance(e, OSError) and e.strerror:
        msg = e.strerror
    return f"{type(e).__name__}: {msg}" if not isinstance(e, JointLimitsError) else msg


def load_clip(clip: Clip):  # -> Motion
    """The clip's motion (its format's reader)."""
    from ..io import load

    return load(clip.path)

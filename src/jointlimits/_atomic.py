"""Atomic file output: the one helper every writer uses (BVH, limits JSON, PNG, HTML, reports).

The data goes to an anonymous file in the target's folder (``O_TMPFILE`` where the file system
has it, so nothing is left behind even on SIGKILL) or else to a short hidden temporary name
(``.jl-XXXXXXXX.tmp``, so any valid target name works). On success it replaces the target in one
rename; on any error, and on SIGINT or SIGTERM, the temporary file is removed and the target is
left as it was. Files get the mode a plain ``open`` would give (0o666 minus the umask, applied
by the kernel; the umask is never changed) or the mode of the file they replace. Errors name the
target, never the temporary file.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, cast

__all__ = ["atomic_write", "check_input_file", "check_writable", "current_umask", "read_input_bytes"]

_live: set[str] = set()  # temporary names that exist (or are about to) and must not outlive us
_lock = threading.Lock()
_installed = False
_NAME_MAX = 255


def check_input_file(path: str | os.PathLike, max_bytes: int | None = None) -> int:
    """The size of ``path`` if it is a regular file (following links) of at most ``max_bytes``.

    Readers call it before opening: a FIFO would block forever, ``/dev/zero`` never ends and a
    folder is no file. Raises ``ValueError`` (the reader turns it into its own error class) or
    ``OSError`` (missing, unreadable)."""
    import stat as _stat

    st = os.stat(path)
    if not _stat.S_ISREG(st.st_mode):
        kind = "a folder" if _stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO or socket)"
        raise ValueError(kind)
    if max_bytes is not None and st.st_size > max_bytes:
        raise ValueError(f"{st.st_size} bytes, more than the {max_bytes} this reader accepts")
    return st.st_size


def read_input_bytes(path: str | os.PathLike, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path`` (:func:`check_input_file`), at most ``max_bytes``
    read even if it grows meanwhile (ValueError past that)."""
    check_input_file(path, max_bytes)
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"more than the {max_bytes} bytes this reader accepts")
    return data


def resolve_beside(source: str | os.PathLike, name: str) -> Path:
    """The file a file ``source`` names as ``name`` (a relative path, e.g. a glTF buffer URI, a USD
    sublayer or an ``@LIST`` entry), only if it is inside ``source``'s own folder.

    Refused with ``ValueError`` (the caller turns it into its own error class): an absolute path,
    a ``..`` component, a drive or scheme (``file:``, ``C:``), and a path that resolves (symlinks
    followed) outside the folder. The file itself is checked by :func:`check_input_file`."""
    text = str(name)
    if not text or "\x00" in text:
        raise ValueError("an empty or invalid file name")
    pure = Path(text)
    if pure.is_absolute() or text.startswith(("/", "\\", "~")) or (len(text) > 1 and text[1] == ":"):
        raise ValueError(f"{text!r} is an absolute path; only files beside the input are read")
    if ":" in text.split("/", 1)[0] or any(part == ".." for part in text.replace("\\", "/").split("/")):
        raise ValueError(f"{text!r} leaves the input's folder; only files beside the input are read")
    folder = Path(source).resolve().parent
    target = (Path(source).absolute().parent / pure).resolve()
    try:
        target.relative_to(folder)
    except ValueError:
        raise ValueError(
            f"{text!r} resolves outside the input's folder (a symlink?); only files beside the input are read"
        ) from None
    return target


def current_umask() -> int:
    """The process umask, read without changing it (from /proc where available).

    The fallback creates nothing and changes nothing: it assumes the common 0o022.
    """
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _cleanup() -> None:
    for name in list(_live):
        try:
            os.unlink(name)
        except OSError:
            pass
        _live.discard(name)


def _handler(signum: int, frame) -> None:  # pragma: no cover - exercised in a subprocess test
    _cleanup()
    prev = _previous.get(signum, signal.SIG_DFL)
    if callable(prev):
        prev(signum, frame)  # e.g. Python's SIGINT handler raises KeyboardInterrupt
        return
    # default action: restore it and deliver the signal again so the exit status says so
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


_previous: dict[int, object] = {}


def _install_handlers() -> None:
    """Remove live temporary files on SIGINT/SIGTERM, then behave as before (once, main thread)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    _installed = True
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            prev = signal.getsignal(sig)
            if prev is signal.SIG_IGN or prev is None:
                continue  # ignored signals stay ignored; handlers set outside Python stay
            _previous[sig] = prev
            signal.signal(sig, _handler)
        except (ValueError, OSError):  # not the main interpreter, or an exotic platform
            pass


def _os_error(e: OSError, target: Path) -> OSError:
    """The same error, naming the target instead of the temporary file."""
    return type(e)(e.errno, e.strerror or os.strerror(cast(int, e.errno)), str(target))


def check_writable(path: str | os.PathLike) -> None:
    """Raise the ``OSError`` writing ``path`` would raise, before any work is done (best effort):
    a name too long, a parent that is missing or not a folder, a target that is a folder, a
    folder that is not writable (read-only file system included)."""
    p = Path(path)
    name_len = len(os.fsencode(p.name))
    if name_len > _NAME_MAX:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), str(p))
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(p))
    for a in [parent, *parent.parents]:
        if a.exists():
            if not a.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(p))
            break
    if not parent.exists():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(p))
    # os.access answers EROFS and EACCES for the folder the temporary file goes to
    if not os.access(parent, os.W_OK | os.X_OK):
        ro = False
        try:
            ro = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
        except (OSError, AttributeError):
            pass
        code = errno.EROFS if ro else errno.EACCES
        raise (OSError if ro else PermissionError)(code, os.strerror(code), str(p))


def _open_anonymous(folder: str) -> int | None:
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None  # file system or kernel without O_TMPFILE: use a named temporary file
        raise


@contextmanager
def atomic_write(path: str | os.PathLike, binary: bool = False) -> Iterator[IO]:
    """Open a temporary file in ``path``'s folder; on success it replaces ``path``, on any error
    (or SIGINT/SIGTERM) it is removed and ``path`` is left as it was (never a half-written file)."""
    p = Path(path)
    check_writable(p)
    folder = str(p.parent) if str(p.parent) else "."
    try:
        mode = p.stat().st_mode & 0o7777
    except OSError:
        mode = None  # new file: the kernel applies the umask to 0o666
    _install_handlers()
    tmp: str | None = None
    try:
        fd = _open_anonymous(folder)
        if fd is None:
            for _ in range(100):
                tmp = os.path.join(folder, f".jl-{secrets.token_hex(4)}.tmp")
                with _lock:
                    _live.add(tmp)  # registered before it exists: a signal in between still removes it
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
                    break
                except FileExistsError:
                    _live.discard(tmp)
                    tmp = None
            else:  # pragma: no cover
                raise FileExistsError(errno.EEXIST, "no free temporary name", str(p))
        text: dict[str, Any] = {} if binary else {"newline": "\n", "encoding": "utf-8"}
        with os.fdopen(fd, "wb" if binary else "w", **text) as fh:
            yield fh
            fh.flush()
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)
            if tmp is None:  # anonymous file: give it a short name, then rename over the target
                for _ in range(100):
                    name = os.path.join(folder, f".jl-{secrets.token_hex(4)}.tmp")
                    with _lock:
                        _live.add(name)
                    try:
                        # an explicit src_dir_fd makes CPython call linkat(AT_SYMLINK_FOLLOW)
                        dfd = os.open(folder, os.O_RDONLY)
                        try:
                            os.link(f"/proc/self/fd/{fh.fileno()}", name, src_dir_fd=dfd, follow_symlinks=True)
                        finally:
                            os.close(dfd)
                        tmp = name
                        break
                    except FileExistsError:
                        _live.discard(name)
                else:  # pragma: no cover
                    raise FileExistsError(errno.EEXIST, "no free temporary name", str(p))
        if mode is not None and not hasattr(os, "fchmod"):  # pragma: no cover - Windows before 3.13
            os.chmod(tmp, mode)
        os.replace(tmp, p)
        with _lock:
            _live.discard(tmp)
    except BaseException as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            with _lock:
                _live.discard(tmp)
        if (
            isinstance(e, OSError)
            and e.errno is not None
            and (
                e.filename is None or str(e.filename) == folder or os.path.basename(str(e.filename)).startswith(".jl-")
            )
        ):
            raise _os_error(e, p) from None  # about our temporary file: name the target
        raise

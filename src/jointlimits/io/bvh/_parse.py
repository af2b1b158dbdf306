"""BVH text to values: header tokens and the joint hierarchy, header values, and blocks of
frame rows (checked byte by byte, parsed fast, with the file's line and frame in every error)."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from typing import IO

import numpy as np
from numpy.typing import NDArray

from ..._native import _core
from ...errors import BVHError, SkeletonError
from ...motion.skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Skeleton

CHANNEL_NAMES = POSITION_CHANNELS + ROTATION_CHANNELS
_TOKEN = re.compile(r"[{}]|[^\s{}]+")
#: ASCII number syntax (``float`` alone would take '1_000', Arabic-Indic or fullwidth digits)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_UINT = re.compile(r"[0-9]+", re.ASCII)
#: bytes a frame row may hold: anything else is reported before any number is parsed
_ROW_BYTES = b"0123456789+-.eE \t\r\n"
#: shortest Frame Time accepted (1 MHz): below it the frame rate is meaningless or infinite
MIN_FRAME_TIME = 1e-6
#: file bytes read per block of frame rows (bounds the memory of parsing and the cost of a bad row)
_BLOCK_BYTES = 1 << 17


class _Tokens:
    """Header tokens with their 1-based line numbers."""

    def __init__(self, lines: Sequence[str], path: str | None):
        self.toks: list[tuple[str, int]] = []
        self.path = path
        self.motion_line = None
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped.upper() == "MOTION" or stripped.upper().startswith("MOTION "):
                self.motion_line = i
                break
            for t in _TOKEN.findall(line):
                self.toks.append((t, i + 1))
        self.pos = 0
        # where a hierarchy that ends too early is reported: the MOTION line, or the file's end
        self.last_line = len(lines) if self.motion_line is None else self.motion_line + 1

    def err(self, msg: str, line: int | None = None) -> BVHError:
        if line is None:
            line = self.toks[self.pos][1] if self.pos < len(self.toks) else self.last_line
        return BVHError(msg, line, self.path)

    def peek(self) -> str | None:
        return self.toks[self.pos][0] if self.pos < len(self.toks) else None

    def next(self, what: str) -> tuple[str, int]:
        if self.pos >= len(self.toks):
            raise self.err(f"unexpected end of hierarchy, expected {what}")
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def expect(self, word: str) -> int:
        t, line = self.next(repr(word))
        if t.upper() != word.upper():
            raise BVHError(f"expected {word!r}, found {t!r}", line, self.path)
        return line

    def number(self, what: str) -> float:
        t, line = self.next(what)
        if not _FLOAT.fullmatch(t):
            if t.lower().lstrip("+-") in ("nan", "inf", "infinity"):
                raise BVHError(f"{what} is not finite ({t})", line, self.path)
            raise BVHError(f"expected a number for {what}, found {t!r}", line, self.path)
        v = float(t)
        if not math.isfinite(v):
            raise BVHError(f"{what} is not finite ({t})", line, self.path)
        return v

    def rest_of_line(self, line: int) -> list[str]:
        out = []
        while self.pos < len(self.toks) and self.toks[self.pos][1] == line and self.toks[self.pos][0] not in "{}":
            out.append(self.toks[self.pos][0])
            self.pos += 1
        return out


def _parse_hierarchy(tk: _Tokens):
    """The joint tree, read with an explicit stack (any nesting depth, no recursion)."""
    names: list[str] = []
    seen: set[str] = set()
    parents: list[int] = []
    offsets: list[list[float]] = []
    channels: list[list[str]] = []
    end_sites: list[tuple[int, np.ndarray]] = []

    tk.expect("HIERARCHY")
    t, line = tk.next("ROOT")
    if t.upper() != "ROOT":
        raise BVHError(f"expected 'ROOT', found {t!r}", line, tk.path)

    def open_joint(parent: int, line: int) -> int:
        name_parts = tk.rest_of_line(line)
        if not name_parts:
            raise BVHError("joint without a name", line, tk.path)
        name = " ".join(name_parts)
        if name in seen:
            raise BVHError(f"duplicate joint name {name!r}", line, tk.path)
        tk.expect("{")
        tk.expect("OFFSET")
        off = [tk.number("OFFSET x"), tk.number("OFFSET y"), tk.number("OFFSET z")]
        tk.expect("CHANNELS")
        n_tok, n_line = tk.next("the channel count")
        if not _UINT.fullmatch(n_tok):
            raise BVHError(f"expected a channel count, found {n_tok!r}", n_line, tk.path)
        n = int(n_tok)
        if not 0 <= n <= 6:
            raise BVHError(f"channel count must be 0..6, found {n}", n_line, tk.path)
        chans = []
        for _ in range(n):
            c, cl = tk.next("a channel name")
            canon = next((k for k in CHANNEL_NAMES if k.lower() == c.lower()), None)
            if canon is None:
                raise BVHError(f"unknown channel name {c!r} (expected one of {', '.join(CHANNEL_NAMES)})", cl, tk.path)
            if canon in chans:
                raise BVHError(f"channel {canon} listed twice for joint {name!r}", cl, tk.path)
            chans.append(canon)
        names.append(name)
        seen.add(name)
        parents.append(parent)
        offsets.append(off)
        channels.append(chans)
        return len(names) - 1

    stack = [open_joint(-1, line)]  # joints whose '}' is still to come
    while stack:
        j = stack[-1]
        if tk.peek() is None:
            raise tk.err(f"unbalanced braces: joint {names[j]!r} is not closed before MOTION")
        tok, tl = tk.next("JOINT, End Site or '}'")
        up = tok.upper()
        if up == "}":
            stack.pop()
        elif up == "JOINT":
            stack.append(open_joint(j, tl))
        elif up == "END":
            site = tk.rest_of_line(tl)
            if [s.upper() for s in site] != ["SITE"]:
                raise BVHError(f"expected 'End Site', found {' '.join(['End'] + site)!r}", tl, tk.path)
            tk.expect("{")
            tk.expect("OFFSET")
            eo = np.array([tk.number("OFFSET x"), tk.number("OFFSET y"), tk.number("OFFSET z")])
            tk.expect("}")
            end_sites.append((j, eo))
        else:
            raise BVHError(f"expected JOINT, End Site or '}}', found {tok!r}", tl, tk.path)

    if tk.peek() is not None:
        tok, tl = tk.next("MOTION")
        if tok.upper() == "ROOT":
            raise BVHError("more than one ROOT is not supported", tl, tk.path)
        raise BVHError(f"expected MOTION after the hierarchy, found {tok!r} (unbalanced braces?)", tl, tk.path)
    try:
        return Skeleton(names, np.array(parents), np.array(offsets), channels, end_sites)
    except SkeletonError as e:  # an OFFSET out of proportion (1e308 would give NaN lengths)
        raise BVHError(str(e), None, tk.path) from None


def _header_value(line: str, key: str, lineno: int, path: str | None) -> str:
    m = re.match(r"\s*" + key + r"\s*:?\s*(\S+)\s*$", line, re.IGNORECASE)
    if not m:
        raise BVHError(f"expected '{key}: <value>', found {line.strip()!r}", lineno, path)
    return m.group(1)


def _parse_rows_slow(lines: Sequence[str], first_line: int, n_ch: int, path: str | None) -> NDArray[np.float64]:
    rows: list[list[float]] = []
    for i, line in enumerate(lines):
        toks = line.split()
        if not toks:
            continue
        ln = first_line + i
        if len(toks) != n_ch:
            raise BVHError(f"expected {n_ch} channel values on frame {len(rows)}, found {len(toks)}", ln, path)
        vals = []
        for t in toks:
            try:
                v = float(t)
            except ValueError:
                raise BVHError(f"non-numeric channel value {t!r} on frame {len(rows)}", ln, path) from None
            if not math.isfinite(v):
                raise BVHError(f"channel value {t!r} on frame {len(rows)} is not finite", ln, path)
            vals.append(v)
        rows.append(vals)
    return np.array(rows, dtype=np.float64).reshape(len(rows), n_ch)


def _parse_block(lines: Sequence[str], first_line: int, n_ch: int, path: str | None) -> NDArray[np.float64]:
    """The number-parsing hot path: rows of ``n_ch`` ASCII numbers (blank lines skipped) -> ``[rows, n_ch]``.

    ``lines`` hold only the bytes in ``_ROW_BYTES`` (checked by the caller). Any malformed row
    raises :class:`BVHError` with its line (1-based, ``first_line`` is ``lines[0]``'s) and its frame
    (0-based within the block). A compiled parser may replace this body; the signature stays.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # loadtxt warns on empty input; counts are checked by the caller
            flat = np.loadtxt(lines, dtype=np.float64, comments=None, ndmin=2)
        if flat.shape[1:] == (n_ch,) and np.isfinite(flat).all():
            return flat
        if flat.size == 0 and not any(l.strip() for l in lines):
            return np.zeros((0, n_ch))
    except ValueError:
        pass
    return _parse_rows_slow(lines, first_line, n_ch, path)


_DECIMALS = re.compile(rb"[0-9]\.([0-9]*)")


def _row_ranges(block: bytes) -> NDArray[np.int64]:
    """``[n, 2]`` byte ranges (line ending included) of the non-blank lines of a block."""
    out: list[int] = []
    pos, size = 0, len(block)
    for line in block.split(b"\n"):
        end = pos + len(line) + 1
        if line.strip():
            out += (pos, min(end, size))
        pos = end
    return np.array(out, np.int64).reshape(-1, 2)


def _decimals(block: bytes) -> int:
    """The most common number of decimals among the first values of a block of rows."""
    counts = [len(m) for m in _DECIMALS.findall(block[:8192])]
    if not counts:
        return 0
    vals, n = np.unique(counts, return_counts=True)
    return int(min(20, vals[np.argmax(n)]))


def _first_bad_byte(block: bytes) -> int | None:
    rest = block.translate(None, _ROW_BYTES)
    if not rest:
        return None
    bad = rest[0]
    return block.index(bytes([bad]))


def _strict_error(line: str, lineno: int, frame: int, n_ch: int, path: str | None) -> BVHError:
    """The error for a row holding a byte no ASCII number has."""
    if "\x00" in line:
        return BVHError("binary data (NUL byte) in file: not a BVH text file", lineno, path)
    toks = line.split()
    if len(toks) != n_ch:
        return BVHError(f"expected {n_ch} channel values on frame {frame}, found {len(toks)}", lineno, path)
    for t in toks:
        if not _FLOAT.fullmatch(t):
            if t.lower().lstrip("+-") in ("nan", "inf", "infinity"):
                return BVHError(f"channel value {t!r} on frame {frame} is not finite", lineno, path)
            return BVHError(f"non-numeric channel value {t!r} on frame {frame}", lineno, path)
    return BVHError(f"unexpected character in frame {frame}: {line.strip()!r}", lineno, path)


_FRAME_IN_MSG = re.compile(r"on frame (\d+)")


def _parse_plain(block: bytes, n_ch: int) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """The compiled one-pass parse of a block of rows: ``([rows, n_ch]`` values, ``[rows, 2]`` byte
    ranges of the non-blank lines), or None if the block holds anything but plain finite decimals
    in rows of ``n_ch`` (the checked path then finds and reports it)."""
    cap = block.count(b"\n") + 1  # rows are lines: at most one more than the line endings
    values = np.empty((cap, n_ch))
    ranges = np.empty((cap, 2), np.int64)
    n = _core.parse_rows(block, n_ch, values, ranges)
    if n < 0:
        return None
    return values[:n], ranges[:n]


def _parse_rows_ranges(
    block: bytes, first_line: int, first_frame: int, n_ch: int, path: str | None
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """:func:`_parse_rows` and :func:`_row_ranges` of a block, in one compiled pass when it is plain."""
    fast = _parse_plain(block, n_ch) if n_ch > 0 else None
    if fast is not None:
        return fast
    return _parse_rows(block, first_line, first_frame, n_ch, path), _row_ranges(block)


def _parse_rows(block: bytes, first_line: int, first_frame: int, n_ch: int, path: str | None) -> NDArray[np.float64]:
    """Check a block of rows for stray bytes, then parse it; errors give the file's line and frame."""
    fast = _parse_plain(block, n_ch) if n_ch > 0 else None
    if fast is not None:
        return fast[0]
    lines = block.decode("latin-1").split("\n")
    bad = _first_bad_byte(block)
    stop = len(lines) if bad is None else block.count(b"\n", 0, bad)
    try:
        data = _parse_block(lines[:stop], first_line, n_ch, path)
    except BVHError as e:
        if first_frame:
            raise BVHError(
                _FRAME_IN_MSG.sub(lambda m: f"on frame {int(m.group(1)) + first_frame}", e.reason), e.line, path
            ) from None
        raise
    if bad is not None:
        raw = block.split(b"\n")[stop]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.decode("latin-1")
        raise _strict_error(line, first_line + stop, first_frame + data.shape[0], n_ch, path)
    return data


def _read_header(fh: IO[bytes], path: str | None) -> tuple[list[str], int]:
    """The lines up to and including MOTION (split on \\n only, decoded as UTF-8 or else Latin-1)."""
    raw: list[bytes] = []
    for line in fh:
        raw.append(line)
        st = line.strip().upper()
        if st == b"MOTION" or st.startswith(b"MOTION "):
            break
    if raw and raw[0].startswith(b"\xef\xbb\xbf"):
        raw[0] = raw[0][3:]  # UTF-8 byte order mark
    for i, line in enumerate(raw):
        if b"\x00" in line:
            raise BVHError("binary data (NUL byte) in file: not a BVH text file", i + 1, path)
    head = b"".join(raw)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = head.decode("latin-1")
    lines = [l[:-1] if l.endswith("\r") else l for l in text.split("\n")]
    if lines and lines[-1] == "" and head.endswith(b"\n"):
        lines.pop()
    return lines, len(raw)


def _next_nonblank(fh: IO[bytes], lineno: int) -> tuple[str | None, int]:
    for line in fh:
        lineno += 1
        if line.strip():
            return line.decode("latin-1"), lineno
    return None, lineno

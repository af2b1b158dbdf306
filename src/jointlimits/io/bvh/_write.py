"""Writing BVH: channel values from a clip (validation, Euler angles nearest the source's, the
source's own values where nothing changed) and the lossless text writer (unchanged rows and
header copied byte for byte, changed values in the file's number style)."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import NDArray

from ..._atomic import atomic_write
from ..._native import _core
from ...errors import BVHError
from ...motion import quat
from ...motion.skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Motion, Skeleton
from ._source import _ROWS_PER_WRITE, BVHSource, _EulerRotations, _LazyEuler, _qhash, _row_bytes


def _check_fixed_positions(motion: Motion) -> None:
    """BVHError if a joint moves along an axis it has no position channel for."""
    sk = motion.skeleton
    for j, chans in enumerate(sk.channels):
        missing = [k for k in range(3) if POSITION_CHANNELS[k] not in chans]
        if missing:
            dev = np.abs(motion.positions[:, j, missing] - sk.offsets[j, missing])
            if dev.size and np.max(dev) > 1e-9 * max(1.0, float(np.max(np.abs(sk.offsets[j])))):
                raise BVHError(
                    f"joint {sk.names[j]!r} moves along axes without position channels; "
                    "add position channels to the skeleton to save it"
                )


def _text_source(motion: Motion) -> BVHSource | None:
    """The motion's source text if its rows are the motion's frames in the same channel layout."""
    src = motion.source_text
    if not isinstance(src, BVHSource) or len(src) != motion.num_frames:
        return None
    if [list(c) for c in src.skeleton.channels] != [list(c) for c in motion.skeleton.channels]:
        return None
    return src


def channel_data(motion: Motion) -> NDArray[np.float64]:
    """The ``[F, C]`` channel values (degrees, file units) that represent ``motion`` in BVH order."""
    return _channel_data(motion)[0]


def _channel_data(
    motion: Motion, carry: dict[int, dict] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None, bytes | None]:
    """(channel values, the source rows' values or None, the source's bytes or None); ``carry``
    (per joint, see :func:`~jointlimits.motion.quat.to_euler_axes`) continues the Euler
    unwrapping of the previous block of frames."""
    sk = motion.skeleton
    F = motion.num_frames
    motion.check_finite()
    n_ch = sum(len(c) for c in sk.channels)
    data = np.empty((F, n_ch))  # filled column by column (no list of columns stacked at the end)
    text = _text_source(motion)
    raw = text.read() if text is not None else None
    old = text.values(raw) if text is not None and raw is not None else None
    src = motion.source_euler
    if src is not None and (
        old is not None
        or src[0].shape != motion.rotations.shape
        or isinstance(src[1], _LazyEuler)
        and src[1]._cache is None
    ):
        src = None  # the text's own values serve (or the text is gone: nothing to read them from)
    if old is not None and text is not None and np.array_equal(_qhash(motion.rotations), text.hashes):
        pos_cols = [
            (c, j, POSITION_CHANNELS.index(ch))
            for c, (j, ch) in enumerate((j, ch) for j, chans in enumerate(sk.channels) for ch in chans)
            if ch in POSITION_CHANNELS
        ]
        if all(np.array_equal(old[:, c], motion.positions[:, j, k]) for c, j, k in pos_cols):
            _check_fixed_positions(motion)
            return old, old, raw  # nothing changed since loading
    col = 0
    for j, chans in enumerate(sk.channels):
        axes = "".join(c[0].lower() for c in chans if c in ROTATION_CHANNELS)
        has_pos = [POSITION_CHANNELS.index(c) for c in chans if c in POSITION_CHANNELS]
        missing_pos = [k for k in range(3) if k not in has_pos]
        if missing_pos:
            dev = np.abs(motion.positions[:, j, missing_pos] - sk.offsets[j, missing_pos])
            if dev.size and np.max(dev) > 1e-9 * max(1.0, float(np.max(np.abs(sk.offsets[j])))):
                raise BVHError(
                    f"joint {sk.names[j]!r} moves along axes without position channels; "
                    "add position channels to the skeleton to save it"
                )
        rot = None
        if axes:
            q = motion.rotations[:, j]
            n = len(axes)
            hint = None
            exact = None
            if old is not None:
                assert text is not None  # old holds the text's values
                hint = old[:, [col + k for k, c in enumerate(chans) if c in ROTATION_CHANNELS]]
                exact = _qhash(q) == text.hashes[:, j]
            elif src is not None:
                hint = src[1][:, j, :n].copy()
                src_q = src[0].joint(j) if isinstance(src[0], _EulerRotations) else src[0][:, j]
                exact = np.all(src_q == q, axis=-1)
            state = None if carry is None else carry.setdefault(j, quat.euler_carry(n))
            if exact is not None and exact.all():
                rot = hint
                if state is not None:
                    quat.euler_carry_exact(state)
            else:
                rot = quat.to_euler_axes(quat.normalize(q), axes, hint, exact, state)
        k = 0
        for i, c in enumerate(chans):
            if c in POSITION_CHANNELS:
                data[:, col + i] = motion.positions[:, j, POSITION_CHANNELS.index(c)]
            else:
                data[:, col + i] = rot[:, k]  # type: ignore[index]  # set where chans has rotations
                k += 1
        col += len(chans)
    return data, old, raw


def _fmt(x: float) -> str:
    r = repr(float(x))
    return "0" if r in ("0.0", "-0.0") else (r[:-2] if r.endswith(".0") else r)


def _format_rows(data: NDArray[np.float64], decimals: int = 0, eol: bytes = b"\n") -> bytes:
    """Rows of channel values as BVH text that parses back to exactly the same values: each the
    shortest fixed-notation decimal with at least ``decimals`` places (compiled)."""
    if data.shape[0] == 0 or data.shape[1] == 0:
        return b""
    flat = np.ascontiguousarray(data, np.float64).reshape(-1)
    out = np.empty(flat.size * (64 + len(eol)) + 1, np.uint8)
    n = _core.format_rows(flat, data.shape[1], int(decimals), eol, out)
    return out[:n].tobytes()


def _merge_rows(
    data: NDArray[np.float64], old: NDArray[np.float64], rows: NDArray[np.int64], raw: bytes, decimals: int, eol: bytes
) -> bytes | None:
    """The source rows ``rows`` (byte ranges of ``raw``, holding the values ``old``) with the values
    that differ in ``data`` replaced, everything else copied byte for byte; None if a row does not
    hold its values."""
    n, n_ch = data.shape
    chunk, starts, ends = _row_bytes(raw, rows)
    if old is data:
        return chunk
    same = (old == data).view(np.uint8)
    if same.all():
        return chunk
    flat = np.ascontiguousarray(data).reshape(-1)
    out = np.empty(len(chunk) + n * len(eol) + int(flat.size - same.sum()) * 64 + 1, np.uint8)
    k = _core.merge_rows(
        chunk,
        np.ascontiguousarray(starts, np.int64),
        np.ascontiguousarray(ends, np.int64),
        n_ch,
        np.ascontiguousarray(same).reshape(-1),
        flat,
        int(decimals),
        eol,
        out,
    )
    return None if k < 0 else out[:k].tobytes()


def _hierarchy_lines(sk: Skeleton) -> list[str]:
    """The HIERARCHY section, written with an explicit stack (any nesting depth, no recursion)."""
    out = ["HIERARCHY"]
    kids: dict[int, list[int]] = {}
    for j, p in enumerate(sk.parents):
        kids.setdefault(int(p), []).append(j)
    ends: dict[int, list[NDArray[np.float64]]] = {}
    for p, o in sk.end_sites:
        ends.setdefault(p, []).append(o)
    # (joint, depth, opened): a joint is written when first met and closed when met again
    stack: list[tuple[int, int, bool]] = [(0, 0, False)]
    while stack:
        j, depth, opened = stack.pop()
        ind = "\t" * depth
        if opened:
            for o in ends.get(j, []):
                out.append(f"{ind}\tEnd Site")
                out.append(f"{ind}\t{{")
                out.append(f"{ind}\t\tOFFSET {' '.join(_fmt(v) for v in o)}")
                out.append(f"{ind}\t}}")
            out.append(f"{ind}}}")
            continue
        out.append(f"{ind}{'ROOT' if sk.parents[j] < 0 else 'JOINT'} {sk.names[j]}")
        out.append(f"{ind}{{")
        out.append(f"{ind}\tOFFSET {' '.join(_fmt(v) for v in sk.offsets[j])}")
        out.append(f"{ind}\tCHANNELS {len(sk.channels[j])}{''.join(' ' + c for c in sk.channels[j])}")
        stack.append((j, depth, True))
        for c in reversed(kids.get(j, [])):
            stack.append((c, depth + 1, False))
    return out


def _frame_time_token(frame_time: float, src: BVHSource | None) -> bytes:
    """A frame time in the source's style: its token if unchanged, else with the token's number
    of decimals (more only where the rate would not read back within 5e-5 relative)."""
    if src is None:
        return _fmt(frame_time).encode()
    if frame_time == src.frame_time:
        return src.frame_time_token
    tok = src.frame_time_token.decode("latin-1")
    if "e" in tok.lower() or not (0 < frame_time < 1e6):
        return _fmt(frame_time).encode()
    d = len(tok.split(".", 1)[1]) if "." in tok else 0
    while d < 17 and abs(float(f"{frame_time:.{d}f}") - frame_time) > 5e-5 * frame_time:
        d += 1
    return f"{frame_time:.{d}f}".encode()


def _header(motion: Motion, src: BVHSource | None, raw: bytes | None) -> bytes:
    """The header: the source's own bytes where its hierarchy (and frame count and time) are
    unchanged, else written anew with the source's line ending and frame time style."""
    sk = motion.skeleton
    F = motion.num_frames
    ft = _frame_time_token(motion.frame_time, src)
    if src is not None and raw is not None and src.same_skeleton(sk):
        if F == src.n_frames and motion.frame_time == src.frame_time:
            return raw[: src.header_end]
        return raw[: src.motion_end] + b"Frames: %d" % F + src.eol + b"Frame Time: " + ft + src.eol
    eol = (src.eol if src is not None else b"\n").decode()
    lines = _hierarchy_lines(sk) + ["MOTION", f"Frames: {F}", f"Frame Time: {ft.decode()}"]
    return (eol.join(lines) + eol).encode("utf-8", "surrogateescape")


def _write(
    fh: IO[bytes],
    motion: Motion,
    data: NDArray[np.float64] | None = None,
    old: NDArray[np.float64] | None = None,
    raw: bytes | None = None,
    round_new: bool = False,
) -> None:
    if data is None:
        data, old, raw = _channel_data(motion)
    src = _text_source(motion)
    if old is None:
        raw = None
    src_rows = src.rows if src is not None and raw is not None else None
    # a source whose rows are not the motion's frames (e.g. resampled) still gives its style
    style = motion.source_text if isinstance(motion.source_text, BVHSource) else None
    eol = style.eol if style is not None else b"\n"
    decimals = style.decimals if style is not None else 0
    if round_new and decimals > 0:
        r = np.round(data, decimals)
        data = r if old is None else np.where(old == data, data, r)
    head_raw = raw
    if src is None and style is not None and style.same_skeleton(motion.skeleton):
        head_raw = style.read()
    fh.write(_header(motion, style, head_raw))
    _write_rows(fh, data, old, src_rows, raw, decimals, eol, data.shape[0])
    if src is not None and raw is not None and src.whole():
        fh.write(raw[src.tail_start :])


def _write_rows(
    fh: IO[bytes],
    data: NDArray[np.float64],
    old: NDArray[np.float64] | None,
    src_rows: NDArray[np.int64] | None,
    raw: bytes | None,
    decimals: int,
    eol: bytes,
    total: int,
    first: int = 0,
) -> None:
    """The frame rows ``first ..`` of a clip of ``total`` frames (``first`` a multiple of
    ``_ROWS_PER_WRITE``): source rows with changed values replaced, or formatted anew."""
    F = data.shape[0]
    for a in range(0, F, _ROWS_PER_WRITE):
        block = data[a : a + _ROWS_PER_WRITE]
        text = None
        if src_rows is not None and block.shape[1]:
            assert old is not None and raw is not None  # src_rows is set only with raw, raw only with old
            text = _merge_rows(
                block, old[a : a + _ROWS_PER_WRITE], src_rows[a : a + _ROWS_PER_WRITE], raw, decimals, eol
            )
        if text is None:
            text = _format_rows(block, decimals, eol)
        if first + a + _ROWS_PER_WRITE < total and text and not text.endswith(b"\n"):
            text += eol
        fh.write(text)


def dumps(motion: Motion, *, round_new: bool = False) -> str:
    """BVH text for a motion (same hierarchy and channel layout as its skeleton; see :func:`save`)."""
    buf = io.BytesIO()
    _write(buf, motion, round_new=round_new)
    return buf.getvalue().decode("utf-8", "surrogateescape")


def save(path: str | os.PathLike, motion: Motion, *, overwrite: bool = True, round_new: bool = False) -> None:
    """Write ``motion`` to ``path`` atomically (temporary file in the same folder, then rename).

    With ``overwrite=False`` an existing file is never replaced. Nothing is written if the motion
    cannot be represented (NaN values, moving joints without position channels). With
    ``round_new``, values that are not the source file's own are rounded to the file's usual
    number of decimals (for new frames, e.g. interpolated ones, whose further digits carry
    nothing); by default every value reads back exactly.
    """
    p = Path(path)
    if not overwrite and p.exists():
        raise BVHError("file exists (not overwriting it)", None, str(p))
    data, old, raw = _channel_data(motion)  # raises before a file is opened if the motion cannot be written
    with atomic_write(p, binary=True) as fh:
        _write(fh, motion, data, old, raw, round_new)


#: frames per block of :func:`save_blocks` (a multiple of _ROWS_PER_WRITE)
_BLOCK_FRAMES = _ROWS_PER_WRITE


class _NotBlockwise(Exception):
    """save_blocks cannot write this clip block by block (the caller saves it whole)."""


def save_blocks(
    path: str | os.PathLike,
    motion: Motion,
    transform: Callable[[Motion], Motion],
    *,
    overwrite: bool = True,
    block_frames: int = _BLOCK_FRAMES,
) -> bool:
    """Write ``transform`` of each block of ``block_frames`` frames of ``motion`` to ``path``:
    byte for byte the file :func:`save` writes for the whole transformed clip, holding one block's
    arrays and text at a time (atomically, like :func:`save`).

    ``motion`` is a clip loaded from a BVH file that has not changed since, ``transform`` a
    per-frame map (frame ``i`` of its result depends on frame ``i`` of its input alone) that keeps
    the skeleton, the frame time and the clip's source. Returns False, writing nothing, for any
    other clip or transform (then save the whole transformed clip).
    """
    src = motion.source_text
    F = motion.num_frames
    if (
        not isinstance(src, BVHSource)
        or src.path is None
        or F == 0
        or not src.whole()
        or block_frames <= 0
        or block_frames % _ROWS_PER_WRITE
    ):
        return False
    p = Path(path)
    if not overwrite and p.exists():
        raise BVHError("file exists (not overwriting it)", None, str(p))
    try:
        fh_src = open(src.path, "rb")
    except OSError:
        return False
    carry: dict[int, dict] = {}
    try:
        with fh_src:
            st = os.fstat(fh_src.fileno())
            if (st.st_size, st.st_mtime_ns) != src.stat:
                return False

            def read(a: int, b: int) -> bytes:
                fh_src.seek(a)
                return fh_src.read(b - a)

            with atomic_write(p, binary=True) as fh:
                fh.write(read(0, src.header_end))
                for a in range(0, F, block_frames):
                    sub = motion.frames(a, a + block_frames)
                    out = transform(sub)
                    if (
                        out.num_frames != sub.num_frames
                        or out.frame_time != motion.frame_time
                        or out.source_text is not sub.source_text
                        or not src.same_skeleton(out.skeleton)
                    ):
                        raise _NotBlockwise
                    rows = sub.source_text.rows
                    lo = int(rows[0, 0])
                    # the block's own bytes stand for the file, its rows counted from their start
                    local = BVHSource.__new__(BVHSource)
                    local.__dict__.update(sub.source_text.__dict__)
                    local.path, local.stat, local.rows = None, None, rows - lo
                    local.data = read(lo, int(rows[-1, 1]))
                    out.source_text = local
                    data, old, raw = _channel_data(out, carry)
                    if old is None:
                        raise _NotBlockwise
                    if old is data:  # nothing changed in the block: every rotation is its own
                        for j, chans in enumerate(out.skeleton.channels):
                            n = sum(c in ROTATION_CHANNELS for c in chans)
                            if n:
                                quat.euler_carry_exact(carry.setdefault(j, quat.euler_carry(n)))
                    _write_rows(fh, data, old, local.rows, raw, src.decimals, src.eol, F, a)
                fh.write(read(src.tail_start, st.st_size))
    except _NotBlockwise:
        return False
    return True

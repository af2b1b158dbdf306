"""Lossless BVH reading and writing.

``load`` accepts any per-joint channel layout (rotation orders mixed per joint, position channels
anywhere in the list and in any order, 1 to 6 channels, position channels on non-root joints),
CRLF/LF, tabs, blank lines and exponents, and raises :class:`~jointlimits.errors.BVHError` with
the line number on malformed input. ``save`` writes back the same hierarchy and channel layout;
rotations that were not changed since loading are written with the exact values read.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from .. import quat
from .._atomic import atomic_write
from ..errors import BVHError
from ..skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Motion, Skeleton

__all__ = ["load", "loads", "save", "dumps", "channel_data", "CHANNEL_NAMES"]

CHANNEL_NAMES = POSITION_CHANNELS + ROTATION_CHANNELS
_AX = {"x": 0, "y": 1, "z": 2}
_TOKEN = re.compile(r"[{}]|[^\s{}]+")


def _euler_to_quat(angles_deg: NDArray[np.float64], axes: str) -> NDArray[np.float64]:
    """Product R_axes[0](a0) R_axes[1](a1) ... for any sequence of axes (degrees)."""
    half = np.deg2rad(angles_deg) * 0.5
    c, s = np.cos(half), np.sin(half)
    if len(axes) == 3 and len(set(axes)) == 3:
        # closed form of (c1 + s1 e_i)(c2 + s2 e_j)(c3 + s3 e_k); e_i e_j = eps e_k
        i, j, k = (_AX[a] for a in axes)
        eps = 1.0 if (j - i) % 3 == 1 else -1.0
        c1, c2, c3, s1, s2, s3 = c[..., 0], c[..., 1], c[..., 2], s[..., 0], s[..., 1], s[..., 2]
        a, b, cc, d = c1 * c2, c1 * s2, s1 * c2, s1 * s2
        q = np.empty(angles_deg.shape[:-1] + (4,))
        q[..., 0] = a * c3 - eps * d * s3
        q[..., 1 + i] = cc * c3 + eps * b * s3
        q[..., 1 + j] = b * c3 - eps * cc * s3
        q[..., 1 + k] = a * s3 + eps * d * c3
        return q
    out = None
    for n, ch in enumerate(axes):
        qn = np.zeros(angles_deg.shape[:-1] + (4,))
        qn[..., 0] = c[..., n]
        qn[..., 1 + _AX[ch]] = s[..., n]
        out = qn if out is None else quat.mul(out, qn)
    return out


def _quat_to_euler(q: NDArray[np.float64], axes: str, hint: NDArray[np.float64] | None,
                   exact: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """Angles (degrees, ``[F, len(axes)]``) whose product is q.

    Rows where ``exact`` is set are the ``hint`` rows themselves. Elsewhere the Euler twin nearest
    the hint (modulo 360) is chosen (the principal one without a hint) and runs of such rows are
    unwrapped so that they continue from the row before without 360-degree jumps.
    """
    n = len(axes)
    F = q.shape[0]
    if n == 1:
        a = _AX[axes]
        cands = [np.rad2deg(2.0 * np.arctan2(q[:, 1 + a], q[:, 0]))[:, None]]
    else:
        full = axes if n == 3 else axes + next(c for c in "xyz" if c not in axes)
        from scipy.spatial.transform import Rotation

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            e = Rotation.from_quat(q[:, [1, 2, 3, 0]]).as_euler(full.upper(), degrees=True)[:, :n]
        cands = [e]
        if n == 3:
            mid = 180.0 - e[:, 1] if full[0] != full[2] else -e[:, 1]  # Tait-Bryan / proper twin
            cands.append(np.stack([e[:, 0] + 180.0, mid, e[:, 2] + 180.0], -1))
    out = cands[0]
    if hint is not None and len(cands) > 1:
        def dist(c: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.sum(((c - hint + 180.0) % 360.0 - 180.0) ** 2, axis=-1)
        out = np.where((dist(cands[1]) < dist(cands[0]))[:, None], cands[1], cands[0])
    if exact is None:
        exact = np.zeros(F, bool)
    if hint is not None:
        out = np.where(exact[:, None], hint, out)
    if F > 1:
        corr = np.zeros_like(out)
        corr[1:] = -360.0 * np.round(np.diff(out, axis=0) / 360.0)
        corr[exact] = 0.0
        cs = np.cumsum(corr, axis=0)
        last = np.maximum.accumulate(np.where(exact, np.arange(F), -1))
        base = np.where((last >= 0)[:, None], cs[np.maximum(last, 0)], 0.0)
        out = np.where(exact[:, None], out, out + cs - base)
    return out


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
        try:
            v = float(t)
        except ValueError:
            raise BVHError(f"expected a number for {what}, found {t!r}", line, self.path) from None
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
    names: list[str] = []
    parents: list[int] = []
    offsets: list[list[float]] = []
    channels: list[list[str]] = []
    end_sites: list[tuple[int, np.ndarray]] = []

    tk.expect("HIERARCHY")
    t, line = tk.next("ROOT")
    if t.upper() != "ROOT":
        raise BVHError(f"expected 'ROOT', found {t!r}", line, tk.path)

    def joint(parent: int, line: int) -> None:
        name_parts = tk.rest_of_line(line)
        if not name_parts:
            raise BVHError("joint without a name", line, tk.path)
        name = " ".join(name_parts)
        if name in names:
            raise BVHError(f"duplicate joint name {name!r}", line, tk.path)
        tk.expect("{")
        tk.expect("OFFSET")
        off = [tk.number("OFFSET x"), tk.number("OFFSET y"), tk.number("OFFSET z")]
        ch_line = tk.expect("CHANNELS")
        n_tok, n_line = tk.next("the channel count")
        try:
            n = int(n_tok)
        except ValueError:
            raise BVHError(f"expected a channel count, found {n_tok!r}", n_line, tk.path) from None
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
        j = len(names)
        names.append(name)
        parents.append(parent)
        offsets.append(off)
        channels.append(chans)
        del ch_line
        while True:
            t = tk.peek()
            if t is None:
                raise tk.err(f"unbalanced braces: joint {name!r} is not closed before MOTION")
            tok, tl = tk.next("JOINT, End Site or '}'")
            up = tok.upper()
            if up == "}":
                return
            if up == "JOINT":
                joint(j, tl)
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

    joint(-1, line)
    if tk.peek() is not None:
        tok, tl = tk.next("MOTION")
        if tok.upper() == "ROOT":
            raise BVHError("more than one ROOT is not supported", tl, tk.path)
        raise BVHError(f"expected MOTION after the hierarchy, found {tok!r} (unbalanced braces?)", tl, tk.path)
    return Skeleton(names, np.array(parents), np.array(offsets), channels, end_sites)


def _header_value(line: str, key: str, lineno: int, path: str | None) -> str:
    m = re.match(r"\s*" + key + r"\s*:?\s*(\S+)\s*$", line, re.IGNORECASE)
    if not m:
        raise BVHError(f"expected '{key}: <value>', found {line.strip()!r}", lineno, path)
    return m.group(1)


def _parse_rows_slow(lines: Sequence[str], first_line: int, n_ch: int, path: str | None) -> NDArray[np.float64]:
    rows = []
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


def loads(text: str, path: str | None = None) -> Motion:
    """Parse BVH text into a Motion (see :func:`load`)."""
    lines = text.splitlines()
    tk = _Tokens(lines, path)
    if not tk.toks and tk.motion_line is None:
        raise BVHError("empty file: expected HIERARCHY", 1, path)
    skeleton = _parse_hierarchy(tk)
    if tk.motion_line is None:
        raise BVHError("missing MOTION section (file truncated?)", len(lines), path)
    i = tk.motion_line + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise BVHError("truncated after MOTION: expected 'Frames: <count>'", len(lines), path)
    fv = _header_value(lines[i], "Frames", i + 1, path)
    try:
        n_frames = int(fv)
    except ValueError:
        raise BVHError(f"Frames count must be an integer, found {fv!r}", i + 1, path) from None
    if n_frames < 0:
        raise BVHError(f"Frames count must not be negative, found {n_frames}", i + 1, path)
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise BVHError("truncated: expected 'Frame Time: <seconds>'", len(lines), path)
    tv = _header_value(lines[i], "Frame Time", i + 1, path)
    try:
        frame_time = float(tv)
    except ValueError:
        raise BVHError(f"Frame Time must be a number, found {tv!r}", i + 1, path) from None
    if not (math.isfinite(frame_time) and frame_time > 0):
        raise BVHError(f"Frame Time must be positive and finite, found {tv!r}", i + 1, path)
    data_lines = lines[i + 1:]
    first_data_line = i + 2
    n_ch = sum(len(c) for c in skeleton.channels)

    data = None
    if n_ch > 0:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # loadtxt warns on empty input; counts are checked below
                flat = np.loadtxt(data_lines, dtype=np.float64, comments=None, ndmin=2)
            if flat.shape == (n_frames, n_ch) and np.isfinite(flat).all():
                data = flat
        except ValueError:
            data = None
        if data is None:
            data = _parse_rows_slow(data_lines, first_data_line, n_ch, path)
            if data.shape[0] != n_frames:
                raise BVHError(f"header says Frames: {n_frames} but the file holds {data.shape[0]} frames "
                               "(truncated or extra rows)", len(lines), path)
    else:
        data = np.zeros((n_frames, 0))
        extra = [k for k, l in enumerate(data_lines) if l.strip()]
        if extra:
            raise BVHError("frame data given but no joint has channels", first_data_line + extra[0], path)
    return _motion_from_channels(skeleton, data, frame_time)


def _motion_from_channels(skeleton: Skeleton, data: NDArray[np.float64], frame_time: float) -> Motion:
    F, J = data.shape[0], skeleton.num_joints
    positions = np.repeat(skeleton.offsets[None], F, axis=0)
    rotations = np.zeros((F, J, 4))
    rotations[..., 0] = 1.0
    euler = np.zeros((F, J, 3))
    groups: dict[str, tuple[list[int], list[list[int]]]] = {}
    col = 0
    for j, chans in enumerate(skeleton.channels):
        rot_cols = []
        for c in chans:
            if c in POSITION_CHANNELS:
                positions[:, j, POSITION_CHANNELS.index(c)] = data[:, col]
            else:
                rot_cols.append(col)
            col += 1
        axes = "".join(c[0].lower() for c in chans if c in ROTATION_CHANNELS)
        if axes:
            g = groups.setdefault(axes, ([], []))
            g[0].append(j)
            g[1].append(rot_cols)
    for axes, (js, cols) in groups.items():
        ang = data[:, np.array(cols)]  # [F, Jg, n]
        rotations[:, js] = _euler_to_quat(ang, axes)
        euler[:, js, :len(axes)] = ang
    return Motion(skeleton, rotations, positions, frame_time, source_euler=(rotations.copy(), euler))


def load(path: str | os.PathLike) -> Motion:
    """Read a BVH file into a :class:`Motion` (float64, local rotations as quaternions)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise BVHError(f"cannot read file: {e.strerror or e}", None, str(p)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    if "\x00" in text:
        raise BVHError("binary data (NUL byte) in file: not a BVH text file", text[: text.index("\x00")].count("\n") + 1, str(p))
    return loads(text, str(p))


def channel_data(motion: Motion) -> NDArray[np.float64]:
    """The ``[F, C]`` channel values (degrees, file units) that represent ``motion`` in BVH order."""
    sk = motion.skeleton
    F = motion.num_frames
    motion.check_finite()
    cols: list[NDArray[np.float64]] = []
    src = motion.source_euler
    if src is not None and (src[0].shape != motion.rotations.shape):
        src = None
    for j, chans in enumerate(sk.channels):
        axes = "".join(c[0].lower() for c in chans if c in ROTATION_CHANNELS)
        has_pos = [POSITION_CHANNELS.index(c) for c in chans if c in POSITION_CHANNELS]
        missing_pos = [k for k in range(3) if k not in has_pos]
        if missing_pos:
            dev = np.abs(motion.positions[:, j, missing_pos] - sk.offsets[j, missing_pos])
            if dev.size and np.max(dev) > 1e-9 * max(1.0, float(np.max(np.abs(sk.offsets[j])))):
                raise BVHError(f"joint {sk.names[j]!r} moves along axes without position channels; "
                               "add position channels to the skeleton to save it")
        rot = None
        if axes:
            q = motion.rotations[:, j]
            n = len(axes)
            hint = None
            exact = None
            if src is not None:
                hint = src[1][:, j, :n].copy()
                exact = np.all(src[0][:, j] == q, axis=-1)
            if exact is not None and exact.all():
                rot = hint
            else:
                rot = _quat_to_euler(quat.normalize(q), axes, hint, exact)
        k = 0
        for c in chans:
            if c in POSITION_CHANNELS:
                cols.append(motion.positions[:, j, POSITION_CHANNELS.index(c)])
            else:
                cols.append(rot[:, k])
                k += 1
    return np.stack(cols, axis=-1) if cols else np.zeros((F, 0))


def _fmt(x: float) -> str:
    r = repr(float(x))
    return "0" if r in ("0.0", "-0.0") else (r[:-2] if r.endswith(".0") else r)


def dumps(motion: Motion) -> str:
    """BVH text for a motion (same hierarchy and channel layout as its skeleton)."""
    sk = motion.skeleton
    data = channel_data(motion)
    out = ["HIERARCHY"]
    kids: dict[int, list[int]] = {}
    for j, p in enumerate(sk.parents):
        kids.setdefault(int(p), []).append(j)
    ends: dict[int, list[NDArray[np.float64]]] = {}
    for p, o in sk.end_sites:
        ends.setdefault(p, []).append(o)

    def emit(j: int, depth: int) -> None:
        ind = "\t" * depth
        out.append(f"{ind}{'ROOT' if sk.parents[j] < 0 else 'JOINT'} {sk.names[j]}")
        out.append(f"{ind}{{")
        out.append(f"{ind}\tOFFSET {' '.join(_fmt(v) for v in sk.offsets[j])}")
        out.append(f"{ind}\tCHANNELS {len(sk.channels[j])}{''.join(' ' + c for c in sk.channels[j])}")
        for c in kids.get(j, []):
            emit(c, depth + 1)
        for o in ends.get(j, []):
            out.append(f"{ind}\tEnd Site")
            out.append(f"{ind}\t{{")
            out.append(f"{ind}\t\tOFFSET {' '.join(_fmt(v) for v in o)}")
            out.append(f"{ind}\t}}")
        out.append(f"{ind}}}")

    emit(0, 0)
    out.append("MOTION")
    out.append(f"Frames: {motion.num_frames}")
    out.append(f"Frame Time: {_fmt(motion.frame_time)}")
    body = "\n".join(" ".join(map(_fmt, row)) for row in data.tolist())
    return "\n".join(out) + "\n" + body + ("\n" if body else "")


def save(path: str | os.PathLike, motion: Motion, *, overwrite: bool = True) -> None:
    """Write ``motion`` to ``path`` atomically (temporary file in the same folder, then rename).

    With ``overwrite=False`` an existing file is never replaced. Nothing is written if the motion
    cannot be represented (NaN values, moving joints without position channels).
    """
    p = Path(path)
    if not overwrite and p.exists():
        raise BVHError("file exists (not overwriting it)", None, str(p))
    text = dumps(motion)
    with atomic_write(p) as fh:
        fh.write(text)

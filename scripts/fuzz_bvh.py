"""Fuzz the BVH reader with mutations of the shared clips and print counts.

Every mutated file is read by ``jointlimits.io.bvh.load`` in a sandboxed worker
(``scripts/fuzzlib.py``: 1 GB address space, 10 s a file); it must either load or raise
``BVHError`` in one line (anything else escaping, MemoryError included, is a failure). Every
file that loads must hold finite values with finite forward kinematics (global positions), a
frame time in [1e-6, 3600] s, and (files up to 4 MB) be written back as exactly the same text and
load again to the same skeleton and bit-identical channel values.

Mutations: bytes, tokens, lines, deep nesting, line ends, BOMs, and the edges of issue #38: empty
and huge frame counts, extreme frame times (1e-9, 1e308, negative, 0, nan), overflowing OFFSET
and position values (1e308 and friends), huge declared channel counts, and big files (5 to 60 MB
of frame rows). The last line printed is one JSON object of counts (``fuzzlib.summary``).

    python scripts/fuzz_bvh.py [--n 5000] [--seed 0] [--frames 12]
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzzlib

ROOT = Path(__file__).resolve().parents[1]
MOCAP = ROOT.parent / "shared" / "data" / "mocap"
#: files bigger than this are loaded and checked but not written back (the text, its copy and a
#: second clip would make the worker's peak memory and time the check's, not the reader's)
ROUND_TRIP_BYTES = 4 * 2**20

#: odd things a hostile or broken file may hold
TOKENS = [
    "{",
    "}",
    "JOINT",
    "End Site",
    "ROOT",
    "MOTION",
    "Frames:",
    "Frame Time:",
    "CHANNELS 7",
    "CHANNELS +3",
    "Xrotation",
    "Xposition",
    "OFFSET",
    "nan",
    "inf",
    "-",
    "1e999",
    "1e-320",
    "+3",
    "1_000",
    "\u0661\u0662\u0663.\u0665",
    "\uff11\uff12",
    "0x10",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\x0c",
    "\x85",
    "\u2028",
    "\x00",
    "\ufeff",
    "é",
    " ",
    "-0",
    ".5",
    "5.",
    "1e5",
    "9" * 400,
]
NUMBERS = [
    "1_000",
    "\u0661\u0662\u0663.\u0665",
    "\uff11\uff12",
    "+3",
    "-0",
    "1e-320",
    "1e308",
    "1e309",
    "nan",
    "-inf",
    "0x1p3",
    "1d3",
    ".",
    "-.5",
    "5.",
    "1e",
    "--1",
    "1e+5",
    "00012",
    "0.0000001",
]


def seed_texts(frames: int = 12) -> list[tuple[str, str]]:
    """(name, text) of each shared clip cut to its first ``frames`` frames (header count updated)."""
    out = []
    for p in sorted(MOCAP.glob("*/*.bvh")):
        text = p.read_bytes().decode("latin-1")
        head, sep, rest = text.partition("MOTION")
        if not sep:
            continue
        lines = rest.split("\n")
        # lines[0] is the rest of the MOTION line, then Frames, Frame Time, data
        data = [l for l in lines[3:] if l.strip()][:frames]
        out.append(
            (
                p.name,
                head + "MOTION" + lines[0] + "\n" + f"Frames: {len(data)}\n" + lines[2] + "\n" + "\n".join(data) + "\n",
            )
        )
    return out


def mutate(text: str, rng: random.Random) -> str:
    """One to four random edits: byte-level, token-level, line-level and structural."""
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["flip", "ins", "del", "dup", "swap", "cut", "num", "nest", "ends", "bom", "frames"])
        k = rng.randrange(max(1, len(text)))
        if op == "flip":
            text = text[:k] + chr(rng.randrange(256)) + text[k + 1 :]
        elif op == "ins":
            text = text[:k] + rng.choice(TOKENS) + text[k:]
        elif op == "del":
            text = text[:k] + text[k + rng.randint(1, 40) :]
        elif op == "dup":
            text = text[:k] + text[k : k + rng.randint(1, 200)] + text[k:]
        elif op == "swap":
            lines = text.split("\n")
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif op == "cut":
            text = text[:k]
        elif op == "num":  # replace one number with an odd spelling
            toks = text.split(" ")
            idx = [i for i, t in enumerate(toks) if t[:1].isdigit() or t[:1] == "-"]
            if idx:
                toks[rng.choice(idx)] = rng.choice(NUMBERS)
            text = " ".join(toks)
        elif op == "nest":  # wrap a deep chain of joints around the first End Site
            depth = rng.choice([3, 40, 300])
            chain = "".join(f"JOINT n{d}_{k}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n" for d in range(depth))
            i = text.find("End Site")
            if i >= 0:
                end = text.find("}", i) + 1
                text = text[:i] + chain + text[i:end] + "\n}" * depth + text[end:]
        elif op == "ends":
            text = text.replace("\n", rng.choice(["\r\n", "\r", "\n\n", "\x85\n", "\x0c\n"]))
        elif op == "bom":
            text = "\ufeff" + text
        else:  # frames header
            text = text.replace(
                "Frames:",
                rng.choice(["Frames: 99999999999999 #", "Frames: -1 #", "Frames: +2 #", "Frames: 1e3 #", "Frames:"]),
                1,
            )
    return text


#: the values the edge mutations put in headers, OFFSETs and frame rows
EXTREME = [
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "1e309",
    "-1e309",
    "1e300",
    "1e12",
    "1.0000001e12",
    "-1e12",
    "1e13",
    "nan",
    "inf",
    "5e-324",
    "0",
]
FRAME_COUNTS = ["0", "1", "999999999", "1000000000000", str(2**63), str(2**64), "9" * 40, "", "-0"]
FRAME_TIMES = [
    "1e-9",
    "1e308",
    "-0.0333",
    "-1e-9",
    "0",
    "-0",
    "nan",
    "inf",
    "5e-324",
    "1e-6",
    "9.99e-7",
    "3600",
    "3600.01",
]
CHANNEL_COUNTS = [0, 7, 64, 65536, 99999999, 2**31, 2**63, 10**30]


def _header_line(text: str, key: str, value: str) -> str:
    i = text.find(key)
    if i < 0:
        return text
    j = text.find("\n", i)
    j = len(text) if j < 0 else j
    eol = "\r" if text[j - 1 : j] == "\r" else ""
    return text[:i] + f"{key} {value}{eol}" + text[j:]


def _rows(text: str) -> tuple[str, list[str]]:
    """(the text up to and with the Frame Time line, the frame rows)."""
    i = text.find("Frame Time:")
    j = text.find("\n", i)
    if i < 0 or j < 0:
        return text, []
    return text[: j + 1], text[j + 1 :].split("\n")


def edge(text: str, rng: random.Random, big: bool = True) -> str:
    """One edge mutation of issue #38 (see the module's text); ``big``: the big-file one."""
    op = "big" if big else rng.choice(["frames", "empty", "time", "offset", "value", "channels", "channel-names"])
    if op == "frames":
        return _header_line(text, "Frames:", rng.choice(FRAME_COUNTS))
    if op == "empty":
        head, _ = _rows(text)
        text = _header_line(head, "Frames:", "0")
        return _header_line(text, "Frame Time:", rng.choice(FRAME_TIMES)) if rng.random() < 0.3 else text
    if op == "time":
        return _header_line(text, "Frame Time:", rng.choice(FRAME_TIMES))
    if op == "offset":
        offs = [m.start() for m in re.finditer("OFFSET", text)]
        if not offs:
            return text
        i = rng.choice(offs)
        j = text.find("\n", i)
        j = len(text) if j < 0 else j
        vals = (text[i:j].split()[1:4] + ["0"] * 3)[:3]
        for k in rng.sample(range(3), rng.randint(1, 3)):
            vals[k] = rng.choice(EXTREME)
        eol = "\r" if text[j - 1 : j] == "\r" else ""
        return text[:i] + "OFFSET " + " ".join(vals) + eol + text[j:]
    if op == "value":
        head, rows = _rows(text)
        full = [k for k, r in enumerate(rows) if r.strip()]
        if not full:
            return text
        for _ in range(rng.randint(1, 3)):
            k = rng.choice(full)
            toks = rows[k].split(" ")
            idx = [t for t in range(len(toks)) if toks[t].strip()]
            # the first values of a row are the root's position channels in most clips
            t = idx[rng.randrange(min(3, len(idx)))] if rng.random() < 0.6 else rng.choice(idx)
            toks[t] = rng.choice(EXTREME)
            rows[k] = " ".join(toks)
        return head + "\n".join(rows)
    if op == "channels":
        spans = [m.span() for m in re.finditer(r"CHANNELS\s+\d+", text)]
        if not spans:
            return text
        a, b = rng.choice(spans)
        return text[:a] + f"CHANNELS {rng.choice(CHANNEL_COUNTS)}" + text[b:]
    if op == "channel-names":  # a count with that many names
        spans = [m.span() for m in re.finditer(r"CHANNELS[^\r\n]*", text)]
        if not spans:
            return text
        a, b = rng.choice(spans)
        k = rng.choice([7, 300, 5000, 200_000])
        names = " ".join(rng.choice(["Xrotation", "Yrotation", "Zrotation", "Xposition"]) for _ in range(k))
        return text[:a] + f"CHANNELS {k} {names}" + text[b:]
    # big: the rows repeated to 5-60 MB, the header's count updated (mostly)
    head, rows = _rows(text)
    rows = [r for r in rows if r.strip()]
    if not rows:
        return text
    block = "\n".join(rows) + "\n"
    reps = max(1, rng.choice([5, 20, 60]) * 2**20 // len(block))
    n = len(rows) * reps if rng.random() < 0.9 else len(rows) * reps + rng.choice([-1, 1, 10**6])
    return _header_line(head, "Frames:", str(n)) + block * reps


# ------------------------------------------------------------------------------- worker side
def errors():
    from jointlimits.errors import BVHError

    return (BVHError,)


def read(kind: str, path: str) -> str:
    """Load one file; check an accepted clip (raises AssertionError naming the failed check)."""
    from jointlimits.io import bvh
    from jointlimits.motion.skeleton import forward_kinematics

    m = bvh.load(path)
    assert np.isfinite(m.rotations).all() and np.isfinite(m.positions).all(), f"{fuzzlib.NON_FINITE} motion accepted"
    assert np.isfinite(m.skeleton.offsets).all(), f"{fuzzlib.NON_FINITE} offsets accepted"
    gr, gp = forward_kinematics(m)
    assert np.isfinite(gr).all() and np.isfinite(gp).all(), f"{fuzzlib.NON_FINITE} forward kinematics"
    assert 1e-6 <= m.frame_time <= 3600 and np.isfinite(m.frame_time * m.num_frames), "frame time out of range"
    if Path(path).stat().st_size > ROUND_TRIP_BYTES:
        return f"{m.num_frames} frames (big: not written back)"
    _written_back(m, Path(path).read_bytes().decode("utf-8", "surrogateescape"))
    return f"{m.num_frames} frames"


def _written_back(m, text: str) -> None:
    """Assert that clip ``m``, read from ``text`` and unchanged, is written back as that text and
    reads back equal."""
    from jointlimits.io import bvh

    out = bvh.dumps(m)
    # a file with CR-only line ends (classic Mac OS) is read as LF and written with LF
    same = text.replace("\r", "\n") if "\r" in text[:65536] and "\n" not in text[:65536] else text
    assert out == same, "the text of an unchanged clip was not written back as it was"
    back = bvh.loads(out)
    sk, sk2 = m.skeleton, back.skeleton
    assert sk.names == sk2.names and sk.parents.tolist() == sk2.parents.tolist(), "skeleton changed"
    assert sk.channels == sk2.channels and np.array_equal(sk.offsets, sk2.offsets), "channels/offsets changed"
    assert np.array_equal(bvh.channel_data(m), bvh.channel_data(back)), "channel values changed"
    assert back.frame_time == m.frame_time, "frame time changed"


# ------------------------------------------------------------------- in process (tests/io)
def check(text: str) -> str:
    """'rejected', 'accepted' (and round-tripped), or raise AssertionError / the escaped exception
    (``bvh.loads`` in this process: tests/io/test_bvh_inputs.py runs a sample)."""
    from jointlimits.errors import BVHError
    from jointlimits.io import bvh
    from jointlimits.motion.skeleton import forward_kinematics

    try:
        m = bvh.loads(text, "fuzz.bvh")
    except BVHError as e:
        assert e.line is None or e.line >= 1, f"bad line number {e.line}"
        assert "\n" not in str(e), "multi-line error"
        return "rejected"
    assert np.isfinite(m.rotations).all() and np.isfinite(m.positions).all(), "non-finite motion accepted"
    gr, gp = forward_kinematics(m)
    assert np.isfinite(gr).all() and np.isfinite(gp).all(), "non-finite forward kinematics"
    _written_back(m, text)
    return "accepted"


def run(n: int, seed: int, frames: int, verbose: bool = True) -> Counter:
    """``n`` mutations (edges of issue #38 among them, no big files) checked in this process."""
    counts: Counter = Counter()
    for i, (label, _, _, data) in enumerate(cases(n, seed, frames, big=False)):
        try:
            counts[check(data.decode("utf-8", "surrogateescape"))] += 1
        except AssertionError as e:
            counts[f"check failed: {e}"] += 1
            if verbose:
                print(f"[{i}] {label}: {e}", file=sys.stderr)
        except Exception as e:  # anything but BVHError escaping
            counts[f"escaped {type(e).__name__}"] += 1
            if verbose:
                print(f"[{i}] {label}: {type(e).__name__}: {e}", file=sys.stderr)
    return counts


# ------------------------------------------------------------------------------- parent side
def cases(n: int, seed: int, frames: int, edge_share: float = 0.4, big: bool = True):
    """``(label, kind, name, bytes)`` of each mutated file, made as they are read."""
    seeds = seed_texts(frames)
    if not seeds:
        raise SystemExit(f"no clips under {MOCAP}")
    rng = random.Random(seed)
    for i in range(n):
        name, text = seeds[i % len(seeds)]
        if rng.random() < edge_share:
            bad = edge(text, rng, big=rng.random() < 0.025 and big)
            if rng.random() < 0.3:
                bad = mutate(bad, rng) if len(bad) < 2**20 else bad
        else:
            bad = mutate(text, rng)
        yield f"mutation {i} of {name}", "bvh", f"m{i % 8}.bvh", bad.encode("utf-8", "surrogateescape")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="mutated files")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--frames", type=int, default=12, help="frames kept from each clip")
    args = ap.parse_args()
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        specials = [(label, "bvh", path, None) for label, path in fuzzlib.special_files(scratch)]
        counts = fuzzlib.run_cases(__file__, itertools.chain(cases(args.n, args.seed, args.frames), specials), scratch)
    seconds = time.perf_counter() - t
    bad = fuzzlib.report(
        f"BVH: {args.n} mutations of {len(seed_texts(args.frames))} shared clips, 4 special files", counts, seconds
    )
    fuzzlib.print_summary("bvh", counts, seconds)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

"""Fuzz the BVH reader with mutations of the shared clips and print counts.

Every mutated file must either load or raise ``BVHError`` (anything else escaping is a failure),
and every file that loads must write back as exactly the same text and load again to the same
skeleton and bit-identical channel values. ``tests/test_hardening_bvh.py`` runs a small sample of the same mutations.

    python scripts/fuzz_bvh.py [--n 5000] [--seed 0] [--frames 12]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MOCAP = ROOT.parent / "shared" / "data" / "mocap"

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


def check(text: str) -> str:
    """'rejected', 'accepted' (and round-tripped), or raise AssertionError / the escaped exception."""
    from jointlimits.errors import BVHError
    from jointlimits.io import bvh

    try:
        m = bvh.loads(text, "fuzz.bvh")
    except BVHError as e:
        assert e.line is None or e.line >= 1, f"bad line number {e.line}"
        assert "\n" not in str(e), "multi-line error"
        return "rejected"
    assert np.isfinite(m.rotations).all() and np.isfinite(m.positions).all(), "non-finite motion accepted"
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
    return "accepted"


def run(n: int, seed: int, frames: int, verbose: bool = True) -> Counter:
    seeds = seed_texts(frames)
    if not seeds:
        raise SystemExit(f"no clips under {MOCAP}")
    rng = random.Random(seed)
    counts: Counter = Counter()
    for i in range(n):
        name, text = seeds[i % len(seeds)]
        bad = mutate(text, rng)
        try:
            counts[check(bad)] += 1
        except AssertionError as e:
            counts[f"round-trip failure: {e}"] += 1
            if verbose:
                print(f"[{i}] {name}: {e}", file=sys.stderr)
        except Exception as e:  # anything but BVHError escaping
            counts[f"escaped {type(e).__name__}"] += 1
            if verbose:
                print(f"[{i}] {name}: {type(e).__name__}: {e}", file=sys.stderr)
                traceback.print_exc(limit=3)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="mutated files")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--frames", type=int, default=12, help="frames kept from each clip")
    args = ap.parse_args()
    t = time.perf_counter()
    counts = run(args.n, args.seed, args.frames)
    bad = sum(v for k, v in counts.items() if k not in ("accepted", "rejected"))
    print(
        f"{args.n} mutations of {len(seed_texts(args.frames))} shared clips in {time.perf_counter() - t:.1f} s: "
        f"{counts['rejected']} rejected with BVHError, {counts['accepted']} accepted, written back as the "
        f"same text and round-tripped bit-equal, {bad} failures"
    )
    for k, v in sorted(counts.items()):
        if k not in ("accepted", "rejected"):
            print(f"  {v:6d}  {k}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

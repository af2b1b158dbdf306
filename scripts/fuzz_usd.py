"""Fuzz the USD reader (``jointlimits.io.usd.load``) and print counts per outcome (#39).

Seeds are a shared (or procedural) clip written by ``jointlimits.io.usd.save`` as ``.usda`` and
``.usdc``. Three families, ``--n`` files each:

- ``usda``: text and schema mutations of the ``.usda`` (numbers to NaN / inf / 1e308 / 0, lines
  dropped, duplicated or swapped, tokens and prim types renamed, time samples emptied or given
  extreme time codes, timeCodesPerSecond of 1e-9 or 1e308, a non-UTF-8 byte, sublayers and
  references to files outside the folder);
- ``custom``: the skeleton's ``jointlimits`` customData replaced by every wrong type and depth
  (int, string, list, dict, nested lists 1000 deep, a JSON string whose keys hold wrong types);
- ``usdc``: byte mutations (flips, cuts, splices) of the binary ``.usdc``.

A file that loads must give finite unit rotations, finite positions and finite forward
kinematics; anything but ``FormatError`` (one line) is a failure, so are a hang over 10 s and a
worker whose peak RSS passes 1 GB (usd-core reserves gigabytes of address space it never
touches, so the address-space limit is 8 GB here and the RSS peak is what is checked).

    python scripts/fuzz_usd.py [--n 2000] [--seed 0] [--only usda|custom|usdc]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzzlib


# ------------------------------------------------------------------------------- worker side
def errors():
    from jointlimits.errors import FormatError

    return (FormatError,)


def read(kind: str, path: str) -> str:
    from jointlimits.io import usd
    from jointlimits.motion.skeleton import forward_kinematics

    m = usd.load(path)
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.positions)), "non-finite motion"
    assert np.allclose(np.linalg.norm(m.rotations, axis=-1), 1.0, atol=1e-6), "non-unit rotations"
    assert np.isfinite(m.frame_time) and m.frame_time > 0, "bad frame time"
    g = forward_kinematics(m)
    g = g[0] if isinstance(g, tuple) else g
    assert np.all(np.isfinite(np.asarray(g))), "non-finite forward kinematics"
    return f"{m.rotations.shape}"


# ------------------------------------------------------------------------------- parent side
NUMBER = re.compile(rb"-?\d+\.?\d*(?:[eE][-+]?\d+)?")
ODD_NUMBERS = [b"nan", b"inf", b"-inf", b"1e308", b"-1e308", b"0", b"1e-320", b"9" * 40, b"1e-9"]
WRONG = [
    0,
    -1,
    3.5,
    "abc",
    "",
    [],
    [1, 2],
    [[1, [2, [3]]]],
    {"a": 1},
    None,
    True,
    [["Xrotation"]],
    [[0, [1.0, 2.0]]],
    [[0, "x"]],
    [[999, [0, 0, 0]]],
    [[0, [1e308, 1e308, 1e308]]],
]
KEYS = ["frame_time", "channels", "end_sites", "names", "up", "metres_per_unit", "version"]


def _deep(n: int) -> str:
    """JSON text of a list nested ``n`` deep (written as text: json.dumps cannot nest that far)."""
    return "[" * n + "1" + "]" * n


def seeds(scratch: Path) -> tuple[bytes, bytes, str]:
    """(.usda bytes, .usdc bytes, the customData JSON) of a saved clip."""
    from jointlimits.io import bvh, usd
    from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion

    clips = sorted(fuzzlib.MOCAP.glob("*/*.bvh"))[:1]
    m = bvh.load(clips[0])[:20] if clips else range_of_motion(humanoid_skeleton(), seconds=0.7, fps=30)
    a, c = scratch / "seed.usda", scratch / "seed.usdc"
    usd.save(a, m)
    usd.save(c, m)
    text = a.read_bytes()
    found = re.search(rb'"jointlimits"\s*=\s*"((?:[^"\\]|\\.)*)"', text)
    custom = json.loads(json.loads(b'"' + found.group(1) + b'"')) if found else {}
    return text, c.read_bytes(), json.dumps(custom)


def mutate_usda(text: bytes, rng: random.Random) -> tuple[str, bytes]:
    lines = text.split(b"\n")
    op = rng.randrange(11)
    if op == 0:  # numbers to odd values
        nums = list(NUMBER.finditer(text))
        b = bytearray(text)
        for mt in sorted(rng.sample(nums, min(len(nums), rng.randint(1, 6))), key=lambda x: -x.start()):
            b[mt.start() : mt.end()] = rng.choice(ODD_NUMBERS)
        return "numbers", bytes(b)
    if op == 1:
        k = rng.randrange(len(lines))
        del lines[k : k + rng.randint(1, 5)]
        return "lines dropped", b"\n".join(lines)
    if op == 2:
        k = rng.randrange(len(lines))
        lines[k:k] = lines[k : k + rng.randint(1, 3)]
        return "lines duplicated", b"\n".join(lines)
    if op == 3:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "lines swapped", b"\n".join(lines)
    if op == 4:
        a = rng.choice([b"Skeleton", b"SkelAnimation", b"SkelRoot", b"rotations", b"translations", b"joints", b"quatf"])
        c = rng.choice([b"Xform", b"Scope", b"float3", b"token", b"quath", b"", b"Skeleton", b"double"])
        return "token renamed", text.replace(a, c, rng.randint(1, 3))
    if op == 5:  # time samples emptied or moved to extreme time codes
        return "time samples", re.sub(
            rb"(\n\s*)(-?\d+(?:\.\d+)?):",
            lambda m: m.group(1) + rng.choice([b"1e308", b"-1e308", b"1e-9", b"0", m.group(2)]) + b":",
            text,
        )
    if op == 6:
        v = rng.choice([b"1e-9", b"1e308", b"0", b"-24", b"nan", b"inf"])
        return "timeCodesPerSecond", re.sub(rb"timeCodesPerSecond = [^\n]*", b"timeCodesPerSecond = " + v, text)
    if op == 7:
        k = rng.randrange(len(text))
        return "non-UTF-8 byte", text[:k] + bytes([rng.choice([0x80, 0xFF, 0xC3, 0x00])]) + text[k:]
    if op == 8:
        ref = rng.choice([b"/etc/passwd", b"../outside.usda", b"../../etc/hostname", b"link.usda"])
        return "sublayer outside", text.replace(b"(\n", b"(\n    subLayers = [@" + ref + b"@]\n", 1)
    if op == 9:
        ref = rng.choice([b"/etc/passwd", b"../outside.usda", b"link.usda"])
        return "reference outside", text.replace(
            b"def Skeleton", b'def Skeleton "X" (references = @' + ref + b"@) {}\n    def Skeleton", 1
        )
    b = bytearray(text)
    for _ in range(rng.randint(1, 8)):
        k = rng.randrange(len(b))
        b[k] = rng.randrange(32, 127)
    return "bytes (text)", bytes(b)


def mutate_custom(text: bytes, custom: str, rng: random.Random) -> tuple[str, bytes]:
    d = json.loads(custom)
    op = rng.randrange(4)
    if op == 0:
        k = rng.choice(KEYS)
        if rng.random() < 0.2:
            d[k] = "@DEEP@"
            value: object = json.dumps(d).replace('"@DEEP@"', _deep(rng.choice([50, 1000, 5000])))
        else:
            d[k] = rng.choice(WRONG)
            value = json.dumps(d)
        label = f"key {k}"
    elif op == 1:
        value = _deep(3000) if rng.random() < 0.2 else json.dumps(rng.choice(WRONG))
        label = "whole JSON"
    elif op == 2:
        value = rng.choice(["{", "abc", "[1,2", "\\u0000", "{" * 100000])
        label = "broken JSON"
    else:
        value = None  # a non-string customData: an int, a dict, a list
        label = "non-string"
    if value is None:
        rep = rng.choice([b"12", b"{ int a = 1 }", b"[1, 2]", b"3.5", b'"x"'])
    else:
        rep = json.dumps(str(value)).encode()
    out = re.sub(rb'("jointlimits"\s*=\s*)"(?:[^"\\]|\\.)*"', lambda m: m.group(1) + rep, text, count=1)
    if value is None:
        out = out.replace(
            b'string "jointlimits"',
            rng.choice(
                [b'int "jointlimits"', b'dictionary "jointlimits"', b'int[] "jointlimits"', b'double "jointlimits"']
            ),
            1,
        )
    return f"customData {label}", out


def cases(n: int, seed: int, scratch: Path, only: str | None):
    rng = random.Random(seed)
    usda, usdc, custom = seeds(scratch)
    (scratch.parent / "outside.usda").write_bytes(usda)
    link = scratch / "link.usda"
    if not link.exists():
        link.symlink_to(scratch.parent / "outside.usda")
    out = []
    for label, path in fuzzlib.special_files(scratch):
        out.append((label, "usd", path, None))
    for fam in ("usda", "custom", "usdc"):
        if only and fam != only:
            continue
        for i in range(n):
            if fam == "usda":
                label, data = mutate_usda(usda, rng)
                name = f"m{i}.usda"
            elif fam == "custom":
                label, data = mutate_custom(usda, custom, rng)
                name = f"c{i}.usda"
            else:
                label, data = "usdc " + ("cut" if rng.random() < 0.2 else "bytes"), fuzzlib_bytes(usdc, rng)
                name = f"b{i}.usdc"
            out.append((f"{fam}: {label}", "usd", name, data))
    return out


def fuzzlib_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    op = rng.random()
    if op < 0.2:
        return bytes(b[: rng.randrange(max(1, len(b)))])
    if op < 0.3:  # a block moved
        i, j, k = sorted(rng.randrange(len(b)) for _ in range(3))
        return bytes(b[:i] + b[j:k] + b[i:j] + b[k:])
    for _ in range(rng.randint(1, 8)):
        k = rng.randrange(len(b))
        b[k] = rng.randrange(256) if rng.random() < 0.7 else rng.choice([0x00, 0xFF, 0x7F, 0x80])
    return bytes(b)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="files per family (usda, custom, usdc)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["usda", "custom", "usdc"])
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "in"
        scratch.mkdir()
        # usd-core reserves gigabytes of address space it never touches: the limit is on RSS here
        # (the worker's peak, checked below), the address space capped at 8 GB
        counts = fuzzlib.run_cases(
            __file__, cases(a.n, a.seed, scratch, a.only), scratch, verbose=not a.quiet, memory_bytes=8 << 30
        )
    bad = fuzzlib.report("usd", counts, time.perf_counter() - t, max_peak_mb=1024)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

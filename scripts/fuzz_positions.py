"""Fuzz the joint-positions reader (``jointlimits.io.positions.load_positions``: .csv, .npz,
.npy) and print counts per outcome.

Seeds are hand-made valid files: a shared clip's joint positions computed here by forward
kinematics of its first frames (independent of the library), written as CSV text (a header
``frame,NAME.x,...``, an optional ``# fps:`` line, gaps as empty cells), as an npz (positions,
names, fps) and as an npy. Mutations edit the CSV text (odd numbers, long cells, BOMs, separators,
NUL bytes, cut lines), the arrays (NaN, inf, huge values, shapes, dtypes: complex fps, 0-d names)
or the bytes (truncated, flipped); targeted cases declare huge arrays, hold pickled objects or are
special files. The edge mutations of issue #38 (a quarter of the mutations): an fps of 1e9 or
1e-308 (frame times 1e-9 and 1e308), negative, 0, nan; zero frames; positions of 1e308 and
friends; arrays stored in small types (uint8, int8, int16, bool, float16) whose float64 copy is
just under or over the memory budget (``JOINTLIMITS_MEMORY_BUDGET_MB``, 160 MB), int64 beyond
2^53; and big CSV files (5 to 40 MB of rows).

A file that loads must hold no infinite value (NaN is a missing value) and a finite positive fps
whose frame time times the frame count is finite (positions have no forward kinematics; huge
finite values such as 1e300 are kept as they are, as tests/io/test_positions.py round-trips
them). The last line printed is one JSON object of
counts (``fuzzlib.summary``).

    python scripts/fuzz_positions.py [--n 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import io
import itertools
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_npz
import fuzzlib

NAMES = ["Hips", "Spine", "Head", "LeftHand", "RightHand", "LeftFoot", "RightFoot"]
TOKENS = [
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e309",
    "1e308",
    "5e-324",
    "",
    " ",
    "x",
    "1,5",
    "0x10",
    "1_0",
    "١٢",
    "\x00",
    '"',
    '"a,b"',
    "\ufeff",
    "\r",
    "\t",
    "9" * 400,
    "a" * 140_000,
    "-0",
    ".",
    "e5",
]


# ------------------------------------------------------------------------------- worker side
def errors():
    from jointlimits.io.positions import PositionsError

    return (PositionsError,)


def read(kind: str, path: str) -> str:
    from jointlimits.io.positions import load_positions
    from jointlimits.motion.skeleton import Skeleton

    sk = Skeleton(NAMES, [-1, 0, 1, 1, 1, 0, 0], np.zeros((len(NAMES), 3)))
    jp = load_positions(path, sk)
    pos = jp.positions
    assert not np.any(np.isinf(pos)), f"{fuzzlib.NON_FINITE}: infinite positions accepted"
    assert jp.fps is None or (np.isfinite(jp.fps) and jp.fps > 0), "bad fps accepted"
    if jp.fps is not None:
        assert np.isfinite(jp.num_frames / jp.fps), f"{fuzzlib.NON_FINITE} duration (fps {jp.fps!r})"
    return f"{pos.shape}"


# ------------------------------------------------------------------------------- parent side
def seed_positions(frames: int = 30) -> np.ndarray:
    """[F, 7, 3] positions: random walks around a T-pose (no library code)."""
    rng = np.random.default_rng(2)
    rest = np.array([[0, 90, 0], [0, 110, 0], [0, 160, 0], [-70, 140, 0], [70, 140, 0], [-10, 5, 0], [10, 5, 0]], float)
    p = rest[None] + np.cumsum(rng.normal(0, 0.5, (frames, len(NAMES), 3)), axis=0)
    p[3, 2] = np.nan  # a gap
    return p


def csv_text(p: np.ndarray, fps: float | None = 30.0) -> str:
    out = io.StringIO()
    if fps is not None:
        out.write(f"# fps: {fps!r}\n")
    out.write(",".join(["frame"] + [f"{n}.{a}" for n in NAMES for a in "xyz"]) + "\n")
    for f, row in enumerate(p.reshape(len(p), 3 * len(NAMES))):
        out.write(",".join([str(f)] + ["" if not np.isfinite(v) else repr(float(v)) for v in row]) + "\n")
    return out.getvalue()


def mutate_csv(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        lines = text.split("\n")
        op = rng.random()
        i = rng.randrange(len(lines))
        if op < 0.35:
            cells = lines[i].split(",")
            cells[rng.randrange(len(cells))] = rng.choice(TOKENS)
            lines[i] = ",".join(cells)
        elif op < 0.5:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif op < 0.6:
            lines.insert(i, rng.choice(["", "# fps: x", "# fps: 1e309", "# fps: -1", "# fps: (1+2j)", ",,,,", "frame"]))
        elif op < 0.7:
            del lines[i]
        elif op < 0.8:
            k = rng.randrange(len(text) + 1)
            text = text[:k] + rng.choice(TOKENS) + text[k:]
            continue
        elif op < 0.9:
            text = text.replace(rng.choice([",", "\n", "."]), rng.choice([";", "\r", "\r\n", ",,", "\t"]))
            continue
        else:
            text = "\ufeff" + text
            continue
        text = "\n".join(lines)
    return text


#: the values the edge mutations write as fps (frame times 1e-9 and 1e308, ...) and positions
FPS = ["1e9", "1e-308", "-30", "0", "nan", "inf", "1e-9", "5e-324", "1e6", "1e7", "0.0002", "1e308"]
EXTREME = ["1e308", "-1e308", "1.7976931348623157e308", "1e300", "1e12", "1.0000001e12", "-1e13", "5e-324"]
#: positions stored in small types: (dtype, frames) whose float64 copy (frames x 21 values) is just
#: under (900,000 frames: 151 MB) or over (1,000,000: 168 MB; 5,000,000) the 160 MB budget
SMALL = [("u1", 900_000), ("i1", 1_000_000), ("i2", 900_000), ("?", 1_000_000), ("f2", 900_000), ("u1", 5_000_000)]


def _npz(arrays: dict[str, np.ndarray], compress: bool = True) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return buf.getvalue()


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def edge(p: np.ndarray, rng: random.Random, big: bool = False) -> tuple[str, str, bytes]:
    """One edge mutation of issue #38: (label, extension, bytes)."""
    names = np.array(NAMES)
    if big:  # a CSV of 5-60 MB of rows
        text = csv_text(p)
        head, _, rows = text.partition("\n" + "frame,")
        header, _, body = ("frame," + rows).partition("\n")
        mb = rng.choice([5, 20, 40])
        reps = max(1, mb * 2**20 // len(body))
        return f"csv of {mb} MB", ".csv", (head + "\n" + header + "\n" + body * reps).encode()
    op = rng.choice(["fps", "value", "empty", "small", "int64"])
    fmt = rng.choice([".csv", ".npz", ".npy"]) if op in ("value", "empty") else ".npz" if op == "fps" else None
    if op == "fps":
        fps = rng.choice(FPS)
        if rng.random() < 0.5:
            return f"csv fps {fps}", ".csv", csv_text(p).replace("# fps: 30.0", f"# fps: {fps}", 1).encode()
        return f"npz fps {fps}", ".npz", _npz({"positions": p, "names": names, "fps": np.array(float(fps))})
    if op == "value":
        q = p.copy()
        for _ in range(rng.randint(1, 3)):
            q[rng.randrange(len(q)), rng.randrange(len(NAMES)), rng.randrange(3)] = float(rng.choice(EXTREME))
        data = {".csv": csv_text(q).encode(), ".npz": _npz({"positions": q, "names": names}), ".npy": _npy(q)}
        return f"positions with extreme values ({fmt})", fmt, data[fmt]
    if op == "empty":
        q = p[:0]
        data = {".csv": csv_text(q).encode(), ".npz": _npz({"positions": q, "names": names}), ".npy": _npy(q)}
        return f"zero frames ({fmt})", fmt, data[fmt]
    if op == "small":
        dt, frames = rng.choice(SMALL)
        a = np.zeros((frames, len(NAMES), 3), dt)
        if rng.random() < 0.5:
            return f"npz {frames} frames of {dt}", ".npz", _npz({"positions": a, "names": names})
        return f"npy {frames} frames of {dt}", ".npy", _npy(a)
    q = (p * 1e16).astype(np.int64) if rng.random() < 0.5 else np.full(p.shape, 2**62, np.int64)
    return "int64 positions beyond 2^53", ".npz", _npz({"positions": q, "names": names})


def targeted(p: np.ndarray) -> list[tuple[str, str, bytes]]:
    names = np.array(NAMES)
    good = fuzz_npz.npz_bytes({"positions": p, "names": names, "fps": np.array(30.0)})
    out = [
        (
            "csv cell of 200,000 characters",
            ".csv",
            csv_text(p).replace("frame,", "frame" + "a" * 200_000 + ",", 1).encode(),
        ),
        ("csv header only", ".csv", csv_text(p[:0]).encode()),
        ("csv BOM", ".csv", b"\xef\xbb\xbf" + csv_text(p).encode()),
        ("csv not UTF-8", ".csv", b"\xff\xfe" + csv_text(p).encode()),
        ("csv NUL bytes", ".csv", csv_text(p).replace(",", "\x00,", 3).encode()),
        ("csv empty", ".csv", b""),
        ("npz complex fps", ".npz", fuzz_npz.npz_bytes({"positions": p, "names": names, "fps": np.array(1 + 2j)})),
        ("npz 0-d names", ".npz", fuzz_npz.npz_bytes({"positions": p, "names": np.array("Hips")})),
        ("npz numeric names", ".npz", fuzz_npz.npz_bytes({"positions": p, "names": np.arange(7)})),
        ("npz fps array", ".npz", fuzz_npz.npz_bytes({"positions": p, "names": names, "fps": np.array([30.0, 60.0])})),
        ("npz string positions", ".npz", fuzz_npz.npz_bytes({"positions": np.array([["a"]]), "names": names})),
        ("npz pickled positions", ".npz", fuzz_npz.object_npz("positions")),
        ("npz positions declares 1e12 x 7 x 3", ".npz", fuzz_npz.huge_npz("positions", (10**12, 7, 3))),
        ("npz positions declares 3M x 7 x 3 (bomb)", ".npz", fuzz_npz.huge_npz("positions", (3_000_000, 7, 3))),
        ("npy declares 1e12 x 7 x 3", ".npy", fuzz_npz.npy_header((10**12, 7, 3))),
        ("npy object dtype", ".npy", fuzz_npz.npy_header((2,), "|O") + b"\x80\x04N."),
        ("npy fortran order", ".npy", fuzz_npz.npy_header((2, 7, 3), "<f8", True) + bytes(8 * 42)),
        ("npy big-endian", ".npy", fuzz_npz.npy_header((1, 7, 3), ">f8") + bytes(8 * 21)),
        ("npy bad header", ".npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': ''}   \n"),
        ("npy version 9", ".npy", b"\x93NUMPY\x09\x00" + bytes(100)),
        ("npz empty", ".npz", b""),
    ]
    for cut in (5, len(good) // 2, len(good) - 5):
        out.append((f"npz truncated at {cut}", ".npz", good[:cut]))
    return out


def mutations(n: int, seed: int, p: np.ndarray, arrays: dict, text: str):
    """``(label, kind, name, bytes)`` of each random mutation, made one at a time."""
    rng = random.Random(seed)
    edge_rng = random.Random(seed + 1)
    for i in range(n):
        r = i % 3
        if i % 4 == 3:
            label, ext, data = edge(p, edge_rng, big=edge_rng.random() < 0.04 and n >= 1000)
            yield (f"edge {i}: {label}", "positions", f"m{i % 8}{ext}", data)
            continue
        if r == 0:
            data = mutate_csv(text, rng).encode("utf-8", "surrogatepass")
            name = f"m{i % 8}.csv"
        elif r == 1:
            if rng.random() < 0.75:
                data = fuzz_npz.npz_bytes(fuzz_npz.mutate_arrays(arrays, rng), compress=rng.random() < 0.3)
            else:
                data = fuzz_npz.mutate_bytes(fuzz_npz.npz_bytes(arrays), rng)
            name = f"m{i % 8}.npz"
        else:
            a = fuzz_npz.mutate_arrays({"a": p}, rng).get("a", p)
            data = fuzz_npz.npy_bytes(a) if rng.random() < 0.7 else fuzz_npz.mutate_bytes(fuzz_npz.npy_bytes(p), rng)
            name = f"m{i % 8}.npy"
        yield (f"mutation {i} ({name})", "positions", name, data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="random mutations")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t = time.perf_counter()
    p = seed_positions()
    arrays = {"positions": p, "names": np.array(NAMES), "fps": np.array(30.0)}
    text = csv_text(p)
    cases = [
        ("seed csv", "positions", "s.csv", text.encode()),
        ("seed npz", "positions", "s.npz", fuzz_npz.npz_bytes(arrays)),
        ("seed npy", "positions", "s.npy", fuzz_npz.npy_bytes(p)),
    ]
    cases += [(label, "positions", f"t{i}{ext}", data) for i, (label, ext, data) in enumerate(targeted(p))]
    n_targeted = len(cases) - 3
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        specials = []
        for label, path in fuzzlib.special_files(scratch):
            for ext in (".csv", ".npz", ".npy"):
                link = scratch / f"{label.strip('/').replace('/', '_')}{ext}"
                if path == str(scratch):
                    link.mkdir()
                else:
                    link.symlink_to(path)
                specials.append((f"{label} as {ext}", "positions", str(link), None))
        # the mutations are made as they are read (big ones would not all fit in memory)
        todo = itertools.chain(cases, mutations(args.n, args.seed, p, arrays, text), specials)
        counts = fuzzlib.run_cases(__file__, todo, scratch)
    seconds = time.perf_counter() - t
    bad = fuzzlib.report(
        f"positions (csv, npz, npy): 3 seeds, {n_targeted + 12} targeted, {args.n} mutations", counts, seconds
    )
    fuzzlib.print_summary("positions", counts, seconds)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

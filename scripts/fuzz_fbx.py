"""Fuzz the FBX reader (``jointlimits.io.fbx.load`` through Blender's importer) and print counts
per outcome (#39).

Seeds are FBX files written by ``jointlimits.io.fbx.save``: a procedural clip and, when the
shared clips are present, the first 20 frames of two of them (other skeletons). Three families,
``--n`` files each:

- ``bytes``: byte flips, cuts and moved blocks of the binary file;
- ``struct``: the file parsed into its node tree (this script's own small FBX 7.x binary
  reader and writer), mutated and written back: numbers and array elements to NaN / inf /
  1e308 / extreme integers, key times to extreme or reversed values, array headers that lie
  (length, encoding, compressed size), nodes dropped, duplicated, moved, renamed, property type
  codes changed, connections turned into cycles or pointed at nothing, node headers that lie
  (end offset, property count), the scene's frame rate, time span and unit scale to odd values;
- ``custom``: the armature's ``jointlimits`` custom property (a JSON string) replaced by every
  wrong type and depth (as ``scripts/fuzz_usd.py`` does for USD's customData).

The worker is the Python that has bpy (``JOINTLIMITS_BLENDER_PYTHON``): it imports bpy once and
reads every file in-process (``fbx.load``: an empty scene, then Blender's importer), so one
Blender start serves the whole run. A file that loads must give finite unit rotations, finite
positions, a positive frame time and finite forward kinematics; anything but ``FormatError``
(one line) is a failure, so are a hang over 10 s and a worker whose peak RSS passes 1 GB (bpy
reserves gigabytes of address space it never touches: the address-space limit is 8 GB here and
the RSS peak is what is checked).

    JOINTLIMITS_BLENDER_PYTHON=/path/to/python-with-bpy \\
        python scripts/fuzz_fbx.py [--n 1000] [--seed 0] [--only bytes|struct|custom] [--seeds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzzlib

ENV = "JOINTLIMITS_BLENDER_PYTHON"


# ------------------------------------------------------------------------------- worker side
def errors():
    import bpy  # noqa: F401  (imported once at the worker's start, not in the first file's time)

    from jointlimits.errors import FormatError
    from jointlimits.io import fbx  # noqa: F401

    return (FormatError,)


def read(kind: str, path: str) -> str:
    import jointlimits
    from jointlimits.io import fbx
    from jointlimits.motion.skeleton import forward_kinematics

    src = fuzzlib.ROOT / "src"
    if not Path(jointlimits.__file__).resolve().is_relative_to(src):
        raise RuntimeError(f"the worker imports jointlimits from {jointlimits.__file__}, not {src}")
    if not fbx.in_process():
        raise RuntimeError("the worker's Python has no bpy")
    m = fbx.load(path)
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.positions)), "non-finite motion"
    assert np.allclose(np.linalg.norm(m.rotations, axis=-1), 1.0, atol=1e-6), "non-unit rotations"
    assert np.isfinite(m.frame_time) and m.frame_time > 0, "bad frame time"
    g = forward_kinematics(m)
    g = g[0] if isinstance(g, tuple) else g
    assert np.all(np.isfinite(np.asarray(g))), "non-finite forward kinematics"
    return f"{m.rotations.shape}"


# ------------------------------------------------------------- FBX binary: node tree in and out
MAGIC = b"Kaydara FBX Binary  \x00\x1a\x00"
SCALAR = {"Y": "<h", "C": "<B", "I": "<i", "F": "<f", "D": "<d", "L": "<q"}
ARRAY = {"f": "<f4", "d": "<f8", "l": "<i8", "i": "<i4", "b": "<u1"}
SENTINEL = b"\0" * 13


class Node:
    """One node record: name, properties ``[code, value]`` (arrays as ``[code, ndarray, encoding]``,
    or ``["raw", bytes]`` written as is), children, and whether a null record ends its children.
    ``lie`` holds header fields written wrong on purpose (``end``, ``nprops``, ``plen``)."""

    def __init__(self, name: bytes, props: list, kids: list, sentinel: bool):
        self.name, self.props, self.kids, self.sentinel = name, props, kids, sentinel
        self.lie: dict[str, int] = {}

    def copy(self) -> Node:
        n = Node(self.name, [list(p) for p in self.props], [k.copy() for k in self.kids], self.sentinel)
        for p in n.props:
            if isinstance(p[1], np.ndarray):
                p[1] = p[1].copy()
        return n


def parse(data: bytes) -> tuple[int, list[Node], bytes]:
    """(version, top-level nodes, footer bytes after the top-level null record)."""
    if not data.startswith(MAGIC):
        raise ValueError("not a binary FBX file")
    version = struct.unpack("<I", data[23:27])[0]
    wide = version >= 7500
    head = "<QQQB" if wide else "<IIIB"
    hsize = struct.calcsize(head)

    def node(o: int) -> tuple[Node | None, int]:
        end, nprops, plen, nlen = struct.unpack(head, data[o : o + hsize])
        if end == 0:
            return None, o + hsize
        q = o + hsize
        name = data[q : q + nlen]
        q += nlen
        props: list = []
        for _ in range(nprops):
            c = chr(data[q])
            q += 1
            if c in SCALAR:
                fmt = SCALAR[c]
                props.append([c, struct.unpack(fmt, data[q : q + struct.calcsize(fmt)])[0]])
                q += struct.calcsize(fmt)
            elif c in ARRAY:
                n, enc, clen = struct.unpack("<III", data[q : q + 12])
                raw = data[q + 12 : q + 12 + clen]
                q += 12 + clen
                buf = zlib.decompress(raw) if enc == 1 else raw
                props.append([c, np.frombuffer(buf, ARRAY[c], n).copy(), enc])
            elif c in "SR":
                n = struct.unpack("<I", data[q : q + 4])[0]
                props.append([c, data[q + 4 : q + 4 + n]])
                q += 4 + n
            else:
                raise ValueError(f"property type {c!r}")
        kids, sentinel = [], False
        while q < end:
            if data[q : q + hsize] == b"\0" * hsize:
                sentinel, q = True, q + hsize
                break
            kid, q = node(q)
            assert kid is not None
            kids.append(kid)
        return Node(name, props, kids, sentinel), end

    nodes, o = [], 27
    while True:
        n, o = node(o)
        if n is None:
            break
        nodes.append(n)
    return version, nodes, data[o:]


def _prop_bytes(p: list) -> bytes:
    c = p[0]
    if c == "raw":
        return p[1]
    if c in SCALAR:
        fmt = SCALAR[c]
        v = p[1]
        if fmt[-1] in "hBiq":
            bits = 8 * struct.calcsize(fmt)
            v = int(v) & ((1 << bits) - 1)
            if fmt[-1] != "B" and v >= 1 << (bits - 1):
                v -= 1 << bits
        return c.encode() + struct.pack(fmt, v)
    if c in ARRAY:
        a = np.ascontiguousarray(p[1], ARRAY[c])
        raw = a.tobytes()
        enc = p[2]
        body = zlib.compress(raw, 1) if enc == 1 else raw  # level 1, as Blender writes
        return c.encode() + struct.pack("<III", a.size, enc, len(body)) + body
    return c.encode() + struct.pack("<I", len(p[1])) + p[1]


def write(version: int, nodes: list[Node], footer: bytes) -> bytes:
    wide = version >= 7500
    head = "<QQQB" if wide else "<IIIB"
    hsize = struct.calcsize(head)
    out = bytearray(MAGIC + struct.pack("<I", version))

    def put(n: Node) -> None:
        start = len(out)
        props = b"".join(_prop_bytes(p) for p in n.props)
        out.extend(b"\0" * hsize)
        out.extend(n.name[:255])
        out.extend(props)
        for k in n.kids:
            put(k)
        if n.kids or n.sentinel:
            out.extend(b"\0" * hsize)
        end = len(out) + n.lie.get("end", 0)
        nprops = len(n.props) + n.lie.get("nprops", 0)
        plen = len(props) + n.lie.get("plen", 0)
        mask = (1 << (8 * (hsize - 1) // 3)) - 1
        out[start : start + hsize] = struct.pack(head, end & mask, nprops & mask, plen & mask, len(n.name[:255]))

    for n in nodes:
        put(n)
    out.extend(b"\0" * hsize)
    out.extend(footer)
    return bytes(out)


def walk(nodes: list[Node], parent: Node | None = None):
    """Every (node, its parent's children list) pair, depth first."""
    for n in nodes:
        yield n, nodes
        yield from walk(n.kids, n)


# ------------------------------------------------------------------------------- parent side
ODD_FLOAT = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 0.0, 5e-324, 1e30, -1.0]
ODD_INT = [0, -1, 1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 2**40, 46186158000 * 10**6]
KTIME_SECOND = 46186158000  # FBX time units per second


def _odd(c: str, rng: random.Random):
    return rng.choice(ODD_FLOAT) if c in "FDfd" else rng.choice(ODD_INT)


def _props_of(nodes: list[Node], codes: str) -> list[tuple[Node, list]]:
    return [(n, p) for n, _ in walk(nodes) for p in n.props if p[0] in codes]


def _named(nodes: list[Node], name: bytes) -> list[Node]:
    return [n for n, _ in walk(nodes) if n.name == name]


def _p70(nodes: list[Node], key: bytes) -> list[list]:
    """The ``P`` records (their property lists) named ``key`` in any Properties70."""
    return [n.props for n in _named(nodes, b"P") if n.props and n.props[0][0] == "S" and n.props[0][1] == key]


def mutate_struct(version: int, tree: list[Node], rng: random.Random) -> tuple[str, list[Node], int]:
    nodes = [n.copy() for n in tree]
    op = rng.randrange(14)
    if op == 0:
        cands = _props_of(nodes, "YCIFDL")
        _, p = rng.choice(cands)
        p[1] = _odd(p[0], rng)
        return "number", nodes, version
    if op == 1:
        cands = [(n, p) for n, p in _props_of(nodes, "fdlib") if p[1].size]
        _, p = rng.choice(cands)
        k = rng.randrange(p[1].size)
        v = _odd(p[0], rng)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                p[1][k : k + rng.randint(1, 4)] = v
        except (OverflowError, ValueError):
            p[1][k] = 0
        return "array values", nodes, version
    if op == 2:
        cands = _props_of(nodes, "fdlib")
        n, p = rng.choice(cands)
        a = np.ascontiguousarray(p[1], ARRAY[p[0]])
        raw = a.tobytes()
        body = zlib.compress(raw) if p[2] == 1 else raw
        how = rng.randrange(4)
        if how == 0:
            length = rng.choice([0, a.size + 1, a.size * 2, 2**28, 2**32 - 1])
            hdr = (length, p[2], len(body))
        elif how == 1:
            hdr = (a.size, rng.choice([1 - p[2], 2, 255]), len(body))
        elif how == 2:
            clen = max(0, len(body) + rng.choice([-4, -1, 1, 8]))
            body = body[:clen] + b"\0" * max(0, clen - len(body))
            hdr = (a.size, p[2], clen)
        else:
            body = zlib.compress(b"\0" * (8 * 2**20))  # 8 MB of zeros behind a small length
            hdr = (a.size, 1, len(body))
        i = n.props.index(p)
        n.props[i] = ["raw", p[0].encode() + struct.pack("<III", *hdr) + body]
        return "array header", nodes, version
    if op == 3:
        curves = _named(nodes, b"KeyTime")
        how = rng.randrange(5)
        for kt in rng.sample(curves, rng.randint(1, len(curves))):
            t = kt.props[0][1]
            if how == 0:
                t[-1] = rng.choice([2**62, 2**63 - 1, KTIME_SECOND * 10**7])
            elif how == 1:
                t[:] = t * rng.choice([10**6, 10**9, -1])
            elif how == 2:
                t[:] = t[::-1]
            elif how == 3:
                t[:] = t[0]
            else:
                t[0] = -(2**62)
        return "key times", nodes, version
    if op in (4, 5, 6):
        pairs = [(n, sib) for n, sib in walk(nodes)]
        n, sib = rng.choice(pairs)
        if op == 4:
            sib.remove(n)
            return "node dropped", nodes, version
        if op == 5:
            sib.insert(sib.index(n), n.copy())
            return "node duplicated", nodes, version
        sib.remove(n)
        target = rng.choice([m for m, _ in walk(nodes)] or [None])
        (target.kids if target is not None else nodes).append(n)
        return "node moved", nodes, version
    if op == 7:
        pairs = list(walk(nodes))
        names = sorted({n.name for n, _ in pairs})
        rng.choice(pairs)[0].name = rng.choice(names + [b"", b"\xff\xfe", b"X" * 255])
        return "node renamed", nodes, version
    if op == 8:
        n = rng.choice([m for m, _ in walk(nodes) if m.props])
        i = rng.randrange(len(n.props))
        c = rng.choice(list("YCIFDLSR") + ["d", "l"])
        n.props[i] = [c, b"x"] if c in "SR" else ([c, np.zeros(3), 0] if c in "dl" else [c, 1])
        return "property type", nodes, version
    if op == 9:
        conns = _named(nodes, b"C")
        ids = [p[1] for c in conns for p in c.props[1:3] if p[0] == "L"]
        for c in rng.sample(conns, rng.randint(1, min(8, len(conns)))):
            how = rng.randrange(4)
            if how == 0:
                c.props[2][1] = c.props[1][1]  # a node parented to itself
            elif how == 1:
                c.props[1][1], c.props[2][1] = c.props[2][1], c.props[1][1]  # parent and child swapped: a cycle
            elif how == 2:
                c.props[rng.choice([1, 2])][1] = rng.choice([0, -1, 123456789, 2**63 - 1])
            else:
                c.props[2][1] = rng.choice(ids)
        return "connections", nodes, version
    if op == 10:
        n = rng.choice([m for m, _ in walk(nodes)])
        field = rng.choice(["end", "nprops", "plen"])
        n.lie[field] = rng.choice([-13, -1, 1, 7, 1 << 20, -(1 << 30)])
        return f"header {field}", nodes, version
    if op == 11:
        key = rng.choice(
            [b"CustomFrameRate", b"TimeMode", b"TimeSpanStart", b"TimeSpanStop", b"UnitScaleFactor", b"UpAxis"]
        )
        for props in _p70(nodes, key):
            if len(props) > 4 and props[4][0] in SCALAR:
                props[4][1] = _odd(props[4][0], rng) if key != b"TimeMode" else rng.choice([0, 14, 99, -1, 2**31 - 1])
        return f"scene {key.decode()}", nodes, version
    if op == 12:
        for props in rng.sample(_p70(nodes, b"Lcl Translation") + _p70(nodes, b"Lcl Rotation"), 3):
            for p in props[4:]:
                if p[0] in "FD":
                    p[1] = rng.choice(ODD_FLOAT)
        return "node transforms", nodes, version
    strings = _props_of(nodes, "S")
    _, p = rng.choice(strings)
    p[1] = rng.choice([b"", b"\xff\xfe\x80", b"\x00\x01" * 3, b"A" * 100000, p[1] + b"\x00\x01Model"])
    return "string", nodes, version


def _custom_nodes(nodes: list[Node]) -> list[list]:
    return _p70(nodes, b"jointlimits")


def mutate_custom(version: int, tree: list[Node], footer: bytes, rng: random.Random) -> tuple[str, bytes]:
    import fuzz_usd

    nodes = [n.copy() for n in tree]
    props = _custom_nodes(nodes)[0]
    d = json.loads(props[4][1].decode())
    op = rng.randrange(4)
    if op == 0:
        k = rng.choice([*fuzz_usd.KEYS, "object"])
        if rng.random() < 0.2:
            d[k] = "@DEEP@"
            value = json.dumps(d).replace('"@DEEP@"', fuzz_usd._deep(rng.choice([50, 1000, 5000])))
        else:
            d[k] = rng.choice(fuzz_usd.WRONG)
            value = json.dumps(d)
        label = f"key {k}"
    elif op == 1:
        value = fuzz_usd._deep(3000) if rng.random() < 0.2 else json.dumps(rng.choice(fuzz_usd.WRONG))
        label = "whole JSON"
    elif op == 2:
        value = rng.choice(["{", "abc", "[1,2", "\\u0000", "{" * 100000, '{"frame_time": 1e999}'])
        label = "broken JSON"
    else:  # the property as a number or a list instead of a string
        props[1][1], props[2][1] = rng.choice([(b"int", b"Integer"), (b"double", b"Number"), (b"Vector", b"")])
        props[4:] = [["I", 7]] if props[1][1] == b"int" else [["D", 2.5]] * (3 if props[1][1] == b"Vector" else 1)
        return "customData non-string", write(version, nodes, footer)
    props[4][1] = value.encode()
    return f"customData {label}", write(version, nodes, footer)


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    b = bytearray(data)
    op = rng.random()
    if op < 0.15:
        return "cut", bytes(b[: rng.randrange(max(1, len(b)))])
    if op < 0.25:
        i, j, k = sorted(rng.randrange(len(b)) for _ in range(3))
        return "block moved", bytes(b[:i] + b[j:k] + b[i:j] + b[k:])
    for _ in range(rng.randint(1, 8)):
        k = rng.randrange(len(b))
        b[k] = rng.randrange(256) if rng.random() < 0.7 else rng.choice([0x00, 0xFF, 0x7F, 0x80])
    return "flips", bytes(b)


def seeds(scratch: Path, count: int) -> list[bytes]:
    """FBX files written by ``fbx.save``: a procedural clip, then 20 frames of shared clips."""
    from jointlimits.io import bvh, fbx
    from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion

    clips = [range_of_motion(humanoid_skeleton(), seconds=0.7, fps=30)]
    for folder in ("lafan1", "bandai_namco", "cmu_secondlife"):
        found = sorted((fuzzlib.MOCAP / folder).glob("*.bvh"))[:1]
        clips += [bvh.load(found[0])[:20]] if found else []
    out = []
    for i, m in enumerate(clips[:count]):
        path = scratch / f"seed{i}.fbx"
        fbx.save(path, m)
        out.append(path.read_bytes())
    return out


def cases(n: int, seed: int, scratch: Path, only: str | None, nseeds: int):
    rng = random.Random(seed)
    files = seeds(scratch, nseeds)
    parsed = [parse(f) for f in files]
    for f, (v, t, foot) in zip(files, parsed):
        assert write(v, t, foot) == f, "the FBX writer does not give back the seed's bytes"
    out: list = []
    for i, f in enumerate(files):
        name = f"s{i}.fbx"
        out.append((f"seed {i}", "fbx", name, f))
    for label, path in fuzzlib.special_files(scratch):
        out.append((label, "fbx", path, None))
    for fam in ("bytes", "struct", "custom"):
        if only and fam != only:
            continue
        for i in range(n):
            k = rng.randrange(len(files))
            v, tree, foot = parsed[k]
            if fam == "bytes":
                label, data = mutate_bytes(files[k], rng)
            elif fam == "struct":
                label, nodes, v2 = mutate_struct(v, tree, rng)
                data = write(v2, nodes, foot)
            else:
                label, data = mutate_custom(v, tree, foot, rng)
            out.append((f"{fam}: {label}", "fbx", f"{fam[0]}{i}.fbx", data))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="files per family (bytes, struct, custom)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["bytes", "struct", "custom"])
    ap.add_argument("--seeds", type=int, default=3, help="seed files (1: the procedural clip only)")
    ap.add_argument("--write-case", nargs=2, metavar=("I", "PATH"), help="write case I (as printed) to PATH and stop")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    py = os.environ.get(ENV, "")
    if not py or not os.path.isfile(py):
        print(f"fuzz_fbx: set {ENV} to a Python that has bpy", file=sys.stderr)
        return 2
    t = time.perf_counter()
    fuzzlib.PYTHON = py  # the worker runs where bpy imports: one Blender start for every file
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "in"
        scratch.mkdir()
        cs = cases(a.n, a.seed, scratch, a.only, a.seeds)
        print(f"{len(cs)} files ({time.perf_counter() - t:.0f} s to write the seeds and mutations)", flush=True)
        if a.write_case:
            label, _, name, data = cs[int(a.write_case[0])]
            Path(a.write_case[1]).write_bytes(data if data is not None else b"")
            print(f"case {a.write_case[0]} ({label}) written to {a.write_case[1]}")
            return 0
        counts = fuzzlib.run_cases(__file__, cs, scratch, verbose=not a.quiet, memory_bytes=8 << 30)
    bad = fuzzlib.report("fbx", counts, time.perf_counter() - t, max_peak_mb=1024)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

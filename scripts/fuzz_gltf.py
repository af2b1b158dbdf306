"""Fuzz the glTF / GLB reader (``jointlimits.io.gltf.load``) and print counts per outcome.

Seeds are a hand-made valid glTF built here as JSON (a three-joint skin, an animation with
LINEAR, STEP and CUBICSPLINE samplers, a sparse accessor, the buffer embedded as a data URI or
as the GLB binary chunk), and GLB files of two shared clips written by ``jointlimits.io.gltf.save``
(real files with this package's extras). Mutations edit the JSON tree (indices out of range or
negative, cycles in ``children``, two parents, NaN / Infinity / huge numbers in matrices,
translations and keys, wrong types, keys deleted, ``extras`` garbled) or the binary chunk and GLB
header (bytes flipped, lengths changed, cut short). The edge mutations (#38): sampler key times
scaled by 1e4 .. 1e308, negated, reversed, NaN, all equal, for every sampler or one alone (its
span unlike the others'); translation keys and node translations of 1e308 and friends; declared
accessor counts from 0 to far past the buffer; frame times at the edges; samplers of up to a
million real keys over spans up to 1e30 s. A file that loads must give finite unit rotations,
finite positions and forward kinematics, and save as BVH. The last line of output is a JSON
summary (``fuzzlib.summary``).

    python scripts/fuzz_gltf.py [--n 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import base64
import copy
import itertools
import json
import random
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzzlib

SEEDS = Path(tempfile.gettempdir()) / "jointlimits-fuzz-seeds" / "gltf"
CLIPS = ["lafan1/dance1_subject1.bvh", "bandai_namco/dataset-1_bow_normal_001.bvh"]
ODD = [float("nan"), float("inf"), -1, 0, 1, 2**31, 2**70, 1e308, -1e308, 5e-324, None, "x", True, [], {}, [0] * 16]


# ------------------------------------------------------------------------------- worker side
def errors():
    from jointlimits.errors import FormatError

    return (FormatError,)


def read(kind: str, path: str) -> str:
    from jointlimits.io import bvh, gltf
    from jointlimits.motion.skeleton import forward_kinematics

    m = gltf.load(path)
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.positions)), "non-finite motion"
    assert np.allclose(np.linalg.norm(m.rotations, axis=-1), 1.0, atol=1e-6), "non-unit rotations"
    assert np.all(np.isfinite(m.skeleton.offsets)), "non-finite offsets"
    gr, gp = forward_kinematics(m)
    assert np.all(np.isfinite(gr)) and np.all(np.isfinite(gp)), "non-finite forward kinematics"
    out = Path(path).with_suffix(".out.bvh")
    try:
        bvh.save(out, m)  # what a malformed extras.channels used to break
    finally:
        out.unlink(missing_ok=True)
    return f"{m.rotations.shape}"


# ------------------------------------------------------------------------------- parent side
def _f32(a) -> bytes:
    return np.asarray(a, "<f4").tobytes()


def hand_made() -> tuple[dict, bytes]:
    """A valid three-joint glTF (JSON, binary buffer)."""
    blob = bytearray()
    views, accs = [], []

    def add(data: bytes, count: int, typ: str, comp: int = 5126, **kw) -> int:
        while len(blob) % 4:
            blob.append(0)
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)})
        blob.extend(data)
        accs.append({"bufferView": len(views) - 1, "componentType": comp, "count": count, "type": typ, **kw})
        return len(accs) - 1

    t = add(_f32([0, 0.1, 0.2, 0.3]), 4, "SCALAR", min=[0], max=[0.3])
    r = np.array([[0, 0, 0, 1], [0, 0.2, 0, 0.98], [0, 0.4, 0, 0.917], [0, 0.5, 0, 0.866]])
    r /= np.linalg.norm(r, axis=1, keepdims=True)
    rot = add(_f32(r), 4, "VEC4")
    pos = add(_f32([[0, 1, 0], [0.1, 1, 0], [0.2, 1, 0], [0.3, 1, 0]]), 4, "VEC3")
    cub = add(_f32(np.repeat(r, 3, axis=0)), 12, "VEC4")
    step = add(_f32(r), 4, "VEC4")
    # a sparse accessor: zeros with two replaced elements
    idx_view = len(views)
    views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": 8})
    blob.extend(struct.pack("<II", 1, 3))
    val_view = len(views)
    views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": 24})
    blob.extend(_f32([[0, 0.1, 0], [0, 0.2, 0]]))
    accs.append(
        {
            "componentType": 5126,
            "count": 4,
            "type": "VEC3",
            "sparse": {
                "count": 2,
                "indices": {"bufferView": idx_view, "componentType": 5125},
                "values": {"bufferView": val_view},
            },
        }
    )
    sparse = len(accs) - 1
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [
            {"name": "root", "children": [1], "translation": [0, 1, 0]},
            {"name": "spine", "children": [2], "translation": [0, 0.5, 0], "rotation": [0, 0, 0, 1]},
            {"name": "head", "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0.3, 0, 1]},
        ],
        "skins": [{"joints": [0, 1, 2]}],
        "animations": [
            {
                "samplers": [
                    {"input": t, "output": rot},
                    {"input": t, "output": pos, "interpolation": "STEP"},
                    {"input": t, "output": cub, "interpolation": "CUBICSPLINE"},
                    {"input": t, "output": step, "interpolation": "LINEAR"},
                    {"input": t, "output": sparse},
                ],
                "channels": [
                    {"sampler": 0, "target": {"node": 1, "path": "rotation"}},
                    {"sampler": 1, "target": {"node": 0, "path": "translation"}},
                    {"sampler": 2, "target": {"node": 2, "path": "rotation"}},
                    {"sampler": 3, "target": {"node": 0, "path": "rotation"}},
                    {"sampler": 4, "target": {"node": 2, "path": "translation"}},
                ],
            }
        ],
        "accessors": accs,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob)}],
    }
    return doc, bytes(blob)


def glb(doc: dict, blob: bytes) -> bytes:
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    bn = blob + b"\x00" * (-len(blob) % 4)
    body = struct.pack("<I4s", len(js), b"JSON") + js + struct.pack("<I4s", len(bn), b"BIN\x00") + bn
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


def gltf_text(doc: dict, blob: bytes) -> bytes:
    d = copy.deepcopy(doc)
    d["buffers"] = [
        {"byteLength": len(blob), "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}
    ]
    return json.dumps(d).encode()


def split_glb(data: bytes) -> tuple[dict, bytes]:
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + n])
    rest = data[20 + n :]
    m = struct.unpack_from("<I", rest, 0)[0]
    return doc, rest[8 : 8 + m]


def clip_seeds() -> list[tuple[str, dict, bytes]]:
    """GLBs of two shared clips (first 60 frames) written by jointlimits.io.gltf.save, cached."""
    SEEDS.mkdir(parents=True, exist_ok=True)
    out = []
    for i, rel in enumerate(CLIPS):
        src = fuzzlib.MOCAP / rel
        dst = SEEDS / f"clip{i}.glb"
        if src.exists() and not dst.exists():
            code = (
                "import sys; from jointlimits.io import bvh, gltf; "
                f"m = bvh.load({str(src)!r})[:60]; gltf.save({str(dst)!r}, m)"
            )
            subprocess.run([fuzzlib.PYTHON, "-c", code], env={"PYTHONPATH": str(fuzzlib.ROOT / "src")}, check=False)
        if dst.exists():
            doc, blob = split_glb(dst.read_bytes())
            out.append((dst.stem, doc, blob))
    return out


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list) and node and not isinstance(node[0], (int, float)):
        for i in random.sample(range(len(node)), min(len(node), 4)):
            yield from _paths(node[i], prefix + (i,))
    elif isinstance(node, list):
        for i in {0, len(node) - 1}:
            yield prefix + (i,)


def _get(d, path):
    for k in path:
        d = d[k]
    return d


def mutate_doc(doc: dict, rng: random.Random) -> dict:
    d = copy.deepcopy(doc)
    nn = len(d.get("nodes", []))
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        try:
            if op < 0.15 and nn > 1:  # a cycle, or a second parent
                a, b = rng.randrange(nn), rng.randrange(nn)
                d["nodes"][a].setdefault("children", []).append(b)
            elif op < 0.25:
                a = rng.choice(d.get("accessors") or [{}])
                a[rng.choice(["count", "bufferView", "byteOffset", "componentType", "type"])] = rng.choice(
                    ODD + [10**9, 3]
                )
            elif op < 0.35:
                v = rng.choice(d.get("bufferViews") or [{}])
                v[rng.choice(["buffer", "byteOffset", "byteLength", "byteStride"])] = rng.choice(ODD + [10**9, 1, 3])
            elif op < 0.45:
                n = rng.choice(d["nodes"])
                key = rng.choice(["translation", "rotation", "scale", "matrix"])
                size = {"translation": 3, "rotation": 4, "scale": 3, "matrix": 16}[key]
                n[key] = [rng.choice([0.0, 1.0, float("nan"), float("inf"), 1e308, 1e-320]) for _ in range(size)]
            elif op < 0.55:
                ex = d.setdefault("extras", {}).setdefault("jointlimits", {})
                key = rng.choice(["channels", "end_sites", "skin", "frame_time", "metres_per_unit", "up"])
                ex[key] = rng.choice(ODD + [[["Xrotation"]], [["bad"]] * 3, [[0, [1, 2, 3]]], [[99, [0, 0, 0]]], "+q"])
            else:
                paths = [p for p in _paths(d) if p]
                p = rng.choice(paths)
                parent = _get(d, p[:-1])
                if rng.random() < 0.8:
                    parent[p[-1]] = copy.deepcopy(rng.choice(ODD))
                elif isinstance(parent, dict):
                    del parent[p[-1]]
                else:
                    parent.pop(p[-1])
        except (KeyError, IndexError, TypeError, AttributeError):
            pass
    return d


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    if rng.random() < 0.3:
        return bytes(b[: rng.randrange(max(1, len(b)))])
    for _ in range(rng.randint(1, 6)):
        k = rng.randrange(len(b))
        b[k] = rng.randrange(256)
    return bytes(b)


# --------------------------------------------------------------------------- #38 edge mutations
#: what key times become: scaled (1e4 .. 1e308: past 3.4e38 float32 is inf), negated, reversed,
#: a NaN or inf, all equal, shifted far, one key huge, two keys swapped
TIME_EDITS = ["scale", "negate", "negate-reverse", "reverse", "nan", "inf", "equal", "shift", "one-huge", "swap"]
#: what translation outputs and node translations become
HUGE = [1e308, -1e308, 3.4e38, 1e20, 1e13, 1e12, -1e12, float("inf"), float("nan")]


def _floats(doc: dict, index: int) -> tuple[int, int] | None:
    """(byte offset, value count) of a tightly packed float32 accessor, or None."""
    try:
        a = doc["accessors"][index]
        v = doc["bufferViews"][a["bufferView"]]
        if a.get("componentType") != 5126 or v.get("byteStride") or "sparse" in a:
            return None
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[a["type"]]
        return v.get("byteOffset", 0) + a.get("byteOffset", 0), int(a["count"]) * width
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _append(doc: dict, blob: bytearray, values: np.ndarray, typ: str) -> int:
    """A new float32 accessor (and view) of ``values`` [n, width] at the end of ``blob``."""
    while len(blob) % 4:
        blob.append(0)
    data = _f32(values)
    doc["bufferViews"].append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)})
    blob.extend(data)
    doc["accessors"].append(
        {"bufferView": len(doc["bufferViews"]) - 1, "componentType": 5126, "count": len(values), "type": typ}
    )
    doc["buffers"][0]["byteLength"] = len(blob)
    return len(doc["accessors"]) - 1


def edit_times(t: np.ndarray, how: str, rng: random.Random) -> np.ndarray:
    t = t.astype(np.float64)
    with np.errstate(all="ignore"):
        if how == "scale":
            return t * 10 ** rng.uniform(4, 308)
        if how == "negate":
            return -t
        if how == "negate-reverse":
            return -t[::-1]
        if how == "reverse":
            return t[::-1].copy()
        if how in ("nan", "inf"):
            t[rng.randrange(t.size)] = np.nan if how == "nan" else rng.choice([np.inf, -np.inf])
        elif how == "equal":
            t[:] = t[0]
        elif how == "shift":
            t += rng.choice([1e4, 1e7, 1e30, -1e30])
        elif how == "one-huge":
            t[-1] = rng.choice([1e6, 1e9, 1e30, 3e38])
        elif how == "swap" and t.size > 1:
            t[[0, -1]] = t[[-1, 0]]
    return t


def mutate_anim(doc: dict, blob: bytes, rng: random.Random) -> tuple[dict, bytes]:
    """One #38 edge edit of the animation: its key times (of one sampler alone, or of every
    sampler sharing them), translation outputs to huge values, declared accessor counts from 0 to
    far beyond the buffer, a frame time at the edges, node translations of 1e308, or a sampler of
    10^3 .. 10^6 real keys over spans up to 1e30 s."""
    d, b = copy.deepcopy(doc), bytearray(blob)
    anim = (d.get("animations") or [None])[0]
    if not anim or not anim.get("samplers") or not anim.get("channels"):
        return d, bytes(b)
    samplers, channels = anim["samplers"], anim["channels"]
    op = rng.random()
    if op < 0.4:  # key times
        s = rng.choice(samplers)
        loc = _floats(d, s["input"])
        if loc is None:
            return d, bytes(b)
        t = np.frombuffer(bytes(b), "<f4", loc[1], loc[0])
        if rng.random() < 0.5:  # this sampler's own copy: its span differs from the others'
            s["input"] = _append(d, b, t[:, None], "SCALAR")
            loc = _floats(d, s["input"])
            assert loc is not None
        with np.errstate(all="ignore"):
            b[loc[0] : loc[0] + 4 * loc[1]] = _f32(edit_times(t, rng.choice(TIME_EDITS), rng))
    elif op < 0.55:  # translation outputs
        ch = [c for c in channels if c.get("target", {}).get("path") == "translation"]
        loc = _floats(d, samplers[rng.choice(ch)["sampler"]]["output"]) if ch else None
        if loc is not None:
            v = np.frombuffer(bytes(b), "<f4", loc[1], loc[0]).astype(np.float64)
            idx = slice(None) if rng.random() < 0.3 else rng.randrange(v.size)
            v[idx] = rng.choice(HUGE)
            with np.errstate(all="ignore"):
                b[loc[0] : loc[0] + 4 * loc[1]] = _f32(v)
    elif op < 0.75:  # declared counts
        s = rng.choice(samplers)
        a = d["accessors"][s[rng.choice(["input", "output"])]]
        n = a.get("count", 1) if type(a.get("count")) is int else 1
        a["count"] = rng.choice([0, 1, n - 1, n + 1, n * 10, n * 10**3, n * 10**6, 2**26, 2**26 + 1, 2**31, 2**64])
    elif op < 0.85:  # frame time, node translations
        if rng.random() < 0.5:
            ex = d.setdefault("extras", {}).setdefault("jointlimits", {})
            if isinstance(ex, dict):
                ex["frame_time"] = rng.choice([1e-9, 1e-7, 1e-6, 3600, 3601, 1e9, 1e-10])
        else:
            n = rng.choice(d["nodes"])
            n["translation"] = [rng.choice(HUGE + [0.0]) for _ in range(3)]
            n.pop("matrix", None)
    else:  # a sampler of many real keys
        ch = [c for c in channels if c.get("target", {}).get("path") == "rotation"]
        if ch:
            n = rng.choice([10**3, 10**4, 10**5, 10**6])
            span = rng.choice([1.0, 1e2, 1e4, 1e6, 1e30])
            t = np.linspace(0.0, span, n)[:, None]
            q = np.zeros((n, 4))
            q[:, 3] = 1.0
            samplers.append({"input": _append(d, b, t, "SCALAR"), "output": _append(d, b, q, "VEC4")})
            rng.choice(ch)["sampler"] = len(samplers) - 1
    return d, bytes(b)


def edge_cases(doc: dict, blob: bytes) -> list[tuple[str, str, bytes]]:
    """Targeted #38 cases on the hand-made file: every time edit of the shared key times and of one
    sampler's own, huge translation outputs, counts past the buffer, many real keys."""
    out = []
    for how in TIME_EDITS:
        for own in (False, True):
            rng = random.Random(len(out))
            d, b = copy.deepcopy(doc), bytearray(blob)
            s = d["animations"][0]["samplers"][1]
            loc = _floats(d, s["input"])
            assert loc is not None
            t = np.frombuffer(bytes(b), "<f4", loc[1], loc[0])
            if own:
                s["input"] = _append(d, b, t[:, None], "SCALAR")
                loc = _floats(d, s["input"])
                assert loc is not None
            with np.errstate(all="ignore"):
                b[loc[0] : loc[0] + 4 * loc[1]] = _f32(edit_times(t, how, rng))
            out.append((f"key times {how}{' (one sampler)' if own else ''}", ".glb", glb(d, bytes(b))))
    for exp in (4, 10, 30, 38, 39, 308):  # every key time scaled
        d, b = copy.deepcopy(doc), bytearray(blob)
        loc = _floats(d, 0)
        assert loc is not None
        with np.errstate(all="ignore"):
            b[loc[0] : loc[0] + 4 * loc[1]] = _f32(np.frombuffer(blob, "<f4", loc[1], loc[0]) * 10.0**exp)
        out.append((f"key times x 1e{exp}", ".glb", glb(d, bytes(b))))
    for v in HUGE:
        d, b = copy.deepcopy(doc), bytearray(blob)
        loc = _floats(d, 2)  # the root's translation keys
        assert loc is not None
        with np.errstate(all="ignore"):
            b[loc[0] : loc[0] + 4 * loc[1]] = _f32(np.full(loc[1], v))
        out.append((f"translation keys {v:g}", ".glb", glb(d, bytes(b))))
    for count in (0, 5, 40, 4000, 10**6, 2**26):
        for acc in (0, 1):
            d = copy.deepcopy(doc)
            d["accessors"][acc]["count"] = count
            out.append((f"accessor {acc} count {count}", ".glb", glb(d, blob)))
    for n, span in ((10**5, 1e4), (10**6, 1e4), (10**6, 1e30), (10**5, 1e-3)):
        d, b = copy.deepcopy(doc), bytearray(blob)
        q = np.zeros((n, 4))
        q[:, 3] = 1.0
        samplers = d["animations"][0]["samplers"]
        t = np.linspace(0.0, span, n)[:, None]
        samplers.append({"input": _append(d, b, t, "SCALAR"), "output": _append(d, b, q, "VEC4")})
        d["animations"][0]["channels"][0]["sampler"] = len(samplers) - 1
        out.append((f"{n} keys over {span:g} s", ".glb", glb(d, bytes(b))))
    return out


def targeted(doc: dict, blob: bytes) -> list[tuple[str, str, bytes]]:
    out = []

    def case(label, edit, ext=".glb"):
        d = copy.deepcopy(doc)
        edit(d)
        out.append((label, ext, glb(d, blob) if ext == ".glb" else gltf_text(d, blob)))

    case("children cycle", lambda d: d["nodes"][2].update(children=[0]))
    case("self child", lambda d: d["nodes"][1].update(children=[1, 2]))
    case("two parents", lambda d: d["nodes"][0].update(children=[1, 2]))
    case("child index 99", lambda d: d["nodes"][1].update(children=[99]))
    case("child index -1", lambda d: d["nodes"][1].update(children=[-1]))
    case("skin joint 99", lambda d: d["skins"][0].update(joints=[0, 1, 99]))
    case("bufferView 99", lambda d: d["accessors"][0].update(bufferView=99))
    case("buffer 5", lambda d: d["bufferViews"][0].update(buffer=5))
    case("count 2^31", lambda d: d["accessors"][1].update(count=2**31))
    case("byteStride 1", lambda d: d["bufferViews"][1].update(byteStride=1))
    case("sparse indices past the end", lambda d: d["accessors"][-1]["sparse"].update(count=4000))
    case("sparse index view 99", lambda d: d["accessors"][-1]["sparse"]["indices"].update(bufferView=99))
    case("sampler 9", lambda d: d["animations"][0]["channels"][0].update(sampler=9))
    case("sampler input 99", lambda d: d["animations"][0]["samplers"][0].update(input=99))
    case("target node 99", lambda d: d["animations"][0]["channels"][0]["target"].update(node=99))
    case("NaN matrix", lambda d: d["nodes"][2].update(matrix=[float("nan")] * 16))
    case("NaN translation", lambda d: d["nodes"][1].update(translation=[float("nan"), 0, 0]))
    case("1e308 translation", lambda d: d["nodes"][1].update(translation=[1e308, 1e308, 0]))
    case("zero rotation", lambda d: d["nodes"][1].update(rotation=[0, 0, 0, 0]))
    case("extras channels garbled", lambda d: d.update(extras={"jointlimits": {"channels": [["Xrotation", 5]] * 3}}))
    case("extras channels unknown", lambda d: d.update(extras={"jointlimits": {"channels": [["Qrotation"]] * 3}}))
    case("extras channels a string", lambda d: d.update(extras={"jointlimits": {"channels": "abc"}}))
    case("extras end site 99", lambda d: d.update(extras={"jointlimits": {"end_sites": [[99, [0, 1, 0]]]}}))
    case("extras frame_time 0", lambda d: d.update(extras={"jointlimits": {"frame_time": 0}}))
    case("extras frame_time 1e-300", lambda d: d.update(extras={"jointlimits": {"frame_time": 1e-300}}))
    case("extras skin 7", lambda d: d.update(extras={"jointlimits": {"skin": 7}}))
    case("extras a list", lambda d: d.update(extras={"jointlimits": [1, 2]}))
    case("external buffer /dev/zero", lambda d: d.update(buffers=[{"byteLength": 10, "uri": "/dev/zero"}]), ".gltf")
    case(
        "external buffer ../../etc/missing",
        lambda d: d.update(buffers=[{"byteLength": 10, "uri": "../x/none.bin"}]),
        ".gltf",
    )
    case(
        "8000 nodes in a chain",
        lambda d: d.update(
            nodes=[{"name": f"n{i}", "children": [i + 1]} for i in range(7999)] + [{"name": "last"}],
            skins=[],
            animations=[],
        ),
    )
    # key times 0 .. 1e30: a frame count beyond any memory
    t = copy.deepcopy(doc)
    blob2 = bytearray(blob)
    off = t["bufferViews"][t["accessors"][0]["bufferView"]]["byteOffset"]
    blob2[off + 12 : off + 16] = _f32([1e30])
    out.append(("key times to 1e30 s", ".glb", glb(t, bytes(blob2))))
    blob3 = bytearray(blob)
    off = t["bufferViews"][t["accessors"][1]["bufferView"]]["byteOffset"]
    blob3[off : off + 4] = _f32([np.nan])
    out.append(("NaN rotation key", ".glb", glb(t, bytes(blob3))))
    good = glb(doc, blob)
    out.append(("GLB length field 2^31", ".glb", good[:8] + struct.pack("<I", 2**31) + good[12:]))
    out.append(("GLB JSON chunk length 2^31", ".glb", good[:12] + struct.pack("<I", 2**31) + good[16:]))
    out.append(("GLB cut in the header", ".glb", good[:10]))
    out.append(("not JSON", ".gltf", b"{nope"))
    out.append(("empty", ".glb", b""))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="random mutations")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t = time.perf_counter()
    rng = random.Random(args.seed)
    random.seed(args.seed)
    doc, blob = hand_made()
    seeds = [("hand-made", doc, blob), *clip_seeds()]
    cases = [(f"seed {n} glb", "gltf", f"s{n}.glb", glb(d, b)) for n, d, b in seeds]
    cases.append(("seed hand-made gltf", "gltf", "s.gltf", gltf_text(doc, blob)))
    n_seeds = len(cases)
    cases += [(label, "gltf", f"t{i}{ext}", data) for i, (label, ext, data) in enumerate(targeted(doc, blob))]
    cases += [(label, "gltf", f"e{i}{ext}", data) for i, (label, ext, data) in enumerate(edge_cases(doc, blob))]
    n_targeted = len(cases) - n_seeds

    def mutations():  # made as they are read: a few of them are 25 MB
        for i in range(args.n):
            name, d, b = seeds[i % len(seeds)]
            r = rng.random()
            if r < 0.25:
                d2, b2 = mutate_anim(d, b, rng)
                data, ext = (glb(d2, b2), ".glb") if rng.random() < 0.8 else (gltf_text(d2, b2), ".gltf")
            elif r < 0.7:
                data, ext = glb(mutate_doc(d, rng), b), ".glb"
            elif r < 0.8:
                data, ext = gltf_text(mutate_doc(d, rng), b), ".gltf"
            else:
                data, ext = mutate_bytes(glb(d, b), rng), ".glb"
            yield (f"mutation {i} of {name}", "gltf", f"m{i}{ext}", data)

    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        specials = []
        for label, path in fuzzlib.special_files(scratch):
            link = scratch / f"{label.strip('/').replace('/', '_')}.glb"
            if path == str(scratch):
                link.mkdir()
            else:
                link.symlink_to(path)
            specials.append((label, "gltf", str(link), None))
        counts = fuzzlib.run_cases(__file__, itertools.chain(cases, mutations(), specials), scratch)
    bad = fuzzlib.report(
        f"glTF/GLB: {n_seeds} seeds, {n_targeted + 4} targeted, {args.n} mutations", counts, time.perf_counter() - t
    )
    fuzzlib.print_summary("gltf", counts, time.perf_counter() - t)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

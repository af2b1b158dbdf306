"""What the glTF reader accepts: the format's constants shared by reading and writing, the bounds
of what is read, and the checks of a document (indices in range, an acyclic node tree, finite
transforms, this package's ``extras`` block) made before anything is read through it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...errors import FormatError

#: Key of this package's block in the glTF root ``extras``.
EXTRAS_KEY = "jointlimits"

# rotation taking a source up axis to glTF's +Y (applied to the root)
_UP_TO_Y = {
    "+y": (1.0, 0.0, 0.0, 0.0),
    "-y": (0.0, 1.0, 0.0, 0.0),
    "+z": (math.sqrt(0.5), -math.sqrt(0.5), 0.0, 0.0),
    "-z": (math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0),
    "+x": (math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)),
    "-x": (math.sqrt(0.5), 0.0, 0.0, -math.sqrt(0.5)),
}


#: Bounds of what is read: the file, each buffer, the nodes, one accessor's elements, and the
#: sampled frames x joints (two float64 arrays of 7 values per joint and frame: 470 MB at most).
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_NODES = 5_000  # objects of all top-level lists: pygltflib builds each one slowly (1 ms)
MAX_ELEMENTS = 1 << 26
MAX_SAMPLES = 1 << 23
#: Largest |translation| and |key time| read: past them a value is no measurement, and squares
#: of it (bone lengths, body height) overflow into inf / NaN.
MAX_COORD = 1e12


def _index(v: Any, n: int, what: str, path: Path, optional: bool = False) -> int | None:
    """``v`` as an index into a list of ``n`` (FormatError naming ``what`` unless it is one)."""
    if v is None and optional:
        return None
    if type(v) is not int or not 0 <= v < n:
        raise FormatError(f"{path}: {what} is {v!r}, not an index in 0..{n - 1}")
    return v


def _numbers(v: Any, sizes: tuple[int, ...], what: str, path: Path, bound: float = MAX_COORD) -> None:
    if v is None:
        return
    if not isinstance(v, (list, tuple)) or len(v) not in sizes:
        raise FormatError(f"{path}: {what} must be a list of {' or '.join(map(str, sizes))} numbers")
    for x in v:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not abs(x) <= bound:
            raise FormatError(f"{path}: {what} holds {x!r}, not a finite number within +-{bound:g}")


def _check_size(path: Path) -> None:
    """Refuse a document of more than ``MAX_NODES`` objects in its top-level lists before
    pygltflib builds them (8,000 nodes took it 8 s); what is not JSON is left to pygltflib."""
    import json
    import struct

    with open(path, "rb") as fh:
        head = fh.read(20)
        if head[:4] == b"glTF" and len(head) == 20:
            n = struct.unpack_from("<I", head, 12)[0]
            if n > MAX_FILE_BYTES:
                raise FormatError(f"{path}: the GLB JSON chunk declares {n} bytes")
            text = fh.read(n)
        else:
            text = head + fh.read()
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return
    if isinstance(doc, dict):
        total = sum(len(v) for v in doc.values() if isinstance(v, list))
        anims = doc.get("animations")
        for a in anims if isinstance(anims, list) else []:
            for key in ("channels", "samplers"):
                if isinstance(a, dict) and isinstance(a.get(key), list):
                    total += len(a[key])
        if total > MAX_NODES:
            raise FormatError(
                f"{path}: {total} objects (nodes, accessors, channels...), more than the {MAX_NODES} read"
            )


def _check_document(gltf: Any, path: Path) -> None:
    """Every index the reader follows in range, the node tree acyclic with one parent per node,
    and node transforms finite: checked once, before anything is read through them."""
    nodes = gltf.nodes or []
    N = len(nodes)
    if N > MAX_NODES:
        raise FormatError(f"{path}: {N} nodes, more than the {MAX_NODES} read")
    parent: dict[int, int] = {}
    for i, n in enumerate(nodes):
        kids = n.children or []
        if not isinstance(kids, list):
            raise FormatError(f"{path}: node {i}: children must be a list of node indices")
        for c in kids:
            _index(c, N, f"a child of node {i}", path)
            if c in parent or c == i:
                raise FormatError(f"{path}: node {c} has more than one parent (or is its own child)")
            parent[c] = i
        _numbers(n.matrix, (16,), f"node {i} matrix", path)
        _numbers(n.translation, (3,), f"node {i} translation", path)
        _numbers(n.rotation, (4,), f"node {i} rotation", path, 1.0 + 1e-3)
        _numbers(n.scale, (3,), f"node {i} scale", path)
        if n.rotation is not None and not 1e-6 < sum(x * x for x in n.rotation) < 2.0:
            raise FormatError(f"{path}: node {i} rotation is not a unit quaternion")
        for key in ("mesh", "camera", "skin"):
            if getattr(n, key, None) is not None and type(getattr(n, key)) is not int:
                raise FormatError(f"{path}: node {i} {key} must be an index")
    # one parent each: the nodes not reached down from the parentless ones lie on a cycle
    reached = [i for i in range(N) if i not in parent]
    k = 0
    while k < len(reached):
        reached.extend(nodes[reached[k]].children or [])
        k += 1
    if len(reached) != N:
        cyc = min(set(range(N)) - set(reached))
        raise FormatError(f"{path}: the node tree has a cycle through node {cyc}")
    nb, nv, na = len(gltf.buffers or []), len(gltf.bufferViews or []), len(gltf.accessors or [])
    for i, bv in enumerate(gltf.bufferViews or []):
        _index(bv.buffer, nb, f"bufferView {i} buffer", path)
        for key in ("byteOffset", "byteLength", "byteStride"):
            v = getattr(bv, key)
            if v is not None and (type(v) is not int or not 0 <= v <= MAX_FILE_BYTES):
                raise FormatError(f"{path}: bufferView {i} {key} is {v!r}")
    for i, a in enumerate(gltf.accessors or []):
        _index(a.bufferView, nv, f"accessor {i} bufferView", path, optional=True)
        if type(a.count) is not int or not 0 <= a.count <= MAX_ELEMENTS:
            raise FormatError(f"{path}: accessor {i} count is {a.count!r} (at most {MAX_ELEMENTS})")
        if a.byteOffset is not None and (type(a.byteOffset) is not int or not 0 <= a.byteOffset <= MAX_FILE_BYTES):
            raise FormatError(f"{path}: accessor {i} byteOffset is {a.byteOffset!r}")
        sp = a.sparse
        if sp is not None:
            if type(sp.count) is not int or not 0 <= sp.count <= a.count or sp.indices is None or sp.values is None:
                raise FormatError(f"{path}: accessor {i} has a malformed sparse block")
            _index(sp.indices.bufferView, nv, f"accessor {i} sparse indices bufferView", path)
            _index(sp.values.bufferView, nv, f"accessor {i} sparse values bufferView", path)
            if sp.indices.componentType not in (5121, 5123, 5125):
                raise FormatError(
                    f"{path}: accessor {i} sparse indices have component type {sp.indices.componentType!r}"
                )
            for part in (sp.indices, sp.values):
                off = part.byteOffset
                if off is not None and (type(off) is not int or not 0 <= off <= MAX_FILE_BYTES):
                    raise FormatError(f"{path}: accessor {i} sparse byteOffset is {off!r}")
    for i, sk in enumerate(gltf.skins or []):
        if not isinstance(sk.joints, list) or not sk.joints:
            raise FormatError(f"{path}: skin {i} has no joints")
        for j in sk.joints:
            _index(j, N, f"a joint of skin {i}", path)
    for i, an in enumerate(gltf.animations or []):
        ns = len(an.samplers or [])
        for s in an.samplers or []:
            _index(s.input, na, f"animation {i} sampler input", path)
            _index(s.output, na, f"animation {i} sampler output", path)
        for ch in an.channels or []:
            _index(ch.sampler, ns, f"animation {i} channel sampler", path)
            if ch.target is None:
                raise FormatError(f"{path}: animation {i} has a channel without a target")
            _index(ch.target.node, N, f"animation {i} channel target node", path, optional=True)


def _check_extras(extras: Any, gltf: Any, path: Path) -> dict:
    """This package's block of the root ``extras`` (written by :func:`save`), its types checked."""
    if not isinstance(extras, dict):
        raise FormatError(f"{path}: extras.{EXTRAS_KEY} must be an object")
    if "skin" in extras:
        _index(extras["skin"], len(gltf.skins or []), f"extras.{EXTRAS_KEY}.skin", path, optional=True)
    for key in ("frame_time", "metres_per_unit"):
        v = extras.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 1e-9 <= v <= 1e9):
            raise FormatError(f"{path}: extras.{EXTRAS_KEY}.{key} must be a positive number, got {v!r}")
    if extras.get("up", "+y") not in _UP_TO_Y:
        raise FormatError(f"{path}: extras.{EXTRAS_KEY}.up must be one of {', '.join(_UP_TO_Y)}")
    ch = extras.get("channels")
    if ch is not None and not (
        isinstance(ch, list) and all(isinstance(c, list) and all(isinstance(x, str) for x in c) for c in ch)
    ):
        raise FormatError(f"{path}: extras.{EXTRAS_KEY}.channels must be a list of channel name lists")
    es = extras.get("end_sites", [])
    if not isinstance(es, list) or not all(isinstance(e, list) and len(e) == 2 and type(e[0]) is int for e in es):
        raise FormatError(f"{path}: extras.{EXTRAS_KEY}.end_sites must be a list of [joint, [x, y, z]]")
    for _, o in es:
        _numbers(o, (3,), f"extras.{EXTRAS_KEY}.end_sites offset", path)
    return extras

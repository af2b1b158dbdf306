"""glTF 2.0 (``.gltf`` / ``.glb``) skeletal animation in and out, with pygltflib.

``load`` reads one skin's joint nodes (or, without a skin, the node tree the animation drives):
rest translations become the skeleton's offsets, the animation's translation and rotation channels
are sampled at a fixed rate (``fps``, default the rate of the samplers' key times) with the
sampler's own interpolation: LINEAR (slerp for rotations), STEP or CUBICSPLINE (Hermite, rotations
renormalised). Quaternions are converted from glTF's (x, y, z, w) to (w, x, y, z).

``save`` writes one skin (joint nodes with rest translations = offsets, inverse bind matrices of
the rest pose), a rotation channel per rotating joint and a translation channel per joint with
position channels, in metres and Y-up as glTF requires. The length scale (``metres_per_unit``,
guessed with :mod:`jointlimits.motion.units` unless given) and the source's up axis are stored in the
file's ``extras`` with the BVH channel layout and End Sites, so a file written here loads back in
the original units, axes and channel orders (BVH -> glTF -> BVH keeps rotations to float32
precision, about 1e-7 rad). Files from elsewhere load in metres.
"""

from __future__ import annotations

import base64
import math
import os
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write, check_input_file, read_input_bytes
from .._optional import require
from ..errors import FormatError, JointLimitsError
from ..motion import quat
from ..motion.skeleton import POSITION_CHANNELS, Motion, Skeleton

__all__ = ["load", "save", "EXTRAS_KEY"]

#: Key of this package's block in the glTF root ``extras``.
EXTRAS_KEY = "jointlimits"

_COMPONENTS = {
    5120: (np.int8, 127.0),
    5121: (np.uint8, 255.0),
    5122: (np.int16, 32767.0),
    5123: (np.uint16, 65535.0),
    5125: (np.uint32, None),
    5126: (np.float32, None),
}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_ROT_ZYX = ["Zrotation", "Yrotation", "Xrotation"]
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


# ---------------------------------------------------------------------------------------- reading
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


def _buffers(gltf: Any, path: Path) -> list[bytes]:
    out = []
    for i, b in enumerate(gltf.buffers):
        if b.uri is None:
            blob = gltf.binary_blob()
            if blob is None:
                raise FormatError(f"{path}: buffer {i} has no uri and the file has no binary chunk")
            out.append(bytes(blob))
        elif b.uri.startswith("data:"):
            try:
                out.append(base64.b64decode(b.uri.split(",", 1)[1]))
            except (IndexError, ValueError) as e:
                raise FormatError(f"{path}: buffer {i} has a malformed data URI ({e})") from None
        else:
            ext = path.parent / unquote(b.uri)
            try:
                out.append(read_input_bytes(ext, MAX_FILE_BYTES))
            except OSError as e:
                raise FormatError(f"{path}: cannot read buffer {i} from {ext.name!r} ({e.strerror or e})") from None
            except ValueError as e:  # not a regular file, or too big
                raise FormatError(f"{path}: cannot read buffer {i} from {ext.name!r} ({e})") from None
    return out


def _read_accessor(gltf: Any, bufs: list[bytes], index: int, path: Path) -> NDArray[np.float64]:
    """An accessor's elements as float64 ``[count, width]`` (normalised integers scaled to [-1, 1])."""
    try:
        acc = gltf.accessors[index]
    except (IndexError, TypeError):
        raise FormatError(f"{path}: accessor {index} does not exist") from None
    if acc.componentType not in _COMPONENTS or acc.type not in _WIDTH:
        raise FormatError(f"{path}: accessor {index} has unsupported type {acc.type}/{acc.componentType}")
    dtype, norm = _COMPONENTS[acc.componentType]
    width, count = _WIDTH[acc.type], int(acc.count)
    itemsize = np.dtype(dtype).itemsize
    if acc.bufferView is None:
        data = np.zeros((count, width), np.float64)
    else:
        bv = gltf.bufferViews[acc.bufferView]
        raw = bufs[bv.buffer]
        start = (bv.byteOffset or 0) + (acc.byteOffset or 0)
        stride = bv.byteStride or itemsize * width
        if stride < itemsize * width:
            raise FormatError(f"{path}: accessor {index} has a byteStride below its element size")
        end = start + stride * (count - 1) + itemsize * width if count else start
        if end > (bv.byteOffset or 0) + bv.byteLength or end > len(raw):
            raise FormatError(f"{path}: accessor {index} reads past the end of its buffer")
        arr = np.ndarray(
            (count, width),
            dtype=np.dtype(dtype).newbyteorder("<"),
            buffer=raw,
            offset=start,
            strides=(stride, itemsize),
        )
        data = arr.astype(np.float64)
    if acc.sparse is not None and acc.sparse.count:
        sp = acc.sparse
        n = int(sp.count)
        ibv = gltf.bufferViews[sp.indices.bufferView]
        vbv = gltf.bufferViews[sp.values.bufferView]
        idt = _COMPONENTS[sp.indices.componentType][0]
        for bv_, off_, size_ in (
            (ibv, sp.indices.byteOffset, n * np.dtype(idt).itemsize),
            (vbv, sp.values.byteOffset, n * width * itemsize),
        ):
            lo_ = (bv_.byteOffset or 0) + (off_ or 0)
            if lo_ + size_ > (bv_.byteOffset or 0) + (bv_.byteLength or 0) or lo_ + size_ > len(bufs[bv_.buffer]):
                raise FormatError(f"{path}: sparse accessor {index} reads past the end of its buffer")
        idx = np.frombuffer(
            bufs[ibv.buffer],
            dtype=np.dtype(idt).newbyteorder("<"),
            count=n,
            offset=(ibv.byteOffset or 0) + (sp.indices.byteOffset or 0),
        ).astype(np.int64)
        vals = np.frombuffer(
            bufs[vbv.buffer],
            dtype=np.dtype(dtype).newbyteorder("<"),
            count=n * width,
            offset=(vbv.byteOffset or 0) + (sp.values.byteOffset or 0),
        ).reshape(n, width)
        if idx.size and (idx.min() < 0 or idx.max() >= count):
            raise FormatError(f"{path}: sparse accessor {index} has indices out of range")
        data[idx] = vals
    if acc.normalized and norm is not None:
        data = np.maximum(data / norm, -1.0)
    if not np.all(np.abs(data) <= MAX_COORD):
        raise FormatError(f"{path}: accessor {index} holds values that are not finite (or beyond +-{MAX_COORD:g})")
    return data


def _node_trs(node: Any) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(translation, rotation w,x,y,z, scale) of a node at rest."""
    if node.matrix is not None and len(node.matrix) == 16:
        m = np.asarray(node.matrix, np.float64).reshape(4, 4).T  # column-major in the file
        t = m[:3, 3].copy()
        s = np.linalg.norm(m[:3, :3], axis=0)
        r = quat.from_matrix(m[:3, :3] / np.where(s > 0, s, 1.0))
        return t, quat.normalize(r), s
    t = np.asarray(node.translation if node.translation is not None else (0, 0, 0), np.float64)
    xyzw = node.rotation if node.rotation is not None else (0, 0, 0, 1)
    r = np.asarray([xyzw[3], xyzw[0], xyzw[1], xyzw[2]], np.float64)
    s = np.asarray(node.scale if node.scale is not None else (1, 1, 1), np.float64)
    return t, quat.normalize(r), s


def _joint_nodes(gltf: Any, anim: Any, skin_index: int | None, path: Path) -> tuple[list[int], NDArray[np.int64]]:
    """Node indices of the joints, parents first, and each one's parent (index into the list)."""
    parent_of: dict[int, int] = {}
    for i, n in enumerate(gltf.nodes):
        for c in n.children or []:
            parent_of[c] = i
    if gltf.skins:
        skin = gltf.skins[skin_index or 0]
        joint_set = set(skin.joints)
    else:
        animated = {ch.target.node for ch in (anim.channels if anim else []) if ch.target.node is not None}
        if not animated:
            raise FormatError(f"{path}: no skin and no animated nodes: nothing to read as a skeleton")
        joint_set = set()
        for n in animated:
            while n is not None and n not in joint_set:
                joint_set.add(n)
                n = parent_of.get(n)
        # drop the shared chain above the top-most branching/animated node (scene wrappers)
        while True:
            roots = [n for n in joint_set if parent_of.get(n) not in joint_set]
            r = roots[0]
            kids = [c for c in gltf.nodes[r].children or [] if c in joint_set]
            if len(roots) == 1 and r not in animated and len(kids) == 1:
                joint_set.discard(r)
            else:
                break
        # and every node below it that is not a mesh or a camera (joints that are not animated)
        stack = [n for n in joint_set]
        while stack:
            for c in gltf.nodes[stack.pop()].children or []:
                if c not in joint_set and gltf.nodes[c].mesh is None and gltf.nodes[c].camera is None:
                    joint_set.add(c)
                    stack.append(c)
    roots = [n for n in joint_set if parent_of.get(n) not in joint_set]
    if len(roots) != 1:
        names = [gltf.nodes[r].name or f"node {r}" for r in roots]
        raise FormatError(f"{path}: the skeleton must have one root joint, found {len(roots)}: {names}")
    order: list[int] = []
    parents: list[int] = []
    stack = [(roots[0], -1)]
    while stack:
        n, p = stack.pop()
        k = len(order)
        order.append(n)
        parents.append(p)
        kids = [c for c in gltf.nodes[n].children or [] if c in joint_set]
        stack.extend((c, k) for c in reversed(kids))
    if len(order) != len(joint_set):
        raise FormatError(f"{path}: the skin's joints are not one connected node tree")
    return order, np.asarray(parents, np.int64)


def _sample(
    times: NDArray[np.float64],
    keys: NDArray[np.float64],
    values: NDArray[np.float64],
    interp: str,
    rotation: bool,
    snap: float = 0.0,
) -> NDArray[np.float64]:
    """Values of one sampler at ``times`` (clamped to its key range); a time within ``snap``
    seconds of a key takes that key's value (key times are float32: a sample meant to fall on a
    key would otherwise blend in a sliver of the next one)."""
    n = keys.shape[0]
    if interp == "CUBICSPLINE":
        a_in, v, b_out = values[0::3], values[1::3], values[2::3]
    else:
        v = values
    if n == 1:
        out = np.repeat(v[:1], times.size, axis=0)
        return quat.normalize(out) if rotation else out
    t = np.clip(times, keys[0], keys[-1])
    if snap > 0:
        k = np.clip(np.searchsorted(keys, t), 1, n - 1)
        k = np.where(np.abs(keys[k - 1] - t) <= np.abs(keys[k] - t), k - 1, k)
        t = np.where(np.abs(keys[k] - t) <= snap, keys[k], t)
    i = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, n - 2)
    dt = keys[i + 1] - keys[i]
    u = np.where(dt > 0, (t - keys[i]) / np.where(dt > 0, dt, 1.0), 0.0)
    if interp == "STEP":
        j = np.where(u >= 1.0, i + 1, i)
        return v[j].copy()
    if interp == "LINEAR":
        if rotation:
            return quat.normalize(quat.slerp(v[i], v[i + 1], u))
        return v[i] + (v[i + 1] - v[i]) * u[:, None]
    u2, u3 = u * u, u * u * u
    h00, h10, h01, h11 = 2 * u3 - 3 * u2 + 1, u3 - 2 * u2 + u, -2 * u3 + 3 * u2, u3 - u2
    out = (
        h00[:, None] * v[i]
        + (h10 * dt)[:, None] * b_out[i]
        + h01[:, None] * v[i + 1]
        + (h11 * dt)[:, None] * a_in[i + 1]
    )
    return quat.normalize(out) if rotation else out


def load(path: str | os.PathLike, fps: float | None = None, animation: int = 0) -> Motion:
    """Read a glTF/GLB file's skeleton and one animation (``animation`` index) sampled at ``fps``."""
    pygltflib = require("pygltflib", "gltf", "reading glTF files")

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    try:
        check_input_file(p, MAX_FILE_BYTES)
    except ValueError as e:
        raise FormatError(f"{p}: {e}") from None
    _check_size(p)
    try:
        gltf = pygltflib.GLTF2().load(str(p))
    except FileNotFoundError:
        raise
    except Exception as e:  # pygltflib raises many kinds on malformed input
        raise FormatError(f"{p}: not a readable glTF file ({type(e).__name__}: {e})") from None
    if gltf is None or not gltf.nodes:
        raise FormatError(f"{p}: the file has no nodes")
    if fps is not None and not (np.isfinite(fps) and fps > 0):
        raise FormatError(f"fps must be positive and finite, got {fps}")
    try:
        _check_document(gltf, p)
        return _load(gltf, p, fps, animation)
    except FormatError:
        raise
    except (JointLimitsError, ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError) as e:
        # what the checks above do not foresee in a malformed file is still the file's fault
        raise FormatError(f"{p}: not a readable glTF file ({type(e).__name__}: {e})") from None


def _load(gltf: Any, p: Path, fps: float | None, animation: int) -> Motion:
    anim = None
    if gltf.animations:
        if not 0 <= animation < len(gltf.animations):
            raise FormatError(f"{p}: animation {animation} does not exist ({len(gltf.animations)} in the file)")
        anim = gltf.animations[animation]
    extras = (gltf.extras or {}).get(EXTRAS_KEY, {}) if isinstance(gltf.extras, dict) else {}
    extras = _check_extras(extras, gltf, p)
    order, parents = _joint_nodes(gltf, anim, extras.get("skin"), p)
    J = len(order)
    slot = {n: k for k, n in enumerate(order)}
    rest = [_node_trs(gltf.nodes[n]) for n in order]
    offsets = np.stack([t for t, _, _ in rest])
    rest_rot = np.stack([r for _, r, _ in rest])
    if any(np.abs(s - 1).max() > 1e-6 for _, _, s in rest):
        warnings.warn(f"{p}: joint nodes with non-unit scale; scale is ignored", stacklevel=2)
    bufs = _buffers(gltf, p)

    # sampler tracks per joint
    tracks: dict[tuple[int, str], tuple[NDArray, NDArray, str]] = {}
    all_keys = []
    for ch in anim.channels if anim else []:
        node, kind = ch.target.node, ch.target.path
        if node not in slot or kind not in ("translation", "rotation", "scale"):
            continue
        assert anim is not None  # the loop runs over anim's channels
        smp = anim.samplers[ch.sampler]
        interp = smp.interpolation or "LINEAR"
        if interp not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise FormatError(f"{p}: sampler {ch.sampler} has unknown interpolation {interp!r}")
        keys = _read_accessor(gltf, bufs, smp.input, p)[:, 0]
        vals = _read_accessor(gltf, bufs, smp.output, p)
        need = keys.size * (3 if interp == "CUBICSPLINE" else 1)
        if vals.shape[0] != need or keys.size == 0:
            raise FormatError(f"{p}: sampler {ch.sampler} has {keys.size} key times but {vals.shape[0]} values")
        if np.any(np.diff(keys) < 0) or not np.all(np.isfinite(keys)):
            raise FormatError(f"{p}: sampler {ch.sampler} key times are not increasing")
        if kind == "scale":
            if np.abs(vals - 1).max() > 1e-6:
                warnings.warn(f"{p}: animated joint scale is ignored", stacklevel=2)
            continue
        if kind == "rotation":
            vals = vals[:, [3, 0, 1, 2]]
        tracks[(slot[node], kind)] = (keys, vals, interp)
        all_keys.append(keys)

    if all_keys:
        keys = np.unique(np.concatenate(all_keys))
        t0, t1 = float(keys[0]), float(keys[-1])
        if fps is None:
            if "frame_time" in extras:
                fps = 1.0 / float(extras["frame_time"])
            elif keys.size > 1:
                d = np.diff(keys)
                dt = float(np.median(d[d > 1e-6])) if np.any(d > 1e-6) else 1 / 30
                fps = 1.0 / dt
                if abs(fps - round(fps)) < 1e-3 * fps:
                    fps = float(round(fps))
            else:
                fps = 30.0
        span = (t1 - t0) * fps
        if not span * J <= MAX_SAMPLES:
            raise FormatError(f"{p}: {span:.4g} frames of {J} joints, more than the {MAX_SAMPLES} samples read")
        F = int(math.floor(span + 1e-3)) + 1  # key times are float32
        times = t0 + np.arange(F) / fps
    else:
        fps = fps or 30.0
        F, times = 1, np.zeros(1)
    rotations = np.repeat(rest_rot[None], F, axis=0)
    positions = np.repeat(offsets[None], F, axis=0)
    for (j, kind), (k, v, interp) in tracks.items():
        s = _sample(times, k, v, interp, kind == "rotation", snap=1e-3 / fps)
        if kind == "rotation":
            rotations[:, j] = s
        else:
            positions[:, j] = s

    if not extras:
        _fold_ancestors(gltf, order[0], rotations, positions, offsets, p)
    names = [gltf.nodes[n].name or f"joint{k}" for k, n in enumerate(order)]
    channels = [
        (list(POSITION_CHANNELS) if (j == 0 or (j, "translation") in tracks) else []) + _ROT_ZYX for j in range(J)
    ]
    end_sites: list[tuple[int, NDArray[np.float64]]] = []
    scale = 1.0
    if extras:
        scale = float(extras.get("metres_per_unit", 1.0))
        up = extras.get("up", "+y")
        c = np.asarray(_UP_TO_Y.get(up, _UP_TO_Y["+y"]))
        if up != "+y":
            rotations[:, 0] = quat.inv_mul(c, rotations[:, 0])
            positions[:, 0] = quat.inv_mul_vec(c, positions[:, 0])
            offsets[0] = quat.inv_mul_vec(c, offsets[0])
        if "channels" in extras and len(extras["channels"]) == J:
            channels = [list(c) for c in extras["channels"]]
        end_sites = [(int(j), np.asarray(o, np.float64) / scale) for j, o in extras.get("end_sites", [])]
    # glTF nodes outside the skeleton (our End Site markers) are not joints
    sk = Skeleton(names, parents, offsets / scale, channels, end_sites)
    return Motion(sk, quat.normalize(rotations), positions / scale, 1.0 / fps)


def _fold_ancestors(gltf: Any, root: int, rotations: NDArray, positions: NDArray, offsets: NDArray, path: Path) -> None:
    """Apply the transforms of the nodes above the root joint (an armature node's axis change
    or centimetre scale) to the root, and their uniform scale to every length, in place."""
    parent_of = {c: i for i, n in enumerate(gltf.nodes) for c in (n.children or [])}
    rot, trans, scale = quat.identity(()), np.zeros(3), 1.0
    n = parent_of.get(root)
    while n is not None:
        t, r, s = _node_trs(gltf.nodes[n])
        if np.ptp(s) > 1e-6 * max(1.0, float(np.abs(s).max())):
            warnings.warn(
                f"{path}: node {gltf.nodes[n].name or n} above the skeleton has a non-uniform scale; using its mean",
                stacklevel=3,
            )
        # parent transform (t, r, s) applied after the one gathered so far
        trans = t + float(np.mean(s)) * quat.mul_vec(r, trans)
        rot = quat.mul(r, rot)
        scale *= float(np.mean(s))
        n = parent_of.get(n)
    if np.allclose(rot, [1, 0, 0, 0]) and not trans.any() and scale == 1.0:
        return
    positions *= scale
    offsets *= scale
    rotations[:, 0] = quat.mul(rot, rotations[:, 0])
    positions[:, 0] = trans + quat.mul_vec(rot, positions[:, 0])
    offsets[0] = trans + quat.mul_vec(rot, offsets[0])


# ---------------------------------------------------------------------------------------- writing
class _Blob:
    """The one binary buffer of an exported file, 4-byte aligned views."""

    def __init__(self, gltf: Any):
        self.gltf = gltf
        self.data = bytearray()

    def accessor(self, arr: NDArray, kind: str, minmax: bool = False, target: int | None = None) -> int:
        import pygltflib

        a = np.ascontiguousarray(arr, dtype=np.float32)
        count = a.shape[0]
        pad = -len(self.data) % 4
        self.data += b"\0" * pad
        off = len(self.data)
        self.data += a.tobytes()
        bv = pygltflib.BufferView(buffer=0, byteOffset=off, byteLength=a.nbytes, target=target)
        self.gltf.bufferViews.append(bv)
        acc = pygltflib.Accessor(bufferView=len(self.gltf.bufferViews) - 1, componentType=5126, count=count, type=kind)
        if minmax:
            flat = a.reshape(count, -1)
            acc.min = [float(x) for x in flat.min(0)]
            acc.max = [float(x) for x in flat.max(0)]
        self.gltf.accessors.append(acc)
        return len(self.gltf.accessors) - 1


def _matrix(q: NDArray, t: NDArray) -> NDArray:
    m = np.eye(4)
    m[:3, :3] = quat.to_matrix(q)
    m[:3, 3] = t
    return m


def to_gltf(motion: Motion, metres_per_unit: float | None = None, up: str | None = None) -> tuple[Any, bytes]:
    """A pygltflib document (one skin, one animation) of ``motion``, in metres and Y-up, and the
    bytes of its one buffer."""
    pygltflib = require("pygltflib", "gltf", "writing glTF files")

    from ..motion.units import guess_units, guess_up_axis, parse_up_axis

    sk = motion.skeleton
    motion.check_finite()
    if metres_per_unit is None:
        metres_per_unit = guess_units(motion).metres_per_unit
    if not (np.isfinite(metres_per_unit) and metres_per_unit > 0):
        raise FormatError(f"metres_per_unit must be positive and finite, got {metres_per_unit}")
    up = parse_up_axis(up, FormatError) if up else guess_up_axis(motion)
    s = float(metres_per_unit)
    c = np.asarray(_UP_TO_Y[up])
    J, F = sk.num_joints, motion.num_frames

    rot = quat.normalize(motion.rotations.copy())
    pos = motion.positions * s
    offs = sk.offsets * s
    rot[:, 0] = quat.mul(c, rot[:, 0])
    pos[:, 0] = quat.mul_vec(c, pos[:, 0])
    offs = offs.copy()
    offs[0] = quat.mul_vec(c, offs[0])
    # glTF consumers interpolate; keep neighbouring keys on one cover so slerp takes the short way
    rot = quat.unroll(rot, axis=0)

    gltf = pygltflib.GLTF2(asset=pygltflib.Asset(version="2.0", generator="jointlimits"))
    blob = _Blob(gltf)
    kids: dict[int, list[int]] = {}
    for j in range(1, J):
        kids.setdefault(int(sk.parents[j]), []).append(j)
    rest_r = quat.identity((J,))
    rest_r[0] = c
    for j in range(J):
        node = pygltflib.Node(name=sk.names[j], children=list(kids.get(j, [])), translation=[float(x) for x in offs[j]])
        if j == 0 and up != "+y":
            node.rotation = [float(c[1]), float(c[2]), float(c[3]), float(c[0])]
        gltf.nodes.append(node)
    # End Sites: plain child nodes (not joints) so viewers draw the last bones
    for e, (pj, o) in enumerate(sk.end_sites):
        gltf.nodes.append(pygltflib.Node(name=f"{sk.names[pj]}_end{e}", translation=[float(x) for x in o * s]))
        gltf.nodes[pj].children.append(len(gltf.nodes) - 1)

    # rest pose global transforms -> inverse bind matrices (column-major)
    gm: list[Any] = [None] * J
    for j in range(J):
        local = _matrix(rest_r[j], offs[j])
        gm[j] = local if j == 0 else gm[sk.parents[j]] @ local
    ibm = np.stack([np.linalg.inv(m).T.reshape(16) for m in gm])
    ibm_acc = blob.accessor(ibm, "MAT4")

    # a one-triangle mesh bound to the root, so the skin is used by a skinned mesh node
    tri = np.array([[0, 0, 0], [0.01, 0, 0], [0, 0.01, 0]], np.float64)
    root_g = gm[0][:3, :3] @ tri.T + gm[0][:3, 3:4]
    pos_acc = blob.accessor(root_g.T, "VEC3", minmax=True, target=34962)
    j_data = np.zeros((3, 4), np.uint8)
    w_data = np.tile(np.array([1, 0, 0, 0], np.float32), (3, 1))
    joints_acc = _raw_accessor(gltf, blob, j_data, 5121, "VEC4", target=34962)
    weights_acc = blob.accessor(w_data, "VEC4", target=34962)
    mesh = pygltflib.Mesh(
        name="marker",
        primitives=[
            pygltflib.Primitive(
                attributes=pygltflib.Attributes(POSITION=pos_acc, JOINTS_0=joints_acc, WEIGHTS_0=weights_acc)
            )
        ],
    )
    gltf.meshes.append(mesh)
    gltf.skins.append(pygltflib.Skin(name=sk.names[0], joints=list(range(J)), inverseBindMatrices=ibm_acc, skeleton=0))
    gltf.nodes.append(pygltflib.Node(name="skinned_marker", mesh=0, skin=0))
    mesh_node = len(gltf.nodes) - 1
    gltf.scenes.append(pygltflib.Scene(nodes=[0, mesh_node]))
    gltf.scene = 0

    times = np.arange(F) * motion.frame_time
    t_acc = blob.accessor(times[:, None], "SCALAR", minmax=True)
    anim = pygltflib.Animation(name="motion")
    for j in range(J):
        targets = []
        if sk.rotation_order(j) or j == 0:
            targets.append(("rotation", rot[:, j][:, [1, 2, 3, 0]], "VEC4"))
        if sk.has_position_channels(j):
            targets.append(("translation", pos[:, j], "VEC3"))
        for path_, values, kind in targets:
            out = blob.accessor(values, kind)
            anim.samplers.append(pygltflib.AnimationSampler(input=t_acc, output=out, interpolation="LINEAR"))
            anim.channels.append(
                pygltflib.AnimationChannel(
                    sampler=len(anim.samplers) - 1, target=pygltflib.AnimationChannelTarget(node=j, path=path_)
                )
            )
    gltf.animations.append(anim)
    gltf.buffers.append(pygltflib.Buffer(byteLength=len(blob.data)))
    gltf.extras = {
        EXTRAS_KEY: {
            "metres_per_unit": s,
            "up": up,
            "frame_time": float(motion.frame_time),
            "skin": 0,
            "channels": sk.channels,
            "end_sites": [[int(pj), [float(x) for x in o * s]] for pj, o in sk.end_sites],
        }
    }
    return gltf, bytes(blob.data)


def _raw_accessor(gltf: Any, blob: _Blob, arr: NDArray, component: int, kind: str, target: int | None = None) -> int:
    import pygltflib

    pad = -len(blob.data) % 4
    blob.data += b"\0" * pad
    off = len(blob.data)
    raw = np.ascontiguousarray(arr).tobytes()
    blob.data += raw
    gltf.bufferViews.append(pygltflib.BufferView(buffer=0, byteOffset=off, byteLength=len(raw), target=target))
    gltf.accessors.append(
        pygltflib.Accessor(bufferView=len(gltf.bufferViews) - 1, componentType=component, count=arr.shape[0], type=kind)
    )
    return len(gltf.accessors) - 1


def save(
    path: str | os.PathLike, motion: Motion, *, metres_per_unit: float | None = None, up: str | None = None
) -> None:
    """Write ``motion`` as ``.glb`` (binary) or ``.gltf`` (JSON, buffer embedded as a data URI),
    atomically. ``metres_per_unit`` and ``up`` default to :mod:`jointlimits.motion.units`' guesses."""
    p = Path(path)
    ext = p.suffix.lower()
    if ext not in (".gltf", ".glb"):
        raise FormatError(f"{p}: a glTF file name ends in .gltf or .glb")
    gltf, data = to_gltf(motion, metres_per_unit, up)
    if ext == ".glb":
        gltf.set_binary_blob(data)
        payload = b"".join(bytes(x) for x in gltf.save_to_bytes())
        with atomic_write(p, binary=True) as fh:
            fh.write(payload)
    else:
        gltf.buffers[0].uri = "data:application/octet-stream;base64," + base64.b64encode(data).decode("ascii")
        text = gltf.gltf_to_json()
        with atomic_write(p) as fh:
            fh.write(text)

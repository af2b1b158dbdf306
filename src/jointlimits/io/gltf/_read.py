"""Reading glTF / GLB: one skin's joint nodes (or the node tree the animation drives) and one
animation's channels sampled at a fixed rate (see :func:`load`)."""

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

from ..._atomic import check_input_file, read_input_bytes, resolve_beside
from ..._budget import Budget
from ..._optional import require
from ...errors import FormatError, JointLimitsError
from ...motion import quat
from ...motion.skeleton import POSITION_CHANNELS, Motion, Skeleton
from ._checks import (
    _UP_TO_Y,
    EXTRAS_KEY,
    MAX_COORD,
    MAX_FILE_BYTES,
    MAX_SAMPLES,
    _check_document,
    _check_extras,
    _check_size,
)

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
            try:  # only a regular file inside the glTF's own folder (no absolute path, .., symlink out)
                ext = resolve_beside(path, unquote(b.uri))
            except ValueError as e:
                raise FormatError(f"{path}: buffer {i} is not read ({e})") from None
            try:
                out.append(read_input_bytes(ext, MAX_FILE_BYTES))
            except OSError as e:
                raise FormatError(f"{path}: cannot read buffer {i} from {ext.name!r} ({e.strerror or e})") from None
            except ValueError as e:  # not a regular file, or too big
                raise FormatError(f"{path}: cannot read buffer {i} from {ext.name!r} ({e})") from None
    return out


def _read_accessor(
    gltf: Any, bufs: list[bytes], index: int, path: Path, budget: Budget | None = None
) -> NDArray[np.float64]:
    """An accessor's elements as float64 ``[count, width]`` (normalised integers scaled to [-1, 1]);
    its size is taken from ``budget`` (the file's memory budget) before anything is allocated."""
    try:
        acc = gltf.accessors[index]
    except (IndexError, TypeError):
        raise FormatError(f"{path}: accessor {index} does not exist") from None
    if acc.componentType not in _COMPONENTS or acc.type not in _WIDTH:
        raise FormatError(f"{path}: accessor {index} has unsupported type {acc.type}/{acc.componentType}")
    dtype, norm = _COMPONENTS[acc.componentType]
    width, count = _WIDTH[acc.type], int(acc.count)
    itemsize = np.dtype(dtype).itemsize
    if budget is not None:
        budget.take(count * width, f"its accessors (up to accessor {index})")
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
    budget = Budget(str(p), FormatError)

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
        keys = _read_accessor(gltf, bufs, smp.input, p, budget)[:, 0]
        vals = _read_accessor(gltf, bufs, smp.output, p, budget)
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
        # the sampled clip: times, rotations and positions of every joint, and one track's samples
        budget.take((span + 1) * (1 + 7 * J + 4), f"{span:.4g} frames of {J} joints")
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

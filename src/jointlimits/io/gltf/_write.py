"""Writing glTF / GLB: one skin, one animation, in metres and Y-up, with this package's ``extras``
block so that a file written here loads back in the source's units, axes and channel orders."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._atomic import atomic_write
from ..._optional import require
from ...errors import FormatError
from ...motion import quat
from ...motion.skeleton import Motion
from ._checks import _UP_TO_Y, EXTRAS_KEY


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

    from ...motion.units import guess_units, guess_up_axis, parse_up_axis

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

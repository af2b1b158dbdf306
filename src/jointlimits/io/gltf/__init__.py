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

# the public names in the order they had in the module (the API page lists them in import order)
# isort: off
from ._read import load
from ._write import to_gltf, save
from ._checks import EXTRAS_KEY

# isort: on
# and the module's other names, private ones included, stay importable from it
from ._checks import (  # noqa: F401
    _UP_TO_Y,
    MAX_COORD,
    MAX_ELEMENTS,
    MAX_FILE_BYTES,
    MAX_NODES,
    MAX_SAMPLES,
    _check_document,
    _check_extras,
    _check_size,
    _index,
    _numbers,
)
from ._read import (  # noqa: F401
    _COMPONENTS,
    _ROT_ZYX,
    _WIDTH,
    _buffers,
    _fold_ancestors,
    _joint_nodes,
    _load,
    _node_trs,
    _read_accessor,
    _sample,
)
from ._write import _Blob, _matrix, _raw_accessor  # noqa: F401

__all__ = ["load", "to_gltf", "save", "EXTRAS_KEY"]

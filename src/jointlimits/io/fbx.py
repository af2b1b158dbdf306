"""FBX skeletal animation in and out, through Blender's own FBX importer and exporter (``bpy``).

No Python library reads FBX without Autodesk's SDK; Blender's add-on does, and bpy (the Blender
module on PyPI, 4.5 for Python 3.11, the ``[blender]`` extra) runs it without a window. bpy pins
numpy<2 and exists for one Python version, so it often cannot live in the caller's environment:

- **in-process** when ``import bpy`` works here (inside Blender, or a Python 3.11 environment
  with the extra) and no ``blender=`` is given: the open file is replaced by an empty scene for
  each file (bpy as a module; inside an artist's Blender use its FBX importer);
- **in a subprocess** otherwise, when ``JOINTLIMITS_BLENDER_PYTHON`` (or ``blender_python=``)
  names a Python that has bpy, or a ``blender`` executable: it runs
  :mod:`jointlimits.io._blender` (bpy and numpy only, nothing else of this package) on the file
  and hands the arrays back in an ``.npz``.

Without either, a one-line :class:`~jointlimits.errors.MissingExtraError` names the extra.
Measured start-up (``benchmarks/bench_fbx.py``): see docs/measurements.md.

Reading: the armature with the most bones; its bones become joints (parents first), the
action's frames (Blender's evaluation of every pose bone at every frame of the action's range)
become the motion. Joint frames are the armature's axes at rest (the rest pose is the identity
pose, as in BVH and in Blender's BVH exporter): a joint's local rotation is
``R_b L R_b^-1`` for a bone with rest rotation ``R_b`` and pose basis ``L``, whatever the rig's bone
orientations (Mixamo, MotionBuilder, Blender's own); leaf bones named ``*_end`` (the length
markers Blender's exporter and Mixamo add) become End Sites. Offsets are the rest heads' differences, in
the file's armature space (the armature object's transform, which holds the FBX axis and unit
conversion, is not applied). Writing: one bone per joint (head at the joint, tail toward its
children), every frame keyed, baked with no key reduction, the channel layout, End Sites and
exact frame time in the armature's ``jointlimits`` custom property, and the armature object
turned Z-up and scaled to metres for Blender users (undone on reading: armature space is the
clip's own). FBX stores animation as float32 Euler curves: BVH -> FBX -> BVH keeps rotations to
about 1e-5 rad.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import mmap
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write, check_input_file
from .._budget import Budget, memory_budget
from ..errors import FormatError, MissingExtraError, SkeletonError
from ..motion import quat
from ..motion.skeleton import POSITION_CHANNELS, Motion, Skeleton, forward_kinematics

__all__ = [
    "load",
    "save",
    "blender_python",
    "in_process",
    "motion_from_arrays",
    "arrays_from_motion",
    "check_binary",
    "ENV",
]

#: environment variable naming a Python with bpy (or a ``blender`` executable) for the subprocess
ENV = "JOINTLIMITS_BLENDER_PYTHON"
_SCRIPT = Path(__file__).with_name("_blender.py")
_ROT_ZYX = ["Zrotation", "Yrotation", "Xrotation"]
# rotation turning a source up axis into Blender's +Z (the armature object's, for the viewport)
_UP_TO_Z = {
    "+z": (1.0, 0.0, 0.0, 0.0),
    "-z": (0.0, 1.0, 0.0, 0.0),
    "+y": (np.sqrt(0.5), np.sqrt(0.5), 0.0, 0.0),
    "-y": (np.sqrt(0.5), -np.sqrt(0.5), 0.0, 0.0),
    "+x": (np.sqrt(0.5), 0.0, -np.sqrt(0.5), 0.0),
    "-x": (np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0),
}


def in_process() -> bool:
    """Whether bpy is importable in this Python (then FBX runs here, without a subprocess)."""
    if "bpy" in sys.modules:
        return sys.modules["bpy"] is not None
    try:
        return importlib.util.find_spec("bpy") is not None
    except (ImportError, ValueError):
        return False


def blender_python(explicit: str | os.PathLike | None = None) -> str | None:
    """The Python with bpy (or Blender executable) for the subprocess: ``explicit``, else
    ``$JOINTLIMITS_BLENDER_PYTHON``; None when neither is set."""
    value = str(explicit) if explicit else os.environ.get(ENV, "")
    if not value:
        return None
    exe = shutil.which(value) or value
    if not os.path.isfile(exe):
        raise FormatError(f"{ENV}={value}: no such executable (a Python with bpy, or blender)")
    return exe


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Blender's own lines (its FBX add-on's ``print``s and its C code's ``printf``s) kept off this
    process's stdout and stderr while bpy runs in-process, so ``--json`` output stays one JSON
    object and ``-q`` prints nothing: file descriptors 1 and 2 point at /dev/null meanwhile, and
    ``sys.stdout``/``sys.stderr`` at a discarded buffer."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved: list[tuple[int, int]] = []
    try:
        with open(os.devnull, "wb") as null:
            for fd in (1, 2):
                with contextlib.suppress(OSError):
                    saved.append((fd, os.dup(fd)))
                    os.dup2(null.fileno(), fd)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                yield
    finally:
        for fd, copy in saved:
            with contextlib.suppress(OSError):
                # C-level buffers (Blender's printf) go to /dev/null before the descriptor returns
                _flush_c_stdio()
                os.dup2(copy, fd)
            os.close(copy)


def _flush_c_stdio() -> None:
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).fflush(None)


def _missing() -> MissingExtraError:
    return MissingExtraError(
        "FBX files need Blender's bpy, which is not installed in this Python: pip install 'jointlimits[blender]' "
        f"(Python 3.11), or set {ENV} to a Python that has bpy (or to a blender executable)"
    )


def _run(op: str, src: Path, dst: Path, exe: str, label: Path, extra: tuple[str, ...] = ()) -> None:
    if Path(exe).name.lower().startswith("blender"):
        cmd = [exe, "-b", "--factory-startup", "--python-exit-code", "3", "--python", str(_SCRIPT), "--", op]
    else:
        cmd = [exe, "-I", str(_SCRIPT), op]  # isolated: none of the caller's PYTHONPATH or user site
    res = subprocess.run([*cmd, str(src), str(dst), *extra], capture_output=True, text=True, errors="replace")
    if res.returncode != 0:
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        why = lines[-1] if lines else f"exit status {res.returncode}"
        what = "importer" if op == "read" else "exporter"
        raise FormatError(f"{label}: Blender's FBX {what} failed ({why})")


def _last_line(e: BaseException) -> str:
    try:
        lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    except Exception:  # a message that does not decode
        lines = []
    return (lines[-1] if lines else type(e).__name__)[:300]


def _read_arrays(path: Path, blender: str | os.PathLike | None) -> dict[str, Any]:
    exe = None if blender is None and in_process() else blender_python(blender)
    max_values = memory_budget() / 8  # the frames Blender evaluates, counted as float64 values
    if exe is None and in_process():
        try:
            with _silenced():
                from . import _blender

                return _blender.read_fbx(str(path), max_values)
        except Exception as e:  # Blender's importer is not ours: any exception means it cannot read the file
            raise FormatError(f"{path}: Blender's FBX importer failed ({type(e).__name__}: {_last_line(e)})") from None
    if exe is None:
        raise _missing()
    with tempfile.TemporaryDirectory(prefix="jl-fbx-") as tmp:
        out = Path(tmp) / "arrays.npz"
        _run("read", path, out, exe, path, (repr(max_values),))
        with np.load(out, allow_pickle=False) as z:
            data: dict[str, Any] = {k: z[k] for k in z.files}
    data["names"] = json.loads(str(data["names"]))
    for k in ("custom", "object", "action"):
        data[k] = str(data.get(k, ""))
    return data


def motion_from_arrays(data: dict[str, Any], path: str | Path = "<blender>") -> Motion:
    """A Motion from an armature's arrays (:func:`jointlimits.io._blender.armature_arrays`):
    BVH-style joint frames (the armature's axes at rest), rotations ``R_b L R_b^-1``."""
    names = list(data["names"])
    parents = np.asarray(data["parents"], np.int64)
    rest = np.asarray(data["rest"], np.float64)
    glob = np.asarray(data["global_pose"], np.float64)
    J, F = len(names), glob.shape[0]
    if J == 0 or F == 0:
        raise FormatError(f"{path}: the armature has no bones or the action no frames")
    if not (np.all(np.isfinite(rest)) and np.all(np.isfinite(glob))):
        raise FormatError(f"{path}: the armature's transforms are not finite")
    rot = glob[..., :3, :3]
    scale = np.linalg.norm(rot, axis=-2)
    g = quat.normalize(quat.from_matrix(rot / np.where(scale > 0, scale, 1.0)[..., None, :]))
    x = glob[..., :3, 3]
    heads = rest[:, :3, 3]
    offsets = heads.copy()
    rotations = g.copy()
    positions = x.copy()
    for j in range(1, J):
        p = int(parents[j])
        offsets[j] = heads[j] - heads[p]
        rotations[:, j] = quat.inv_mul(g[:, p], g[:, j])
        positions[:, j] = quat.inv_mul_vec(g[:, p], x[:, j] - x[:, p])
    extras = _extras(data.get("custom"), J, path)
    size = max(float(np.abs(heads).max()), 1e-12)
    moving = np.ptp(positions, axis=0).max(-1) > 1e-5 * size
    channels = [(list(POSITION_CHANNELS) if (j == 0 or moving[j]) else []) + _ROT_ZYX for j in range(J)]
    end_sites: list[tuple[int, NDArray[np.float64]]] = []
    fps = float(data["fps"])
    if not (np.isfinite(fps) and fps > 0):
        raise FormatError(f"{path}: the scene's frame rate {fps:g} is not a positive number")
    frame_time = 1.0 / fps
    if extras.get("channels") and len(extras["channels"]) == J:
        channels = [list(c) for c in extras["channels"]]
        end_sites = [(int(j), np.asarray(o, np.float64)) for j, o in extras.get("end_sites", [])]
        if extras.get("names") and len(extras["names"]) == J:
            names = [str(n) for n in extras["names"]]
        frame_time = float(extras.get("frame_time", frame_time))
    for j in range(J):
        if not any(c in POSITION_CHANNELS for c in channels[j]):
            positions[:, j] = offsets[j]
    if not extras:  # leaf bones exporters add to mark a bone's length (Blender's "_end", Mixamo's "_End")
        has_child = np.zeros(J, bool)
        has_child[parents[parents >= 0]] = True
        leaf = [j for j in range(1, J) if not has_child[j] and names[j].lower().endswith("_end")]
        if leaf:
            keep = np.array([j for j in range(J) if j not in set(leaf)])
            slot = -np.ones(J, np.int64)
            slot[keep] = np.arange(keep.size)
            end_sites = [(int(slot[parents[j]]), offsets[j].copy()) for j in leaf]
            names = [names[j] for j in keep]
            parents = np.where(parents[keep] >= 0, slot[np.maximum(parents[keep], 0)], -1)
            offsets, channels = offsets[keep], [channels[j] for j in keep]
            rotations, positions = rotations[:, keep], positions[:, keep]
    sk = Skeleton(names, parents, offsets, channels, end_sites)
    return Motion(sk, quat.normalize(rotations), positions, frame_time)


def _extras(text: Any, joints: int, path: str | Path) -> dict[str, Any]:
    """The armature's ``jointlimits`` property (JSON written by :func:`save`), checked: ``{}``
    when absent or not a JSON object; a one-line FormatError when a field has the wrong type."""
    if not text:
        return {}
    try:
        extras = json.loads(str(text))
    except (ValueError, RecursionError):
        return {}
    if not isinstance(extras, dict):
        return {}

    def bad(field: str) -> FormatError:
        return FormatError(f"{path}: the armature's jointlimits property has a malformed {field!r}")

    ft = extras.get("frame_time")
    if "frame_time" in extras and not (isinstance(ft, (int, float)) and not isinstance(ft, bool)):
        raise bad("frame_time")
    channels = extras.get("channels")
    if channels and len(channels) == joints:
        if not (
            isinstance(channels, list)
            and all(isinstance(c, list) and all(isinstance(x, str) for x in c) for c in channels)
        ):
            raise bad("channels")
        sites = extras.get("end_sites", [])
        if not isinstance(sites, list) or not all(
            isinstance(s, list)
            and len(s) == 2
            and type(s[0]) is int
            and 0 <= s[0] < joints
            and isinstance(s[1], list)
            and len(s[1]) == 3
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in s[1])
            for s in sites
        ):
            raise bad("end_sites")
        names = extras.get("names")
        if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise bad("names")
    return extras


_FBX_MAGIC = b"Kaydara FBX Binary  \x00"
_SCALAR_BYTES = {ord(c): n for c, n in (("Y", 2), ("B", 1), ("C", 1), ("I", 4), ("F", 4), ("D", 8), ("L", 8))}
_ARRAY_TYPES = frozenset(b"bcilfd")


def check_binary(path: str | os.PathLike) -> None:
    """Walk the node records of a binary FBX file before Blender parses it (headers and property
    sizes, never the values): every record must lie inside its parent and the file, every
    property inside its record, and the arrays' declared lengths must fit the memory budget
    (:mod:`jointlimits._budget`). Blender's parser trusts these numbers: a flipped byte in a
    property count or an array length makes it allocate gigabytes (a ``bytearray`` of the count,
    a zlib buffer of the length) before it fails. A one-line FormatError names the first bad
    record; files that are not binary FBX are left to Blender's own message."""
    p = Path(path)
    with open(p, "rb") as fh:
        if fh.read(len(_FBX_MAGIC)) != _FBX_MAGIC:
            return
        size = os.fstat(fh.fileno()).st_size
        if size < 27:
            raise FormatError(f"{p}: not a valid binary FBX file (it ends inside its header)")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            _walk_records(mm, size, Budget(str(p), FormatError), p)


def _walk_records(mm: Any, size: int, budget: Budget, p: Path) -> None:
    head = "<QQQB" if struct.unpack_from("<I", mm, 23)[0] >= 7500 else "<IIIB"
    hs = struct.calcsize(head)

    def bad(what: str, at: int) -> FormatError:
        return FormatError(f"{p}: not a valid binary FBX file ({what} at byte {at})")

    ranges = [(27, size)]  # node lists still to walk: (first record, end of the parent)
    while ranges:
        pos, limit = ranges.pop()
        while True:
            if pos + hs > limit:
                raise bad("a node record runs past the end of its parent", pos)
            end, nprops, plen, nlen = struct.unpack_from(head, mm, pos)
            if end == 0:  # the null record closing this list
                break
            q = pos + hs + nlen
            pend = q + plen
            if not pos < pend <= end <= limit:
                raise bad("a node record's end lies outside its parent", pos)
            if nprops > plen:
                raise bad(f"a node record declares {nprops} properties in {plen} bytes", pos)
            for _ in range(nprops):
                if q >= pend:
                    raise bad("a property runs past its record", q)
                c = mm[q]
                q += 1
                if c in _SCALAR_BYTES:
                    q += _SCALAR_BYTES[c]
                elif c in _ARRAY_TYPES:
                    if q + 12 > pend:
                        raise bad("an array header runs past its record", q)
                    n, _enc, clen = struct.unpack_from("<III", mm, q)
                    budget.take(n, "its arrays")
                    q += 12 + clen
                elif c in b"SR":
                    if q + 4 > pend:
                        raise bad("a string runs past its record", q)
                    q += 4 + struct.unpack_from("<I", mm, q)[0]
                else:
                    raise bad(f"unknown property type {bytes([c])!r}", q - 1)
                if q > pend:
                    raise bad("a property runs past its record", q)
            if pend < end:
                ranges.append((pend, end))
            pos = end


def load(path: str | os.PathLike, *, blender: str | os.PathLike | None = None) -> Motion:
    """Read an FBX file's armature and action with Blender's importer (see the module docstring)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    try:
        check_input_file(p)
    except ValueError as e:
        raise FormatError(f"{p}: {e}") from None
    if not (blender is None and in_process()) and blender_python(blender) is None:
        raise _missing()  # before the file's own checks: what is missing here is not the file's fault
    check_binary(p)
    try:
        return motion_from_arrays(_read_arrays(p, blender), p)
    except SkeletonError as e:  # what the file declares makes no valid skeleton or clip
        raise FormatError(f"{p}: {_last_line(e)}") from None


def arrays_from_motion(motion: Motion, metres_per_unit: float | None = None, up: str | None = None) -> dict[str, Any]:
    """What :func:`jointlimits.io._blender.write_fbx` takes: bone heads and tails (the clip's
    units and axes), the BVH-style global pose ``[F, J, 4, 4]``, the armature object's matrix
    (turned Z-up, scaled to metres) and the custom property."""
    from ..motion.units import guess_units, guess_up_axis

    motion.check_finite()
    sk = motion.skeleton
    J = sk.num_joints
    if metres_per_unit is None:
        metres_per_unit = guess_units(motion).metres_per_unit
    up = up or guess_up_axis(motion)
    gr, gp = forward_kinematics(motion)
    rest = Motion.rest(sk, 1)
    rest.positions = rest.positions.copy()
    _, heads = forward_kinematics(rest)
    heads = heads[0]
    kids: dict[int, list[np.ndarray]] = {j: [] for j in range(J)}
    for j in range(1, J):
        kids[int(sk.parents[j])].append(sk.offsets[j])
    for pj, o in sk.end_sites:
        kids[int(pj)].append(o)
    lengths = [np.linalg.norm(o) for j in range(1, J) for o in [sk.offsets[j]] if np.linalg.norm(o) > 0]
    unit = float(np.median(lengths)) if lengths else 1.0
    tails = heads.copy()
    for j in range(J):
        d = np.mean(kids[j], axis=0) if kids[j] else np.zeros(3)
        if np.linalg.norm(d) < 0.05 * unit:  # Blender drops zero-length bones
            d = sk.offsets[j] if j and np.linalg.norm(sk.offsets[j]) > 0.05 * unit else np.array([0.0, 0.0, 0.0])
            if np.linalg.norm(d) < 0.05 * unit:
                d = np.array([0.0, 0.25 * unit, 0.0])
            else:
                d = 0.25 * d
        tails[j] = heads[j] + d
    pose = np.zeros((motion.num_frames, J, 4, 4))
    pose[..., :3, :3] = quat.to_matrix(gr)
    pose[..., :3, 3] = gp
    pose[..., 3, 3] = 1.0
    world = np.eye(4)
    world[:3, :3] = quat.to_matrix(np.asarray(_UP_TO_Z.get(up, _UP_TO_Z["+y"]))) * float(metres_per_unit)
    custom = {
        "frame_time": float(motion.frame_time),
        "channels": sk.channels,
        "end_sites": [[int(pj), [float(x) for x in o]] for pj, o in sk.end_sites],
        "names": list(sk.names),
        "metres_per_unit": float(metres_per_unit),
        "up": up,
    }
    return {
        "names": list(sk.names),
        "parents": sk.parents.astype(np.int64),
        "heads": heads,
        "tails": tails,
        "global_pose": pose,
        "matrix_world": world,
        "fps": 1.0 / motion.frame_time,
        "custom": json.dumps(custom),
        "object": sk.names[0] + "_armature",
    }


def save(
    path: str | os.PathLike,
    motion: Motion,
    *,
    metres_per_unit: float | None = None,
    up: str | None = None,
    blender: str | os.PathLike | None = None,
) -> None:
    """Write ``motion`` as FBX with Blender's exporter, atomically (see the module docstring)."""
    p = Path(path)
    if p.suffix.lower() != ".fbx":
        raise FormatError(f"{p}: an FBX file name ends in .fbx")
    data = arrays_from_motion(motion, metres_per_unit, up)
    exe = None if blender is None and in_process() else blender_python(blender)
    if exe is None and not in_process():
        raise _missing()
    with tempfile.TemporaryDirectory(prefix="jl-fbx-") as tmp:
        out = Path(tmp) / "out.fbx"
        if exe is None:
            try:
                with _silenced():
                    from . import _blender

                    _blender.write_fbx(str(out), data)
            except (RuntimeError, ValueError) as e:
                raise FormatError(f"{p}: Blender's FBX exporter failed ({str(e).strip().splitlines()[-1]})") from None
        else:
            src = Path(tmp) / "arrays.npz"
            arrays: dict[str, Any] = {k: (json.dumps(v) if k == "names" else v) for k, v in data.items()}
            np.savez(src, **arrays)
            _run("write", src, out, exe, p)
        payload = out.read_bytes()
    with atomic_write(p, binary=True) as fh:
        fh.write(payload)

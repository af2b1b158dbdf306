"""USD (``.usd`` / ``.usda`` / ``.usdc``) skeletal animation in and out, with usd-core's UsdSkel.

``load`` reads one ``UsdSkel.Skeleton`` (the first under the default prim, or ``skeleton=`` a prim
path) and the ``UsdSkelAnimation`` bound to it as ``skel:animationSource``: rest transforms give
the offsets and the rotations of joints the animation leaves out, the animation's translations
and rotations are read at every time sample (time codes over ``timeCodesPerSecond`` give the
frame time). Joint order is the skeleton's, re-sorted parents first when it is not.

``save`` writes a ``SkelRoot`` holding the ``Skeleton`` (joint paths from the names, the original
names in ``jointNames``, rest = bind = the offsets with identity rotations) and a
``SkelAnimation`` keyed on every frame (time code = frame index, ``timeCodesPerSecond`` =
1 / frame time), in the clip's own units and axes: the stage's ``metersPerUnit`` and ``upAxis``
are :mod:`jointlimits.motion.units`' guesses (``Y`` or ``Z``; USD knows no other up axis). The
BVH channel layout, End Sites and exact frame time are kept in the skeleton prim's
``customData["jointlimits"]`` so a file written here loads back with the same layout. USD stores
animation as float32 (``quatf``, ``float3``): BVH -> USD -> BVH keeps rotations to about 1e-7 rad.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write, check_input_file
from .._budget import Budget
from .._optional import require
from ..errors import FormatError
from ..motion import quat
from ..motion.skeleton import POSITION_CHANNELS, Motion, Skeleton
from . import usd_isolate

__all__ = ["load", "save", "to_stage", "write_stage", "validate", "EXTENSIONS", "CUSTOM_KEY"]

EXTENSIONS = (".usd", ".usda", ".usdc")
#: Key of this package's block in the skeleton prim's customData.
CUSTOM_KEY = "jointlimits"
_ROT_ZYX = ["Zrotation", "Yrotation", "Xrotation"]


def _pxr() -> Any:
    require("pxr", "usd", "USD files")
    import pxr.Sdf
    import pxr.Usd
    import pxr.UsdGeom
    import pxr.UsdSkel
    import pxr.Vt

    return pxr


def _identifier(name: str, used: set[str]) -> str:
    """A valid, unique USD prim-name token for a joint name (the name itself is kept in jointNames)."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name) or "joint"
    if s[0].isdigit():
        s = "_" + s
    base, k = s, 1
    while s in used:
        s = f"{base}_{k}"
        k += 1
    used.add(s)
    return s


# ---------------------------------------------------------------------------------------- reading
def _decompose(m: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(translation, rotation w,x,y,z, scale) of row-vector USD matrices ``[..., 4, 4]``."""
    t = m[..., 3, :3].copy()
    r = np.swapaxes(m[..., :3, :3], -1, -2)  # column-vector rotation-scale
    s = np.linalg.norm(r, axis=-2)
    q = quat.from_matrix(r / np.where(s > 0, s, 1.0)[..., None, :])
    return t, quat.normalize(q), s


def _find_skeleton(stage: Any, pxr: Any, skeleton: str | None, path: Path) -> Any:
    if skeleton is not None:
        prim = stage.GetPrimAtPath(skeleton)
        if not prim or not prim.IsA(pxr.UsdSkel.Skeleton):
            raise FormatError(f"{path}: no UsdSkel Skeleton at {skeleton!r}")
        return pxr.UsdSkel.Skeleton(prim)
    for prim in stage.Traverse():
        if prim.IsA(pxr.UsdSkel.Skeleton):
            return pxr.UsdSkel.Skeleton(prim)
    raise FormatError(f"{path}: the stage has no UsdSkel Skeleton")


def _topology(tokens: list[str], path: Path) -> tuple[list[int], NDArray[np.int64]]:
    """Joint order (parents first, depth first in file order) and parents of the sorted joints."""
    index = {t: i for i, t in enumerate(tokens)}
    if len(index) != len(tokens):
        raise FormatError(f"{path}: the skeleton lists a joint path twice")
    parent: list[int] = []
    for t in tokens:
        up = t.rsplit("/", 1)[0] if "/" in t else None
        while up is not None and up not in index:  # UsdSkel: the nearest listed ancestor path
            up = up.rsplit("/", 1)[0] if "/" in up else None
        parent.append(-1 if up is None else index[up])
    roots = [i for i, p in enumerate(parent) if p < 0]
    if len(roots) != 1:
        raise FormatError(
            f"{path}: the skeleton must have one root joint, found {len(roots)}: {[tokens[r] for r in roots][:5]}"
        )
    kids: dict[int, list[int]] = {}
    for i, p in enumerate(parent):
        if p >= 0:
            kids.setdefault(p, []).append(i)
    order: list[int] = []
    stack = [roots[0]]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(kids.get(i, [])))
    slot = {i: k for k, i in enumerate(order)}
    return order, np.asarray([-1 if parent[i] < 0 else slot[parent[i]] for i in order], np.int64)


def load(path: str | os.PathLike, skeleton: str | None = None, *, isolate: bool | None = None) -> Motion:
    """Read a USD file's UsdSkel skeleton and its bound animation (see the module docstring).

    ``isolate``: first open and read the file with usd-core in a short-lived child process
    (:mod:`jointlimits.io.usd_isolate`), so that usd-core crashing or allocating gigabytes on a
    corrupted crate file is a ``FormatError`` instead of the end of this process. ``None`` (the
    default) does it for crate (``.usdc``) files and text files that name other files; ``False``
    never (files you trust; saves about a second a file), ``True`` always."""
    pxr = _pxr()
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    try:
        check_input_file(p)
    except ValueError as e:
        raise FormatError(f"{p}: {e}") from None
    if isolate or (isolate is None and usd_isolate.needs_check(p)):
        usd_isolate.check(p)
    try:
        stage = pxr.Usd.Stage.Open(str(p))
    except Exception as e:  # Tf errors on malformed layers
        raise FormatError(f"{p}: not a readable USD file ({_why(e)})") from None
    if stage is None:
        raise FormatError(f"{p}: not a readable USD file")
    try:
        _check_layers(stage, p)
        return _load(stage, pxr, p, skeleton)
    except FormatError:
        raise
    except RecursionError:
        raise FormatError(f"{p}: not a readable USD file (its data nests too deep)") from None
    except Exception as e:  # a malformed stage's values (wrong types, short lists, Tf errors)
        raise FormatError(f"{p}: not a readable USD file ({type(e).__name__}: {_why(e)})") from None


def _why(e: BaseException) -> str:
    """The last line of an exception's text (a Tf error's text may itself fail to decode)."""
    try:
        lines = str(e).strip().splitlines()
    except Exception:  # e.g. UnicodeDecodeError inside pxr's own __str__
        return f"{type(e).__name__} (its message is not UTF-8)"
    return (lines[-1] if lines else type(e).__name__)[:200]


def _check_layers(stage: Any, p: Path) -> None:
    """Every layer the stage composed (sublayers, references, payloads) is a file inside the
    input's own folder: nothing else reaches the clip (#41)."""
    folder = p.resolve().parent
    for layer in stage.GetUsedLayers():
        real = getattr(layer, "realPath", "") or ""
        if not real or layer.anonymous:
            continue
        try:
            Path(real).resolve().relative_to(folder)
        except ValueError:
            raise FormatError(
                f"{p}: names the layer {layer.identifier!r} outside its own folder; "
                "only files beside the input are read"
            ) from None


def _load(stage: Any, pxr: Any, p: Path, skeleton: str | None) -> Motion:
    skel = _find_skeleton(stage, pxr, skeleton, p)
    tokens = [str(t) for t in (skel.GetJointsAttr().Get() or [])]
    if not tokens:
        raise FormatError(f"{p}: skeleton {skel.GetPath()} has no joints")
    J = len(tokens)
    order, parents = _topology(tokens, p)
    names_attr = skel.GetJointNamesAttr().Get()
    names = [str(n) for n in names_attr] if names_attr is not None and len(names_attr) == J else []
    if not names or len(set(names)) != J or not all(names):
        names = [t.rsplit("/", 1)[-1] for t in tokens]
    rest_m = skel.GetRestTransformsAttr().Get()
    if rest_m is None or len(rest_m) != J:
        bind = skel.GetBindTransformsAttr().Get()
        if bind is None or len(bind) != J:
            raise FormatError(f"{p}: skeleton {skel.GetPath()} has neither rest nor bind transforms for its {J} joints")
        world = np.asarray(bind, np.float64).reshape(J, 4, 4)
        local = world.copy()
        par = {i: -1 for i in range(J)}
        for k, i in enumerate(order):
            par[i] = -1 if parents[k] < 0 else order[parents[k]]
        for i in range(J):
            if par[i] >= 0:
                local[i] = world[i] @ np.linalg.inv(world[par[i]])
        rest = local
    else:
        rest = np.asarray(rest_m, np.float64).reshape(J, 4, 4)
    if not np.all(np.isfinite(rest)):
        raise FormatError(f"{p}: skeleton {skel.GetPath()} has non-finite rest transforms")
    rest_t, rest_r, rest_s = _decompose(rest)

    custom = skel.GetPrim().GetCustomDataByKey(CUSTOM_KEY)
    extras: dict[str, Any] = {}
    if isinstance(custom, str):
        try:
            extras = json.loads(custom)
        except ValueError:
            extras = {}

    binding = pxr.UsdSkel.BindingAPI(skel.GetPrim())
    anim = None
    rel = binding.GetAnimationSourceRel()
    targets = rel.GetTargets() if rel else []
    if targets:
        prim = stage.GetPrimAtPath(targets[0])
        if not prim or not prim.IsA(pxr.UsdSkel.Animation):
            raise FormatError(f"{p}: the skeleton's animationSource {targets[0]} is not a SkelAnimation")
        anim = pxr.UsdSkel.Animation(prim)

    tcps = float(stage.GetTimeCodesPerSecond() or 24.0)
    rotations_f = np.repeat(rest_r[None], 1, axis=0)
    positions_f = np.repeat(rest_t[None], 1, axis=0)
    times: list[float] = []
    animated_t: set[int] = set()
    if anim is not None:
        a_tokens = [str(t) for t in (anim.GetJointsAttr().Get() or [])]
        index = {t: i for i, t in enumerate(tokens)}
        missing = [t for t in a_tokens if t not in index]
        if missing:
            raise FormatError(f"{p}: animation {anim.GetPath()} drives joints the skeleton lacks: {missing[:5]}")
        cols = np.asarray([index[t] for t in a_tokens], np.int64)
        r_attr, t_attr = anim.GetRotationsAttr(), anim.GetTranslationsAttr()
        times = sorted(set(r_attr.GetTimeSamples()) | set(t_attr.GetTimeSamples()))
        codes = times or [pxr.Usd.TimeCode.Default()]
        F = len(codes)
        Budget(str(p), FormatError).take(F * (7 * len(tokens) + 2), f"{F} time samples of {len(tokens)} joints")
        rotations_f = np.repeat(rest_r[None], F, axis=0)
        positions_f = np.repeat(rest_t[None], F, axis=0)
        for k, tc in enumerate(codes):
            r = r_attr.Get(tc)
            if r is not None and len(r):
                if len(r) != cols.size:
                    raise FormatError(f"{p}: animation rotations have {len(r)} values for {cols.size} joints")
                xyzw = np.asarray(r, np.float64).reshape(-1, 4)
                rotations_f[k, cols] = xyzw[:, [3, 0, 1, 2]]
            t = t_attr.Get(tc)
            if t is not None and len(t):
                if len(t) != cols.size:
                    raise FormatError(f"{p}: animation translations have {len(t)} values for {cols.size} joints")
                positions_f[k, cols] = np.asarray(t, np.float64).reshape(-1, 3)
                animated_t.update(cols.tolist())
    if not (np.all(np.isfinite(rotations_f)) and np.all(np.isfinite(positions_f))):
        raise FormatError(f"{p}: the animation has non-finite values")
    norms = np.linalg.norm(rotations_f, axis=-1)
    if np.any(norms < 1e-6):
        raise FormatError(f"{p}: the animation has zero-length rotations")
    if np.abs(rest_s - 1).max() > 1e-6:
        import warnings

        warnings.warn(f"{p}: joints with non-unit rest scale; scale is ignored", stacklevel=2)

    if "frame_time" in extras:
        frame_time = float(extras["frame_time"])
    elif len(times) > 1:
        d = np.diff(np.asarray(times))
        frame_time = float(np.median(d)) / tcps
    else:
        frame_time = 1.0 / tcps
    if not (np.isfinite(frame_time) and frame_time > 0):
        raise FormatError(f"{p}: cannot tell the frame time (timeCodesPerSecond {tcps})")

    o = np.asarray(order)
    rotations = quat.normalize(rotations_f[:, o])
    positions = positions_f[:, o]
    offsets = rest_t[o]
    names = [names[i] for i in order]
    channels = [
        (list(POSITION_CHANNELS) if (k == 0 or i in animated_t and np.ptp(positions_f[:, i], axis=0).max() > 0) else [])
        + _ROT_ZYX
        for k, i in enumerate(order)
    ]
    end_sites: list[tuple[int, NDArray[np.float64]]] = []
    if extras.get("channels") and len(extras["channels"]) == J:
        channels = [list(c) for c in extras["channels"]]
        end_sites = [(int(j), np.asarray(off, np.float64)) for j, off in extras.get("end_sites", [])]
    for k in range(J):
        if not any(c in POSITION_CHANNELS for c in channels[k]):
            positions[:, k] = offsets[k]
    sk = Skeleton(names, parents, offsets, channels, end_sites)
    return Motion(sk, rotations, positions, frame_time)


# ---------------------------------------------------------------------------------------- writing
def to_stage(motion: Motion, metres_per_unit: float | None = None, up: str | None = None) -> Any:
    """An in-memory ``Usd.Stage`` holding ``motion`` as a SkelRoot, Skeleton and SkelAnimation."""
    pxr = _pxr()
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdSkel, Vt

    from ..motion.units import guess_units, guess_up_axis

    motion.check_finite()
    sk = motion.skeleton
    J, F = sk.num_joints, motion.num_frames
    if metres_per_unit is None:
        metres_per_unit = guess_units(motion).metres_per_unit
    if not (np.isfinite(metres_per_unit) and metres_per_unit > 0):
        raise FormatError(f"metres_per_unit must be positive and finite, got {metres_per_unit}")
    up = up or guess_up_axis(motion)

    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, float(metres_per_unit))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z if up.endswith("z") else UsdGeom.Tokens.y)
    stage.SetTimeCodesPerSecond(1.0 / motion.frame_time)
    stage.SetFramesPerSecond(1.0 / motion.frame_time)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(max(F - 1, 0))
    root = UsdSkel.Root.Define(stage, "/Root")
    stage.SetDefaultPrim(root.GetPrim())
    skel = UsdSkel.Skeleton.Define(stage, "/Root/Skeleton")
    used: set[str] = set()
    ids = [_identifier(n, used) for n in sk.names]
    tokens: list[str] = []
    for j in range(J):
        pj = int(sk.parents[j])
        tokens.append(ids[j] if pj < 0 else f"{tokens[pj]}/{ids[j]}")
    skel.CreateJointsAttr(Vt.TokenArray(tokens))
    skel.CreateJointNamesAttr(Vt.TokenArray(list(sk.names)))
    rest = np.tile(np.eye(4), (J, 1, 1))
    rest[:, 3, :3] = sk.offsets
    world = rest.copy()
    for j in range(1, J):
        world[j] = rest[j] @ world[int(sk.parents[j])]
    skel.CreateRestTransformsAttr(Vt.Matrix4dArray.FromNumpy(np.ascontiguousarray(rest)))
    skel.CreateBindTransformsAttr(Vt.Matrix4dArray.FromNumpy(np.ascontiguousarray(world)))
    extras = {
        "frame_time": float(motion.frame_time),
        "channels": sk.channels,
        "end_sites": [[int(pj), [float(x) for x in o]] for pj, o in sk.end_sites],
        "names": list(sk.names),
    }
    skel.GetPrim().SetCustomDataByKey(CUSTOM_KEY, json.dumps(extras))

    anim = UsdSkel.Animation.Define(stage, "/Root/Skeleton/Animation")
    anim.CreateJointsAttr(Vt.TokenArray(tokens))
    rot = quat.unroll(quat.normalize(motion.rotations), axis=0)  # neighbours on one cover for slerp
    xyzw = np.ascontiguousarray(rot[..., [1, 2, 3, 0]], np.float32)
    pos = np.ascontiguousarray(motion.positions, np.float32)
    r_attr, t_attr = anim.CreateRotationsAttr(), anim.CreateTranslationsAttr()
    anim.CreateScalesAttr().Set(Vt.Vec3hArray([Gf.Vec3h(1, 1, 1)] * J))
    for f in range(F):
        tc = Usd.TimeCode(f)
        r_attr.Set(Vt.QuatfArray.FromNumpy(xyzw[f]), tc)
        t_attr.Set(Vt.Vec3fArray.FromNumpy(pos[f]), tc)
    UsdSkel.BindingAPI.Apply(skel.GetPrim()).CreateAnimationSourceRel().SetTargets([anim.GetPath()])
    UsdSkel.BindingAPI.Apply(root.GetPrim()).CreateSkeletonRel().SetTargets([skel.GetPath()])
    del pxr, Sdf
    return stage


def write_stage(path: str | os.PathLike, stage: Any) -> None:
    """Write ``stage``'s root layer to ``path`` atomically, in the format its extension names
    (``.usda`` text, ``.usdc`` and ``.usd`` crate)."""
    p = Path(path)
    ext = p.suffix.lower()
    if ext not in EXTENSIONS:
        raise FormatError(f"{p}: a USD file name ends in {', '.join(EXTENSIONS)}")
    with tempfile.TemporaryDirectory(prefix="jl-usd-") as tmp:
        t = Path(tmp) / f"out{ext}"
        if not stage.GetRootLayer().Export(str(t)):
            raise FormatError(f"{p}: usd-core could not write the layer")
        data = t.read_bytes()
    with atomic_write(p, binary=True) as fh:
        fh.write(data)


def save(
    path: str | os.PathLike, motion: Motion, *, metres_per_unit: float | None = None, up: str | None = None
) -> None:
    """Write ``motion`` as a UsdSkel skeleton and animation (``.usda`` text, ``.usdc``/``.usd``
    crate), atomically. ``metres_per_unit`` and ``up`` default to :mod:`jointlimits.motion.units`'
    guesses and only set the stage's metadata (the data stays in the clip's units and axes)."""
    p = Path(path)
    if p.suffix.lower() not in EXTENSIONS:
        raise FormatError(f"{p}: a USD file name ends in {', '.join(EXTENSIONS)}")
    write_stage(p, to_stage(motion, metres_per_unit, up))


def validate(path: str | os.PathLike) -> list[str]:
    """Errors usd-core's validators (every registered one: what ``usdchecker`` runs) find in the
    file at ``path``, as ``"Name: message"`` lines; empty when it passes."""
    _pxr()
    import pxr.UsdPhysics  # noqa: F401  (registers the physics validators)
    from pxr import Usd, UsdValidation

    stage = Usd.Stage.Open(str(path))
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    errors = UsdValidation.ValidationContext(validators).Validate(stage)
    return [
        f"{e.GetName()}: {e.GetMessage()}" for e in errors if e.GetType() == UsdValidation.ValidationErrorType.Error
    ]

"""AMASS / SMPL-family motion (``.npz``): axis-angle poses on the SMPL kinematic tree.

The layout is told by the keys:

- SMPL-H (AMASS "SMPL+H G"): ``poses`` ``[F, 156]`` (52 joints: 22 body + 2 x 15 finger joints),
  ``trans``, ``betas``, ``gender``, ``mocap_framerate``;
- SMPL-X (AMASS "SMPL-X N"): ``root_orient`` ``[F, 3]``, ``pose_body`` ``[F, 63]``, ``pose_hand``
  ``[F, 90]``, ``pose_jaw``, ``pose_eye`` (55 joints), ``trans``, ``mocap_frame_rate``, ...;
  ``root_orient``/``pose_body``/``pose_hand`` without jaw or eyes (nor ``surface_model_type``
  ``smplx``) is read as SMPL-H;
- ``poses`` of width 72 (SMPL, 24 joints), 156 (SMPL-H) or 165 (SMPL-X).

Local rotations are the axis-angle vectors as quaternions (w, x, y, z); the root's position is
``trans`` plus the pelvis rest position, so forward kinematics matches the body model's joints.
Rest offsets come from, in order: rest joint positions in the file (``J`` or ``joints``, ``[J, 3]``),
a body-model npz given as ``model=`` or in the ``JOINTLIMITS_BODY_MODEL`` environment variable
(precomputed ``J``, or ``J_regressor`` with ``v_template`` and optionally ``shapedirs`` shaped by
the clip's ``betas``), or else a generic humanoid's proportions with a warning (limits need only
the rotations; twist axes and positions use the offsets). Units are metres and the axes are the
file's (AMASS is Z-up). Writing npz is not supported.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import FormatError, JointLimitsError
from ..motion import quat
from ..motion.skeleton import MAX_FRAME_TIME, MIN_FRAME_TIME, POSITION_CHANNELS, Motion, Skeleton
from ._npz import read_npz

__all__ = ["load", "save", "joint_names", "BODY", "MODEL_ENV"]

#: Largest |axis-angle component| (radians) and |position| (metres) read: past them a value is
#: no measurement, and squares of it would overflow into inf / NaN downstream.
MAX_ANGLE, MAX_METRES = 1e6, 1e6

#: Environment variable naming a body-model npz used when a clip carries no rest joints.
MODEL_ENV = "JOINTLIMITS_BODY_MODEL"

#: The 22 SMPL body joints and their parents (shared by SMPL, SMPL-H and SMPL-X).
BODY = [
    "pelvis",
    "left_hip",
    "right_hip",
    "spine1",
    "left_knee",
    "right_knee",
    "spine2",
    "left_ankle",
    "right_ankle",
    "spine3",
    "left_foot",
    "right_foot",
    "neck",
    "left_collar",
    "right_collar",
    "head",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
]
_BODY_PARENTS = [-1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19]
_FINGERS = ["index", "middle", "pinky", "ring", "thumb"]

# A generic adult in the SMPL rest pose (T-pose, Y-up, facing +Z, metres): rest joint positions.
_GENERIC_BODY = np.array(
    [
        [0.0, 0.93, 0.0],
        [0.07, 0.84, -0.01],
        [-0.07, 0.84, -0.01],
        [0.0, 1.04, -0.02],
        [0.11, 0.46, 0.0],
        [-0.11, 0.46, 0.0],
        [0.0, 1.17, 0.0],
        [0.09, 0.06, -0.04],
        [-0.09, 0.06, -0.04],
        [0.0, 1.23, 0.01],
        [0.12, 0.0, 0.08],
        [-0.12, 0.0, 0.08],
        [0.0, 1.44, -0.02],
        [0.08, 1.35, -0.01],
        [-0.08, 1.35, -0.01],
        [0.0, 1.53, 0.0],
        [0.17, 1.38, -0.02],
        [-0.17, 1.38, -0.02],
        [0.43, 1.36, -0.04],
        [-0.43, 1.36, -0.04],
        [0.68, 1.37, -0.04],
        [-0.68, 1.37, -0.04],
    ]
)
# finger base (x, z) on the left hand relative to the wrist, phalanx lengths (metres)
_FINGER_BASE = {
    "index": (0.095, 0.025),
    "middle": (0.10, 0.005),
    "pinky": (0.08, -0.035),
    "ring": (0.09, -0.015),
    "thumb": (0.03, 0.035),
}
_PHALANX = 0.03


def joint_names(kind: str) -> tuple[list[str], NDArray[np.int64]]:
    """Joint names and parents of ``"smpl"`` (24), ``"smplh"`` (52) or ``"smplx"`` (55)."""
    names, parents = list(BODY), list(_BODY_PARENTS)
    if kind == "smpl":
        return names + ["left_hand", "right_hand"], np.array(parents + [20, 21])
    if kind == "smplx":
        names += ["jaw", "left_eye_smplhf", "right_eye_smplhf"]
        parents += [15, 15, 15]
    elif kind != "smplh":
        raise FormatError(f"unknown body model {kind!r} (smpl, smplh or smplx)")
    for side, wrist in (("left", 20), ("right", 21)):
        for f in _FINGERS:
            for k in (1, 2, 3):
                names.append(f"{side}_{f}{k}")
                parents.append(wrist if k == 1 else len(names) - 2)
    return names, np.array(parents)


def _generic_rest(names: list[str], parents: NDArray[np.int64]) -> NDArray[np.float64]:
    """Rest joint positions of a generic humanoid for any of the three trees."""
    J = np.zeros((len(names), 3))
    J[:22] = _GENERIC_BODY
    for j in range(22, len(names)):
        n = names[j]
        side = 1.0 if n.startswith("left") else -1.0
        p = J[parents[j]]
        if n == "jaw":
            J[j] = p + [0.0, -0.04, 0.04]
        elif "eye" in n:
            J[j] = p + [0.03 * side, 0.08, 0.07]
        elif n.endswith("_hand"):
            J[j] = p + [0.08 * side, 0.0, 0.0]
        else:
            f = n.split("_", 1)[1][:-1]
            if n.endswith("1"):
                dx, dz = _FINGER_BASE[f]
                J[j] = p + [dx * side, -0.01, dz]
            else:
                J[j] = p + [_PHALANX * side, 0.0, 0.02 if f == "thumb" else 0.0]
    return J


def _str(v: Any) -> str:
    a = np.asarray(v)
    return str(a.item() if a.size == 1 else a).strip().lower()


def _layout(d: Mapping[str, NDArray], path: Path) -> tuple[str, NDArray[np.float64]]:
    """(model kind, axis-angle poses ``[F, J, 3]``) from the file's keys."""
    keys = set(d)
    if {"root_orient", "pose_body"} <= keys:
        root = np.asarray(d["root_orient"], np.float64).reshape(-1, 3)
        F = root.shape[0]
        parts = [root, np.asarray(d["pose_body"], np.float64).reshape(F, -1)]
        if parts[1].shape[1] != 63:
            raise FormatError(f"{path}: pose_body has {parts[1].shape[1]} values per frame, expected 63 (21 joints)")
        smplx = (
            "pose_jaw" in keys
            or "pose_eye" in keys
            or ("surface_model_type" in keys and _str(d["surface_model_type"]) == "smplx")
        )
        if smplx:
            parts.append(
                np.asarray(d["pose_jaw"], np.float64).reshape(F, 3) if "pose_jaw" in keys else np.zeros((F, 3))
            )
            parts.append(
                np.asarray(d["pose_eye"], np.float64).reshape(F, 6) if "pose_eye" in keys else np.zeros((F, 6))
            )
        hand = np.asarray(d["pose_hand"], np.float64).reshape(F, -1) if "pose_hand" in keys else np.zeros((F, 90))
        if hand.shape[1] != 90:
            raise FormatError(f"{path}: pose_hand has {hand.shape[1]} values per frame, expected 90 (30 joints)")
        parts.append(hand)
        poses = np.concatenate(parts, axis=1)
        return ("smplx" if smplx else "smplh"), poses.reshape(F, -1, 3)
    if "poses" in keys:
        poses = np.asarray(d["poses"], np.float64)
        if poses.ndim != 2:
            raise FormatError(f"{path}: poses must be [frames, values], got shape {poses.shape}")
        kind = {72: "smpl", 156: "smplh", 165: "smplx"}.get(poses.shape[1])
        if kind is None:
            raise FormatError(
                f"{path}: poses has {poses.shape[1]} values per frame; expected 72 (SMPL), 156 (SMPL-H) or 165 (SMPL-X)"
            )
        return kind, poses.reshape(poses.shape[0], -1, 3)
    raise FormatError(
        f"{path}: not an AMASS/SMPL motion file: no 'poses' nor 'root_orient'+'pose_body' "
        f"(keys: {', '.join(sorted(keys)) or 'none'})"
    )


def _rest_from_model(model: Path, n: int, betas: NDArray[np.float64] | None) -> NDArray[np.float64]:
    d = read_npz(model, FormatError)
    if "J" in d:
        J = np.asarray(d["J"], np.float64)
    elif "J_regressor" in d and "v_template" in d:
        v = np.asarray(d["v_template"], np.float64)
        if "shapedirs" in d and betas is not None and betas.size:
            sd = np.asarray(d["shapedirs"], np.float64)
            k = min(sd.shape[-1], betas.size)
            v = v + sd[..., :k] @ betas[:k]
        J = np.asarray(d["J_regressor"], np.float64) @ v
    else:
        raise FormatError(f"{model}: a body model needs 'J' or 'J_regressor' and 'v_template'")
    if J.ndim != 2 or J.shape[1] != 3 or J.shape[0] < n:
        raise FormatError(
            f"{model}: the body model has {J.shape[0] if J.ndim == 2 else '?'} joints; this clip needs {n}"
        )
    return J[:n]


def load(path: str | os.PathLike, fps: float | None = None, model: str | os.PathLike | None = None) -> Motion:
    """Read an AMASS/SMPL-family npz (see the module doc); ``fps`` resamples (slerp)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    d = read_npz(p, FormatError)
    for k, v in d.items():
        if k not in ("gender", "surface_model_type") and v.dtype.kind not in "biuf":
            raise FormatError(f"{p}: {k!r} must hold real numbers, got {v.dtype}")
    try:
        return _motion(p, d, fps, model)
    except JointLimitsError:
        raise
    except (ValueError, TypeError, IndexError) as e:  # an array of a size that does not fit its key
        raise FormatError(f"{p}: corrupt AMASS/SMPL file ({type(e).__name__}: {e})") from None


def _motion(p: Path, d: dict[str, NDArray], fps: float | None, model: str | os.PathLike | None) -> Motion:
    kind, aa = _layout(d, p)
    F, n = aa.shape[:2]
    if F == 0:
        raise FormatError(f"{p}: the clip has no frames")
    ok = (np.abs(aa) <= MAX_ANGLE).all(axis=(1, 2))  # per frame: an index per bad value could exhaust memory
    if not ok.all():
        f = int(np.argmin(ok))
        raise FormatError(f"{p}: pose values at frame {f} are not finite (or beyond +-{MAX_ANGLE:g} radians)")
    given = next((d[k] for k in ("mocap_framerate", "mocap_frame_rate", "frame_rate", "fps") if k in d), None)
    if given is None:
        warnings.warn(
            f"{p}: no frame rate in the file (mocap_framerate / mocap_frame_rate); assuming 120 fps", stacklevel=2
        )
    rate_a = np.asarray(120.0 if given is None else given).reshape(-1)
    if rate_a.size != 1:
        raise FormatError(f"{p}: the frame rate must be one number, got {rate_a.size} values")
    rate = float(rate_a[0])
    # a clip's frame time is in [MIN_FRAME_TIME, MAX_FRAME_TIME] s (Motion's own check, whose
    # SkeletonError would not name the file)
    if not (np.isfinite(rate) and 1.0 / MAX_FRAME_TIME <= rate <= 1.0 / MIN_FRAME_TIME):
        raise FormatError(
            f"{p}: frame rate {rate:g} is not a number of frames per second in "
            f"[{1.0 / MAX_FRAME_TIME:.3g}, {1.0 / MIN_FRAME_TIME:g}] (a frame time of 1 us to 1 h)"
        )
    names, parents = joint_names(kind)
    betas = np.asarray(d["betas"], np.float64).reshape(-1) if "betas" in d else None
    rest = None
    for key in ("J", "joints"):
        if key in d and np.asarray(d[key]).ndim == 2 and np.asarray(d[key]).shape[0] >= n:
            rest = np.asarray(d[key], np.float64)[:n]
            if rest.shape[1] != 3:
                raise FormatError(f"{p}: {key!r} must be rest joint positions [J, 3], got shape {d[key].shape}")
            break
    if rest is not None and not np.all(np.abs(rest) <= MAX_METRES):
        raise FormatError(f"{p}: rest joint positions must be finite, within +-{MAX_METRES:g} m")
    model = model if model is not None else os.environ.get(MODEL_ENV) or None
    if rest is None and model is not None:
        rest = _rest_from_model(Path(model), n, betas)
    if rest is None:
        warnings.warn(
            f"{p}: no rest joint positions in the file and no body model given "
            f"(model= or ${MODEL_ENV}); using a generic humanoid's offsets (rotations are exact, "
            f"bone lengths approximate)",
            stacklevel=2,
        )
        rest = _generic_rest(names, parents)
    offsets = rest.copy()
    offsets[1:] = rest[1:] - rest[parents[1:]]
    if "trans" in d and d["trans"].size != 3 * F:
        raise FormatError(f"{p}: trans must be [{F}, 3] (one root position per frame), got shape {d['trans'].shape}")
    trans = np.asarray(d["trans"], np.float64).reshape(F, 3) if "trans" in d else np.zeros((F, 3))
    ok = (np.abs(trans) <= MAX_METRES).all(axis=-1)
    if not ok.all():
        f = int(np.argmin(ok))
        raise FormatError(f"{p}: trans at frame {f} is not finite (or beyond +-{MAX_METRES:g} m)")
    rotations = quat.from_scaled_angle_axis(aa)
    positions = np.repeat(offsets[None], F, axis=0)
    positions[:, 0] = trans + rest[0]
    channels = [list(POSITION_CHANNELS) + ["Zrotation", "Yrotation", "Xrotation"]] + [
        ["Zrotation", "Yrotation", "Xrotation"] for _ in range(n - 1)
    ]
    m = Motion(Skeleton(names, parents, offsets, channels), rotations, positions, 1.0 / rate)
    if fps is not None:
        from ..motion.resample import resample

        m = resample(m, fps)
    return m


def save(path: str | os.PathLike, motion: Motion, **_: Any) -> None:
    """Writing npz is not supported: AMASS files are body-model parameters, not a skeleton."""
    raise FormatError(f"{path}: writing AMASS/SMPL npz is not supported; write .bvh, .glb or .gltf")

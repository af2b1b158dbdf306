"""Skeletons, motions (local rotations and positions per frame) and forward kinematics.

Joints are stored parent-before-child (``parents[j] < j``, root has parent -1). Local rotations
are ``[F, J, 4]`` quaternions (w, x, y, z) and local positions ``[F, J, 3]``: for a joint without
position channels its local position is its OFFSET in every frame; position channels replace the
OFFSET (root included).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._native import _core
from ..errors import SkeletonError
from . import quat

__all__ = ["Skeleton", "Motion", "forward_kinematics", "POSITION_CHANNELS", "ROTATION_CHANNELS"]

POSITION_CHANNELS = ("Xposition", "Yposition", "Zposition")
ROTATION_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")
CHANNEL_SET = frozenset(POSITION_CHANNELS + ROTATION_CHANNELS)
#: Largest |offset| (any unit): past it a bone is no measurement, and sums of squares of it (body
#: height, bone lengths) would overflow into inf and NaN.
MAX_OFFSET = 1e12
#: A clip's frame time is in [MIN_FRAME_TIME, MAX_FRAME_TIME] seconds (a million frames per second
#: to one frame an hour): past either end, frame counts and durations overflow or lose every digit.
MIN_FRAME_TIME = 1e-6
MAX_FRAME_TIME = 3600.0


@dataclass
class Skeleton:
    """A joint hierarchy.

    ``channels[j]`` lists the BVH channel names of joint j in file order (e.g. ``["Xposition",
    "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"]``). ``end_sites`` lists
    ``(parent_joint, offset)`` for every End Site.
    """

    names: list[str]
    parents: NDArray[np.int64]
    offsets: NDArray[np.float64]
    channels: list[list[str]] = field(default_factory=list)
    end_sites: list[tuple[int, NDArray[np.float64]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.names = list(self.names)
        self.parents = np.asarray(self.parents, dtype=np.int64).reshape(-1)
        self.offsets = np.asarray(self.offsets, dtype=np.float64).reshape(-1, 3)
        J = len(self.names)
        if not self.channels:
            self.channels = [list(POSITION_CHANNELS) + ["Zrotation", "Yrotation", "Xrotation"]] + [
                ["Zrotation", "Yrotation", "Xrotation"] for _ in range(J - 1)
            ]
        self.channels = [list(c) for c in self.channels]
        self.end_sites = [(int(p), np.asarray(o, dtype=np.float64).reshape(3)) for p, o in self.end_sites]
        if self.parents.shape != (J,) or self.offsets.shape != (J, 3) or len(self.channels) != J:
            raise SkeletonError(
                f"skeleton arrays disagree: {J} names, parents {self.parents.shape}, "
                f"offsets {self.offsets.shape}, {len(self.channels)} channel lists"
            )
        if J == 0:
            raise SkeletonError("a skeleton needs at least one joint")
        if self.parents[0] != -1 or np.any(self.parents[1:] < 0) or np.any(self.parents[1:] >= np.arange(1, J)):
            raise SkeletonError("parents must list the root first (-1) and every parent before its child")
        if len(set(self.names)) != J:
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise SkeletonError(f"duplicate joint names: {dup}")
        if not np.all(np.abs(self.offsets) <= MAX_OFFSET):
            j = int(np.argwhere(~(np.abs(self.offsets) <= MAX_OFFSET))[0, 0])
            raise SkeletonError(f"offset of joint {self.names[j]!r} is not finite or beyond +-{MAX_OFFSET:g}")
        for j, c in enumerate(self.channels):
            if any(k not in CHANNEL_SET for k in c) or len(set(c)) != len(c):
                raise SkeletonError(
                    f"channels of joint {self.names[j]!r} must be distinct names among {', '.join(sorted(CHANNEL_SET))}"
                    f", got {c!r}"
                )
        for p, o in self.end_sites:
            if not 0 <= p < J:
                raise SkeletonError(f"an End Site's parent {p} is not a joint (0..{J - 1})")
            if not np.all(np.abs(o) <= MAX_OFFSET):
                raise SkeletonError(
                    f"an End Site offset of joint {self.names[p]!r} is not finite or beyond +-{MAX_OFFSET:g}"
                )

    @property
    def num_joints(self) -> int:
        return len(self.names)

    def index(self, name: str | int) -> int:
        """Joint index of a name (an int is checked and returned)."""
        if isinstance(name, (int, np.integer)):
            if not 0 <= int(name) < self.num_joints:
                raise SkeletonError(f"joint index {name} out of range 0..{self.num_joints - 1}")
            return int(name)
        try:
            return self.names.index(name)
        except ValueError:
            raise SkeletonError(f"no joint named {name!r}; joints are {', '.join(self.names)}") from None

    def children(self, joint: str | int) -> list[int]:
        """Indices of the direct children of a joint."""
        j = self.index(joint)
        return [int(c) for c in np.nonzero(self.parents == j)[0]]

    def descendants(self, joint: str | int) -> list[int]:
        """Indices of every joint below ``joint`` (not including it)."""
        j = self.index(joint)
        below = np.zeros(self.num_joints, bool)
        for c in range(j + 1, self.num_joints):
            p = self.parents[c]
            below[c] = p == j or (p >= 0 and below[p])
        return [int(c) for c in np.nonzero(below)[0]]

    def chain(self, start: str | int, end: str | int) -> list[int]:
        """Joint indices from ``start`` down to its descendant ``end`` (both included)."""
        s, e = self.index(start), self.index(end)
        path = [e]
        while path[-1] != s:
            p = int(self.parents[path[-1]])
            if p < 0:
                raise SkeletonError(f"{self.names[e]!r} is not below {self.names[s]!r}")
            path.append(p)
        return path[::-1]

    def depth(self) -> NDArray[np.int64]:
        """Number of ancestors of every joint."""
        d = np.zeros(self.num_joints, np.int64)
        for j in range(1, self.num_joints):
            d[j] = d[self.parents[j]] + 1
        return d

    def rotation_order(self, joint: str | int) -> str:
        """Axes of the joint's rotation channels in file order, e.g. ``"zxy"`` ('' if none)."""
        return "".join(c[0].lower() for c in self.channels[self.index(joint)] if c in ROTATION_CHANNELS)

    def has_position_channels(self, joint: str | int) -> bool:
        return any(c in POSITION_CHANNELS for c in self.channels[self.index(joint)])

    def fingerprint(self) -> str:
        """Stable hash of joint names and parents (not offsets: the same rig of another actor matches)."""
        h = hashlib.sha256()
        for n, p in zip(self.names, self.parents):
            h.update(f"{n}\0{int(p)}\n".encode())
        return h.hexdigest()[:16]

    def copy(self) -> Skeleton:
        return Skeleton(
            list(self.names),
            self.parents.copy(),
            self.offsets.copy(),
            [list(c) for c in self.channels],
            [(p, o.copy()) for p, o in self.end_sites],
        )

    def bone_directions(self, default: Sequence[float] = (1.0, 0.0, 0.0), eps: float = 1e-8) -> NDArray[np.float64]:
        """Per joint, the normalised sum of its children's offsets (End Sites included): the twist
        axis of the seed; ``default`` where there is none or they cancel."""
        acc = np.zeros((self.num_joints, 3))
        np.add.at(acc, self.parents[1:], self.offsets[1:])
        for p, o in self.end_sites:
            acc[p] += o
        n = np.linalg.norm(acc, axis=-1, keepdims=True)
        return np.where(n > eps, acc / (n + eps), np.asarray(default, float))


@dataclass
class Motion:
    """Local joint rotations ``[F, J, 4]`` and positions ``[F, J, 3]`` sampled every ``frame_time`` s."""

    skeleton: Skeleton
    rotations: NDArray[np.float64]
    positions: NDArray[np.float64]
    frame_time: float
    # Euler angles read from a file ([F, J, 3] in each joint's channel order, with the rotations
    # they produced) so an unchanged rotation is written back with the exact original values.
    source_euler: tuple[NDArray[np.float64], NDArray[np.float64]] | None = field(
        default=None, repr=False, compare=False
    )
    # where the clip's text came from (jointlimits.io.bvh.BVHSource: per frame, its row in the
    # file) so that saving writes unchanged values with their original tokens
    source_text: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.rotations = np.asarray(self.rotations, dtype=np.float64)
        self.positions = np.asarray(self.positions, dtype=np.float64)
        J = self.skeleton.num_joints
        if self.rotations.ndim != 3 or self.rotations.shape[1:] != (J, 4):
            raise SkeletonError(f"rotations must be [F, {J}, 4], got {self.rotations.shape}")
        if self.positions.shape != self.rotations.shape[:1] + (J, 3):
            raise SkeletonError(f"positions must be [F, {J}, 3], got {self.positions.shape}")
        if not (self.frame_time > 0 and np.isfinite(self.frame_time)):
            raise SkeletonError(f"frame_time must be positive and finite, got {self.frame_time}")
        if not MIN_FRAME_TIME <= self.frame_time <= MAX_FRAME_TIME:
            raise SkeletonError(
                f"frame_time must be in [{MIN_FRAME_TIME:g}, {MAX_FRAME_TIME:g}] s, got {self.frame_time:g}"
            )
        if self.positions.size and not np.all(np.abs(self.positions) <= MAX_OFFSET):
            bad = np.abs(self.positions) > MAX_OFFSET  # NaN (a missing value) is not refused here
            if np.any(bad):
                f, j = (int(i) for i in np.argwhere(bad)[0][:2])
                raise SkeletonError(
                    f"positions must be within +-{MAX_OFFSET:g} (file units), got {self.positions[f, j].tolist()} "
                    f"at frame {f}, joint {j}"
                )

    @classmethod
    def rest(cls, skeleton: Skeleton, num_frames: int = 1, frame_time: float = 1 / 30) -> Motion:
        """The rest pose (identity rotations, offsets) repeated ``num_frames`` times."""
        return cls(
            skeleton,
            quat.identity((num_frames, skeleton.num_joints)),
            np.repeat(skeleton.offsets[None], num_frames, axis=0),
            frame_time,
        )

    @property
    def num_frames(self) -> int:
        return int(self.rotations.shape[0])

    @property
    def num_joints(self) -> int:
        return self.skeleton.num_joints

    @property
    def fps(self) -> float:
        return 1.0 / self.frame_time

    @property
    def duration(self) -> float:
        return self.num_frames * self.frame_time

    def copy(self) -> Motion:
        return dataclasses.replace(self, rotations=self.rotations.copy(), positions=self.positions.copy())

    def with_rotations(self, rotations: NDArray[np.float64], positions: NDArray[np.float64] | None = None) -> Motion:
        """A new motion on the same skeleton with other local rotations (and positions)."""
        return dataclasses.replace(
            self,
            rotations=np.asarray(rotations, np.float64),
            positions=self.positions.copy() if positions is None else positions,
        )

    def frames(self, start: int | None = None, stop: int | None = None, step: int | None = None) -> Motion:
        """A sub-range of frames (like slicing; frame_time scales with step)."""
        sl = slice(start, stop, step)
        src = None
        if self.source_euler is not None:
            src = (self.source_euler[0][sl], self.source_euler[1][sl])
        text = self.source_text[sl] if self.source_text is not None else None
        return dataclasses.replace(
            self,
            rotations=self.rotations[sl].copy(),
            positions=self.positions[sl].copy(),
            frame_time=self.frame_time * (step or 1),
            source_euler=src,
            source_text=text,
        )

    def __getitem__(self, item: slice) -> Motion:
        if not isinstance(item, slice):
            raise TypeError("index a Motion with a slice of frames, e.g. motion[10:20]")
        return self.frames(item.start, item.stop, item.step)

    def global_transforms(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Shortcut for ``forward_kinematics(self)``."""
        return forward_kinematics(self)

    def check_finite(self) -> None:
        """Raise SkeletonError if any rotation or position is NaN or infinite."""
        for name, arr in (("rotations", self.rotations), ("positions", self.positions)):
            bad = ~np.isfinite(arr).all(axis=-1)
            if bad.any():
                f, j = np.argwhere(bad)[0]
                raise SkeletonError(f"{name} of joint {self.skeleton.names[j]!r} at frame {f} is not finite")


def _levels(parents: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    depth = np.zeros(len(parents), np.int64)
    for j in range(1, len(parents)):
        depth[j] = depth[parents[j]] + 1
    return [np.nonzero(depth == d)[0] for d in range(1, int(depth.max()) + 1)] if len(parents) > 1 else []


def forward_kinematics_arrays(
    rotations: NDArray[np.float64], positions: NDArray[np.float64], parents: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Global rotations and positions from local ones ``[..., J, 4]``, ``[..., J, 3]`` (parents
    listed before children): gr_j = gr_p lr_j, gp_j = gp_p + gr_p lp_j."""
    r, p = rotations, positions
    if (  # arrays already right (float64, C-contiguous, same frames): straight to the kernel
        type(r) is np.ndarray
        and type(p) is np.ndarray
        and type(parents) is np.ndarray
        and r.dtype == np.float64
        and p.dtype == np.float64
        and parents.dtype == np.int64
        and r.ndim >= 2
        and r.size > 0
        and r.shape[:-1] == p.shape[:-1]
        and r.shape[-1] == 4
        and p.shape[-1] == 3
        and r.flags.c_contiguous
        and p.flags.c_contiguous
        and parents.flags.c_contiguous
    ):
        J = r.shape[-2]
        gr, gp = np.empty(r.shape), np.empty(p.shape)
        _core.forward_kinematics(
            r.reshape(-1, J, 4), p.reshape(-1, J, 3), parents, gr.reshape(-1, J, 4), gp.reshape(-1, J, 3)
        )
        return gr, gp
    rotations = np.asarray(rotations, np.float64)
    positions = np.asarray(positions, np.float64)
    lead = np.broadcast_shapes(rotations.shape[:-2], positions.shape[:-2])
    J = rotations.shape[-2]
    lr = np.ascontiguousarray(np.broadcast_to(rotations, lead + (J, 4)).reshape(-1, J, 4))
    lp = np.ascontiguousarray(np.broadcast_to(positions, lead + (J, 3)).reshape(-1, J, 3))
    gr = np.empty_like(lr)
    gp = np.empty_like(lp)
    _core.forward_kinematics(lr, lp, np.ascontiguousarray(parents, dtype=np.int64), gr, gp)
    return gr.reshape(lead + (J, 4)), gp.reshape(lead + (J, 3))


def forward_kinematics(motion: Motion) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Global rotations ``[F, J, 4]`` and positions ``[F, J, 3]`` of every joint in every frame."""
    return forward_kinematics_arrays(motion.rotations, motion.positions, motion.skeleton.parents)


def end_site_positions(
    motion: Motion,
    global_rotations: NDArray[np.float64] | None = None,
    global_positions: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Global positions ``[F, E, 3]`` of the skeleton's End Sites."""
    if global_rotations is None or global_positions is None:
        global_rotations, global_positions = forward_kinematics(motion)
    sk = motion.skeleton
    if not sk.end_sites:
        return np.zeros((motion.num_frames, 0, 3))
    ps = np.array([p for p, _ in sk.end_sites])
    offs = np.stack([o for _, o in sk.end_sites])
    return global_positions[:, ps] + quat.mul_vec(global_rotations[:, ps], offs)


def joints_matching(skeleton: Skeleton, names: Iterable[str]) -> list[int]:
    """Indices of the given joint names (raises SkeletonError listing unknown names)."""
    out, missing = [], []
    for n in names:
        if n in skeleton.names:
            out.append(skeleton.names.index(n))
        else:
            missing.append(n)
    if missing:
        raise SkeletonError(f"unknown joints {missing}; joints are {', '.join(skeleton.names)}")
    return out

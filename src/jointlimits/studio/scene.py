"""Drawing skeletons in a viser scene: bones as capsule-like cylinders, joints as spheres coloured
by how far they are outside their limit, foot contacts as discs under planted feet.

Everything here takes global positions in metres (the GUI converts from clip units) and only
updates the batched handles' arrays, so a redraw is a handful of small messages.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..motion import quat
from ..motion.skeleton import Skeleton

__all__ = ["violation_colors", "bone_segments", "SkeletonDrawing", "ContactDrawing", "VIOLATION_FULL_DEG"]

Array = NDArray[np.float64]

#: Violation (degrees) drawn fully red; inside the limit a joint is green.
VIOLATION_FULL_DEG = 20.0
_GREEN = np.array([60, 190, 90], np.float64)
_YELLOW = np.array([240, 200, 40], np.float64)
_RED = np.array([220, 40, 40], np.float64)


def violation_colors(violation_rad: Array, full_deg: float = VIOLATION_FULL_DEG) -> NDArray[np.uint8]:
    """RGB ``[J, 3]``: green inside (violation 0), through yellow, to red at ``full_deg``."""
    t = np.clip(np.degrees(np.asarray(violation_rad, np.float64)) / full_deg, 0.0, 1.0)[:, None]
    inside = (np.asarray(violation_rad) <= 1e-6)[:, None]
    c = np.where(t < 0.5, _YELLOW * (2 * t) + _GREEN * (1 - 2 * t), _RED * (2 * t - 1) + _YELLOW * (2 - 2 * t))
    return np.where(inside, _GREEN, c).round().astype(np.uint8)


def bone_segments(skeleton: Skeleton, gr: Array, gp: Array, units: float = 1.0) -> tuple[Array, Array]:
    """Start and end points ``[B, 3]`` of every bone: parent to child, and joint to End Site
    (End Site offsets scaled by ``units``, the metres per clip unit when ``gp`` is in metres)."""
    p = skeleton.parents
    kids = np.arange(1, skeleton.num_joints)
    starts = [gp[p[kids]]]
    ends = [gp[kids]]
    if skeleton.end_sites:
        ps = np.array([j for j, _ in skeleton.end_sites])
        offs = np.stack([o for _, o in skeleton.end_sites])
        starts.append(gp[ps])
        ends.append(gp[ps] + quat.mul_vec(gr[ps], offs * units))
    return np.concatenate(starts), np.concatenate(ends)


def _cylinder(n: int = 10) -> tuple[Array, NDArray[np.uint32]]:
    """A unit cylinder along +z from z=0 to z=1 (radius 1), capped."""
    th = np.linspace(0, 2 * np.pi, n, endpoint=False)
    ring = np.stack([np.cos(th), np.sin(th)], axis=1)
    v = np.vstack([np.column_stack([ring, np.zeros(n)]), np.column_stack([ring, np.ones(n)]), [[0, 0, 0], [0, 0, 1]]])
    f = []
    for i in range(n):
        k = (i + 1) % n
        f += [(i, k, n + k), (i, n + k, n + i), (2 * n, k, i), (2 * n + 1, n + i, n + k)]
    return v.astype(np.float64), np.asarray(f, np.uint32)


def _sphere(subdiv: int = 8) -> tuple[Array, NDArray[np.uint32]]:
    """A small UV sphere of radius 1."""
    th = np.linspace(0, 2 * np.pi, 2 * subdiv, endpoint=False)
    ph = np.linspace(0, np.pi, subdiv + 1)[1:-1]
    ring = np.stack(
        [np.outer(np.sin(ph), np.cos(th)), np.outer(np.sin(ph), np.sin(th)), np.outer(np.cos(ph), np.ones_like(th))],
        axis=-1,
    ).reshape(-1, 3)
    v = np.vstack([[0, 0, 1], ring, [0, 0, -1]])
    na, nr = len(th), len(ph)
    f = []
    at = lambda r, a: 1 + r * na + a % na  # noqa: E731
    for a in range(na):
        f.append((0, at(0, a), at(0, a + 1)))
        f.append((len(v) - 1, at(nr - 1, a + 1), at(nr - 1, a)))
        for r in range(nr - 1):
            f += [(at(r, a), at(r + 1, a), at(r + 1, a + 1)), (at(r, a), at(r + 1, a + 1), at(r, a + 1))]
    return v.astype(np.float64), np.asarray(f, np.uint32)


_CYL = _cylinder()
_SPH = _sphere()
_Z = np.array([0.0, 0.0, 1.0])


def _bone_transforms(a: Array, b: Array, radius: float) -> tuple[Array, Array, Array]:
    d = b - a
    ln = np.linalg.norm(d, axis=-1)
    safe = np.where(ln[:, None] > 1e-9, d / np.maximum(ln, 1e-12)[:, None], _Z)
    rot = quat.between(np.broadcast_to(_Z, safe.shape), safe)
    scale = np.column_stack([np.full_like(ln, radius), np.full_like(ln, radius), np.maximum(ln, 1e-6)])
    return rot, a, scale


class SkeletonDrawing:
    """One skeleton in the scene: ``bones`` (cylinders) and ``joints`` (spheres) under ``name``."""

    def __init__(
        self,
        scene: Any,
        name: str,
        skeleton: Skeleton,
        color: tuple[int, int, int],
        bone_radius: float = 0.018,
        joint_radius: float = 0.03,
        opacity: float | None = None,
        joints: bool = True,
        units: float = 1.0,
    ):
        self.skeleton = skeleton
        self.units = units
        self.color = np.asarray(color, np.uint8)
        self.bone_radius = bone_radius
        self.joint_radius = joint_radius
        J = skeleton.num_joints
        gr = quat.identity(J)
        gp = np.zeros((J, 3))
        a, b = bone_segments(skeleton, gr, gp)
        rot, pos, scale = _bone_transforms(a, b, bone_radius)
        self.bones = scene.add_batched_meshes_simple(
            f"{name}/bones",
            _CYL[0],
            _CYL[1],
            rot,
            pos,
            batched_scales=scale,
            batched_colors=self.color,
            opacity=opacity,
            lod="off",
            cast_shadow=False,
            receive_shadow=False,
        )
        self.joints = None
        if joints:
            self.joints = scene.add_batched_meshes_simple(
                f"{name}/joints",
                _SPH[0],
                _SPH[1],
                quat.identity(J),
                gp,
                batched_scales=np.full(J, joint_radius),
                batched_colors=np.tile(self.color, (J, 1)),
                opacity=opacity,
                lod="off",
                cast_shadow=False,
                receive_shadow=False,
            )

    def update(self, gr: Array, gp: Array, joint_colors: NDArray[np.uint8] | None = None, visible: bool = True) -> None:
        """Move the drawing to global rotations ``[J, 4]`` / positions ``[J, 3]`` (metres)."""
        self.bones.visible = visible
        if self.joints is not None:
            self.joints.visible = visible
        if not visible:
            return
        a, b = bone_segments(self.skeleton, gr, gp, self.units)
        rot, pos, scale = _bone_transforms(a, b, self.bone_radius)
        self.bones.batched_wxyzs = rot.astype(np.float32)
        self.bones.batched_positions = pos.astype(np.float32)
        self.bones.batched_scales = scale.astype(np.float32)
        if self.joints is not None:
            self.joints.batched_positions = gp.astype(np.float32)
            if joint_colors is not None:
                self.joints.batched_colors = np.asarray(joint_colors, np.uint8)

    def remove(self) -> None:
        self.bones.remove()
        if self.joints is not None:
            self.joints.remove()


class ContactDrawing:
    """Flat discs under the feet that are planted on the current frame."""

    def __init__(self, scene: Any, name: str, n_feet: int, color: tuple[int, int, int] = (40, 120, 240)):
        self.n = n_feet
        self.handle = scene.add_batched_meshes_simple(
            name,
            _CYL[0],
            _CYL[1],
            np.tile(quat.from_angle_axis(-np.pi / 2, [1.0, 0.0, 0.0]), (max(n_feet, 1), 1)),
            np.zeros((max(n_feet, 1), 3)),
            batched_scales=np.zeros((max(n_feet, 1), 3)),
            batched_colors=color,
            opacity=0.8,
            lod="off",
            cast_shadow=False,
            receive_shadow=False,
        )

    def update(self, feet_positions: Array, planted: NDArray[np.bool_], ground: float) -> None:
        """Discs at the feet's horizontal places on the ground (Y up, metres) where ``planted``."""
        p = np.array(feet_positions, np.float64).reshape(-1, 3)
        p[:, 1] = ground
        s = np.where(np.asarray(planted, bool)[:, None], np.array([[0.07, 0.07, 0.005]]), 0.0)
        self.handle.batched_positions = p.astype(np.float32)
        self.handle.batched_scales = s.astype(np.float32)

    def remove(self) -> None:
        self.handle.remove()

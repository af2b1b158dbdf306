"""The numpy reference implementations of the two-bone IK kernels (the C++ core runs them in
jointlimits.ik.two_bone): written from the same formulas, kept here because only the tests (and
benchmarks/bench_ik.py, for a same-run ratio) use them."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from jointlimits.ik.two_bone import (
    Array,
    TwoBoneSolution,
    _as_quat,
    _as_vec,
    _check_lengths,
    _cross,
    _demo_inputs,
    _dot,
    _norm,
    _rotate,
    _simple_rotation,
    two_bone_positions,
)
from jointlimits.motion import quat


def two_bone_numpy(
    root: ArrayLike,
    mid: ArrayLike,
    end: ArrayLike,
    target: ArrayLike,
    root_parent_rotation: ArrayLike,
    root_local: ArrayLike,
    mid_local: ArrayLike,
    pole: ArrayLike | None = None,
) -> TwoBoneSolution:
    """Reference (numpy) implementation of :func:`two_bone`.

    ``root``/``mid``/``end`` are the current global positions of the root joint, its child (the
    mid joint, whose parent must be the root) and the end effector; ``root_parent_rotation`` is the
    global rotation of the root's parent and ``root_local``/``mid_local`` the current local
    rotations. With ``R1 = simple(b - a, b' - a)`` and ``R2 = simple(R1 (c - b), c' - b')``:
    ``root_local' = (P⁻¹ R1 P) root_local`` and ``mid_local' = (G'⁻¹ R2 G') mid_local``, ``G' = R1 P root_local``.
    """
    a, b, c, t = (_as_vec(n, x) for n, x in (("root", root), ("mid", mid), ("end", end), ("target", target)))
    P = _as_quat("root_parent_rotation", root_parent_rotation)
    Lk = _as_quat("root_local", root_local)
    Lj = _as_quat("mid_local", mid_local)
    lab, lbc = _norm(b - a), _norm(c - b)
    _check_lengths(lab, lbc)
    pos = two_bone_positions(a, b, c, t, pole if pole is None else _as_vec("pole", pole), _checked=True)
    R1 = _simple_rotation(b - a, pos.mid - a)
    R2 = _simple_rotation(_rotate(R1, c - b), pos.end - pos.mid)
    # conjugate the global-frame rotations into each joint's parent frame: X⁻¹ (w, v) X = (w, X⁻¹ v)
    Pc = P * np.array([1.0, -1.0, -1.0, -1.0])
    r1l = np.empty(np.broadcast_shapes(R1.shape, P.shape))
    r1l[..., 0] = R1[..., 0]
    r1l[..., 1:] = _rotate(Pc, R1[..., 1:])
    root_new = quat.mul(r1l, Lk)
    Gk_new = quat.mul(P, root_new)
    r2l = np.empty(np.broadcast_shapes(R2.shape, Gk_new.shape))
    r2l[..., 0] = R2[..., 0]
    r2l[..., 1:] = _rotate(Gk_new * np.array([1.0, -1.0, -1.0, -1.0]), R2[..., 1:])
    mid_new = quat.mul(r2l, Lj)
    return TwoBoneSolution(root_new, mid_new, pos.mid, pos.end, pos.case)


def _unit_eps(v: Array, eps: float = 1e-8) -> Array:
    """v / (|v| + eps), as the demo normalises."""
    return v / (_norm(v) + eps)[..., None]


def _angle_axis(angle: Array, axis: Array) -> Array:
    out = np.empty(angle.shape + (4,))
    out[..., 0] = np.cos(0.5 * angle)
    out[..., 1:] = np.sin(0.5 * angle)[..., None] * axis
    return out


def ik_two_bone_numpy(
    bone_root: ArrayLike,
    bone_mid: ArrayLike,
    bone_end: ArrayLike,
    target: ArrayLike,
    fwd: ArrayLike,
    bone_root_gr: ArrayLike,
    bone_mid_gr: ArrayLike,
    bone_par_gr: ArrayLike,
    max_length_buffer: float = 0.015,
) -> tuple[Array, Array]:
    """Reference (numpy) implementation of :func:`ik_two_bone`: the demo's two-bone IK.

    The target is pulled within ``l_ab + l_bc - max_length_buffer`` of the root; the bend angles
    come from the law of cosines, ``acos((l_cb² - l_ab² - l_at²) / (-2 l_ab l_at))`` at the root
    and ``acos((l_at² - l_ab² - l_cb²) / (-2 l_ab l_cb))`` at the mid joint, applied about
    ``normalize((end - root) x fwd)``; a final swing turns root->end onto root->target.
    Inputs are ``[..., 3]`` positions / ``[..., 4]`` global rotations, broadcast together.
    """
    a, b, c, t, fwd, root_gr, mid_gr, par_gr = _demo_inputs(
        bone_root, bone_mid, bone_end, target, fwd, bone_root_gr, bone_mid_gr, bone_par_gr
    )
    lab = _norm(b - a)
    lcb = _norm(b - c)
    _check_lengths(lab, lcb)

    max_ext = lab + lcb - max_length_buffer
    ta = t - a
    far = _norm(ta) > max_ext
    t = np.where(far[..., None], a + max_ext[..., None] * _unit_eps(ta), t)

    axis_dwn = _unit_eps(c - a)
    axis_rot = _unit_eps(_cross(axis_dwn, fwd))
    lat = _norm(t - a)

    ac_ab_0 = np.arccos(np.clip(_dot(_unit_eps(c - a), _unit_eps(b - a)), -1.0, 1.0))
    ba_bc_0 = np.arccos(np.clip(_dot(_unit_eps(a - b), _unit_eps(c - b)), -1.0, 1.0))
    ac_ab_1 = np.arccos(np.clip((lcb * lcb - lab * lab - lat * lat) / (-2.0 * lab * lat), -1.0, 1.0))
    ba_bc_1 = np.arccos(np.clip((lat * lat - lab * lab - lcb * lcb) / (-2.0 * lab * lcb), -1.0, 1.0))

    r0 = _angle_axis(ac_ab_1 - ac_ab_0, axis_rot)
    r1 = _angle_axis(ba_bc_1 - ba_bc_0, axis_rot)
    c_a = _unit_eps(c - a)
    t_a = _unit_eps(t - a)
    r2 = _angle_axis(np.arccos(np.clip(_dot(c_a, t_a), -1.0, 1.0)), _unit_eps(_cross(c_a, t_a)))

    root_lr = quat.inv_mul(par_gr, quat.mul(r2, quat.mul(r0, root_gr)))
    mid_lr = quat.inv_mul(root_gr, quat.mul(r1, mid_gr))
    return root_lr, mid_lr

"""Closed-form two-bone IK (hip-knee-foot, shoulder-elbow-wrist), batched over ``[..., 3]`` inputs.

Two formulations:

* :func:`two_bone_positions` / :func:`two_bone` / :func:`solve_two_bone`: the geometric solve.
  The new knee lies on the circle where the sphere of radius ``l_ab`` around the root meets the
  sphere of radius ``l_bc`` around the target; of that circle we take the point closest to the
  current knee (minimal motion) or the one toward a pole point. Targets closer than
  ``|l_ab - l_bc|`` fold the chain, targets further than ``l_ab + l_bc`` extend it straight toward
  the target. The two joints are then turned by the simple rotations that carry the old knee and
  foot onto the new ones, so bone lengths are preserved exactly.
* :func:`ik_two_bone`: the law-of-cosines variant of the joint-limits demo (bend plane from a
  forward vector, reach shortened by a small buffer) that works on global rotations.

Both run in the C++ core (one pass per solve over the batch); their numpy copies, the reference
the tests check the kernels against, live with the tests (``tests/ik/two_bone_reference.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._native import _core
from ..errors import IKError
from ..motion import quat
from ..motion.skeleton import Motion, Skeleton, forward_kinematics_arrays

__all__ = [
    "TwoBonePositions",
    "TwoBoneSolution",
    "two_bone_positions",
    "two_bone",
    "solve_two_bone",
    "ik_two_bone",
    "REACHABLE",
    "TOO_CLOSE",
    "TOO_FAR",
]

Array = NDArray[np.float64]

#: values of :attr:`TwoBonePositions.case`
REACHABLE, TOO_CLOSE, TOO_FAR = 0, 1, 2


# --------------------------------------------------------------------------- small vector kernels
def _dot(a: Array, b: Array) -> Array:
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def _norm(a: Array) -> Array:
    return np.sqrt(_dot(a, a))


def _cross(a: Array, b: Array) -> Array:
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _any_perpendicular(n: Array) -> Array:
    """A unit vector perpendicular to unit vectors n (crossed with the axis of n's smallest component)."""
    k = np.argmin(np.abs(n), axis=-1)
    e = np.zeros_like(n)
    np.put_along_axis(e, k[..., None], 1.0, axis=-1)
    p = _cross(n, e)
    return p / _norm(p)[..., None]


def _rotate(q: Array, v: Array) -> Array:
    """q v q^-1 for unit q; v + 2w(u x v) + 2u x (u x v)."""
    u = q[..., 1:]
    t = 2.0 * _cross(u, v)
    return v + q[..., :1] * t + _cross(u, t)


def _simple_rotation(u: Array, v: Array) -> Array:
    """The simple (shortest-arc) rotation taking direction u to direction v: q ∝ (|u||v| + u.v, u x v).

    Antiparallel pairs get a half turn about an axis perpendicular to u.
    """
    q = np.empty(np.broadcast_shapes(u.shape, v.shape)[:-1] + (4,))
    uv = _norm(u) * _norm(v)
    q[..., 0] = uv + _dot(u, v)
    q[..., 1:] = _cross(u, v)
    n = np.sqrt(np.sum(q * q, axis=-1))
    bad = n <= 1e-12 * np.maximum(uv, 1e-300)
    if np.any(bad):
        ub = np.broadcast_to(u, q.shape[:-1] + (3,))[bad]
        q[bad] = np.concatenate([np.zeros(ub.shape[:-1] + (1,)), _any_perpendicular(ub / _norm(ub)[..., None])], -1)
        n = np.where(bad, 1.0, n)
    return q / n[..., None]


def _as_vec(name: str, x: ArrayLike) -> Array:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] != 3:
        raise IKError(f"{name} must be an array of 3-vectors [..., 3], got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a).all(axis=-1))
        raise IKError(f"{name} contains NaN or infinite values (first at index {tuple(bad[0]) if bad.size else ()})")
    return a


def _as_quat(name: str, x: ArrayLike) -> Array:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] != 4:
        raise IKError(f"{name} must be an array of quaternions [..., 4], got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise IKError(f"{name} contains NaN or infinite values")
    return a


# --------------------------------------------------------------------------- geometric solve
@dataclass
class TwoBonePositions:
    """New knee/foot positions of a two-bone solve and which reach case applied (``REACHABLE``,
    ``TOO_CLOSE`` or ``TOO_FAR``)."""

    mid: Array
    end: Array
    case: NDArray[np.int8]

    @property
    def reached(self) -> NDArray[np.bool_]:
        return self.case == REACHABLE


def two_bone_positions(
    root: ArrayLike,
    mid: ArrayLike,
    end: ArrayLike,
    target: ArrayLike,
    pole: ArrayLike | None = None,
    *,
    _checked: bool = False,
) -> TwoBonePositions:
    """Knee and foot positions reaching for ``target`` (all ``[..., 3]``, broadcast).

    Reachable: the knee is ``m + r u`` with ``cos θ = (l_ab² + l_at² - l_bc²) / (2 l_ab l_at)``,
    ``m = a + l_ab cos θ d``, ``r = l_ab sin θ`` (d the unit root-to-target direction) and u the
    unit direction, perpendicular to d, from m toward the current knee (or toward ``pole``).
    Too close (``l_at < |l_ab - l_bc|``): the longer bone points at the target and the other back.
    Too far (``l_at > l_ab + l_bc``): both bones point straight at the target.
    """
    if _checked:
        a, b, c, t = (np.asarray(x, np.float64) for x in (root, mid, end, target))
    else:
        a, b, c, t = (_as_vec(n, x) for n, x in (("root", root), ("mid", mid), ("end", end), ("target", target)))
    shape = np.broadcast_shapes(a.shape, b.shape, c.shape, t.shape)
    lab = _norm(b - a)
    lbc = _norm(c - b)
    if not _checked:
        _check_lengths(lab, lbc)
    at = t - a
    lat = _norm(at)
    tiny = 1e-12 * (lab + lbc)
    near = lat <= tiny
    d = at / np.where(near, 1.0, lat)[..., None]
    if np.any(near):
        # target on the root: keep the current root->end direction (then root->knee, then any)
        ca = c - a
        lca = _norm(ca)
        fb = np.where((lca > tiny)[..., None], ca / np.where(lca > tiny, lca, 1.0)[..., None], b - a)
        fb = fb / _norm(fb)[..., None]
        d = np.where(near[..., None], fb, d)

    too_far = lat > lab + lbc
    too_close = lat < np.abs(lab - lbc)
    # reachable: circle of the two spheres
    cos_t = np.clip((lab * lab + lat * lat - lbc * lbc) / (2.0 * lab * np.where(near, 1.0, lat)), -1.0, 1.0)
    cos_t = np.where(near, 1.0, cos_t)
    sin_t = np.sqrt(np.maximum(0.0, 1.0 - cos_t * cos_t))
    m = a + (lab * cos_t)[..., None] * d
    guide = (
        b
        if pole is None
        else np.broadcast_to(_as_vec("pole", pole) if not _checked else np.asarray(pole, np.float64), shape)
    )
    v = guide - m
    u = v - _dot(v, d)[..., None] * d
    lu = _norm(u)
    weak = lu <= 1e-12 * (lab + lbc)
    if pole is not None and np.any(weak):  # pole on the axis: fall back to the current knee
        v2 = b - m
        u2 = v2 - _dot(v2, d)[..., None] * d
        u = np.where(weak[..., None], u2, u)
        lu = _norm(u)
        weak = lu <= 1e-12 * (lab + lbc)
    if np.any(weak):
        u = np.where(weak[..., None], _any_perpendicular(np.broadcast_to(d, shape)), u)
        lu = np.where(weak, 1.0, lu)
    u = u / lu[..., None]
    knee = m + (lab * sin_t)[..., None] * u
    foot = np.broadcast_to(t, shape).copy()

    if np.any(too_far):
        knee = np.where(too_far[..., None], a + lab[..., None] * d, knee)
        foot = np.where(too_far[..., None], a + (lab + lbc)[..., None] * d, foot)
    if np.any(too_close):
        s = np.where(lab >= lbc, 1.0, -1.0)[..., None]
        kc = a + s * lab[..., None] * d
        knee = np.where(too_close[..., None], kc, knee)
        foot = np.where(too_close[..., None], kc - s * lbc[..., None] * d, foot)
    case = np.where(too_far, TOO_FAR, np.where(too_close, TOO_CLOSE, REACHABLE)).astype(np.int8)
    return TwoBonePositions(knee, foot, case)


def _check_lengths(lab: Array, lbc: Array) -> None:
    for name, ln in (("root->mid", lab), ("mid->end", lbc)):
        z = ln <= 1e-12
        if np.any(z):
            idx = tuple(np.argwhere(z)[0]) if np.ndim(z) else ()
            raise IKError(
                f"zero-length bone {name} (length {float(np.asarray(ln)[idx] if idx else ln):g} at index {idx})"
            )


@dataclass
class TwoBoneSolution:
    """Result of :func:`two_bone`: new local rotations of the root and mid joints, the new mid
    and end positions and the reach case per element."""

    root_local: Array
    mid_local: Array
    mid: Array
    end: Array
    case: NDArray[np.int8]

    @property
    def reached(self) -> NDArray[np.bool_]:
        return self.case == REACHABLE


def _resolve_chain(skeleton: Skeleton, root_joint: str | int, end_joint: str | int | None) -> tuple[int, int, int]:
    try:
        r = skeleton.index(root_joint)
    except Exception as e:  # SkeletonError -> IKError with the same message
        raise IKError(f"two-bone chain: {e}") from None
    if end_joint is None:
        kids = skeleton.children(r)
        if len(kids) != 1:
            raise IKError(f"two-bone chain: joint {skeleton.names[r]!r} has {len(kids)} children; pass end_joint")
        m = kids[0]
        kids = skeleton.children(m)
        if len(kids) != 1:
            raise IKError(f"two-bone chain: joint {skeleton.names[m]!r} has {len(kids)} children; pass end_joint")
        return r, m, kids[0]
    try:
        ch = skeleton.chain(r, end_joint)
    except Exception as e:
        raise IKError(f"two-bone chain: {e}") from None
    if len(ch) != 3:
        raise IKError(
            f"two-bone chain {skeleton.names[r]!r} -> {skeleton.names[ch[-1]]!r} has {len(ch)} joints, expected 3 "
            f"({' -> '.join(skeleton.names[j] for j in ch)})"
        )
    return ch[0], ch[1], ch[2]


def solve_two_bone(
    motion: Motion | tuple[ArrayLike, ArrayLike, Skeleton],
    root_joint: str | int,
    target_positions: ArrayLike,
    pole: ArrayLike | None = None,
    end_joint: str | int | None = None,
) -> Motion | Array:
    """Place the end joint of the chain ``root_joint -> child -> end`` at ``target_positions``
    (``[F, 3]`` or ``[3]``) in every frame.

    ``motion`` is a :class:`Motion` (a new Motion is returned) or ``(rotations [F, J, 4],
    positions [F, J, 3], skeleton)`` (new rotations are returned). ``pole`` (``[F, 3]`` or
    ``[3]``, global) steers the mid joint; otherwise it moves as little as possible.
    """
    if isinstance(motion, Motion):
        rot, posl, sk = motion.rotations, motion.positions, motion.skeleton
    else:
        try:
            rot_in, pos_in, sk = motion
        except (TypeError, ValueError):
            raise IKError("motion must be a Motion or a (rotations, positions, skeleton) tuple") from None
        rot, posl = np.asarray(rot_in, np.float64), np.asarray(pos_in, np.float64)
    r, m, e = _resolve_chain(sk, root_joint, end_joint)
    F = rot.shape[0]
    tgt = _as_vec("target_positions", target_positions)
    if tgt.shape not in ((3,), (1, 3), (F, 3)):
        raise IKError(f"target_positions must be [3] or [{F}, 3], got {np.shape(target_positions)}")
    tgt = np.broadcast_to(tgt, (F, 3))
    gr, gp = forward_kinematics_arrays(rot, posl, sk.parents)
    pr = quat.identity(F) if sk.parents[r] < 0 else gr[:, sk.parents[r]]
    sol = two_bone(gp[:, r], gp[:, m], gp[:, e], tgt, pr, rot[:, r], rot[:, m], pole)
    new = rot.copy()
    new[:, r] = sol.root_local
    new[:, m] = sol.mid_local
    return motion.with_rotations(new) if isinstance(motion, Motion) else new


# --------------------------------------------------------------------------- the demo's variant
def _demo_inputs(
    bone_root: ArrayLike,
    bone_mid: ArrayLike,
    bone_end: ArrayLike,
    target: ArrayLike,
    fwd: ArrayLike,
    bone_root_gr: ArrayLike,
    bone_mid_gr: ArrayLike,
    bone_par_gr: ArrayLike,
) -> tuple[Array, ...]:
    """The demo formulation's inputs, checked: five ``[..., 3]`` vectors and three ``[..., 4]``
    rotations."""
    return (
        _as_vec("bone_root", bone_root),
        _as_vec("bone_mid", bone_mid),
        _as_vec("bone_end", bone_end),
        _as_vec("target", target),
        _as_vec("fwd", fwd),
        _as_quat("bone_root_gr", bone_root_gr),
        _as_quat("bone_mid_gr", bone_mid_gr),
        _as_quat("bone_par_gr", bone_par_gr),
    )


def _flat(x: Array, shape: tuple[int, ...], width: int) -> Array:
    return np.ascontiguousarray(np.broadcast_to(x, shape + (width,)).reshape(-1, width))


def _raise_zero_bone(code: NDArray[np.int8], shape: tuple[int, ...]) -> None:
    bad = np.nonzero(code < 0)[0]
    if bad.size:
        i = int(bad[0])
        name = "root->mid" if code[i] == -1 else "mid->end"
        idx = tuple(int(v) for v in np.unravel_index(i, shape)) if shape else ()
        raise IKError(f"zero-length bone {name} at index {idx}")


def _backend(backend: str) -> str:
    # "numba" is the old name of the compiled back end, still accepted; the numpy reference
    # implementations moved to the tests
    if backend not in ("auto", "compiled", "numba"):
        raise IKError(f"backend must be 'auto' or 'compiled', got {backend!r}")
    return "compiled"


def two_bone(
    root: ArrayLike,
    mid: ArrayLike,
    end: ArrayLike,
    target: ArrayLike,
    root_parent_rotation: ArrayLike,
    root_local: ArrayLike,
    mid_local: ArrayLike,
    pole: ArrayLike | None = None,
    backend: str = "auto",
) -> TwoBoneSolution:
    """Solve a two-bone chain and return the joints' new local rotations.

    ``root``/``mid``/``end`` are the current global positions of the root joint, its child (the
    mid joint, whose parent must be the root) and the end effector; ``root_parent_rotation`` is the
    global rotation of the root's parent and ``root_local``/``mid_local`` the current local
    rotations. With ``R1 = simple(b - a, b' - a)`` and ``R2 = simple(R1 (c - b), c' - b')``:
    ``root_local' = (P⁻¹ R1 P) root_local`` and ``mid_local' = (G'⁻¹ R2 G') mid_local``, ``G' = R1 P root_local``.
    New positions come from :func:`two_bone_positions`. ``backend``: "auto" (one C++ call for
    the common case) or "compiled" (the checked path; both the C++ core).
    """
    if backend == "auto":
        # the common case (float64 arrays of one leading shape) in one C++ call; None sends
        # broadcasting, other inputs, bad values and zero-length bones down the checked path below
        r = _core.two_bone_solve(root, mid, end, target, root_parent_rotation, root_local, mid_local, pole)
        if r is not None:
            # the binding is typed ``object``: the fields of TwoBoneSolution in order
            return TwoBoneSolution(*cast("tuple[Array, Array, Array, Array, NDArray[np.int8]]", r))
    else:
        _backend(backend)
    a, b, c, t = (_as_vec(n, x) for n, x in (("root", root), ("mid", mid), ("end", end), ("target", target)))
    P = _as_quat("root_parent_rotation", root_parent_rotation)
    Lk = _as_quat("root_local", root_local)
    Lj = _as_quat("mid_local", mid_local)
    pl = None if pole is None else _as_vec("pole", pole)
    lead = np.broadcast_shapes(
        a.shape[:-1],
        b.shape[:-1],
        c.shape[:-1],
        t.shape[:-1],
        P.shape[:-1],
        Lk.shape[:-1],
        Lj.shape[:-1],
        *(() if pl is None else (pl.shape[:-1],)),
    )
    n = int(np.prod(lead, dtype=np.int64))
    root_o, mid_o = np.empty((n, 4)), np.empty((n, 4))
    knee_o, foot_o = np.empty((n, 3)), np.empty((n, 3))
    case = np.empty(n, np.int8)
    _core.two_bone(
        _flat(a, lead, 3),
        _flat(b, lead, 3),
        _flat(c, lead, 3),
        _flat(t, lead, 3),
        np.zeros((1, 3)) if pl is None else _flat(pl, lead, 3),
        pl is not None,
        _flat(P, lead, 4),
        _flat(Lk, lead, 4),
        _flat(Lj, lead, 4),
        root_o,
        mid_o,
        knee_o,
        foot_o,
        case,
    )
    _raise_zero_bone(case, lead)
    return TwoBoneSolution(
        root_o.reshape(lead + (4,)),
        mid_o.reshape(lead + (4,)),
        knee_o.reshape(lead + (3,)),
        foot_o.reshape(lead + (3,)),
        case.reshape(lead),
    )


def ik_two_bone(
    bone_root: ArrayLike,
    bone_mid: ArrayLike,
    bone_end: ArrayLike,
    target: ArrayLike,
    fwd: ArrayLike,
    bone_root_gr: ArrayLike,
    bone_mid_gr: ArrayLike,
    bone_par_gr: ArrayLike,
    max_length_buffer: float = 0.015,
    backend: str = "auto",
) -> tuple[Array, Array]:
    """The joint-limits demo's two-bone IK; returns new local rotations ``(root_lr, mid_lr)``.

    The target is pulled within ``l_ab + l_bc - max_length_buffer`` of the root; the bend angles
    come from the law of cosines, ``acos((l_cb² - l_ab² - l_at²) / (-2 l_ab l_at))`` at the root
    and ``acos((l_at² - l_ab² - l_cb²) / (-2 l_ab l_cb))`` at the mid joint, applied about
    ``normalize((end - root) x fwd)``; a final swing turns root->end onto root->target.
    Inputs are ``[..., 3]`` positions / ``[..., 4]`` global rotations, broadcast together.
    ``backend``: "auto" (one C++ call for the common case) or "compiled" (the checked path).
    """
    if backend == "auto":
        try:  # the common case in one C++ call (see two_bone); a TypeError: a non-numeric buffer
            r = _core.ik_two_bone_solve(
                bone_root, bone_mid, bone_end, target, fwd, bone_root_gr, bone_mid_gr, bone_par_gr, max_length_buffer
            )
        except TypeError:
            r = None
        if r is not None:
            return cast("tuple[Array, Array]", r)  # the binding is typed ``object``
    else:
        _backend(backend)
    a, b, c, t, f, rg, mg, pg = _demo_inputs(
        bone_root, bone_mid, bone_end, target, fwd, bone_root_gr, bone_mid_gr, bone_par_gr
    )
    lead = np.broadcast_shapes(*(x.shape[:-1] for x in (a, b, c, t, f, rg, mg, pg)))
    n = int(np.prod(lead, dtype=np.int64))
    ro, mo = np.empty((n, 4)), np.empty((n, 4))
    bad = np.empty(n, np.int8)
    _core.ik_two_bone(
        _flat(a, lead, 3),
        _flat(b, lead, 3),
        _flat(c, lead, 3),
        _flat(t, lead, 3),
        _flat(f, lead, 3),
        _flat(rg, lead, 4),
        _flat(mg, lead, 4),
        _flat(pg, lead, 4),
        float(max_length_buffer),
        ro,
        mo,
        bad,
    )
    _raise_zero_bone(bad, lead)
    return ro.reshape(lead + (4,)), mo.reshape(lead + (4,))

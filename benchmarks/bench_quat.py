"""Batched quaternion ops of ``jointlimits.motion.quat`` against scipy's ``Rotation`` and a plain
numpy version of the same op, in the same run.

    python -m benchmarks.bench_quat [--quick]

Each op maps arrays to arrays over a batch of random unit quaternions (and vectors, matrices,
angles): scipy's time includes building the ``Rotation`` from the array and reading the result
back (``scalar_first=True``), as a user holding (w, x, y, z) arrays does. The numpy version is the
op written once with whole-array numpy expressions. Fastest of repeated calls; ratio = our time /
the peer's (<= 1: at least as fast).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _compat as C
from ._common import main_single, record
from ._timing import best

BENCH = "quat"


def _np_mul(a, b):
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        -1,
    )


def _np_to_matrix(q):
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            1 - 2 * (y * y + z * z),
            2 * (x * y - w * z),
            2 * (x * z + w * y),
            2 * (x * y + w * z),
            1 - 2 * (x * x + z * z),
            2 * (y * z - w * x),
            2 * (x * z - w * y),
            2 * (y * z + w * x),
            1 - 2 * (x * x + y * y),
        ],
        -1,
    ).reshape(q.shape[:-1] + (3, 3))


def _np_from_matrix(m):
    # Shepperd: the largest of 4w^2, 4x^2, 4y^2, 4z^2 picks the row computed from the diagonal
    d0, d1, d2 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    tr = d0 + d1 + d2
    c = np.stack(
        [
            np.stack(
                [1 + tr, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1
            ),
            np.stack(
                [
                    m[..., 2, 1] - m[..., 1, 2],
                    1 + d0 - d1 - d2,
                    m[..., 0, 1] + m[..., 1, 0],
                    m[..., 0, 2] + m[..., 2, 0],
                ],
                -1,
            ),
            np.stack(
                [
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 0, 1] + m[..., 1, 0],
                    1 - d0 + d1 - d2,
                    m[..., 1, 2] + m[..., 2, 1],
                ],
                -1,
            ),
            np.stack(
                [
                    m[..., 1, 0] - m[..., 0, 1],
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 1, 2] + m[..., 2, 1],
                    1 - d0 - d1 + d2,
                ],
                -1,
            ),
        ],
        -2,
    )
    k = np.argmax(np.stack([tr, d0, d1, d2], -1), -1)
    q = np.take_along_axis(c, k[..., None, None], -2)[..., 0, :]
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def _np_exp(v):
    a = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.concatenate([np.cos(a), v * np.sinc(a / np.pi)], -1)


def _np_log(q):
    n = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    return q[..., 1:] * np.where(n > 1e-8, np.arctan2(n, q[..., :1]) / np.where(n > 1e-8, n, 1.0), 1.0)


def _np_slerp(a, b, t):
    d = _np_mul(a * [1, -1, -1, -1], b)
    d = np.where(d[..., :1] < 0, -d, d)
    return _np_mul(a, _np_exp(_np_log(d) * t[..., None]))


def _np_rotate(q, v):
    u = q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + q[..., :1] * t + np.cross(u, t)


def _np_from_euler(e):  # intrinsic x, then y, then z
    h = 0.5 * e
    c, s = np.cos(h), np.sin(h)
    cx, cy, cz, sx, sy, sz = c[..., 0], c[..., 1], c[..., 2], s[..., 0], s[..., 1], s[..., 2]
    return np.stack(
        [
            cx * cy * cz - sx * sy * sz,
            sx * cy * cz + cx * sy * sz,
            cx * sy * cz - sx * cy * sz,
            cx * cy * sz + sx * sy * cz,
        ],
        -1,
    )


def _np_to_euler(q):  # intrinsic xyz, the quaternion method scipy uses (third angle 0 at gimbal lock)
    w, x, y, z = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    a, b, c, d = w - y, z - x, y + w, -x - z  # axes reversed (z, y, x), sign -1
    mid = 2 * np.arctan2(np.hypot(c, d), np.hypot(a, b))
    hs, hd = np.arctan2(b, a), np.arctan2(d, c)
    lock0, lockpi = np.abs(mid) <= 1e-7, np.abs(mid - np.pi) <= 1e-7
    free = ~(lock0 | lockpi)
    first = np.where(free, hs + hd, np.where(lock0, 2 * hs, 2 * hd))
    out = np.stack([-first, mid - np.pi / 2, np.where(free, hs - hd, 0.0)], -1)
    return np.where(out > np.pi, out - 2 * np.pi, np.where(out < -np.pi, out + 2 * np.pi, out))


def _np_normalize(q):
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def run(quick: bool, n: int | None = None) -> list[dict]:
    from scipy.spatial.transform import Rotation as R

    quat = C.mod("motion.quat")
    n = n or (20_000 if quick else 200_000)
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, 4))
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    b = rng.normal(size=(n, 4))
    b /= np.linalg.norm(b, axis=-1, keepdims=True)
    v = rng.normal(size=(n, 3))
    t = rng.uniform(size=n)
    m = quat.to_matrix(a)
    e = rng.uniform(-3, 3, size=(n, 3))
    half = 0.5 * quat.log(a)  # small and large angles

    def sp(q):
        return R.from_quat(q, scalar_first=True)

    ops: list[tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], Any]]] = [
        ("to_matrix", lambda: quat.to_matrix(a), lambda: sp(a).as_matrix(), lambda: _np_to_matrix(a)),
        (
            "from_matrix",
            lambda: quat.from_matrix(m),
            lambda: R.from_matrix(m).as_quat(scalar_first=True),
            lambda: _np_from_matrix(m),
        ),
        (
            "exp",
            lambda: quat.exp(half),
            lambda: R.from_rotvec(2.0 * half).as_quat(scalar_first=True),
            lambda: _np_exp(half),
        ),
        ("log", lambda: quat.log(a), lambda: 0.5 * sp(a).as_rotvec(), lambda: _np_log(a)),
        (
            "slerp",
            lambda: quat.slerp(a, b, t),
            lambda: (sp(a) * R.from_rotvec((sp(a).inv() * sp(b)).as_rotvec() * t[:, None])).as_quat(scalar_first=True),
            lambda: _np_slerp(a, b, t),
        ),
        ("mul", lambda: quat.mul(a, b), lambda: (sp(a) * sp(b)).as_quat(scalar_first=True), lambda: _np_mul(a, b)),
        ("inv", lambda: quat.inv(a), lambda: sp(a).inv().as_quat(scalar_first=True), lambda: a * [1, -1, -1, -1]),
        ("mul_vec (apply)", lambda: quat.mul_vec(a, v), lambda: sp(a).apply(v), lambda: _np_rotate(a, v)),
        (
            "from_euler xyz",
            lambda: quat.from_euler(e, "xyz"),
            lambda: R.from_euler("XYZ", e).as_quat(scalar_first=True),
            lambda: _np_from_euler(e),
        ),
        ("to_euler xyz", lambda: quat.to_euler(a, "xyz"), lambda: sp(a).as_euler("XYZ"), lambda: _np_to_euler(a)),
        (
            "normalize",
            lambda: quat.normalize(a),
            lambda: sp(a).as_quat(scalar_first=True),
            lambda: _np_normalize(a),
        ),
    ]
    rep = 5 if quick else 9
    data = f"{n:,} random unit quaternions (float64, C order)"
    recs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scipy's gimbal-lock warning
        for name, ours, sci, plain in ops:
            t_ours = best(ours, repeat=rep)
            t_sci = best(sci, repeat=rep)
            t_np = best(plain, repeat=rep)
            worst = min(t_sci, t_np)  # the faster peer is the bar
            recs.append(
                record(
                    BENCH,
                    f"{name} vs scipy Rotation",
                    1e3 * t_ours,
                    "ms",
                    data=data,
                    anchor="scipy, same run",
                    anchor_value=1e3 * t_sci,
                )
            )
            recs.append(
                record(
                    BENCH,
                    f"{name} vs plain numpy",
                    1e3 * t_ours,
                    "ms",
                    data=data,
                    anchor="numpy, same run",
                    anchor_value=1e3 * t_np,
                    note=f"slower than the faster peer by {t_ours / worst:.2f}x" if t_ours > worst else "",
                )
            )
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

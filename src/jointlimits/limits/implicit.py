"""Implicit-surface limits (Herda et al., "Hierarchical implicit surface joint limits").

The limit-space cloud is voxelised in its principal frame; every occupied voxel holds a
soft-object metaball (compact support, ``(1 - r^2 / R^2)^3`` as in Bittar, Tsingos and Cani's
soft objects) and the limit is where their summed field reaches the iso threshold. The field is
sampled once on the voxel grid (nodes at voxel centres) and read by trilinear interpolation, so
``contains`` is one interpolation per point. Holes inside the cloud are filled and every fitted
point is made to lie inside.

Projection follows the field's gradient from an outside point until the field reaches the
threshold and finds the crossing by bisection (the seed's method). Where the field and its
gradient vanish (beyond every metaball's support, or at a bump below the threshold) the point
is instead taken toward the nearest inside grid node and the crossing on that segment is
found the same way. Results are inside, so projection is idempotent; inside points come back
unchanged, bit for bit.

The kernels take a stack of fields with per-point blend weights: one field for a plain limit,
the neighbouring parent cells' fields for a coupled (parent-conditioned) child limit.
"""

from __future__ import annotations

import base64
import math
import zlib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numba
import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from . import cloud
from ._checks import _points
from .shape import Shape

__all__ = ["Implicit", "fit_field", "encode_grid", "decode_grid"]

Array = NDArray[np.float64]

THRESHOLD = 0.5  # iso value of the summed field
# a lone metaball of radius R reaches the threshold at R * sqrt(1 - THRESHOLD^(1/3))
_ISO_RADIUS = math.sqrt(1.0 - THRESHOLD ** (1.0 / 3.0))
RADIUS_CELLS = 1.5  # metaball radius in cells before padding: neighbours' balls overlap
MARCH_STEP = 0.5  # gradient-march step, in cells
MARCH_STEPS = 64
BISECTIONS = 20  # crossing to 2^-20 of a half cell
SAFETY = 1e-7  # results read at least threshold * (1 + SAFETY)


# --------------------------------------------------------------------------- compiled field


@numba.njit(cache=True, nogil=True, inline="always")
def _eval(F, ids, ws, m, gx, gy, gz):  # pragma: no cover - compiled
    """Blended field sum_k ws[k] F[ids[k]] and its gradient at grid coordinates (0 outside the grid)."""
    nx, ny, nz = F.shape[1], F.shape[2], F.shape[3]
    if not (gx >= 0.0 and gy >= 0.0 and gz >= 0.0 and gx <= nx - 1 and gy <= ny - 1 and gz <= nz - 1):
        return 0.0, 0.0, 0.0, 0.0
    i = min(int(gx), nx - 2)
    j = min(int(gy), ny - 2)
    k = min(int(gz), nz - 2)
    fx, fy, fz = gx - i, gy - j, gz - k
    f = dx = dy = dz = 0.0
    for t in range(m):
        w = ws[t]
        if w == 0.0:
            continue
        G = F[ids[t]]
        c000, c100, c010, c110 = G[i, j, k], G[i + 1, j, k], G[i, j + 1, k], G[i + 1, j + 1, k]
        c001, c101, c011, c111 = G[i, j, k + 1], G[i + 1, j, k + 1], G[i, j + 1, k + 1], G[i + 1, j + 1, k + 1]
        a00 = c000 + (c100 - c000) * fx
        a10 = c010 + (c110 - c010) * fx
        a01 = c001 + (c101 - c001) * fx
        a11 = c011 + (c111 - c011) * fx
        b0 = a00 + (a10 - a00) * fy
        b1 = a01 + (a11 - a01) * fy
        f += w * (b0 + (b1 - b0) * fz)
        ex0 = (c100 - c000) + ((c110 - c010) - (c100 - c000)) * fy
        ex1 = (c101 - c001) + ((c111 - c011) - (c101 - c001)) * fy
        dx += w * (ex0 + (ex1 - ex0) * fz)
        dy += w * ((a10 - a00) + ((a11 - a01) - (a10 - a00)) * fz)
        dz += w * (b1 - b0)
    return f, dx, dy, dz


@numba.njit(cache=True, nogil=True, inline="always")
def _to_grid(x, y, z, pos, rot, origin, inv_cell):  # pragma: no cover - compiled
    dx, dy, dz = x - pos[0], y - pos[1], z - pos[2]
    u = rot[0, 0] * dx + rot[1, 0] * dy + rot[2, 0] * dz
    v = rot[0, 1] * dx + rot[1, 1] * dy + rot[2, 1] * dz
    w = rot[0, 2] * dx + rot[1, 2] * dy + rot[2, 2] * dz
    return (u - origin[0]) * inv_cell, (v - origin[1]) * inv_cell, (w - origin[2]) * inv_cell


@numba.njit(cache=True, nogil=True, inline="always")
def _from_grid(gx, gy, gz, pos, rot, origin, cell, normal):  # pragma: no cover - compiled
    u, v, w = origin[0] + gx * cell, origin[1] + gy * cell, origin[2] + gz * cell
    x = rot[0, 0] * u + rot[0, 1] * v + rot[0, 2] * w + pos[0]
    y = rot[1, 0] * u + rot[1, 1] * v + rot[1, 2] * w + pos[1]
    z = rot[2, 0] * u + rot[2, 1] * v + rot[2, 2] * w + pos[2]
    d = x * normal[0] + y * normal[1] + z * normal[2]  # sections: stay exactly in the plane
    return x - d * normal[0], y - d * normal[1], z - d * normal[2]


@numba.njit(cache=True, nogil=True)
def _contains_kernel(pts, pos, rot, origin, cell, thr, F, ids, ws, tol, out):  # pragma: no cover - compiled
    """Inside: field >= thr, or within ``tol`` of the surface to first order (field + tol |grad|)."""
    inv = 1.0 / cell
    m = ids.shape[1]
    one = ids.shape[0] == 1
    for i in range(pts.shape[0]):
        r = 0 if one else i
        gx, gy, gz = _to_grid(pts[i, 0], pts[i, 1], pts[i, 2], pos, rot, origin, inv)
        f, dx, dy, dz = _eval(F, ids[r], ws[r], m, gx, gy, gz)
        out[i] = f >= thr or (tol > 0.0 and f > 0.0 and f + tol * inv * math.sqrt(dx * dx + dy * dy + dz * dz) >= thr)


@numba.njit(cache=True, nogil=True)
def _field_kernel(pts, pos, rot, origin, cell, F, ids, ws, out):  # pragma: no cover - compiled
    inv = 1.0 / cell
    m = ids.shape[1]
    one = ids.shape[0] == 1
    for i in range(pts.shape[0]):
        r = 0 if one else i
        gx, gy, gz = _to_grid(pts[i, 0], pts[i, 1], pts[i, 2], pos, rot, origin, inv)
        f, dx, dy, dz = _eval(F, ids[r], ws[r], m, gx, gy, gz)
        out[i, 0] = f
        # gradient in limit space: R (d / cell)
        out[i, 1] = (rot[0, 0] * dx + rot[0, 1] * dy + rot[0, 2] * dz) * inv
        out[i, 2] = (rot[1, 0] * dx + rot[1, 1] * dy + rot[1, 2] * dz) * inv
        out[i, 3] = (rot[2, 0] * dx + rot[2, 1] * dy + rot[2, 2] * dz) * inv


@numba.njit(cache=True, nogil=True, inline="always")
def _crossing(F, ids, ws, m, thr, ax, ay, az, bx, by, bz):  # pragma: no cover - compiled
    """Bisection between an outside point a and an inside point b: a point inside, near the crossing."""
    for _ in range(BISECTIONS):
        cx, cy, cz = 0.5 * (ax + bx), 0.5 * (ay + by), 0.5 * (az + bz)
        if _eval(F, ids, ws, m, cx, cy, cz)[0] >= thr:
            bx, by, bz = cx, cy, cz
        else:
            ax, ay, az = cx, cy, cz
    return bx, by, bz


@numba.njit(cache=True, nogil=True, inline="always")
def _node(D, x, y, z):  # pragma: no cover - compiled
    """The grid node nearest grid coordinates (x, y, z), clamped to the grid."""
    nx, ny, nz = D.shape[1], D.shape[2], D.shape[3]
    i = min(max(int(math.floor(x + 0.5)), 0), nx - 1)
    j = min(max(int(math.floor(y + 0.5)), 0), ny - 1)
    k = min(max(int(math.floor(z + 0.5)), 0), nz - 1)
    return i, j, k


@numba.njit(cache=True, nogil=True, inline="always")
def _enter(gx, gy, gz, sx, sy, sz, nx, ny, nz):  # pragma: no cover - compiled
    """Where the ray from g along s enters the grid box (g itself if inside or missed)."""
    t = 0.0
    if gx < 0.0 and sx > 0.0:
        t = max(t, -gx / sx)
    elif gx > nx - 1 and sx < 0.0:
        t = max(t, (nx - 1 - gx) / sx)
    if gy < 0.0 and sy > 0.0:
        t = max(t, -gy / sy)
    elif gy > ny - 1 and sy < 0.0:
        t = max(t, (ny - 1 - gy) / sy)
    if gz < 0.0 and sz > 0.0:
        t = max(t, -gz / sz)
    elif gz > nz - 1 and sz < 0.0:
        t = max(t, (nz - 1 - gz) / sz)
    return gx + sx * t, gy + sy * t, gz + sz * t


@numba.njit(cache=True, nogil=True, inline="always")
def _toward_nearest(F, D, NEAR, kf, ids, ws, m, thr, gx, gy, gz, nlx, nly, nlz, poff, cx0, cy0, cz0):  # pragma: no cover
    """Where the gradient gives no direction: the first inside point on the segment to the
    nearest inside node (of field ``kf``; moved onto the plane of a section), found by sphere
    tracing on the nodes' distances to the inside, then bisection."""
    nx, ny, nz = F.shape[1], F.shape[2], F.shape[3]
    # outside the grid: look up from where the segment toward the shape's centre enters it
    ex, ey, ez = _enter(gx, gy, gz, cx0 - gx, cy0 - gy, cz0 - gz, nx, ny, nz)
    i, j, k = _node(D, ex, ey, ez)
    b = NEAR[kf, i, j, k]
    bx, by, bz = float(b // (ny * nz)), float((b // nz) % ny), float(b % nz)
    d = bx * nlx + by * nly + bz * nlz - poff
    bx, by, bz = bx - d * nlx, by - d * nly, bz - d * nlz
    sx, sy, sz = bx - gx, by - gy, bz - gz
    L = math.sqrt(sx * sx + sy * sy + sz * sz)
    if L == 0.0:
        return bx, by, bz
    sx, sy, sz = sx / L, sy / L, sz / L
    px, py, pz = _enter(gx, gy, gz, sx, sy, sz, nx, ny, nz)  # the field is 0 outside the grid
    t = min(L, math.sqrt((px - gx) ** 2 + (py - gy) ** 2 + (pz - gz) ** 2))
    while t < L:
        i, j, k = _node(D, px, py, pz)
        t = min(L, t + max(D[kf, i, j, k] - 2.0, MARCH_STEP))
        cx, cy, cz = gx + sx * t, gy + sy * t, gz + sz * t
        if _eval(F, ids, ws, m, cx, cy, cz)[0] >= thr:
            return _crossing(F, ids, ws, m, thr, px, py, pz, cx, cy, cz)
        px, py, pz = cx, cy, cz
    return bx, by, bz


@numba.njit(cache=True, nogil=True)
def _project_kernel(pts, pos, rot, origin, cell, thr, F, D, NEAR, ids, ws, normal, out):  # pragma: no cover
    """Project limit-space points onto the blended implicit limit (inside points copied)."""
    inv = 1.0 / cell
    m = ids.shape[1]
    one = ids.shape[0] == 1
    # the plane constraint of a section in grid directions: n_l . g = poff
    nlx = rot[0, 0] * normal[0] + rot[1, 0] * normal[1] + rot[2, 0] * normal[2]
    nly = rot[0, 1] * normal[0] + rot[1, 1] * normal[1] + rot[2, 1] * normal[2]
    nlz = rot[0, 2] * normal[0] + rot[1, 2] * normal[1] + rot[2, 2] * normal[2]
    cx0, cy0, cz0 = -origin[0] * inv, -origin[1] * inv, -origin[2] * inv  # the frame's centre
    poff = -(nlx * origin[0] + nly * origin[1] + nlz * origin[2] + normal[0] * pos[0] + normal[1] * pos[1]
             + normal[2] * pos[2]) * inv
    for i in range(pts.shape[0]):
        x, y, z = pts[i, 0], pts[i, 1], pts[i, 2]
        r = 0 if one else i
        idr, wr = ids[r], ws[r]
        gx, gy, gz = _to_grid(x, y, z, pos, rot, origin, inv)
        f, dx, dy, dz = _eval(F, idr, wr, m, gx, gy, gz)
        if f >= thr:
            out[i, 0], out[i, 1], out[i, 2] = x, y, z
            continue
        found = False
        cx, cy, cz = gx, gy, gz
        px, py, pz = gx, gy, gz
        for _ in range(MARCH_STEPS):  # up the gradient
            dn = dx * nlx + dy * nly + dz * nlz
            dx, dy, dz = dx - dn * nlx, dy - dn * nly, dz - dn * nlz
            g = math.sqrt(dx * dx + dy * dy + dz * dz)
            if f <= 0.0 or g < 1e-9:
                break
            px, py, pz = cx, cy, cz
            k = MARCH_STEP / g
            cx, cy, cz = cx + dx * k, cy + dy * k, cz + dz * k
            f, dx, dy, dz = _eval(F, idr, wr, m, cx, cy, cz)
            if f >= thr:
                found = True
                break
        if found:
            cx, cy, cz = _crossing(F, idr, wr, m, thr, px, py, pz, cx, cy, cz)
        else:  # no usable gradient: toward the nearest inside node of the most weighted field
            tried = 0
            for _ in range(m):  # a blend: the next most weighted field if that node is not inside it
                best = -1
                for t in range(m):
                    if not (tried >> t) & 1 and wr[t] > 0.0 and (best < 0 or wr[t] > wr[best]):
                        best = t
                if best < 0:
                    break
                tried |= 1 << best
                cx, cy, cz = _toward_nearest(F, D, NEAR, idr[best], idr, wr, m, thr, gx, gy, gz, nlx, nly, nlz,
                                             poff, cx0, cy0, cz0)
                f, dx, dy, dz = _eval(F, idr, wr, m, cx, cy, cz)
                if f >= thr:
                    break
            for _ in range(MARCH_STEPS):  # still outside the blend: up its gradient from there
                if f >= thr:
                    break
                g = math.sqrt(dx * dx + dy * dy + dz * dz)
                if f <= 0.0 or g < 1e-9:
                    break
                px, py, pz = cx, cy, cz
                k = MARCH_STEP / g
                cx, cy, cz = cx + dx * k, cy + dy * k, cz + dz * k
                f, dx, dy, dz = _eval(F, idr, wr, m, cx, cy, cz)
                if f >= thr:
                    cx, cy, cz = _crossing(F, idr, wr, m, thr, px, py, pz, cx, cy, cz)
        ox, oy, oz = _from_grid(cx, cy, cz, pos, rot, origin, cell, normal)
        # rounding on the way back (and through a rotation) must not leave the result just
        # outside (idempotence): push it on along the way it came until it reads a little
        # inside from limit space
        sx, sy, sz = cx - gx, cy - gy, cz - gz
        sn = math.sqrt(sx * sx + sy * sy + sz * sz)
        if sn > 0.0:
            sx, sy, sz = sx / sn, sy / sn, sz / sn
        e = 1e-9
        for _ in range(40):
            hx, hy, hz = _to_grid(ox, oy, oz, pos, rot, origin, inv)
            if _eval(F, idr, wr, m, hx, hy, hz)[0] >= thr * (1.0 + SAFETY):
                break
            ox, oy, oz = _from_grid(cx + sx * e, cy + sy * e, cz + sz * e, pos, rot, origin, cell, normal)
            e *= 2.0
        out[i, 0], out[i, 1], out[i, 2] = ox, oy, oz


@numba.njit(cache=True, nogil=True)
def _splat(centres, radius, F):  # pragma: no cover - compiled
    """Add a soft-object metaball (1 - r^2 / R^2)^3 of radius ``radius`` (cells) at each centre."""
    nx, ny, nz = F.shape
    r = int(math.ceil(radius))
    rr = radius * radius
    for c in range(centres.shape[0]):
        ci, cj, ck = centres[c, 0], centres[c, 1], centres[c, 2]
        for i in range(max(0, ci - r), min(nx, ci + r + 1)):
            for j in range(max(0, cj - r), min(ny, cj + r + 1)):
                for k in range(max(0, ck - r), min(nz, ck + r + 1)):
                    d2 = (i - ci) ** 2 + (j - cj) ** 2 + (k - ck) ** 2
                    if d2 < rr:
                        a = 1.0 - d2 / rr
                        F[i, j, k] += a * a * a


@numba.njit(cache=True, nogil=True)
def _lift_points(g, lift, F):  # pragma: no cover - compiled
    """Raise to ``lift`` the corner nodes of every grid cell holding a point whose field is below
    it (trilinear interpolation of corners >= lift is >= lift, up to rounding)."""
    nx, ny, nz = F.shape
    lifted = 0
    ids = np.zeros(1, np.int64)
    ws = np.ones(1)
    F4 = F.reshape((1, nx, ny, nz))
    for p in range(g.shape[0]):
        if _eval(F4, ids, ws, 1, g[p, 0], g[p, 1], g[p, 2])[0] >= lift:
            continue
        i = min(max(int(g[p, 0]), 0), nx - 2)
        j = min(max(int(g[p, 1]), 0), ny - 2)
        k = min(max(int(g[p, 2]), 0), nz - 2)
        for a in range(2):
            for b in range(2):
                for c in range(2):
                    if F[i + a, j + b, k + c] < lift:
                        F[i + a, j + b, k + c] = lift
        lifted += 1
    return lifted


# --------------------------------------------------------------------------- fitting


def choose_cell(points: Array, subsample: float | None = 0.05) -> float:
    """A voxel size from the cloud's density: the median nearest-neighbour spacing of the
    subsampled cloud, kept between 1/64 and 1/4 of its largest extent (and >= 0.02 rad)."""
    from scipy.spatial import cKDTree

    pts = np.asarray(points, np.float64)
    d = subsample or 0.05
    sub = pts[cloud.subsample(pts, d)]
    extent = float(np.max(pts.max(0) - pts.min(0))) if len(pts) else 0.0
    if len(sub) >= 2:
        nn = cKDTree(sub).query(sub, k=2)[0][:, 1]
        h = float(np.median(nn))
    else:
        h = 4.0 * d
    lo = max(0.02, extent / 64.0)
    hi = max(lo, extent / 4.0, 0.1)
    return float(min(max(h, lo), hi))


def fit_field(local: Array, origin: Array, dims: tuple[int, int, int], cell: float, radius: float,
              threshold: float = THRESHOLD, fill_holes: bool = True, flat: bool = False) -> NDArray[np.float32]:
    """The metaball field of local points ``[N, 3]`` on a grid (nodes at ``origin + i * cell``):
    one ball of ``radius`` (cells) per occupied voxel, holes filled, every point inside."""
    from scipy import ndimage

    g = (np.asarray(local, np.float64) - origin) / cell
    F = np.zeros(dims, np.float64)
    if len(g):
        v = np.clip(np.rint(g), 0, np.array(dims) - 1).astype(np.int64)
        occupied = np.zeros(dims, np.bool_)
        occupied[v[:, 0], v[:, 1], v[:, 2]] = True
        _splat(np.argwhere(occupied), float(radius), F)
    if fill_holes:
        inside = F >= threshold
        filled = ndimage.binary_fill_holes(inside)
        if flat:  # a planar cloud (a swing): its holes open along the normal, fill them in-plane
            for k in range(dims[2]):
                filled[:, :, k] = ndimage.binary_fill_holes(filled[:, :, k])
        F[filled & ~inside] = threshold
    F32 = F.astype(np.float32)
    if len(g):
        F64 = F32.astype(np.float64)
        # a little above the threshold: the points must read inside however their grid
        # coordinates are rounded later
        if _lift_points(np.ascontiguousarray(g), threshold * (1.0 + 1e-5), F64):
            F32 = F64.astype(np.float32)
    return F32


def nearest_inside(F: NDArray[np.float32], threshold: float) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
    """Per node: distance (cells) to the nearest inside node and that node's flat index."""
    from scipy import ndimage

    inside = F >= threshold
    dist, idx = ndimage.distance_transform_edt(~inside, return_indices=True)
    flat = (idx[0] * F.shape[1] + idx[1]) * F.shape[2] + idx[2]
    return dist.astype(np.float32), flat.astype(np.int32)


# --------------------------------------------------------------------------- files


ENCODING = "zlib-base64-float32-le"  # also read: "base64-float32-le" (uncompressed)


def encode_grid(F: NDArray[np.float32]) -> str:
    """A float32 grid (little-endian, C order), zlib-compressed (mostly zeros), as base64."""
    return base64.b64encode(zlib.compress(np.ascontiguousarray(F, "<f4").tobytes(), 6)).decode("ascii")


def decode_grid(text: Any, dims: Any, what: str = "implicit limit grid",
                encoding: Any = ENCODING) -> NDArray[np.float32]:
    """The grid of :func:`encode_grid` (LimitsError if it is not a finite grid of ``dims``)."""
    try:
        shape = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        raise LimitsError(f"{what}: dims must be three integers, got {dims!r}") from None
    if len(shape) != 3 or min(shape) < 2 or math.prod(shape) > 64_000_000:
        raise LimitsError(f"{what}: dims must be three integers >= 2, got {dims!r}")
    if not isinstance(text, str):
        raise LimitsError(f"{what}: the field must be a base64 string")
    if encoding not in (ENCODING, "base64-float32-le"):
        raise LimitsError(f"{what}: unknown grid encoding {encoding!r}")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise LimitsError(f"{what}: the field is not valid base64") from None
    if encoding == ENCODING:
        try:
            raw = zlib.decompress(raw)
        except zlib.error:
            raise LimitsError(f"{what}: the field is not valid zlib data") from None
    if len(raw) != 4 * math.prod(shape):
        raise LimitsError(f"{what}: the field holds {len(raw) // 4} values, dims {list(shape)} need "
                          f"{math.prod(shape)}")
    F = np.frombuffer(raw, "<f4").reshape(shape).astype(np.float32)
    if not np.all(np.isfinite(F)) or np.any(F < 0):
        raise LimitsError(f"{what}: the field has negative or non-finite values")
    return F


# --------------------------------------------------------------------------- the shape


@dataclass(eq=False)
class Implicit(Shape):
    """A metaball iso-surface limit on a grid in the cloud's principal frame.

    ``grid`` ``[nx, ny, nz]`` float32 samples the summed metaballs at nodes
    ``origin + (i, j, k) * cell`` of the local frame ``R^T (v - position)``; inside is
    ``grid >= threshold``. ``normal`` (non-zero only for a swing section) keeps projections in
    the plane through the origin perpendicular to it.
    """

    kind: str = "implicit"
    compiled: ClassVar[bool] = False
    position: Array = field(default_factory=lambda: np.zeros(3))
    rotation: Array = field(default_factory=lambda: np.eye(3))
    origin: Array = field(default_factory=lambda: np.zeros(3))
    cell: float = 0.1
    grid: NDArray[np.float32] | None = None
    threshold: float = THRESHOLD
    normal: Array = field(default_factory=lambda: np.zeros(3))
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind != "implicit":
            raise LimitsError(f"an Implicit is an 'implicit' limit, not {self.kind!r}")
        self.position = np.ascontiguousarray(np.asarray(self.position, np.float64).reshape(3))
        self.rotation = np.ascontiguousarray(np.asarray(self.rotation, np.float64).reshape(3, 3))
        self.origin = np.ascontiguousarray(np.asarray(self.origin, np.float64).reshape(3))
        self.normal = np.ascontiguousarray(np.asarray(self.normal, np.float64).reshape(3))
        self.cell = float(self.cell)
        self.threshold = float(self.threshold)
        for name in ("position", "rotation", "origin", "normal"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise LimitsError(f"implicit limit: {name} is not finite")
        if not (math.isfinite(self.cell) and self.cell > 0):
            raise LimitsError(f"implicit limit: cell must be > 0, got {self.cell}")
        if not (math.isfinite(self.threshold) and self.threshold > 0):
            raise LimitsError(f"implicit limit: threshold must be > 0, got {self.threshold}")
        if not np.allclose(self.rotation.T @ self.rotation, np.eye(3), atol=1e-6):
            raise LimitsError("implicit limit: rotation is not orthonormal")
        F = np.asarray(self.grid if self.grid is not None else np.zeros((0, 0, 0)), np.float32)
        if F.ndim != 3 or min(F.shape) < 2 or not np.all(np.isfinite(F)):
            raise LimitsError(f"implicit limit: the field must be a finite [nx, ny, nz] grid (each >= 2), "
                              f"got shape {F.shape}")
        self.grid = np.ascontiguousarray(F)
        if not np.any(F >= self.threshold):
            raise LimitsError("implicit limit: the field is nowhere above its threshold (an empty limit)")
        self._F = np.ascontiguousarray(F[None].astype(np.float64))
        D, NEAR = nearest_inside(F, self.threshold)
        self._D, self._NEAR = D[None], NEAR[None]
        self._ids, self._ws = np.zeros((1, 1), np.int64), np.ones((1, 1))
        g = np.argwhere(F >= self.threshold).astype(np.float64)
        local = self.origin + g * self.cell
        self._radius = float(np.max(np.linalg.norm(local @ self.rotation.T + self.position, axis=1)) + self.cell)

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(cls, points, padding: float = 0.05, subsample: float | None = 0.05, cell: float | None = None,
            radius_cells: float = RADIUS_CELLS, threshold: float = THRESHOLD, fill_holes: bool = True) -> "Implicit":
        """Metaballs on the voxelised cloud ``[N, 3]``: voxel ``cell`` from the data's density
        unless given; each ball reaches ``padding`` past its voxel."""
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        if not (math.isfinite(padding) and padding >= 0):
            raise LimitsError(f"padding must be a finite number >= 0, got {padding}")
        pos, rot = cloud.fit_frame(pts, subsample)
        local = (pts - pos) @ rot
        h = float(cell) if cell is not None else choose_cell(pts, subsample)
        if not (math.isfinite(h) and h > 0):
            raise LimitsError(f"implicit limit: cell must be > 0, got {cell}")
        iso = math.sqrt(1.0 - threshold ** (1.0 / 3.0))
        radius = radius_cells + padding / (iso * h)  # cells
        margin = math.ceil(radius) + 1
        lo = np.floor(local.min(0) / h) * h - margin * h
        hi = local.max(0) + margin * h
        dims = tuple(int(d) for d in np.maximum(np.ceil((hi - lo) / h).astype(int) + 1, 2))
        flat = bool(np.ptp(local[:, 2]) < 1e-9) if len(local) else False
        F = fit_field(local, lo, dims, h, radius, threshold, fill_holes, flat)
        return cls(position=pos, rotation=rot, origin=lo, cell=h, grid=F, threshold=threshold,
                   settings={"padding": float(padding), "radius_cells": float(radius_cells),
                             "points": int(len(pts))})

    # ------------------------------------------------------------------ queries
    def _args(self) -> tuple:
        return self.position, self.rotation, self.origin, self.cell

    def value(self, points: Array) -> Array:
        """Field and gradient ``[..., 4]`` (value, d/dx, d/dy, d/dz in limit space)."""
        p = _points(points)
        flat = np.ascontiguousarray(p.reshape(-1, 3))
        out = np.empty((len(flat), 4))
        _field_kernel(flat, *self._args(), self._F, self._ids, self._ws, out)
        return out.reshape(p.shape[:-1] + (4,))

    def contains(self, points: Array, tolerance: float = 1e-9) -> NDArray[np.bool_]:
        p = _points(points)
        flat = np.ascontiguousarray(p.reshape(-1, 3))
        out = np.empty(len(flat), np.bool_)
        _contains_kernel(flat, *self._args(), self.threshold, self._F, self._ids, self._ws, float(tolerance), out)
        return out.reshape(p.shape[:-1])

    def project(self, points: Array) -> Array:
        p = _points(points)
        flat = np.ascontiguousarray(p.reshape(-1, 3))
        if not np.all(np.isfinite(flat)):
            raise LimitsError("points contain NaN or infinite values")
        out = np.empty_like(flat)
        _project_kernel(flat, *self._args(), self.threshold, self._F, self._D, self._NEAR, self._ids, self._ws,
                        self.normal, out)
        return out.reshape(p.shape)

    def radius(self) -> float:
        return self._radius

    # ------------------------------------------------------------------ swing-twist
    def swing_section(self, axis: Array) -> "Implicit":
        a = np.asarray(axis, np.float64)
        return Implicit(position=self.position, rotation=self.rotation, origin=self.origin, cell=self.cell,
                        grid=self.grid, threshold=self.threshold, normal=a / np.linalg.norm(a),
                        settings=self.settings)

    def twist_interval(self, axis: Array) -> tuple[float, float]:
        a = np.asarray(axis, np.float64)
        a = a / np.linalg.norm(a)
        r = self.radius()
        t = np.linspace(-r, r, max(64, int(8 * r / self.cell)))
        inside = self.contains(t[:, None] * a, 0.0)
        if not inside.any():
            k = int(np.argmax(self.value(t[:, None] * a)[:, 0]))
            return float(t[k]), float(t[k])
        return float(t[inside].min()), float(t[inside].max())

    def pack_section(self, axis: Array) -> None:
        return None  # no compiled form: FittedLimit uses project() on batches

    # ------------------------------------------------------------------ drawing
    def surface(self, step: int = 1) -> tuple[Array, NDArray[np.int64]]:
        """The iso-surface as a triangle mesh in limit space (marching cubes on the grid):
        (vertices [V, 3], triangles [T, 3])."""
        from skimage.measure import marching_cubes

        F = np.pad(self.grid, 1)  # closed surfaces where the inside touches the grid's edge
        v, t, _, _ = marching_cubes(F, level=self.threshold, step_size=step, allow_degenerate=False)
        local = self.origin + (v - 1.0) * self.cell
        return local @ self.rotation.T + self.position, np.asarray(t, np.int64)

    def outline(self, e1: Array, e2: Array, samples: int | None = None) -> Array | None:
        """The longest closed iso-line of the field in the plane spanned by unit e1, e2 (through
        the origin), in (e1, e2) coordinates (marching squares, then Newton steps onto it), or None."""
        from skimage.measure import find_contours

        r = self.radius()
        if samples is None:
            samples = int(min(max(160, 3.0 * r / self.cell), 800))
        t = np.linspace(-r, r, samples)
        P = t[:, None, None] * np.asarray(e1) + t[None, :, None] * np.asarray(e2)
        f = self.value(P.reshape(-1, 3))[:, 0].reshape(samples, samples)
        cs = find_contours(np.pad(f, 1), self.threshold)
        if not cs:
            return None
        c = max(cs, key=len) - 1.0
        y = np.interp(c, np.arange(samples), t)
        E = np.stack([np.asarray(e1, np.float64), np.asarray(e2, np.float64)])
        for _ in range(3):  # Newton steps in the plane onto the interpolated field's iso-line
            fg = self.value(y @ E)
            g = fg[:, 1:] @ E.T
            gg = np.einsum("ij,ij->i", g, g)
            step = np.where(gg > 1e-18, (self.threshold - fg[:, 0]) / np.maximum(gg, 1e-18), 0.0)[:, None] * g
            n = np.linalg.norm(step, axis=1, keepdims=True)
            y = y + step * np.minimum(1.0, 0.5 * self.cell / np.maximum(n, 1e-300))
        return np.vstack([y, y[:1]]) if not np.array_equal(y[0], y[-1]) else y

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict:
        return {"kind": self.kind, "position": self.position.tolist(), "rotation": self.rotation.tolist(),
                "origin": self.origin.tolist(), "cell": self.cell, "threshold": self.threshold,
                "normal": self.normal.tolist(), "dims": list(self.grid.shape), "encoding": ENCODING,
                "grid": encode_grid(self.grid), "settings": dict(self.settings)}

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> "Implicit":
        F = decode_grid(d["grid"], d["dims"], encoding=d.get("encoding", ENCODING))
        return cls(position=d["position"], rotation=d["rotation"], origin=d["origin"], cell=d["cell"], grid=F,
                   threshold=d.get("threshold", THRESHOLD), normal=d.get("normal", [0.0, 0.0, 0.0]),
                   settings=dict(d.get("settings", {})))

"""Calibrated paddings: per joint, the padding at which the recall on new motion (the fraction of
its frames a limit admits) is expected to meet a target, with that expected recall and its spread.

Held-out recall is measured by folds over units of the training data: one group left out when
groups are given (a person, a session), otherwise one clip. A fold trains on fewer units than
the final fit, so its recall understates the final limit's; the miss rate (1 - recall) is taken
to fall as a power of the number of training units, ``miss(n) ~ n^-b``, with ``b`` read off a
learning curve (the same folds trained on fewer units) and each fold's miss rate scaled by
``(G / (G - 1))^-b`` for ``G`` units.

Implicit limits only, and without refitting per fold and padding: a joint's limit-space cloud is
voxelised once in the frame and cell the final fit will use (:func:`.implicit.choose_cell`), a
fold's limit is the metaballs on the voxels of its training units, and each held-out frame gets
the smallest padding whose metaballs reach it (the summed field's radius found by bisection).
A fold's recall at any padding is then the fraction of held-out frames whose padding is at most
that. Hole filling and the grid's interpolation are left out (a frame inside a filled hole counts
as needing padding): the figures lean to the conservative side.

The folds are taken without ``mirror``'s mirrored clips (the mirrored fit is at least as wide).

What the expected recall means: the recall on more motion like the held-out units' relative to
the rest (new clips of the same people and kinds of motion when folds are clips; new people
doing such motion when folds are people). Motion of another kind than any training unit (a
crawl when only walks were fitted) is not covered by it.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import LimitsError
from ..motion.skeleton import Motion
from . import cloud
from .implicit import RADIUS_CELLS, THRESHOLD, choose_cell, iso_fraction
from .options import FitOptions

__all__ = [
    "CalibrationWarning",
    "Calibration",
    "calibrate",
    "group_labels",
    "required_padding",
    "read_calibration",
    "MAX_PADDING",
]

Array = NDArray[np.float64]

MAX_PADDING = 0.5  # radians: frames that need more count as never admitted
TEST_FRAMES = 3000  # held-out frames per unit and joint at most (evenly strided)
PADDING_STEP = 0.0025  # radians: the grid the paddings are chosen on
NEIGHBOURS = 64  # balls summed per frame when finding its padding
BISECTIONS = 16
CHUNKS = 4  # one clip alone: folds over this many stretches of it


ALLOCATIONS = ("uniform", "joint", "balanced")
RANDOM_ROTATIONS = 20_000  # Haar-uniform rotations a joint's share of rotation space is read from


class CalibrationWarning(UserWarning):
    """The training data cannot support a calibrated figure as asked (one person, one clip)."""


@dataclass
class Calibration:
    """Per joint (name): chosen padding, expected recall and its spread (standard deviation over
    folds); and how they were found."""

    target_recall: float
    allocation: str
    paddings: dict[str, float]
    expected: dict[str, float]
    spread: dict[str, float]
    folds: int
    units: str
    exponent: float
    correction: str
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        """The ``settings["calibration"]`` entry of a limits file."""
        return {
            "target_recall": self.target_recall,
            "allocation": self.allocation,
            "folds": self.folds,
            "units": self.units,
            "learning_curve_exponent": self.exponent,
            "correction": self.correction,
            "warnings": list(self.warnings),
            "joints": {
                n: {"padding": self.paddings[n], "expected_recall": self.expected[n], "spread": self.spread[n]}
                for n in self.paddings
            },
        }


def read_calibration(settings: Mapping[str, Any], source: str = "limits") -> dict[str, dict[str, float]] | None:
    """Per joint name ``{"padding", "expected_recall", "spread"}`` of a limits file's settings
    (None for files without a calibration; LimitsError if the entry is malformed)."""
    c = settings.get("calibration")
    if c is None:
        return None
    joints = c.get("joints") if isinstance(c, Mapping) else None
    if not isinstance(joints, Mapping):
        raise LimitsError(f"{source}: settings.calibration must hold a 'joints' object")
    out = {}
    for name, e in joints.items():
        if not isinstance(e, Mapping):
            raise LimitsError(f"{source}: calibration of joint {name!r} must be an object")
        row = {}
        for k in ("padding", "expected_recall", "spread"):
            v = e.get(k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise LimitsError(f"{source}: calibration of joint {name!r}: {k!r} must be a finite number >= 0")
            row[k] = float(v)
        if row["expected_recall"] > 1:
            raise LimitsError(f"{source}: calibration of joint {name!r}: expected_recall must be in [0, 1]")
        out[str(name)] = row
    return out


# --------------------------------------------------------------------------- groups


def group_labels(paths: Sequence[str | Path], groups: str | Sequence[str] | None) -> list[str]:
    """A group label per clip file: ``groups`` is a CSV file (``file,group`` rows; a file by its
    name or path), or regular expressions searched in each file's name whose match (its first
    group if it has one) labels the clip (``_subject\\d+`` for LAFAN1, ``^\\d+`` for CMU's subject
    number). Clips no pattern matches are their own group. None: each clip its own group."""
    names = [Path(p).name for p in paths]
    if groups is None:
        return [str(p) for p in paths]
    pats = [groups] if isinstance(groups, str) else list(groups)
    if len(pats) == 1 and pats[0].lower().endswith(".csv") and Path(pats[0]).is_file():
        import csv

        table: dict[str, str] = {}
        with open(pats[0], newline="") as fh:
            for row in csv.reader(fh):
                if len(row) >= 2 and row[0].strip() and not row[0].startswith("#"):
                    table[row[0].strip()] = row[1].strip()
        out = []
        for p, n in zip(paths, names):
            g = table.get(str(p), table.get(n))
            if g is None:
                raise LimitsError(f"{pats[0]}: no group for clip {n!r}")
            out.append(g)
        return out
    out = []
    for p, n in zip(paths, names):
        label = None
        for pat in pats:
            try:
                m = re.search(pat, n)
            except re.error as e:
                raise LimitsError(f"--groups pattern {pat!r} is not a regular expression ({e})") from None
            if m:
                label = m.group(1) if m.groups() else m.group(0)
                break
        out.append(label if label is not None else str(p))
    return out


# --------------------------------------------------------------------------- fields


def _field(d2: Array, R: Array) -> Array:
    """Summed soft-object field of balls of radius ``R [N]`` at squared distances ``d2 [N, K]``
    (cells²)."""
    t = np.maximum(1.0 - d2 / (R * R)[:, None], 0.0)
    return np.sum(t * t * t, axis=1)


def required_padding(
    voxels: NDArray[np.int64], points: Array, cell: float, radius_cells: float = RADIUS_CELLS, most: float = MAX_PADDING
) -> Array:
    """Per point (grid coordinates ``[N, 3]``, cell units): the smallest padding (radians) at
    which metaballs on ``voxels`` ``[K, 3]`` (an implicit limit's occupied voxels, balls of
    ``radius_cells`` plus padding) reach it; ``inf`` beyond ``most``."""
    from scipy.spatial import cKDTree

    pts = np.asarray(points, np.float64).reshape(-1, 3)
    out = np.full(len(pts), np.inf)
    if not len(voxels) or not len(pts):
        return out
    iso = iso_fraction(THRESHOLD)
    per_rad = 1.0 / (iso * cell)  # cells of radius per radian of padding
    rmax = radius_cells + most * per_rad
    tree = cKDTree(np.asarray(voxels, np.float64))
    # at no padding (most frames): the few balls within the bare radius settle it
    dk = tree.query(pts, k=32, distance_upper_bound=radius_cells)[0]
    t0 = np.clip(1.0 - dk * dk / radius_cells**2, 0.0, None)
    out[np.sum(t0 * t0 * t0, axis=1) >= THRESHOLD] = 0.0
    d1 = tree.query(pts, k=1)[0]
    # bracket per point: no field before the nearest ball reaches it, the nearest alone reads the
    # threshold at d1 / iso
    lo = np.maximum(radius_cells, d1)
    hi = np.maximum(radius_cells, d1 / iso) * (1 + 1e-9)
    todo = np.flatnonzero((lo <= rmax) & ~np.isfinite(out))
    if not len(todo):
        return out
    # the nearest balls (beyond NEIGHBOURS the rest add little: the padding found errs larger)
    d, _ = tree.query(pts[todo], k=NEIGHBOURS, distance_upper_bound=float(np.max(np.minimum(hi[todo], rmax))))
    d2 = np.where(np.isfinite(d), d * d, np.inf)
    a, b = lo[todo].copy(), np.minimum(hi[todo], rmax)
    reach = _field(d2, b) >= THRESHOLD
    for _ in range(BISECTIONS):
        m = 0.5 * (a + b)
        ok = _field(d2, m) >= THRESHOLD
        b = np.where(ok, m, b)
        a = np.where(ok, a, m)
    pad = np.maximum(b - radius_cells, 0.0) / per_rad
    out[todo] = np.where(reach, pad, np.inf)
    return out


# --------------------------------------------------------------------------- calibration


def _keys(v: NDArray[np.int64]) -> NDArray[np.int64]:
    off = 1 << 20
    return ((v[:, 0] + off) << 42) | ((v[:, 1] + off) << 21) | (v[:, 2] + off)


def _unkey(k: NDArray[np.int64]) -> NDArray[np.int64]:
    off, m = 1 << 20, (1 << 21) - 1
    return np.stack([(k >> 42) - off, ((k >> 21) & m) - off, (k & m) - off], axis=1)


def _units(ms: Sequence[Motion], groups: Sequence[Any] | None) -> tuple[list[NDArray[np.int64]], str, list[str]]:
    """Frame indices (into the clips' concatenated frames) per unit, what a unit is, warnings."""
    bounds = np.cumsum([0] + [m.num_frames for m in ms])
    clips = [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    notes: list[str] = []
    if groups is not None:
        labels = list(groups)
        if len(labels) != len(ms):
            raise LimitsError(f"groups: {len(labels)} labels for {len(ms)} clips")
        order = list(dict.fromkeys(labels))
        if len(order) >= 2:
            return [np.concatenate([clips[k] for k, g in enumerate(labels) if g == u]) for u in order], "group", notes
        notes.append(
            "the training data holds one group (one person) only: expected recall is for new clips of "
            "that person, not for new people"
        )
    if len(ms) >= 2:
        return clips, "clip", notes
    notes.append(
        f"one clip only: folds are {CHUNKS} stretches of it, and expected recall is for more of the "
        "same motion, not for new motion"
    )
    return [c for c in np.array_split(clips[0], CHUNKS) if len(c)], "stretch", notes


def _strided(idx: NDArray[np.int64], most: int) -> NDArray[np.int64]:
    return idx if len(idx) <= most else idx[np.linspace(0, len(idx) - 1, most).astype(np.int64)]


def _subsets(G: int, rng: np.random.Generator) -> list[int]:
    """Training sizes of the learning curve (held-out unit fixed): G-1 and fewer."""
    return sorted({G - 1, max(1, (G - 1) // 2), 1}, reverse=True)


def _miss_curves(
    joint_points: Sequence[Array],
    units: Sequence[NDArray[np.int64]],
    cells: Sequence[float],
    pgrid: Array,
    sizes: Sequence[int],
    seed: int = 0,
) -> dict[int, Array]:
    """Per training size n: miss rate ``[joints, folds, paddings]`` of each held-out unit against
    the voxels of n other units (all others for n = G - 1; a random choice otherwise)."""
    rng = np.random.default_rng(seed)
    G = len(units)
    out = {n: np.zeros((len(joint_points), G, len(pgrid))) for n in sizes}
    picks: dict[int, list[NDArray[np.int64]]] = {}
    for n in sizes:  # (the random choices in this order: n, then u)
        picks[n] = []
        for u in range(G):
            others = np.array([w for w in range(G) if w != u])
            picks[n].append(others if n == G - 1 else rng.choice(others, n, replace=False))
    for j, g in enumerate(joint_points):
        vox = np.rint(g).astype(np.int64)
        ukeys = [np.unique(_keys(vox[ix])) for ix in units]
        for u in range(G):
            test = g[_strided(units[u], TEST_FRAMES)]
            for n in sizes:
                train = _unkey(np.unique(np.concatenate([ukeys[w] for w in picks[n][u]])))
                req = np.sort(required_padding(train, test, cells[j]))
                out[n][j, u] = 1.0 - np.searchsorted(req, pgrid, side="right") / len(req)
    return out


def _exponent(curves: Mapping[int, Array], counts: Sequence[int] | None = None) -> float:
    """The learning curve's exponent b (miss ~ n^-b): least squares over training sizes of the
    log mean miss rate over joints and folds, at the paddings where the largest size misses
    0.1% to 20%, median over those paddings; 0 if fewer than two sizes. ``counts`` maps a size
    index to its number of units when sizes are not counts."""
    sizes = sorted(curves)
    if len(sizes) < 2:
        return 0.0
    M = np.stack([curves[n].mean(axis=(0, 1)) for n in sizes])  # [sizes, paddings]
    big = M[-1]
    use = (big > 1e-3) & (big < 0.2) & np.all(M > 0, axis=0)
    if not use.any():
        return 0.0
    x = np.log(np.asarray(sizes, np.float64))
    y = np.log(M[:, use])
    xc = x - x.mean()
    b = -(xc @ (y - y.mean(axis=0))) / (xc @ xc)
    return float(np.clip(np.median(b), 0.0, 2.0))


def _admitted(g: Array, cell: float, frame: tuple[Array, Array], reference: Array, pgrid: Array) -> Array:
    """Per padding of ``pgrid``: the share of Haar-uniform rotations the joint's implicit limit
    (the metaballs on all of its voxels ``g``, grid coordinates) admits on either cover."""
    from ..motion import quat
    from .joint import to_limit_space

    rng = np.random.default_rng(12345)
    q = quat.normalize(rng.normal(size=(RANDOM_ROTATIONS, 4)))
    v = to_limit_space(q, reference)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    other = v - 2.0 * np.pi * v / np.maximum(n, 1e-12)  # the long cover
    vox = _unkey(np.unique(_keys(np.rint(g).astype(np.int64))))
    pos, rot = frame
    req = np.minimum(
        required_padding(vox, ((v - pos) @ rot) / cell, cell), required_padding(vox, ((other - pos) @ rot) / cell, cell)
    )
    req.sort()
    return np.searchsorted(req, pgrid, side="right") / len(req)


def _balance(expected: Array, admitted: Array, target: float) -> NDArray[np.int64]:
    """Per joint, the padding index that minimises the summed share of rotation space admitted
    while the mean expected recall meets ``target``: each joint maximises ``recall - lam *
    admitted`` and ``lam`` is the largest that still meets it (bisection)."""

    def pick(lam: float) -> NDArray[np.int64]:
        return np.argmax(expected - lam * admitted, axis=1)

    def mean(k: NDArray[np.int64]) -> float:
        return float(np.mean(expected[np.arange(len(k)), k]))

    lo, hi = 0.0, 1e3  # lam = 0: each joint's best recall
    if mean(pick(lo)) < target:
        return pick(lo)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mean(pick(mid)) >= target else (lo, mid)
    return pick(lo)


def calibrate(
    ms: Sequence[Motion],
    joints: Sequence[int],
    reference: Array,
    target_recall: float,
    groups: Sequence[Any] | None = None,
    subsample: float | None = 0.05,
    allocation: str = "uniform",
    correct: bool = True,
) -> Calibration:
    """The calibrated paddings of ``joints`` for implicit limits fitted to ``ms`` with per-joint
    ``reference`` rotations ``[J, 4]``. ``allocation``: ``"uniform"`` (one padding, the smallest
    whose mean expected recall over the joints meets the target), ``"joint"`` (each joint's
    padding is the smallest whose expected recall meets it) or ``"balanced"`` (the paddings that
    admit the least of rotation space, summed over the joints, while the mean expected recall
    meets it). ``correct=False`` keeps the folds'
    recall as it is (plain leave-one-out)."""
    from .fit import relative_clouds

    if not (0.0 < target_recall < 1.0):
        raise LimitsError(f"target_recall must be between 0 and 1, got {target_recall}")
    if allocation not in ALLOCATIONS:
        raise LimitsError(f"allocation must be one of {', '.join(ALLOCATIONS)}, not {allocation!r}")
    units, kind, notes = _units(ms, groups)
    G = len(units)
    sk = ms[0].skeleton
    pts, cells, frames = [], [], []
    for j in joints:
        p = np.asarray(relative_clouds(ms, j, reference[j]))
        pos, rot = cloud.fit_frame(p, subsample)
        h = choose_cell(p, subsample)
        pts.append(((p - pos) @ rot) / h)
        cells.append(h)
        frames.append((pos, rot))
    pgrid = np.arange(0.0, MAX_PADDING + 1e-12, PADDING_STEP)
    sizes = _subsets(G, np.random.default_rng(0)) if G >= 3 else [G - 1]
    curves = _miss_curves(pts, units, cells, pgrid, sizes)
    b, how = 0.0, "none"
    if correct:
        if G >= 3:
            b, how = _exponent(curves), f"learning curve over {kind}s"
        elif len(ms) >= 3:  # two groups: the exponent from a learning curve over clips
            cu, _, _ = _units(ms, None)
            cs = _subsets(len(cu), np.random.default_rng(0))
            b, how = _exponent(_miss_curves(pts, cu, cells, pgrid, cs)), "learning curve over clips"
        else:
            notes.append("too few clips for a learning curve: expected recall is plain leave-one-out")
    factor = (G / (G - 1)) ** -b if G >= 2 else 1.0
    recall = 1.0 - curves[G - 1] * factor  # [joints, folds, paddings]
    expected = recall.mean(axis=1)
    spread = recall.std(axis=1)
    if allocation == "balanced":
        fa = np.stack([_admitted(pts[i], cells[i], frames[i], reference[j], pgrid) for i, j in enumerate(joints)])
        k = _balance(expected, fa, target_recall)
    elif allocation == "joint":
        k = np.array([int(np.argmax(e >= target_recall)) if np.any(e >= target_recall) else -1 for e in expected])
    else:
        mean = expected.mean(axis=0)
        k = np.full(len(joints), int(np.argmax(mean >= target_recall)) if np.any(mean >= target_recall) else -1)
    short = [sk.names[j] for j, kk in zip(joints, k) if kk < 0]
    if short:
        notes.append(
            f"no padding up to {MAX_PADDING} rad is expected to reach recall {target_recall} at "
            f"{', '.join(short)}: padded {MAX_PADDING}"
        )
    k = np.where(k < 0, len(pgrid) - 1, k)
    names = [sk.names[j] for j in joints]
    for n in notes:
        warnings.warn(n, CalibrationWarning, stacklevel=3)
    return Calibration(
        target_recall=float(target_recall),
        allocation=allocation,
        paddings={n: float(pgrid[kk]) for n, kk in zip(names, k)},
        expected={n: float(expected[i, kk]) for i, (n, kk) in enumerate(zip(names, k))},
        spread={n: float(spread[i, kk]) for i, (n, kk) in enumerate(zip(names, k))},
        folds=G,
        units=kind,
        exponent=b,
        correction=f"miss x ({G}/{G - 1})^-{b:.3f} ({how})" if b else "none (plain leave-one-out)",
        warnings=notes,
    )


def fitted_joints(
    ms: Sequence[Motion], joints: Iterable[str] | None, exclude: Iterable[str] | None, root: bool
) -> list[int]:
    """The joints a fit limits (as :func:`.fit.fit_joints` chooses them)."""
    from .fit import root_joints

    sk = ms[0].skeleton
    roots = root_joints(ms)
    if joints is None:
        todo = [j for j in range(sk.num_joints) if sk.rotation_order(j) and (root or j not in roots)]
    else:
        todo = [sk.index(n) for n in joints]
    if exclude is not None:
        drop = {sk.index(n) for n in exclude}
        todo = [j for j in todo if j not in drop]
    return todo


def calibrated_options(
    motions: Motion | Iterable[Motion], options: FitOptions
) -> tuple[list[Motion], FitOptions, Calibration]:
    """The clips, ``options`` with the paddings calibrated for ``options.target_recall`` (its
    ``paddings`` still override them per joint) and the calibration."""
    from .fit import _as_motions, _reference_pose

    o = options
    if o.target_recall is None:
        raise LimitsError("calibrated_options needs a target_recall")
    ms = _as_motions(motions)
    todo = fitted_joints(ms, o.joints, o.exclude, o.root)
    cal = calibrate(ms, todo, _reference_pose(ms, o.reference), o.target_recall, o.groups, o.subsample, o.allocation)
    return ms, dataclasses.replace(o, paddings={**cal.paddings, **o.paddings}), cal

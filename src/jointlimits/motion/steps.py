"""Frame-to-frame steps of rotation channels: the input's local largest step as a speed bound, and
a walk that follows a target rotation without stepping faster than that bound (used where a
cleanup or limit step must not add a one-frame jump the input does not have)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from . import quat

__all__ = ["rotation_steps", "local_step_bound", "walk", "centred_walk"]

Array = NDArray[np.float64]


def rotation_steps(rotations: Array) -> Array:
    """Angle (radians) between frames t-1 and t of each channel ``[F, ..., 4]`` -> ``[F, ...]`` (row 0 zero)."""
    q = quat.normalize(np.asarray(rotations, np.float64))
    s = np.zeros(q.shape[:-1])
    if q.shape[0] > 1:
        s[1:] = quat.angle(q[1:], q[:-1])
    return s


def local_step_bound(rotations: Array, frame_time: float, seconds: float = 0.25, margin_degrees: float = 1.0) -> Array:
    """``[F, ...]``: the largest step of each channel within ``seconds`` of each frame, plus
    ``margin_degrees`` (radians)."""
    from scipy.ndimage import maximum_filter1d

    s = rotation_steps(rotations)
    w = max(1, int(round(seconds / frame_time)))
    return maximum_filter1d(s, size=2 * w + 1, axis=0, mode="nearest") + np.radians(margin_degrees)


def centred_walk(target: Array, bound: Array, keep: Callable[[Array, int], Array] | None = None) -> Array:
    """:func:`walk` without its lag: the midway of the walk forward and the walk backward in time
    (so a jump of the target is spread over the frames before and after it), walked forward once
    more so that the bound holds. Frames both walks leave on the target stay bit for bit."""
    tq = np.asarray(target, np.float64)
    F = tq.shape[0]
    fwd = walk(tq, bound, keep)
    if F < 3 or np.array_equal(fwd, tq):
        return fwd
    rb = np.empty_like(bound)
    rb[0] = bound[0]
    rb[1:] = bound[:0:-1]
    bwd = walk(tq[::-1], rb, None if keep is None else (lambda y, t: keep(y, F - 1 - t)))[::-1]
    same = np.all(fwd == tq, axis=-1) & np.all(bwd == tq, axis=-1)
    mid = quat.slerp(fwd, bwd, np.full(F, 0.5))
    if keep is not None:
        moved = np.nonzero(~same)[0]
        for t in moved:
            mid[t] = keep(mid[t : t + 1], int(t))[0]
    mid = np.where(np.sum(mid * tq, axis=-1, keepdims=True) < 0.0, -mid, mid)
    mid[same] = tq[same]
    return walk(mid, bound, keep)


def walk(
    target: Array,
    bound: Array,
    keep: Callable[[Array, int], Array] | None = None,
    start: int = 0,
) -> Array:
    """``target`` ``[F, 4]`` followed frame by frame, stepping at most ``bound[t]`` radians from the
    previous output; where the target is farther, the output moves toward it along the shortest arc
    by the bound (halved up to six times when ``keep`` moves the step beyond it, then it stays, or,
    where ``keep`` moves the staying rotation too, takes the smallest of the steps it tried).
    ``keep(q[1, 4], t)`` returns an allowed rotation (e.g. the projection into a limit). Frames
    where the output is back on the target are the target's own values, bit for bit."""
    tq = np.asarray(target, np.float64)
    F = tq.shape[0]
    out = tq.copy()
    if F < 2:
        return out
    step = rotation_steps(tq)
    over = np.nonzero(step[1:] > bound[1:])[0] + 1
    if over.size == 0:
        return out
    chasing = False
    t = max(int(over[0]), start, 1)
    while t < F:
        if not chasing:
            nxt = over[over >= t]
            if nxt.size == 0:
                break
            t = int(nxt[0])
        a = float(quat.angle(tq[t], out[t - 1]))
        if a <= bound[t]:
            if chasing:
                out[t] = tq[t]
                chasing = False
            t += 1
            continue
        chasing = True
        frac = bound[t] / a
        x = out[t - 1 : t]
        tried: list[tuple[float, Array]] = []
        for _ in range(6):
            y = quat.slerp(out[t - 1 : t], tq[t : t + 1], frac)
            if keep is not None:
                y = keep(y, t)
            d = float(quat.angle(y[0], out[t - 1]))
            if d <= bound[t]:
                x = y
                break
            tried.append((d, y))
            frac *= 0.5
        else:
            if keep is not None:
                # no step within the bound is allowed here: the smallest one that is
                x = keep(x, t)
                tried.append((float(quat.angle(x[0], out[t - 1])), x))
                x = min(tried, key=lambda c: c[0])[1]
        out[t] = -x[0] if np.dot(x[0], tq[t]) < 0.0 else x[0]
        t += 1
    return out


#: the walkers by name
WALKERS: dict[str, Callable[..., Array]] = {"forward": walk, "centred": centred_walk}

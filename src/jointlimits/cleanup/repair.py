"""Pop repair per joint: a cut changes only the channels (joint rotations, moving joint positions)
whose own motion jumps there; every other channel is returned bit for bit.

For each cut frame the channels to repair are those whose pop score
(:func:`jointlimits.cleanup.pops.pop_scores`) within one frame of the cut is at least ``join`` x
the cut's level (the threshold for detected cuts, the largest score there for given cuts). Per
channel, its cuts are repaired in one of two ways:

* a *burst*: the channel jumps at ``a`` and jumps back at ``b`` (the composition of the two jumps
  is small next to either: out and back), at most ``max_burst`` seconds later (the cut may be at
  either end). Frames ``a .. b-1``
  are refilled by a cubic Hermite curve in the tangent space of ``q[a-1]`` that meets ``q[a-1]`` and
  ``q[b]`` with their own velocities: no offset outlives the burst;
* anything else (a jump that stays): the jump (its velocity change against the mean of the two
  neighbouring velocities) is undone at the cut and the correction fades out over ``blend``
  seconds (smoothstep), so nothing changes farther than ``blend`` after a cut (with
  ``keep_planted``, a joint above a foot that stands at the cut holds the correction until the foot
  lifts, then fades it); a jump on the first
  or last two frames instead extrapolates those frames from the motion next to them.

A joint whose local rotation turns more than :data:`FLIP_DEGREES` between two frames (a flip: no
human joint does that at any frame rate) is repaired there too, whatever its pop score (a twist
flip of a bone with no child moves no joint position, so its score can stay low); the other
channels of that frame are left alone. Such frames are listed among the cuts.

With ``keep_planted``, where a repair changed a foot's leg chain (an ancestor's rotation or
position) over a run of frames and the heel or toe is planted in the input (low and slow,
:func:`jointlimits.cleanup.contacts.detect_contacts`) on the unchanged frames either side, the
ankle is put back on the line between its places on those two frames (and the foot's global
rotation on the arc between), by two-bone IK of the hip and knee.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..motion import quat
from ..motion.skeleton import Motion
from .pops import PopParams, pop_scores
from .tracking import DEFAULT_THRESHOLD, TrackingError

__all__ = ["PopRepair", "repair_pops", "cut_channels", "flip_frames", "FLIP_DEGREES"]

Array = NDArray[np.float64]

#: a channel takes part in a cut when its own score near the cut reaches this fraction of the cut's
#: level (1: the channel's own motion is implausible there, not only its neighbour's)
DEFAULT_JOIN = 1.0
#: seconds over which the correction of a jump that stays fades out after the cut
DEFAULT_BLEND = 0.25
#: longest out-and-back burst refilled by interpolation (seconds)
DEFAULT_MAX_BURST = 0.5
#: a local rotation step larger than this (degrees, between two frames) is a flip, repaired
#: whatever the pop score (at 30 fps it is 2,700 deg/s)
FLIP_DEGREES = 90.0


@dataclass
class PopRepair:
    """What :func:`repair_pops` did: the cuts, per cut the joints whose rotation (``rotations``) or
    position (``positions``) was repaired, how many channel bursts were refilled and how many
    channel jumps were blended out, and the feet kept planted (joint names)."""

    cuts: list[int] = field(default_factory=list)
    rotations: dict[int, list[str]] = field(default_factory=dict)
    positions: dict[int, list[str]] = field(default_factory=dict)
    bursts: int = 0
    jumps: int = 0
    planted: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "cuts": [int(c) for c in self.cuts],
            "rotations": {str(k): v for k, v in self.rotations.items()},
            "positions": {str(k): v for k, v in self.positions.items()},
            "bursts": self.bursts,
            "jumps": self.jumps,
            "planted": list(self.planted),
        }


def cut_channels(scores: Array, cuts: Sequence[int], threshold: float, join: float = DEFAULT_JOIN) -> list[list[int]]:
    """Per cut, the channels (columns of ``scores`` ``[F, C]``) whose largest score within one frame
    of it reaches ``join`` x ``min(threshold, largest score there)``."""
    F = scores.shape[0]
    out = []
    for c in cuts:
        win = scores[max(c - 1, 0) : min(c + 2, F)]
        peak = win.max(axis=0) if win.size else np.zeros(scores.shape[1])
        level = join * min(threshold, float(peak.max(initial=0.0)))
        out.append([int(j) for j in np.nonzero((peak >= level) & (peak > 0.0))[0]])
    return out


def flip_frames(rotations: Array, degrees: float = FLIP_DEGREES) -> list[tuple[int, int]]:
    """``(frame, joint)`` of every local rotation step over ``degrees`` (``rotations`` [F, J, 4])."""
    q = quat.normalize(np.asarray(rotations, np.float64))
    if q.shape[0] < 2:
        return []
    step = np.degrees(quat.angle(q[1:], q[:-1]))
    f, j = np.nonzero(step > degrees)
    return [(int(a) + 1, int(b)) for a, b in zip(f, j)]


def _hermite(n: int, x1: Array, v0: Array, v1: Array) -> Array:
    """Points ``s = 1 .. n-1`` of the cubic from 0 (velocity v0) to x1 (velocity v1) over n steps."""
    t = (np.arange(1, n) / n)[:, None]
    h10 = t**3 - 2 * t**2 + t
    h01 = -2 * t**3 + 3 * t**2
    h11 = t**3 - t**2
    return h10 * n * v0 + h01 * x1 + h11 * n * v1


def _steps(q: Array) -> Array:
    s = np.zeros(q.shape[0])
    s[1:] = quat.angle(q[1:], q[:-1])
    return s


def _rot_burst_end(q: Array, a: int, max_len: int, steps: Array) -> int | None:
    """The frame ``b`` where a burst of the rotation channel ``q`` [F, 4] starting at ``a`` comes
    back: the two jumps compose to little next to either (plus the motion of two frames)."""
    F = q.shape[0]
    if a < 1:
        return None
    ja = quat.mul_inv(q[a], q[a - 1])
    lo, hi = max(a - 4, 1), min(a + max_len + 4, F)
    speed = float(np.median(steps[lo:hi])) if hi > lo else 0.0
    big = steps[a]
    for b in range(a + 1, min(a + max_len, F - 1) + 1):
        if steps[b] < 0.5 * big:
            continue
        jb = quat.mul_inv(q[b], q[b - 1])
        resid = float(quat.angle(quat.mul(jb, ja)))
        if resid < 0.35 * min(big, steps[b]) + 2.0 * speed:
            return b
    return None


def _rot_burst_start(q: Array, b: int, max_len: int, steps: Array) -> int | None:
    """The frame ``a`` where a burst that comes back at ``b`` began (see :func:`_rot_burst_end`)."""
    if b < 3 or b >= q.shape[0] - 1:
        return None
    jb = quat.mul_inv(q[b], q[b - 1])
    lo, hi = max(b - max_len - 4, 1), min(b + 4, q.shape[0])
    speed = float(np.median(steps[lo:hi]))
    big = steps[b]
    for a in range(b - 1, max(b - max_len, 2) - 1, -1):
        if steps[a] < 0.5 * big:
            continue
        ja = quat.mul_inv(q[a], q[a - 1])
        if float(quat.angle(quat.mul(jb, ja))) < 0.35 * min(big, steps[a]) + 2.0 * speed:
            return a
    return None


def _pos_burst_start(p: Array, b: int, max_len: int, steps: Array) -> int | None:
    if b < 3 or b >= p.shape[0] - 1:
        return None
    jb = p[b] - p[b - 1]
    lo, hi = max(b - max_len - 4, 1), min(b + 4, p.shape[0])
    speed = float(np.median(steps[lo:hi]))
    big = steps[b]
    for a in range(b - 1, max(b - max_len, 2) - 1, -1):
        if steps[a] < 0.5 * big:
            continue
        if float(np.linalg.norm(p[a] - p[a - 1] + jb)) < 0.35 * min(big, steps[a]) + 2.0 * speed:
            return a
    return None


def _pos_burst_end(p: Array, a: int, max_len: int, steps: Array) -> int | None:
    F = p.shape[0]
    if a < 1:
        return None
    ja = p[a] - p[a - 1]
    lo, hi = max(a - 4, 1), min(a + max_len + 4, F)
    speed = float(np.median(steps[lo:hi])) if hi > lo else 0.0
    big = steps[a]
    for b in range(a + 1, min(a + max_len, F - 1) + 1):
        if steps[b] < 0.5 * big:
            continue
        jb = p[b] - p[b - 1]
        if float(np.linalg.norm(ja + jb)) < 0.35 * min(big, steps[b]) + 2.0 * speed:
            return b
    return None


def _sharpest(steps: Array, c: int, lo: int, hi: int) -> int:
    """The frame within one of ``c`` (in [lo, hi]) where the channel moves the most."""
    cand = [f for f in (c - 1, c, c + 1) if lo <= f <= hi]
    return max(cand, key=lambda f: steps[f])


def _fade(n: int) -> Array:
    """``1 -> 0`` over ``n`` frames (smoothstep), the weight of a jump's correction after it."""
    from .footlock import _smoothstep

    return 1.0 - _smoothstep(np.arange(1, n + 1) / (n + 1.0))


def _held_fade(a: int, F: int, blend: int, hold: NDArray[np.int64] | None) -> Array:
    """Weights of a jump's correction from frame ``a``: 1 up to ``hold[a]`` (the end of the
    planted stretch of a foot below the channel), then fading out over ``blend`` frames."""
    h = a if hold is None else int(max(hold[a], a))
    h = min(h, F - 1)
    n = min(blend, F - h - 1) if h > a else min(blend, F - a)
    if h > a:
        return np.concatenate([np.ones(h - a + 1), _fade(n)])
    return _fade(n)


def _log(q: Array) -> Array:
    return quat.to_scaled_angle_axis(quat.abs(q))


def _repair_rotation(
    q: Array, cuts: list[int], max_len: int, blend: int, hold: NDArray[np.int64] | None = None
) -> tuple[Array, int, int]:
    """One rotation channel ``[F, 4]``: bursts refilled, other jumps blended out over ``blend``
    frames after the cut (a jump on the first or last two frames: those frames extrapolated)."""
    F = q.shape[0]
    qn = quat.normalize(q)
    steps = _steps(qn)
    w = np.zeros((F, 3))
    w[1:] = _log(quat.mul_inv(qn[1:], qn[:-1]))
    out = q.copy()
    bursts = jumps = 0
    done_until = -1
    for c in sorted(set(cuts)):
        if c <= done_until:
            continue
        a = _sharpest(steps, c, 1, F - 1)
        b = _rot_burst_end(qn, a, max_len, steps) if 2 <= a < F - 1 else None
        if b is None:  # the cut may be where a burst comes back
            a0 = _rot_burst_start(qn, a, max_len, steps)
            if a0 is not None and a0 > done_until:
                a, b = a0, a
        if b is not None:
            q0 = qn[a - 1]
            x1 = _log(quat.mul_inv(qn[b], q0))
            v0 = w[a - 1] if a >= 2 else np.zeros(3)
            v1 = w[b + 1] if b + 1 < F else np.zeros(3)
            fill = quat.mul(quat.from_scaled_angle_axis(_hermite(b - a + 1, x1, v0, v1)), q0)
            lo, hi = a, b
            bursts += 1
        elif a <= 2 and a + 1 < F:  # the first frames are the odd ones: run the motion back
            k = np.arange(a, 0, -1)[:, None]
            fill = quat.mul(quat.from_scaled_angle_axis(-k * w[a + 1]), qn[a])
            lo, hi = 0, a
            jumps += 1
        elif a >= F - 2:  # the last frames: run the motion on
            k = np.arange(1, F - a + 1)[:, None]
            fill = quat.mul(quat.from_scaled_angle_axis(k * w[a - 1]), qn[a - 1])
            lo, hi = a, F
            jumps += 1
        else:  # a jump that stays: undo it at the cut and let the correction fade
            pred = 0.5 * (w[a - 1] + w[a + 1])
            jump = w[a] - pred
            weight = _held_fade(a, F, blend, hold)
            hi = a + weight.size
            fill = quat.mul(quat.from_scaled_angle_axis(-weight[:, None] * jump), qn[a:hi])
            lo = a
            jumps += 1
        # the input's own cover, frame by frame
        out[lo:hi] = np.where(np.sum(fill * q[lo:hi], axis=-1, keepdims=True) < 0.0, -fill, fill)
        done_until = max(hi, c)
    return out, bursts, jumps


def _repair_position(
    p: Array, cuts: list[int], max_len: int, blend: int, hold: NDArray[np.int64] | None = None
) -> tuple[Array, int, int]:
    """One position channel ``[F, 3]``, as :func:`_repair_rotation`."""
    F = p.shape[0]
    v = np.zeros(p.shape)
    v[1:] = np.diff(p, axis=0)
    steps = np.linalg.norm(v, axis=-1)
    out = p.copy()
    bursts = jumps = 0
    done_until = -1
    for c in sorted(set(cuts)):
        if c <= done_until:
            continue
        a = _sharpest(steps, c, 1, F - 1)
        b = _pos_burst_end(p, a, max_len, steps) if 2 <= a < F - 1 else None
        if b is None:
            a0 = _pos_burst_start(p, a, max_len, steps)
            if a0 is not None and a0 > done_until:
                a, b = a0, a
        if b is not None:
            v1 = v[b + 1] if b + 1 < F else np.zeros(3)
            out[a:b] = p[a - 1] + _hermite(b - a + 1, p[b] - p[a - 1], v[a - 1], v1)
            hi = b
            bursts += 1
        elif a <= 2 and a + 1 < F:
            out[:a] = p[a] - np.arange(a, 0, -1)[:, None] * v[a + 1]
            hi = a
            jumps += 1
        elif a >= F - 2:
            out[a:] = p[a - 1] + np.arange(1, F - a + 1)[:, None] * v[a - 1]
            hi = F
            jumps += 1
        else:
            jump = v[a] - 0.5 * (v[a - 1] + v[a + 1])
            weight = _held_fade(a, F, blend, hold)
            hi = a + weight.size
            out[a:hi] = p[a:hi] - weight[:, None] * jump
            jumps += 1
        done_until = max(hi, c)
    return out, bursts, jumps


def repair_pops(
    motion: Motion,
    cuts: Sequence[int] | None = None,
    detect: bool = True,
    threshold: float = DEFAULT_THRESHOLD,
    *,
    blend: float = DEFAULT_BLEND,
    params: PopParams | None = None,
    join: float = DEFAULT_JOIN,
    max_burst: float = DEFAULT_MAX_BURST,
    keep_planted: bool = True,
) -> tuple[Motion, PopRepair]:
    """Repair pops joint by joint (see the module docstring) -> (new motion, :class:`PopRepair`).

    ``cuts``: frames where a pop enters or leaves, added to the detected ones (``detect``: pop
    score above ``threshold``, a scale factor of the plausible bound). Channels not taking part in
    any cut are returned bit for bit (and so are feet not planted on a changed frame)."""
    if not isinstance(motion, Motion):
        raise TrackingError(f"repair_pops needs a Motion, got {type(motion).__name__}")
    if not (np.isfinite(threshold) and threshold > 0):
        raise TrackingError(f"threshold must be > 0, got {threshold!r}")
    motion.check_finite()
    F, J = motion.num_frames, motion.num_joints
    given = sorted({int(c) for c in (cuts or [])})
    if given and (given[0] < 0 or given[-1] >= F):
        raise TrackingError(f"cut frames must be in [0, {F - 1}], got {given}")
    rep = PopRepair()
    if F < 3:
        rep.cuts = given
        return motion.copy(), rep
    rs, ps = pop_scores(motion, params)
    found = np.nonzero(np.maximum(rs.max(axis=1), ps.max(axis=1)) > threshold)[0].tolist() if detect else []
    all_cuts = sorted(set(given) | {int(c) for c in found})
    flips = flip_frames(motion.rotations) if detect else []
    rep.cuts = sorted(set(all_cuts) | {f for f, _ in flips})
    if not rep.cuts:
        return motion.copy(), rep
    both = np.concatenate([rs, ps], axis=1)
    per_cut = cut_channels(both, all_cuts, threshold, join)
    rot_cuts: dict[int, list[int]] = {}
    pos_cuts: dict[int, list[int]] = {}
    names = motion.skeleton.names
    for c, chans in zip(all_cuts, per_cut):
        for ch in chans:
            (rot_cuts if ch < J else pos_cuts).setdefault(ch % J, []).append(c)
        rj = [names[ch] for ch in chans if ch < J]
        pj = [names[ch - J] for ch in chans if ch >= J]
        if rj:
            rep.rotations[c] = rj
        if pj:
            rep.positions[c] = pj
    for f, j in flips:  # a flip is repaired at its own joint, whatever its score
        if f not in rot_cuts.get(j, []):
            rot_cuts.setdefault(j, []).append(f)
            rep.rotations.setdefault(f, []).append(names[j])
    dt = motion.frame_time
    max_len = max(1, int(round(max_burst / dt)))
    blend_n = max(2, int(round(blend / dt)))
    rot = motion.rotations.copy()
    pos = motion.positions.copy()
    holds = _planted_holds(motion, set(rot_cuts) | set(pos_cuts)) if keep_planted else {}
    for j, cs in rot_cuts.items():
        rot[:, j], nb, ns = _repair_rotation(motion.rotations[:, j], cs, max_len, blend_n, holds.get(j))
        rep.bursts += nb
        rep.jumps += ns
    for j, cs in pos_cuts.items():
        pos[:, j], nb, ns = _repair_position(motion.positions[:, j], cs, max_len, blend_n, holds.get(j))
        rep.bursts += nb
        rep.jumps += ns
    out = dataclasses.replace(motion, rotations=rot, positions=pos)
    if keep_planted:
        out, rep.planted = _keep_planted(motion, out)
    return out, rep


def _planted_holds(motion: Motion, joints: set[int]) -> dict[int, NDArray[np.int64]]:
    """Per joint above a foot (or the foot itself): ``hold[t]``, the last frame of the planted
    stretch (heel or toe, :func:`jointlimits.cleanup.contacts.detect_contacts`) of a foot below it
    that holds ``t`` (``t`` itself where none does): a jump's correction is held that long, so
    the foot does not slide while it stands."""
    from .contacts import detect_contacts, find_feet, find_toes

    sk = motion.skeleton
    feet = find_feet(sk)
    if not feet or not joints:
        return {}
    F = motion.num_frames
    down = np.asarray(detect_contacts(motion, feet), bool)
    toes = find_toes(sk, feet)
    tpl = [t for t in toes if t is not None]
    if tpl:
        tdown = np.asarray(detect_contacts(motion, tpl), bool)
        for i, t in enumerate(toes):
            if t is not None:
                down[:, i] |= tdown[:, tpl.index(t)]
    frames = np.arange(F)
    ends = []
    for i in range(len(feet)):
        e = frames.copy()
        run_end = -1
        for t in range(F - 1, -1, -1):
            if down[t, i]:
                run_end = t if run_end < 0 or not down[t + 1, i] else run_end
                e[t] = run_end
            else:
                run_end = -1
        ends.append(e)
    out: dict[int, NDArray[np.int64]] = {}
    for i, f in enumerate(feet):
        j = f
        while j >= 0:
            if j in joints:
                out[j] = np.maximum(out.get(j, frames), ends[i])
            j = int(sk.parents[j])
    return out


def _keep_planted(before: Motion, after: Motion, tolerance_cm: float = 0.5) -> tuple[Motion, list[str]]:
    """Feet planted in ``before`` on both sides of a run of frames where ``after`` changed their leg
    chain: within the run the ankle is put back on the line between its places on the unchanged
    frames either side (a held foot stays held; the input's own, possibly popped, foot places are
    not used), and the foot's global rotation likewise, by two-bone IK of the hip and knee."""
    from ..motion.skeleton import forward_kinematics
    from ..motion.units import guess_units
    from .contacts import detect_contacts, find_feet, find_toes

    sk = before.skeleton
    feet = find_feet(sk)
    if not feet:
        return after, []
    changed = np.any(after.rotations != before.rotations, axis=-1) | np.any(
        after.positions != before.positions, axis=-1
    )
    if not changed.any():
        return after, []
    toes = find_toes(sk, feet)
    down = np.asarray(detect_contacts(before, feet), bool)
    tpl = [t for t in toes if t is not None]
    if tpl:
        tdown = np.asarray(detect_contacts(before, tpl), bool)
        for i, t in enumerate(toes):
            if t is not None:
                down[:, i] |= tdown[:, tpl.index(t)]
    F = before.num_frames
    tol = tolerance_cm / 100.0 / guess_units(before).metres_per_unit
    g_rot, g_pos = forward_kinematics(after)
    targets = []
    for i, f in enumerate(feet):
        chain = []
        j = f
        while j >= 0:
            chain.append(j)
            j = int(sk.parents[j])
        moved = changed[:, chain].any(axis=1).astype(np.int8)
        edges = np.diff(np.concatenate([[0], moved, [0]]))
        pos_t = np.full((F, 3), np.nan)
        rot_t = np.zeros((F, 4))
        for a, b in zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]):
            if a == 0 or b >= F or not (down[a - 1, i] and down[b, i]):
                continue
            s_ = ((np.arange(a, b) - (a - 1)) / (b - (a - 1)))[:, None]
            line = g_pos[a - 1, f] + s_ * (g_pos[b, f] - g_pos[a - 1, f])
            if np.linalg.norm(g_pos[a:b, f] - line, axis=-1).max() <= tol:
                continue
            pos_t[a:b] = line
            rot_t[a:b] = quat.slerp(
                np.broadcast_to(g_rot[a - 1, f], (b - a, 4)), np.broadcast_to(g_rot[b, f], (b - a, 4)), s_[:, 0]
            )
        if np.isfinite(pos_t[:, 0]).any():
            targets.append((f, pos_t, rot_t))
    if not targets:
        return after, []
    return _pin_feet(after, targets), [sk.names[f] for f, _, _ in targets]


def _pin_feet(after: Motion, targets: list) -> Motion:
    """Hip, knee and foot rotations of each listed leg so that the ankle reaches its target place
    and the foot its target global rotation, on the frames that have one."""
    from ..ik.two_bone import two_bone
    from ..motion.skeleton import forward_kinematics

    sk = after.skeleton
    rot = after.rotations.copy()
    for f, pos_t, rot_t in targets:
        frames = np.nonzero(np.isfinite(pos_t[:, 0]))[0]
        knee = int(sk.parents[f])
        hip = int(sk.parents[knee])
        par = int(sk.parents[hip])
        g_rot1, g_pos1 = forward_kinematics(dataclasses.replace(after, rotations=rot))
        parent_g = g_rot1[frames, par] if par >= 0 else quat.identity((len(frames),))
        sol = two_bone(
            g_pos1[frames, hip],
            g_pos1[frames, knee],
            g_pos1[frames, f],
            pos_t[frames],
            parent_g,
            rot[frames, hip],
            rot[frames, knee],
            g_pos1[frames, knee],
        )
        hip_l, knee_l = sol.root_local, sol.mid_local
        knee_g = quat.mul(quat.mul(parent_g, hip_l), knee_l)
        foot_l = quat.inv_mul(knee_g, rot_t[frames])
        for j, val in ((hip, hip_l), (knee, knee_l), (f, foot_l)):
            val = np.where(np.sum(val * rot[frames, j], axis=-1, keepdims=True) < 0.0, -val, val)
            rot[frames, j] = val
    return dataclasses.replace(after, rotations=rot)

"""Pop detection from a clip's own motion: which frames hold a change the clip itself makes implausible.

A pop is a short burst of change that no neighbouring frame shares: a joint (or the root) jumps
away and back within a few frames, or jumps and stays. In the per-frame velocity of a channel
(``w[t] = log(q[t] q[t-1]^-1)`` for rotations, ``p[t] - p[t-1]`` for moving positions) the frames
where it enters and leaves are *spikes*: ``w[t]`` differs from **both** ``w[t-1]`` and
``w[t+1]``. Real motion changes velocity too, but a fast swing ramps up and down over several
frames and an impact stops on one side only, so the two-sided change

    spike[t] = min(|w[t] - w[t-1]|, |w[t+1] - w[t]|)

stays at the size of the channel's acceleration, while a pop of angle ``a`` gives ``spike ~ a``
(also for one-frame pops, whose velocity goes out and straight back).

What is plausible is measured per channel (each joint's rotation, each moving joint's position)
on the clip itself, robustly:

* ``local[t]``: median of ``|w[t] - w[t-1]|`` over a window of ``window`` seconds around ``t`` (how
  hard the joint is accelerating right now; a pop touches only a few frames of the window);
* ``extreme``: the joint's own rare-event level, the ``ceil(rate * F)``-th largest spike of the clip
  (at least the ``min_count``-th): a joint that does something as abrupt several times per second
  of clip (toes that snap down, a thumb that flips every few frames) does it as part of its motion;
* ``floor``: the smallest change reported at all (degrees for rotations, centimetres for positions,
  converted with :func:`jointlimits.motion.units.guess_units`).

A frame is a cut when ``spike > threshold * max(floor, k_local * local, k_extreme * extreme)`` on any
channel. :func:`pop_scores` returns ``spike / bound`` per frame and channel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..motion import quat
from ..motion.skeleton import Motion

__all__ = [
    "PopParams",
    "channel_velocities",
    "two_sided_spikes",
    "one_frame_outliers",
    "paired_spikes",
    "ground_contacts",
    "pop_scores",
    "detect_pops",
]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class PopParams:
    """Settings of the pop detector (see the module docstring); the defaults were tuned on LAFAN1,
    Bandai Namco and CMU MotionBuilder clips and checked on the other conventions."""

    #: seconds of the window whose median acceleration is the channel's current activity
    window: float = 0.5
    #: a pop's spike must exceed this many times the window's median acceleration
    k_local: float = 11.0
    #: ... and this many times the channel's own rare-event level
    k_extreme: float = 1.3
    #: rare-event level: the spike exceeded on this fraction of frames ...
    rate: float = 0.005
    #: ... but at least by this many frames of the clip
    min_count: int = 4
    #: smallest rotation change reported (degrees)
    floor_degrees: float = 16.0
    #: smallest position change reported (centimetres)
    floor_cm: float = 4.0
    #: feet and toes touching the ground (see :func:`ground_contacts`) may turn this many times
    #: more abruptly (heel strike, foot slap, toe-off)
    k_contact: float = 3.0
    #: a foot joint is on the ground within this fraction of body height of its lowest level
    contact_height: float = 0.06
    #: a spike answered by an opposite spike of about the same size within ``pair_frames`` frames
    #: (a burst that jumps out and back) needs only this fraction of the bound
    k_pair: float = 0.7
    pair_frames: int = 10
    #: out and back match when |u[t] + u[t']| < pair_tolerance * min(|u[t]|, |u[t']|)
    pair_tolerance: float = 0.2
    #: a rotation spike that other joints share on the same frame (two or more channels above
    #: ``shared_level`` of their bounds) is a movement of the body, not a pop of one joint: it
    #: needs this many times the bound
    k_shared: float = 1.6
    shared_level: float = 0.9
    #: within this many seconds of the clip's first or last frame (where the window and the
    #: two-sided change see one side only) a spike needs this many times the bound
    edge_seconds: float = 0.1
    k_edge: float = 2.0


def channel_velocities(motion: Motion) -> tuple[Array, Array, NDArray[np.int64]]:
    """Per-frame velocities: rotations ``[F, J, 3]`` (scaled angle axis per frame, shortest arc, so
    ``q`` and ``-q`` alike), positions ``[F, P, 3]`` of the ``P`` joints whose position changes
    (metres per frame), and those joints' indices. Row 0 repeats row 1."""
    from ..motion.units import guess_units

    q = quat.normalize(motion.rotations)
    F = q.shape[0]
    w = np.zeros(q.shape[:-1] + (3,))
    if F > 1:
        w[1:] = quat.to_scaled_angle_axis(quat.abs(quat.mul_inv(q[1:], q[:-1])))
        w[0] = w[1]
    p = motion.positions
    moving = np.nonzero(np.any(p != p[:1], axis=(0, 2)))[0]
    v = np.zeros((F, moving.size, 3))
    if F > 1 and moving.size:
        mpu = guess_units(motion).metres_per_unit
        v[1:] = (p[1:, moving] - p[:-1, moving]) * mpu
        v[0] = v[1]
    return w, v, moving


def two_sided_spikes(vel: Array) -> tuple[Array, Array]:
    """``spike[t] = min(|v[t]-v[t-1]|, |v[t+1]-v[t]|)`` and ``acc[t] = |v[t]-v[t-1]|`` for velocities
    ``[F, C, 3]`` -> two ``[F, C]`` arrays. Frame 0 has no velocity of its own (0); frame 1 and the
    last frame use their one known side."""
    F = vel.shape[0]
    acc = np.zeros(vel.shape[:2])
    spike = np.zeros(vel.shape[:2])
    if F < 3:
        return spike, acc
    acc[2:] = np.linalg.norm(vel[2:] - vel[1:-1], axis=-1)
    spike[2:-1] = np.minimum(acc[2:-1], acc[3:])
    spike[1] = acc[2]
    spike[-1] = acc[-1]
    return spike, acc


def ground_contacts(motion: Motion, height: float = 0.06, margin: int = 2) -> NDArray[np.bool_]:
    """``bool[F, J]``: end effectors that may touch the ground, True on the frames they are low.

    Feet and toes (joints of the ``foot`` and ``toe`` roles, :data:`jointlimits.motion.naming.ROLES`)
    are low within ``height`` x body height of their own lowest level (2nd percentile); hands and
    fingers within twice that of the floor (the lowest foot level), so a hand is on the ground only
    when it really comes down. Widened by ``margin`` frames; False for every other joint. Heights
    only (no speed test), by :func:`jointlimits.cleanup.contacts.detect_contacts`."""
    from ..motion.naming import find_role
    from .contacts import detect_contacts

    F, J = motion.num_frames, motion.num_joints
    out = np.zeros((F, J), bool)
    names = motion.skeleton.names
    feet = find_role(names, "foot", "toe")
    hands = find_role(names, "hand", "finger", exclude=("foot", "toe"))
    if not feet or F == 0:
        return out
    out[:, feet], level = detect_contacts(
        motion, feet, height, None, 1, height_unit="body", margin=margin, legs=False, validate=False, return_ground=True
    )
    if hands:
        out[:, hands] = detect_contacts(
            motion,
            hands,
            2.0 * height,
            None,
            1,
            height_unit="body",
            margin=margin,
            legs=False,
            validate=False,
            ground=level.min(),
        )
    return out


def one_frame_outliers(rotations: Array) -> Array:
    """``angle(q[t], slerp(q[t-1], q[t+1], 1/2))`` ``[F, J]`` (radians, 0 on the first and last frame):
    how far a rotation lies from the midway of its neighbours. It sees a one-frame 180-degree flip,
    whose velocity out and back is the same rotation (so the velocity spike misses it)."""
    q = quat.normalize(np.asarray(rotations, np.float64))
    out = np.zeros(q.shape[:-1])
    if q.shape[0] < 3:
        return out
    a, b = q[:-2], q[2:]
    b = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0.0, -b, b)
    mid = quat.normalize(a + b)
    out[1:-1] = quat.angle(q[1:-1], mid)
    return out


def paired_spikes(vel: Array, frames: int = 10, tolerance: float = 0.35, minimum: float = 0.0) -> NDArray[np.bool_]:
    """``bool[F, C]``: frames whose velocity spike ``u[t] = v[t] - (v[t-1] + v[t+1]) / 2`` (at least
    ``minimum`` long) is undone by an opposite spike ``u[t'] ~ -u[t]`` within ``frames`` frames: the
    way in and the way out of a burst."""
    F = vel.shape[0]
    out = np.zeros(vel.shape[:2], bool)
    if F < 4:
        return out
    u = np.zeros(vel.shape)
    u[1:-1] = vel[1:-1] - 0.5 * (vel[:-2] + vel[2:])
    n = np.linalg.norm(u, axis=-1)
    for lag in range(1, min(frames, F - 1) + 1):
        m = np.minimum(n[:-lag], n[lag:])
        ok = (np.linalg.norm(u[:-lag] + u[lag:], axis=-1) < tolerance * m) & (m > minimum)
        out[:-lag] |= ok
        out[lag:] |= ok
    return out


def _bounds(spike: Array, acc: Array, win: int, floor: float, p: PopParams) -> Array:
    from scipy.ndimage import median_filter

    F = spike.shape[0]
    local = median_filter(acc, size=(win, 1), mode="nearest")
    k = int(min(F, max(p.min_count, np.ceil(p.rate * F))))
    extreme = -np.partition(-spike, k - 1, axis=0)[k - 1] if F else np.zeros(spike.shape[1])
    return np.maximum(np.maximum(floor, p.k_local * local), p.k_extreme * extreme[None, :])


def pop_scores(motion: Motion, params: PopParams | None = None) -> tuple[Array, Array]:
    """Pop scores ``spike / plausible bound``: rotations ``[F, J]`` and positions ``[F, J]`` (zero
    for joints whose position never changes). A score above 1 is a pop."""
    p = params or PopParams()
    F, J = motion.num_frames, motion.num_joints
    rs, ps = np.zeros((F, J)), np.zeros((F, J))
    if F < 3:
        return rs, ps
    win = max(3, int(round(p.window / motion.frame_time)) | 1)
    w, v, moving = channel_velocities(motion)
    s, a = two_sided_spikes(w)
    s = np.maximum(s, 0.5 * one_frame_outliers(motion.rotations))
    floor = np.radians(p.floor_degrees)
    bound = _bounds(s, a, win, floor, p)
    if p.k_contact != 1.0:
        c = ground_contacts(motion, p.contact_height)
        bound = np.where(c, np.maximum(floor, p.k_contact * _bounds(s, a, win, 0.0, p)), bound)
    if p.k_pair != 1.0:
        bound = np.where(
            paired_spikes(w, p.pair_frames, p.pair_tolerance, floor), np.maximum(floor, p.k_pair * bound), bound
        )
    rs = s / bound
    if p.k_shared != 1.0:
        shared = np.sum(rs >= p.shared_level, axis=1) >= 2
        rs[shared] /= p.k_shared
    if p.k_edge != 1.0:
        e = int(round(p.edge_seconds / motion.frame_time))
        if e > 0:
            rs[: e + 1] /= p.k_edge
            rs[-e:] /= p.k_edge
    # (positions are scored whatever k_edge is)
    s, a = two_sided_spikes(v)
    floor = p.floor_cm / 100.0
    bound = _bounds(s, a, win, floor, p)
    if p.k_pair != 1.0:
        bound = np.where(
            paired_spikes(v, p.pair_frames, p.pair_tolerance, floor), np.maximum(floor, p.k_pair * bound), bound
        )
    ps[:, moving] = s / bound
    return rs, ps


def detect_pops(motion: Motion, threshold: float = 1.0, params: PopParams | None = None) -> NDArray[np.int64]:
    """Frames where a pop enters or leaves (the velocity ``w[t]`` is implausible): every frame with a
    score above ``threshold`` on any channel, ascending."""
    rs, ps = pop_scores(motion, params)
    score = np.maximum(rs.max(axis=1, initial=0.0), ps.max(axis=1, initial=0.0))
    return np.nonzero(score > threshold)[0].astype(np.int64)

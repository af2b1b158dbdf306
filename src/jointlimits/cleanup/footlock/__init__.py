"""Foot locking: find the frames where a heel or a toe is planted and pin it there with two-bone leg IK.

* :func:`detect_contacts` (from :mod:`.contacts`, the one contact detector): a foot is planted while
  its joint is low (within ``height_threshold`` metres of the clip's ground level for that joint, a
  low percentile of its heights) and slow (horizontal speed at most ``velocity_threshold`` m/s);
  runs shorter than ``min_frames`` are dropped and gaps shorter than it are filled. Thresholds are
  in metres and converted with :func:`jointlimits.motion.units.guess_units`.
  The same test on the toe (ball) joint gives the toe contacts (:func:`find_toes`).
* :func:`measure_skating`: horizontal foot displacement between consecutive contact frames.
* :func:`foot_skating`: the *independent* measure: horizontal motion (cm) of the ankle and toe
  joints on frames where that joint is low and slow, with thresholds taken from the clip's body
  height (not from the contact detector); see its docstring.
* :func:`footlock`: per foot and frame the planted point is the heel (ankle) while the ankle is in
  contact, else the toe while the toe is in contact. Each run of one planted point keeps that point
  where it was when the run began (where the previous run had put it, so switching from heel to
  toe does not jump): the whole foot is moved by ``o = lock - point`` (horizontally), so in a toe
  run the toe stays put while the animated foot lifts its heel about it. The offset is ramped in
  before and out after each planted stretch over ``blend_frames`` (smoothstep); the legs (UpLeg,
  Leg, Foot) are solved for all frames in one batch with :func:`~jointlimits.ik.two_bone` (the
  knee on its animated bend side), projected into the joint limits, refined with limited CCD where the projection
  pulled the ankle off its target; the foot keeps its global orientation, turned about the reached
  ankle where the toe is planted so that the toe stays on its lock (then, with limits, its local
  rotation is projected into the ankle's limit). Targets out of the leg's reach rise toward the hip
  (the heel lifts) instead of sliding; the knee keeps its animated bend side. A run that follows
  another run keeps its lock (no re-lock at a heel/toe switch); a 1-2 frame detection gap is
  bridged only where the foot does not step; a released lock fades at a bounded acceleration and a
  gap too short for it carries the rest into the next contact.

The package: :mod:`._measure` (the skating measures), :mod:`._offsets` (where each planted foot
goes), :mod:`._legs` (the leg solve's helpers and the step bound) and :mod:`._lock` (:func:`footlock`,
its settings and report).
"""

from __future__ import annotations

# besides the public names (__all__), the tuning constants and the helpers that the tests and
# cleanup.repair import from here (``X as X``: re-exported)
from ..contacts import (
    DEFAULT_HEIGHT_THRESHOLD,
    DEFAULT_MIN_FRAMES,
    DEFAULT_VELOCITY_THRESHOLD,
    contact_segments,
    detect_contacts,
    find_feet,
    find_toes,
)
from ._legs import SOFT_REACH as SOFT_REACH
from ._legs import STEP_MARGIN_DEGREES
from ._legs import STEP_SECONDS as STEP_SECONDS
from ._legs import STEP_WALK as STEP_WALK
from ._legs import _hold_toe as _hold_toe
from ._legs import _soft_reach as _soft_reach
from ._lock import DEFAULT_MARGIN as DEFAULT_MARGIN
from ._lock import FootlockReport, FootlockSettings, footlock
from ._measure import SKATE_LOW, SKATE_SLOW, foot_drift, foot_skating, measure_skating
from ._offsets import DEFAULT_BLEND_FRAMES
from ._offsets import HIDE_IN_STEP as HIDE_IN_STEP
from ._offsets import MAX_FADE_DEGREES as MAX_FADE_DEGREES
from ._offsets import MAX_OFFSET as MAX_OFFSET
from ._offsets import MAX_TURN_DEGREES as MAX_TURN_DEGREES
from ._offsets import RELEASE_ACCELERATION as RELEASE_ACCELERATION
from ._offsets import _planted_offsets as _planted_offsets
from ._offsets import _smoothstep as _smoothstep

__all__ = [
    "find_feet",
    "find_toes",
    "detect_contacts",
    "contact_segments",
    "measure_skating",
    "foot_skating",
    "foot_drift",
    "footlock",
    "FootlockSettings",
    "FootlockReport",
    "SKATE_LOW",
    "SKATE_SLOW",
    "DEFAULT_HEIGHT_THRESHOLD",
    "DEFAULT_VELOCITY_THRESHOLD",
    "DEFAULT_MIN_FRAMES",
    "DEFAULT_BLEND_FRAMES",
    "STEP_MARGIN_DEGREES",
]

"""Limits for a corpus: one limits file, or the folder ``fit -o DIR`` writes (one file per skeleton
group); each clip takes the file fitted on its skeleton (joint names, parents and rest pose). A
human model (``"human"``, the shipped one, or a file ``jointlimits human build`` wrote) makes
limits for every clip's own skeleton instead (:meth:`~jointlimits.limits.human.HumanModel.limits_for_clip`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import JointLimitsError

__all__ = ["load_limits", "pick_limits", "NO_LIMITS", "NO_HUMAN", "human_unmapped"]

#: the reason a clip is left without limits
NO_LIMITS = "no limits file for this skeleton"
#: the reason a clip is left without limits by a human model: its skeleton shows no humanoid body
NO_HUMAN = "the human model cannot map this skeleton"


def load_limits(source: Any) -> list[Any] | None:
    """``None``; a :class:`~jointlimits.limits.model.JointLimits` or a list of them; a limits file;
    or a folder of them (every ``*.json`` in it, as ``fit -o DIR`` writes); or a human model
    (:class:`~jointlimits.limits.human.HumanModel`, ``"human"`` or a model file) -> a list (or None)."""
    from ..limits.human import HumanModel, is_human_model, load_model
    from ..limits.model import JointLimits

    if source is None:
        return None
    if isinstance(source, (JointLimits, HumanModel)):
        return [source]
    if isinstance(source, (list, tuple)):
        return list(source)
    if is_human_model(source):
        return [load_model(source)]
    path = Path(os.fspath(source))
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise JointLimitsError(f"{path}: a folder with no limits file (*.json) in it")
        out = []
        for f in files:
            try:
                out.append(JointLimits.load(f))
            except JointLimitsError as e:
                raise JointLimitsError(f"{f}: {e}") from None
        return out
    return [JointLimits.load(path)]


def pick_limits(limits: list[Any] | None, skeleton: Any, motion: Any = None) -> tuple[Any, str]:
    """The limits of ``limits`` fitted on ``skeleton`` and ``""``, or ``(None, reason)``. A human
    model among them gives limits on ``skeleton`` for ``motion`` (the clip, whose mean pose sets
    the twist zeros; None: the rest pose), or ``(None, reason)`` starting with :data:`NO_HUMAN`."""
    from ..limits.human import HumanModel

    if not limits:
        return None, ""
    why = ""
    for lim in limits:
        if isinstance(lim, HumanModel):
            try:
                return (lim.limits_for_clip(motion) if motion is not None else lim.limits(skeleton)), ""
            except JointLimitsError as e:
                return None, f"{NO_HUMAN} ({e})"
        if lim.skeleton.fingerprint() != skeleton.fingerprint():
            continue
        try:
            lim.check_skeleton(skeleton)
        except JointLimitsError as e:
            why = str(e)
            continue
        return lim, ""
    return None, f"{NO_LIMITS}" + (f" ({why})" if why else "")


def human_unmapped(limits: list[Any] | None, reasons: list[str], mapped: int) -> str | None:
    """With a human model as ``limits``: the first reason of ``reasons`` (file: reason, one per
    clip left without limits) when no clip at all could be mapped (``mapped`` is 0), else None.
    The corpus commands refuse such a run: the model was given for nothing."""
    from ..limits.human import HumanModel

    if not limits or not any(isinstance(lim, HumanModel) for lim in limits) or mapped:
        return None
    return next((r for r in reasons if NO_HUMAN in r), None)

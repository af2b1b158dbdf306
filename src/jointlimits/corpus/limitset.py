"""Limits for a corpus: one limits file, or the folder ``fit -o DIR`` writes (one file per skeleton
group); each clip takes the file fitted on its skeleton (joint names, parents and rest pose)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import JointLimitsError

__all__ = ["load_limits", "pick_limits", "NO_LIMITS"]

#: the reason a clip is left without limits
NO_LIMITS = "no limits file for this skeleton"


def load_limits(source: Any) -> list[Any] | None:
    """``None``; a :class:`~jointlimits.limits.model.JointLimits` or a list of them; a limits file;
    or a folder of them (every ``*.json`` in it, as ``fit -o DIR`` writes) -> a list (or None)."""
    from ..limits.model import JointLimits

    if source is None:
        return None
    if isinstance(source, JointLimits):
        return [source]
    if isinstance(source, (list, tuple)):
        return list(source)
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


def pick_limits(limits: list[Any] | None, skeleton: Any) -> tuple[Any, str]:
    """The limits of ``limits`` fitted on ``skeleton`` and ``""``, or ``(None, reason)``."""
    if not limits:
        return None, ""
    why = ""
    for lim in limits:
        if lim.skeleton.fingerprint() != skeleton.fingerprint():
            continue
        try:
            lim.check_skeleton(skeleton)
        except JointLimitsError as e:
            why = str(e)
            continue
        return lim, ""
    return None, f"{NO_LIMITS}" + (f" ({why})" if why else "")

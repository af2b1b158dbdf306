"""Cleaning a corpus: the cleanup chain on every clip (pops repaired joint by joint, as
``jointlimits filter --detect``, limits applied, feet locked), written with the same folder
structure under an output folder, with a scan of every clip before and after beside them."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import JointLimitsError
from .engine import Engine
from .scan import COLUMNS, measure, write_table
from .sources import Clip, expand, load_clip, reason

__all__ = ["CleanSettings", "CleanResult", "clean", "SCAN_BEFORE", "SCAN_AFTER"]

SCAN_BEFORE = "scan-before.parquet"
SCAN_AFTER = "scan-after.parquet"


@dataclass(frozen=True)
class CleanSettings:
    """The steps of the chain, in this order: ``detect`` pops and repair them joint by joint
    (:func:`jointlimits.cleanup.repair.repair_pops`, the repair ``filter --detect`` runs, pop score
    above ``threshold``), apply ``limits`` (a JointLimits or a limits file; ``smooth`` removes the jumps
    where a projection switches sides), ``footlock`` the feet."""

    detect: bool = False
    threshold: float | None = None
    limits: Any = None
    smooth: bool = False
    footlock: bool = False

    def any(self) -> bool:
        return self.detect or self.limits is not None or self.footlock


def clean_motion(m: Any, s: CleanSettings, limits: Any = None) -> Any:
    """One clip through the chain."""
    if s.detect:
        from ..cleanup.repair import repair_pops
        from ..cleanup.tracking import DEFAULT_THRESHOLD

        m, _ = repair_pops(m, None, True, DEFAULT_THRESHOLD if s.threshold is None else s.threshold)
    if limits is not None:
        smooth = None
        if s.smooth:
            from ..cleanup.smoothing import smooth_switches

            smooth = smooth_switches
        m = limits.apply(m, smooth=smooth)
    if s.footlock:
        from ..cleanup.footlock import footlock

        m, _ = footlock(m, limits)
    return m


def _clean_task(item: tuple[Clip, str], s: CleanSettings, limits: Any) -> tuple[dict, dict]:
    clip, target = item
    from .. import io as motion_io
    from .scan import _scan_task

    before = _scan_task(clip, limits)
    before.pop("_skeleton", None)
    before.pop("_rest", None)
    after: dict[str, Any] = {"file": target, "format": clip.format}
    if before.get("error"):
        after["error"] = before["error"]
        return before, after
    try:
        m = load_clip(clip)
        out = clean_motion(m, s, limits)
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        motion_io.save(target, out)
        after["convention"] = before.get("convention")
        after.update(measure(out, limits))
    except Exception as e:
        after["error"] = reason(e)
    return before, after


@dataclass
class CleanResult:
    """Per clip the scan rows before and after, the output paths, the failures."""

    before: list[dict[str, Any]] = field(default_factory=list)
    after: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)


def clean(
    sources: Iterable[str | os.PathLike],
    out: str | os.PathLike,
    client: Any = None,
    *,
    settings: CleanSettings | None = None,
    force: bool = False,
    strict: bool = False,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool | None = None,
) -> CleanResult:
    """Clean every clip of ``sources`` into ``out`` (each at its path relative to its source),
    and write :data:`SCAN_BEFORE` and :data:`SCAN_AFTER` there. Refuses (JointLimitsError) when an
    output exists, unless ``force``, before anything is written."""
    from ..limits.model import JointLimits

    s = settings or CleanSettings()
    if not s.any():
        raise JointLimitsError("nothing to clean: give limits, detect or footlock")
    limits = JointLimits.load(s.limits) if isinstance(s.limits, (str, os.PathLike)) else s.limits
    clips, bad = expand(sources, strict=strict)
    if not clips:
        raise JointLimitsError("no clips: " + "; ".join(f"{s}: {w}" for s, w in bad))
    root = Path(out)
    targets = [str(root / c.rel) for c in clips]
    if len(set(targets)) != len(targets):
        raise JointLimitsError("two clips would be written to the same path under the output folder")
    srcs = {os.path.realpath(c.path) for c in clips}
    for t in targets + [str(root / SCAN_BEFORE), str(root / SCAN_AFTER)]:
        if os.path.realpath(t) in srcs:
            raise JointLimitsError(f"{t}: would overwrite an input clip")
        if Path(t).exists() and not force:
            raise JointLimitsError(f"{t} exists (use --force to replace it)")
    res = CleanResult(failures=list(bad))
    with Engine(client, scheduler, workers, None, progress) as eng:
        shared = CleanSettings(s.detect, s.threshold, None, s.smooth, s.footlock)
        for clip, t, (b, a) in zip(
            clips, targets, eng.map(_clean_task, list(zip(clips, targets)), shared, limits, label="clean")
        ):
            if a.get("error"):
                if strict:
                    raise JointLimitsError(f"{clip.path}: {a['error']}")
                res.failures.append((clip.path, a["error"]))
            else:
                res.outputs.append(t)
            res.before.append({c: b.get(c) for c in COLUMNS})
            res.after.append({c: a.get(c) for c in COLUMNS})
    root.mkdir(parents=True, exist_ok=True)
    write_table(res.before, root / SCAN_BEFORE)
    write_table(res.after, root / SCAN_AFTER)
    return res

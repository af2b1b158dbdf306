"""Fitting limits to a corpus: two passes over the clips on the engine, each clip reduced on a
worker to the statistics of :mod:`jointlimits.limits.fit` and folded in on the client in clip
order, one fit per skeleton group. The result is the in-memory fit's, by construction: the same
functions on the same clips in the same order."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import JointLimitsError, LimitsError
from ..limits.fit import ClipSummary, FitAccumulator, FitOptions, FitPlan, clip_clouds, clip_summary, plan_fit
from ..limits.model import JointLimits
from .engine import Engine
from .groups import Grouping
from .sources import Clip, expand, load_clip, reason

__all__ = ["CorpusFit", "fit"]


@dataclass
class CorpusFit:
    """A corpus fit: limits per skeleton group, the clips of each group, the clips (and sources)
    skipped with why."""

    limits: dict[str, JointLimits] = field(default_factory=dict)
    groups: dict[str, list[Clip]] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)


def _pass1(clip: Clip, options: FitOptions) -> tuple[str, Any]:
    try:
        return "ok", clip_summary(load_clip(clip), options)
    except Exception as e:
        return "error", reason(e)


def _pass2(clip: Clip, plan: FitPlan) -> tuple[str, Any]:
    try:
        return "ok", clip_clouds(load_clip(clip), plan)
    except Exception as e:
        return "error", reason(e)


def _plan_key(plan: FitPlan) -> str:
    h = hashlib.sha256(plan.options.key().encode())
    h.update(plan.reference.tobytes())
    h.update(repr((plan.todo, sorted(plan.kinds.items()), plan.couples, sorted(plan.streams.items()))).encode())
    return h.hexdigest()


def fit(
    sources: Iterable[str | os.PathLike],
    client: Any = None,
    *,
    one_group: bool = False,
    strict: bool = False,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: str | os.PathLike | None = None,
    progress: bool | None = None,
    **options: Any,
) -> CorpusFit:
    """Fit limits to every clip of ``sources`` (files, folders, glob patterns, ``@LIST.txt``),
    one :class:`~jointlimits.limits.model.JointLimits` per skeleton group, on ``client`` (a
    ``dask.distributed.Client``) or a cluster made as :class:`~.engine.Engine` says. ``options``
    are those of :meth:`JointLimits.fit <jointlimits.limits.model.JointLimits.fit>` (not
    ``progress``). Each clip is read twice; between clips only merged statistics are kept. A clip
    that fails to load is skipped and listed in ``failures`` (``strict``: JointLimitsError). With
    ``one_group``, clips of several skeleton groups raise JointLimitsError (listing them) after
    the first pass."""
    opts = FitOptions(**options)
    clips, bad = expand(sources, strict=strict)
    out = CorpusFit(failures=list(bad))
    if not clips:
        raise JointLimitsError("no clips to fit: " + "; ".join(f"{s}: {w}" for s, w in bad) if bad else "no clips")
    grouping = Grouping(opts.rest_tolerance)
    merged: dict[str, ClipSummary] = {}
    member: list[str | None] = []
    with Engine(client, scheduler, workers, cache, progress) as eng:
        paths = [c.path for c in clips]
        for clip, (status, res) in zip(
            clips, eng.map(_pass1, clips, opts, label="pass 1", settings="pass1\0" + opts.key(), paths=paths)
        ):
            if status != "ok":
                if strict:
                    raise JointLimitsError(f"{clip.path}: {res}")
                out.failures.append((clip.path, res))
                member.append(None)
                continue
            g = grouping.assign(res.skeleton, res.rest)
            merged[g] = res if g not in merged else merged[g].merge(res)
            out.groups.setdefault(g, []).append(clip)
            member.append(g)
        if not merged:
            why = out.failures[-1][1] if out.failures else "no clips"
            raise JointLimitsError(f"no clip could be fitted ({len(out.failures)} skipped; the last: {why})")
        if one_group and len(merged) > 1:
            groups = ", ".join(f"{g} ({len(c)} clips)" for g, c in out.groups.items())
            raise JointLimitsError(
                f"the clips form {len(merged)} skeleton groups ({groups}); give -o DIR for one limits file per group"
            )
        plans: dict[str, FitPlan] = {}
        for g, s in merged.items():
            try:
                plans[g] = plan_fit([s], opts)
            except LimitsError as e:
                raise LimitsError(f"group {g}: {e}") from None
        accs = {g: FitAccumulator(p) for g, p in plans.items()}
        todo = [(c, g) for c, g in zip(clips, member) if g is not None]
        for g in plans:
            key = f"pass2\0{_plan_key(plans[g])}"
            mine = [c for c, gg in todo if gg == g]
            for clip, (status, res) in zip(
                mine, eng.map(_pass2, mine, plans[g], label=f"pass 2 {g}", settings=key, paths=[c.path for c in mine])
            ):
                if status != "ok":
                    raise JointLimitsError(f"{clip.path}: could not be read again ({res}); did it change?")
                for clouds in res:
                    accs[g].add(clouds)
        for g, acc in accs.items():
            try:
                r = acc.finish()
            except LimitsError as e:
                raise LimitsError(f"group {g}: {e}") from None
            out.limits[g] = JointLimits(r.skeleton, r.joints, settings=r.settings, rest=r.rest)
    return out

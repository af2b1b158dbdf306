"""Fitting limits to a corpus: two passes over the clips on the engine, each clip reduced on a
worker to the statistics of :mod:`jointlimits.limits.fit` and folded in on the client in clip
order, one fit per skeleton group. The result is the in-memory fit's, by construction: the same
functions on the same clips in the same order."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import JointLimitsError, LimitsError
from ..limits.fit import ClipSummary, FitAccumulator, FitOptions, FitPlan, clip_clouds, clip_summary, plan_fit
from ..limits.model import JointLimits
from . import store
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


#: bytes of parsed clips each worker keeps on its scratch disk between the two passes (a clip
#: kept there is read back as binary in pass 2, not parsed again; beyond this it is parsed twice)
KEEP_BYTES = 4 << 30

_lock = threading.Lock()
_kept: dict[str, int] = {}  # run -> bytes kept on this worker


def _keep_dir(run: str) -> Path:
    """This worker's folder of parsed clips for ``run`` (its Dask scratch space, else the temp folder)."""
    try:
        from distributed import get_worker

        base = str(get_worker().local_directory)
    except (ImportError, ValueError):
        base = tempfile.gettempdir()
    return Path(base) / f"jointlimits-kept-{run}"


def _kept_file(run: str, path: str) -> Path:
    return _keep_dir(run) / (hashlib.sha256(path.encode()).hexdigest()[:32] + ".npz")


def _keep(run: str, path: str, m: Any, budget: int) -> None:
    """Store the parsed clip (its arrays and skeleton, not its source text) for pass 2, within
    ``budget`` bytes per worker; never fails the task."""
    bare = dataclasses.replace(m, source_euler=None, source_text=None)
    size = bare.rotations.nbytes + bare.positions.nbytes
    with _lock:
        for old in [r for r in _kept if r != run]:  # an earlier run that ended without forgetting
            _forget(old)
        if _kept.get(run, 0) + size > budget:
            return
        _kept[run] = _kept.get(run, 0) + size
    try:
        store.dump(bare, _kept_file(run, path), f"{run}\0{path}")
    except (OSError, store.StoreError):  # a full or read-only scratch disk: pass 2 parses the clip again
        pass


def _take(run: str, path: str) -> Any:
    """The clip kept by :func:`_keep` on this worker (removed from the store), or None."""
    target = _kept_file(run, path)
    m = store.load(target, f"{run}\0{path}")
    target.unlink(missing_ok=True)
    return None if m is store.MISSING else m


def _forget(run: str) -> None:
    """Drop what this worker keeps for ``run``."""
    _kept.pop(run, None)
    shutil.rmtree(_keep_dir(run), ignore_errors=True)


def _pass1(clip: Clip, options: FitOptions, run: str | None = None, budget: int = 0) -> tuple[str, Any]:
    try:
        m = load_clip(clip)
        s = clip_summary(m, options)
    except Exception as e:
        return "error", reason(e)
    if run is not None and budget > 0:
        _keep(run, clip.path, m, budget)
    return "ok", s


def _pass2(clip: Clip, plan: FitPlan, run: str | None = None) -> tuple[str, Any]:
    try:
        m = _take(run, clip.path) if run is not None else None
        return "ok", clip_clouds(load_clip(clip) if m is None else m, plan)
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
    keep_bytes: int | None = None,
    **options: Any,
) -> CorpusFit:
    """Fit limits to every clip of ``sources`` (files, folders, glob patterns, ``@LIST.txt``),
    one :class:`~jointlimits.limits.model.JointLimits` per skeleton group, on ``client`` (a
    ``dask.distributed.Client``) or a cluster made as :class:`~.engine.Engine` says. ``options``
    are those of :meth:`JointLimits.fit <jointlimits.limits.model.JointLimits.fit>` (not
    ``progress``). Each clip is read twice; between clips only merged statistics are kept, and
    between the passes each worker keeps up to ``keep_bytes`` (default :data:`KEEP_BYTES`) of
    parsed clips on its scratch disk, read back instead of parsed again (0: parse twice). A clip
    that fails to load is skipped and listed in ``failures`` (``strict``: JointLimitsError). With
    ``one_group``, clips of several skeleton groups raise JointLimitsError (listing them) after
    the first pass."""
    opts = FitOptions(**options)
    if opts.target_recall is not None:
        raise JointLimitsError("target_recall calibrates a fit of clips in memory (JointLimits.fit), not a corpus fit")
    clips, bad = expand(sources, strict=strict)
    out = CorpusFit(failures=list(bad))
    if not clips:
        raise JointLimitsError("no clips to fit: " + "; ".join(f"{s}: {w}" for s, w in bad) if bad else "no clips")
    grouping = Grouping(opts.rest_tolerance)
    merged: dict[str, ClipSummary] = {}
    member: list[str | None] = []
    budget = KEEP_BYTES if keep_bytes is None else int(keep_bytes)
    run = uuid.uuid4().hex
    with Engine(client, scheduler, workers, cache, progress) as eng:
        try:
            _fit_passes(eng, clips, opts, strict, one_group, run, budget, grouping, merged, member, out)
        finally:
            if budget > 0:
                try:
                    eng.client.run(_forget, run)
                except Exception:  # a worker gone: its scratch space goes with it
                    pass
    return out


def _fit_passes(
    eng: Engine,
    clips: list[Clip],
    opts: FitOptions,
    strict: bool,
    one_group: bool,
    run: str,
    budget: int,
    grouping: Grouping,
    merged: dict[str, ClipSummary],
    member: list[str | None],
    out: CorpusFit,
) -> None:
    paths = [c.path for c in clips]
    hosts: list[str | None] = []
    for clip, (status, res) in zip(
        clips,
        eng.map(
            _pass1,
            clips,
            opts,
            run,
            budget,
            label="pass 1",
            settings="pass1\0" + opts.key(),
            paths=paths,
            ran_on=hosts,
        ),  # fmt: skip
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
    todo = [(c, g, h) for c, g, h in zip(clips, member, hosts) if g is not None]
    for g in plans:
        key = f"pass2\0{_plan_key(plans[g])}"
        mine = [c for c, gg, _ in todo if gg == g]
        where = [h for _, gg, h in todo if gg == g]
        for clip, (status, res) in zip(
            mine,
            eng.map(
                _pass2,
                mine,
                plans[g],
                run,
                label=f"pass 2 {g}",
                settings=key,
                paths=[c.path for c in mine],
                hosts=where if budget > 0 else None,
            ),  # fmt: skip
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

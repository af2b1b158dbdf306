"""Cleaning a corpus: the cleanup chain on every clip (pops repaired joint by joint, as
``jointlimits filter --detect``, limits applied, feet locked), written with the same folder
structure under an output folder, with a scan of every clip before and after beside them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import JointLimitsError
from . import store
from .engine import Engine, Interrupted, content_hash
from .limitset import NO_HUMAN, human_unmapped, load_limits
from .scan import COLUMNS, measure, write_table
from .sources import Clip, expand, reason

__all__ = ["CleanSettings", "CleanResult", "clean", "SCAN_BEFORE", "SCAN_AFTER", "RECORDS"]

SCAN_BEFORE = "scan-before.parquet"
SCAN_AFTER = "scan-after.parquet"


@dataclass(frozen=True)
class CleanSettings:
    """The steps of the chain, in this order: ``detect`` pops and repair them joint by joint
    (:func:`jointlimits.cleanup.repair.repair_pops`, the repair ``filter --detect`` runs, pop score
    above ``threshold``), apply ``limits`` (a JointLimits, a limits file or the folder ``fit -o
    DIR`` writes: each clip takes the file of its skeleton, a clip with none is skipped; ``smooth`` removes the jumps
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


#: the folder under the output folder where each cleaned clip's record is kept (the input's
#: content hash and the settings it was cleaned with, and its scan rows), so that a rerun of an
#: interrupted clean skips the clips it finished
RECORDS = ".jointlimits-clean"
#: input formats the tool reads but cannot write: cleaned as BVH unless ``format`` says otherwise
UNWRITABLE = {"npz"}


def _record_path(root: Path, target: str) -> Path:
    rel = os.path.relpath(target, root)
    return root / RECORDS / (hashlib.sha256(rel.encode()).hexdigest()[:32] + ".npz")


def _clean_task(item: tuple[Clip, str, str], s: CleanSettings, limits: Any, settings: str, force: bool) -> dict:
    """One clip: its scan before, the cleaned clip written to its target, its scan after, and a
    record of it; a clip whose target and record match its content and ``settings`` is not done
    again (unless ``force``)."""
    clip, target, root = item
    from .. import io as motion_io
    from .scan import _scan_task

    record = _record_path(Path(root), target)
    key = None
    try:
        key = hashlib.sha256(f"{content_hash(clip.path)}\0{settings}".encode()).hexdigest()
    except OSError:
        pass  # the scan below reports the unreadable file
    if key is not None and not force and os.path.isfile(target):
        done = store.load(record, key)
        if isinstance(done, dict) and "before" in done and "after" in done:
            return {**done, "resumed": True}
    before = _scan_task(clip, limits, keep=True)
    why = before.pop("_no_limits", None)
    m, lim = before.pop("_motion", None), before.pop("_limits", None)
    before.pop("_skeleton", None)
    before.pop("_rest", None)
    after: dict[str, Any] = {"file": target, "format": Path(target).suffix.lower().lstrip(".")}
    if before.get("error"):
        after["error"] = before["error"]
        return {"before": before, "after": after}
    try:
        if why:
            raise JointLimitsError(why)
        out = clean_motion(m, s, lim)
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        motion_io.save(target, out)
        after["convention"] = before.get("convention")
        after.update(measure(out, lim))
    except Exception as e:
        after["error"] = reason(e)
        return {"before": before, "after": after}
    done = {"before": {c: before.get(c) for c in COLUMNS}, "after": {c: after.get(c) for c in COLUMNS}}
    if key is not None:
        try:
            store.dump(done, record, key)
        except (OSError, store.StoreError):
            pass  # no record: a rerun cleans this clip again
    return done


@dataclass
class CleanResult:
    """Per clip the scan rows before and after, the output paths, the failures; the outputs
    kept from an earlier, interrupted run (``resumed``) and the inputs written in another format
    than their own (``converted``: input, output)."""

    before: list[dict[str, Any]] = field(default_factory=list)
    after: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    converted: list[tuple[str, str]] = field(default_factory=list)


def _target(root: Path, clip: Clip, fmt: str | None) -> str:
    rel = Path(clip.rel)
    ext = fmt or ("bvh" if clip.format in UNWRITABLE else None)
    return str(root / (rel.with_suffix("." + ext) if ext else rel))


def _settings_key(s: CleanSettings, limits: Any) -> str:
    lim = "" if limits is None else repr([sorted(one.to_dict().items()) for one in limits])
    return repr(("clean", 1, s.detect, s.threshold, s.smooth, s.footlock, hashlib.sha256(lim.encode()).hexdigest()))


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
    format: str | None = None,
) -> CleanResult:
    """Clean every clip of ``sources`` into ``out`` (each at its path relative to its source; in
    ``format``, an extension such as ``"bvh"`` or ``"glb"``, when given, and as BVH for inputs
    the tool cannot write, AMASS ``.npz``), and write :data:`SCAN_BEFORE` and :data:`SCAN_AFTER`
    there. ``settings.limits``: one limits file, the folder ``fit -o DIR`` writes, or JointLimits;
    each clip is cleaned with the limits of its skeleton; a human model (``"human"`` or a model
    file) gives each clip limits for its own skeleton (JointLimitsError, and no tables, when it
    maps no clip at all). Refuses (JointLimitsError), before
    anything is written, an output that exists unless ``force`` or a record under
    :data:`RECORDS` says an earlier clean of this folder wrote it. A clip whose output and record
    match its content and the settings is not cleaned again, so running an interrupted clean
    again finishes the rest (``force`` redoes every clip). An interrupt raises
    :class:`~.engine.Interrupted`; the finished clips stay, the tables are not written."""
    from .. import io as motion_io

    s = settings or CleanSettings()
    if not s.any():
        raise JointLimitsError("nothing to clean: give limits, detect or footlock")
    if format is not None:
        format = format.lower().lstrip(".")
        motion_io.format_for("x." + format)
        if format in UNWRITABLE:
            raise JointLimitsError(f"cannot write .{format} clips; give bvh, glb, gltf, usd, usda, usdc or fbx")
    limits = load_limits(s.limits)
    clips, bad = expand(sources, strict=strict)
    if not clips:
        raise JointLimitsError("no clips: " + "; ".join(f"{s}: {w}" for s, w in bad))
    root = Path(out)
    targets = [_target(root, c, format) for c in clips]
    if len(set(targets)) != len(targets):
        raise JointLimitsError("two clips would be written to the same path under the output folder")
    srcs = {os.path.realpath(c.path) for c in clips}
    records = (root / RECORDS).is_dir()
    for t in targets + [str(root / SCAN_BEFORE), str(root / SCAN_AFTER)]:
        if os.path.realpath(t) in srcs:
            raise JointLimitsError(f"{t}: would overwrite an input clip")
        if Path(t).exists() and not force:
            mine = _record_path(root, t).is_file() if t in targets else records
            if not mine:
                raise JointLimitsError(f"{t} exists (use --force to replace it)")
    res = CleanResult(failures=list(bad))
    res.converted = [
        (c.path, t) for c, t in zip(clips, targets) if Path(c.path).suffix.lower() != Path(t).suffix.lower()
    ]
    key = _settings_key(s, limits)
    with Engine(client, scheduler, workers, None, progress) as eng:
        shared = CleanSettings(s.detect, s.threshold, None, s.smooth, s.footlock)
        items = [(c, t, str(root)) for c, t in zip(clips, targets)]
        try:
            for clip, t, r in zip(
                clips, targets, eng.map(_clean_task, items, shared, limits, key, force, label="clean")
            ):
                b, a = r["before"], r["after"]
                if a.get("error"):
                    if strict:
                        raise JointLimitsError(f"{clip.path}: {a['error']}")
                    res.failures.append((clip.path, a["error"]))
                else:
                    res.outputs.append(t)
                    if r.get("resumed"):
                        res.resumed.append(t)
                res.before.append({c: b.get(c) for c in COLUMNS})
                res.after.append({c: a.get(c) for c in COLUMNS})
        except KeyboardInterrupt:
            raise Interrupted(eng.done, len(clips), "clips cleaned") from None
    unmapped = human_unmapped(limits, [f"{f}: {w}" for f, w in res.failures if NO_HUMAN in w], len(res.outputs))
    if unmapped:
        raise JointLimitsError(unmapped)
    root.mkdir(parents=True, exist_ok=True)
    write_table(res.before, root / SCAN_BEFORE)
    write_table(res.after, root / SCAN_AFTER)
    return res

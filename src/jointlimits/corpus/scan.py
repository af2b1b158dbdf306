"""A corpus scan: one row of measures per clip (what is wrong with it), written as a table
(Parquet or CSV, with pyarrow) and summarised in an HTML page.

The measures, per clip (lengths in metres by the clip's guessed units, along its guessed up axis):

* with limits: frames and joint-frames outside them, and the joint outside most often;
* raw glitches: a joint's local rotation turning faster than ``GLITCH_DEG_S`` between two frames,
  or a root moving faster than ``GLITCH_ROOT_M_S`` (the joints are named);
* pops found by :func:`jointlimits.cleanup.pops.detect_pops`;
* foot skating as motion-generation papers define it: a foot within ``FOOT_NEAR_M`` of the floor
  (height 0) in two consecutive frames moving faster than ``SKATE_M_S`` horizontally, as a
  fraction of frame pairs; and the project's own measure
  (:func:`jointlimits.cleanup.footlock.foot_skating`, cm per second);
* the clip's floor (``floor_m``): the height of its lowest foot point (foot and toe joints and their
  end sites), a low percentile (``FLOOR_PERCENTILE``) over the frames, so a clip recorded a few
  centimetres above (or below) height 0 stands on its own floor;
* airborne frames: no foot point (as above: a rig without toe joints has its toe end sites) within
  ``FOOT_NEAR_M`` of that floor; the count, and the longest stretch (seconds);
* frames whose lowest point is more than ``BELOW_FLOOR_M`` below the floor;
* jitter: the mean magnitude of the joints' jerk (third difference of global positions, m/s^3).
"""

from __future__ import annotations

import base64
import html
import io as _io
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import JointLimitsError, MissingExtraError
from ..motion import quat
from ..motion.skeleton import Motion, end_site_positions, forward_kinematics
from .engine import Engine, Interrupted
from .groups import Grouping, convention_of
from .limitset import human_unmapped, load_limits, pick_limits
from .sources import Clip, expand, load_clip, reason

__all__ = ["ScanResult", "airborne", "measure", "scan", "write_table", "write_html", "COLUMNS", "MEASURES"]

GLITCH_DEG_S = 5000.0
GLITCH_ROOT_M_S = 10.0
FOOT_NEAR_M = 0.05
SKATE_M_S = 0.5
BELOW_FLOOR_M = 0.02
#: percentile (over the frames) of the lowest foot point's height taken as the clip's floor
FLOOR_PERCENTILE = 2.0

#: every column of a scan row, in order, with its type (the table's schema)
COLUMNS: dict[str, str] = {
    "file": "string",
    "format": "string",
    "group": "string",
    "convention": "string",
    "frames": "int64",
    "fps": "float64",
    "duration_s": "float64",
    "stature_m": "float64",
    "limits_frames_outside": "int64",
    "limits_joint_frames_outside": "int64",
    "limits_worst_joint": "string",
    "glitch_frames": "int64",
    "glitch_joints": "string",
    "glitch_at": "string",
    "pops": "int64",
    "pop_at": "string",
    "skate_ratio": "float64",
    "skate_cm_per_s": "float64",
    "airborne_s": "float64",
    "airborne_at": "string",
    "airborne_frames": "int64",
    "floor_m": "float64",
    "below_floor_frames": "int64",
    "below_floor_at": "string",
    "jitter_m_s3": "float64",
    "error": "string",
}
#: the numeric measures the HTML summary shows (column, title)
MEASURES: list[tuple[str, str]] = [
    ("limits_joint_frames_outside", "joint-frames outside the limits"),
    ("glitch_frames", f"glitch frames (> {GLITCH_DEG_S:g} deg/s or root > {GLITCH_ROOT_M_S:g} m/s)"),
    ("pops", "pops (detector)"),
    ("skate_ratio", "foot skating ratio (papers' definition)"),
    ("skate_cm_per_s", "foot skating (project measure, cm/s)"),
    ("airborne_s", "longest stretch with no foot near the floor (s)"),
    ("airborne_frames", "frames with no foot near the clip's floor"),
    ("below_floor_frames", f"frames more than {100 * BELOW_FLOOR_M:g} cm below the floor"),
    ("jitter_m_s3", "jitter (mean joint jerk, m/s^3)"),
]


def _frames_text(frames: Sequence[int] | np.ndarray, most: int = 8) -> str:
    f = [int(x) for x in frames]
    return " ".join(map(str, f[:most])) + (f" (+{len(f) - most})" if len(f) > most else "")


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.nonzero(d == 1)[0].tolist(), np.nonzero(d == -1)[0].tolist()))


def _airborne(
    sk: Any, h: np.ndarray, h_all: np.ndarray, feet: Sequence[int], toes: Sequence[int]
) -> tuple[np.ndarray, float]:
    """Frames with no foot point near its own floor, and the lowest floor (metres). ``h``: heights
    of the foot then toe joints, ``h_all`` of every joint then end site."""
    # each foot point's own floor (the foot and toe joints, and the end sites of feet without a toe
    # joint): a low percentile of its heights, so a clip above or below height 0, or a floor that
    # drifts a few centimetres between the feet, still stands on it
    bare = [e for e, (p, _) in enumerate(sk.end_sites) if p in feet and not any(sk.parents[t] == p for t in toes)]
    hc = np.concatenate([h, h_all[:, sk.num_joints + np.asarray(bare, np.int64)]], axis=1)
    floor = np.percentile(hc, FLOOR_PERCENTILE, axis=0)
    return np.asarray(~(hc - floor <= FOOT_NEAR_M).any(axis=1)), float(floor.min())


def airborne(m: Motion) -> np.ndarray:
    """Per frame, whether :func:`measure` counts it airborne (no foot point within ``FOOT_NEAR_M``
    of its own floor); all False on a skeleton without feet."""
    from ..cleanup.contacts import find_feet, find_toes
    from ..motion.units import guess_units, guess_up_axis, up_axis_index

    sk = m.skeleton
    feet = find_feet(sk)
    if not feet or m.num_frames == 0:
        return np.zeros(m.num_frames, bool)
    toes = [t for t in find_toes(sk, feet) if t is not None]
    k, sign = up_axis_index(guess_up_axis(m))
    mpu = guess_units(m).metres_per_unit
    gr, gp = forward_kinematics(m)
    h_all = sign * np.concatenate([gp, end_site_positions(m, gr, gp)], axis=1)[..., k] * mpu
    return _airborne(sk, h_all[:, list(feet) + toes], h_all, feet, toes)[0]


def measure(m: Motion, limits: Any = None) -> dict[str, Any]:
    """The measures of one clip (the columns of :data:`COLUMNS` after ``convention``)."""
    from ..cleanup.contacts import find_feet, find_toes
    from ..cleanup.footlock import foot_skating
    from ..cleanup.pops import detect_pops
    from ..motion.units import guess_units, guess_up_axis, stature, up_axis_index

    sk = m.skeleton
    F, dt = m.num_frames, m.frame_time
    row: dict[str, Any] = {"frames": F, "fps": 1.0 / dt, "duration_s": F * dt}
    if F == 0:
        raise JointLimitsError("the clip has no frames")
    up = guess_up_axis(m)
    k, sign = up_axis_index(up)
    mpu = guess_units(m).metres_per_unit
    row["stature_m"] = float(stature(m, up)) * mpu
    if limits is not None:
        if list(limits.skeleton.names) == list(sk.names):
            inside = limits.contains(m.rotations)
            out = ~inside
            row["limits_frames_outside"] = int(out.any(axis=1).sum())
            row["limits_joint_frames_outside"] = int(out.sum())
            per = out.sum(axis=0)
            row["limits_worst_joint"] = sk.names[int(per.argmax())] if per.max() > 0 else ""
        else:
            row["limits_worst_joint"] = "(other skeleton)"
    # raw glitches between consecutive frames
    gr, gp = forward_kinematics(m)
    if F > 1:
        ang = np.degrees(quat.angle(m.rotations[1:], m.rotations[:-1])) / dt  # [F-1, J]
        fast = ang > GLITCH_DEG_S
        roots = [j for j in range(sk.num_joints) if sk.parents[j] < 0]
        rs = np.linalg.norm(np.diff(gp[:, roots], axis=0), axis=-1) * mpu / dt
        rfast = rs > GLITCH_ROOT_M_S
        any_ = fast.any(axis=1) | rfast.any(axis=1)
        row["glitch_frames"] = int(any_.sum())
        names = {sk.names[j] for j in np.nonzero(fast.any(axis=0))[0]}
        names |= {sk.names[roots[i]] for i in np.nonzero(rfast.any(axis=0))[0]}
        row["glitch_joints"] = " ".join(n for n in sk.names if n in names)
        row["glitch_at"] = _frames_text(np.nonzero(any_)[0] + 1)
    else:
        row.update(glitch_frames=0, glitch_joints="", glitch_at="")
    pops = detect_pops(m)
    row["pops"] = int(len(pops))
    row["pop_at"] = _frames_text(pops)
    # feet against the floor (height 0 along the up axis)
    feet = find_feet(sk)
    toes = [t for t in find_toes(sk, feet) if t is not None] if feet else []
    pts = np.concatenate([gp, end_site_positions(m, gr, gp)], axis=1)
    h_all = sign * pts[..., k] * mpu
    lowest = h_all.min(axis=1)
    below = lowest < -BELOW_FLOOR_M
    row["below_floor_frames"] = int(below.sum())
    row["below_floor_at"] = _frames_text(np.nonzero(below)[0])
    if feet:
        fj = list(feet) + toes
        h = sign * gp[:, fj, k] * mpu
        air, row["floor_m"] = _airborne(sk, h, h_all, feet, toes)
        near = h <= FOOT_NEAR_M
        hor = np.delete(gp[:, fj], k, axis=-1) * mpu
        if F > 1:
            v = np.linalg.norm(np.diff(hor, axis=0), axis=-1) / dt
            skate = (near[1:] & near[:-1] & (v > SKATE_M_S)).any(axis=1)
            row["skate_ratio"] = float(skate.mean())
        else:
            row["skate_ratio"] = 0.0
        try:
            row["skate_cm_per_s"] = float(foot_skating(m)["total_cm"]) / (F * dt)
        except JointLimitsError:
            row["skate_cm_per_s"] = math.nan
        row["airborne_frames"] = int(air.sum())
        runs = _runs(air)
        a, b = max(runs, key=lambda r: r[1] - r[0]) if runs else (0, 0)
        row["airborne_s"] = (b - a) * dt
        row["airborne_at"] = f"{a}-{b - 1}" if b > a else ""
    if F > 3:
        jerk = np.diff(gp * mpu, n=3, axis=0) / dt**3
        row["jitter_m_s3"] = float(np.linalg.norm(jerk, axis=-1).mean())
    return row


def _scan_task(clip: Clip, limits: Any, keep: bool = False) -> dict[str, Any]:
    """One clip's row; ``keep``: also the loaded motion and its limits (``_motion``, ``_limits``),
    for a caller that goes on with them (clean: the clip is loaded and its limits made once)."""
    row: dict[str, Any] = {"file": clip.path, "format": clip.format}
    try:
        m = load_clip(clip)
        from ..limits.rest import rest_directions

        row["_skeleton"] = m.skeleton
        row["_rest"] = rest_directions(m.skeleton)
        row["convention"] = convention_of(m.skeleton)
        lim, why = pick_limits(limits, m.skeleton, m)
        if why:
            row["_no_limits"] = why
        if keep:
            row["_motion"], row["_limits"] = m, lim
        with np.errstate(all="ignore"):
            row.update(measure(m, lim))
        if why:
            row["limits_worst_joint"] = "(no limits for this skeleton)"
        bad = [c for c, kind in COLUMNS.items() if kind == "float64" and not _finite(row.get(c))]
        for c in bad:
            row[c] = None
        if bad:
            row["error"] = f"measures not finite (values too large to measure): {', '.join(bad)}"
    except Exception as e:
        row["error"] = reason(e)
    return row


def _finite(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float, np.number)) and math.isfinite(float(v)))


@dataclass
class ScanResult:
    """A scan: one row per clip (dicts with the :data:`COLUMNS`), the sources that gave nothing."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    #: clips measured without limits (none fitted on their skeleton): (file, reason)
    no_limits: list[tuple[str, str]] = field(default_factory=list)
    #: cache entries found but refused (damaged, foreign, not plain data) and measured again
    cache_refused: int = 0

    def column(self, name: str) -> list[Any]:
        return [r.get(name) for r in self.rows]


def scan(
    sources: Iterable[str | os.PathLike],
    client: Any = None,
    *,
    limits: Any = None,
    strict: bool = False,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: str | os.PathLike | None = None,
    progress: bool | None = None,
) -> ScanResult:
    """Measure every clip of ``sources`` (see the module doc) on the engine. A clip that fails to
    load is a row with its ``error`` (``strict``: JointLimitsError); so is a clip with a measure
    that is not finite (the measure is left empty). ``limits``: one limits file, the folder ``fit
    -o DIR`` writes, or JointLimits; each clip is measured against the limits fitted on its skeleton
    (:func:`~.limitset.pick_limits`; clips without are in ``no_limits``); a human model (``"human"``
    or a model file) makes each clip limits for its own skeleton (JointLimitsError when it maps no
    clip at all). Results go through
    ``cache`` (a folder) when given, so a rerun measures only the clips not done; an interrupt
    raises :class:`~.engine.Interrupted`."""
    limits = load_limits(limits)
    clips, bad = expand(sources, strict=strict)
    if not clips:
        raise JointLimitsError("no clips: " + "; ".join(f"{s}: {w}" for s, w in bad))
    res = ScanResult(failures=list(bad))
    grouping = Grouping()
    settings = "scan\0" + ("" if limits is None else repr([sorted(lim.to_dict().items()) for lim in limits]))
    with Engine(client, scheduler, workers, cache, progress) as eng:
        try:
            rows = eng.map(_scan_task, clips, limits, label="scan", settings=settings, paths=[c.path for c in clips])
            for row in rows:
                if row.get("error"):
                    if strict:
                        raise JointLimitsError(f"{row['file']}: {row['error']}")
                    res.failures.append((row["file"], row["error"]))
                else:
                    row["group"] = grouping.assign(row.pop("_skeleton"), row.pop("_rest"))
                row.pop("_skeleton", None)
                row.pop("_rest", None)
                if row.get("_no_limits"):
                    res.no_limits.append((row["file"], row.pop("_no_limits")))
                res.rows.append({c: row.get(c) for c in COLUMNS})
        except KeyboardInterrupt:
            raise Interrupted(eng.done, len(clips), "clips scanned") from None
        res.cache_refused = eng.cache_refused
    mapped = sum(1 for r in res.rows if not r.get("error")) - len(res.no_limits)
    unmapped = human_unmapped(limits, [f"{f}: {w}" for f, w in res.no_limits], mapped)
    if unmapped:
        raise JointLimitsError(unmapped)
    return res


def _pyarrow() -> Any:
    try:
        import pyarrow

        return pyarrow
    except ImportError:
        raise MissingExtraError(
            "scan tables need the optional package pyarrow, which is not installed: "
            "pip install 'jointlimits[corpus]' (in a checkout: pip install -e '.[corpus]')"
        ) from None


def write_table(rows: list[dict[str, Any]], path: str | os.PathLike) -> None:
    """Write scan rows as Parquet, or CSV when ``path`` ends in ``.csv`` (atomically)."""
    from .._atomic import atomic_write

    pa = _pyarrow()
    schema = pa.schema([(c, getattr(pa, t)()) for c, t in COLUMNS.items()])
    table = pa.Table.from_pylist(rows, schema=schema)
    with atomic_write(path, binary=True) as f:
        if str(path).lower().endswith(".csv"):
            import pyarrow.csv as pcsv

            pcsv.write_csv(table, f)
        else:
            import pyarrow.parquet as pq

            pq.write_table(table, f)


def read_table(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The rows of a table :func:`write_table` wrote."""
    pa = _pyarrow()
    if str(path).lower().endswith(".csv"):
        import pyarrow.csv as pcsv

        schema = pa.schema([(c, getattr(pa, t)()) for c, t in COLUMNS.items()])
        opts = pcsv.ConvertOptions(column_types=schema, strings_can_be_null=True, quoted_strings_can_be_null=False)
        t = pcsv.read_csv(path, convert_options=opts)
    else:
        import pyarrow.parquet as pq

        t = pq.read_table(path)
    return t.to_pylist()


_FRAMES_OF = {
    "glitch_frames": "glitch_at",
    "pops": "pop_at",
    "airborne_s": "airborne_at",
    "below_floor_frames": "below_floor_at",
    "limits_joint_frames_outside": "limits_worst_joint",
}


def write_html(
    rows: list[dict[str, Any]], path: str | os.PathLike, worst: int = 10, title: str = "Corpus scan"
) -> None:
    """An HTML summary of a scan: per measure its distribution over the clips (a histogram, PNG
    inline) and the ``worst`` clips by it, with their frames."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .._atomic import atomic_write

    ok = [r for r in rows if not r.get("error")]
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p>{len(rows)} clips, {len(rows) - len(ok)} failed to load.</p>",
    ]
    for col, name in MEASURES:
        vals = [(float(r[col]), r) for r in rows if r.get(col) is not None and _finite(r[col])]
        if not vals:
            continue
        fig, ax = plt.subplots(figsize=(5, 2.2), dpi=80)
        ax.hist([v for v, _ in vals], bins=30)
        ax.set_xlabel(name)
        ax.set_ylabel("clips")
        fig.tight_layout()
        buf = _io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        img = base64.b64encode(buf.getvalue()).decode("ascii")
        parts.append(f"<h2>{html.escape(name)}</h2><img src='data:image/png;base64,{img}'>")
        top = sorted(vals, key=lambda x: -x[0])[:worst]
        top = [(v, r) for v, r in top if v > 0]
        if top:
            where = _FRAMES_OF.get(col)
            parts.append("<table><tr><th>clip</th><th>value</th><th>frames</th></tr>")
            for v, r in top:
                fr = r.get(where) or "" if where else ""
                parts.append(
                    f"<tr><td>{html.escape(str(r['file']))}</td><td>{v:.4g}</td><td>{html.escape(str(fr))}</td></tr>"
                )
            parts.append("</table>")
    bad = [r for r in rows if r.get("error")]
    if bad:
        parts.append("<h2>Clips that failed to load</h2><table>")
        parts += [f"<tr><td>{html.escape(r['file'])}</td><td>{html.escape(r['error'])}</td></tr>" for r in bad]
        parts.append("</table>")
    parts.append("</body></html>")
    with atomic_write(Path(path)) as f:
        f.write("\n".join(parts))

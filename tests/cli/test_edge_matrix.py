"""#39 edge matrix: every command that reads a clip, on clips at the edges (0 frames, 1 frame,
frame times 1e-9 and 1e308, root positions 1e308, a NaN in one channel, 1 joint, 500 joints).

Each run ends either with exit 0 and finite outputs, or with exit 2 and one ``error:`` line: no
traceback, no hang (10 s each, in-process with click's CliRunner), no ``nan``/``inf`` written.
Adding a command is one line in :data:`COMMANDS`. ``scan`` starts a Dask cluster (seconds
each time), so it reads every edge clip in one run (:data:`BATCH_COMMANDS`)."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cli import main
from jointlimits.io import bvh
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion
from jointlimits.motion.skeleton import Motion, Skeleton

#: (id, argv template): {clip} the edge clip, {out} a fresh output stem, {limits} limits fitted
#: to a normal clip of the same humanoid, {normal} that normal clip.
COMMANDS: list[tuple[str, str]] = [
    ("info", "info {clip}"),
    ("info-json", "info --json {clip}"),
    ("fit", "fit {clip} -o {out}.json"),
    ("apply", "apply {limits} {clip} -o {out}.bvh"),
    ("report", "report {limits} {clip}"),
    ("filter", "filter {clip} --detect -o {out}.bvh"),
    ("splice", "splice {normal} {clip} -o {out}.bvh"),
    ("footlock", "footlock {clip} -o {out}.bvh"),
    ("resample", "resample {clip} --fps 24 -o {out}.bvh"),
    ("rename", "rename {clip} --to {normal} -o {out}.bvh"),
    ("recover", "recover {clip} --skeleton {clip} -o {out}.bvh"),
    ("export", "export {limits} --to mujoco --clips {clip} -o {out}.json"),
]

#: commands that take many clips at once: one run over every edge clip ({clips}), 60 s at most
BATCH_COMMANDS: list[tuple[str, str]] = [
    ("scan", "scan {clips} -o {out}.csv --workers 1"),
]

HANG_SECONDS = 10
NONFINITE = re.compile(rb"(?<![A-Za-z_'])(nan|-?inf|infinity)(?![A-Za-z_'])", re.IGNORECASE)  # not a quoted echo


def _chain(J: int) -> Skeleton:
    names = ["Hips"] + [f"J{k}" for k in range(1, J)]
    offsets = np.zeros((J, 3))
    offsets[1:, 1] = 5.0
    channels = [["Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"]] + [
        ["Zrotation", "Xrotation", "Yrotation"]
    ] * (J - 1)
    return Skeleton(names, np.arange(J) - 1, offsets, channels=channels)


def _chain_motion(J: int, F: int = 30) -> Motion:
    rng = np.random.default_rng(J)
    axis = rng.normal(size=(F, J, 3)) * 0.2
    ang = np.linalg.norm(axis, axis=-1, keepdims=True)
    rot = np.concatenate([np.cos(ang / 2), np.sin(ang / 2) * axis / np.maximum(ang, 1e-12)], -1)
    sk = _chain(J)
    pos = np.repeat(sk.offsets[None], F, 0)
    pos[:, 0] += np.linspace(0, 10, F)[:, None]
    return Motion(sk, rot, pos, 1 / 30)


def _edit(text: str, kind: str) -> str:
    head, rows = text.split("Frame Time:", 1)
    ft_line, *frames = rows.split("\n")
    frames = [f for f in frames if f.strip()]
    ft = ft_line.strip()
    if kind == "frames0":
        frames = []
    elif kind == "frames1":
        frames = frames[:1]
    elif kind == "ft1e-9":
        ft = "1e-9"
    elif kind == "ft1e308":
        ft = "1e308"
    elif kind == "root1e308":
        frames = [" ".join(["1e308"] * 3 + f.split()[3:]) for f in frames]
    elif kind == "nan":
        vals = frames[len(frames) // 2].split()
        vals[4] = "nan"
        frames[len(frames) // 2] = " ".join(vals)
    head = re.sub(r"Frames:\s*\d+", f"Frames: {len(frames)}", head)
    return f"{head}Frame Time: {ft}\n" + "".join(f + "\n" for f in frames)


EDGES = ["frames0", "frames1", "ft1e-9", "ft1e308", "root1e308", "nan", "joints1", "joints500"]
#: the whole matrix takes minutes on 2 shared cores: by default the edges that once crashed run,
#: every edge with JOINTLIMITS_EDGE_MATRIX=1 (CI's long job)
FULL = os.environ.get("JOINTLIMITS_EDGE_MATRIX") == "1"
RUN_EDGES = EDGES if FULL else ["frames0", "ft1e308", "root1e308", "nan"]
#: known to take far over 10 s (not yet fixed): recover solves a 500-deep chain for minutes
SLOW = {("recover", "joints500"): "recover on a 500-joint chain takes minutes (#39, open)"}


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("edges")
    normal = d / "normal.bvh"
    bvh.save(normal, range_of_motion(humanoid_skeleton(), seconds=2.0, fps=30, seed=1))
    text = normal.read_text()
    out = {"normal": normal}
    for kind in EDGES:
        p = d / f"{kind}_clip.bvh"  # "nan_clip": a name is no non-finite value
        if kind.startswith("joints"):
            bvh.save(p, _chain_motion(int(kind[6:])))
        else:
            p.write_text(_edit(text, kind))
        out[kind] = p
    lim = d / "limits.json"
    res = CliRunner().invoke(main, ["fit", str(normal), "-o", str(lim), "--shape", "box"])
    assert res.exit_code == 0, res.output
    out["limits"] = lim
    return out


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


@pytest.mark.parametrize("edge", RUN_EDGES)
@pytest.mark.parametrize("name,template", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_edge_clip_gives_a_finite_output_or_one_error_line(clips, tmp_path, name, template, edge):
    if (name, edge) in SLOW:
        pytest.xfail(SLOW[name, edge])
    argv = template.format(clip=clips[edge], out=tmp_path / "out", limits=clips["limits"], normal=clips["normal"])
    _check_run(tmp_path, name, edge, argv.split(), HANG_SECONDS)


@pytest.mark.skipif(not FULL, reason="scan starts a Dask cluster: with JOINTLIMITS_EDGE_MATRIX=1 only")
@pytest.mark.parametrize("name,template", BATCH_COMMANDS, ids=[c[0] for c in BATCH_COMMANDS])
def test_every_edge_clip_at_once_gives_a_finite_output_or_one_error_line(clips, tmp_path, name, template):
    argv = template.format(clips=" ".join(str(clips[e]) for e in EDGES), out=tmp_path / "out", limits=clips["limits"])
    _check_run(tmp_path, name, "every edge clip", argv.split(), 60)


def _check_run(tmp_path: Path, name: str, edge: str, argv: list[str], seconds: int) -> None:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        res = CliRunner().invoke(main, argv)
    except _Hang:
        pytest.fail(f"{name} on {edge}: no answer in {seconds} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if isinstance(res.exception, _Hang):
        pytest.fail(f"{name} on {edge}: no answer in {seconds} s")
    text = res.output
    assert "Traceback" not in text, text
    assert res.exit_code in (0, 2), (res.exit_code, text, res.exception)
    written = sorted(tmp_path.glob("out*"))
    if res.exit_code == 2:
        lines = [x for x in text.splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:"), text
        assert not written, f"a refused run wrote {written}"
    else:
        assert not NONFINITE.search(text.encode()), f"{name} on {edge} printed a non-finite value:\n{text}"
        for f in written:
            if f.suffix in (".bvh", ".json", ".csv", ".xml", ".gltf", ".usda"):  # text outputs
                m = NONFINITE.search(f.read_bytes())
                assert not m, f"{name} on {edge} wrote {m.group(0)!r} into {f.name}"

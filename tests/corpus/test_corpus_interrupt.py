"""Corpus commands under interruption and odd inputs (issue 40) and a cache that holds data, never
code (issue 41): SIGINT to the process alone or to its group stops ``scan``, ``clean`` and ``fit``
(exit 130, no partial output, no worker left), the same command again finishes only the rest and
writes what one uninterrupted run writes; a planted pickle in a cache is never loaded."""

from __future__ import annotations

import hashlib
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jointlimits import io as motion_io
from jointlimits.corpus import store
from jointlimits.corpus.engine import _cached, content_hash
from jointlimits.motion import procedural

from conftest import MOCAP, needs_shared

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}


# -- the cache: plain data only ---------------------------------------------------------------


class _Planted:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):  # unpickling this would create the file
        return (open, (self.path, "w"))


def _measure(x: int) -> dict:
    return {"frames": x, "fps": 30.0, "nan": float("nan"), "arr": np.arange(x, dtype=np.float32), "t": ("a", 1)}


def test_planted_pickle_is_never_loaded(tmp_path):
    clip = tmp_path / "clip.bvh"
    clip.write_text("whatever the clip holds")
    cache = tmp_path / "cache"
    key = hashlib.sha256(f"{content_hash(str(clip))}\0settings".encode()).hexdigest()
    pwned = tmp_path / "PWNED"
    for name in (f"{key}.npz", f"{key}.pkl"):  # where an entry goes, and where the old cache put it
        target = cache / key[:2] / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pickle.dumps(_Planted(str(pwned))))
    value, refused = _cached(str(cache), "settings", _measure, str(clip), 5)
    assert not pwned.exists()
    assert refused  # one warning line: the entry was there and was recomputed
    expected = _measure(5)
    assert value.keys() == expected.keys() and value["frames"] == 5 and value["t"] == ("a", 1)
    assert np.array_equal(value["arr"], expected["arr"]) and value["arr"].dtype == np.float32
    # the recomputed entry replaced the planted one and is read back as it was written
    again, refused = _cached(str(cache), "settings", _measure, str(clip), 99)
    assert not refused and again["frames"] == 5 and np.isnan(again["nan"])


def test_damaged_and_foreign_entries_are_refused(tmp_path):
    m = procedural.range_of_motion(seconds=0.2)
    sk = m.skeleton
    value = {"skeleton": sk, "rows": [1, 2.5, None, "x"], ("rot", 3): np.eye(4), "motion": m}
    f = tmp_path / "e.npz"
    store.dump(value, f, "key-a")
    back = store.load(f, "key-a")
    assert back["skeleton"].names == sk.names and np.array_equal(back["skeleton"].offsets, sk.offsets)
    assert back["rows"] == [1, 2.5, None, "x"] and np.array_equal(back[("rot", 3)], np.eye(4))
    assert np.array_equal(back["motion"].rotations, m.rotations) and back["motion"].frame_time == m.frame_time
    assert store.load(f, "key-b") is store.MISSING  # another input's or settings' entry
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])  # cut short
    assert store.load(f, "key-a") is store.MISSING
    f.write_bytes(b"\x00" * 100)
    assert store.load(f, "key-a") is store.MISSING
    with pytest.raises(store.StoreError):
        store.dump({"f": lambda: 0}, tmp_path / "x.npz", "k")


# -- scan's measures are finite or empty ------------------------------------------------------


def test_scan_row_of_a_clip_too_large_to_measure_and_its_html(tmp_path):
    from jointlimits.corpus.scan import COLUMNS, _finite, _scan_task, write_html, write_table
    from jointlimits.corpus.sources import Clip

    m = procedural.range_of_motion(seconds=1.0)
    m.positions[:, 0] = 1e300 * np.linspace(-1, 1, m.num_frames)[:, None]
    p = tmp_path / "huge.bvh"
    motion_io.save(p, m)
    row = _scan_task(Clip(str(p), "huge.bvh"), None)
    for c, kind in COLUMNS.items():
        if kind == "float64" and row.get(c) is not None:
            assert np.isfinite(row[c]), c
    assert row["error"]  # refused by the reader's bound on positions, or its measures not finite
    assert not _finite(float("inf")) and not _finite(float("nan")) and _finite(None) and _finite(3)
    rows = [{c: row.get(c) for c in COLUMNS}]
    write_table(rows, tmp_path / "t.csv")
    write_html(rows + [{**rows[0], "jitter_m_s3": float("inf"), "error": None}], tmp_path / "t.html")
    assert "huge.bvh" in (tmp_path / "t.html").read_text()


# -- SIGINT and resume ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory) -> Path:
    if not MOCAP.is_dir():
        pytest.skip("needs ../shared")
    root = tmp_path_factory.mktemp("corpus_int")
    (root / "sub").mkdir()
    clips = sorted((MOCAP / "bandai_namco").glob("*.bvh"))[:12]
    for k, c in enumerate(clips):
        m = motion_io.load(c)
        motion_io.save(root / ("sub" if k % 2 else "") / c.name, m[:60])
    # an AMASS-style SMPL clip (24 joints, axis-angle poses), which clean writes as BVH
    rng = np.random.default_rng(0)
    poses = 0.4 * np.tanh(np.cumsum(rng.normal(0, 0.05, (60, 72)), axis=0))
    np.savez(root / "sub" / "smpl_poses.npz", poses=poses, trans=np.zeros((60, 3)), mocap_framerate=np.array(30.0))
    return root


def _start(args: list[str], group: bool) -> subprocess.Popen:
    # started as a script starts a background job: with SIGINT ignored; its own session, so that
    # the test can signal the group and check that nothing of it is left
    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, "-m", "jointlimits", *args],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore,
        start_new_session=True,
    )


def _interrupt(p: subprocess.Popen, ready, group: bool) -> tuple[int, str, float]:
    t_end = time.monotonic() + 120
    while not ready() and p.poll() is None and time.monotonic() < t_end:
        time.sleep(0.01)
    assert p.poll() is None, "the run ended before it could be interrupted"
    t0 = time.monotonic()
    if group:
        os.killpg(p.pid, signal.SIGINT)
    else:
        p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    took = time.monotonic() - t0
    left = _alive_in_session(p.pid)
    t_left = time.monotonic() + 5
    while left and time.monotonic() < t_left:
        time.sleep(0.1)
        left = _alive_in_session(p.pid)
    assert not left, f"processes of the run still alive: {left}"  # no worker, nanny or helper
    assert "leaked" not in err  # no semaphore or shared memory left to the resource tracker
    return p.returncode, err, took


def _alive_in_session(sid: int) -> list[str]:
    """Processes of session ``sid`` that are not zombies waiting to be reaped."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(stat[: stat.rindex(")") + 1])
    return out


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jointlimits", *args], env=_env(), capture_output=True, text=True)


@needs_shared
def test_scan_sigint_to_the_process_then_resume(corpus_dir, tmp_path):
    out = tmp_path / "t.csv"
    args = ["scan", str(corpus_dir), "-o", str(out), "--workers", "1"]
    resume = tmp_path / ".t.csv.resume"
    p = _start(args, group=False)
    rc, err, took = _interrupt(p, lambda: any(resume.rglob("*.npz")), group=False)
    assert rc == 130 and took < 5, (rc, took, err)
    assert "interrupted:" in err and "of 13 clips scanned" in err and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob("*.tmp*"))
    done = {f: f.stat().st_mtime_ns for f in resume.rglob("*.npz")}
    r = _run(args)
    assert r.returncode == 0, r.stderr
    assert not resume.exists()
    fresh = tmp_path / "fresh.csv"
    r = _run(["scan", str(corpus_dir), "-o", str(fresh), "--workers", "1", "-q"])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == fresh.read_bytes()
    assert done  # the interrupted run's clips were kept until the table was written


@needs_shared
def test_clean_sigint_to_the_group_then_resume(corpus_dir, tmp_path):
    out = tmp_path / "clean"
    args = ["clean", str(corpus_dir), "--out", str(out), "--detect", "--workers", "1"]
    p = _start(args, group=True)
    rc, err, took = _interrupt(p, lambda: any((out / ".jointlimits-clean").glob("*.npz")), group=True)
    assert rc == 130 and took < 5, (rc, took, err)
    assert "of 13 clips cleaned" in err and "Traceback" not in err
    assert not (out / "scan-before.parquet").exists()
    kept = {f: f.stat().st_mtime_ns for f in out.rglob("*.bvh")}
    assert kept
    r = _run(args)
    assert r.returncode == 0, r.stderr
    assert "done by an earlier run and kept" in r.stdout
    assert "1 .npz input(s) written as .bvh" in r.stdout and (out / "sub" / "smpl_poses.bvh").is_file()
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items())  # not cleaned again
    resumed = {
        f.relative_to(out): f.read_bytes()
        for f in out.rglob("*")
        if f.is_file() and ".jointlimits-clean" not in f.parts
    }
    assert len(resumed) == 15  # 13 clips (the AMASS one as BVH) and the two scans
    # one uninterrupted run into the same folder (--force redoes every clip) writes the same bytes
    r = _run([*args, "--force", "-q"])
    assert r.returncode == 0, r.stderr
    for f, data in resumed.items():
        assert (out / f).read_bytes() == data, f
    assert r.returncode == 0 and all(f.stat().st_mtime_ns != t for f, t in kept.items())


@needs_shared
def test_fit_sigint_writes_nothing(corpus_dir, tmp_path):
    out = tmp_path / "l.json"
    cache = tmp_path / "cache"
    p = _start(["fit", str(corpus_dir), "-o", str(out), "--workers", "1", "--cache", str(cache)], group=False)
    rc, err, took = _interrupt(p, lambda: any(cache.rglob("*.npz")), group=False)
    assert rc == 130 and took < 5, (rc, took, err)
    assert "nothing was written" in err and not out.exists()

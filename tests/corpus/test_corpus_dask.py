"""The corpus tool on a real Dask cluster: a ``dask scheduler`` and two ``dask worker`` processes
on 127.0.0.1 (free ports), started and stopped here, one per module. A tiny corpus of real clips
cut short (two skeleton groups, a bad file in a folder)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jointlimits import corpus
from jointlimits import io as motion_io
from jointlimits.corpus.engine import Engine
from jointlimits.limits.model import JointLimits

from conftest import MOCAP, needs_shared

pytestmark = needs_shared
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

SRC = str(Path(__file__).resolve().parents[2] / "src")
BANDAI = ["dataset-1_bow_normal_001", "dataset-1_walk_normal_001", "dataset-1_kick_normal_001"]
FRAMES = 40


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}


def _dask(*args: str) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("dask")
    cmd = [str(exe), *args] if exe.is_file() else [sys.executable, "-m", "distributed.cli.dask_" + args[0], *args[1:]]
    return subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Cluster:
    def __init__(self) -> None:
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard")
        self.workers = [self.worker() for _ in range(2)]
        self.client = distributed.Client(self.address, timeout="60s")
        self.client.wait_for_workers(2, timeout=60)

    def worker(self) -> subprocess.Popen:
        return _dask("worker", self.address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1", "--no-nanny")

    def close(self) -> None:
        self.client.close()
        for p in [*self.workers, self.scheduler]:
            p.terminate()
        for p in [*self.workers, self.scheduler]:
            try:
                p.wait(1)  # a dask worker can take 10 s to leave on SIGTERM; nothing here needs it graceful
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


@pytest.fixture(scope="session")  # kept across the module switches of an xdist worker
def cluster():
    c = Cluster()
    yield c
    c.close()


@pytest.fixture(scope="session")  # kept across the module switches of an xdist worker
def clips(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for k, name in enumerate(BANDAI):
        m = motion_io.load(MOCAP / "bandai_namco" / f"{name}.bvh")
        (root / "walks").mkdir(exist_ok=True)
        motion_io.save(root / ("walks" if k else "") / f"{name}.bvh", m[: FRAMES + 10 * k])
    (root / "cmu").mkdir()
    m = motion_io.load(MOCAP / "cmu_cgspeed_mb" / "01_01.bvh")[::4]
    for k in range(2):  # two clips of one actor: one skeleton, one rest pose
        motion_io.save(root / "cmu" / f"01_01_part{k}.bvh", m[k * FRAMES : (k + 1) * FRAMES])
    (root / "walks" / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    return root


def _walks(clips: Path, **options) -> dict:
    """The in-memory fit of the clips in walks/ (in the corpus' order), as a document."""
    paths = [c.path for c in corpus.expand([clips / "walks"])[0] if not c.path.endswith("broken.bvh")]
    return JointLimits.fit([motion_io.load(p) for p in paths], **options).to_dict()


def _in_memory(res: corpus.CorpusFit, group: str, **options) -> JointLimits:
    return JointLimits.fit([motion_io.load(c.path) for c in res.groups[group]], **options)


SHAPES = [
    {"shape": "kdop", "swing_twist": True},
    {"shape": "implicit", "coupled": True, "joints": ["UpperArm_L", "LowerArm_L", "UpperLeg_R", "LowerLeg_R"]},
    {"shape": "oriented-box", "reference": "first", "exclude": ["Hips"]},
]


def test_fit_equals_in_memory_for_every_shape(cluster, clips):
    group = None
    for opts in SHAPES:
        res = corpus.fit([clips / "walks", clips / f"{BANDAI[0]}.bvh"], cluster.client, **opts)
        (group,) = res.limits
        assert [Path(f).name for f, _ in res.failures] == ["broken.bvh"]
        assert res.limits[group].to_dict() == _in_memory(res, group, **opts).to_dict(), opts
    assert group is not None and group.startswith("bandai-")
    for opts in [{"shape": "ellipsoid", "mirror": True, "root": True}]:
        res = corpus.fit([clips / "cmu"], cluster.client, **opts)  # a left/right symmetric skeleton
        (group,) = res.limits
        assert not res.failures and len(res.groups[group]) == 2
        assert res.limits[group].to_dict() == _in_memory(res, group, **opts).to_dict(), opts


def _cli(*args: str):
    from click.testing import CliRunner

    from jointlimits.cli import main

    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    r.returncode = r.exit_code  # type: ignore[attr-defined]
    return r


def test_cli_fit_and_scan_through_scheduler_equal_local(cluster, clips, tmp_path):
    r = _cli("fit", str(clips), "-o", str(tmp_path / "one.json"), "--scheduler", cluster.address, "-q")
    assert r.returncode == 2 and "2 skeleton groups" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = _cli("fit", str(clips), "-o", str(tmp_path / "lim"), "--scheduler", cluster.address, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [s["file"].endswith("broken.bvh") for s in out["skipped"]] == [True]
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as threads:
        local = corpus.fit([clips], threads)
    for g, lim in local.limits.items():
        assert JointLimits.load(out["groups"][g]["output"]).to_dict() == lim.to_dict()
    bandai = next(g for g in local.limits if g.startswith("bandai"))
    r = _cli(
        "scan", str(clips), "-o", str(tmp_path / "qa.parquet"), "--html", str(tmp_path / "qa.html"),
        "--limits", out["groups"][bandai]["output"], "--scheduler", cluster.address, "-q",
    )  # fmt: skip
    assert r.returncode == 3, r.stderr  # partial: broken.bvh unread, the cmu clips without limits
    rows = corpus.read_table(tmp_path / "qa.parquet")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as threads:
        here = corpus.scan([clips], threads, limits=out["groups"][bandai]["output"]).rows
    assert rows == here
    assert [Path(r["file"]).name for r in rows if r["error"]] == ["broken.bvh"]
    assert {r["group"] for r in rows if not r["error"]} == set(local.limits)
    assert "<img src='data:image/png;base64," in (tmp_path / "qa.html").read_text()


def test_worker_killed_mid_run_same_result(cluster, clips, tmp_path, monkeypatch):
    monkeypatch.setattr(Engine, "BATCH_CLIPS", 1)  # a task per clip: some are out when one dies
    seen = threading.Event()
    box: dict = {}

    def run() -> None:
        box["res"] = corpus.fit([clips / "walks"], cluster.client, shape="kdop", cache=tmp_path / "cache")
        seen.set()

    t = threading.Thread(target=run)
    t.start()
    while not any((tmp_path / "cache").rglob("*.npz")) and t.is_alive():
        time.sleep(0.005)
    victim = cluster.workers.pop(0)
    victim.send_signal(signal.SIGKILL)
    victim.wait()  # one worker is left for the rest of the module
    t.join(120)
    assert seen.is_set()
    assert [v.to_dict() for v in box["res"].limits.values()] == [_walks(clips, shape="kdop")]


def test_resume_from_cache_after_the_run_is_killed(cluster, clips, tmp_path):
    cache = tmp_path / "cache"
    args = [
        "fit",
        str(clips / "walks"),
        "-o",
        str(tmp_path / "l.json"),
        "--scheduler",
        cluster.address,
        "--cache",
        str(cache),
        "-q",
    ]
    p = subprocess.Popen([sys.executable, "-m", "jointlimits", *args], env=_env())
    while not any(cache.rglob("*.npz")) and p.poll() is None:
        time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    before = {f: f.stat().st_mtime_ns for f in cache.rglob("*.npz")}
    assert before and not (tmp_path / "l.json").exists()
    r = _cli(*args)
    assert r.returncode == 0, r.stderr
    after = {f: f.stat().st_mtime_ns for f in cache.rglob("*.npz")}
    assert all(after[f] == t for f, t in before.items())  # reused, not recomputed
    assert JointLimits.load(tmp_path / "l.json").to_dict() == _walks(clips)

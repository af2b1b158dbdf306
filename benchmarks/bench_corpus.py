"""Corpus runs on Dask: memory that does not grow with the corpus, throughput against the
in-memory fit, scaling with workers, and identical results however the run is made.

    python -m benchmarks.bench_corpus [--quick]

A corpus is written to a temp folder from the shared clips of several conventions: segments of
each clip under many names in nested folders, every third resampled (to 0.5x or 1.5x its rate)
and every third mirrored (skeletons that are left/right symmetric). Full: 2,000 files (and a
200-file corpus for the memory comparison); quick: 60 and 6 files of short segments.

Each configuration runs in a fresh process (peak RSS = ``VmHWM``; a worker's own peak is read on
the worker). Throughput is clip frames per wall second of ``jointlimits.corpus.fit`` on an already
running local cluster, against the in-memory ``JointLimits.fit`` (load every clip, then fit) of
the same clips in the same run, each after a warm-up fit of one clip (imports, first calls; on
every worker), on the big corpus when it has at most 100,000 frames (else the small one: the
in-memory fit holds every frame); also with ``keep_bytes=0`` (every clip parsed in both passes),
and in CPU time of the client, its scheduler and the workers together. The identity
checks compare the limits files (``to_dict``) and the scan tables of: the default local cluster,
one worker, two workers, an external ``dask scheduler`` with two ``dask worker`` processes, and
a run killed (SIGKILL) once its cache holds some clips, then resumed from that cache.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._common import MOCAP, ROOT, main_single, record, skipped

BENCH = "corpus"
SRC = str(ROOT / "src")
#: source clips (convention folders); bandai has 20+ clips of one skeleton
SOURCES = ["bandai_namco", "cmu_cgspeed_mb/01_01.bvh", "cmu_cgspeed_max", "perfume"]

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
args = json.loads(sys.argv[2])
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) * 1024
import numpy
from jointlimits import corpus, io
from jointlimits.limits.model import JointLimits
out = {}
from jointlimits.corpus.sources import expand
warm = expand([args["folder"]])[0][0].path  # a first fit on one clip: imports and first calls
if args["mode"] == "memory":
    JointLimits.fit(io.load(warm), shape=args["shape"])
    with open('/proc/self/clear_refs', 'w') as fh:
        fh.write('5')
    from jointlimits.corpus.groups import Grouping
    from jointlimits.limits.rest import rest_directions
    t, c = time.perf_counter(), time.process_time()
    ms = [io.load(c.path) for c in expand([args["folder"]])[0]]
    grouping, groups = Grouping(), {}
    for m in ms:
        groups.setdefault(grouping.assign(m.skeleton, rest_directions(m.skeleton)), []).append(m)
    out["limits"] = {g: JointLimits.fit(v, shape=args["shape"]).to_dict() for g, v in groups.items()}
    out["wall"] = time.perf_counter() - t
    out["cpu"] = time.process_time() - c
    out["frames"] = sum(m.num_frames for m in ms)
else:
    import distributed
    if args["mode"] == "scheduler":
        client = distributed.Client(args["address"])
    else:
        cluster = distributed.LocalCluster(n_workers=args["workers"], threads_per_worker=1, dashboard_address=None)
        client = distributed.Client(cluster)
    corpus.fit([warm], client, shape=args["shape"])
    def warm_worker(path, shape):  # every worker, as the warm-up fit did on one: its two passes
        from jointlimits.limits.fit import FitOptions, clip_clouds, clip_summary, plan_fit
        o = FitOptions(shape=shape)
        m = io.load(path)
        clip_clouds(m, plan_fit([clip_summary(m, o)], o))
    client.run(warm_worker, warm, args["shape"])
    def worker_reset():
        with open('/proc/self/clear_refs', 'w') as fh:
            fh.write('5')
    client.run(worker_reset)
    with open('/proc/self/clear_refs', 'w') as fh:
        fh.write('5')
    w0 = client.run(time.process_time)
    t, c = time.perf_counter(), time.process_time()
    res = corpus.fit([args["folder"]], client, shape=args["shape"], keep_bytes=args.get("keep"))
    out["wall"] = time.perf_counter() - t
    cpu = time.process_time() - c
    out["cpu"] = cpu + sum(v - w0.get(k, 0.0) for k, v in client.run(time.process_time).items())
    out["frames"] = sum(l.settings["frames"] for l in res.limits.values())
    out["limits"] = {g: l.to_dict() for g, l in res.limits.items()}
    out["failures"] = len(res.failures)
    out["worker_peak"] = max(client.run(hwm).values())
    out["client_peak_fit"] = hwm()
    if args.get("scan"):
        rows = corpus.scan([args["folder"]], client).rows
        out["scan"] = rows
out["client_peak"] = hwm()
print("RESULT " + json.dumps(out))
"""


def _child(args: dict, timeout: float = 7200) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    r = subprocess.run(
        [sys.executable, "-c", CHILD, SRC, json.dumps(args)], capture_output=True, text=True, timeout=timeout, env=env
    )
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"corpus child failed: {r.stderr[-2000:]}")


def make_corpus(folder: Path, files: int, frames: int) -> tuple[int, list[str]]:
    """Write ``files`` clips of about ``frames`` frames into ``folder``; (frames written, paths)."""
    import numpy as np

    from jointlimits import io
    from jointlimits.errors import SkeletonError
    from jointlimits.motion.mirror import mirror_motion, mirror_plane
    from jointlimits.motion.resample import resample

    clips = []
    for s in SOURCES:
        p = MOCAP / s
        clips += sorted(p.glob("*.bvh")) if p.is_dir() else [p]
    motions = [io.load(p) for p in clips]
    planes = []
    for m in motions:
        try:
            planes.append(mirror_plane(m.skeleton))
        except SkeletonError:
            planes.append(None)
    rng = np.random.default_rng(0)
    total, paths = 0, []
    for i in range(files):
        k = i % len(motions)
        m = motions[k]
        n = max(10, min(m.num_frames, int(frames * rng.uniform(0.5, 1.5))))
        a = int(rng.integers(0, max(1, m.num_frames - n)))
        seg = m[a : a + n]
        tag = "plain"
        if i % 3 == 1:
            seg = resample(seg, seg.fps * (0.5 if i % 2 else 1.5))
            tag = "resampled"
        elif i % 3 == 2 and planes[k] is not None:
            seg = mirror_motion(seg, normal=planes[k])
            tag = "mirrored"
        path = folder / f"batch{i // 100:03d}" / clips[k].parent.name / f"{clips[k].stem}_{i:05d}_{tag}.bvh"
        path.parent.mkdir(parents=True, exist_ok=True)
        io.save(path, seg)
        total += seg.num_frames
        paths.append(str(path))
    return total, paths


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _external(address_port: int) -> list[subprocess.Popen]:
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    dask = str(Path(sys.executable).with_name("dask"))
    addr = f"tcp://127.0.0.1:{address_port}"
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(address_port), "--no-dashboard"],
            env=env,
            stderr=subprocess.DEVNULL,
        )
    ]
    time.sleep(2)
    procs += [
        subprocess.Popen(
            [dask, "worker", addr, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    time.sleep(3)
    return procs


def _kill_and_resume(folder: Path, cache: Path, out: Path, shape: str) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    args = [
        sys.executable,
        "-m",
        "jointlimits",
        "fit",
        str(folder),
        "-o",
        str(out),
        "--cache",
        str(cache),
        "--shape",
        shape,
        "-q",
        "--force",
    ]
    p = subprocess.Popen(args, env=env)
    while p.poll() is None and len(list(cache.rglob("*.pkl"))) < 3:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    cached = len(list(cache.rglob("*.pkl")))
    subprocess.run(args, env=env, check=True, timeout=7200)
    lim = {}
    for f in sorted(out.glob("*.json")) if out.is_dir() else [out]:
        from jointlimits.limits.model import JointLimits

        lim[f.stem] = JointLimits.load(f).to_dict()
    return {"limits": lim, "cached_before_resume": cached}


def run(quick: bool = False) -> list[dict]:
    if not MOCAP.is_dir():
        return [skipped(BENCH, "corpus", "../shared not found")]
    try:
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        return [skipped(BENCH, "corpus", "dask[distributed] and pyarrow are needed (the corpus extra)")]
    big_n, small_n, frames = (60, 6, 150) if quick else (2000, 200, 2600)
    if os.environ.get("JL_BENCH_CORPUS"):  # "BIG,SMALL,FRAMES": a run between quick and full
        big_n, small_n, frames = (int(x) for x in os.environ["JL_BENCH_CORPUS"].split(","))
    shape = "ellipsoid"
    recs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="jl-corpus-") as tmp:
        t = Path(tmp)
        big, small = t / "big", t / "small"
        big_frames, _ = make_corpus(big, big_n, frames)
        small_frames, _ = make_corpus(small, small_n, frames)
        data = f"{big_n} files, {big_frames:,} frames (small: {small_n} files, {small_frames:,} frames)"
        recs.append(record(BENCH, "corpus frames", big_frames, "frames", kind="count", data=data))
        # throughput: in-memory fit vs one and two workers, on the small corpus (the in-memory fit
        # holds every frame)
        tp = big if big_frames <= 100_000 else small
        mem = _child({"mode": "memory", "folder": str(tp), "shape": shape})
        one_s = _child({"mode": "local", "workers": 1, "folder": str(small), "shape": shape})
        one = _child({"mode": "local", "workers": 1, "folder": str(big), "shape": shape, "scan": True})
        twice = _child({"mode": "local", "workers": 1, "folder": str(tp), "shape": shape, "keep": 0})
        one_tp = one if tp == big else one_s
        mem_rate, one_rate = mem["frames"] / mem["wall"], one_tp["frames"] / one_tp["wall"]
        twice_rate = twice["frames"] / twice["wall"]
        cpu = {k: r["frames"] / r["cpu"] for k, r in (("mem", mem), ("one", one_tp), ("twice", twice))}
        tpdata = f"{tp.name} corpus, {mem['frames']:,} frames"
        recs.append(
            record(
                BENCH,
                "identical to the in-memory fit: 1 worker",
                int(mem["limits"] == one_tp["limits"] == twice["limits"]),
                "",
                kind="count",
                data=tpdata,
            )
        )
        recs.append(record(BENCH, "in-memory fit (load + fit)", mem_rate, "frames/s", kind="rate", data=tpdata))
        recs.append(
            record(
                BENCH,
                "corpus fit, 1 worker",
                one_rate,
                "frames/s",
                kind="rate",
                data=tpdata,
                anchor="in-memory fit",
                anchor_value=mem_rate,
                note="target ratio >= 0.8",
            )  # fmt: skip
        )
        recs.append(
            record(
                BENCH,
                "corpus fit, 1 worker, parsing twice",
                twice_rate,
                "frames/s",
                kind="rate",
                data=tpdata,
                anchor="in-memory fit",
                anchor_value=mem_rate,
                note="keep_bytes=0: every clip parsed in both passes",
            )  # fmt: skip
        )
        # CPU time (client, its scheduler and the workers together): steadier than wall time on a
        # loaded machine
        for name, k in (("corpus fit, 1 worker, CPU", "one"), ("corpus fit, 1 worker, parsing twice, CPU", "twice")):
            recs.append(
                record(
                    BENCH,
                    name,
                    cpu[k],
                    "frames/CPU-s",
                    kind="rate",
                    data=tpdata,
                    anchor="in-memory fit",
                    anchor_value=cpu["mem"],
                )  # fmt: skip
            )
        two = _child({"mode": "local", "workers": 2, "folder": str(big), "shape": shape, "scan": True})
        r1, r2 = one["frames"] / one["wall"], two["frames"] / two["wall"]
        recs.append(
            record(
                BENCH,
                "corpus fit, 2 workers",
                r2,
                "frames/s",
                kind="rate",
                data=data,
                anchor="1 worker",
                anchor_value=r1,
                note="target ratio >= 1.6 (2 cores shared with others)",
            )  # fmt: skip
        )
        # memory: the peak at the big corpus against the small one (one worker)
        recs.append(
            record(
                BENCH,
                "peak RSS per worker, big corpus",
                one["worker_peak"] / 2**20,
                "MiB",
                kind="memory",
                data=data,
                anchor="small corpus",
                anchor_value=one_s["worker_peak"] / 2**20,
                note="target ratio <= 1.2",
            )  # fmt: skip
        )
        recs.append(
            record(
                BENCH,
                "peak RSS of the client, big corpus",
                one["client_peak"] / 2**20,
                "MiB",
                kind="memory",
                data=data,
                anchor="small corpus",
                anchor_value=one_s["client_peak"] / 2**20,
                note="target ratio <= 1.2",
            )  # fmt: skip
        )
        recs.append(
            record(
                BENCH,
                "peak RSS of the client, big corpus, fit only",
                one["client_peak_fit"] / 2**20,
                "MiB",
                kind="memory",
                data=data,
                anchor="small corpus",
                anchor_value=one_s["client_peak_fit"] / 2**20,
                note="before the scan (the scan returns a row per clip)",
            )  # fmt: skip
        )
        # identical results however the run is made
        runs = {"1 worker": one, "2 workers": two}
        port = _free_port()
        procs = _external(port)
        try:
            runs["external scheduler"] = _child(
                {
                    "mode": "scheduler",
                    "address": f"tcp://127.0.0.1:{port}",
                    "folder": str(big),
                    "shape": shape,
                    "scan": True,
                }
            )
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(30)
        runs["kill and resume"] = _kill_and_resume(big, t / "cache", t / "limits", shape)
        same = 0
        for name, r in runs.items():
            ok = r["limits"] == one["limits"] and ("scan" not in r or r["scan"] == one["scan"])
            same += ok
            recs.append(record(BENCH, f"identical to 1 worker: {name}", int(ok), "", kind="count", data=data))
        recs.append(
            record(
                BENCH,
                "kill and resume: clips cached before the kill",
                runs["kill and resume"]["cached_before_resume"],
                "entries",
                kind="count",
            )
        )
    return recs


if __name__ == "__main__":
    main_single(BENCH, run)

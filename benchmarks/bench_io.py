"""BVH I/O, Euler->quaternion and FK timings, against pymotion / bvhio when installed; BVH parse
speed against a plain C++ ``std::from_chars`` loop; ``apply``'s peak memory against the file's size.

    python -m benchmarks.bench_io [--quick]

Medians of repeated runs, BLAS pinned to one thread. Without ../shared a procedural clip is used.
Anchors in the same run: pymotion's and bvhio's load of the same file (when installed); for the
parse, a C++ program compiled here with ``g++ -O3`` that turns the same motion text (the largest
clip of each of the 8 conventions) into float64 with ``std::from_chars`` (process CPU time, best
of repeats, on both sides); for ``apply``, the BVH file's size (a temp file of one shared clip's
frames repeated, ~157 MB, ~40 MB with --quick; peak = ru_maxrss of the ``jointlimits apply``
process).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import _compat as C
from ._common import MOCAP, ROOT, main_single, record, skipped
from ._timing import median

BENCH = "io"
DEFAULT = MOCAP / "cmu_cgspeed_max" / "131_01.bvh"


def run(quick: bool, clip: Path = DEFAULT) -> list[dict]:
    bvh = C.mod("io.bvh")
    forward_kinematics = C.mod("motion.skeleton").forward_kinematics
    tmpdir = Path(tempfile.mkdtemp())
    if not clip.is_file():
        clip = tmpdir / "procedural.bvh"
        bvh.save(clip, C.mod("motion.procedural").range_of_motion(seconds=33.0, fps=30))
        data = "procedural clip (33 s at 30 fps; ../shared not found)"
    else:
        data = str(clip.relative_to(MOCAP)) if clip.is_relative_to(MOCAP) else str(clip)
    m = bvh.load(clip)
    data += f", {m.num_frames} frames x {m.num_joints} joints"
    rep = 7 if quick else 15
    out = tmpdir / "out.bvh"
    t_load = median(lambda: bvh.load(clip), repeat=rep)
    t_save = median(lambda: bvh.save(out, m), repeat=rep)
    ang = np.random.default_rng(0).uniform(-180, 180, (m.num_frames, m.num_joints, 3))
    t_euler = median(lambda: C.euler_to_quat_degrees(ang, "zxy"), repeat=rep)
    t_fk = median(lambda: forward_kinematics(m), repeat=20 if quick else 50)

    peers: dict[str, float] = {}
    recs = []
    try:
        from pymotion.io.bvh import BVH

        def pm():
            b = BVH()
            b.load(str(clip))
            b.get_data()

        peers["pymotion"] = median(pm, repeat=3 if quick else 7)
        recs.append(record(BENCH, "pymotion load + get_data", 1e3 * peers["pymotion"], "ms", data=data))
    except ImportError:
        recs.append(skipped(BENCH, "pymotion load + get_data", "pymotion not installed (pip install -e '.[bench]')"))
    try:
        import bvhio

        peers["bvhio"] = median(lambda: bvhio.readAsBvh(str(clip)), repeat=3 if quick else 5)
        recs.append(record(BENCH, "bvhio readAsBvh", 1e3 * peers["bvhio"], "ms", data=data))
    except ImportError:
        recs.append(skipped(BENCH, "bvhio readAsBvh", "bvhio not installed (pip install -e '.[bench]')"))
    peer = next(iter(peers), None)
    load = record(
        BENCH,
        "load (text -> local quaternions)",
        1e3 * t_load,
        "ms",
        data=data,
        anchor=f"{peer} load, same run" if peer else None,
        anchor_value=1e3 * peers[peer] if peer else None,
        target=20.0,
    )
    return (
        [
            load,
            record(BENCH, "save (atomic, exact values)", 1e3 * t_save, "ms", data=data),
            record(BENCH, "Euler -> quaternion (all joints)", 1e3 * t_euler, "ms", data=data),
            record(BENCH, "forward kinematics", 1e3 * t_fk, "ms", data=data),
            record(
                BENCH,
                "forward kinematics throughput",
                m.num_frames / t_fk,
                "frames/s",
                kind="rate",
                data=data,
                target=250_000,
            ),
        ]
        + recs
        + parse_speed(quick, tmpdir)
        + apply_memory(quick, tmpdir)
    )


_FROM_CHARS = r"""
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>
static double cpu() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char** argv) {
    const int reps = std::atoi(argv[1]);
    for (int f = 2; f < argc; ++f) {
        std::ifstream in(argv[f], std::ios::binary);
        std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::size_t start = s.find('\n', s.find("Frame Time")) + 1;
        std::vector<double> out;
        out.reserve((s.size() - start) / 2);
        double best = 1e30;
        for (int r = 0; r < reps; ++r) {
            out.clear();
            const double t0 = cpu();
            const char* p = s.data() + start;
            const char* e = s.data() + s.size();
            while (p < e) {
                while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) ++p;
                if (p == e) break;
                double v;
                const auto res = std::from_chars(p, e, v);
                if (res.ec != std::errc()) return 2;
                out.push_back(v);
                p = res.ptr;
            }
            const double t = cpu() - t0;
            if (t < best) best = t;
        }
        std::printf("%zu %zu %.9f\n", s.size() - start, out.size(), best);
    }
}
"""


def _clips() -> list[Path]:
    """The largest clip of each convention."""
    return [max(d.glob("*.bvh"), key=lambda p: p.stat().st_size) for d in sorted(MOCAP.iterdir()) if d.is_dir()]


def parse_speed(quick: bool, tmpdir: Path) -> list[dict]:
    """MB/s of the reader's parse of the MOTION text (values and row offsets, block by block as
    ``load`` does), and frames/s of the whole ``load`` (file -> Motion: header, rows, quaternions,
    fingerprints), against the from_chars loop over the same motion text, per convention."""
    from jointlimits.io.bvh._parse import _BLOCK_BYTES, _parse_rows_ranges

    bvh = C.mod("io.bvh")
    if not MOCAP.is_dir():
        return [skipped(BENCH, "parse vs from_chars", "../shared not found")]
    gxx = shutil.which("g++")
    if gxx is None:
        return [skipped(BENCH, "parse vs from_chars", "g++ not found")]
    src, exe = tmpdir / "from_chars.cpp", tmpdir / "from_chars"
    src.write_text(_FROM_CHARS)
    subprocess.run([gxx, "-O3", "-std=c++17", str(src), "-o", str(exe)], check=True)
    clips = _clips()
    rounds = 5 if quick else 12
    texts = []
    for clip in clips:
        raw = clip.read_bytes()
        body = raw[raw.index(b"\n", raw.index(b"Frame Time")) + 1 :]
        blocks, at = [], 0
        while at < len(body):  # cut as the reader cuts: at the last line ending of each block
            cut = body.rfind(b"\n", at, at + _BLOCK_BYTES)
            end = len(body) if at + _BLOCK_BYTES >= len(body) or cut < 0 else cut + 1
            blocks.append(body[at:end])
            at = end
        texts.append((len(raw), len(body), len(body.split(b"\n", 1)[0].split()), blocks))
    inf = float("inf")
    t_ref, t_ours, t_load = [inf] * len(clips), [inf] * len(clips), [inf] * len(clips)
    counts = [0] * len(clips)
    # rounds of the reference (its best of 3) and ours, one after the other, so that both see the
    # same load of the shared machine; the best of each
    for _ in range(rounds):
        ref = subprocess.run([str(exe), "3", *map(str, clips)], check=True, capture_output=True, text=True)
        for c, (clip, line) in enumerate(zip(clips, ref.stdout.split("\n"))):
            _, nvals, t = line.split()
            counts[c] = int(nvals)
            t_ref[c] = min(t_ref[c], float(t))
            _, _, n_ch, blocks = texts[c]
            t0 = time.process_time()
            n = sum(_parse_rows_ranges(b, 1, 0, n_ch, None)[0].size for b in blocks)
            t_ours[c] = min(t_ours[c], time.process_time() - t0)
            assert n == counts[c], (clip, n, nvals)
            t0 = time.process_time()
            bvh.load(clip)
            t_load[c] = min(t_load[c], time.process_time() - t0)
    recs = []
    for c, clip in enumerate(clips):
        _, nbytes, _, _ = texts[c]
        n = counts[c]
        ref_rate = nbytes / t_ref[c] / 1e6
        name = clip.parent.name
        data = f"{clip.relative_to(MOCAP)}, {nbytes / 1e6:.2f} MB of motion text, {n:,} values"
        recs.append(
            record(
                BENCH,
                f"parse {name} (text -> float64 + row offsets)",
                nbytes / t_ours[c] / 1e6,
                "MB/s",
                kind="rate",
                data=data,
                anchor="C++ from_chars loop -O3, same run",
                anchor_value=ref_rate,
                target=0.8 * ref_rate,
            )
        )
        frames = n // texts[c][2]
        recs.append(
            record(
                BENCH,
                f"load {name} (whole file -> Motion)",
                frames / t_load[c],
                "frames/s",
                kind="rate",
                data=data + f", {frames:,} frames",
                anchor="C++ from_chars loop -O3 over the motion text, same run",
                anchor_value=frames / t_ref[c],
                target=0.8 * frames / t_ref[c],
            )
        )
    return recs


def apply_memory(quick: bool, tmpdir: Path) -> list[dict]:
    """Peak memory of ``jointlimits apply`` on one big clip against the file's size."""
    clip = MOCAP / "lafan1" / "ground2_subject2.bvh"
    other = MOCAP / "lafan1" / "push1_subject2.bvh"
    if not clip.is_file() or not other.is_file():
        return [skipped(BENCH, "apply peak memory / file size", "../shared not found")]
    raw = clip.read_bytes()
    i = raw.index(b"Frames:")
    j = raw.index(b"\n", raw.index(b"Frame Time")) + 1
    eol = b"\r\n" if raw[i:j].count(b"\r") else b"\n"
    body = raw[j:]
    copies = 10 if quick else 40
    big = tmpdir / "big.bvh"
    with open(big, "wb") as fh:
        fh.write(raw[:i] + b"Frames: %d" % (body.count(b"\n") * copies) + eol)
        fh.write(raw[raw.index(b"Frame Time") : j])
        for _ in range(copies):
            fh.write(body)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cli = [sys.executable, "-m", "jointlimits"]
    lim = tmpdir / "limits.json"
    subprocess.run([*cli, "fit", str(other), "-o", str(lim), "-q"], env=env, check=True)
    proc = subprocess.Popen([*cli, "apply", str(lim), str(big), "-o", str(tmpdir / "applied.bvh"), "-q"], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"jointlimits apply failed ({proc.returncode})")
    size = big.stat().st_size
    peak = usage.ru_maxrss * 1024
    data = f"lafan1/ground2_subject2.bvh frames x{copies}: {size / 1e6:.0f} MB"
    big.unlink()
    return [
        record(
            BENCH,
            "apply peak memory",
            peak / 1e6,
            "MB",
            kind="memory",
            data=data,
            anchor="file size",
            anchor_value=size / 1e6,
            target=3.0 * size / 1e6,
        )
    ]


if __name__ == "__main__":
    main_single(BENCH, run)

"""Fuzz the AMASS / SMPL ``.npz`` reader (``jointlimits.io.amass.load``) and print counts per outcome.

Seeds are hand-made valid files of the three layouts (SMPL-H ``poses`` [F, 156], SMPL-X
``root_orient`` + ``pose_*``, SMPL ``poses`` [F, 72], with ``trans``, ``betas``, a frame rate,
rest joints ``J``), their poses taken from a shared BVH clip's rotations (as axis-angle) or random.
Mutations edit the arrays (NaN, inf, huge values, wrong shapes, dtypes: complex, strings, bool;
keys dropped or replaced), or the zip's bytes (truncated, flipped); targeted cases declare huge
arrays over a few bytes (zip bombs), hold pickled objects, or are special files. The edge
mutations (#38): empty and huge frame counts, poses stored as uint8 / int8 / float16 of up to a
million frames (a few KB compressed, past the memory budget once float64), a complete member that
expands to 1.25 GB, a zip directory listing up to a million entries (55 MB), frame rates from
5e-324 to 1e308 (0, negative, NaN), translations and rest joints of 1e308. A file that loads must
give finite rotations (unit quaternions) and positions, and finite forward kinematics. The last
line of output is a JSON summary (``fuzzlib.summary``).

    python scripts/fuzz_amass.py [--n 2000] [--seed 0] [--light]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_npz
import fuzzlib


# ------------------------------------------------------------------------------- worker side
def errors():
    from jointlimits.errors import FormatError

    return (FormatError,)


def read(kind: str, path: str) -> str:
    from jointlimits.io import amass
    from jointlimits.motion.skeleton import forward_kinematics

    m = amass.load(path)
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.positions)), "non-finite motion"
    assert np.allclose(np.linalg.norm(m.rotations, axis=-1), 1.0, atol=1e-6), "non-unit rotations"
    assert np.all(np.isfinite(m.skeleton.offsets)), "non-finite offsets"
    gr, gp = forward_kinematics(m)
    assert np.all(np.isfinite(gr)) and np.all(np.isfinite(gp)), "non-finite forward kinematics"
    return f"{m.rotations.shape}"


# ------------------------------------------------------------------------------- parent side
def _clip_angles(frames: int = 40) -> np.ndarray:
    """Axis-angle vectors [F, 22, 3] from a shared clip's Euler channels (any convention: the
    first 22 joints' three rotation channels, read as XYZ degrees), or random ones."""
    rng = np.random.default_rng(1)
    for p in sorted(fuzzlib.MOCAP.glob("*/*.bvh"))[:1]:
        text = p.read_text(encoding="latin-1").split("MOTION")[1].split("\n")[3 : 3 + frames]
        rows = np.array([[float(x) for x in r.split()] for r in text if r.strip()])
        ang = np.radians(rows[:, 3:]).reshape(len(rows), -1, 3)[:, :22]
        if ang.shape[1] == 22:
            return ang
    return rng.normal(0, 0.5, (frames, 22, 3))


def seeds() -> list[tuple[str, dict[str, np.ndarray]]]:
    rng = np.random.default_rng(0)
    body = _clip_angles()
    F = len(body)
    hands = rng.normal(0, 0.2, (F, 30, 3))
    trans = np.cumsum(rng.normal(0, 0.01, (F, 3)), axis=0)
    J = rng.normal(0, 0.2, (55, 3))
    return [
        (
            "smplh",
            {
                "poses": np.concatenate([body, hands], 1).reshape(F, -1),
                "trans": trans,
                "betas": rng.normal(size=16),
                "gender": np.array("female"),
                "mocap_framerate": np.array(120.0),
            },
        ),
        (
            "smplx",
            {
                "root_orient": body[:, 0],
                "pose_body": body[:, 1:].reshape(F, -1),
                "pose_hand": hands.reshape(F, -1),
                "pose_jaw": np.zeros((F, 3)),
                "pose_eye": np.zeros((F, 6)),
                "trans": trans,
                "mocap_frame_rate": np.array(60.0),
                "surface_model_type": np.array("smplx"),
                "J": J,
            },
        ),
        (
            "smpl",
            {"poses": np.concatenate([body, rng.normal(0, 0.1, (F, 2, 3))], 1).reshape(F, -1), "fps": np.array(30)},
        ),
    ]


def targeted(base: dict[str, np.ndarray]) -> list[tuple[str, bytes]]:
    F = len(base["poses"])
    out = [
        ("poses declares 1e12 x 156 floats", fuzz_npz.huge_npz("poses", (10**12, 156))),
        ("poses declares 2^40 floats", fuzz_npz.huge_npz("poses", (2**40,))),
        ("poses declares 2M x 156 (zip bomb)", fuzz_npz.huge_npz("poses", (2_000_000, 156))),
        ("pickled object poses", fuzz_npz.object_npz("poses")),
        ("empty zip", fuzz_npz.npz_bytes({})),
        ("not a zip", b"PK\x03\x04" + b"\x00" * 100),
        ("empty file", b""),
    ]
    for key, val in [
        ("trans", np.full((F, 3), np.nan)),
        ("trans", np.zeros((F, 2))),
        ("trans", np.zeros((F + 1, 3))),
        ("trans", np.full((F, 3), 1e308)),
        ("mocap_framerate", np.array("120")),
        ("mocap_framerate", np.array([], np.float64)),
        ("mocap_framerate", np.array([120.0, 60.0])),
        ("mocap_framerate", np.array(1e-300)),
        ("mocap_framerate", np.array(np.inf)),
        ("mocap_framerate", np.array(1 + 1j)),
        ("poses", np.zeros((F, 155))),
        ("poses", np.zeros((0, 156))),
        ("poses", np.full((F, 156), 1e300)),
        ("poses", np.zeros((F, 156), np.complex128)),
        ("betas", np.array("x")),
        ("J", np.full((55, 3), np.nan)),
        ("J", np.zeros((55, 2))),
    ]:
        d = dict(base)
        d[key] = val
        out.append((f"{key} {val.dtype}{val.shape}", fuzz_npz.npz_bytes(d)))
    for key, val in [("root_orient", np.zeros((5, 3))), ("pose_body", np.zeros((3, 63))), ("pose_hand", np.zeros(7))]:
        d = {"root_orient": np.zeros((4, 3)), "pose_body": np.zeros((4, 63)), "trans": np.zeros((4, 3))}
        d[key] = val
        out.append((f"smplx {key} {val.shape}", fuzz_npz.npz_bytes(d)))
    good = fuzz_npz.npz_bytes(base)
    for cut in (10, len(good) // 2, len(good) - 10):
        out.append((f"truncated at {cut}", good[:cut]))
    return out


#: frame rates at and past the edges (the reader reads [1/3600, 1e6] fps)
RATES = [0.0, -30.0, np.nan, np.inf, -np.inf, 5e-324, 1e-300, 1e-9, 1e-5, 1 / 7200, 1 / 3600, 1e6, 1e7, 1e308]
#: frame counts of the big small-type poses: around the budget's edge (160 MB: 134,432 frames of
#: 156 values at 8 bytes) and far past it
BIG_FRAMES = [100_000, 134_000, 135_000, 400_000, 1_000_000]
_BIG_CACHE: dict[tuple, bytes] = {}


def big_poses(base: dict[str, np.ndarray], frames: int, descr: str, fill: int, width: int = 156) -> bytes:
    """``base`` (its frame rate, betas, ...) with ``poses`` replaced by ``[frames, width]`` values of
    type ``descr`` whose every byte is ``fill`` (compressed to a few KB), and no ``trans``."""
    key = (frames, descr, fill, width, tuple(sorted(base)))
    if key not in _BIG_CACHE:
        small = {k: v for k, v in base.items() if k not in ("poses", "trans") and v.size < 1000}
        _BIG_CACHE[key] = fuzz_npz.streamed_npz(small, {"poses": ((frames, width), descr, fill)})
    return _BIG_CACHE[key]


def mutate_edges(d: dict[str, np.ndarray], rng: random.Random) -> dict[str, np.ndarray]:
    """One edge edit of a layout's arrays: an extreme frame rate, 1e308 in trans or the rest joints,
    no frames, or a key stored in a small type."""
    d = dict(d)
    op = rng.random()
    F = len(next(iter(v for k, v in d.items() if k in ("poses", "root_orient"))))
    if op < 0.3:
        d[rng.choice(["mocap_framerate", "mocap_frame_rate", "fps"])] = np.array(rng.choice(RATES))
    elif op < 0.5:
        key = rng.choice(["trans", "J", "root_orient", "poses"])
        width = {"J": (55, 3), "trans": (F, 3)}.get(key, d[key].shape if key in d else (F, 3))
        a = np.zeros(width)
        a.flat[rng.randrange(a.size)] = rng.choice([1e308, -1e308, 1e13, 1e12, 1e6, 1e7, np.nextafter(1e6, 2e6)])
        d[key] = a
    elif op < 0.7:
        for k in [k for k, v in d.items() if v.ndim >= 1 and len(v) == F and k != "J"]:
            d[k] = d[k][:0]
    else:
        k = rng.choice([k for k, v in d.items() if v.dtype.kind == "f" and v.size])
        d[k] = np.clip(d[k], -1e4, 1e4).astype(rng.choice(["u1", "i1", "f2", "f4"]))
    return d


def edge_cases(base: dict[str, np.ndarray], heavy: bool = True) -> list[tuple[str, bytes]]:
    """Targeted #38 cases: big poses in small types around the budget, a member that expands
    to 1.25 GB, empty clips, extreme frame rates, overflowing translations. Not ``heavy`` (the
    short CI run): two of the big poses, one on each side of the budget, and no 1.25 GB member."""
    out = []
    kinds = [("|u1", 0), ("|u1", 255), ("|i1", 0x81), ("<f2", 0x7B), ("<f2", 0xFF)]
    for frames, (descr, fill) in (
        [(f, k) for f in BIG_FRAMES for k in kinds] if heavy else [(20_000, kinds[1]), (135_000, kinds[4])]
    ):
        out.append((f"poses {descr} [{frames}, 156] of bytes {fill:#x}", big_poses(base, frames, descr, fill)))
    for n in (1024, 1025, 70_000, 1_000_000) if heavy else (70_000,):  # a zip listing n arrays
        out.append((f"zip directory of {n} entries", fuzz_npz.many_members_npz(n)))
    if heavy:
        out.append(("poses <f8 [1M, 156] expanding to 1.25 GB", big_poses(base, 1_000_000, "<f8", 0)))
        out.append(("poses <f4 [130k, 156] of zeros", big_poses(base, 130_000, "<f4", 0)))
    out.append(("poses |u1 [0, 156]", big_poses(base, 0, "|u1", 0)))
    out.append(("poses |u1 [1, 156]", big_poses(base, 1, "|u1", 7)))
    out.append(("poses |u1 [10M, 0]", big_poses(base, 10_000_000, "|u1", 0, width=0)))
    for rate in RATES:
        d = dict(base)
        d["mocap_framerate"] = np.array(rate)
        out.append((f"frame rate {rate!r}", fuzz_npz.npz_bytes(d)))
    for key, v in [("trans", 1e308), ("trans", -1e308), ("J", 1e308), ("trans", 1e6), ("J", 1e6)]:
        d = dict(base)
        d[key] = np.full((len(base["poses"]), 3) if key == "trans" else (55, 3), v)
        out.append((f"{key} all {v:g}", fuzz_npz.npz_bytes(d)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="random mutations")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--light", action="store_true", help="two big-poses cases instead of 27, no random ones (the short CI run)"
    )
    args = ap.parse_args()
    t = time.perf_counter()
    rng = random.Random(args.seed)
    base = seeds()
    cases = [(f"seed {n}", "amass", f"s{n}.npz", fuzz_npz.npz_bytes(d)) for n, d in base]
    cases += [(label, "amass", f"t{i}.npz", data) for i, (label, data) in enumerate(targeted(base[0][1]))]
    cases += [
        (label, "amass", f"e{i}.npz", data) for i, (label, data) in enumerate(edge_cases(base[0][1], not args.light))
    ]
    n_targeted = len(cases) - len(base)

    def mutations():  # made as they are read
        for i in range(args.n):
            name, d = base[i % len(base)]
            r = rng.random()
            if r < 0.02 and "poses" in d and not args.light:  # big poses in a small type (cached: few distinct)
                frames = rng.choice(BIG_FRAMES)
                descr, fill = rng.choice(fuzz_npz.SMALL_TYPES), rng.choice([0, 0x7B, 0xFF])
                data = big_poses(d, frames, descr, fill, d["poses"].shape[1])
                yield (f"mutation {i}: {name} poses {descr}[{frames}] of {fill:#x}", "amass", f"m{i}.npz", data)
                continue
            if r < 0.2:
                data = fuzz_npz.npz_bytes(mutate_edges(d, rng), compress=rng.random() < 0.3)
            elif r < 0.75:
                data = fuzz_npz.npz_bytes(fuzz_npz.mutate_arrays(d, rng), compress=rng.random() < 0.3)
            else:
                data = fuzz_npz.mutate_bytes(fuzz_npz.npz_bytes(d, compress=rng.random() < 0.5), rng)
            yield (f"mutation {i} of {name}", "amass", f"m{i}.npz", data)

    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        specials = []
        for label, path in fuzzlib.special_files(scratch):
            link = scratch / f"{label.strip('/').replace('/', '_')}.npz"
            if path != str(scratch):
                link.symlink_to(path)
            else:
                link.mkdir()
            specials.append((label, "amass", str(link), None))
        counts = fuzzlib.run_cases(__file__, itertools.chain(cases, mutations(), specials), scratch)
    bad = fuzzlib.report(
        f"AMASS npz: {len(base)} seeds, {n_targeted + 4} targeted, {args.n} mutations", counts, time.perf_counter() - t
    )
    fuzzlib.print_summary("amass", counts, time.perf_counter() - t)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

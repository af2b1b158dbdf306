"""Fuzz the AMASS / SMPL ``.npz`` reader (``jointlimits.io.amass.load``) and print counts per outcome.

Seeds are hand-made valid files of the three layouts (SMPL-H ``poses`` [F, 156], SMPL-X
``root_orient`` + ``pose_*``, SMPL ``poses`` [F, 72], with ``trans``, ``betas``, a frame rate,
rest joints ``J``), their poses taken from a shared BVH clip's rotations (as axis-angle) or random.
Mutations edit the arrays (NaN, inf, huge values, wrong shapes, dtypes: complex, strings, bool;
keys dropped or replaced), or the zip's bytes (truncated, flipped); targeted cases declare huge
arrays over a few bytes (zip bombs), hold pickled objects, or are special files. A file that
loads must give finite rotations (unit quaternions) and positions.

    python scripts/fuzz_amass.py [--n 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
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

    m = amass.load(path)
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.positions)), "non-finite motion"
    assert np.allclose(np.linalg.norm(m.rotations, axis=-1), 1.0, atol=1e-6), "non-unit rotations"
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="random mutations")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t = time.perf_counter()
    rng = random.Random(args.seed)
    base = seeds()
    cases = [(f"seed {n}", "amass", f"s{n}.npz", fuzz_npz.npz_bytes(d)) for n, d in base]
    cases += [(label, "amass", f"t{i}.npz", data) for i, (label, data) in enumerate(targeted(base[0][1]))]
    n_targeted = len(cases) - len(base)
    for i in range(args.n):
        name, d = base[i % len(base)]
        if rng.random() < 0.75:
            data = fuzz_npz.npz_bytes(fuzz_npz.mutate_arrays(d, rng), compress=rng.random() < 0.3)
        else:
            data = fuzz_npz.mutate_bytes(fuzz_npz.npz_bytes(d, compress=rng.random() < 0.5), rng)
        cases.append((f"mutation {i} of {name}", "amass", f"m{i}.npz", data))
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        specials = fuzzlib.special_files(scratch)
        for label, path in specials:
            link = scratch / f"{label.strip('/').replace('/', '_')}.npz"
            if path != str(scratch):
                link.symlink_to(path)
            else:
                link.mkdir()
            cases.append((label, "amass", str(link), None))
        counts = fuzzlib.run_cases(__file__, cases, scratch)
    bad = fuzzlib.report(
        f"AMASS npz: {len(base)} seeds, {n_targeted + 4} targeted, {args.n} mutations", counts, time.perf_counter() - t
    )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

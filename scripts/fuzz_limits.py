"""Fuzz the limits-file reader (``JointLimits.load``) and print counts per outcome.

Seeds are real limits files of every kind, fitted by the ``fit`` command on shared clips of two
conventions (box, oriented box, ellipsoid, k-DOP, swing-twist k-DOP, implicit, coupled implicit,
reach windows). Each mutation edits the JSON tree (a value replaced by an odd one: NaN, Infinity,
huge or tiny numbers, 2^70, wrong types, empty or long lists; a key deleted; a list cut or
repeated), or the text (bytes flipped, cut short), or is one of the targeted cases the audit of
issue #25 found (a NaN parent reference, grid cells of 5e-324 and origins of 1e308, a 150-axis
k-DOP, a 400^3 implicit grid, zlib bombs, 2^70 cells, special files). A file that loads must
project random rotations to finite unit quaternions whose forward kinematics (the file's skeleton
posed by them) is finite, save, and load again.

The edge mutations of issue #38 (30% of the mutations): a limits file has no frames, so its
counts and values take them: ``settings.frames`` and ``settings.clips`` of 0, -1, 2^63, 2^70,
1e308, NaN; ``settings.subsample`` and ``padding`` of 1e-9, 1e308, negative, 0, NaN; skeleton
OFFSETs of 1e308 and friends; declared counts (the joints list repeated, k-DOP axes, implicit
dims) and big files (up to the reader's 32 MB: millions of JSON values, a 24 MB grid string).
The last line printed is one JSON object of counts (``fuzzlib.summary``).

Each file is read in a sandboxed worker (scripts/fuzzlib.py: 1 GB address space, 10 s).
``--dump DIR`` also keeps every mutated file there (scripts/sanitize_core.sh feeds them to the
C++ reader built with sanitizers).

    python scripts/fuzz_limits.py [--n 2000] [--seed 0] [--dump DIR]
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import random
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzzlib

SEEDS = Path(tempfile.gettempdir()) / "jointlimits-fuzz-seeds" / "limits"
CLIPS = ["lafan1/dance1_subject1.bvh", "cmu_cgspeed_mb/01_01.bvh"]
FITS = {
    "box": ["--shape", "box"],
    "oriented-box": ["--shape", "oriented-box"],
    "ellipsoid": ["--shape", "ellipsoid"],
    "kdop": ["--shape", "kdop"],
    "swing-twist": ["--shape", "kdop", "--swing-twist"],
    "implicit": ["--shape", "implicit"],
    "coupled": ["--shape", "implicit", "--coupled"],
    "reach": ["--joint-shape", "LeftArm=reach-window", "--joint-shape", "RightArm=reach-window"],
}
ODD = [
    float("nan"),
    float("inf"),
    -float("inf"),
    0,
    -1,
    1,
    0.5,
    1e300,
    -1e308,
    5e-324,
    1e-300,
    2**70,
    -(2**63),
    True,
    None,
    "",
    "x",
    [],
    {},
    [0],
    [[]],
    [1e300] * 3,
    [float("nan")] * 4,
    list(range(300)),
]


# ------------------------------------------------------------------------------- worker side
def errors():
    from jointlimits.errors import LimitsError

    return (LimitsError,)


def read(kind: str, path: str) -> str:
    import numpy as np

    from jointlimits.limits import JointLimits
    from jointlimits.motion.skeleton import forward_kinematics_arrays

    lim = JointLimits.load(path)
    J = lim.skeleton.num_joints
    rng = np.random.default_rng(0)
    q = rng.normal(size=(16, J, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    out = lim.project(q)
    assert np.all(np.isfinite(out)), f"{fuzzlib.NON_FINITE} projection"
    assert np.allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-6), "projection gave a non-unit quaternion"
    sk = lim.skeleton
    assert np.all(np.isfinite(sk.offsets)), f"{fuzzlib.NON_FINITE} skeleton offsets accepted"
    gr, gp = forward_kinematics_arrays(out, np.broadcast_to(sk.offsets, (16, J, 3)).copy(), sk.parents)
    assert np.all(np.isfinite(gr)) and np.all(np.isfinite(gp)), f"{fuzzlib.NON_FINITE} forward kinematics"
    back = Path(path).with_suffix(".saved.json")
    lim.save(back)
    try:
        again = JointLimits.load(back)  # a file that loads saves as one that loads
        assert np.allclose(again.project(q), out, atol=1e-9), "a saved copy projects differently"
    finally:
        back.unlink()
    return "ok"


# ------------------------------------------------------------------------------- parent side
def make_seeds() -> list[Path]:
    """Fit one limits file of each kind per clip (cut to 300 frames), cached across runs."""
    SEEDS.mkdir(parents=True, exist_ok=True)
    out = []
    for ci, rel in enumerate(CLIPS):
        src = fuzzlib.MOCAP / rel
        if not src.exists():
            continue
        clip = SEEDS / f"clip{ci}.bvh"
        if not clip.exists():
            text = src.read_text(encoding="latin-1")
            head, _, rest = text.partition("MOTION")
            lines = rest.split("\n")
            rows = [x for x in lines[3:] if x.strip()][:300]
            clip.write_text(head + "MOTION\n" + f"Frames: {len(rows)}\n" + lines[2] + "\n" + "\n".join(rows) + "\n")
        for name, args in FITS.items():
            dst = SEEDS / f"{name}-{ci}.json"
            if not dst.exists():
                r = subprocess.run(
                    [fuzzlib.PYTHON, "-m", "jointlimits", "fit", str(clip), "-o", str(dst), "-q", *args],
                    env={"PYTHONPATH": str(fuzzlib.ROOT / "src"), "PATH": "/usr/bin:/bin"},
                    capture_output=True,
                    text=True,
                )
                if r.returncode:
                    print(f"seed {dst.name}: fit failed: {r.stderr.strip()[:200]}", file=sys.stderr)
                    continue
            out.append(dst)
    return out


def _paths(node, prefix=()):
    """Every path (tuple of keys / indices) in a JSON tree, lists sampled (at most 6 items each)."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        idx = range(len(node)) if len(node) <= 6 else sorted({0, 1, len(node) - 1, *random.sample(range(len(node)), 3)})
        for i in idx:
            yield from _paths(node[i], prefix + (i,))


def _get(d, path):
    for k in path:
        d = d[k]
    return d


def _set(d, path, value):
    _get(d, path[:-1])[path[-1]] = value


def mutate_tree(doc: dict, rng: random.Random) -> dict:
    d = copy.deepcopy(doc)
    paths = [p for p in _paths(d) if p]
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(paths)
        try:
            parent = _get(d, p[:-1])
            op = rng.random()
            if op < 0.6:
                _set(d, p, copy.deepcopy(rng.choice(ODD)))
            elif op < 0.7:
                if isinstance(parent, dict):
                    del parent[p[-1]]
                else:
                    parent.pop(p[-1])
            elif op < 0.8:
                v = _get(d, p)
                if isinstance(v, list) and v:
                    _set(d, p, v[: rng.randrange(len(v))] if rng.random() < 0.5 else v * rng.choice([2, 40]))
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    _set(d, p, v * rng.choice([-1, 10, 1e6, 1e-6, 1e300]))
            elif op < 0.9:
                v = _get(d, p)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    _set(d, p, v + rng.choice([1, -1, 1e-9, 0.5]))
            else:
                _set(d, p, copy.deepcopy(_get(d, rng.choice(paths)) if rng.random() < 0.9 else d))
        except (KeyError, IndexError, TypeError, RecursionError):
            pass
        paths = [q for q in _paths(d) if q] or paths
    return d


def dumps(d) -> bytes:
    try:
        return json.dumps(d).encode()
    except (ValueError, RecursionError):
        return b"{}"


def mutate_text(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(max(1, len(b)))
        op = rng.random()
        if op < 0.4:
            b[k : k + 1] = bytes([rng.randrange(256)])
        elif op < 0.6:
            del b[k : k + rng.randint(1, 50)]
        elif op < 0.8:
            b[k:k] = rng.choice(
                [b"NaN", b"Infinity", b"-", b"1e999", b"[", b"]", b"{", b"}", b",", b'"', b"\x00", b"9" * 400]
            )
        else:
            b = b[:k]
    return bytes(b)


def _entry(doc: dict, kind: str) -> dict | None:
    for e in doc["joints"]:
        lim = e["limit"]
        if lim.get("kind") == kind or (kind == "implicit" and lim.get("shape", {}).get("kind") == "implicit"):
            return e
    return None


#: runs of at least this many mutations also read the big files (the short CI run does not)
BIG_FROM = 1000
COUNTS = [0, -1, 2**63, 2**70, 10**30, 1e308, float("nan"), float("inf")]
TIMES = [1e-9, 1e308, -0.0333, 0, -0.0, float("nan"), 5e-324]
EXTREME = [1e308, -1e308, 1.7976931348623157e308, 1e300, 1e12, 1.0000001e12, -1e13, 5e-324, float("nan")]


def edge(doc: dict, rng: random.Random) -> dict:
    """One edge mutation of issue #38 (see the module's text) of a copy of ``doc``."""
    d = copy.deepcopy(doc)
    op = rng.choice(["frames", "time", "offset", "joints", "dims"])
    try:
        if op == "frames":
            d["settings"][rng.choice(["frames", "clips"])] = rng.choice(COUNTS)
        elif op == "time":
            d["settings"][rng.choice(["subsample", "padding"])] = rng.choice(TIMES)
        elif op == "offset":
            offs = d["skeleton"]["offsets"]
            for _ in range(rng.randint(1, 3)):
                offs[rng.randrange(len(offs))][rng.randrange(3)] = rng.choice(EXTREME)
        elif op == "joints":
            d["joints"] = d["joints"] * rng.choice([2, 40])
        else:
            for e in d["joints"]:
                sh = e["limit"].get("shape", {})
                if "dims" in sh:
                    sh["dims"] = [rng.choice([2**31, 10**6, 0, -1, 65536]) for _ in sh["dims"]]
                    break
                if "axes" in sh:
                    k = rng.choice([31, 64, 10_000])
                    sh.update(axes=[[1.0, 0.0, 0.0]] * k, mins=[-1.0] * k, maxs=[1.0] * k)
                    break
    except (KeyError, IndexError, TypeError, ValueError):
        pass
    return d


def big_files(seeds: dict[str, dict]) -> list[tuple[str, bytes]]:
    """Files of 5 to 32 MB (the reader's size cap): millions of JSON values, a long grid string."""
    if "box-0" not in seeds:
        return []
    head = dumps(seeds["box-0"])[:-1]
    room = 32 * 2**20 - len(head) - 64

    def extra(label: str, item: bytes, n: int) -> tuple[str, bytes]:
        return label, head + b', "x": [' + item * (n - 1) + item.rstrip(b",") + b"]}"

    out = [
        extra("1,990,000 empty lists (under the JSON value cap)", b"[],", 1_990_000),
        extra("1,990,000 empty objects", b"{},", 1_990_000),
        extra("32 MB of empty lists", b"[],", room // 3),
        extra("32 MB of numbers", b"1.5,", room // 4),
        (
            "32 MB of white space in the skeleton",
            head.replace(b'"skeleton": {', b'"skeleton": {' + b" " * room, 1) + b"}",
        ),
    ]
    if "implicit-0" in seeds:
        d = copy.deepcopy(seeds["implicit-0"])
        e = _entry(d, "implicit")
        if e is not None:
            e["limit"]["shape"]["grid"] = base64.b64encode(random.Random(0).randbytes(18 * 2**20)).decode()
            out.append(("implicit grid of 24 MB of base64", dumps(d)))
    return out


def targeted(seeds: dict[str, dict], big: bool = True) -> list[tuple[str, bytes]]:
    """The audit's cases and their neighbours, each a (label, file bytes)."""
    out: list[tuple[str, bytes]] = []

    def case(label: str, seed: str, edit) -> None:
        if seed not in seeds:
            return
        d = copy.deepcopy(seeds[seed])
        try:
            edit(d)
        except (KeyError, IndexError, TypeError):
            return
        out.append((label, dumps(d)))

    def coupled(key, value):
        def edit(d):
            e = _entry(d, "coupled")
            e["limit"][key] = value

        return edit

    for v in (float("nan"), float("inf"), [float("nan")] * 4, [0, 0, 0, 0], [1e308, 0, 0, 0], "x", None):
        case(f"coupled parent_reference {v}", "coupled-0", coupled("parent_reference", v))
    for key in ("fields_cell", "pcell"):
        for v in (5e-324, 1e-300, 1e300, 0.0, -1.0, float("nan"), float("inf")):
            case(f"coupled {key} {v}", "coupled-0", coupled(key, v))
    for key in ("fields_origin", "porigin"):
        for v in ([1e308, 0, 0], [-1e308] * 3, [float("nan")] * 3, [0, 0]):
            case(f"coupled {key} {v}", "coupled-0", coupled(key, v))
    case("coupled cells 2^70", "coupled-0", coupled("cells", [[[2**70]]]))
    case("coupled cells -1", "coupled-0", coupled("cells", [[[-1]]]))
    case("coupled cells huge list", "coupled-0", coupled("cells", [[[0] * 400] * 400]))
    case("coupled base null", "coupled-0", coupled("base", None))
    case("coupled dims inf", "coupled-0", coupled("dims", [float("inf"), 2, 2, 2]))
    case("coupled dims huge", "coupled-0", coupled("dims", [2**40, 400, 400, 400]))

    def implicit(key, value):
        def edit(d):
            _entry(d, "implicit")["limit"]["shape"][key] = value

        return edit

    for v in (5e-324, 1e-300, 1e300, 0.0, float("nan")):
        case(f"implicit cell {v}", "implicit-0", implicit("cell", v))
    for v in ([1e308, 0, 0], [1e300] * 3, [float("inf")] * 3):
        case(f"implicit origin {v}", "implicit-0", implicit("origin", v))
    case("implicit dims inf", "implicit-0", implicit("dims", [float("inf"), 2, 2]))
    case("implicit dims 2^40", "implicit-0", implicit("dims", [2**40, 2, 2]))
    # a 400^3 grid of zeros: 256 MB of floats from a few hundred KB of zlib (a bomb)
    bomb = base64.b64encode(zlib.compress(bytes(4 * 400**3), 9)).decode()
    case(
        "implicit 400^3 zlib bomb",
        "implicit-0",
        lambda d: _entry(d, "implicit")["limit"]["shape"].update(dims=[400] * 3, grid=bomb),
    )
    small = base64.b64encode(zlib.compress(bytes(4 * 64**3), 9)).decode()
    case(
        "implicit zlib of other dims",
        "implicit-0",
        lambda d: _entry(d, "implicit")["limit"]["shape"].update(grid=small),
    )
    case("implicit rotation not orthonormal", "implicit-0", implicit("rotation", [[2, 0, 0], [0, 1, 0], [0, 0, 1]]))

    def kdop_axes(k):
        def edit(d):
            e = next(e for e in d["joints"] if e["limit"].get("shape", {}).get("kind") == "kdop")
            s = e["limit"]["shape"]
            rng = random.Random(k)
            ax = [[rng.gauss(0, 1) for _ in range(3)] for _ in range(k)]
            s.update(axes=ax, mins=[-1.0] * k, maxs=[1.0] * k)
            e.pop("compiled", None)

        return edit

    for k in (1, 2, 3, 31, 150, 300):
        case(f"k-DOP with {k} axes", "kdop-0", kdop_axes(k))

    def box_rotation(d):
        e = next(e for e in d["joints"] if e["limit"].get("shape", {}).get("kind") == "oriented-box")
        e["limit"]["shape"]["rotation"] = [[1, 0, 0], [0, 1, 0], [0, 0, 2]]
        e.pop("compiled", None)

    case("oriented box rotation not orthonormal", "oriented-box-0", box_rotation)

    def reach(key, value):
        def edit(d):
            e = _entry(d, "reach-window")
            e["limit"]["windows"][0][key] = value
            e.pop("compiled", None)

        return edit

    for v in ([1e300, 0, 0], [1e-300, 0, 0], [0, 0, 0], [float("nan")] * 3):
        case(f"reach normal {v}", "reach-0", reach("normal", v))
    for v in ([[1e300, 0], [0, 1e300], [-1e300, -1e300]], [[0, 0]] * 3, [[0, 0], [1, 0], [0, 1]] * 200):
        case(f"reach vertices {str(v)[:30]}", "reach-0", reach("vertices", v))
    case("settings.root_joints 5", "box-0", lambda d: d["settings"].update(root_joints=5))
    case("settings.root_joints [5]", "box-0", lambda d: d["settings"].update(root_joints=[5]))
    case("parents cycle", "box-0", lambda d: d["skeleton"].update(parents=[1, 0] + d["skeleton"]["parents"][2:]))
    if "box-0" in seeds:
        text = dumps(seeds["box-0"])
        out.append(("nested 100,000 deep", text[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"))
    out += big_files(seeds) if big else []
    out.append(("40 MB file", b" " * (40 * 1024 * 1024)))
    out.append(("empty file", b""))
    out.append(("not UTF-8", b"\xff\xfe{}"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="random mutations")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dump", type=Path, default=None, help="also keep every mutated file in this folder")
    ap.add_argument("--dump-only", action="store_true", help="write the files to --dump and read none")
    args = ap.parse_args()
    t = time.perf_counter()
    paths = make_seeds()
    if not paths:
        raise SystemExit(f"no seeds (no clips under {fuzzlib.MOCAP})")
    seeds = {p.stem: json.loads(p.read_text()) for p in paths}
    texts = {p.stem: p.read_bytes() for p in paths}
    rng = random.Random(args.seed)
    names = sorted(seeds)
    cases = [(f"seed {n}", "limits", f"{n}.json", texts[n]) for n in names]
    cases += [
        (label, "limits", f"t{i}.json", data) for i, (label, data) in enumerate(targeted(seeds, big=args.n >= BIG_FROM))
    ]
    for i in range(args.n):
        n = names[i % len(names)]
        if rng.random() < 0.3:
            data = dumps(edge(seeds[n], rng))
        elif rng.random() < 0.8:
            data = dumps(mutate_tree(seeds[n], rng))
        else:
            data = mutate_text(texts[n], rng)
        cases.append((f"mutation {i} of {n}", "limits", f"m{i}.json", data))
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
        for _, _, name, data in cases:
            (args.dump / name).write_bytes(data)
        if args.dump_only:
            print(f"{len(cases)} limits files written to {args.dump}")
            return
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        cases += [(label, "limits", path, None) for label, path in fuzzlib.special_files(scratch)]
        counts = fuzzlib.run_cases(__file__, cases, scratch)
    seconds = time.perf_counter() - t
    bad = fuzzlib.report(
        f"limits files: {len(names)} seeds, {len(cases) - args.n - len(names)} targeted, {args.n} mutations",
        counts,
        seconds,
    )
    fuzzlib.print_summary("limits", counts, seconds)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

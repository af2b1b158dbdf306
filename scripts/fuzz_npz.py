"""Mutations of ``.npz`` / ``.npy`` files shared by scripts/fuzz_amass.py and
scripts/fuzz_positions.py: written here with numpy's own writer and a hand-made .npy header
(never with the readers under test)."""

from __future__ import annotations

import io
import random
import zipfile

import numpy as np

ODD_ARRAYS = [
    np.array(np.nan),
    np.array(np.inf),
    np.array(1e308),
    np.array(-1.0),
    np.array(0.0),
    np.array(1 + 2j),
    np.array("x"),
    np.array(["a", "b"]),
    np.array([], np.float64),
    np.zeros((0, 3)),
    np.zeros((2, 0, 3)),
    np.array([[np.nan] * 3]),
    np.full((3, 3), 1e300),
    np.full((4, 156), np.inf),
    np.array(True),
    np.array([1, 2, 3], np.int8),
    np.arange(10**5, dtype=np.float64),
    np.array(5e-324),
]


def npz_bytes(arrays: dict[str, np.ndarray], compress: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return buf.getvalue()


def npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def npy_header(shape: tuple, descr: str = "<f8", fortran: bool = False) -> bytes:
    """An .npy v1.0 header declaring ``shape`` (no data follows unless appended)."""
    h = repr({"descr": descr, "fortran_order": fortran, "shape": shape}).encode()
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h


def huge_npz(key: str, shape: tuple, descr: str = "<f8") -> bytes:
    """An npz whose ``key`` declares ``shape`` over a few bytes of compressed zeros (a bomb) or none."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(key + ".npy", npy_header(shape, descr) + bytes(1 << 16))
    return buf.getvalue()


def object_npz(key: str) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{key: np.array([{"a": 1}, None], dtype=object)})
    return buf.getvalue()


def mutate_arrays(arrays: dict[str, np.ndarray], rng: random.Random) -> dict[str, np.ndarray]:
    """One to three edits of the arrays: a value to NaN / inf / huge, a reshape, a dtype change,
    a key dropped or replaced by an odd array, a cut along the first axis."""
    d = {k: v.copy() for k, v in arrays.items()}
    for _ in range(rng.randint(1, 3)):
        if not d:
            break
        k = rng.choice(sorted(d))
        a = d[k]
        op = rng.random()
        if op < 0.25 and a.size and a.dtype.kind == "f":
            a.flat[rng.randrange(a.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e308, 1e300, -1e200, 5e-324, 1e6])
        elif op < 0.4:
            d[k] = rng.choice(ODD_ARRAYS)
        elif op < 0.5:
            del d[k]
        elif op < 0.6 and a.ndim >= 1 and len(a):
            d[k] = a[: rng.randrange(len(a))]
        elif op < 0.7 and a.size:
            d[k] = a.reshape(-1)
        elif op < 0.8 and a.ndim >= 1:
            try:
                d[k] = a.astype(rng.choice([np.float32, np.int64, np.complex128, "U3", np.bool_]))
            except (ValueError, OverflowError):
                d[k] = a.astype("U3")
        elif op < 0.9 and a.ndim >= 2:
            d[k] = a[:, : max(0, a.shape[1] - rng.randint(1, 3))]
        else:
            d[rng.choice(["extra", k + "_", "J", "names", "fps"])] = rng.choice(ODD_ARRAYS)
    return d


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    op = rng.random()
    if op < 0.4:
        return bytes(b[: rng.randrange(max(1, len(b)))])  # truncated
    for _ in range(rng.randint(1, 8)):
        k = rng.randrange(max(1, len(b)))
        b[k : k + 1] = bytes([rng.randrange(256)])
    return bytes(b)


#: small stored types whose values each cost 8 bytes of the readers' memory budget once read
SMALL_TYPES = ["|u1", "|i1", "<f2"]


def streamed_npz(arrays: dict[str, np.ndarray], big: dict[str, tuple[tuple, str, int]]) -> bytes:
    """A compressed npz of ``arrays`` plus, for each ``key: (shape, descr, fill)`` of ``big``, a
    complete member of that shape whose every byte is ``fill``, deflated as it is written (a
    member of gigabytes costs the writer a few MB: a zip that expands hugely, every byte real)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for k, a in arrays.items():
            zf.writestr(k + ".npy", npy_bytes(a))
        for k, (shape, descr, fill) in big.items():
            n = int(np.prod(shape, dtype=object)) * np.dtype(descr).itemsize
            chunk = bytes([fill]) * (1 << 22)
            with zf.open(k + ".npy", "w", force_zip64=True) as fh:
                fh.write(npy_header(shape, descr))
                while n > 0:
                    fh.write(chunk[: min(n, len(chunk))])
                    n -= len(chunk)
    return buf.getvalue()


def many_members_npz(n: int, name: str = "poses.npy", payload: np.ndarray | None = None) -> bytes:
    """A stored (uncompressed) zip whose central directory lists ``n`` entries, all pointing at one
    small member ``name`` (about 50 bytes an entry: 2 million entries in 100 MB); zip64 past
    65,535 entries. Written by hand: zipfile would take minutes for a million entries."""
    import struct
    import zlib as _zlib

    data = npy_bytes(np.zeros((3, 156)) if payload is None else payload)
    nm = name.encode()
    crc = _zlib.crc32(data)
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc, len(data), len(data), len(nm), 0)
    entry = struct.pack(
        "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0x21, crc, len(data), len(data), len(nm), 0, 0, 0, 0, 0, 0
    )
    entry += nm
    cd_off = len(local) + len(nm) + len(data)
    cd = entry * n
    out = [local, nm, data, cd]
    z64 = cd_off + len(cd)
    if n > 0xFFFF:
        out.append(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(cd), cd_off))
        out.append(struct.pack("<IIQI", 0x07064B50, 0, z64, 1))
        out.append(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
    else:
        out.append(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(cd), cd_off, 0))
    return b"".join(out)

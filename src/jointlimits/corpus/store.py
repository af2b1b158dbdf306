"""Plain-data files for the corpus engine's cache and its parsed-clip store: never code.

A value is written as one ``.npz`` file: its numpy arrays as members, and a JSON tree that
describes the rest (numbers, strings, lists, tuples, dicts, None, and the few project types a
corpus task returns: :class:`~jointlimits.motion.skeleton.Skeleton`,
:class:`~jointlimits.motion.skeleton.Motion` without its source text, and
:class:`~jointlimits.limits.fit.ClipSummary`). Reading uses ``numpy.load(allow_pickle=False)``
and rebuilds only those types, so a file planted in a cache folder can at worst be refused.

Every file carries :data:`VERSION` and the key it was written under (the sha256 of the input's
content and the settings); :func:`load` returns :data:`MISSING` for a file that is absent,
damaged, of another version or written under another key, and the caller computes the value
again.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import atomic_write

__all__ = ["VERSION", "MISSING", "dump", "load", "StoreError"]

#: the format of a stored file; a file of another version is recomputed
VERSION = 1
#: :func:`load`'s answer when there is no usable stored value
MISSING: Any = object()
#: bytes of JSON in one file at most (a planted file cannot make the reader parse more)
MAX_META = 64 << 20
#: nesting depth of a stored value at most
MAX_DEPTH = 32


class StoreError(ValueError):
    """A value this store cannot write, or a file it refuses to read."""


def _encode(v: Any, arrays: list[np.ndarray], depth: int = 0) -> Any:
    from ..limits.fit import ClipSummary
    from ..motion.skeleton import Motion, Skeleton

    if depth > MAX_DEPTH:
        raise StoreError("value nested too deeply")
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return {"i": int(v)}
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return {"f": f if math.isfinite(f) else repr(f)}
    if isinstance(v, np.ndarray):
        if v.dtype.hasobject:
            raise StoreError("object arrays are not stored")
        arrays.append(np.ascontiguousarray(v))
        return {"a": len(arrays) - 1}
    if isinstance(v, ClipSummary):
        return {"ClipSummary": [_encode(x, arrays, depth + 1) for x in v]}
    if isinstance(v, Skeleton):
        return {
            "Skeleton": [
                v.names,
                _encode(v.parents, arrays),
                _encode(v.offsets, arrays),
                v.channels,
                [[int(p), _encode(o, arrays)] for p, o in v.end_sites],
            ]
        }
    if isinstance(v, Motion):
        return {
            "Motion": [
                _encode(v.skeleton, arrays, depth + 1),
                _encode(v.rotations, arrays),
                _encode(v.positions, arrays),
                float(v.frame_time),
            ]
        }
    if isinstance(v, tuple):
        return {"t": [_encode(x, arrays, depth + 1) for x in v]}
    if isinstance(v, list):
        return {"l": [_encode(x, arrays, depth + 1) for x in v]}
    if isinstance(v, dict):
        return {"d": [[_encode(k, arrays, depth + 1), _encode(x, arrays, depth + 1)] for k, x in v.items()]}
    raise StoreError(f"cannot store a {type(v).__name__}")


def _decode(v: Any, arrays: Any, depth: int = 0) -> Any:
    from ..limits.fit import ClipSummary
    from ..motion.skeleton import Motion, Skeleton

    if depth > MAX_DEPTH:
        raise StoreError("value nested too deeply")
    if v is None or isinstance(v, (bool, str)):
        return v
    if not isinstance(v, dict) or len(v) != 1:
        raise StoreError("not a stored value")
    ((tag, x),) = v.items()
    if tag == "i" and isinstance(x, int):
        return x
    if tag == "f":
        return float(x)
    if tag == "a" and isinstance(x, int):
        return arrays[f"a{x}"]
    if tag in ("t", "l") and isinstance(x, list):
        items = [_decode(y, arrays, depth + 1) for y in x]
        return tuple(items) if tag == "t" else items
    if tag == "d" and isinstance(x, list):
        out = {}
        for pair in x:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise StoreError("bad dict entry")
            key = _decode(pair[0], arrays, depth + 1)
            if not isinstance(key, (str, int, float, tuple)) or isinstance(key, list):
                raise StoreError("bad dict key")
            out[key] = _decode(pair[1], arrays, depth + 1)
        return out
    if tag == "ClipSummary" and isinstance(x, list) and len(x) == len(ClipSummary._fields):
        return ClipSummary(*[_decode(y, arrays, depth + 1) for y in x])
    if tag == "Skeleton" and isinstance(x, list) and len(x) == 5:
        names, parents, offsets, channels, ends = x
        return Skeleton(
            names,
            _decode(parents, arrays),
            _decode(offsets, arrays),
            channels,
            [(int(p), _decode(o, arrays)) for p, o in ends],
        )
    if tag == "Motion" and isinstance(x, list) and len(x) == 4:
        return Motion(_decode(x[0], arrays, depth + 1), _decode(x[1], arrays), _decode(x[2], arrays), float(x[3]))
    raise StoreError(f"unknown stored type {tag!r}")


def dump(value: Any, path: str | os.PathLike, key: str) -> None:
    """Write ``value`` to ``path`` (atomically: a killed run leaves no partial file) under ``key``."""
    arrays: list[np.ndarray] = []
    meta = json.dumps({"version": VERSION, "key": key, "value": _encode(value, arrays)})
    members = {f"a{i}": a for i, a in enumerate(arrays)}
    members["meta"] = np.frombuffer(meta.encode(), dtype=np.uint8)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, binary=True) as f:
        np.savez(f, **members)  # type: ignore[arg-type]  # numpy's stub types **kwds as bool


def load(path: str | os.PathLike, key: str) -> Any:
    """The value stored at ``path`` under ``key``, or :data:`MISSING` (absent, damaged, foreign,
    of another version, or not plain data)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if "meta" not in z.files:
                return MISSING
            raw = z["meta"]
            if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > MAX_META:
                return MISSING
            meta = json.loads(raw.tobytes().decode())
            if not isinstance(meta, dict) or meta.get("version") != VERSION or meta.get("key") != key:
                return MISSING
            arrays = {n: z[n] for n in z.files if n != "meta"}
        return _decode(meta.get("value"), arrays)
    except FileNotFoundError:
        return MISSING
    except (OSError, ValueError, KeyError, TypeError, RecursionError, zipfile.BadZipFile, EOFError, UnicodeDecodeError):
        return MISSING
    except Exception:  # a constructor refusing what it was given (SkeletonError, ...)
        return MISSING

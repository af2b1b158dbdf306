"""The limits file: JSON with the skeleton (names, parents, offsets, rest directions), the fit's
settings and, per joint, its limit's parameters and the arrays the compiled core projects with
(``"compiled"``, read by ``cpp/include/jointlimits/limits_file.hpp``). Reading validates every
entry before use (:mod:`.schema`)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write, read_input_bytes
from .._budget import Budget, reading
from ..errors import JointLimitsError, LimitsError
from ..motion.skeleton import Skeleton
from .compiled import compiled_dict
from .joint import JointLimit, ParentedLimit, limit_from_dict
from .rest import DEFAULT_REST_TOLERANCE
from .schema import check_compiled, check_document, check_entry, parse_json

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "LimitsDocument",
    "to_document",
    "from_document",
    "write_document",
    "read_document",
]

SCHEMA = "jointlimits/limits"
SCHEMA_VERSION = 1
#: The largest limits file read (bytes): real ones are well under 1 MB (the implicit fields are
#: compressed); a bigger one is refused before it is parsed into Python objects many times its size.
MAX_FILE_BYTES = 32 * 1024 * 1024
Array = NDArray[np.float64]


class LimitsDocument(NamedTuple):
    """A limits file's content, read and checked: what a ``JointLimits`` is made of."""

    skeleton: Skeleton
    joints: dict[int, JointLimit]
    enabled: NDArray[np.bool_]
    settings: dict[str, Any]
    rest: list[Array] | None
    rest_tolerance: float


def _joint_entry(name: str, enabled: bool, limit: Any) -> dict:
    entry = {"name": name, "enabled": enabled, "limit": limit.to_dict()}
    compiled = compiled_dict(limit)
    if compiled is not None:  # what the C++ core reads (cpp/include/jointlimits/limits_file.hpp)
        entry["compiled"] = compiled
    return entry


def _read_rest(skd: Mapping[str, Any], sk: Skeleton, source: str) -> tuple[list[Array] | None, float]:
    """The stored rest directions (None for files written before they were stored: then the
    offsets' directions) and tolerance of a limits file's skeleton entry."""
    tol = skd.get("rest_tolerance_deg", DEFAULT_REST_TOLERANCE)
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (0 <= tol <= 180):
        raise LimitsError(f"{source}: rest_tolerance_deg must be a number of degrees in [0, 180]")
    rd = skd.get("rest_directions")
    if rd is None:
        return None, float(tol)
    if not isinstance(rd, list) or len(rd) != sk.num_joints:
        raise LimitsError(f"{source}: rest_directions must list every joint's child bone directions")
    out = []
    for j, rows in enumerate(rd):
        if not isinstance(rows, list):
            raise LimitsError(f"{source}: rest_directions of joint {sk.names[j]!r} must be a list")
        a = np.full((len(rows), 3), np.nan)
        for k, v in enumerate(rows):
            if v is None:
                continue
            if not (
                isinstance(v, list)
                and len(v) == 3
                and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
            ):
                raise LimitsError(f"{source}: a rest direction of joint {sk.names[j]!r} is not [x, y, z]")
            a[k] = v
            n = np.linalg.norm(a[k])
            if not (np.isfinite(n) and abs(n - 1) < 1e-3):
                raise LimitsError(f"{source}: a rest direction of joint {sk.names[j]!r} is not a unit vector")
        out.append(a)
    return out, float(tol)


def to_document(
    skeleton: Skeleton,
    joints: Mapping[int, JointLimit],
    enabled: NDArray[np.bool_],
    settings: Mapping[str, Any],
    rest: list[Array],
    rest_tolerance: float,
) -> dict:
    """The JSON document of a set of limits."""
    sk = skeleton
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "skeleton": {
            "names": sk.names,
            "parents": sk.parents.tolist(),
            "fingerprint": sk.fingerprint(),
            "offsets": sk.offsets.tolist(),
            "rest_directions": [[None if not np.isfinite(v).all() else v.tolist() for v in r] for r in rest],
            "rest_tolerance_deg": rest_tolerance,
        },
        "settings": settings,
        "joints": [_joint_entry(sk.names[j], bool(enabled[j]), joints[j]) for j in sorted(joints)],
    }


def from_document(d: Mapping[str, Any], source: str = "limits") -> LimitsDocument:
    """A limits document checked entry by entry (LimitsError naming ``source`` and the entry)."""
    check_document(d, source, SCHEMA, SCHEMA_VERSION)
    with reading(Budget(source, LimitsError)):  # all grids of the file share one memory budget
        return _from_document(d, source)


def _from_document(d: Mapping[str, Any], source: str) -> LimitsDocument:
    try:
        skd = d["skeleton"]
        names, parents = list(skd["names"]), np.asarray(skd["parents"], np.int64)
        offsets = np.asarray(skd.get("offsets", np.zeros((len(names), 3))), np.float64)
        sk = Skeleton(names, parents, offsets)
        if skd.get("fingerprint") not in (None, sk.fingerprint()):
            raise LimitsError(f"{source}: skeleton fingerprint does not match its joint list (edited by hand?)")
        rest, tol = _read_rest(skd, sk, source)
        joints: dict[int, JointLimit] = {}
        enabled = np.ones(len(names), bool)
        seen: set[str] = set()
        for k, e in enumerate(d["joints"]):
            name, on, entry = check_entry(e, k, source, seen)
            j = sk.index(name)
            joints[j] = limit_from_dict(entry)
            if isinstance(joints[j], ParentedLimit):  # a coupled limit reads its parent joint's rotations
                par = getattr(joints[j], "parent", None)
                if not isinstance(par, str) or par not in sk.names:
                    raise LimitsError(f"joint {name!r}: the parent {par!r} of its coupled limit is not a joint")
            enabled[j] = on
            check_compiled(e, joints[j], name, source)
    except LimitsError as e:
        msg = str(e)
        raise LimitsError(msg if msg.startswith(source) else f"{source}: {msg}") from None
    except JointLimitsError as e:  # a skeleton or quaternion error of an entry
        raise LimitsError(f"{source}: {e}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, ZeroDivisionError) as e:
        raise LimitsError(f"{source}: corrupt limits file ({type(e).__name__}: {e})") from None
    return LimitsDocument(sk, joints, enabled, dict(d.get("settings", {})), rest, tol)


def write_document(path: str | os.PathLike, document: Mapping[str, Any]) -> None:
    """Write a limits document as JSON, atomically."""
    text = json.dumps(document, indent=1)
    with atomic_write(Path(path)) as fh:
        fh.write(text)


def read_document(path: str | os.PathLike) -> LimitsDocument:
    """Read and check a limits file; LimitsError if it is missing, corrupt or of another version."""
    p = Path(path)
    try:
        text = read_input_bytes(p, MAX_FILE_BYTES).decode("utf-8")
    except OSError as e:
        raise LimitsError(f"{p}: cannot read limits file ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise LimitsError(f"{p}: corrupt limits file (not UTF-8 text: {e})") from None
    except ValueError as e:  # not a regular file, or too big
        raise LimitsError(f"{p}: cannot read limits file ({e})") from None
    return from_document(parse_json(text, str(p)), str(p))

"""The one validation of a limits file's structure, shared by :meth:`JointLimits.load` and
:meth:`JointLimits.from_dict` (and so by every command that reads limits).

Shape parameters are checked where they are built (each shape's constructor: finite values,
``lo <= hi``, ``scale >= 0``, non-zero k-DOP axes, a non-zero reference); this module checks what
lies around them: JSON that parses at all, the version's type, the joints list and each entry's
fields and types, settings, and that a ``"compiled"`` entry (what the C++ reader projects with)
still matches its limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import LimitsError

__all__ = ["parse_json", "check_document", "check_entry", "check_compiled"]


#: Most JSON values (numbers, strings, lists, objects) a limits file may hold: each costs Python
#: 30 to 70 bytes once parsed, so a 32 MB file of ``[],[],...`` would take 700 MB and 20 s. The
#: largest fitted files hold a few hundred values a joint (about 10,000 for 21 joints).
MAX_JSON_VALUES = 2_000_000


def parse_json(text: str, source: str) -> Any:
    """The JSON document of a limits file (LimitsError if it is not JSON, nests too deeply or
    holds more than :data:`MAX_JSON_VALUES` values)."""
    # every value but the first follows a comma or opens a list or object: an upper bound
    most = text.count(",") + text.count("[") + text.count("{") + 1
    if most > MAX_JSON_VALUES:
        raise LimitsError(
            f"{source}: corrupt limits file (up to {most:,} JSON values, more than the {MAX_JSON_VALUES:,} "
            "a limits file may hold)"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise LimitsError(f"{source}: corrupt limits file (not valid JSON: {e})") from None
    except RecursionError:
        raise LimitsError(f"{source}: corrupt limits file (nested too deeply)") from None


def check_document(d: Any, source: str, schema: str, version: int) -> None:
    """The top level: schema, version (an int, not a bool or float), skeleton, joints, settings."""
    if not isinstance(d, Mapping) or d.get("schema") != schema:
        raise LimitsError(f"{source}: not a jointlimits limits file (schema {schema!r} expected)")
    v = d.get("version")
    if type(v) is not int or v != version:
        raise LimitsError(f"{source}: limits file version {v!r} is not supported (this is version {version})")
    if not isinstance(d.get("skeleton"), Mapping):
        raise LimitsError(f"{source}: corrupt limits file ('skeleton' must be an object)")
    if not isinstance(d.get("joints"), list):
        raise LimitsError(f"{source}: corrupt limits file ('joints' must be a list)")
    settings = d.get("settings", {})
    if not isinstance(settings, Mapping):
        raise LimitsError(f"{source}: corrupt limits file ('settings' must be an object)")
    roots = settings.get("root_joints", [])
    if roots is not None and not (isinstance(roots, list) and all(isinstance(n, str) for n in roots)):
        raise LimitsError(f"{source}: corrupt limits file ('settings.root_joints' must be a list of joint names)")


def check_entry(e: Any, k: int, source: str, seen: set[str]) -> tuple[str, bool, Mapping[str, Any]]:
    """One entry of ``joints``: (name, enabled, limit dict); names must be unique strings and
    ``enabled`` a JSON boolean (``"false"`` is not false)."""
    if not isinstance(e, Mapping):
        raise LimitsError(f"{source}: joints[{k}] must be an object, got {type(e).__name__}")
    name = e.get("name")
    if not isinstance(name, str):
        raise LimitsError(f"{source}: joints[{k}]: 'name' must be a string, got {name!r}")
    if name in seen:
        raise LimitsError(f"{source}: joint {name!r} is listed twice")
    seen.add(name)
    enabled = e.get("enabled", True)
    if not isinstance(enabled, bool):
        raise LimitsError(f"{source}: joint {name!r}: 'enabled' must be true or false, got {enabled!r}")
    limit = e.get("limit")
    if not isinstance(limit, Mapping):
        raise LimitsError(f"{source}: joint {name!r}: 'limit' must be an object, got {type(limit).__name__}")
    return name, enabled, limit


def _close(a: Any, b: Any) -> bool:
    # numbers to a few ulps: re-normalising a loaded reference may move its last bit
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-12 * (1.0 + abs(b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return False


def check_compiled(e: Mapping[str, Any], built: Any, name: str, source: str) -> None:
    """A ``"compiled"`` entry must equal what its limit compiles to (a file edited by hand would
    otherwise project differently in C++ than in Python)."""
    if "compiled" not in e:
        return
    from .compiled import compiled_dict

    if not _close(e["compiled"], compiled_dict(built)):
        raise LimitsError(
            f"{source}: joint {name!r}: its 'compiled' entry does not match its limit "
            "(edited by hand? delete the 'compiled' entry to rebuild it on save)"
        )

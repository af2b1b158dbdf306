"""The web demo: a static page where a character is posed by IK and look-at with joint limits on or off.

:func:`write_demo` writes the page (``index.html``) and its assets into a folder: three.js, the
compiled core in WebAssembly (``jlcore.wasm`` and its loader, plus a base64 copy so the page runs
from ``file://``), the JS API (``jointlimits.js``) and ``data.js`` with the skeleton, the limits and
a clip to scrub. The numbers come from the same C++ as the Python package (cpp/wasm/jl_wasm.cpp
over cpp/include). Without arguments it shows the built-in humanoid
(:func:`jointlimits.motion.procedural.humanoid_skeleton`) with limits fitted on its range-of-motion
clip and an over-rotated copy of that clip; ``jointlimits view LIMITS.json [CLIP] --demo -o DIR``
writes it with a user's limits and clip.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import JointLimitsError
from ..limits.model import JointLimits
from ..motion import procedural
from ..motion.naming import find_role
from ..motion.skeleton import Motion, Skeleton

__all__ = ["write_demo", "demo_rig", "ASSETS", "STATIC_FILES"]

#: The page's static files, shipped in the package (scripts/build_wasm.py builds the core ones).
ASSETS = Path(__file__).resolve().parent / "demo_page"
STATIC_FILES = (
    "index.html",
    "demo.js",
    "demo_files.js",
    "jointlimits.js",
    "jlcore.js",
    "jlcore.wasm",
    "three.min.js",
    "three-gltf.js",
)

#: Frames of a clip the page carries at most (an even subsample beyond).
MAX_FRAMES = 600


def demo_rig(skeleton: Skeleton) -> dict[str, Any]:
    """The joints the page drives: a two-bone arm (root, mid, end), a CCD chain (its joints and the
    end joint) and the look-at chain (the head's ancestors below the root, lowest first, and the
    head). JointLimitsError when the skeleton shows no head or no two hands."""
    sk = skeleton
    par = [int(p) for p in sk.parents]
    heads = find_role(sk, "head", exclude=["end"])
    left = find_role(sk, "hand", exclude=["end"], side="left")
    right = find_role(sk, "hand", exclude=["end"], side="right")
    if not heads or not left or not right:
        raise JointLimitsError("the web demo needs a skeleton with a head and two hands (found by their names)")

    def up(j: int, n: int) -> list[int]:
        out = [j]
        while len(out) < n and par[out[-1]] > 0:
            out.append(par[out[-1]])
        return out[::-1]

    arm = up(left[0], 3)
    chain = up(right[0], 4)
    look = up(heads[0], len(sk.names))
    if len(arm) < 3 or len(chain) < 3 or not look:
        raise JointLimitsError("the web demo's arms need three joints from the shoulder to the hand")
    return {
        "twoBone": arm,
        "ccd": chain[:-1],
        "ccdEnd": chain[-1],
        "lookAt": look,
        "forward": [0.0, 0.0, 1.0],
    }


def _round(a: np.ndarray, digits: int = 6) -> list:
    return np.round(np.asarray(a, np.float64), digits).tolist()


#: The built-in page's choice of shapes: name -> JointLimits.fit's shape and swing_twist.
DEFAULT_SHAPES: dict[str, tuple[str, bool]] = {
    "ellipsoid, swing-twist": ("ellipsoid", True),
    "k-DOP, swing-twist": ("kdop", True),
    "ellipsoid": ("ellipsoid", False),
    "box": ("box", False),
    "k-DOP": ("kdop", False),
}


def _default() -> tuple[dict[str, JointLimits], Motion]:
    sk = procedural.humanoid_skeleton(units="m")
    rom = procedural.range_of_motion(sk, seconds=40.0, fps=30)
    sets = {k: JointLimits.fit([rom], shape=s, swing_twist=t) for k, (s, t) in DEFAULT_SHAPES.items()}
    clip = procedural.over_rotate(procedural.range_of_motion(sk, seconds=12.0, fps=15, seed=1), 1.4)
    return sets, clip


def _limits_document(limits: JointLimits) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "limits.json"
        limits.save(p)
        return json.loads(p.read_text(encoding="utf-8"))


def demo_data(
    limits: JointLimits | None = None, motion: Motion | None = None, title: str = "", limits_name: str = "limits"
) -> dict[str, Any]:
    """What ``data.js`` holds: skeleton (names, parents, offsets of the rest pose), the limits
    documents by name (``limitSets``: the page's shape choice), the rig (:func:`demo_rig`) and the
    clip's frames (local rotations, root positions)."""
    if limits is None:
        sets, default_clip = _default()
        motion = motion if motion is not None else default_clip
        title = title or "built-in humanoid, limits fitted on its range-of-motion clip"
    else:
        sets = {limits_name: limits}
    docs = {k: _limits_document(v) for k, v in sets.items()}
    for d in docs.values():
        for e in d["joints"]:
            if e.get("enabled") and "compiled" not in e:
                raise JointLimitsError(
                    f"joint {e['name']!r}: its limit kind has no compiled form, which the web demo needs "
                    "(refit with a box, ellipsoid or k-DOP shape, or disable the joint)"
                )
    doc = next(iter(docs.values()))
    limits = next(iter(sets.values()))
    sk = motion.skeleton if motion is not None else limits.skeleton
    names = list(doc["skeleton"]["names"])
    if list(sk.names) != names:
        raise JointLimitsError("the clip's joints differ from the limits file's skeleton")
    offsets = np.asarray(sk.offsets, np.float64)
    clip = None
    if motion is not None:
        F = motion.num_frames
        take = np.unique(np.linspace(0, F - 1, min(F, MAX_FRAMES)).round().astype(int)) if F else np.zeros(0, int)
        clip = {
            "fps": float(motion.fps) * (len(take) / F if F else 1.0),
            "rotations": _round(motion.rotations[take].reshape(len(take), -1)),
            "root": _round(motion.positions[take, 0]),
        }
    limb = np.linalg.norm(offsets, axis=1)
    return {
        "title": title,
        "skeleton": {"names": names, "parents": [int(p) for p in sk.parents], "offsets": _round(offsets)},
        "scale": float(np.sum(limb)) / max(1, len(limb)) or 1.0,
        "limitSets": docs,
        "rig": demo_rig(sk),
        "clip": clip,
    }


def write_demo(
    out_dir: str | os.PathLike[str],
    limits: JointLimits | None = None,
    motion: Motion | None = None,
    title: str = "",
    overwrite: bool = False,
    limits_name: str = "limits",
) -> Path:
    """Write the web demo into ``out_dir`` (created); returns the page's path (``index.html``).

    ``limits`` and ``motion`` (a clip on the limits' skeleton, scrubbed limited against raw) are
    built in; without ``limits`` the built-in humanoid is shown. FileExistsError when the page
    exists and ``overwrite`` is false; JointLimitsError when the skeleton lacks the joints the
    page drives or the package was installed without the page's files.
    """
    out = Path(out_dir)
    page = out / "index.html"
    if page.exists() and not overwrite:
        raise FileExistsError(str(page))
    missing = [f for f in STATIC_FILES if not (ASSETS / f).is_file()]
    if missing:
        raise JointLimitsError(f"the web demo's files are missing from the package: {', '.join(missing)}")
    data = demo_data(limits, motion, title, limits_name)
    text = "globalThis.JL_DEMO_DATA = " + json.dumps(data, separators=(",", ":")) + ";\n"
    wasm = (ASSETS / "jlcore.wasm").read_bytes()
    b64 = 'globalThis.JL_WASM_BASE64 = "' + base64.b64encode(wasm).decode("ascii") + '";\n'
    out.mkdir(parents=True, exist_ok=True)
    for f in STATIC_FILES:
        if f != "index.html":
            shutil.copyfile(ASSETS / f, out / f)
    (out / "jlcore.wasm.js").write_text(b64, encoding="utf-8")
    (out / "data.js").write_text(text, encoding="utf-8")
    tmp = out / ".index.html.tmp"
    shutil.copyfile(ASSETS / "index.html", tmp)
    os.replace(tmp, page)  # the page last: it is complete only when its assets are
    return page

"""BVH -> FBX -> BVH on every shared clip (../shared/data/mocap), per convention: the largest
rotation error (rad) and position error (relative to the clip's extent) of the round trip through
Blender's FBX exporter and importer. README's FBX bound is what this prints.

    python scripts/fbx_roundtrip.py [MOCAP_DIR]

Run it with a Python that has bpy and jointlimits (in-process, .ci/run's ``.venv-bpy``), or with
``JOINTLIMITS_BLENDER_PYTHON`` set (one Blender start per file: slower).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from jointlimits.io import bvh, fbx
from jointlimits.motion import quat

MOCAP = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap"


def rotation_error(a: np.ndarray, b: np.ndarray) -> float:
    """Largest angle (rad) between matching unit quaternions of ``a`` and ``b``."""
    d = quat.inv_mul(a, b)
    return float(np.max(2 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))))


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else MOCAP
    if not root.is_dir():
        print(f"{root}: no such folder (the shared clips)", file=sys.stderr)
        return 2
    worst_all = 0.0
    print(f"{'convention':<18} {'clips':>5} {'frames':>7} {'rotation (rad)':>15} {'position (rel.)':>16}")
    with tempfile.TemporaryDirectory(prefix="jl-fbx-rt-") as tmp:
        for conv in sorted(p for p in root.iterdir() if p.is_dir()):
            clips = sorted(conv.glob("*.bvh"))
            if not clips:
                continue
            rot = pos = 0.0
            frames = 0
            for clip in clips:
                a = bvh.load(clip)
                f = Path(tmp) / "x.fbx"
                fbx.save(f, a)
                b = fbx.load(f)
                if b.skeleton.names != a.skeleton.names or b.num_frames != a.num_frames:
                    print(f"{clip}: the round trip changed the skeleton or the frame count", file=sys.stderr)
                    return 1
                frames += a.num_frames
                rot = max(rot, rotation_error(a.rotations, b.rotations))
                size = float(np.abs(a.positions).max()) or 1.0
                pos = max(pos, float(np.abs(b.positions - a.positions).max()) / size)
            worst_all = max(worst_all, rot)
            print(f"{conv.name:<18} {len(clips):>5} {frames:>7} {rot:>15.2e} {pos:>16.2e}")
    print(f"largest rotation error over every clip: {worst_all:.2e} rad")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

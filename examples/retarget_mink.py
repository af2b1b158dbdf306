"""Retarget a LAFAN1 clip onto the exported MuJoCo humanoid with mink: no limits, mink's box
limits from the export, and the fitted limits through jointlimits.integrations.mink.

Limits are fitted on LAFAN1 subject-1 clips, ``export --to mujoco`` writes the MJCF humanoid,
and a subject-2 clip (not used in the fit) is retargeted: a root frame task, end-effector
frame tasks and position tasks on every other joint. Each run writes a BVH and, where MuJoCo's
offscreen renderer starts (``MUJOCO_GL=egl``, or ``osmesa`` with Debian's libosmesa6), a PNG
strip of a few frames. It prints, per run, the joint-frames outside the fitted limits, the mean
end-effector and joint-position errors and the solve's frames per CPU second.

    python examples/retarget_mink.py OUT_DIR [--frames 300] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")  # before mujoco is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")  # frames per CPU-s of one thread, as the benchmarks
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np

from jointlimits.export import export_limits
from jointlimits.io import load, save
from jointlimits.limits.model import JointLimits

MOCAP = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap" / "lafan1"
TRAIN = ["walk4_subject1", "dance1_subject1", "multipleActions1_subject1", "obstacles1_subject1"]
SOURCE = "push1_subject2"


def render_strip(model, qpos: np.ndarray, path: Path, frames: int = 5, size: int = 240) -> str:
    """A PNG of ``frames`` poses side by side by MuJoCo's offscreen renderer or, where no OpenGL
    platform starts, as stick figures from MuJoCo's kinematics (matplotlib); what was done."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import mujoco

    data = mujoco.MjData(model)
    picks = np.linspace(0, len(qpos) - 1, frames).astype(int)
    try:
        r = mujoco.Renderer(model, size, size)
        cam = mujoco.MjvCamera()
        tiles = []
        for f in picks:
            data.qpos[:] = qpos[f]
            mujoco.mj_forward(model, data)
            cam.lookat[:] = data.xpos[1]
            cam.distance, cam.azimuth, cam.elevation = 3.0, 90.0, -10.0
            r.update_scene(data, cam)
            tiles.append(r.render())
        r.close()
        plt.imsave(path, np.concatenate(tiles, axis=1))
        return f"wrote {path} (MUJOCO_GL={os.environ.get('MUJOCO_GL')})"
    except Exception as e:  # no OpenGL platform here: draw the bones instead
        why = f"{type(e).__name__}: {str(e).splitlines()[0][:60]}" if str(e) else type(e).__name__
    fig, axes = plt.subplots(1, frames, figsize=(2 * frames, 2.6))
    for ax, f in zip(axes, picks):
        data.qpos[:] = qpos[f]
        mujoco.mj_kinematics(model, data)
        for b in range(2, model.nbody):
            p, c = data.xpos[model.body_parentid[b]], data.xpos[b]
            ax.plot([p[0], c[0]], [p[2], c[2]], "-o", color="tab:brown", ms=2, lw=2)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.set_title(f"frame {f}", fontsize=8)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return f"wrote {path} (stick figures; no offscreen renderer: {why})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, nargs="?", default=Path("retarget_out"))
    ap.add_argument("--frames", type=int, default=300, help="frames of the source clip to retarget")
    ap.add_argument("--start", type=int, default=1000, help="first frame of the source clip")
    ap.add_argument("--quick", action="store_true", help="fit on 300 frames of one clip, no PNG (the test's run)")
    ap.add_argument("--mocap", type=Path, default=MOCAP, help="the LAFAN1 folder")
    a = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    from jointlimits.integrations.mink import RetargetSettings, run_three

    a.out.mkdir(parents=True, exist_ok=True)
    if not (a.mocap / f"{SOURCE}.bvh").is_file():  # the shared clips live beside the repository
        import matplotlib.pyplot as plt

        msg = f"the LAFAN1 clips are not at {a.mocap} (see ../shared/data/mocap)"
        fig = plt.figure(figsize=(6, 1))
        fig.text(0.02, 0.5, msg, fontsize=8)
        fig.savefig(a.out / "missing_data.png")
        print(msg)
        return 0
    train_names = TRAIN[:1] if a.quick else TRAIN
    train = [load(a.mocap / f"{n}.bvh") for n in train_names]
    if a.quick:
        train = [m.frames(0, 300) for m in train]
    limits = JointLimits.fit(train, shape="ellipsoid")
    limits.save(a.out / "limits.json")
    ex = export_limits(limits, "mujoco", clips=train, variants=("covering",))
    xml = a.out / "humanoid.xml"
    xml.write_text(ex.mjcf("covering"))
    source = load(a.mocap / f"{SOURCE}.bvh").frames(a.start, a.start + a.frames)
    print(f"fitted on {', '.join(train_names)}; retargeting {SOURCE} frames {a.start}-{a.start + source.num_frames}")
    settings = RetargetSettings(first_iterations=10) if a.quick else None
    runs = run_three(source, xml, limits, settings)
    print(f"{'run':<8} {'outside':>8} {'ee mm':>8} {'joint mm':>9} {'frames/s':>9}")
    for name, r in runs.items():
        save(a.out / f"{name}.bvh", r.result.motion)
        note = "" if a.quick else "  " + render_strip(r.model, r.result.qpos, a.out / f"{name}.png")
        print(f"{name:<8} {r.outside:>8d} {1000 * r.ee_error:>8.3f} {1000 * r.joint_error:>9.3f} {r.fps:>9.1f}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

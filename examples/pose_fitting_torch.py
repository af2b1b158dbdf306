"""Fit a skeleton's rotations to noisy 3D joint positions with fitted joint limits as a loss.

Limits are fitted on one shared clip and the pose is fitted, by gradient descent in PyTorch, to a
*held-out* clip of the same skeleton convention (another performer where the folder has one):
its joint positions with 2 cm of noise and 20% of the joint-frames dropped. Three runs from the
rest pose: no prior, the limit loss (``jointlimits.torch.loss``) added to the position loss, and
projection (``jointlimits.torch.project``) after every step. The table gives the MPJPE against the
clean positions (every joint, dropped ones too), the joint-frames outside the limits (violation
over 1e-6 rad, the core's ``contains`` tolerance), the twist error (the rotation about each bone,
which positions cannot observe) and the time. Needs the ``[torch]`` extra and ../shared.

Run: ``python examples/pose_fitting_torch.py OUT`` (one convention, a few seconds) or with
``--full`` (every convention of the shared clips, more frames and steps).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import torch

    import jointlimits.torch as jlt
except ImportError:  # the docs build without the [torch] extra: say so and write nothing
    print("pose_fitting_torch needs the [torch] extra: pip install -e '.[torch]'")
    raise SystemExit(0) from None
from jointlimits import JointLimits
from jointlimits.io import load
from jointlimits.motion import quat
from jointlimits.motion.skeleton import forward_kinematics_arrays

MOCAP = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap"
#: per convention (folder): (clip the limits are fitted on, held-out clip the pose is fitted to)
SPLITS = {
    "perfume": ("A_test.bvh", "B_test.bvh"),
    "lafan1": ("dance1_subject1.bvh", "dance1_subject2.bvh"),
    "cmu_secondlife": ("60_05_scaled.bvh", "61_05_scaled.bvh"),
    "adelaide": ("louise.bvh", "milad.bvh"),
    "cmu_cgspeed_mb": ("01_01.bvh", "cmu_12_01_walk.bvh"),
    "cmu_cgspeed_max": ("131_01.bvh", "131_02.bvh"),
    "sfu": ("0005_Jogging001.bvh", "0005_JumpRope001.bvh"),
    "bandai_namco": ("dataset-1_dance-short_normal_001.bvh", "dataset-1_kick_normal_001.bvh"),
}
NOISE_M, DROP = 0.02, 0.2
#: weight of the limit loss (radians outside, summed over joints) against the position loss (m^2)
LIMIT_WEIGHT = 0.1


def qrot(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors v [..., 3] by unit quaternions q [..., 4]."""
    w, u = q[..., :1], q[..., 1:]
    t = 2.0 * torch.cross(u, v, dim=-1)
    return v + w * t + torch.cross(u, t, dim=-1)


def qmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        -1,
    )


def fk(q: torch.Tensor, offsets: torch.Tensor, root: torch.Tensor, parents: list[int]) -> torch.Tensor:
    """Global joint positions [F, J, 3] of local rotations q [F, J, 4] (parents before children)."""
    gr: list[torch.Tensor] = []
    gp: list[torch.Tensor] = []
    for j, p in enumerate(parents):
        if p < 0:
            gr.append(q[:, j])
            gp.append(root)
        else:
            gr.append(qmul(gr[p], q[:, j]))
            gp.append(gp[p] + qrot(gr[p], offsets[j].expand_as(root)))
    return torch.stack(gp, 1)


def twist_error(fit: np.ndarray, true: np.ndarray, axes: np.ndarray, has_child: np.ndarray) -> float:
    """Mean degrees of rotation about each joint's bone (its first child's offset) between the
    fitted and the true local rotations, over joints with a child."""
    d = quat.inv_mul(true, fit)[:, has_child]
    a = axes[has_child]
    s = np.sum(d[..., 1:] * a, -1)
    return float(np.degrees(np.mean(np.abs(2.0 * np.arctan2(s, np.abs(d[..., 0])) * np.sign(d[..., 0] + 1e-300)))))


def run(folder: str, frames: int, steps: int, seed: int = 0) -> list[tuple]:
    train, test = (load(MOCAP / folder / name) for name in SPLITS[folder])
    if train.skeleton.names != test.skeleton.names:
        print(f"{folder}: the two clips have different skeletons, skipped", file=sys.stderr)
        return []
    limits = JointLimits.fit(train)
    sk = test.skeleton
    parents = [int(p) for p in sk.parents]
    step = max(1, test.rotations.shape[0] // frames)
    q_true = test.rotations[::step][:frames]
    lp = test.positions[::step][:frames]
    _, clean = forward_kinematics_arrays(q_true, lp, sk.parents)
    unit = float(np.median(clean[:, 0, 1]) / 0.95) if np.median(clean[:, 0, 1]) > 0 else 1.0  # hips ~0.95 m
    rng = np.random.default_rng(seed)
    noisy = clean + rng.normal(scale=NOISE_M * unit / np.sqrt(3), size=clean.shape)  # 2 cm RMS
    seen = torch.tensor(rng.random(clean.shape[:2]) >= DROP)
    target, offsets = torch.tensor(noisy), torch.tensor(sk.offsets)
    root = torch.tensor(noisy[:, 0])  # the root position: its noisy marker
    child = np.full(len(parents), -1)
    for j in range(len(parents) - 1, 0, -1):
        child[parents[j]] = j
    has_child = child >= 0
    axes = np.where(has_child[:, None], sk.offsets[np.maximum(child, 0)], 1.0)
    axes = axes / np.maximum(np.linalg.norm(axes, axis=1, keepdims=True), 1e-12)
    tl = limits.to_torch("cpu")
    rows = []
    for method in ("no prior", "limit loss", "projection"):
        q = torch.zeros(q_true.shape, dtype=torch.float64)
        q[..., 0] = 1.0
        q.requires_grad_(True)
        opt = torch.optim.Adam([q], lr=0.02)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)  # settles every run
        t0 = time.perf_counter()
        for _ in range(steps):
            opt.zero_grad()
            err = ((fk(q / q.norm(dim=-1, keepdim=True), offsets, root, parents) - target) / unit) ** 2
            loss = err.sum(-1)[seen].mean()
            if method == "limit loss":
                # power 1: a constant push out to the boundary (squared violation fades there)
                loss = loss + LIMIT_WEIGHT * jlt.loss(tl, q, reduction="sum", power=1.0) / q.shape[0]
            loss.backward()
            opt.step()
            sched.step()
            if method == "projection":
                with torch.no_grad():
                    q.copy_(tl.project(q))
        secs = time.perf_counter() - t0
        fit = (q / q.norm(dim=-1, keepdim=True)).detach().numpy()
        got = fk(torch.tensor(fit), offsets, root, parents).numpy()
        mpjpe = float(np.mean(np.linalg.norm(got - clean, axis=-1)) / unit * 1000.0)
        outside = int(np.sum(limits.violation(fit) > 1e-6))
        rows.append((folder, method, mpjpe, outside, twist_error(fit, q_true, axes, has_child), secs))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=".", help="output folder (the table is written there too)")
    ap.add_argument("--full", action="store_true", help="every convention, 60 frames, 300 steps")
    a = ap.parse_args(argv)
    if not MOCAP.is_dir():
        print(f"the shared clips are not at {MOCAP}: nothing to fit", file=sys.stderr)
        return 0
    folders = list(SPLITS) if a.full else ["perfume"]
    frames, steps = (60, 300) if a.full else (20, 100)
    lines = [
        "| convention | method | MPJPE (mm) | joint-frames outside | twist error (deg) | time (s) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    rows = []
    for folder in folders:
        for r in run(folder, frames, steps):
            rows.append(r)
            lines.append(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]} | {r[4]:.1f} | {r[5]:.1f} |")
            print(lines[-1], flush=True)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "pose_fitting_torch.md").write_text("\n".join(lines) + "\n")
    figure(rows, Path(a.out) / "pose_fitting_torch.png")
    print("\n".join(lines))
    return 0


def figure(rows: list[tuple], path: Path) -> None:
    """The table as bars: per convention and method, MPJPE, joint-frames outside, twist error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = ["no prior", "limit loss", "projection"]
    folders = sorted({r[0] for r in rows}, key=[r[0] for r in rows].index)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), dpi=90)
    for ax, col, title in zip(axes, (2, 3, 4), ("MPJPE (mm)", "joint-frames outside", "twist error (deg)")):
        for k, m in enumerate(methods):
            vals = [next(r[col] for r in rows if r[0] == f and r[1] == m) for f in folders]
            xs = np.arange(len(folders)) + (k - 1) * 0.27
            ax.bar(xs, vals, width=0.27, label=m)
        ax.set_xticks(np.arange(len(folders)), folders)
        ax.set_title(title)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9, frameon=False)  # outside the axes
    fig.suptitle("pose fitting to noisy positions (2 cm, 20% dropped), held-out frames")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())

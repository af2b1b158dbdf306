"""``jointlimits info``: what a clip holds."""

from __future__ import annotations

import math
from pathlib import Path

import click

from ._common import emit, friendly_errors, json_option, quiet_option

__all__ = ["info_command"]


@click.command("info")
@click.argument("clip", type=click.Path(path_type=Path))
@click.option(
    "--anatomy",
    "show_anatomy",
    is_flag=True,
    help="Per canonical segment, the range of flexion, abduction and rotation in degrees.",
)
@quiet_option
@json_option
@friendly_errors
def info_command(clip: Path, show_anatomy: bool, quiet: bool, as_json: bool) -> None:
    """Print a clip's joints, channels, frames, fps, duration, units, up axis and body height
    (the standing height over the whole clip: head above the lowest foot point). CLIP is any
    supported motion format: .bvh, .glb/.gltf, .usd/.usda/.usdc, .fbx (through Blender) or AMASS .npz."""
    from .. import io as motion_io
    from ..motion.units import guess_units, guess_up_axis, stature

    m = motion_io.load(clip)
    sk = m.skeleton
    up = guess_up_axis(m) if m.num_frames else "+y"
    units = guess_units(m, stature(m, up))
    joints = [
        {
            "name": n,
            "parent": (sk.names[p] if p >= 0 else None),
            "channels": sk.channels[j],
            "offset": sk.offsets[j].tolist(),
        }
        for j, (n, p) in enumerate(zip(sk.names, sk.parents))
    ]
    data = {
        "file": str(clip),
        "joints": sk.num_joints,
        "end_sites": len(sk.end_sites),
        "channels": int(sum(len(c) for c in sk.channels)),
        "frames": m.num_frames,
        "frame_time": m.frame_time,
        "fps": m.fps,
        "duration": m.duration,
        "units_guess": units.name,
        "metres_per_unit": units.metres_per_unit,
        "body_height": units.height if math.isfinite(units.height) else None,
        "up_axis_guess": up,
        "skeleton": joints,
    }
    lines = [
        f"{clip}",
        f"  {m.num_frames} frames at {m.fps:.4g} fps ({m.duration:.2f} s), "
        f"{data['joints']} joints, {data['end_sites']} end sites, {data['channels']} channels",
        f"  up axis guess {up}; units guess {units.name} "
        + (
            f"(body height over the clip {units.height:.4g} -> {units.height * units.metres_per_unit:.2f} m)"
            if math.isfinite(units.height * units.metres_per_unit)
            else "(no body height: the clip has no frames)"
        ),
    ]
    if show_anatomy:
        from ..motion.anatomy import anatomy, angle_ranges

        body = anatomy(sk, m)
        ranges = angle_ranges(m, body)
        seg_joints = {n: [sk.names[j] for j in body.segments[n].joints] for n in ranges}
        data["anatomy"] = {n: {"joints": seg_joints[n], **r} for n, r in ranges.items()}
        lines.append("  anatomical angles (deg, min..max): flexion/extension, abduction/adduction, rotation")
        for n, r in ranges.items():
            jn = ",".join(seg_joints[n])
            f, a, t = (r[k] for k in ("flexion", "abduction", "rotation"))
            lines.append(
                f"    {n:15s} {f[0]:7.1f}..{f[1]:6.1f}  {a[0]:7.1f}..{a[1]:6.1f}  {t[0]:7.1f}..{t[1]:6.1f}  ({jn})"
            )
        emit("\n".join(lines), data, quiet, as_json, unknown_as_null=True)
        return
    depth = sk.depth()
    for j, n in enumerate(sk.names):
        chans = " ".join(c[0] + c[1:4].replace("pos", "p").replace("rot", "r") for c in sk.channels[j])
        lines.append(f"  {'  ' * int(depth[j])}{n}  [{chans}]")
    emit("\n".join(lines), data, quiet, as_json, unknown_as_null=True)

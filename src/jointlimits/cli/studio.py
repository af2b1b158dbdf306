"""``jointlimits studio``: the interactive local web app (a thin layer over :mod:`jointlimits.studio`)."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import click

from ._common import BadInput, friendly_errors

__all__ = ["studio_command", "is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``): reachable from this machine only."""
    from ..studio.access import is_loopback as loopback  # the studio package loads only when used

    return loopback(host)


@click.command("studio")
@click.argument("clips", nargs=-1, metavar="[CLIP]...", type=click.Path(path_type=Path))
@click.option(
    "--limits", "limits_file", type=click.Path(path_type=Path), help="Limits file (default: fit on the clips)."
)
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8080, show_default=True, help="Port the studio serves on."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address or name to bind (IPv4, IPv6 such as ::1 or [::1], or a name of this machine): a loopback "
    "address unless --allow-remote is given.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow an address other machines reach (prints a warning). Every request, loopback or not, must "
    "carry the random token in the printed URL and name the studio in its Host header.",
)
@click.option(
    "--save-dir",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="Folder for saved clips, poses and limits (new numbered files, never replacing one).",
)
@friendly_errors
def studio_command(
    clips: tuple[Path, ...], limits_file: Path | None, port: int, host: str, allow_remote: bool, save_dir: Path
) -> None:
    """Play clips, pose joints against their limits and drag IK targets in the browser.
    Without CLIP: the built-in humanoid, an over-rotated range-of-motion clip and limits fitted on it."""
    from .._optional import require

    require("viser", "studio", "the studio")  # before any fitting: a missing extra fails at once
    from .. import io as motion_io
    from ..limits.model import JointLimits
    from ..motion import procedural
    from ..studio import Clip, StudioState
    from ..studio.access import resolve_host
    from ..studio.app import StudioApp

    token = secrets.token_urlsafe(16)  # every run, loopback too: any web page can reach a loopback port
    if not is_loopback(host) and not allow_remote:
        raise BadInput(
            f"--host {host} is reachable from other machines, and the studio writes into --save-dir: "
            "pass --allow-remote to serve it anyway (with a token)"
        )
    try:
        resolve_host(host)  # before any fitting: an address it cannot serve on fails in one line, within 2 s
    except ValueError as e:
        raise BadInput(str(e)) from None
    if not save_dir.is_dir():
        raise BadInput(f"{save_dir}: save folder does not exist")
    if clips:
        ms = [motion_io.load(c) for c in clips]  # every motion format (.bvh, .glb, .gltf, .npz)
        items = [Clip(c.name, m, c) for c, m in zip(clips, ms)]
        fit_on = ms
    else:
        rom = procedural.range_of_motion()
        items = [Clip("over-rotated range of motion", procedural.over_rotate(rom, 0.5))]
        fit_on = [rom]
    limits = JointLimits.load(limits_file) if limits_file else JointLimits.fit(fit_on)
    inputs = [*clips, *([limits_file] if limits_file else [])]
    state = StudioState(items, limits, fit_clips=fit_on, save_dir=save_dir, inputs=inputs)
    app = StudioApp(state, host=host, port=port, token=token).start()
    if not is_loopback(host):
        click.echo(
            f"warning: the studio on {host} is reachable from other machines; anyone with this URL can pose "
            f"and save into {save_dir}",
            err=True,
        )
    click.echo(f"studio at {app.url} (Ctrl-C to stop)")
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        app.stop()

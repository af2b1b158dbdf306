"""The studio's viser server: scene, gizmos and GUI over a :class:`StudioState`."""

from __future__ import annotations

import secrets
import threading
import time
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .._optional import require
from ..motion import quat
from . import posing
from .access import TOKEN_COOKIE, BindAddress, guarded, resolve_host
from .scene import ContactDrawing, SkeletonDrawing, violation_colors
from .state import SaveError, StudioState

if TYPE_CHECKING:
    from viser import GuiEvent, TransformControlsEvent

__all__ = ["StudioApp", "TOKEN_COOKIE"]

_INPUT_COLORS = [(150, 150, 160), (120, 160, 220), (200, 150, 120)]


class StudioApp:
    """Serve ``state`` on ``host:port`` (127.0.0.1 by default). ``start()`` returns at once.

    ``host`` is an IPv4 or IPv6 literal (bracketed or not) or a name of this machine; ``start()``
    raises ``ValueError`` with one line, within 2 s, when the studio cannot listen there. Every
    request must name the studio in its ``Host`` header and, when it has an ``Origin``, come from
    the studio's page (see :mod:`jointlimits.studio.access`). ``token=True`` (the default) makes a
    random per-run token that every request must carry (it is in :attr:`url`); a string is that
    token; ``None`` turns the token off (the Host and Origin checks stay)."""

    def __init__(
        self, state: StudioState, host: str = "127.0.0.1", port: int = 8080, token: str | None | Literal[True] = True
    ):
        self.state = state
        self.host, self.port = host, port
        #: when set, every HTTP and websocket request must carry it (``?token=`` or the cookie)
        self.token: str | None = secrets.token_urlsafe(16) if token is True else token
        self.address: BindAddress | None = None
        self.server: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.contacts: ContactDrawing | None = None  # discs under planted feet, made when first drawn

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> StudioApp:
        viser = require("viser", "studio", "the studio")

        st = self.state
        self.address = where = resolve_host(self.host)
        with guarded(where, self.token):
            self.server = s = viser.ViserServer(host=where.bind, port=self.port, verbose=False)
        self.port = s.get_port()
        s.scene.set_up_direction("+y")
        s.initial_camera.position = (0.0, 1.3, 4.0)
        s.initial_camera.look_at = (0.0, 0.9, 0.0)
        s.scene.add_grid("/ground", width=8, height=8, plane="xz", cell_size=0.5)
        sk = st.skeleton
        self.drawings = [
            SkeletonDrawing(
                s.scene, f"/clip{k}", sk, _INPUT_COLORS[k % 3], 0.008, 0.014, 0.5, False, units=st.metres_per_unit
            )
            for k in range(len(st.inputs))
        ]
        self.work_drawing = SkeletonDrawing(s.scene, "/work", sk, (70, 110, 200), 0.02, 0.032, units=st.metres_per_unit)
        self.ghost = SkeletonDrawing(
            s.scene, "/ghost", sk, (255, 150, 40), 0.01, 0.018, 0.45, False, units=st.metres_per_unit
        )
        self.gizmo = s.scene.add_transform_controls(
            "/gizmo", scale=0.25, disable_axes=True, disable_sliders=True, depth_test=False
        )
        self.target = s.scene.add_transform_controls(
            "/target", scale=0.2, disable_rotations=True, depth_test=False, visible=False
        )
        self.gizmo.on_update(self._on_gizmo)
        self.target.on_update(self._on_target)
        self.pole = s.scene.add_transform_controls(
            "/pole", scale=0.12, disable_rotations=True, depth_test=False, visible=False
        )
        self.pole.on_update(self._on_pole)
        self._build_gui()
        self.redraw()
        self._thread = threading.Thread(target=self._play_loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.server is not None:
            self.server.stop()

    @property
    def url(self) -> str:
        host = self.address.url_host if self.address is not None else self.host
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    # ------------------------------------------------------------------ GUI
    def _build_gui(self) -> None:
        st, g = self.state, self.server.gui
        with g.add_folder("Playback"):
            self.frame_slider = g.add_slider("Frame", 0, max(st.num_frames - 1, 1), 1, st.frame)
            self.play_box = g.add_checkbox("Play", False)
            self.speed = g.add_slider("Speed", 0.1, 3.0, 0.1, 1.0)
            self.loop_box = g.add_checkbox("Loop", True)
            self.inputs_box = g.add_checkbox("Show inputs", True)
            self.follow_box = g.add_checkbox("Follow root", True)
        with g.add_folder("Pose"):
            self.mode = g.add_dropdown("Gizmo", ["rotate joint"] + [posing.ik_mode(k).label for k in st.ik_chains])
            self.joint = g.add_dropdown("Joint", st.joint_names(), initial_value=st.skeleton.names[st.selected])
            self.limits_box = g.add_checkbox("Limits on", True)
            info = st.joint_limit_info()
            self.shape = g.add_dropdown("Shape", list(st.shapes()), initial_value=info.get("shape", "ellipsoid"))
            self.swing_box = g.add_checkbox("Swing-twist", bool(info.get("swing_twist", False)))
            self.padding = g.add_slider("Padding", 0.0, 0.5, 0.01, float(info.get("padding", 0.05)))
            self.enabled_box = g.add_checkbox("Joint limit enabled", bool(info.get("enabled", True)))
            self.soften_box = g.add_checkbox("Soften", False)
            self.radius = g.add_slider("Soften radius", 0.0, 0.5, 0.01, 0.1)
            self.readout = g.add_markdown("")
            self.plot = g.add_plotly(self._figure(), aspect=1.0)
        with g.add_folder("Edit"):
            apply_b = g.add_button("Apply limits")
            filt_b = g.add_button("Filter")
            lock_b = g.add_button("Foot-lock")
            splice_b = g.add_button("Splice next clip")
            save_c = g.add_button("Save clip")
            save_p = g.add_button("Save pose")
            save_l = g.add_button("Save limits")
            self.status = g.add_markdown("")
        self.frame_slider.on_update(lambda _: self._ui(lambda: st.set_frame(int(self.frame_slider.value))))

        def set_playing(_: GuiEvent[Any]) -> None:
            st.playing = bool(self.play_box.value)

        def set_speed(_: GuiEvent[Any]) -> None:
            st.speed = float(self.speed.value)

        def set_loop(_: GuiEvent[Any]) -> None:
            st.loop = bool(self.loop_box.value)

        self.play_box.on_update(set_playing)
        self.speed.on_update(set_speed)
        self.loop_box.on_update(set_loop)

        def show_inputs() -> None:
            for c in st.inputs:
                c.visible = bool(self.inputs_box.value)

        self.inputs_box.on_update(lambda _: self._ui(show_inputs))
        self.mode.on_update(lambda _: self._ui(self._set_mode))
        self.joint.on_update(lambda _: self._ui(lambda: st.select_joint(self.joint.value)))
        self.limits_box.on_update(lambda _: self._ui(lambda: st.set_limits_on(bool(self.limits_box.value))))
        refit = lambda _: self._ui(  # noqa: E731
            lambda: st.refit_joint(
                shape=self.shape.value,
                swing_twist=bool(self.swing_box.value),
                padding=float(self.padding.value),
            )
        )
        self.shape.on_update(refit)
        self.swing_box.on_update(refit)
        self.padding.on_update(refit)
        self.enabled_box.on_update(lambda _: self._ui(lambda: st.set_joint_enabled(None, bool(self.enabled_box.value))))
        soft = lambda _: self._ui(  # noqa: E731
            lambda: st.set_soften((1.0, float(self.radius.value)) if self.soften_box.value else None)
        )
        self.soften_box.on_update(soft)
        self.radius.on_update(soft)
        apply_b.on_click(lambda _: self._ui(st.apply_limits, "applied limits"))
        filt_b.on_click(lambda _: self._ui(lambda: f"filtered at cuts {st.filter()}"))
        lock_b.on_click(lambda _: self._ui(lambda: f"foot-locked: {st.footlock()['segments']} contacts"))
        splice_b.on_click(lambda _: self._ui(self._splice))
        save_c.on_click(lambda _: self._ui(lambda: f"saved {st.save_clip()}"))
        save_p.on_click(lambda _: self._ui(lambda: f"saved {st.save_pose()}"))
        save_l.on_click(lambda _: self._ui(lambda: f"saved {st.save_limits()}"))

    def _figure(self) -> Any:
        from .plot import limit_figure

        st = self.state
        with st.lock:
            j = st.selected
            return limit_figure(st.limits, j, st.fit_clips, st.raw[j], st.pose[j])

    def update_plot(self, force: bool = False) -> None:
        """Redraw the limit-space panel (at most twice a second unless ``force``)."""
        now = time.monotonic()
        if not force and now - getattr(self, "_plot_time", 0.0) < 0.5:
            return
        self._plot_time = now
        try:
            self.plot.figure = self._figure()
        except Exception:  # a panel that cannot be drawn must not stop posing
            pass

    def _ui(self, fn: Any, message: str | None = None) -> None:
        try:
            out = fn()
            if isinstance(out, str):
                self.status.content = out
            elif message:
                self.status.content = message
        except (SaveError, Exception) as e:  # shown in the panel; the server keeps running
            self.status.content = f"**error:** {e}"
        self.redraw()
        self.update_plot(force=True)

    def _splice(self) -> str:
        msg = self.state.splice()
        self.frame_slider.max = max(self.state.num_frames - 1, 1)
        return msg

    def _set_mode(self) -> None:
        label = self.mode.value
        keys = [k for k in self.state.ik_chains if posing.ik_mode(k).label == label]
        self.state.set_ik_mode(keys[0] if keys else None)

    # ------------------------------------------------------------------ events (also driven by tests)
    def _on_gizmo(self, event: TransformControlsEvent) -> None:
        """The joint gizmo dragged: pose the joint; the panel redrawn at once when the drag ends."""
        self.on_joint_gizmo(np.asarray(event.target.wxyz))
        self.update_plot(force=event.phase == "end")

    def _on_target(self, event: TransformControlsEvent) -> None:
        self.on_ik_target(np.asarray(event.target.position))

    def _on_pole(self, event: TransformControlsEvent) -> None:
        self.on_ik_pole(np.asarray(event.target.position))

    def on_joint_gizmo(self, wxyz: np.ndarray) -> np.ndarray:
        """The rotation gizmo moved to global ``wxyz``: limited local rotation of the joint."""
        self.state.playing = False
        out = self.state.rotate_joint(self.state.selected, wxyz, space="global")
        self.redraw(move_gizmos=False)
        return out

    def on_ik_target(self, position_m: np.ndarray) -> np.ndarray:
        """The IK target moved to ``position_m`` (metres): the new pose."""
        self.state.playing = False
        out = self.state.move_ik_target(np.asarray(position_m, np.float64) / self.state.metres_per_unit)
        self.redraw(move_gizmos=False)
        return out

    def on_ik_pole(self, position_m: np.ndarray) -> np.ndarray:
        """The pole handle (two-bone modes) moved to ``position_m`` (metres): the new pose."""
        st = self.state
        st.playing = False
        st.ik_use_pole = True
        if st.ik_target is None:  # set with the IK mode: without one there is no chain to bend
            raise ValueError("no IK mode selected")
        out = st.move_ik_target(st.ik_target, pole=np.asarray(position_m, np.float64) / st.metres_per_unit)
        self.redraw(move_gizmos=False)
        return out

    # ------------------------------------------------------------------ drawing
    def redraw(self, move_gizmos: bool = True) -> None:
        st = self.state
        mpu = st.metres_per_unit
        with st.lock:
            for d, c in zip(self.drawings, st.inputs):
                f = st.clip_frame(c)
                gr, gp = posing.pose_fk(st.skeleton, c.motion.rotations[f], c.motion.positions[f])
                d.update(gr, gp * mpu, visible=c.visible)
            gr, gp = posing.pose_fk(st.skeleton, st.pose, st.positions)
            viol = st.limits.violation(st.pose[None])[0]
            self.work_drawing.update(gr, gp * mpu, violation_colors(viol))
            self.follow_root(gp[0] * mpu)
            self._draw_contacts(gp * mpu)
            rgr, rgp = posing.pose_fk(st.skeleton, st.raw, st.positions)
            ghost = bool(np.max(quat.angle(st.raw, st.pose)) > 1e-4)
            self.ghost.update(rgr, rgp * mpu, visible=ghost)
            j = st.selected
            if move_gizmos:
                self.gizmo.position = tuple(rgp[j] * mpu)
                self.gizmo.wxyz = tuple(rgr[j])
                if st.ik_target is not None:
                    self.target.position = tuple(st.ik_target * mpu)
                if st.ik_pole is not None:
                    self.pole.position = tuple(st.ik_pole * mpu)
            self.gizmo.visible = st.ik_key is None
            self.target.visible = st.ik_key is not None
            self.pole.visible = st.ik_key is not None and st.ik_pole is not None and posing.ik_mode(st.ik_key).uses_pole
            worst = int(np.argmax(viol))
            self.readout.content = (
                f"frame {st.frame} · {st.skeleton.names[j]} outside by "
                f"{np.degrees(st.limits.violation(st.raw[None])[0, j]):.1f}° (gizmo) → "
                f"{np.degrees(viol[j]):.1f}° · worst {st.skeleton.names[worst]} "
                f"{np.degrees(viol[worst]):.1f}°"
            )

    def follow_root(self, root_m: np.ndarray) -> None:
        """Keep every client's camera on the working clip's root (``root_m``, metres): the camera
        and the point it looks at shift by the root's horizontal distance from that point, so a
        clip that walks away stays in view; the height and angle the user chose stay. Off with
        the "Follow root" checkbox."""
        box = getattr(self, "follow_box", None)
        if box is None or not bool(box.value):
            return
        for client in list(self.server.get_clients().values()):
            cam = client.camera
            try:
                look = np.asarray(cam.look_at, np.float64)
                pos = np.asarray(cam.position, np.float64)
            except AssertionError:  # the client has not sent its camera yet
                continue
            move = np.array([float(root_m[0]) - look[0], 0.0, float(root_m[2]) - look[2]])
            if float(np.abs(move).max()) < 1e-3:
                continue
            cam.position = tuple(pos + move)  # viser moves the look-at point with the position

    def _draw_contacts(self, gp_m: np.ndarray) -> None:
        """Discs under the working clip's planted feet (after foot-lock), on the current frame."""
        work = self.state.work
        if work.contacts is None or not work.feet:
            return
        if self.contacts is None or self.contacts.n != len(work.feet):
            self.contacts = ContactDrawing(self.server.scene, "/contacts", len(work.feet))
        f = min(self.state.clip_frame(work), len(work.contacts) - 1)
        feet = gp_m[list(work.feet)]
        self.contacts.update(feet, work.contacts[f], float(feet[:, 1].min()))

    def _play_loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(1 / 30):
            now = time.monotonic()
            if self.state.playing:
                f = self.state.advance(now - last)
                try:
                    self.redraw()
                    self.frame_slider.value = f
                except Exception:  # a client vanished mid-update; keep playing
                    pass
            last = now

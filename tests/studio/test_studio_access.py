"""#41: the studio answers only its own page. Raw requests with forged Host and Origin headers, with
and without the per-run token, on IPv4 and IPv6 loopback, and --host values it cannot serve on."""

from __future__ import annotations

import socket
import time

import pytest

from jointlimits import JointLimits
from jointlimits.motion import procedural
from jointlimits.studio import Clip, StudioState

pytest.importorskip("viser", reason="the studio needs the [studio] extra (viser)")

UPGRADE = {
    "Upgrade": "websocket",
    "Connection": "Upgrade",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Protocol": "viser-v1",
}


def _raw(addr: str, port: int, path: str, headers: dict[str, str]) -> int:
    """Send one GET with exactly ``headers`` (no Host added); the response's status code."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect((addr, port))
        lines = [f"GET {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
        s.sendall("\r\n".join(lines).encode())
        status = s.recv(4096).split(b"\r\n", 1)[0]
    return int(status.split()[1])


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    rom = procedural.range_of_motion(seconds=1.0)
    return StudioState([Clip("rom", rom)], JointLimits.fit(rom), fit_clips=[rom], save_dir=tmp_path_factory.mktemp("o"))


@pytest.fixture(scope="module")
def app(state):
    from jointlimits.studio.app import StudioApp

    a = StudioApp(state, port=0).start()  # the default: a fresh per-run token
    yield a
    a.stop()


def test_every_request_needs_the_token_by_default(app):
    assert app.token and len(app.token) >= 16 and app.url == f"http://127.0.0.1:{app.port}/?token={app.token}"
    host = f"127.0.0.1:{app.port}"
    assert _raw("127.0.0.1", app.port, "/", {"Host": host}) == 403
    assert _raw("127.0.0.1", app.port, "/?token=wrong", {"Host": host}) == 403
    assert _raw("127.0.0.1", app.port, f"/?token={app.token}", {"Host": host}) == 200
    assert _raw("127.0.0.1", app.port, "/", {"Host": host, **UPGRADE}) == 403  # the websocket too
    assert _raw("127.0.0.1", app.port, f"/?token={app.token}", {"Host": host, **UPGRADE}) == 101


def test_a_foreign_host_gets_403_on_loopback_too(app):
    ok = f"/?token={app.token}"
    for host in ("evil.example", f"evil.example:{app.port}", f"rebind.attacker.test:{app.port}", "127.0.0.1:1"):
        assert _raw("127.0.0.1", app.port, ok, {"Host": host}) == 403, host
        assert _raw("127.0.0.1", app.port, ok, {"Host": host, **UPGRADE}) == 403, host
    assert _raw("127.0.0.1", app.port, ok, {}) == 403  # no Host at all
    for host in (f"127.0.0.1:{app.port}", f"localhost:{app.port}", f"[::1]:{app.port}"):  # loopback names
        assert _raw("127.0.0.1", app.port, ok, {"Host": host}) == 200, host


def test_a_websocket_from_a_foreign_origin_gets_403(app):
    ok, host = f"/?token={app.token}", f"127.0.0.1:{app.port}"
    for origin in ("http://evil.example", f"http://evil.example:{app.port}", "null", "http://127.0.0.1:1"):
        assert _raw("127.0.0.1", app.port, ok, {"Host": host, "Origin": origin, **UPGRADE}) == 403, origin
        assert _raw("127.0.0.1", app.port, ok, {"Host": host, "Origin": origin}) == 403, origin
    for origin in (f"http://127.0.0.1:{app.port}", f"http://localhost:{app.port}"):  # the studio's own page
        assert _raw("127.0.0.1", app.port, ok, {"Host": host, "Origin": origin, **UPGRADE}) == 101, origin


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
@pytest.mark.parametrize("given", ["[::1]", "::1"])
def test_an_ipv6_literal_serves(state, given):
    from jointlimits.studio.app import StudioApp

    a = StudioApp(state, host=given, port=0).start()
    try:
        assert a.url.startswith(f"http://[::1]:{a.port}/?token=")
        host = f"[::1]:{a.port}"
        assert _raw("::1", a.port, f"/?token={a.token}", {"Host": host}) == 200
        assert _raw("::1", a.port, f"/?token={a.token}", {"Host": host, "Origin": f"http://{host}", **UPGRADE}) == 101
        assert _raw("::1", a.port, f"/?token={a.token}", {"Host": f"evil.example:{a.port}"}) == 403
    finally:
        a.stop()


def test_a_name_serves(state):
    from jointlimits.studio.app import StudioApp

    a = StudioApp(state, host="localhost.", port=0).start()  # a trailing dot: the same name
    try:
        assert a.url.startswith(f"http://localhost:{a.port}/?token=")
        assert _raw("127.0.0.1", a.port, f"/?token={a.token}", {"Host": f"localhost:{a.port}"}) == 200
    finally:
        a.stop()


@pytest.mark.parametrize("host", ["no-such-host.invalid", "192.0.2.1", "[::1", "a..b"])
def test_an_address_it_cannot_serve_on_is_refused_in_one_line(tmp_path, host):
    from click.testing import CliRunner

    from jointlimits.cli import main

    t = time.monotonic()
    res = CliRunner().invoke(main, ["studio", "--host", host, "--allow-remote", "--save-dir", str(tmp_path)])
    took = time.monotonic() - t
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and host in lines[0], res.output
    assert "Traceback" not in res.output
    assert took < 2.0 + 1.0, took  # the look-up gives up after 2 s; the rest is the command's start

"""Who may drive the studio: the address it binds, and the checks every request passes.

The studio's server answers only its own page. Every HTTP request and websocket upgrade must

- name the studio in its ``Host`` header (the bound address or name, with the bound port; on a
  loopback bind also ``localhost``, ``127.0.0.1`` and ``[::1]``), so a DNS-rebinding site is refused;
- come from the studio's own page when it carries an ``Origin`` (a browser always sends one with a
  websocket), so another page open in the browser cannot drive it;
- carry the per-run token (``?token=`` in the printed URL, then a cookie the page's response sets),
  unless the app was made with ``token=None``.

Anything else gets ``403 Forbidden``.
"""

from __future__ import annotations

import contextlib
import hmac
import http
import http.cookies
import ipaddress
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["TOKEN_COOKIE", "BindAddress", "resolve_host", "is_loopback", "refusal", "guarded"]

#: Cookie the studio sets once a request came with its token, so the page's own requests (scripts,
#: the websocket) carry it without the token in every URL.
TOKEN_COOKIE = "jointlimits_studio_token"

_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host[1:-1] if host.startswith("[") and host.endswith("]") else host)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``): reachable from this machine only."""
    if host.lower().rstrip(".") == "localhost":
        return True
    ip = _literal(host)
    return ip is not None and ip.is_loopback


@dataclass(frozen=True)
class BindAddress:
    """Where the studio listens: ``bind`` goes to the server, ``url_host`` into its URL."""

    given: str
    bind: str
    url_host: str
    loopback: bool
    wildcard: bool
    #: ``Host`` names (lower case, no port) a request may carry
    names: frozenset[str] = field(default_factory=frozenset)

    def allows(self, host: str) -> bool:
        """Whether a ``Host`` / ``Origin`` host part (no port) names this studio."""
        h = host.lower().rstrip(".")
        if h in self.names:
            return True
        # bound on every address: any address of the machine, typed as a literal (a rebinding site
        # has a name, never a literal)
        return self.wildcard and _literal(h) is not None


def resolve_host(host: str, timeout: float = 2.0) -> BindAddress:
    """Check that ``host`` (an IPv4 or IPv6 literal, bracketed or not, or a name) is an address of
    this machine the studio can listen on, within ``timeout`` seconds. Raises ``ValueError`` with
    one line when it is not."""
    h = host.strip()
    ip = _literal(h)
    bind = str(ip) if ip is not None else h.rstrip(".")
    if not bind:
        raise ValueError(f"--host {host!r}: give an address or a name")
    if ip is None and not all(part and len(part) < 64 for part in bind.split(".")):
        raise ValueError(f"--host {host}: not a valid host name")
    infos: list[Any] = []
    errors: list[BaseException] = []

    def look_up() -> None:
        try:
            infos.extend(socket.getaddrinfo(bind, 0, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as e:
            errors.append(e)

    t = threading.Thread(target=look_up, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise ValueError(f"--host {host}: the name did not resolve within {timeout:g} s")
    if errors or not infos:
        reason = getattr(errors[0], "strerror", None) or str(errors[0]) if errors else "no address"
        raise ValueError(f"--host {host}: cannot resolve it ({reason})")
    bound = False
    addresses = []
    for family, kind, proto, _, addr in infos:
        addresses.append(addr[0])
        with contextlib.suppress(OSError), socket.socket(family, kind, proto) as s:
            s.bind((addr[0], 0))
            bound = True
    if not bound:
        raise ValueError(f"--host {host}: not an address of this machine ({', '.join(sorted(set(addresses)))})")
    loopback = all(is_loopback(a) for a in addresses)
    wildcard = any(_literal(a) is not None and _literal(a).is_unspecified for a in addresses)  # type: ignore[union-attr]
    url_host = f"[{bind}]" if ip is not None and ip.version == 6 else bind
    names = {bind.lower(), url_host.lower()}
    if loopback:
        names |= _LOOPBACK_NAMES
    if wildcard:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return BindAddress(host, bind, url_host, loopback, wildcard, frozenset(names))


def _split_host_port(value: str, default_port: int) -> tuple[str, int] | None:
    """``host[:port]`` (IPv6 bracketed) -> (host, port); None when malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:]
    else:
        host, _, port_text = value.partition(":")
    if not host:
        return None
    if not port_text:
        return host, default_port
    return (host, int(port_text)) if port_text.isdigit() and len(port_text) <= 5 else None


def _has_token(request: Any, token: str) -> bool:
    """Whether an HTTP or websocket-upgrade request carries ``token`` (query or cookie)."""
    given = parse_qs(urlsplit(request.path).query).get("token", [""])[0]
    if not given:
        jar = http.cookies.SimpleCookie()
        with contextlib.suppress(http.cookies.CookieError):
            jar.load(request.headers.get("Cookie", ""))
        given = jar[TOKEN_COOKIE].value if TOKEN_COOKIE in jar else ""
    return hmac.compare_digest(given.encode(), token.encode())


def refusal(request: Any, where: BindAddress, port: int, token: str | None) -> str | None:
    """Why ``request`` (``.path`` and ``.headers``) to the studio on ``where``:``port`` is refused,
    or None when it may go on."""
    hosts = request.headers.get_all("Host") if hasattr(request.headers, "get_all") else [request.headers.get("Host")]
    if len(hosts) != 1 or not hosts[0]:
        return "one Host header is required"
    hp = _split_host_port(hosts[0], 80)
    if hp is None or hp[1] != port or not where.allows(hp[0]):
        return f"Host {hosts[0]!r} is not this studio"
    origin = request.headers.get("Origin")
    if origin is not None:
        o = urlsplit(origin)
        ohp = _split_host_port(o.netloc, 443 if o.scheme == "https" else 80) if o.scheme in ("http", "https") else None
        if ohp is None or ohp[1] != port or not where.allows(ohp[0]):
            return f"Origin {origin!r} is not this studio's page"
    if token is not None and not _has_token(request, token):
        return "this studio needs its token: open the URL it printed"
    return None


@contextlib.contextmanager
def guarded(where: BindAddress, token: str | None) -> Iterator[None]:
    """While viser starts its server: make every request it accepts (the page, its files, the
    websocket) pass :func:`refusal`, by wrapping the ``process_request`` hook viser gives
    websockets' ``serve``; refused ones get 403. With a token, the page's response sets the token
    cookie."""
    import websockets.asyncio.server as wss
    from websockets.datastructures import Headers
    from websockets.http11 import Response

    serve = wss.serve

    def guarded_serve(*args: Any, **kwargs: Any) -> Any:
        inner = kwargs.get("process_request")

        def process_request(connection: Any, request: Any) -> Any:
            port = int(connection.local_address[1])
            why = refusal(request, where, port, token)
            if why is not None:
                body = f"403 Forbidden: {why}\n".encode()
                headers = Headers([("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
                return Response(http.HTTPStatus.FORBIDDEN.value, "Forbidden", headers, body)
            resp = inner(connection, request) if inner is not None else None
            if resp is not None and token is not None:
                resp.headers["Set-Cookie"] = f"{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
            return resp

        kwargs["process_request"] = process_request
        return serve(*args, **kwargs)

    setattr(wss, "serve", guarded_serve)  # noqa: B010 - a class in websockets' stubs, a function here
    try:
        yield
    finally:
        setattr(wss, "serve", serve)  # noqa: B010

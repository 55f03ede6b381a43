"""Validation of remote-bot endpoints against SSRF: a bot address must not reach inside.

A user could register ``127.0.0.1:6379`` or a cloud metadata address and have
the workers dial it for them; this module is what refuses those.

An endpoint is ``host:port`` (``[v6addr]:port`` for IPv6). Every address the host
resolves to must be allowed: public unicast, or inside a network listed in
``LADDER_ENDPOINT_ALLOWED_NETWORKS``; loopback only in development mode. The
resolver is a parameter so tests can play DNS, and the match runner must call
``endpoint_check`` again right before connecting and dial the returned address
(a name may resolve elsewhere later: DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings

from ladder.common.exceptions import ApplicationError

Resolver = Callable[[str, int], Sequence[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class EndpointRejected(ApplicationError):
    """The endpoint is malformed or resolves to a forbidden address."""

    code = "endpoint_rejected"


@dataclass(frozen=True)
class CheckedEndpoint:
    """An endpoint with the addresses it resolved to, all of them allowed."""

    host: str
    port: int
    addresses: tuple[str, ...]

    @property
    def target(self) -> str:
        """The endpoint as stored: the name the author gave, normalised."""
        return host_port(self.host, self.port)

    @property
    def dial_target(self) -> str:
        """What a runner dials: the checked address, not the name (the name may resolve
        elsewhere on the next lookup: DNS rebinding)."""
        return host_port(self.addresses[0], self.port)


def host_port(host: str, port: int) -> str:
    """``host:port``, with an IPv6 host in brackets as gRPC targets want it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def system_resolver(host: str, port: int) -> list[str]:
    """All addresses of ``host`` via getaddrinfo (TCP)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]).split("%", 1)[0] for info in infos})


def parse_endpoint(endpoint: str) -> tuple[str, int]:
    """Split ``host:port``; raise EndpointRejected with a clear message."""
    raw = endpoint.strip()
    for scheme in ("grpc://", "dns:///"):
        if raw.lower().startswith(scheme):
            raw = raw[len(scheme) :]
    if not raw or len(raw) > 300 or any(c in raw for c in "/?#@ \t\r\n"):
        raise EndpointRejected("endpoint must look like host:port (no path, user or spaces)")
    if raw.startswith("["):
        host, sep, rest = raw[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise EndpointRejected("IPv6 endpoint must look like [address]:port")
        port_text = rest[1:]
    else:
        host, sep, port_text = raw.rpartition(":")
        if not sep or ":" in host:
            raise EndpointRejected("endpoint must look like host:port")
    if not host:
        raise EndpointRejected("endpoint has no host")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise EndpointRejected("port must be a number from 1 to 65535")
    return host.lower().rstrip("."), int(port_text)


def _allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [
        ipaddress.ip_network(n, strict=False) for n in settings.LADDER_ENDPOINT_ALLOWED_NETWORKS
    ]


def address_problem(addr: IPAddress, *, allow_loopback: bool) -> str | None:
    """Why an address is forbidden, or None when it is allowed."""
    if isinstance(addr, ipaddress.IPv6Address):
        mapped = addr.ipv4_mapped or addr.sixtofour
        if mapped is not None:
            return address_problem(mapped, allow_loopback=allow_loopback)
    if any(addr in net for net in _allowed_networks()):
        return None
    if addr.is_loopback:
        return None if allow_loopback else "loopback addresses are not allowed"
    if addr.is_unspecified or addr.is_multicast or addr.is_reserved:
        return "unspecified, multicast or reserved address"
    if addr.is_link_local:
        return "link-local address (cloud metadata lives there)"
    if addr.is_private or not addr.is_global:
        return "private or non-public address"
    return None


def endpoint_check(endpoint: str, *, resolver: Resolver | None = None) -> CheckedEndpoint:
    """Parse, resolve and check every address; raise EndpointRejected otherwise."""
    host, port = parse_endpoint(endpoint)
    allow_loopback = bool(settings.LADDER_DEV_MODE)
    if (host == "localhost" or host.endswith(".localhost")) and not allow_loopback:
        raise EndpointRejected("localhost is allowed only in development mode")
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses: Sequence[str] = [str(literal)]
    else:
        try:
            addresses = (resolver or system_resolver)(host, port)
        except (OSError, UnicodeError) as exc:
            raise EndpointRejected(f"cannot resolve {host!r}: {exc}") from exc
        if not addresses:
            raise EndpointRejected(f"{host!r} resolves to no address")
    for text in addresses:
        try:
            addr = ipaddress.ip_address(text)
        except ValueError as exc:
            raise EndpointRejected(f"{host!r} resolved to an invalid address {text!r}") from exc
        problem = address_problem(addr, allow_loopback=allow_loopback)
        if problem:
            raise EndpointRejected(f"{host!r} resolves to {text}: {problem}")
    return CheckedEndpoint(host=host, port=port, addresses=tuple(addresses))

"""Webhook URLs under the ladder's SSRF rules, and the one POST that sends a message.

A user's webhook URL is dialed by the ladder's workers, so it gets the checks a
remote bot's endpoint gets (``ladder.common.ssrf_check``): every address its host
resolves to must be public (or in ``LADDER_ENDPOINT_ALLOWED_NETWORKS``;
loopback only in development mode). It is checked when it is set and again
right before each POST, which dials the address that check returned and not
the name (the name may resolve elsewhere by then: DNS rebinding); TLS still
verifies the certificate against the name. Redirects are not followed (a
redirect could point inside). ``https`` is required; ``http`` only in
development mode.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

from ladder.common.ssrf_check import EndpointRejected, Resolver, endpoint_check, host_port
from ladder.notifications.models import WEBHOOK_URL_MAX

USER_AGENT = "digdown-ladder-notifications/1"
ERROR_BODY_BYTES = 300  # of a refusal's answer, kept as the delivery's last error


class WebhookRejected(EndpointRejected):
    """The webhook URL is malformed or reaches a forbidden address."""

    code = "webhook_rejected"


@dataclass(frozen=True)
class CheckedWebhook:
    """A webhook URL that passed the checks, with the address to dial."""

    url: str
    scheme: str
    host: str
    port: int
    target: str  # path and query, what the request line names
    address: str


def webhook_url_check(url: str, *, resolver: Resolver | None = None) -> CheckedWebhook:
    """Parse ``url``, resolve its host and check every address; WebhookRejected otherwise."""
    raw = url.strip()
    if not raw or len(raw) > WEBHOOK_URL_MAX or any(c in raw for c in " \t\r\n\x00"):
        raise WebhookRejected(f"a webhook URL is an http(s) URL of at most {WEBHOOK_URL_MAX} "
                              "characters without spaces")  # fmt: skip
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise WebhookRejected(f"not a URL: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise WebhookRejected("a webhook URL starts with https://")
    if scheme == "http" and not settings.LADDER_DEV_MODE:
        raise WebhookRejected("a webhook URL must use https (http only in development mode)")
    if parts.username is not None or parts.password is not None:
        raise WebhookRejected("a webhook URL carries no user or password (sign with the secret)")
    if parts.fragment:
        raise WebhookRejected("a webhook URL has no #fragment")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise WebhookRejected("a webhook URL names a host")
    port = port or (443 if scheme == "https" else 80)
    try:
        checked = endpoint_check(host_port(host, port), resolver=resolver)
    except EndpointRejected as exc:
        raise WebhookRejected(exc.message) from exc
    netloc = host_port(checked.host, port) if parts.port else parts.netloc.lower()
    return CheckedWebhook(
        url=urlunsplit((scheme, netloc, parts.path or "/", parts.query, "")),
        scheme=scheme,
        host=checked.host,
        port=port,
        target=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
        address=checked.addresses[0],
    )


class _PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to the checked address, naming the host in its Host header."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """An HTTPS connection to the checked address; the certificate is checked for the name."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class WebhookAnswer:
    """What the receiver answered: its status and the start of its body."""

    status: int
    excerpt: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def webhook_post(
    checked: CheckedWebhook, *, body: bytes, headers: dict[str, str], timeout_s: float
) -> WebhookAnswer:
    """POST ``body`` (JSON) to a checked webhook; OSError when it cannot be reached."""
    pinned = _PinnedHTTPS if checked.scheme == "https" else _PinnedHTTP
    conn = pinned(checked.host, checked.port, address=checked.address, timeout=timeout_s)
    try:
        conn.request(
            "POST",
            checked.target,
            body=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                **headers,
            },
        )
        answer = conn.getresponse()
        excerpt = answer.read(ERROR_BODY_BYTES).decode("utf-8", "replace")
        return WebhookAnswer(status=answer.status, excerpt=excerpt)
    except http.client.HTTPException as exc:
        raise OSError(f"bad HTTP answer: {exc!r}") from exc
    finally:
        conn.close()

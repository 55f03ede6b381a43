"""Real receivers of the ladder's notifications, on loopback: an SMTP server and a webhook.

``SmtpSink`` is aiosmtpd's SMTP server on a thread of the test process; it keeps
every message it accepts (parsed, with its envelope). ``WebhookReceiver`` is an
HTTP server on a thread that verifies each message's Standard Webhooks signature
the way docs/notifications.md tells a receiver to (``verify`` below is that
snippet), keeps what it got, and answers with the statuses a test sets (503 a
few times, then 200). Both are stopped through their own handles, and every wait
has a deadline.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

WAIT_S = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        time.sleep(0.05)


# --- SMTP -------------------------------------------------------------------------------


@dataclass
class Received:
    """One e-mail as the SMTP server got it."""

    sender: str
    recipients: list[str]
    message: EmailMessage

    @property
    def text(self) -> str:
        body = self.message.get_body(preferencelist=("plain",))
        assert body is not None
        return str(body.get_content())


class _Handler:
    def __init__(self, sink: SmtpSink) -> None:
        self.sink = sink

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if self.sink.refuse_rcpt_with:
            return self.sink.refuse_rcpt_with
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.sink.refuse_with:
            return self.sink.refuse_with
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        with self.sink.lock:
            self.sink.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos), parsed))
        return "250 Message accepted for delivery"


@dataclass
class SmtpSink:
    """aiosmtpd on 127.0.0.1; ``messages`` holds what it accepted."""

    port: int = 0
    messages: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    refuse_with: str = ""  # e.g. "451 try later": answered to DATA instead of accepting
    refuse_rcpt_with: str = ""  # e.g. "550 no such user": answered to every RCPT
    controller: Controller | None = None

    def start(self) -> SmtpSink:
        self.port = _free_port()
        self.controller = Controller(
            _Handler(self), hostname="127.0.0.1", port=self.port, ready_timeout=WAIT_S
        )
        self.controller.start()
        return self

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def received(self) -> list[Received]:
        with self.lock:
            return list(self.messages)

    def wait_for(self, n: int, timeout_s: float = WAIT_S) -> list[Received]:
        _wait(lambda: len(self.received()) >= n, timeout_s, f"{n} e-mails at the SMTP server")
        return self.received()


# --- webhooks ------------------------------------------------------------------------------


def verify(secret: str, headers: dict[str, str], body: bytes, tolerance_s: int = 300) -> dict:
    """Check a ladder webhook message and return its JSON; ValueError if it is not genuine.

    This is the snippet of docs/notifications.md, as a receiver would write it.
    """
    msg_id = headers["webhook-id"]
    timestamp = headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > tolerance_s:
        raise ValueError("stale timestamp (a replayed message?)")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [s.split(",", 1)[1] for s in headers["webhook-signature"].split() if "," in s]
    if not any(hmac.compare_digest(expected, sig) for sig in offered):
        raise ValueError("bad signature")
    return json.loads(body)


@dataclass
class Hit:
    """One POST the receiver got: when, its headers and body, and whether it verified."""

    at: float
    headers: dict[str, str]
    body: bytes
    verified: bool
    answered: int

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    """An HTTP receiver on 127.0.0.1 that verifies signatures with ``secret``."""

    secret: str = ""
    statuses: list[int] = field(default_factory=list)  # answered in turn; then 200
    hits: list[Hit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/ladder?src=test"

    def start(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    verify(receiver.secret, headers, body)
                    verified = True
                except (ValueError, KeyError):
                    verified = False
                with receiver.lock:
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    if not verified:
                        status = 401
                    receiver.hits.append(Hit(time.monotonic(), headers, body, verified, status))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, name="webhook", daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def received(self) -> list[Hit]:
        with self.lock:
            return list(self.hits)

    def wait_for(self, n: int, timeout_s: float = WAIT_S) -> list[Hit]:
        _wait(lambda: len(self.received()) >= n, timeout_s, f"{n} webhook messages")
        return self.received()


@contextmanager
def smtp_sink() -> Iterator[SmtpSink]:
    sink = SmtpSink().start()
    try:
        yield sink
    finally:
        sink.stop()


@contextmanager
def webhook_receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver().start()
    try:
        yield receiver
    finally:
        receiver.stop()

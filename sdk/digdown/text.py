"""Untrusted text made safe to store, forward and print: one line, printable, bounded.

A bot's handshake name, a fault reason built from a bot's status message, a
``game_id`` echoed in an error: all of it comes from someone we do not trust and
ends up in replays, in other bots' requests, in logs, in terminals and in
HTTP/2 trailers. Raw, it may carry ESC sequences (terminal injection in a CLI),
CR/LF (forged log lines), NUL (PostgreSQL refuses it, C readers cut at it),
bidi overrides (text that reads differently from what it is) or megabytes (a
trailer over the peer's limit, a record that eats memory). Every such place
passes the text through `clean` (or `quote` when echoing it in a message), and
an undecodable message is described with `describe_bytes` instead of shown.

Only the standard library: the SDK depends on nothing but grpcio and protobuf.
"""

from __future__ import annotations

import unicodedata

NAME_MAX = 64  # bot names and version labels
REASON_MAX = 200  # fault and forfeit reasons
MESSAGE_MAX = 500  # error messages (gRPC status details travel in trailers)
ELLIPSIS = "\u2026"

# Control (C0, DEL, C1), format (bidi overrides, zero-width), surrogates and the
# Unicode line/paragraph separators. Whitespace among them becomes a space.
_DROPPED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def clean(text: object, limit: int = REASON_MAX) -> str:
    """``text`` on one line without control or format characters, at most ``limit`` long.

    Runs of whitespace (tabs and newlines included) become one space; a cut
    text ends with an ellipsis. Only the first few multiples of ``limit``
    characters are read, so a megabyte input costs no more than a short one.
    """
    raw = text if isinstance(text, str) else str(text)
    out: list[str] = []
    space = False
    budget = limit + 1  # one more than fits: tells a cut text from one that fits
    for ch in raw[: limit * 8 + 64]:
        if ch.isspace():
            space = bool(out)
            continue
        if unicodedata.category(ch) in _DROPPED:
            continue
        if space:
            out.append(" ")
            space = False
        out.append(ch)
        if len(out) >= budget:
            break
    cut = len(out) > limit or len(raw) > limit * 8 + 64
    if not cut:
        return "".join(out)
    return "".join(out[: max(0, limit - 1)]).rstrip() + ELLIPSIS


def quote(text: object, limit: int = 40) -> str:
    """``text`` for an error message: cleaned, quoted, with its length when it was cut."""
    raw = text if isinstance(text, str) else str(text)
    shown = clean(raw, limit)
    if shown.endswith(ELLIPSIS) and len(raw) > limit:
        return f"{shown!r} ({len(raw)} characters)"
    return repr(shown)


def describe_bytes(data: bytes, head: int = 16) -> str:
    """What an undecodable message was: its size and first bytes in hex."""
    first = data[:head].hex(" ")
    more = " ..." if len(data) > head else ""
    return f"{len(data)} bytes" + (f" starting {first}{more}" if data else "")

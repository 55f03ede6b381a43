"""How Ladder.Play reads a client's bytes: sized before parsing, never raising.

A message larger than the limit is not parsed at all (``Oversized``); bytes that
are not a ``PlayClientMessage`` become ``Garbled`` with a description, so a
hostile client can neither make the server allocate and parse a huge message nor
fill its log with decoding tracebacks. ``auth.CallGuard`` installs the decoder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from digdown import text
from digdown.v1 import ladder_pb2


@dataclass(frozen=True)
class Oversized:
    """A client message larger than the limit (decoded as this instead of parsed)."""

    size: int


@dataclass(frozen=True)
class Garbled:
    """A client message that is not a PlayClientMessage."""

    description: str


def play_decoder(max_bytes: int) -> Callable[[bytes], Any]:
    """The request deserializer of Play: never parses more than ``max_bytes``, never raises."""

    def decode(data: bytes) -> Any:
        if len(data) > max_bytes:
            return Oversized(len(data))
        try:
            return ladder_pb2.PlayClientMessage.FromString(data)
        except Exception:
            return Garbled(text.describe_bytes(data))

    return decode

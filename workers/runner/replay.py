"""Replay files, format v1: gzip'd JSON (docs/replay-format.md).

The document is the engine's `Replay` message (protos/digdown/v1/game.proto)
in the engine's dict conventions (actions `{"kind": ...}`, cave as lists of
card ids), plus what only the runner knows: bot addresses and protocol
versions per seat, the time control, and every fault with its kind. Keeping
the engine's shape means `replay_to_proto` is a plain mapping and the file
re-verifies through `Engine.VerifyReplay` with nothing reconstructed.

Written to a temporary file in the target directory and `os.replace`d, so a
reader (or a crashed worker's retry) never sees a half-written replay.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from digdown import wire
from digdown.v1 import game_pb2

FORMAT = wire.REPLAY_FORMAT
# A replay larger than this (uncompressed) is refused on read: a hostile file
# must not exhaust memory. Real 4-seat games are well under 1 MiB.
MAX_JSON_BYTES = 64 * 1024 * 1024


class ReplayFormatError(ValueError):
    """A replay file that cannot be read; the message says why."""


def replay_from_proto(msg: game_pb2.Replay) -> dict[str, Any]:
    """Engine `Replay` message -> the file's core document (no runner extras yet)."""
    decisions = []
    for dec in msg.decisions:
        d = wire.entry_from_proto(dec)
        if "action" not in d:
            d.pop("forced", None)
        d["think_time_ms"] = dec.think_time_ms
        d["first_event"] = dec.first_event
        d["num_events"] = dec.num_events
        decisions.append(d)
    return {
        "format": msg.format or FORMAT,
        "record_format": msg.record_format,
        "ruleset": msg.ruleset,
        "engine_version": msg.engine_version,
        "config": wire.config_from_proto(msg.config),
        "seats": [{"seat": s.seat, "bot": s.bot, "version": s.version} for s in msg.seats],
        "cave": [list(p.cards) for p in msg.cave],
        "sleeved": list(msg.sleeved),
        "first_lead": msg.first_lead,
        "decisions": decisions,
        "events": [wire.event_from_proto(e) for e in msg.events],
        "result": wire.result_from_proto(msg.result),
    }


def replay_to_proto(doc: dict[str, Any]) -> game_pb2.Replay:
    """A replay document -> the `Replay` message that `Engine.VerifyReplay` checks.

    Runner extras (addresses, time control, faults) are not part of the
    message and are ignored; a missing or mistyped core key is a ReplayFormatError.
    """
    try:
        msg = game_pb2.Replay(
            format=doc["format"],
            record_format=doc.get("record_format", ""),
            ruleset=doc["ruleset"],
            engine_version=doc["engine_version"],
            config=wire.config_to_proto(doc["config"]),
            sleeved=doc.get("sleeved", []),
            first_lead=doc["first_lead"],
            result=wire.result_to_proto(doc["result"]),
        )
        for s in doc.get("seats", []):
            msg.seats.add(seat=s["seat"], bot=s.get("bot", ""), version=s.get("version", ""))
        for passage in doc["cave"]:
            msg.cave.add().cards.extend(passage)
        for d in doc["decisions"]:
            dec = msg.decisions.add(
                seat=d["seat"],
                forced=bool(d.get("forced", False)),
                think_time_ms=int(d.get("think_time_ms", 0)),
                first_event=int(d.get("first_event", 0)),
                num_events=int(d.get("num_events", 0)),
            )
            if not any(kind in d for kind in wire.ENTRY_KINDS):
                raise ReplayFormatError(f"decision {d!r} has no action, fault or forfeit")
            wire.set_entry(dec, d)
        msg.events.extend(wire.event_to_proto(e) for e in doc["events"])
    except ReplayFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReplayFormatError(f"not a {FORMAT} document: {type(exc).__name__}: {exc}") from None
    return msg


def encode(doc: dict[str, Any]) -> bytes:
    """The file's bytes: compact gzip'd JSON (mtime 0, so equal documents give equal bytes)."""
    return gzip.compress(
        json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode(), mtime=0
    )


def write(doc: dict[str, Any], path: str | os.PathLike[str]) -> int:
    """Write gzip'd JSON atomically (temp file in the same directory + os.replace); size."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = encode(doc)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(data)


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a replay file (gzip'd or plain JSON), bounded in size."""
    raw = Path(path).read_bytes()
    try:
        if raw[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as g:
                raw = g.read(MAX_JSON_BYTES + 1)
        if len(raw) > MAX_JSON_BYTES:
            raise ReplayFormatError(f"replay larger than {MAX_JSON_BYTES} bytes uncompressed")
        doc = json.loads(raw)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReplayFormatError(f"cannot read {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ReplayFormatError(f"{path} is not a {FORMAT} file (format {got!r})")
    return doc

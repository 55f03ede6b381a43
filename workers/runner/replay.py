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

import copy
import gzip
import io
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from digdown import wire
from digdown.v1 import game_pb2

FORMAT = wire.REPLAY_FORMAT
RUNNER_VERSION = "runner/1"
# What the runner adds to each seat of the engine's document (from its seat summary).
SEAT_EXTRAS = ("address", "protocol_version", "handshake")
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


def build(
    msg: game_pb2.Replay,
    *,
    time_control: Mapping[str, Any],
    faults: Sequence[Mapping[str, Any]],
    seats: Sequence[Mapping[str, Any]] | None = None,
    match: Mapping[str, Any] | None = None,
    runner_version: str = RUNNER_VERSION,
) -> dict[str, Any]:
    """The replay document: the engine's `Replay` message plus what only the runner knows.

    The one place a document is assembled (the match runner; the tests' in-process
    replays). ``seats`` are the runner's per-seat summaries: each seat of the
    document gets their ``SEAT_EXTRAS``, and ``match.seat_stats`` the whole summary.
    """
    doc = replay_from_proto(msg)
    for seat, info in zip(doc["seats"], seats or (), strict=False):
        seat.update({key: info[key] for key in SEAT_EXTRAS if key in info})
    doc["runner_version"] = runner_version
    doc["time_control"] = dict(time_control)
    doc["faults"] = [dict(f) for f in faults]
    if match is not None:
        doc["match"] = {**match, "seat_stats": [dict(s) for s in seats or ()]}
    return doc


# What differs between two plays of the same match by the same bots, and nothing else
# (docs/replay-format.md): how long things took and when, the id the engine gave the
# game, and which protocol each seat spoke (unary Act or one stream).
TIMING_KEYS = {
    "decisions": ("think_time_ms", "wall_ms", "cpu_ms", "wait_ms"),
    "faults": ("think_time_ms",),
    "seat_stats": ("think_ms_total", "think_ms_max", "think_s", "cpu_s", "bank_left_ms"),
}
MATCH_RUN_KEYS = ("game_id", "started_at", "duration_s")
PROTOCOL_KEYS = ("protocol_version",)


def without_timings(doc: Mapping[str, Any], *, protocol: bool = True) -> dict[str, Any]:
    """A copy of ``doc`` without what two plays of one match may differ in (see above);
    with ``protocol=False`` the seats' protocol versions are kept."""
    out = copy.deepcopy(dict(doc))
    for key in TIMING_KEYS["decisions"]:
        for d in out.get("decisions", []):
            d.pop(key, None)
    for key in TIMING_KEYS["faults"]:
        for f in out.get("faults", []):
            f.pop(key, None)
    match = out.get("match", {})
    for key in MATCH_RUN_KEYS:
        match.pop(key, None)
    for stats in match.get("seat_stats", []):
        for key in TIMING_KEYS["seat_stats"]:
            stats.pop(key, None)
    if protocol:
        for seat in [*out.get("seats", []), *match.get("seat_stats", [])]:
            for key in PROTOCOL_KEYS:
                seat.pop(key, None)
    return out


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

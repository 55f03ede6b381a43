"""The seat of a connected bot: decisions relayed to whichever grpcserver holds its stream.

A connected bot has no address to dial. Its open Play streams are in Redis
(``ladder.bots.presence``), each with the internal relay address of the
``grpcserver`` process that holds it. At the handshake the seat is bound to one
of the bot's streams (one with the fewest seats bound by this worker process);
every decision of the match goes to that stream through its relay
(``digdown.v1.Relay``, protos/digdown/v1/relay.proto).

What can go wrong, and who is to blame (errors are ``RelayError``, a
``grpc.RpcError`` with ``code()`` and ``details()``, so the runner classifies them
as it does a dialled bot's):

- the bot's stream closed (its process died or closed it): "bot stream closed: ..."
  and ``gone()`` is True -> the seat is dead, as a dialled bot whose port no
  longer listens. The bot's other streams keep their own matches.
- the grpcserver holding the stream is unreachable or stopping: "relay lost: ...",
  ``gone()`` stays False (the ladder's fault, not the bot's). The decision in
  flight is asked again on another live stream of the bot (it reconnects to
  another replica), waited for within that decision's time; only when none
  comes in time is it a fault ("unavailable"; no proof the bot is gone, so never
  a "dead" forfeit by itself).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from digdown.v1 import bot_pb2, relay_pb2, relay_pb2_grpc
from ladder.bots import presence
from workers.runner.match import TimeControl
from workers.runner.net import TransportError, Undecodable, _lenient, rpc_code, rpc_details

log = logging.getLogger("workers.connected")

STREAM_CLOSED = "bot stream closed"  # as ladder.grpc.play (the ladder never imports workers)
RELAY_LOST = "relay lost"
BOT_LATE = "no answer within"  # the relay's DEADLINE_EXCEEDED: the bot was too slow
RELAY_GRACE_S = 0.2
CONNECTED_SHOWN = "<connected bot stream>"
REBIND_POLL_S = 0.05
MAX_RELAY_ATTEMPTS = 3  # relays tried for one decision (each lost one is skipped after)


class RelayError(TransportError):
    """A relayed call's failure, shaped like a gRPC error for the runner's classification.

    Its details start with "bot stream closed" (the bot's doing) or "relay lost" (the
    ladder's), which is what a blame rule tells them apart by.
    """


class _Channels:
    """One channel per relay address for the whole worker process (they are reused by
    every match: opening one costs more than a decision)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stubs: dict[str, Any] = {}

    def stub(self, address: str) -> Any:
        with self._lock:
            found = self._stubs.get(address)
            if found is None:
                channel = grpc.insecure_channel(
                    address,
                    options=[
                        ("grpc.max_receive_message_length", 1024 * 1024),
                        ("grpc.max_send_message_length", 8 * 1024 * 1024),
                        ("grpc.initial_reconnect_backoff_ms", 50),
                        ("grpc.min_reconnect_backoff_ms", 50),
                        ("grpc.max_reconnect_backoff_ms", 500),
                        ("grpc.enable_retries", 0),
                    ],
                )
                found = relay_pb2_grpc.RelayStub(channel)
                found.Act = channel.unary_unary(
                    "/digdown.v1.Relay/Act",
                    request_serializer=relay_pb2.RelayDecision.SerializeToString,
                    response_deserializer=relay_pb2.RelayAnswer.FromString,
                )
                self._stubs[address] = found
            return found


CHANNELS = _Channels()
# Seats this worker process bound to each stream: spread a bot's matches over its streams.
_BOUND: Counter[str] = Counter()
_BOUND_LOCK = threading.Lock()
_decode_reply = _lenient(bot_pb2.DecisionReply)


@dataclass
class ConnectedTransport:
    """The seat transport of one seat of a connected bot (see the module docstring)."""

    bot_id: int
    bot_name: str
    match_id: int
    seat: int
    time_control: TimeControl
    lookup: Callable[[int], list[presence.StreamRecord]] = presence.streams_of_bot
    version_label: str = ""  # the seat's version: its streams are preferred (connect, issue 38)
    stream: presence.StreamRecord | None = None
    closed_reason: str = ""  # set when the bound stream's relay said it is closed
    dead_relays: set[str] = field(default_factory=set)
    relays_lost: int = 0
    _released: bool = False

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return (("x-relay-key", presence.relay_key()),)

    # --- binding --------------------------------------------------------------------------

    def _bind(self, deadline: float) -> presence.StreamRecord:
        """A live stream of the bot on a relay not known dead, waited for until ``deadline``."""
        while True:
            try:
                streams = [s for s in self.lookup(self.bot_id) if s.relay not in self.dead_relays]
                same = [s for s in streams if s.version_label == self.version_label]
                streams = same or streams  # the seat's version's processes first
            except Exception as exc:  # Redis unreachable: the ladder's trouble
                raise RelayError(
                    grpc.StatusCode.UNAVAILABLE, f"{RELAY_LOST}: presence unreadable ({exc})"
                ) from None
            if streams:
                with _BOUND_LOCK:
                    # The least used here, ties at random: several worker processes then
                    # spread a bot's matches over its streams without talking to each other.
                    chosen = min(streams, key=lambda s: (_BOUND[s.stream_id], random.random()))
                    _BOUND[chosen.stream_id] += 1
                self.stream = chosen
                return chosen
            if time.monotonic() >= deadline:
                if self.stream is None and not self.dead_relays:
                    # Never bound and nothing to bind to: the bot is not connected.
                    self.closed_reason = "no stream of the bot is open"
                    raise RelayError(
                        grpc.StatusCode.UNAVAILABLE,
                        f"{STREAM_CLOSED}: bot {self.bot_name} has no open stream",
                    )
                raise RelayError(
                    grpc.StatusCode.UNAVAILABLE,
                    f"{RELAY_LOST}: no other stream of bot {self.bot_name} opened in time",
                )
            time.sleep(REBIND_POLL_S)

    def _call(self, method: str, request: Any, timeout_s: float) -> Any:
        """Call the bound stream's relay; relay loss marks it dead (rebinding next time)."""
        deadline = time.monotonic() + timeout_s
        stream = self.stream if self.stream is not None else self._bind(deadline)
        request.stream_id = stream.stream_id
        remaining = max(0.001, deadline - time.monotonic())
        request.timeout_ms = int(remaining * 1000)
        try:
            # The relay answers DEADLINE_EXCEEDED itself when the bot did not answer in
            # time; the call's own deadline is a little later, so that when it is what
            # expires, it was the relay (the ladder) that did not answer.
            return getattr(CHANNELS.stub(stream.relay), method)(
                request, timeout=remaining + RELAY_GRACE_S, metadata=self._metadata()
            )
        except grpc.RpcError as exc:
            code, details = rpc_code(exc), rpc_details(exc)
            if code == grpc.StatusCode.DEADLINE_EXCEEDED and not details.startswith(BOT_LATE):
                raise RelayError(
                    grpc.StatusCode.UNAVAILABLE, f"{RELAY_LOST}: the relay did not answer in time"
                ) from None
            if details.startswith(STREAM_CLOSED):
                self.closed_reason = details
                raise RelayError(code, details) from None
            if details.startswith("server busy"):  # the relay's own call limit: ours, not the bot's
                raise RelayError(grpc.StatusCode.UNAVAILABLE, f"{RELAY_LOST}: {details}") from None
            if details.startswith(RELAY_LOST) or (
                code == grpc.StatusCode.UNAVAILABLE
            ):  # a stopping relay, or one that cannot be reached at all
                self.relays_lost += 1
                self.dead_relays.add(stream.relay)
                self._release(stream)
                self.stream = None
                log.warning(
                    "match %s seat %d: relay %s lost (%s)",
                    self.match_id, self.seat, stream.relay, details,
                )  # fmt: skip
                shown = details if details.startswith(RELAY_LOST) else f"{RELAY_LOST}: {details}"
                raise RelayError(grpc.StatusCode.UNAVAILABLE, shown) from None
            raise RelayError(code, details) from None

    # --- SeatTransport ------------------------------------------------------------------

    def handshake(
        self, request: bot_pb2.HandshakeRequest, timeout_s: float
    ) -> bot_pb2.HandshakeReply | Undecodable:
        call = relay_pb2.RelayHandshake(match_id=self.match_id, seat=self.seat)
        call.request.CopyFrom(request)
        try:
            answer = self._call("Handshake", call, timeout_s)
        except RelayError as exc:
            if exc.details().startswith(STREAM_CLOSED):
                # Gone between being seated and its handshake: the match is void, as for a
                # bot not connected at all (workers.seats), not a forfeit of a seat that
                # never began (the match's other bots are not charged either).
                from workers.seats import SeatRefused

                raise SeatRefused(connected_absent(self.bot_name), seat=self.seat) from None
            raise
        return answer.handshake  # type: ignore[no-any-return]

    def act(
        self, request: bot_pb2.DecisionRequest, timeout_s: float
    ) -> bot_pb2.DecisionReply | Undecodable:
        if self.stream is None and self.closed_reason:
            raise RelayError(grpc.StatusCode.UNAVAILABLE, self.closed_reason)
        call = relay_pb2.RelayDecision(match_id=self.match_id, seat=self.seat)
        call.request.CopyFrom(request)
        deadline = time.monotonic() + timeout_s
        for attempt in range(MAX_RELAY_ATTEMPTS):
            try:
                answer = self._call("Act", call, max(0.001, deadline - time.monotonic()))
                return _decode_reply(answer.decision)  # type: ignore[no-any-return]
            except RelayError as exc:
                # The ladder lost the stream's process: ask again on another stream of the
                # bot (it reconnects) while this decision has time, so the ladder's trouble
                # costs the bot a fault only when it does not come back in time.
                lost = exc.details().startswith(RELAY_LOST) and self.stream is None
                if not lost or attempt + 1 == MAX_RELAY_ATTEMPTS:
                    raise
                if deadline - time.monotonic() < REBIND_POLL_S:
                    raise
        raise AssertionError("unreachable")

    def gone(self) -> bool:
        """Proof the bot is gone for this seat: its stream's relay said the stream closed."""
        return bool(self.closed_reason)

    def close(self) -> None:
        """Release the seat's share of its stream (the record stays, for ``notify_end``)."""
        if self.stream is not None and not self._released:
            self._released = True
            self._release(self.stream)

    @staticmethod
    def _release(stream: presence.StreamRecord) -> None:
        with _BOUND_LOCK:
            _BOUND[stream.stream_id] -= 1
            if _BOUND[stream.stream_id] <= 0:
                del _BOUND[stream.stream_id]

    def notify_end(self, end: Any) -> None:
        """Tell the stream the match is over (best effort, the result is recorded anyway)."""
        stream = self.stream
        if stream is None:
            return
        try:
            CHANNELS.stub(stream.relay).MatchEnd(
                relay_pb2.RelayMatchEnd(stream_id=stream.stream_id, end=end),
                timeout=2.0,
                metadata=self._metadata(),
            )
        except grpc.RpcError as exc:
            log.info("match end to stream %s: %s", stream.stream_id, rpc_code(exc).name)


def connected_absent(bot_name: str) -> str:
    """The void match's public error when a connected bot held no stream as it began."""
    return (
        f"connected bot {bot_name} held no open stream when the match began:"
        " the match is void, no one forfeits"
    )


def connected_transport_factory(
    *, bot_id: int, bot_name: str, match_id: int, seat: int, version_label: str = ""
) -> Callable[[TimeControl], ConnectedTransport]:
    """What ``BotSpec.transport`` holds for a connected seat."""

    def make(tc: TimeControl) -> ConnectedTransport:
        return ConnectedTransport(
            bot_id=bot_id, bot_name=bot_name, match_id=match_id, seat=seat, time_control=tc,
            version_label=version_label,
        )  # fmt: skip

    return make


def notify_match_end(match_id: int, transports: dict[int, ConnectedTransport]) -> None:
    """Send each connected seat's stream the recorded end of the match: rank, rating change."""
    if not transports:
        return
    from digdown.v1 import ladder_pb2
    from ladder.matches.models import Match, MatchSeat
    from ladder.ratings.elo import points

    try:
        match = Match.objects.get(pk=match_id)
        seats = {s.seat: s for s in MatchSeat.objects.filter(match_id=match_id)}
    except Exception as exc:  # telling the bot is a courtesy; the result is recorded
        log.info("match end of %s not sent: %s", match_id, exc)
        return
    for number, transport in transports.items():
        s = seats.get(number)
        if s is None:
            continue
        end = ladder_pb2.PlayMatchEnd(
            match_id=match_id,
            seat=number,
            status=match.status.upper(),
            rank=s.rank or 0,
            seats=len(seats),
            forfeited=bool(s.forfeit_reason),
            forfeit_reason=s.forfeit_reason[:300],
        )
        if s.rating_before is not None and s.rating_after is not None:
            end.rating_before, end.rating_after = points(s.rating_before), points(s.rating_after)
        transport.notify_end(end)

"""The seat of a connected bot: decisions relayed to whichever grpcserver holds its stream.

A connected bot has no address to dial. Its open Play streams are in Redis
(``ladder.bots.presence``), each with the internal relay address of the
``grpcserver`` process that holds it. At the handshake the seat is bound to one
of the bot's streams (one with the fewest seats bound by this worker process);
every decision of the match goes to that stream through its relay
(``digdown.v1.Relay``, protos/digdown/v1/relay.proto).

Who is to blame is decided by the typed reason the relay sends with a failure
(``digdown.v1.FaultReason``, protos/digdown/v1/faults.proto, read by
``digdown.fault_reasons``), never by the words of its message. Errors are
``RelayError``, a ``grpc.RpcError`` with ``code()``, ``details()`` and ``reason``,
so the runner classifies them as it does a dialled bot's:

- STREAM_CLOSED (the bot's stream ended: its process died or closed it), or
  NOT_CONNECTED (no stream at all at the handshake): ``gone()`` is True -> the
  seat is dead, as a dialled bot whose port no longer listens. The bot's other
  streams keep their own matches.
- BOT_LATE, REPLY_TOO_LARGE, BOT_NOT_READING, BOT_ERROR: the bot's fault.
- the ladder's (``fault_reasons.LADDER_REASONS``): SERVER_STOPPING (the
  grpcserver holding the stream is stopping, e.g. an upgrade), PRESENCE_UNREADABLE,
  and any failure that carries no reason (the relay unreachable, too slow, busy:
  RELAY_LOST). The seat waits for the bot to reconnect, up to the relay grace
  (``LADDER_CONNECT_RELAY_GRACE_S``, long enough for a grpcserver restart), and the
  decision is asked again, with its full time: the wait is not charged to the bot.
  When no stream of the bot comes back within the grace, the match is released
  for a retry (``ConnectedSeatLost``, retryable): nobody is charged, nothing rated.
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

from digdown import fault_reasons
from digdown.v1 import bot_pb2, faults_pb2, relay_pb2, relay_pb2_grpc
from ladder.bots import presence
from workers.runner.blame import InfrastructureFault
from workers.runner.net import TransportError, Undecodable, _lenient, rpc_code, rpc_details
from workers.runner.terms import TimeControl

log = logging.getLogger("workers.connected")

# How the details of a failure start, for people reading them (blame is by reason).
STREAM_CLOSED = "bot stream closed"
RELAY_LOST = "relay lost"
RELAY_GRACE_S = 0.2  # the worker's own deadline is this much later than the relay's
CONNECTED_SHOWN = "<connected bot stream>"
REBIND_POLL_S = 0.05
# How long a seat whose stream the ladder lost waits for the bot to reconnect (the
# default of LADDER_CONNECT_RELAY_GRACE_S: a grpcserver restart, on a loaded machine).
RECONNECT_GRACE_S = 30.0
# The bot's own doing that proves it gone for the seat (a dead seat).
_GONE_REASONS = frozenset(
    {faults_pb2.FAULT_REASON_STREAM_CLOSED, faults_pb2.FAULT_REASON_NOT_CONNECTED}
)


class RelayError(TransportError):
    """A relayed call's failure, shaped like a gRPC error for the runner's classification,
    with the typed ``reason`` (a ``digdown.v1.FaultReason``) that decides the blame."""

    def __init__(self, code: grpc.StatusCode, details: str, reason: int) -> None:
        super().__init__(code, details)
        self.reason = reason

    @property
    def ladders(self) -> bool:
        """The ladder's doing (never charged to the bot)."""
        return self.reason in fault_reasons.LADDER_REASONS


class ConnectedSeatLost(InfrastructureFault):
    """The ladder lost a connected seat's stream and the bot did not reconnect within the
    relay grace: release the match, charge nobody."""


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
    version_label: str = ""  # the seat's version label: streams that named it are preferred
    stream: presence.StreamRecord | None = None
    closed_reason: str = ""  # set when the bound stream's relay said it is closed
    # Streams the ladder lost for this seat. By stream, not by relay address: a grpcserver
    # restarted at the same address (an upgrade of the only one) holds the bot's new
    # stream, which must be bindable (marking the address dead waited out the grace).
    dead_streams: set[str] = field(default_factory=set)
    relays_lost: int = 0
    reconnect_grace_s: float = RECONNECT_GRACE_S
    uncharged_s: float = 0.0
    _released: bool = False

    @staticmethod
    def _metadata(stream: presence.StreamRecord) -> tuple[tuple[str, str], ...]:
        """The relay key, and when ``stream`` was opened: a relay restarted since then
        answers that it never held it (the ladder's loss, ``ladder.grpc.relay``)."""
        since = (presence.STREAM_SINCE_KEY, repr(stream.since))
        return (("x-relay-key", presence.relay_key()), since)

    # --- binding --------------------------------------------------------------------------

    def _bind(self, deadline: float) -> presence.StreamRecord:
        """A live stream of the bot on a relay not known dead, waited for until ``deadline``."""
        while True:
            try:
                streams = [
                    s for s in self.lookup(self.bot_id) if s.stream_id not in self.dead_streams
                ]
                same = [s for s in streams if s.version_label == self.version_label]
                streams = same or streams  # the seat's version's processes first
            except Exception as exc:  # Redis unreachable: the ladder's trouble
                raise RelayError(
                    grpc.StatusCode.UNAVAILABLE,
                    f"{RELAY_LOST}: presence unreadable ({exc})",
                    faults_pb2.FAULT_REASON_PRESENCE_UNREADABLE,
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
                if self.stream is None and not self.dead_streams:
                    # Never bound and nothing to bind to: the bot is not connected.
                    self.closed_reason = "no stream of the bot is open"
                    raise RelayError(
                        grpc.StatusCode.UNAVAILABLE,
                        f"{STREAM_CLOSED}: bot {self.bot_name} has no open stream",
                        faults_pb2.FAULT_REASON_NOT_CONNECTED,
                    )
                raise RelayError(
                    grpc.StatusCode.UNAVAILABLE,
                    f"{RELAY_LOST}: no other stream of bot {self.bot_name} opened in time",
                    faults_pb2.FAULT_REASON_NO_STREAM_IN_GRACE,
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
                request, timeout=remaining + RELAY_GRACE_S, metadata=self._metadata(stream)
            )
        except grpc.RpcError as exc:
            code, details = rpc_code(exc), rpc_details(exc)
            reason = fault_reasons.of_call(exc)
            if reason == faults_pb2.FAULT_REASON_UNSPECIFIED:
                # Not judged by the stream's server: the relay itself failed (unreachable,
                # too slow to answer past the bot's deadline, busy): the ladder's.
                reason = faults_pb2.FAULT_REASON_RELAY_LOST
            if reason in _GONE_REASONS:
                self.closed_reason = details
                raise RelayError(code, details, reason) from None
            if reason in fault_reasons.LADDER_REASONS:
                self.relays_lost += 1
                self._bury(stream)
                self._release(stream)
                self.stream = None
                log.warning(
                    "match %s seat %d: relay %s lost (%s, %s)",
                    self.match_id, self.seat, stream.relay, fault_reasons.name(reason), details,
                )  # fmt: skip
                shown = f"{RELAY_LOST}: {details}" if RELAY_LOST not in details else details
                raise RelayError(grpc.StatusCode.UNAVAILABLE, shown, reason) from None
            raise RelayError(code, details, reason) from None

    def _bury(self, lost: presence.StreamRecord) -> None:
        """The ladder lost ``lost``: it is not bound again. Only it: the bot's other streams
        on the same relay address may be a restarted process's, opened since (another
        stream of the lost process fails the same way in its turn)."""
        self.dead_streams.add(lost.stream_id)

    # --- SeatTransport ------------------------------------------------------------------

    def handshake(
        self, request: bot_pb2.HandshakeRequest, timeout_s: float
    ) -> bot_pb2.HandshakeReply | Undecodable:
        call = relay_pb2.RelayHandshake(match_id=self.match_id, seat=self.seat)
        call.request.CopyFrom(request)
        try:
            answer = self._call("Handshake", call, timeout_s)
        except RelayError as exc:
            if exc.reason in _GONE_REASONS:
                # Gone between being seated and its handshake: the match is void, as for a
                # bot not connected at all (workers.seats), not a forfeit of a seat that
                # never began (the match's other bots are not charged either).
                from workers.seats import SeatRefused

                raise SeatRefused(connected_absent(self.bot_name), seat=self.seat) from None
            raise
        return answer.handshake

    def act(
        self, request: bot_pb2.DecisionRequest, timeout_s: float
    ) -> bot_pb2.DecisionReply | Undecodable:
        if self.stream is None and self.closed_reason:
            raise RelayError(
                grpc.StatusCode.UNAVAILABLE,
                self.closed_reason,
                faults_pb2.FAULT_REASON_STREAM_CLOSED,
            )
        call = relay_pb2.RelayDecision(match_id=self.match_id, seat=self.seat)
        call.request.CopyFrom(request)
        grace_until: float | None = None
        while True:
            asked = time.monotonic()
            try:
                answer = self._call("Act", call, timeout_s)
                return _decode_reply(answer.decision)
            except RelayError as exc:
                if not exc.ladders:
                    raise
                # The ladder lost the stream (its server stopped, its relay is cut off):
                # wait for the bot to reconnect, within the grace, and ask again with the
                # decision's full time. The wait is the ladder's, never charged.
                now = time.monotonic()
                if grace_until is None:
                    grace_until = now + self.reconnect_grace_s
                self.uncharged_s += now - asked
                if now >= grace_until:
                    raise self._lost(exc) from None
                try:
                    self._bind(grace_until)
                except RelayError as again:
                    self.uncharged_s += time.monotonic() - now
                    raise self._lost(again) from None
                self.uncharged_s += time.monotonic() - now
                log.info(
                    "match %s seat %d: bot %s back on stream %s; the decision is asked again",
                    self.match_id, self.seat, self.bot_name, self.stream and self.stream.stream_id,
                )  # fmt: skip

    def _lost(self, exc: RelayError) -> ConnectedSeatLost:
        return ConnectedSeatLost(
            f"connected seat {self.seat} (bot {self.bot_name}) lost by the ladder and not back "
            f"within {self.reconnect_grace_s:g} s ({fault_reasons.name(exc.reason)}: "
            f"{exc.details()}): released, nobody is charged"
        )

    def take_uncharged_s(self) -> float:
        """Seconds of the last ``act`` the ladder's own trouble took (not the bot's time)."""
        taken, self.uncharged_s = self.uncharged_s, 0.0
        return taken

    def witness(self) -> str:
        """The relay of the bound stream: a ladder server, which answering a connection
        proves this worker's network works (the referee's witness for the match's remote
        seats, ``workers.runner.blame``); "" when unbound."""
        return self.stream.relay if self.stream is not None else ""

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
                metadata=self._metadata(stream),
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

    from django.conf import settings

    grace = float(getattr(settings, "LADDER_CONNECT_RELAY_GRACE_S", RECONNECT_GRACE_S))

    def make(tc: TimeControl) -> ConnectedTransport:
        return ConnectedTransport(
            bot_id=bot_id,
            bot_name=bot_name,
            match_id=match_id,
            seat=seat,
            time_control=tc,
            version_label=version_label,
            reconnect_grace_s=grace,
        )

    return make


def notify_match_end(match_id: int, transports: dict[int, ConnectedTransport]) -> None:
    """Send each connected seat's stream the recorded end of the match: rank, rating change."""
    if not transports:
        return
    from digdown.v1 import ladder_pb2
    from ladder.common.elo import points
    from ladder.matches.models import Match, MatchSeat

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

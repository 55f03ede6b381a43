"""Seat dialing: for each seat of a match, the bot to dial, and cleanup afterwards.

``seat_bots`` enters everything it starts into the caller's ``ExitStack``: when
the match is over (or failed, or the task was stopped) the stack undoes it.
A remote bot needs nothing undone: its endpoint is checked again right before
dialing, and the checked *address* is dialed, not the name (the name may
resolve to an inside address on the next lookup). A hosted bot gets a sandboxed process per seat
(``workers.hosted``), dialed on its unix socket and killed with everything it
started when the stack closes; its captured log stays readable afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings

from ladder.bots import presence
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError
from ladder.common.ssrf_check import endpoint_check
from ladder.matches.models import MatchSeat
from workers.connected import (
    CONNECTED_SHOWN,
    ConnectedTransport,
    connected_absent,
    connected_transport_factory,
)
from workers.hosted import match_hosted_seats
from workers.runner import BotSpec
from workers.sandbox import HostedSeat

REMOTE_SHOWN = "<remote endpoint>"
HOSTED_SHOWN = "<hosted bot socket>"


class SeatRefused(ApplicationError):
    """A seat's bot cannot be played (the match is errored with this message).

    The message is public (the match's error); ``detail`` (why the endpoint was
    refused, naming the address) is for the bot's owner only: the worker keeps it
    as the seat's log.
    """

    code = "seat_refused"

    def __init__(self, message: str, *, seat: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.seat = seat
        self.detail = detail


@dataclass
class SeatBots:
    """The bots of a match's seats, in seat order, and the hosted ones by seat number."""

    specs: list[BotSpec]
    hosted: dict[int, HostedSeat] = field(default_factory=dict)
    # Remote seats: what their owners alone may read (the endpoint and the address dialed).
    notes: dict[int, bytes] = field(default_factory=dict)
    # Connected seats: their transports once the runner made them (to tell them the end).
    connected: dict[int, ConnectedTransport] = field(default_factory=dict)

    def logs(self) -> dict[int, bytes]:
        """What each hosted seat wrote (capped), and the remote seats' notes, by seat
        number; for the bot's owner only."""
        return {**self.notes, **{n: seat.log_bytes() for n, seat in self.hosted.items()}}


def remote_bot(seat: MatchSeat) -> BotSpec:
    """The checked address of a remote seat's endpoint, as dialed now.

    Public texts (the match's error, the replay, fault reasons) never name the
    endpoint or its address; why it was refused goes to its owner (``detail``).
    """
    bot, version = seat.bot, seat.version
    if not version.endpoint:
        raise SeatRefused(f"bot {bot.name} has no endpoint", seat=seat.seat)
    try:
        checked = endpoint_check(version.endpoint)
    except ApplicationError as exc:
        raise SeatRefused(
            f"bot {bot.name}: its endpoint was refused by the endpoint check "
            "(its owner finds why in the seat's log)",
            seat=seat.seat,
            detail=f"endpoint {version.endpoint} refused: {exc.message}\n",
        ) from exc
    return BotSpec(
        address=checked.dial_target,
        name=bot.name,
        version=str(version.number),
        shown_address=REMOTE_SHOWN,
    )


def remote_note(seat: MatchSeat, spec: BotSpec) -> bytes:
    """The owner's note of a remote seat: which endpoint was dialed at which address."""
    return (
        f"endpoint {seat.version.endpoint} dialed at {spec.address} "
        f"(replays and match pages show {spec.shown_address})\n"
    ).encode()


def connected_bot(seat: MatchSeat, made: dict[int, ConnectedTransport]) -> BotSpec:
    """A connected seat: no address, a transport to whichever stream of the bot is open.

    A bot with no open stream (waited for a little) is refused: the match is void, as
    when it drops its stream before its handshake (``ConnectedTransport.handshake``),
    never a forfeit charged to a bot that nobody could reach."""
    if not presence.wait_connected(seat.bot_id, settings.LADDER_CONNECT_SEAT_WAIT_S):
        raise SeatRefused(connected_absent(seat.bot.name), seat=seat.seat)
    factory = connected_transport_factory(
        bot_id=seat.bot_id, bot_name=seat.bot.name, match_id=seat.match_id, seat=seat.seat,
        version_label=seat.version.label,
    )  # fmt: skip

    def make(tc: Any) -> ConnectedTransport:
        made[seat.seat] = transport = factory(tc)
        return transport

    return BotSpec(
        address=f"connected:{seat.bot.name}",
        name=seat.bot.name,
        version=str(seat.version.number),
        shown_address=CONNECTED_SHOWN,
        transport=make,
    )


def seat_bots(stack: ExitStack, seats: Sequence[MatchSeat]) -> SeatBots:
    """Every seat's bot, in seat order; ``stack`` stops the hosted ones when it closes."""
    hosted_seats = [s for s in seats if s.bot.kind == Bot.Kind.HOSTED]
    try:
        hosted = stack.enter_context(match_hosted_seats(hosted_seats)) if hosted_seats else {}
    except ApplicationError as exc:  # this worker cannot sandbox
        raise SeatRefused(exc.message) from exc
    connected: dict[int, ConnectedTransport] = {}
    specs = [
        replace(
            hosted[s.seat].bot_spec(name=s.bot.name, version=str(s.version.number)),
            shown_address=HOSTED_SHOWN,
        )
        if s.seat in hosted
        else connected_bot(s, connected)
        if s.bot.kind == Bot.Kind.CONNECTED
        else remote_bot(s)
        for s in seats
    ]
    notes = {
        s.seat: remote_note(s, spec)
        for s, spec in zip(seats, specs, strict=True)
        if s.seat not in hosted and spec.transport is None
    }
    return SeatBots(specs, hosted, notes, connected)

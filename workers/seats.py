"""Seat dialing: for each seat of a match, the bot to dial, and cleanup afterwards.

``seat_bots`` enters everything it starts into the caller's ``ExitStack``: when
the match is over (or failed, or the task was stopped) the stack undoes it.
A remote bot needs nothing undone: its endpoint is checked again right before
dialing, and the checked *address* is dialed, not the name (DNS rebinding,
pitfall G8). A hosted bot gets a sandboxed process per seat
(``workers.hosted``), dialed on its unix socket and killed with everything it
started when the stack closes; its captured log stays readable afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field

from ladder.bots.endpoints import endpoint_check
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError
from ladder.matches.models import MatchSeat
from workers.hosted import match_hosted_seats
from workers.runner import BotSpec
from workers.sandbox import HostedSeat


class SeatRefused(ApplicationError):
    """A seat's bot cannot be played (the match is errored with this message)."""

    code = "seat_refused"


@dataclass
class SeatBots:
    """The bots of a match's seats, in seat order, and the hosted ones by seat number."""

    specs: list[BotSpec]
    hosted: dict[int, HostedSeat] = field(default_factory=dict)

    def logs(self) -> dict[int, bytes]:
        """What each hosted seat wrote (capped), by seat number; for its owner only."""
        return {n: seat.log_bytes() for n, seat in self.hosted.items()}


def remote_bot(seat: MatchSeat) -> BotSpec:
    """The checked address of a remote seat's endpoint, as dialed now."""
    bot, version = seat.bot, seat.version
    if not version.endpoint:
        raise SeatRefused(f"bot {bot.name} has no endpoint")
    try:
        checked = endpoint_check(version.endpoint)
    except ApplicationError as exc:
        raise SeatRefused(f"bot {bot.name}: {exc.message}") from exc
    return BotSpec(address=checked.dial_target, name=bot.name, version=str(version.number))


def seat_bots(stack: ExitStack, seats: Sequence[MatchSeat]) -> SeatBots:
    """Every seat's bot, in seat order; ``stack`` stops the hosted ones when it closes."""
    hosted_seats = [s for s in seats if s.bot.kind == Bot.Kind.HOSTED]
    try:
        hosted = stack.enter_context(match_hosted_seats(hosted_seats)) if hosted_seats else {}
    except ApplicationError as exc:  # this worker cannot sandbox
        raise SeatRefused(exc.message) from exc
    specs = [
        hosted[s.seat].bot_spec(name=s.bot.name, version=str(s.version.number))
        if s.seat in hosted
        else remote_bot(s)
        for s in seats
    ]
    return SeatBots(specs, hosted)

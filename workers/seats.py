"""Seat dialing: for each seat of a match, the bot to dial, and cleanup afterwards.

This is the seam hosted bots plug into. ``seat_bot`` is a context manager: it
yields the ``BotSpec`` the runner dials for one seat and, when the match is
over (or failed, or the task was stopped), undoes whatever it set up for it.
For a remote bot there is nothing to undo; a hosted bot (``workers/sandbox``,
later) will start a sandboxed process per seat here, yield its unix socket and
a liveness check, and kill it on exit.

Remote endpoints are checked again right before dialing, and the checked
*address* is dialed, not the name (DNS rebinding, pitfall G8).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager

from ladder.bots.endpoints import endpoint_check
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError
from ladder.matches.models import MatchSeat
from ladder.matches.queue import HOSTED_REFUSED
from workers.runner import BotSpec


class SeatRefused(ApplicationError):
    """A seat's bot cannot be played (the match is errored with this message)."""

    code = "seat_refused"


@contextmanager
def seat_bot(seat: MatchSeat) -> Iterator[BotSpec]:
    """The bot of one seat for one match; whatever was started for it stops on exit."""
    bot, version = seat.bot, seat.version
    if bot.kind == Bot.Kind.HOSTED:
        raise SeatRefused(f"bot {bot.name} {HOSTED_REFUSED}")
    if not version.endpoint:
        raise SeatRefused(f"bot {bot.name} has no endpoint")
    try:
        checked = endpoint_check(version.endpoint)
    except ApplicationError as exc:
        raise SeatRefused(f"bot {bot.name}: {exc.message}") from exc
    yield BotSpec(address=checked.dial_target, name=bot.name, version=str(version.number))


def seat_bots(stack: ExitStack, seats: Sequence[MatchSeat]) -> list[BotSpec]:
    """Every seat's bot, in seat order; ``stack`` cleans them all up when it closes."""
    return [stack.enter_context(seat_bot(seat)) for seat in seats]

"""What a page shows of a rating, a leaderboard line or a seat, computed once.

Figures come from the same selectors and the same conversions as the REST API
(hundredths / ``elo.SCALE``, ``rating_uncertainty``), so a page and the API never
disagree; templates only format them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ladder.bots.models import Bot
from ladder.ratings import selectors as rating_selectors
from ladder.ratings.elo import SCALE


def points(hundredths: int | None) -> float | None:
    """Stored hundredths as Elo points (as the API shows them)."""
    return None if hundredths is None else hundredths / SCALE


@dataclass(frozen=True)
class Rating:
    """A bot's rating as shown: points, games, provisional, 95 % interval."""

    value: float
    games: int
    provisional: bool
    low: float | None
    high: float | None

    @property
    def half_width(self) -> float | None:
        """The ± of the 95 % interval (it is symmetric)."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2


def rating_of(bot: Bot) -> Rating:
    """A bot from the selectors, whose ``rating`` and ``games`` are on one ladder."""
    rating: int = bot.rating  # type: ignore[attr-defined]
    games: int = bot.games  # type: ignore[attr-defined]
    u = rating_selectors.rating_uncertainty(rating=rating, games=games)
    low, high = u.interval95 if u.interval95 else (None, None)
    return Rating(value=rating / SCALE, games=games, provisional=u.provisional, low=low, high=high)


def bot_status(bot: Bot) -> tuple[str, str]:
    """(status, why): active, suspended (with the staff's reason), retired or inactive."""
    if bot.retired_at is not None:
        return "retired", ""
    if not bot.is_active:
        return ("suspended", bot.suspended_reason) if bot.suspended_reason else ("inactive", "")
    return "active", ""


@dataclass(frozen=True)
class BoardLine:
    """One line of the leaderboard."""

    position: int | None
    bot: Bot
    rating: Rating
    first_places: int
    trend: list[float]

    @property
    def win_share(self) -> float | None:
        """First places (finished matches) per rated game, as wins/games on the gRPC board."""
        return self.first_places / self.rating.games if self.rating.games else None


def board_lines(bots: Sequence[Bot], *, kind: str = "") -> list[BoardLine]:
    """Leaderboard lines for one page of bots: three queries whatever the page size."""
    ids = [b.pk for b in bots]
    positions = rating_selectors.leaderboard_positions(bot_ids=ids, kind=kind)
    trends = rating_selectors.bot_rating_trends(bot_ids=ids)
    firsts = rating_selectors.bot_first_places(bot_ids=ids)
    return [
        BoardLine(
            position=positions.get(b.pk),
            bot=b,
            rating=rating_of(b),
            first_places=firsts.get(b.pk, 0),
            trend=[r / SCALE for r in trends.get(b.pk, [])],
        )
        for b in bots
    ]

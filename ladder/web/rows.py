"""What a page shows of a rating, a leaderboard line or a seat, computed once.

Figures come from the same selectors and the same conversions as the REST API
(hundredths / ``elo.SCALE``, ``rating_uncertainty``), so a page and the API never
disagree; templates only format them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings

from ladder.bots.models import Bot, BotVersion
from ladder.common.logs import LogExcerpt, log_excerpt
from ladder.ladders import Ladder
from ladder.ratings import selectors as rating_selectors
from ladder.ratings.elo import SCALE, sigma_after
from ladder.ratings.models import BotRating


def points(hundredths: int | None) -> float | None:
    """Stored hundredths as Elo points (as the API shows them)."""
    return None if hundredths is None else hundredths / SCALE


@dataclass(frozen=True)
class Rating:
    """A bot's rating as shown: points (the mean), sigma, the conservative score the board
    ranks by, games, provisional, 95 % interval."""

    value: float
    games: int
    provisional: bool
    low: float | None
    high: float | None
    sigma: float = 0.0
    score: float = 0.0

    @property
    def half_width(self) -> float | None:
        """The ± of the 95 % interval (it is symmetric)."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2


class Rated(Protocol):
    """A bot annotated by the selectors (its rating on one ladder) or a ``BotRating``."""

    rating: int
    sigma: int
    score: int
    games: int


def rating_of(rated: Rated | Bot) -> Rating:
    """The rating of a bot from the selectors (on the ladder they read) or of an entry."""
    rating: int = rated.rating  # type: ignore[union-attr]
    games: int = rated.games  # type: ignore[union-attr]
    sigma: int = rated.sigma  # type: ignore[union-attr]
    score: int = rated.score  # type: ignore[union-attr]
    u = rating_selectors.rating_uncertainty(rating=rating, games=games, sigma=sigma)
    low, high = u.interval95 if u.interval95 else (None, None)
    return Rating(
        value=rating / SCALE,
        games=games,
        provisional=u.provisional,
        low=low,
        high=high,
        sigma=sigma / SCALE,
        score=score / SCALE,
    )


def bot_status(bot: Bot) -> tuple[str, str]:
    """(status, why): active, suspended (with the staff's or the auto-suspend's reason),
    retired or inactive."""
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


def board_lines(
    bots: Sequence[Bot],
    *,
    kind: str = "",
    ladder: str | None = None,
    first_position: int | None = None,
) -> list[BoardLine]:
    """Leaderboard lines on ``ladder`` for one page of bots read by the selectors on that
    ladder (their ``rating``, ``games`` and ``wins`` are that ladder's): two queries
    whatever the page size, one when ``first_position`` says the bots are a slice of
    the board in its own order (their positions follow from it, as the API's do)."""
    ids = [b.pk for b in bots]
    if first_position is None:
        positions = rating_selectors.leaderboard_positions(bot_ids=ids, kind=kind, ladder=ladder)
    else:
        positions = {pk: first_position + i for i, pk in enumerate(ids)}
    trends = rating_selectors.bot_rating_trends(bot_ids=ids, ladder=ladder)
    return [
        BoardLine(
            position=positions.get(b.pk),
            bot=b,
            rating=rating_of(b),
            first_places=b.wins,  # type: ignore[attr-defined]
            trend=[r / SCALE for r in trends.get(b.pk, [])],
        )
        for b in bots
    ]


@dataclass(frozen=True)
class LadderLine(BoardLine):
    """A bot's standing on one ladder (a line of its page): a board line with its ladder."""

    ladder: Ladder | None = None


def ladder_lines(
    bot: Bot,
    ladders: Sequence[Ladder],
    entries: Sequence[BotRating],
    positions: Mapping[str, int],
) -> list[LadderLine]:
    """The bot's line on each of ``ladders`` (in that order) from its rating entries
    (``bot_selectors.bot_detail``) and positions (``bot_ladder_positions``): no query.
    A ladder it has no entry on yet shows the start rating, as the selectors do."""
    by_key = {e.ladder: e for e in entries}
    lines = []
    for lad in ladders:
        entry = by_key.get(lad.key) or BotRating(
            ladder=lad.key,
            rating=settings.LADDER_ELO_START,
            sigma=sigma_after(0),
            score=0,
            games=0,
            wins=0,
        )
        lines.append(
            LadderLine(
                ladder=lad,
                position=positions.get(lad.key),
                bot=bot,
                rating=rating_of(entry),
                first_places=entry.wins,
                trend=[],
            )
        )
    return lines


@dataclass(frozen=True)
class VersionRow:
    """A version as a page lists it; its smoke match's log only for its owner and staff."""

    version: BotVersion
    smoke_log: LogExcerpt | None


def version_rows(versions: Iterable[BotVersion], *, private: bool, cap: int) -> list[VersionRow]:
    """The versions with, when ``private``, the end of each smoke log (read from storage)."""
    return [
        VersionRow(
            version=v,
            smoke_log=log_excerpt(v.smoke_log.name, cap=cap)
            if private and v.smoke_log.name
            else None,
        )
        for v in versions
    ]

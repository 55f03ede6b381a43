"""Leaderboard and rating history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Q, QuerySet, Window
from django.db.models.functions import Lower, RowNumber

from ladder.bots.models import Bot
from ladder.matches.models import MatchSeat
from ladder.ratings import elo


def leaderboard_list(
    *,
    kind: str = "",
    owner: str = "",
    search: str = "",
    provisional: bool | None = None,
    include_inactive: bool = False,
) -> QuerySet[Bot]:
    """Bots by rating (stable tie-break by id); retired bots never appear."""
    qs = Bot.objects.select_related("owner").filter(retired_at__isnull=True)
    if not include_inactive:
        qs = qs.filter(is_active=True)
    if kind:
        qs = qs.filter(kind=kind)
    if owner:
        qs = qs.filter(owner__username=owner)
    if search:
        qs = qs.filter(name__icontains=search)
    if provisional is True:
        qs = qs.filter(games__lt=settings.LADDER_PROVISIONAL_GAMES)
    elif provisional is False:
        qs = qs.filter(games__gte=settings.LADDER_PROVISIONAL_GAMES)
    return qs.order_by("-rating", "id")


@dataclass(frozen=True)
class Uncertainty:
    games: int
    provisional: bool
    interval95: tuple[float, float] | None


def rating_uncertainty(*, rating: int, games: int) -> Uncertainty:
    """Games played, 95 % interval in points (model in ``elo`` docstring), provisional flag."""
    iv = elo.interval95(rating, games)
    return Uncertainty(
        games=games,
        provisional=games < settings.LADDER_PROVISIONAL_GAMES,
        interval95=None if iv is None else (iv[0] / elo.SCALE, iv[1] / elo.SCALE),
    )


def bot_rating_history(*, bot_id: int, limit: int = 200) -> QuerySet[MatchSeat]:
    """The bot's rated seats in recording order (oldest first), at most ``limit`` latest."""
    latest = (
        MatchSeat.objects.filter(bot_id=bot_id, match__result__isnull=False)
        .select_related("match__result")
        .order_by("-match__result__id")[:limit]
    )
    ids = list(latest.values_list("pk", flat=True))
    return (
        MatchSeat.objects.filter(pk__in=ids)
        .select_related("match__result")
        .order_by("match__result__id")
    )


# --- the web leaderboard: search, sort, and per-page extras in one query each -------

LEADERBOARD_SORTS: dict[str, tuple[Any, ...]] = {
    "rank": (F("rating").desc(), "id"),
    "-rank": (F("rating").asc(), F("id").desc()),
    "name": (Lower("name"), "id"),
    "-name": (Lower("name").desc(), F("id").desc()),
    "owner": (Lower("owner__username"), Lower("name"), "id"),
    "-owner": (Lower("owner__username").desc(), Lower("name").desc(), F("id").desc()),
    "games": ("games", F("rating").desc(), "id"),
    "-games": (F("games").desc(), F("rating").desc(), "id"),
}
"""Orderings the leaderboard may be sorted by; every one ends in a unique tie-break."""


def leaderboard_search(*, kind: str = "", query: str = "", sort: str = "rank") -> QuerySet[Bot]:
    """The board (``leaderboard_list``) narrowed to bots whose name or owner contains ``query``."""
    qs = leaderboard_list(kind=kind)
    query = query.strip()
    if query:
        qs = qs.filter(Q(name__icontains=query) | Q(owner__username__icontains=query))
    return qs.order_by(*LEADERBOARD_SORTS.get(sort, LEADERBOARD_SORTS["rank"]))


def leaderboard_positions(*, bot_ids: Sequence[int], kind: str = "") -> dict[int, int]:
    """Each bot's position on the board of ``kind``, in ``leaderboard_list``'s order.

    Bots off the board (suspended, retired) are absent. One query for any number
    of bots: the board is numbered once (a window over the rating index) and
    only the asked rows are read from it, so a search result or another sort
    order still shows each bot's real position.
    """
    ids = [int(i) for i in bot_ids]
    if not ids:
        return {}
    numbered = (
        leaderboard_list(kind=kind)
        .annotate(
            board_id=F("pk"),
            position=Window(RowNumber(), order_by=[F("rating").desc(), F("id").asc()]),
        )
        .order_by()
        .values_list("board_id", "position")
    )
    sql, params = numbered.query.sql_with_params()
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT board.board_id, board.position FROM ({sql}) board"
            f" WHERE board.board_id IN ({marks})",
            [*params, *ids],
        )
        return {pk: position for pk, position in cursor.fetchall()}


def _recorded_seats() -> QuerySet[MatchSeat]:
    """Seats of recorded results (``rating_after`` is set exactly then): no join needed."""
    return MatchSeat.objects.filter(rating_after__isnull=False)


def bot_rating_trends(*, bot_ids: Sequence[int], points: int = 20) -> dict[int, list[int]]:
    """Each bot's rating (hundredths) after its last ``points`` recorded matches, oldest first.

    For the sparklines of a page of bots, in one query. On PostgreSQL a LATERAL
    join reads only each bot's latest seats (an index range per bot, one small
    plan); elsewhere a window over the bots' seats. Unrated matches are points
    where the rating stayed; the order is the matches' (creation) order.
    """
    ids = [int(pk) for pk in dict.fromkeys(bot_ids)]
    if not ids:
        return {}
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(MatchSeat._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT s.bot_id, s.match_id, s.rating_after FROM unnest(%s::bigint[]) AS b(id)"
                " CROSS JOIN LATERAL (SELECT bot_id, match_id, rating_after"
                f" FROM {table} WHERE bot_id = b.id AND rating_after IS NOT NULL"
                " ORDER BY match_id DESC LIMIT %s) s",
                [ids, points],
            )
            rows = cursor.fetchall()
    else:
        rows = list(
            _recorded_seats()
            .filter(bot_id__in=ids)
            .annotate(
                back=Window(RowNumber(), partition_by=[F("bot_id")], order_by=F("match_id").desc())
            )
            .filter(back__lte=points)
            .values_list("bot_id", "match_id", "rating_after")
        )
    trends: dict[int, list[int]] = {pk: [] for pk in ids}
    for bot_id, _, rating in sorted(rows, key=lambda r: (r[0], r[1])):
        trends[bot_id].append(rating)
    return trends


def bot_first_places(*, bot_ids: Sequence[int]) -> dict[int, int]:
    """Recorded matches each bot finished first in (ties for first count), for win shares.

    The same count as the gRPC leaderboard's ``wins`` (first places in finished
    matches), read from the seats alone: no join with the matches.
    """
    ids = list(bot_ids)
    counts = dict.fromkeys(ids, 0)
    rows = (
        _recorded_seats()
        .filter(bot_id__in=ids, rank=1)
        .values("bot_id")
        .annotate(n=Count("pk"))
        .values_list("bot_id", "n")
    )
    counts.update(rows)
    return counts

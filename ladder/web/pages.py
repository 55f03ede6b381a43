"""Public pages: leaderboard, bot, match, tournaments and what runs now.

Thin views over the selectors the REST API reads through; every page runs a
fixed number of queries whatever the number of rows (tests pin the counts).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.functional import cached_property

from ladder.bots import presence
from ladder.bots import selectors as bot_selectors
from ladder.bots.models import Bot
from ladder.common import keyset
from ladder.common.exceptions import NotFound
from ladder.common.pagecache import cached_for_anonymous
from ladder.common.pagination import TOTAL, WindowCountPaginator, with_total
from ladder.ladders import Ladder, ladder_get, ladder_list
from ladder.matches import bot_selectors as bot_match_selectors
from ladder.matches import selectors as match_selectors
from ladder.matches.models import Match
from ladder.matches.operations import operations_summary
from ladder.ratings import selectors as rating_selectors
from ladder.ratings.models import Season
from ladder.ratings.services import provisional_games, provisional_half_width
from ladder.tournaments import selectors as tournament_selectors
from ladder.web.forms import LeaderboardFilter
from ladder.web.rows import board_lines, bot_status, ladder_lines, points, version_rows

MATCHES_PER_PAGE = 20
VERSIONS_SHOWN = 20
NOW_LIMIT = 25
DEALS_SHOWN = 10  # the bot's latest duplicate deals on its page
OPPONENTS_SHOWN = 50
STANDINGS_PER_PAGE = 100
LOG_SHOWN_BYTES = 16 * 1024
"""How much of a seat's or a smoke match's log a page shows inline (its end); the whole
log (capped by the sandbox) is one link away, as inert text."""


class CountedPaginator(Paginator):
    """A paginator told its count by a cheaper query than ``COUNT`` over the list's joins."""

    def __init__(self, object_list: Any, per_page: int, *, count: int) -> None:
        super().__init__(object_list, per_page)
        self.known_count = count

    @cached_property
    def count(self) -> int:
        return self.known_count


def _can_see_private(request: HttpRequest, bot: Bot) -> bool:
    user = request.user
    return bool(user.is_authenticated and (user.is_staff or user.pk == bot.owner_id))


def asked_ladder(request: HttpRequest) -> Ladder:
    """The ladder ``?ladder=`` names (empty: the default), or 404 naming the known ones,
    as the REST API answers."""
    try:
        return ladder_get(request.GET.get("ladder") or None)
    except NotFound as exc:
        raise Http404(exc.message) from exc


SORTABLE = ("rank", "name", "owner", "games")
FIRST_DIRECTION = {"rank": "", "name": "", "owner": "", "games": "-"}  # games: most first
"""Direction of a column's first click ("rank" ascending is rank 1 first)."""


def sort_headers(current: str) -> dict[str, dict[str, str]]:
    """Per sortable column: the sort its header link asks for and its aria-sort state."""
    headers = {}
    for column in SORTABLE:
        first = FIRST_DIRECTION[column] + column
        if current.lstrip("-") == column:
            descending = current.startswith("-")
            headers[column] = {
                "next": column if descending else "-" + column,
                "aria": "descending" if descending else "ascending",
            }
        else:
            headers[column] = {"next": first, "aria": "none"}
    return headers


class KeysetPage:
    """A keyset page of the board in the shape ``includes/pagination.html`` reads, its
    links carrying cursors (``next_cursor``/``previous_cursor``) instead of page numbers."""

    def __init__(self, page: keyset.Page, size: int, count: Any) -> None:
        self.object_list = page.rows
        self.next_cursor, self.previous_cursor = page.next, page.previous
        self.number = page.before // size + 1
        self.paginator = count

    def has_next(self) -> bool:
        return bool(self.next_cursor)

    def has_previous(self) -> bool:
        return bool(self.previous_cursor)

    def __iter__(self) -> Any:
        return iter(self.object_list)


def board_page(
    qs: Any,
    size: int,
    request: HttpRequest,
    *,
    keyed: bool,
    count: int | None = None,
    searched: bool = False,
    bound: Callable[[int], tuple[int, int] | None] | None = None,
) -> Any:
    """The board's page: keyset (``?cursor=``, winning over ``?page=``) in the board's own
    order, so a deep page costs what the first does; page numbers for the other sorts and
    for ``?page=`` links. Both count the list (bounded by the number of bots), or take
    ``count`` when the caller knows it more cheaply. A text search (``searched``) reads
    every match to sort them anyway: its page query counts them too (``with_total``),
    except past a cursor, whose rows are not the whole list. ``bound`` (the whole board in
    its own order) finds where a page by number starts on the score index, so a deep
    ``?page=`` link costs what its cursor does (``keyset.SeekPaginator``)."""
    cursor = request.GET.get("cursor")
    if keyed and bound is not None:
        paginator: Paginator = keyset.SeekPaginator(qs, size, bound=bound, count=count)
    elif count is not None:
        paginator = CountedPaginator(qs, size, count=count)
    elif searched and cursor is None:
        qs = with_total(qs)
        paginator = WindowCountPaginator(qs, size)
    else:
        paginator = Paginator(qs, size)
    if not keyed or (cursor is None and request.GET.get("page")):
        return paginator.get_page(request.GET.get("page"))
    page = keyset.board_page(qs, size, cursor)
    if searched and cursor is None:  # the first page: its rows carry the whole count
        total = getattr(page.rows[0], TOTAL) if page.rows else 0
        paginator = CountedPaginator(qs, size, count=total)
    return KeysetPage(page, size, paginator)


RECENT_MATCHES = 10  # the home page's panel of last finished matches
SEASON_TABLE_PAGE = 100  # lines of a finished season's table a page


@cached_for_anonymous
def leaderboard(request: HttpRequest) -> HttpResponse:
    ladder = asked_ladder(request)
    form = LeaderboardFilter(request.GET)
    f = form.values()
    # --- ratings: a finished season's final table instead of the live board ---
    seasons = rating_selectors.season_list(ladder=ladder.key)
    season = _asked_season(request, seasons)
    context: dict[str, Any] = {
        "season": season,
        "seasons": seasons,
        "season_table": None,
        "k_sigma": settings.LADDER_RATING_K_SIGMA,
        "provisional_half_width": provisional_half_width(),
        "provisional_games": provisional_games(),
        "nav": "leaderboard",
        "form": form,
        "filters": f,
        "ladder": ladder,
        "ladders": ladder_list(),
        "headers": sort_headers(f["sort"]),
    }
    if season.ended_at is not None:
        # Its table alone (the live board is not read): a page is two index reads.
        table: Any = rating_selectors.season_table(season=season)
        context["season_table"] = Paginator(table, SEASON_TABLE_PAGE).get_page(
            request.GET.get("page")
        )
    else:
        context.update(_live_board(request, ladder, f))
    context["recent"] = match_selectors.match_lines(
        status=Match.Status.FINISHED, ladder=ladder.key
    )[:RECENT_MATCHES]
    return render(request, "web/leaderboard.html", context)


def _live_board(request: HttpRequest, ladder: Ladder, f: dict[str, Any]) -> dict[str, Any]:
    """The live board's page and its lines (the current season's table)."""
    # Suspended bots stay in sight, marked with the reason, but hold no position.
    qs = rating_selectors.leaderboard_search(
        kind=f["kind"], query=f["q"], sort=f["sort"], ladder=ladder.key, include_inactive=True
    )
    # The whole board (no kind, no search) is counted on the rating entries' index.
    whole = not f["kind"] and not f["q"].strip()
    count = rating_selectors.leaderboard_size(ladder=ladder.key) if whole else None
    keyed = f["sort"] == "rank"
    bound = partial(rating_selectors.leaderboard_row_at, ladder=ladder.key, include_inactive=True)
    page = board_page(
        qs,
        f["page_size"],
        request,
        keyed=keyed,
        count=count,
        searched=bool(f["q"].strip()),
        bound=bound if whole else None,
    )
    return {
        "page": page,
        "lines": board_lines(
            page.object_list,
            kind=f["kind"],
            ladder=ladder.key,
            # Positions from the board itself (suspended bots are listed but hold none);
            # a page of the board of its kind in its own order is a run of its lines.
            first_position=None,
            consecutive=keyed and not f["q"].strip(),
        ),
    }


def _rating_history(bot: Bot, ladder: Ladder, season: int | None) -> list[dict[str, Any]]:
    """The same rows as the API's ``rating-history?ladder=&season=`` (oldest first, at most
    200), with the 95 % band (rating ± 1.96 sigma) after each match."""
    changes = rating_selectors.bot_rating_history_rows(
        bot_id=bot.pk, ladder=ladder.key, season=season
    )
    # Plain rows: up to 200 of them, a model instance each cost more than the table.
    return [
        {
            "match": match_id,
            "recorded": result_id,
            "season": number,
            "rank": rank,
            "before": points(before),
            "after": points(after),
            "sigma": points(sigma),
            "low": points(after - round(1.96 * sigma)),
            "high": points(after + round(1.96 * sigma)),
            "delta": points(after - before),
            "at": at,
        }
        for match_id, result_id, number, rank, before, after, sigma, at in changes
    ]


def _asked_season(request: HttpRequest, seasons: list[Season]) -> Season:
    """The season ``?season=N`` names among ``seasons`` (default: the current one), or 404."""
    raw = request.GET.get("season", "")
    try:
        number = int(raw) if raw.isdigit() and len(raw) < 9 else None
        return rating_selectors.season_get(number=number, seasons=seasons)
    except NotFound as exc:
        raise Http404(exc.message) from exc


def _streams(request: HttpRequest, bot: Bot) -> list[presence.StreamShown] | None:
    """A connected bot's live streams, read for its owner and staff only (the page shows
    them only then; None: not read, or presence unreadable)."""
    if bot.kind != Bot.Kind.CONNECTED or not _can_see_private(request, bot):
        return None
    return presence.streams_shown(bot.pk)


@cached_for_anonymous
def bot_detail(request: HttpRequest, bot_id: int) -> HttpResponse:
    """A bot: its standing on every ladder, and the history of the one asked (``?ladder=``)."""
    ladder = asked_ladder(request)
    try:
        bot = bot_selectors.bot_get(bot_id=bot_id, ladder=ladder.key)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    entries, positions = rating_selectors.bot_ladder_standings(bot=bot)
    standings = ladder_lines(bot, ladder_list(), entries, positions)
    seasons = rating_selectors.season_list(ladder=ladder.key)
    season = _asked_season(request, seasons)
    history = _rating_history(bot, ladder, season.number)
    matches = CountedPaginator(
        bot_match_selectors.BotMatchLines(bot.pk),
        MATCHES_PER_PAGE,
        count=bot_match_selectors.bot_match_count(bot_id=bot.pk),
    )
    status, why = bot_status(bot)
    context = {
        "bot": bot,
        "ladder": ladder,
        "standings": standings,
        "line": next(line for line in standings if line.ladder == ladder),
        "status": status,
        "status_reason": why,
        "private": _can_see_private(request, bot),
        "streams": _streams(request, bot),
        "history": history,
        "chart": {
            "match": [h["match"] for h in history],
            "rating": [h["after"] for h in history],
            "low": [h["low"] for h in history],
            "high": [h["high"] for h in history],
        },
        # --- ratings: seasons and version lineage ---
        "season": season,
        "seasons": seasons,
        "lineage": rating_selectors.bot_lineage(bot_id=bot.pk, ladder=ladder.key),
        # Smoke logs are on the owner's manage page, not read for this one.
        "versions": version_rows(
            bot_selectors.bot_versions(bot=bot)[:VERSIONS_SHOWN], private=False, cap=0
        ),
        "matches": matches.get_page(request.GET.get("page")),
        "opponents": match_selectors.bot_opponent_records(bot_id=bot.pk, limit=OPPONENTS_SHOWN),
        "opponents_shown": OPPONENTS_SHOWN,
        "deals": tournament_selectors.bot_deals(bot_id=bot.pk, limit=DEALS_SHOWN),
    }
    return render(request, "web/bot.html", context)


def match_detail(request: HttpRequest, match_id: int) -> HttpResponse:
    """A match: seats, result, its ladder, the replay viewer, and to a bot's owner (and
    staff) the logs of their hosted seats."""
    try:
        match = match_selectors.match_detail(match_id=match_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    seats = list(match.seats.all())
    try:
        ladder: Ladder | None = ladder_get(match.ladder) if match.ladder else None
    except NotFound:  # a ladder taken out of the settings: its key is still shown
        ladder = None
    context = {
        "match": match,
        "ladder": ladder,
        "result": getattr(match, "result", None) if match.status == Match.Status.FINISHED else None,
        "seats": seats,
        "by_rank": sorted(seats, key=lambda s: (s.rank is None, s.rank or 0, s.seat)),
        "seat_logs": match_selectors.match_seat_logs_for_user(
            user=request.user, match=match, cap=LOG_SHOWN_BYTES
        ),
        "log_shown": LOG_SHOWN_BYTES,
        # Its seed and replay as anyone may see them (hidden until its deal is done).
        "reveal": match_selectors.match_reveal(match),
        # A duplicate deal's matches (by rotation) and each bot's result over the set.
        "deal": tournament_selectors.deal_get(deal_id=match.deal_id) if match.deal_id else None,
    }
    return render(request, "web/match.html", context)


def tournament_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(tournament_selectors.tournament_list(), 50).get_page(request.GET.get("page"))
    return render(request, "web/tournaments.html", {"nav": "tournaments", "page": page})


def tournament_detail(request: HttpRequest, tournament_id: int) -> HttpResponse:
    try:
        tournament = tournament_selectors.tournament_get(tournament_id=tournament_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    lines: Any = match_selectors.match_lines(tournament_id=tournament.pk)
    matches = Paginator(lines, MATCHES_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "nav": "tournaments",
        "tournament": tournament,
        "standings": Paginator(
            tournament_selectors.tournament_standings_table(tournament=tournament),
            STANDINGS_PER_PAGE,
        ).get_page(request.GET.get("standings")),
        "matches": matches,
    }
    return render(request, "web/tournament.html", context)


def now(request: HttpRequest) -> HttpResponse:
    """Running, queued and last finished matches, across ladders or on one (``?ladder=``)."""
    key = asked_ladder(request).key if request.GET.get("ladder") else ""
    # Oldest (next to play) first.
    queued = match_selectors.match_lines(status=Match.Status.QUEUED, ladder=key, oldest_first=True)
    context = {
        "nav": "now",
        "ladder": key,
        "ladders": ladder_list(),
        "running": match_selectors.match_lines(status=Match.Status.RUNNING, ladder=key)[:NOW_LIMIT],
        "queued": queued[:NOW_LIMIT],
        "queued_count": queued.count(),
        "finished": match_selectors.match_lines(status=Match.Status.FINISHED, ladder=key)[
            :NOW_LIMIT
        ],
        "limit": NOW_LIMIT,
        "ops": operations_summary(ladder=key),
    }
    return render(request, "web/now.html", context)

"""What a page shows of a rating, a leaderboard line or a seat, computed once.

Figures come from the same selectors and the same conversions as the REST API
(hundredths / ``elo.SCALE``, ``rating_uncertainty``), so a page and the API never
disagree; templates only format them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from functools import lru_cache
from typing import Any, Protocol

from django.conf import settings
from django.template.defaultfilters import floatformat, urlencode
from django.urls import get_script_prefix, reverse
from django.utils.formats import localize
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timezone import get_current_timezone, localtime

from ladder.bots.models import Bot, BotVersion
from ladder.common.elo import SCALE, sigma_after
from ladder.common.logs import LogExcerpt, log_excerpt
from ladder.ladders import Ladder
from ladder.matches.models import Match
from ladder.matches.selectors import MatchLine, OpponentRecord
from ladder.ratings import selectors as rating_selectors
from ladder.ratings.models import BotRating
from ladder.ratings.services import provisional_games, provisional_half_width


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
    consecutive: bool = False,
) -> list[BoardLine]:
    """Leaderboard lines on ``ladder`` for one page of bots read by the selectors on that
    ladder (their ``rating``, ``games`` and ``wins`` are that ladder's): two queries
    whatever the page size, one when ``first_position`` says the bots are a slice of
    the board in its own order (their positions follow from it, as the API's do).
    ``consecutive``: the bots are a run of the site's board of ``kind`` in its order
    (suspended bots listed): numbered from one count of the entries ahead of them."""
    ids = [b.pk for b in bots]
    if first_position is None and consecutive:
        positions = rating_selectors.leaderboard_positions_from(bots, kind=kind, ladder=ladder)
    elif first_position is None:
        positions = rating_selectors.leaderboard_positions(
            bot_ids=ids,
            kind=kind,
            ladder=ladder,
            lowest_score=min((b.score for b in bots), default=None),  # type: ignore[attr-defined]
        )
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


SPARK_W, SPARK_H, SPARK_PAD = 96, 24, 2
NONE = "\u2013"  # en dash: no value


def _points_text(value: float | None) -> str:
    """Elo points with the two decimals the ladder stores (the ``rating`` filter)."""
    return NONE if value is None else f"{value:.2f}"


def rating_figure(r: Rating) -> SafeString:
    """Rating, ± of its 95 % interval, provisional mark; exact values in data attributes.

    On every leaderboard line: built here, once per line, never in a template loop.
    """
    bounds = (
        format_html(' data-low="{}" data-high="{}"', r.low, r.high)
        if r.low is not None and r.high is not None
        else ""
    )
    html = format_html(
        '<span class="rating" data-rating="{}"{}>{}</span>', r.value, bounds, _points_text(r.value)
    )
    if r.half_width is not None:
        span = f"{_points_text(r.low)} {NONE} {_points_text(r.high)}"
        html += format_html(
            ' <span class="interval" title="95 % interval {}">± {}</span>',
            span,
            f"{r.half_width:.0f}",
        )
    if r.provisional:
        html += format_html(
            ' <abbr class="badge provisional" title="{}">prov.</abbr>',
            f"provisional: fewer than {provisional_games()} games, or its 95 % interval still"
            f" wider than ± {provisional_half_width()} points",
        )
    return html


def sparkline(values: Sequence[float], label: str = "rating trend") -> SafeString:
    """A small inline SVG of a rating series (no script needed); a dot when too short."""
    if len(values) < 2:
        return format_html('<span class="spark-empty" aria-hidden="true">{}</span>', "·")
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    step = (SPARK_W - 2 * SPARK_PAD) / (len(values) - 1)
    path = " ".join(
        f"{SPARK_PAD + i * step:.1f},{SPARK_PAD + (hi - v) / span * (SPARK_H - 2 * SPARK_PAD):.1f}"
        for i, v in enumerate(values)
    )
    direction = "up" if values[-1] > values[0] else "down" if values[-1] < values[0] else "flat"
    title = f"{label}: {values[0]:.2f} to {values[-1]:.2f} over {len(values)} games"
    return format_html(
        '<svg class="spark spark-{direction}" viewBox="0 0 {w} {h}" '
        'width="{w}" height="{h}" role="img" aria-label="{title}" '
        'data-points="{n}"><title>{title}</title>'
        '<polyline points="{path}" fill="none" stroke-width="1.5"/></svg>',
        direction=direction,
        w=SPARK_W,
        h=SPARK_H,
        title=title,
        n=len(values),
        path=path,
    )


# --- rows rendered in Python -------------------------------------------------------------
# A table of matches or leaderboard lines repeats a dozen template lookups, filters and
# ``{% url %}`` reversals per row; on the pages that list 20-75 matches or 50-100 bots that
# was most of their time. These build the same markup once per row (escaped as the
# templates escape it), and the templates place it.

_SENTINEL = 987654321


@lru_cache(maxsize=64)
def _url_parts(name: str, prefix: str) -> tuple[str, str]:
    """``reverse(name, args=[pk])`` split around its id: one reversal per process."""
    url = reverse(name, args=[_SENTINEL])
    head, _, tail = url.partition(str(_SENTINEL))
    return head, tail


def url_of(name: str, pk: int) -> str:
    """``{% url name pk %}`` for a route with one integer argument."""
    head, tail = _url_parts(name, get_script_prefix())
    return f"{head}{pk}{tail}"


def _when(value: datetime, zone: tzinfo | None = None) -> tuple[int, str, str]:
    """A datetime as the templates show it: ``|date:'U'``, ``|date:'c'``, ``|date:"Y-m-d H:i"``
    (in ``zone``, the current time zone when not given, as the template's filter converts
    it; values are aware: ``USE_TZ``)."""
    local = localtime(value, zone)
    return int(local.timestamp()), local.isoformat(), local.strftime("%Y-%m-%d %H:%M")


def _signed(value: float | None) -> SafeString:
    """``<span class="{{ v|delta_class }}">{{ v|signed }}</span>`` of a change in points."""
    css = "delta-none" if not value else "delta-up" if value > 0 else "delta-down"
    if value is None:
        shown = NONE
    elif value == 0:
        shown = "±0.00"
    else:
        shown = f"+{value:.2f}" if value > 0 else f"\u2212{-value:.2f}"
    return format_html('<span class="{}">{}</span>', css, shown)


def _signed_delta(delta: int | None) -> SafeString:
    """``<span class="{{ d|delta_class }}">{{ d|hundredths_signed }}</span>``."""
    return _signed(points(delta))


# Fixed markup, built like every other piece (format_html: escaping is the default).
_CLOSE_TD = format_html("{}</td>", "")
_UNRATED = format_html(' <span class="muted">{}</span>', "unrated")
_ME = format_html(' class="{}"', "me")


def _joined(parts: Iterable[SafeString]) -> SafeString:
    """Already-built markup, joined (each part escaped where it was built)."""
    return format_html_join("", "{}", ((part,) for part in parts))


def match_row(m: Match | MatchLine, focus: Bot | None, zone: tzinfo | None = None) -> SafeString:
    """One ``<tr>`` of ``includes/match_rows.html`` (a match read by ``match_rows_list``,
    or a ``MatchLine``)."""
    pk = m.pk
    first = [
        format_html('<td data-sort="{}"><a href="{}">#{}</a>', pk, url_of("web:match", pk), pk)
    ]
    if m.tournament_id is not None and m.tournament is not None:
        first.append(format_html(' <span class="muted">· {}</span>', m.tournament.name))
    if m.deal_id:
        first.append(
            format_html(
                ' <span class="muted deal-mark" title="duplicate deal {deal}, seat rotation'
                ' {rotation}">· deal {deal}/{rotation}</span>',
                deal=m.deal_id,
                rotation=m.deal_rotation,
            )
        )
    if m.replay_sha256:
        first.append(
            format_html(
                ' <a class="replay-link" href="{}"><span aria-hidden="true">▶</span> replay<span'
                ' class="visually-hidden"> of match {}</span></a>',
                url_of("viewer-match", pk),
                pk,
            )
        )
    first.append(_CLOSE_TD)
    second = [format_html('<td><span class="status status-{s}">{s}</span>', s=m.status)]
    if m.status == "running" and not m.deal_id:
        second.append(
            format_html(
                ' <a class="live-link" href="{}">watch live<span class="visually-hidden"> match'
                " {}</span></a>",
                url_of("viewer-live", pk),
                pk,
            )
        )
    if m.ladder:
        second.append(format_html(' <span class="ladder-key" title="ladder">{}</span>', m.ladder))
    if not m.rated:
        second.append(_UNRATED)
    second.append(_CLOSE_TD)
    # A MatchLine (plain rows) or a Match with its seats prefetched.
    if isinstance(m, MatchLine):
        seats: Sequence[Any] = m.seat_lines
    else:
        seats = list(m.seats.all())
    items = []
    for s in seats:
        me = _ME if focus is not None and s.bot_id == focus.pk else ""
        rank = format_html(' <span class="rank">#{}</span>', s.rank) if s.rank else ""
        delta = s.rating_delta
        change = format_html(" {}", _signed_delta(delta)) if delta is not None and m.rated else ""
        items.append(
            format_html(
                '\n          <li{}><a href="{}">{}</a>{}{}</li>\n          ',
                me,
                url_of("web:bot", s.bot_id),
                s.bot_name,
                rank,
                change,
            )
        )
    mine: list[SafeString] = []
    if focus is not None:
        mine.append(format_html("\n        {}", ""))
        for s in seats:
            if s.bot_id == focus.pk:
                delta = s.rating_delta
                mine.append(
                    format_html(
                        '\n          <td class="num" data-sort="{}">{}</td>\n'
                        '          <td class="num" data-sort="{}">{}</td>\n        ',
                        s.rank or 99,
                        s.rank or NONE,
                        delta or 0,
                        _signed_delta(delta),
                    )
                )
        mine.append(format_html("\n      {}", ""))
    unix, iso, shown = _when(m.created_at, zone)
    return format_html(
        "\n    <tr>\n      {}\n      {}\n      <td>\n"
        '        <ol class="seats-inline">\n          {}\n'
        "        </ol>\n      </td>\n      {}\n"
        '      <td data-sort="{}"><time datetime="{}">{}</time></td>\n'
        "    </tr>\n    ",
        _joined(first),
        _joined(second),
        _joined(items),
        _joined(mine),
        unix,
        iso,
        shown,
    )


def match_rows(matches: Iterable[Match | MatchLine], focus: Bot | None = None) -> SafeString:
    """The ``<tbody>`` rows of ``includes/match_rows.html`` ("" for no match)."""
    zone = get_current_timezone()
    return _joined(match_row(m, focus, zone) for m in matches)


def _plural(n: int) -> str:
    """``|pluralize``."""
    return "" if n == 1 else "s"


def _whole(value: float) -> str:
    """``floatformat(value, "0")`` of points stored as hundredths (sigma, score): rounded
    half away from zero, "-0" as "0", as the filter's decimal rounding does, without
    its Decimal and locale work (two of them on each of a board's lines)."""
    hundredths = round(value * SCALE)
    whole = (abs(hundredths) + SCALE // 2) // SCALE
    return str(-whole if hundredths < 0 and whole else whole)


def board_row(line: BoardLine, ladder: Ladder) -> SafeString:
    """One ``<tr>`` of the leaderboard's table (``web/leaderboard.html``)."""
    bot, r = line.bot, line.rating
    href = url_of("web:bot", bot.pk)
    if not ladder.is_default:
        href += f"?ladder={urlencode(ladder.key)}"
    suspended = ""
    if not bot.is_active:
        reason = f": {bot.suspended_reason}" if bot.suspended_reason else ""
        suspended = format_html(
            ' <span class="status-suspended" data-status="suspended">suspended{}</span>', reason
        )
    share = NONE if line.win_share is None else f"{line.win_share * 100:.0f} %"
    firsts, games = line.first_places, r.games
    return format_html(
        '\n    <tr data-bot="{name}" data-kind="{kind}"{suspended_mark}>\n'
        '      <td class="num rank">{position}</td>\n'
        '      <td><a href="{href}">{name}</a> <span class="kind kind-{kind}">{kind}</span>'
        "{suspended}</td>\n"
        '      <td class="owner">{owner}</td>\n'
        '      <td class="num">{rating}</td>\n'
        '      <td class="num sigma">{sigma}</td>\n'
        '      <td class="num score">{score}</td>\n'
        '      <td class="num games">{games}</td>\n'
        '      <td class="num" title="{firsts} first place{firsts_s} in {games} rated'
        ' game{games_s}">{share}</td>\n'
        '      <td class="trend">{trend}</td>\n'
        "    </tr>\n    ",
        name=bot.name,
        kind=bot.kind,
        suspended_mark="" if bot.is_active else _SUSPENDED_MARK,
        position=line.position or NONE,
        href=href,
        suspended=suspended,
        owner=bot.owner.username,
        rating=rating_figure(r),
        sigma=_whole(r.sigma),
        score=_whole(r.score),
        games=games,
        firsts=firsts,
        firsts_s=_plural(firsts),
        games_s=_plural(games),
        share=share,
        trend=sparkline(line.trend),
    )


_SUSPENDED_MARK = format_html(" {}", "data-suspended")


def board_rows(lines: Iterable[BoardLine], ladder: Ladder) -> SafeString:
    """The ``<tbody>`` rows of the leaderboard ("" for no line)."""
    return _joined(board_row(line, ladder) for line in lines)


def opponent_rows(records: Iterable[OpponentRecord]) -> SafeString:
    """The ``<tbody>`` rows of a bot page's record against each opponent ("" for none)."""
    return format_html_join(
        "",
        '\n      <tr><td><a href="{}">{}</a></td><td class="num">{}</td><td class="num">{}</td>'
        '<td class="num">{}</td><td class="num">{}</td></tr>\n    ',
        (
            (
                url_of("web:bot", o.opponent_id),
                o.opponent_name,
                o.matches,
                o.ahead,
                o.behind,
                o.level,
            )
            for o in records
        ),
    )


def standing_rows(lines: Iterable[Any], *, swiss: bool) -> SafeString:
    """The ``<tbody>`` rows of a tournament's standings (``StandingLine``s; "" for none),
    with the byes and Buchholz columns for a Swiss."""
    out = []
    for line in lines:
        s = line.standing
        swiss_cells = (
            format_html(
                '<td class="num">{}</td><td class="num">{}</td>',
                s.byes,
                floatformat(s.buchholz, 1),
            )
            if swiss
            else ""
        )
        out.append(
            format_html(
                '\n      <tr><td class="num">{}</td><td><a href="{}">{}</a></td><td>{}</td><td'
                ' class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td'
                ' class="num">{}</td>{}</tr>\n    ',
                s.rank,
                url_of("web:bot", s.bot),
                line.bot_name,
                line.owner,
                s.played,
                floatformat(s.points, 1),
                s.wins,
                s.errored,
                swiss_cells,
            )
        )
    return _joined(out)


def _number(value: float) -> str:
    """``{{ value }}`` of a float: its ``str`` (no grouping, a point for the decimals: the
    site's locale), through Django's formatting only for an exponent it would spell out."""
    text = str(value)
    return text if "e" not in text else str(localize(value))


def history_rows(history: Iterable[Mapping[str, Any]]) -> SafeString:
    """The ``<tbody>`` rows of a bot page's rating history (``pages._rating_history``)."""
    out = []
    zone = get_current_timezone()
    for h in history:
        unix, iso, shown = _when(h["at"], zone)
        delta = h["delta"]
        out.append(
            format_html(
                '\n          <tr><td class="num" data-sort="{match}"><a'
                ' href="{href}">#{match}</a></td><td'
                ' class="num">{rank}</td><td class="num">'
                '{before}</td><td class="num">{after}</td>'
                '<td class="num" data-sort="{delta}">{signed}</td><td'
                ' data-sort="{unix}"><time datetime="{iso}">{shown}</time></td></tr>\n        ',
                match=h["match"],
                href=url_of("web:match", h["match"]),
                rank=h["rank"] or NONE,
                before=_points_text(h["before"]),
                after=_points_text(h["after"]),
                delta=_number(delta),
                signed=_signed(delta),
                unix=unix,
                iso=iso,
                shown=shown,
            )
        )
    return _joined(out)

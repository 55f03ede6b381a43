"""Formatting for the site: ratings, signed changes, shares and server-drawn sparklines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django import template
from django.conf import settings
from django.utils.safestring import SafeString

from ladder.web import rows
from ladder.web.rows import Rating, points

register = template.Library()

NONE = "\u2013"  # en dash: no value
MINUS = "\u2212"  # a real minus sign, as wide as the plus


@register.filter
def rating(value: float | None) -> str:
    """Elo points with the two decimals the ladder stores (hundredths are exact)."""
    return NONE if value is None else f"{value:.2f}"


@register.filter
def hundredths(value: int | None) -> str:
    """A stored rating (hundredths) as points."""
    return rating(points(value))


@register.filter
def hundredths_95(sigma: int | None) -> str:
    """The ± of a 95 % interval (1.96 sigma) of a stored sigma, in whole points."""
    return NONE if sigma is None else f"{1.96 * sigma / 100:.0f}"


@register.filter
def signed(value: float | None) -> str:
    """A rating change: +12.34, minus 3.10 (a real minus sign), ±0.00."""
    if value is None:
        return NONE
    if value == 0:
        return "±0.00"
    return f"+{value:.2f}" if value > 0 else f"{MINUS}{-value:.2f}"


@register.filter
def hundredths_signed(value: int | None) -> str:
    """A stored rating change (hundredths) as signed points."""
    return signed(points(value))


@register.filter
def delta_class(value: float | None) -> str:
    if not value:
        return "delta-none"
    return "delta-up" if value > 0 else "delta-down"


@register.filter
def percent(value: float | None) -> str:
    return NONE if value is None else f"{value * 100:.0f} %"


@register.simple_tag
def rating_figure(r: Rating) -> SafeString:
    """Rating, ± of its 95 % interval, provisional mark (``rows.rating_figure``)."""
    return rows.rating_figure(r)


@register.simple_tag
def sparkline(values: Sequence[float], label: str = "rating trend") -> SafeString:
    """A small inline SVG of a rating series (``rows.sparkline``)."""
    return rows.sparkline(values, label)


@register.simple_tag
def signup_open() -> bool:
    """Whether this ladder takes self sign-ups (``LADDER_SIGNUP``)."""
    return bool(settings.LADDER_SIGNUP)


@register.simple_tag
def match_rows(matches: Iterable[Any], focus: Any = None) -> SafeString:
    """The rows of a table of matches, built in Python (``rows.match_rows``): a template
    loop over them cost more than the rest of the pages that list them."""
    return rows.match_rows(matches, focus or None)


@register.simple_tag
def board_rows(lines: Iterable[Any], ladder: Any) -> SafeString:
    """The rows of the leaderboard's table, built in Python (``rows.board_rows``)."""
    return rows.board_rows(lines, ladder)


@register.simple_tag
def opponent_rows(records: Iterable[Any]) -> SafeString:
    """A bot's record against each opponent, rows built in Python (``rows.opponent_rows``)."""
    return rows.opponent_rows(records)


@register.simple_tag
def standing_rows(lines: Iterable[Any], format: str) -> SafeString:
    """A tournament's standings, rows built in Python (``rows.standing_rows``); ``format``
    is the tournament's (a Swiss shows byes and Buchholz)."""
    return rows.standing_rows(lines, swiss=format == "swiss")


@register.simple_tag
def history_rows(history: Iterable[Any]) -> SafeString:
    """A bot's rating history, rows built in Python (``rows.history_rows``)."""
    return rows.history_rows(history)

"""Formatting for the site: ratings, signed changes, shares and server-drawn sparklines."""

from __future__ import annotations

from collections.abc import Sequence

from django import template
from django.conf import settings
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ladder.web.rows import Rating, points

register = template.Library()

SPARK_W, SPARK_H, SPARK_PAD = 96, 24, 2
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
    """Rating, ± of its 95 % interval, provisional mark; exact values in data attributes.

    A tag rather than an include: it is on every leaderboard line.
    """
    html = f'<span class="rating" data-rating="{r.value}"'
    if r.low is not None and r.high is not None:
        html += f' data-low="{r.low}" data-high="{r.high}"'
    html += f">{rating(r.value)}</span>"
    if r.half_width is not None:
        span = f"{rating(r.low)} {NONE} {rating(r.high)}"
        html += f' <span class="interval" title="95 % interval {span}">± {r.half_width:.0f}</span>'

    if r.provisional:
        html += (
            ' <abbr class="badge provisional" title="provisional: fewer than the games'
            ' a rating needs to settle">prov.</abbr>'
        )
    return mark_safe(html)  # numbers and fixed text only


@register.simple_tag
def sparkline(values: Sequence[float], label: str = "rating trend") -> SafeString:
    """A small inline SVG of a rating series (no script needed); a dot when too short."""
    if len(values) < 2:
        return mark_safe('<span class="spark-empty" aria-hidden="true">·</span>')
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    step = (SPARK_W - 2 * SPARK_PAD) / (len(values) - 1)
    path = " ".join(
        f"{SPARK_PAD + i * step:.1f},{SPARK_PAD + (hi - v) / span * (SPARK_H - 2 * SPARK_PAD):.1f}"
        for i, v in enumerate(values)
    )
    direction = "up" if values[-1] > values[0] else "down" if values[-1] < values[0] else "flat"
    title = escape(f"{label}: {values[0]:.2f} to {values[-1]:.2f} over {len(values)} games")
    return mark_safe(
        f'<svg class="spark spark-{direction}" viewBox="0 0 {SPARK_W} {SPARK_H}" '
        f'width="{SPARK_W}" height="{SPARK_H}" role="img" aria-label="{title}" '
        f'data-points="{len(values)}"><title>{title}</title>'
        f'<polyline points="{path}" fill="none" stroke-width="1.5"/></svg>'
    )


@register.simple_tag
def signup_open() -> bool:
    """Whether this ladder takes self sign-ups (``LADDER_SIGNUP``)."""
    return bool(settings.LADDER_SIGNUP)

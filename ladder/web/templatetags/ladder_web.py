"""Formatting for the site: ratings, signed changes, shares and server-drawn sparklines."""

from __future__ import annotations

from collections.abc import Sequence

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from ladder.web.rows import points

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
def sparkline(values: Sequence[float], label: str = "rating trend") -> str:
    """A small inline SVG of a rating series (no script needed); empty text when too short."""
    if len(values) < 2:
        return mark_safe('<span class="spark-empty" aria-hidden="true">·</span>')
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    step = (SPARK_W - 2 * SPARK_PAD) / (len(values) - 1)
    coords = [
        (SPARK_PAD + i * step, SPARK_PAD + (hi - v) / span * (SPARK_H - 2 * SPARK_PAD))
        for i, v in enumerate(values)
    ]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
    direction = "up" if values[-1] > values[0] else "down" if values[-1] < values[0] else "flat"
    title = f"{label}: {values[0]:.2f} to {values[-1]:.2f} over {len(values)} games"
    return format_html(
        '<svg class="spark spark-{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
        'aria-label="{}" data-points="{}"><title>{}</title>'
        '<polyline points="{}" fill="none" stroke-width="1.5"/></svg>',
        direction, SPARK_W, SPARK_H, SPARK_W, SPARK_H, title, len(values), title, path,
    )  # fmt: skip

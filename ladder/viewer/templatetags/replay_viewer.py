"""`{% replay_viewer match %}`: the viewer on any page (a match's, or a file drop without one)."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from ladder.matches.models import Match
from ladder.matches.selectors import match_reveal
from ladder.viewer.selectors import match_panel

register = template.Library()


@register.inclusion_tag("viewer/_viewer.html")
def replay_viewer(match: Match | None = None) -> dict[str, Any]:
    """The viewer for a finished match (its timeline), or, without one, for a dropped file.

    A match that has not finished gets a notice and no timeline URL: nothing of
    a game in progress is ever sent to the page.
    """
    if match is None:
        return {"upload_url": reverse("viewer-replay-timeline")}
    reveal = match_reveal(match)
    if reveal.replay is None:
        open_states = (Match.Status.QUEUED, Match.Status.RUNNING)
        # A finished match whose deal another match still plays waits for that one.
        twin = match.status == Match.Status.FINISHED and reveal.stored
        return {
            "pending": match.status,
            "will_finish": match.status in open_states,
            "deal_in_play": twin,
        }
    return {
        "timeline_url": reverse("viewer-match-timeline", args=[match.pk]),
        "panel": match_panel(match=match),
        "panel_id": f"ddv-match-{match.pk}",
    }

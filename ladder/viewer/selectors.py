"""What the viewer shows of a match beside its replay: who played, ranks, rating changes."""

from __future__ import annotations

from typing import Any

from ladder.matches.models import Match
from ladder.ratings.elo import SCALE


def _points(hundredths: int | None) -> float | None:
    return None if hundredths is None else hundredths / SCALE


def match_panel(*, match: Match) -> dict[str, Any]:
    """The end-of-game facts the replay does not hold (ratings live in the ladder).

    `match` comes from `ladder.matches.selectors.match_detail`: its result joined and
    its seats prefetched with their bot's name and version number as attributes, so
    the panel runs no query.
    """
    result = getattr(match, "result", None) if match.status == Match.Status.FINISHED else None
    return {
        "id": match.pk,
        "status": match.status,
        "ruleset": match.ruleset,
        "difficulty": match.difficulty,
        "rated": match.rated,
        "ladder": match.ladder,
        "finished_at": match.finished_at.isoformat() if match.finished_at else None,
        "reason": result.reason if result else "",
        "seats": [
            {
                "seat": s.seat,
                "bot": s.bot_name,  # type: ignore[attr-defined]
                "bot_id": s.bot_id,
                "version": s.version_number,  # type: ignore[attr-defined]
                "rank": s.rank,
                "ended": s.ended,
                "score": s.score,
                "faults": s.faults,
                "rating_before": _points(s.rating_before),
                "rating_after": _points(s.rating_after),
                "rating_delta": _points(s.rating_delta),
            }
            for s in match.seats.all()
        ],
    }

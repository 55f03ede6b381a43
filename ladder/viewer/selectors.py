"""What the viewer shows of a match beside its replay: who played, ranks, rating changes."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from ladder.common.elo import SCALE
from ladder.matches.models import Match


class PanelSeat(TypedDict):
    seat: int
    bot: str
    bot_id: int
    version: int
    rank: int | None
    ended: str
    score: int | None
    faults: int
    rating_before: float | None
    rating_after: float | None
    rating_delta: float | None


class MatchPanel(TypedDict):
    """The JSON of the viewer's panel beside the replay (`match_panel`)."""

    id: int
    status: str
    ruleset: str
    difficulty: str
    rated: bool
    ladder: str
    finished_at: str | None
    reason: str
    seats: list[PanelSeat]


class LiveSeat(TypedDict):
    seat: int
    bot: str


class LiveEvent(TypedDict):
    """One event of the live frame, in words."""

    i: int
    kind: str | None
    seat: int
    text: str


class LiveView(TypedDict):
    """The JSON a spectator polls (`live_view`): the frame only while it is shown."""

    match: int
    status: str
    seats: list[LiveSeat]
    live: bool
    why: NotRequired[str]  # why nothing is shown
    ply: NotRequired[int]
    view: NotRequired[dict[str, object]]  # an observation without its seat (services.public_view)
    events: NotRequired[list[LiveEvent]]
    updated_at: NotRequired[str]


def _points(hundredths: int | None) -> float | None:
    return None if hundredths is None else hundredths / SCALE


def match_panel(*, match: Match) -> MatchPanel:
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


def live_view(*, match: Match) -> LiveView:
    """What a spectator of ``match`` may see now (``match`` from ``match_detail``).

    While it runs: the latest published frame (a few decisions behind the table;
    public information only, see ``ladder.viewer.models``) with its events in words.
    Never for a match whose seed another open match deals from (a duplicate deal's
    other rotation, say): the cards this one reveals would be that game's hidden
    cards. Once it has finished: no frame, only the way to its replay.
    """
    from engine.narrate import describe_event
    from ladder.viewer.models import LiveFrame

    seats: list[LiveSeat] = [
        {"seat": s.seat, "bot": s.bot_name}  # type: ignore[attr-defined]
        for s in match.seats.all()
    ]
    out: LiveView = {"match": match.pk, "status": match.status, "seats": seats, "live": False}
    if match.status in (Match.Status.FINISHED, Match.Status.ERRORED, Match.Status.CANCELLED):
        out["why"] = f"the match is {match.status}"
        return out
    twin = (
        Match.objects.filter(
            seed=match.seed, status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
        )
        .exclude(pk=match.pk)
        .exists()
    )
    if twin:
        out["why"] = (
            "another match deals the same cave (a duplicate deal): nothing of this one is shown "
            "until they have all been played"
        )
        return out
    frame = LiveFrame.objects.filter(match_id=match.pk).first()
    if frame is None:
        out["live"] = match.status == Match.Status.RUNNING
        out["why"] = "waiting for the first decisions" if out["live"] else "not started yet"
        return out
    names = {s["seat"]: s["bot"] or f"seat {s['seat']}" for s in seats}

    def label(seat: object) -> str:
        return f"{names.get(seat, seat)} (seat {seat})" if isinstance(seat, int) else str(seat)

    out["live"] = True
    out["ply"] = frame.ply
    out["view"] = frame.view
    out["events"] = [
        {
            "i": i,
            "kind": e.get("kind"),
            "seat": e.get("seat", -1),
            "text": describe_event(e, label),
        }
        for i, e in frame.events
    ]
    out["updated_at"] = frame.updated_at.isoformat()
    return out

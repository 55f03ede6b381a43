"""A tournament's standings as counters: counted with every recorded or errored match.

Written inside the transaction that records the result (``match_record_result``)
or marks the match errored (``match_fail`` and the janitor), under the match's row
lock and only when its state changes, so a re-delivered result counts nothing: a
match is counted once or not at all, as the ratings and the opponent tallies are.
A Swiss bye is counted where it is created (``ladder.tournaments.services``).
``tournament_tallies_from_seats`` recomputes them from the seats (the migration that
introduced them, the benchmark data set and the tests' check).

Lock order, the same in every writer so two recordings that share a bot never
deadlock: the bots' rows by (tournament, bot), then the pair rows by (bot, opponent).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db.models import Case, F, IntegerField, Q, Value, When

from ladder.common.elo import pair_score
from ladder.matches.models import TournamentPairTally, TournamentTally


def _halves(mine: int, theirs: int) -> int:
    """Pairwise points in halves (integers, as the counters keep them)."""
    return int(2 * pair_score(mine, theirs))


def _by_pk(which: dict[int, int]) -> Case | Value:
    """An increment per row id as one SQL expression (rows missing from ``which`` add 0)."""
    whens = [When(pk=pk, then=Value(n)) for pk, n in which.items() if n]
    if not whens:
        return Value(0)
    return Case(*whens, default=Value(0), output_field=IntegerField())


def _bots_locked(tournament_id: int, bot_ids: Sequence[int]) -> dict[int, int]:
    """The bots' rows (made if missing; a concurrent insert is no error), locked in bot
    order: bot id -> row id."""
    TournamentTally.objects.bulk_create(
        [TournamentTally(tournament_id=tournament_id, bot_id=b) for b in sorted(set(bot_ids))],
        ignore_conflicts=True,
    )
    rows = (
        TournamentTally.objects.filter(tournament_id=tournament_id, bot_id__in=list(bot_ids))
        .select_for_update()
        .order_by("bot_id")
        .values_list("bot_id", "pk")
    )
    return dict(rows)


def tournament_tallies_add(
    *, tournament_id: int, bot_ids: Sequence[int], ranks: Sequence[int]
) -> None:
    """Count one recorded match of the tournament (call inside the recording transaction,
    once: when the match turns finished). Five statements for any number of seats."""
    rows = _bots_locked(tournament_id, bot_ids)
    seated = list(zip(bot_ids, ranks, strict=True))
    points = {
        bot: sum(_halves(mine, theirs) for j, (_, theirs) in enumerate(seated) if j != i)
        for i, (bot, mine) in enumerate(seated)
    }
    TournamentTally.objects.filter(pk__in=list(rows.values())).update(
        played=F("played") + 1,
        wins=F("wins") + _by_pk({rows[bot]: int(rank == 1) for bot, rank in seated}),
        half_points=F("half_points") + _by_pk({rows[bot]: n for bot, n in points.items()}),
    )
    pairs = sorted(
        (bot, other, _halves(mine, theirs))
        for i, (bot, mine) in enumerate(seated)
        for j, (other, theirs) in enumerate(seated)
        if i != j
    )
    TournamentPairTally.objects.bulk_create(
        [
            TournamentPairTally(tournament_id=tournament_id, bot_id=bot, opponent_id=other)
            for bot, other, _ in pairs
        ],
        ignore_conflicts=True,
    )
    which = Q()
    for bot, other, _ in pairs:
        which |= Q(bot_id=bot, opponent_id=other)
    ids = {
        (bot, other): pk
        for pk, bot, other in TournamentPairTally.objects.filter(which, tournament_id=tournament_id)
        .select_for_update()
        .order_by("bot_id", "opponent_id")
        .values_list("pk", "bot_id", "opponent_id")
    }
    TournamentPairTally.objects.filter(pk__in=list(ids.values())).update(
        meetings=F("meetings") + 1,
        half_points=F("half_points") + _by_pk({ids[bot, other]: n for bot, other, n in pairs}),
    )


def tournament_tallies_errored(*, seats: Iterable[tuple[int, int]]) -> None:
    """Count errored matches: ``seats`` are (tournament id, bot id), one per seat of each
    match (inside the transaction that marks them errored, once: when an open match
    turns errored). Several matches at once (the janitor's pass) are locked together
    in (tournament, bot) order, the order every writer takes, so a pass that errors
    many matches never deadlocks with a recording."""
    counts = Counter(seats)
    if not counts:
        return
    keys = sorted(counts)
    TournamentTally.objects.bulk_create(
        [TournamentTally(tournament_id=t, bot_id=b) for t, b in keys], ignore_conflicts=True
    )
    which = Q()
    for t, b in keys:
        which |= Q(tournament_id=t, bot_id=b)
    rows = {
        (t, b): pk
        for pk, t, b in TournamentTally.objects.filter(which)
        .select_for_update()
        .order_by("tournament_id", "bot_id")
        .values_list("pk", "tournament_id", "bot_id")
    }
    TournamentTally.objects.filter(pk__in=list(rows.values())).update(
        errored=F("errored") + _by_pk({rows[key]: n for key, n in counts.items()})
    )


def tournament_tallies_bye(*, tournament_id: int, bot_id: int) -> None:
    """Count a Swiss bye (inside the transaction that creates it)."""
    rows = _bots_locked(tournament_id, [bot_id])
    TournamentTally.objects.filter(pk__in=list(rows.values())).update(byes=F("byes") + 1)


@dataclass
class Tallies:
    """Counters recomputed from scratch: per (tournament, bot) and per (tournament, bot,
    opponent), as the fields of the two models."""

    bots: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)
    pairs: dict[tuple[int, int, int], dict[str, int]] = field(default_factory=dict)

    def bot(self, tournament_id: int, bot_id: int) -> dict[str, int]:
        return self.bots.setdefault(
            (tournament_id, bot_id),
            dict.fromkeys(("half_points", "played", "wins", "errored", "byes"), 0),
        )


def tournament_tallies_from_seats(
    seats: Iterable[tuple[int, int, bool, int, int | None]],
    byes: Iterable[tuple[int, int]] = (),
) -> Tallies:
    """The counters from scratch. ``seats``: (tournament id, match id, finished, bot id,
    rank) of the seats of its finished and errored matches (an errored match is
    ``finished=False``); ``byes``: (tournament id, bot id) of its byes."""
    by_match: dict[tuple[int, int, bool], list[tuple[int, int | None]]] = {}
    for tournament_id, match_id, finished, bot, rank in seats:
        by_match.setdefault((tournament_id, match_id, finished), []).append((bot, rank))
    out = Tallies()
    for (tournament_id, _, finished), seated in by_match.items():
        for i, (bot, mine) in enumerate(seated):
            line = out.bot(tournament_id, bot)
            if not finished:
                line["errored"] += 1
                continue
            line["played"] += 1
            line["wins"] += mine == 1
            for j, (other, theirs) in enumerate(seated):
                if i != j:
                    n = _halves(mine or 0, theirs or 0)
                    line["half_points"] += n
                    pair = out.pairs.setdefault(
                        (tournament_id, bot, other), {"meetings": 0, "half_points": 0}
                    )
                    pair["meetings"] += 1
                    pair["half_points"] += n
    for tournament_id, bot in byes:
        out.bot(tournament_id, bot)["byes"] += 1
    return out

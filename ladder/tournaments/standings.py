"""Tournament standings from match outcomes, as a pure function.

Points are pairwise, as in the rating model (``ladder.common.elo``): a seat
scores 1 against every seat it out-ranked, ½ against every tie and 0 against
the rest. For two seats that is the usual 1 / ½ / 0; a 4-seat winner scores 3.
A forfeited seat has its rank (last, by the rules), so forfeits need no special
case. An errored match (played by nobody: the engine or the workers failed past
their retries) scores nothing and is only counted in ``errored``. A Swiss bye
scores a win.

Tie-breaks, in order: points; head-to-head (pairwise points scored against the
other tied bots only); Buchholz (sum of the opponents' points, Swiss only);
rank-1 finishes. Bots still equal after that share the rank. The result depends
only on the outcomes, so final standings are reproducible from the matches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ladder.common.elo import pair_score


@dataclass(frozen=True)
class Outcome:
    """One tournament match: bot ids by seat and their ranks (None: errored, not scored)."""

    seats: Sequence[int]
    ranks: Sequence[int] | None


@dataclass
class Standing:
    bot: int
    rank: int = 0
    points: float = 0.0
    played: int = 0
    wins: int = 0  # rank-1 finishes
    errored: int = 0
    byes: int = 0
    head_to_head: float = 0.0
    buchholz: float = 0.0
    opponents: list[int] = field(default_factory=list)


def standings(
    participants: Iterable[int],
    outcomes: Iterable[Outcome],
    *,
    byes: Iterable[int] = (),
    swiss: bool = False,
) -> list[Standing]:
    """Standings, best first, with shared ranks for bots equal on every tie-break."""
    table = {bot: Standing(bot) for bot in participants}
    pair_points: defaultdict[tuple[int, int], float] = defaultdict(float)
    for bot in byes:
        table[bot].points += 1.0
        table[bot].byes += 1
    for outcome in outcomes:
        if outcome.ranks is None:
            for bot in outcome.seats:
                table[bot].errored += 1
            continue
        for i, bot in enumerate(outcome.seats):
            row = table[bot]
            row.played += 1
            row.wins += outcome.ranks[i] == 1
            for j, other in enumerate(outcome.seats):
                if i != j:
                    score = pair_score(outcome.ranks[i], outcome.ranks[j])
                    row.points += score
                    pair_points[(bot, other)] += score
                    row.opponents.append(other)
    if swiss:
        for row in table.values():
            row.buchholz = sum(table[o].points for o in row.opponents)
    # Head-to-head: the points scored against opponents on the same points, summed over
    # the pairs that met (not over every pair of a tied group: thousands of bots may tie).
    for (bot, other), score in pair_points.items():
        if bot != other and table[bot].points == table[other].points:
            table[bot].head_to_head += score
    return ranked(table.values())


def ranked(rows: Iterable[Standing]) -> list[Standing]:
    """``rows`` with their points and tie-breaks filled in, best first, ranks set (shared
    by rows equal on every tie-break). The standings' own order; the query that ranks
    the counters kept when results are recorded
    (``ladder.tournaments.selectors.tournament_standings_table``) numbers them the same
    way, and the tests hold the two equal."""

    def key(row: Standing) -> tuple[float, float, float, int]:
        return (-row.points, -row.head_to_head, -row.buchholz, -row.wins)

    ordered = sorted(rows, key=lambda r: (key(r), r.bot))
    for position, row in enumerate(ordered, start=1):
        previous = ordered[position - 2] if position > 1 else None
        row.rank = previous.rank if previous and key(previous) == key(row) else position
    return ordered

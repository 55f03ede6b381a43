"""Knockout brackets for 2-seat match-ups, as pure functions replayed from results.

A bracket is recomputed from the start every time it is read: ``result`` says
who won each match-up decided so far (None: not yet), and the function returns
every match-up known, the ones to play now, and, once the last is decided, the
placing. Replaying is deterministic, so a match-up's ``key`` (its round and the
two seeds) names the same match-up on every call and the deals recorded under it
are found again. No Django, no clock, no RNG.

- **Single elimination** (``single_elimination``): the usual seeded bracket (seed
  1 meets the last seed; byes to the top seeds when the entrants are not a power
  of two); the semi-finals' losers play for third place.
- **Double elimination** (``double_elimination``): a bot is out after its second
  lost match-up. Each round pairs the bots without a loss among themselves and
  the bots with one loss among themselves (best seed against worst, no rematch
  where the pool allows; an odd one out waits); when one bot without a loss and
  one with a loss remain they meet in the grand final, and if the one with a loss
  wins, a second final (the "reset") decides.

Placing: tiers best first; the bots of a tier were eliminated in the same round
and share the places it covers (e.g. the quarter-finals' losers share 5-8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Matchup:
    """One match-up of a bracket: ``a`` is the better seed."""

    round: int
    a: int
    b: int
    label: str

    @property
    def key(self) -> str:
        return f"r{self.round}:{self.a}-{self.b}"


Result = Callable[[Matchup], "int | None"]


@dataclass
class Bracket:
    """Every match-up known so far, by round; those to play now; the placing when done."""

    rounds: list[list[Matchup]] = field(default_factory=list)
    pending: list[Matchup] = field(default_factory=list)
    placing: list[list[int]] | None = None


def seed_positions(size: int) -> list[int]:
    """Seeds (0-based) in bracket slot order for a power-of-two ``size``: 1v8, 4v5, 2v7, 3v6."""
    slots = [0]
    while len(slots) < size:
        slots = [s for seed in slots for s in (seed, 2 * len(slots) - 1 - seed)]
    return slots


def _round_labels(alive: int) -> str:
    return {2: "final", 4: "semi-final", 8: "quarter-final"}.get(alive, f"last {alive}")


def single_elimination(
    seeds: Sequence[int], result: Result, *, third_place: bool = True
) -> Bracket:
    """The single-elimination bracket of ``seeds`` (best first) as far as ``result`` knows."""
    if len(seeds) < 2:
        raise ValueError("a bracket needs at least two entrants")
    rank = {bot: i for i, bot in enumerate(seeds)}
    size = 1 << (len(seeds) - 1).bit_length()
    alive: list[int | None] = [seeds[s] if s < len(seeds) else None for s in seed_positions(size)]
    bracket = Bracket()
    eliminated: list[list[int]] = []  # tiers, earliest first
    number = 0
    while len(alive) > 1:
        number += 1
        label = _round_labels(len(alive))
        games: list[Matchup | None] = []  # one per pair of slots; None: a bye
        for i in range(0, len(alive), 2):
            x, y = alive[i], alive[i + 1]
            if x is None or y is None:
                games.append(None)
                continue
            a, b = (x, y) if rank[x] < rank[y] else (y, x)
            games.append(Matchup(number, a, b, label))
        played = [g for g in games if g is not None]
        third: Matchup | None = None
        if len(alive) == 2 and third_place and eliminated and len(eliminated[-1]) == 2:
            x, y = sorted(eliminated.pop(), key=rank.__getitem__)
            third = Matchup(number, x, y, "third place")
        bracket.rounds.append(played + ([third] if third else []))
        undecided = [g for g in bracket.rounds[-1] if result(g) is None]
        if undecided:
            bracket.pending = undecided
            return bracket
        alive = [
            (alive[2 * i] if alive[2 * i + 1] is None else alive[2 * i + 1])
            if g is None
            else result(g)
            for i, g in enumerate(games)
        ]
        losers = [g.b if result(g) == g.a else g.a for g in played]
        if third is not None:
            won = result(third)
            assert won is not None
            eliminated.append([third.b if won == third.a else third.a])
            eliminated.append([won])
        eliminated.append(sorted(losers, key=rank.__getitem__))
    champion = alive[0]
    assert champion is not None
    bracket.placing = [[champion], *reversed(eliminated)]
    return bracket


def double_elimination(seeds: Sequence[int], result: Result) -> Bracket:
    """The double-elimination bracket of ``seeds`` (best first) as far as ``result`` knows."""
    if len(seeds) < 2:
        raise ValueError("a bracket needs at least two entrants")
    rank = {bot: i for i, bot in enumerate(seeds)}
    losses = {bot: 0 for bot in seeds}
    met: set[frozenset[int]] = set()
    bracket = Bracket()
    eliminated: list[list[int]] = []
    number = 0
    while True:
        alive = sorted((b for b in seeds if losses[b] < 2), key=rank.__getitem__)
        if len(alive) == 1:
            bracket.placing = [alive, *reversed(eliminated)]
            return bracket
        number += 1
        upper = [b for b in alive if losses[b] == 0]
        lower = [b for b in alive if losses[b] == 1]
        if len(upper) == 1 and len(lower) == 1:
            games = [Matchup(number, upper[0], lower[0], "grand final")]
        elif (
            not upper and len(lower) == 2 and len(alive) == 2 and number > 1 and _had_final(bracket)
        ):
            games = [Matchup(number, lower[0], lower[1], "grand final reset")]
        else:
            games = [Matchup(number, a, b, "upper") for a, b in _fold(upper, met)]
            games += [Matchup(number, a, b, "lower") for a, b in _fold(lower, met)]
        bracket.rounds.append(games)
        undecided = [g for g in games if result(g) is None]
        if undecided:
            bracket.pending = undecided
            return bracket
        out = []
        for g in games:
            won = result(g)
            loser = g.b if won == g.a else g.a
            losses[loser] += 1
            met.add(frozenset((g.a, g.b)))
            if losses[loser] == 2:
                out.append(loser)
        if out:
            eliminated.append(sorted(out, key=rank.__getitem__))


def _had_final(bracket: Bracket) -> bool:
    return any(g.label == "grand final" for r in bracket.rounds for g in r)


def _fold(pool: Sequence[int], met: set[frozenset[int]]) -> list[tuple[int, int]]:
    """Pair a pool best seed against worst, avoiding rematches where possible; an odd
    pool's best seed waits a round."""
    rest = list(pool)
    if len(rest) % 2:
        rest.pop(0)
    pairs = []
    while rest:
        top = rest.pop(0)
        fresh = [b for b in reversed(rest) if frozenset((top, b)) not in met]
        other = fresh[0] if fresh else rest[-1]
        rest.remove(other)
        pairs.append((top, other))
    return pairs


def groups_snake(seeds: Sequence[int], size: int) -> list[list[int]]:
    """Split ``seeds`` (best first) into ⌈n / size⌉ groups of near-equal size, snake order
    (1 2 3 3 2 1 ...), so every group gets one of the best and one of the worst."""
    if size < 2:
        raise ValueError("groups of at least two")
    count = -(-len(seeds) // size)
    groups: list[list[int]] = [[] for _ in range(count)]
    for i, bot in enumerate(seeds):
        lap, pos = divmod(i, count)
        groups[pos if lap % 2 == 0 else count - 1 - pos].append(bot)
    return groups

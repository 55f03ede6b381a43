"""Ladders and their ratings (docs/ratings.md): which ladders exist, how they rate, exports."""

from __future__ import annotations

import re

from ladder.settings.environment import Environment, split

env = Environment("ladders and ratings")


def ladders_from(name: str, raw: str) -> dict[str, dict[str, object]]:
    """``KEY=RULESET/DIFFICULTY/MIN-MAX[/SYSTEM][,...]`` -> {key: {ruleset, difficulty, seats,
    system}} (the rating system of the ladder's first season; default ``LADDER_RATING_SYSTEM``).

    Only the shape is read here; ``ladder.ladders`` checks the values.
    """
    out: dict[str, dict[str, object]] = {}
    for item in split(raw):
        m = re.fullmatch(r"([^=\s]+)=([^/\s]+)/([^/\s]+)/(\d)-(\d)(?:/([a-z-]+))?", item)
        if not m:
            raise RuntimeError(f"{name}: {item!r} is not KEY=RULESET/DIFFICULTY/MIN-MAX[/SYSTEM]")
        key, ruleset, difficulty, low, high, system = m.groups()
        out[key] = {"ruleset": ruleset, "difficulty": difficulty, "seats": (int(low), int(high))}
        if system:
            out[key]["system"] = system
    return out


# A ladder is a ruleset and a difficulty with the seat counts it plays; each has its
# own ratings (ladder/ladders.py). dd-2 (riders pay their share of a return) is the
# ladder's game; dd-1 stays available for anyone who asks for it.
_DEFAULT_LADDERS = "dd-2=dd-2/normal/2-4,dd-1=dd-1/normal/2-4"
LADDER_LADDERS = ladders_from(
    "LADDER_LADDERS",
    env.text(
        "LADDER_LADDERS",
        _DEFAULT_LADDERS,
        why="the ladders, KEY=RULESET/DIFFICULTY/MIN-MAX[/SYSTEM] comma-separated "
        "(ladder/ladders.py checks them)",
    ),
)
LADDER_DEFAULT_LADDER = env.text(
    "LADDER_DEFAULT_LADDER", "dd-2", why="the ladder a request that names none uses"
)
LADDER_ELO_K = env.number("LADDER_ELO_K", 32, unit="points", why="Elo's K factor")
LADDER_ELO_START = round(
    env.number(
        "LADDER_ELO_START", 1500, unit="points", why="a new bot's rating (kept in hundredths)"
    )
    * 100
)
LADDER_PROVISIONAL_GAMES = env.integer(
    "LADDER_PROVISIONAL_GAMES",
    10,
    unit="games",
    why="below this many games a rating is provisional, whatever its sigma",
)
# The system a new ladder's first season rates with (the winner of bench/ratings_bench.py;
# "elo" stays selectable per ladder), the k of the conservative rating mu - k*sigma the
# leaderboard ranks by, and the sigma above which a rating is provisional (unset: the
# default of ladder.common.elo).
LADDER_RATING_SYSTEM = env.text(
    "LADDER_RATING_SYSTEM",
    "plackett-luce",
    why="the rating system of a new ladder's first season: plackett-luce, bradley-terry or elo",
)
LADDER_RATING_K_SIGMA = env.number(
    "LADDER_RATING_K_SIGMA", 3, why="k of the conservative rating mu - k*sigma the board ranks by"
)
_provisional_sigma = env.optional_number(
    "LADDER_PROVISIONAL_SIGMA",
    unit="points",
    shown="135 (ladder.common.elo.DEFAULT_PROVISIONAL_SIGMA)",
    why="sigma above which a rating is provisional: 135 is a 95 % interval wider than +-265, "
    "chosen by bench/ratings_bench.py",
)
LADDER_PROVISIONAL_SIGMA = None if _provisional_sigma is None else round(_provisional_sigma * 100)
LADDER_SEASON_SHRINK = env.number(
    "LADDER_SEASON_SHRINK", 0.5, why="share of (rating - 1500) a new season keeps"
)
LADDER_EXPORT_MAX_MATCHES = env.integer(
    "LADDER_EXPORT_MAX_MATCHES", 10000, unit="matches", why="matches one REST game export holds"
)

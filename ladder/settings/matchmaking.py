"""The matchmaker and auto-suspend (docs/matchmaking.md)."""

from __future__ import annotations

from ladder.settings.environment import Environment

env = Environment("matchmaking and auto-suspend")

LADDER_MATCHMAKER_TARGET = env.integer(
    "LADDER_MATCHMAKER_TARGET",
    4,
    unit="matches",
    why="open (queued + running) matches the matchmaker keeps on each ladder (0: off)",
)
LADDER_MATCHMAKER_LADDERS = env.items(
    "LADDER_MATCHMAKER_LADDERS", shown="(the default ladder)", why="the ladders it fills"
)
LADDER_MATCHMAKER_INTERVAL_S = env.number(
    "LADDER_MATCHMAKER_INTERVAL_S", 30, unit="s", why="how often beat runs it"
)
LADDER_MATCHMAKER_SEATS = env.text(
    "LADDER_MATCHMAKER_SEATS",
    "2:2,3:1,4:1",
    why="seat mix, SEATS:WEIGHT comma list (seat counts a ladder does not play are dropped)",
)
LADDER_MATCHMAKER_MAX_CONCURRENT = env.integer(
    "LADDER_MATCHMAKER_MAX_CONCURRENT", 2, unit="matches", why="open matches one bot may be in"
)
LADDER_MATCHMAKER_RECENT_H = env.number(
    "LADDER_MATCHMAKER_RECENT_H", 24, unit="h", why="matches counted as a bot's recent games"
)
LADDER_MATCHMAKER_RATING_SCALE = env.number(
    "LADDER_MATCHMAKER_RATING_SCALE",
    200,
    unit="points",
    why="rating gap at which an opponent's weight is 1/e",
)
LADDER_MATCHMAKER_DUPLICATES = env.text(
    "LADDER_MATCHMAKER_DUPLICATES",
    "off",
    why="duplicate sets: off, on (every table that fits) or a share of tables in [0, 1]; a set "
    "of n seats is n matches and needs LADDER_MATCHMAKER_MAX_CONCURRENT >= n",
)
LADDER_SUSPEND_WINDOW = env.integer(
    "LADDER_SUSPEND_WINDOW",
    10,
    unit="matches",
    why="finished matches auto-suspend looks at (0: off)",
)
LADDER_SUSPEND_CONSECUTIVE = env.integer(
    "LADDER_SUSPEND_CONSECUTIVE", 3, why="forfeits in a row that suspend a bot"
)
LADDER_SUSPEND_FORFEITS = env.integer(
    "LADDER_SUSPEND_FORFEITS", 5, why="forfeits within the window that suspend"
)
LADDER_SUSPEND_FAULTS = env.integer(
    "LADDER_SUSPEND_FAULTS", 20, why="faults within the window that suspend"
)

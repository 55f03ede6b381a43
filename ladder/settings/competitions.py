"""Competitions and private tournaments (docs/competitions.md)."""

from __future__ import annotations

from ladder.settings.environment import Environment

env = Environment("competitions")

LADDER_TASK_COMPETITIONS_TICK = "workers.competitions_tick"
LADDER_COMPETITION_TICK_S = env.number(
    "LADDER_COMPETITION_TICK_S",
    10,
    unit="s",
    why="how often beat moves competitions' phases and advances their finals",
)
LADDER_COMPETITION_RESAMPLES = env.integer(
    "LADDER_COMPETITION_RESAMPLES", 400, why="bootstrap resamples of a final's order"
)
LADDER_COMPETITION_MAX_GAMES = env.integer(
    "LADDER_COMPETITION_MAX_GAMES", 20000, unit="games", why="the largest game cap a final may set"
)
LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY = env.integer(
    "LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY",
    5,
    unit="tournaments",
    why="private tournaments a user creates a day",
)
LADDER_PRIORITY_PRIVATE = env.integer(
    "LADDER_PRIORITY_PRIVATE",
    3,
    why="broker priority of private tournaments' matches: after public events, before the ladder's",
)

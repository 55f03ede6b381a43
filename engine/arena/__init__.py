"""The arena: many local games of an author's bot against the house bots, in one command.

    python -m engine.arena --bot mybot.py --vs random --vs heuristic --games 200

It needs only the SDK and the engine (`pip install ./sdk ./engine`): no ladder,
Django, Celery or database, which is why it lives in the engine and not in
`workers/` (the ladder's distribution). The author's bot is a Python file or
module with an `act` function (called in-process, with exactly the dicts the
SDK's server would hand it), or any gRPC bot at an address (`host:port`,
`unix:/path`); `python -m workers.arena` in a clone of the ladder adds hosted
bundles run in the ladder's own sandbox. Games run in parallel over the cores,
each in-process on the rules library, with the ladder's time control and fault
rules; the report gives rank-1 share, mean rank and loot points per opponent
line-up with 95% intervals, faults, timeouts, think-time percentiles, and saves
the replays of the slowest decisions and of faulted games. docs/writing-a-bot.md
describes it.
"""

from engine.arena.play import ArenaConfig, GameRow, run_arena
from engine.arena.report import LineupStats, summarise

__all__ = ["ArenaConfig", "GameRow", "LineupStats", "run_arena", "summarise"]

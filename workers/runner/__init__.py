"""The match runner: plays one match between gRPC bots through the gRPC engine.

Library for the ladder's workers (no Django here) and for `python -m workers.play`.

    from workers.runner import run_match, BotSpec, TimeControl, EngineUnavailable
    outcome = run_match("127.0.0.1:50051", ["127.0.0.1:50061", "127.0.0.1:50062"],
                        seed=7, difficulty="normal", out="replay.json.gz")
    outcome.ranks, outcome.faults

`EngineUnavailable` is retryable (play the match again); `EngineError` is not.
"""

from .match import (
    BotSpec,
    Fault,
    Match,
    MatchOutcome,
    TimeControl,
    run_match,
    verify_replay,
)
from .net import EngineError, EngineUnavailable, RunnerError
from .replay import ReplayFormatError

__all__ = [
    "BotSpec",
    "EngineError",
    "EngineUnavailable",
    "Fault",
    "Match",
    "MatchOutcome",
    "ReplayFormatError",
    "RunnerError",
    "TimeControl",
    "run_match",
    "verify_replay",
]

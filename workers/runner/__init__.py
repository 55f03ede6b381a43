"""The match runner: runs one match between gRPC bots through the gRPC engine.

Library for the ladder's workers (no Django here) and for `python -m workers.play`.

    from workers.runner import run_match, BotSpec, TimeControl, EngineUnavailable
    outcome = run_match("127.0.0.1:50051", ["127.0.0.1:50061", "127.0.0.1:50062"],
                        seed=7, difficulty="normal", out="replay.json.gz")
    outcome.ranks, outcome.faults

The engine may be several (`"a:50051,b:50051"`, or a DNS name of replicas):
a game whose engine dies is re-created on one of them and resumed.
`EngineUnavailable` is retryable (run the match again later); `EngineError`,
`MatchOverrun` (past the wall-clock limit) and `MatchAborted` are not;
`InfrastructureFault` (`WorkerCutOff`: this machine reached none of the bots; a
connected seat the ladder lost: nobody is charged) is.
"""

from .blame import InfrastructureFault, Referee, WorkerCutOff
from .engines import EngineAddressError, EnginePool
from .match import (
    BotSpec,
    Fault,
    MatchOutcome,
    MatchRun,
    TimeControl,
    run_match,
    verify_replay,
)
from .net import (
    EngineError,
    EngineUnavailable,
    MatchAborted,
    MatchOverrun,
    NoSeatPlayed,
    RunnerError,
)
from .replay import ReplayFormatError
from .transport import DialledTransport, SeatTransport, TransportError, TransportFactory

__all__ = [
    "BotSpec",
    "DialledTransport",
    "EngineAddressError",
    "EngineError",
    "EnginePool",
    "EngineUnavailable",
    "Fault",
    "InfrastructureFault",
    "MatchAborted",
    "MatchOutcome",
    "MatchOverrun",
    "MatchRun",
    "NoSeatPlayed",
    "Referee",
    "ReplayFormatError",
    "RunnerError",
    "SeatTransport",
    "TimeControl",
    "TransportError",
    "TransportFactory",
    "WorkerCutOff",
    "run_match",
    "verify_replay",
]

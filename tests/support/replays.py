"""Replays for the tests: played in-process on the engine's own session code, or for real.

`inprocess_replay` drives `engine.sessions` (the same code the engine service
runs behind gRPC) with the reference players, so a test can ask for faults
and forfeits at given plies without misbehaving processes; the document is
the runner's (`workers.runner.replay.build`, as the runner builds it). `play_real`
plays a match the way the ladder does: a real engine and real remote bots,
each its own process on loopback, driven by `workers.runner.run_match`.
`observation_at` rebuilds what a seat saw independently of the viewer: from
the seed (not the stored cave), through the rules library's public methods.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digdown import wire
from digdown.v1 import engine_pb2, game_pb2
from engine import sessions
from engine.players import PLAYERS
from engine.rules import Action, GameConfig, State, new_game
from tests.support.processes import start_bot, start_engine
from workers.runner import BotSpec, MatchOutcome, run_match
from workers.runner import replay as replay_io

TIME_CONTROL = {"decision_ms": 1000, "bank_ms": 30000, "max_reply_bytes": 65536}


def inprocess_replay(
    *,
    seed: int = 1,
    seats: int = 4,
    difficulty: str = "normal",
    players: Sequence[str] = ("heuristic",),
    names: Sequence[str] = (),
    faults: Mapping[int, str] | None = None,  # ply -> reason
    forfeits: Mapping[int, int] | None = None,  # ply -> seat
    think_ms: Mapping[int, int] | None = None,  # ply -> ms (default 3)
) -> dict[str, Any]:
    """A finished game as the runner's replay document (faults/forfeits at the given plies)."""
    faults, forfeits, think_ms = faults or {}, forfeits or {}, think_ms or {}
    store = sessions.SessionStore()
    config = game_pb2.GameConfig(ruleset="dd-1", seed=seed, num_seats=seats, difficulty=difficulty)
    labels = [game_pb2.SeatInfo(seat=i, bot=(list(names) + [""] * seats)[i]) for i in range(seats)]
    session, _ = store.create(config, labels)
    lineup = [
        PLAYERS[players[min(i, len(players) - 1)]](random.Random(seed * 8 + i))
        for i in range(seats)
    ]
    state = session.state
    fault_log = []
    while not state.is_over:
        ply = session.ply
        seat = state.acting_seat
        request = engine_pb2.StepRequest(
            game_id=session.game_id, seat=seat, ply=ply, think_time_ms=think_ms.get(ply, 3)
        )
        if ply in forfeits:
            request.seat = forfeits[ply]
            request.forfeit = f"dead: test forfeit at ply {ply}"
            fault_log.append((forfeits[ply], ply, "dead", request.forfeit, True))
        elif ply in faults:
            request.fault = faults[ply]
            fault_log.append((seat, ply, faults[ply].split(":")[0], faults[ply], False))
        else:
            action = lineup[seat].act(state.observation(seat), state.legal_actions())
            request.action.CopyFrom(wire.action_to_proto(action))
        sessions.step(session, request)
    return replay_io.build(
        session.replay(),
        time_control=TIME_CONTROL,
        faults=[
            {
                "seat": s,
                "ply": p,
                "kind": k,
                "reason": r,
                "think_time_ms": think_ms.get(p, 3),
                "forfeit": f,
            }
            for s, p, k, r, f in fault_log
        ],
    )


def gz(doc: Mapping[str, Any]) -> bytes:
    """A replay document as the runner writes its file."""
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), mtime=0)


def observation_at(doc: Mapping[str, Any], decision: int, seat: int) -> dict[str, Any]:
    """What `seat` saw right before decision `decision` of a replay, rebuilt from its seed."""
    return state_at(doc, decision).observation(seat)


def state_at(doc: Mapping[str, Any], decision: int) -> State:
    config = doc["config"]
    state = new_game(
        GameConfig(
            seed=int(config["seed"]),
            num_seats=config["num_seats"],
            difficulty=config["difficulty"],
            ruleset=config["ruleset"],
        )
    )
    assert state.record["cave"] == doc["cave"], "the replay's cave is not its seed's deal"
    for d in doc["decisions"][:decision]:
        if "forfeit" in d:
            state.forfeit(d["seat"], d["forfeit"])
        elif "fault" in d:
            state.apply_default(d["fault"])
        elif d.get("forced"):
            state.apply_forced()
        else:
            state.apply(Action.from_dict(d["action"]))
    return state


@dataclass
class PlayedMatch:
    """A match really played between bot processes: its replay file and the runner's outcome."""

    data: bytes
    doc: dict[str, Any]
    outcome: MatchOutcome
    names: list[str]
    seed: int
    difficulty: str


def play_real(
    tmp: Path, bots: Sequence[tuple[str, str, Sequence[str]]], *, seed: int, difficulty: str
) -> PlayedMatch:
    """Play (name, module or misbehaving script, its arguments) bots on a real engine.

    The replay is verified by that engine before it is written.
    """
    engine = start_engine(tmp, "viewer-engine")
    procs = []
    try:
        for i, (name, module, extra) in enumerate(bots):
            procs.append(start_bot(module, tmp, f"viewer-bot-{i}-{name}", *extra))
        out = tmp / f"replay-{seed}.json.gz"
        specs = [
            BotSpec(address=p.address, name=bot[0], version="1")
            for p, bot in zip(procs, bots, strict=True)
        ]
        outcome = run_match(
            engine.address, specs, seed=seed, difficulty=difficulty, out=out, verify=True
        )
    finally:
        for p in procs:
            p.stop()
        engine.stop()
    data = out.read_bytes()
    return PlayedMatch(
        data=data,
        doc=json.loads(gzip.decompress(data)),
        outcome=outcome,
        names=[bot[0] for bot in bots],
        seed=seed,
        difficulty=difficulty,
    )

"""Playing arena games: one game in-process on the rules library, many over the cores.

Each game keeps the engine service's bookkeeping (`ArenaGame`: forced decisions
played by the engine, think time and event spans per record entry, as
`engine.sessions.Session` does, without the gRPC service and its metrics), so a
saved replay is the document the ladder's runner writes and the viewer and
`workers.play verify` read. Worker processes are *spawned*, never
forked: gRPC channels and forks do not mix, and an author's module is loaded
fresh in each.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import random
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from digdown import wire
from engine.arena.seats import AuthorSeat, Clock, Decided, author_seat
from engine.players import PLAYERS
from engine.rules import GameConfig, State, new_game

RUNNER_VERSION = "arena/1"


@dataclass(frozen=True)
class ArenaConfig:
    """What to play: the author's bot against each opponent line-up, `games` games each."""

    bot: str
    lineups: tuple[tuple[str, ...], ...] = (("random",), ("heuristic",))
    games: int = 100
    seed: int = 0
    difficulty: str = "normal"
    ruleset: str = "dd-2"
    duplicate: bool = False  # every deal in every seat rotation
    deadline_s: float = 1.0
    bank_s: float = 30.0
    workers: int = 1
    keep: int = 5  # replays kept: the slowest decisions, and the first faulted games
    replay_dir: str = ""  # where this run's worker processes write candidate replays

    def jobs(self) -> list[Job]:
        """Every game: line-up, seed, and the seat of the author's bot (rotated)."""
        out: list[Job] = []
        for li, lineup in enumerate(self.lineups):
            n = len(lineup) + 1
            games = -(-self.games // n) * n if self.duplicate else self.games
            for g in range(games):
                seed = self.seed + (g // n if self.duplicate else g)
                out.append(Job(len(out), li, seed, g % n))
        return out


@dataclass(frozen=True)
class Job:
    index: int
    lineup: int
    seed: int
    seat: int  # the author's seat


@dataclass
class GameRow:
    """What one game tells about the author's bot."""

    index: int
    lineup: int
    seed: int
    seat: int
    num_seats: int
    rank: int
    loot_points: int
    ended: str
    faults: int  # every fault of the author's seat (the rules count them)
    timeouts: int
    fault_reasons: list[str] = field(default_factory=list)
    think_ms: list[float] = field(default_factory=list)
    slowest_ms: float = 0.0
    slowest_ply: int = -1
    replay: str = ""  # a saved candidate replay (see `keep`)


def lineup_of(job: Job, config: ArenaConfig, label: str) -> list[str]:
    """Seat labels: the line-up (author first, then the opponents) rotated `job.seat` seats."""
    base = [label, *config.lineups[job.lineup]]
    n = len(base)
    return [base[(s - job.seat) % n] for s in range(n)]


@dataclass
class ArenaGame:
    """One game and, per record entry, its think time and the span of events it caused."""

    game_id: str
    state: State
    seats: list[dict[str, Any]]
    think_ms: list[int] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def ply(self) -> int:
        return len(self.state.record["entries"])

    def play(self, fn: Any, *args: Any, think_ms: int = 0) -> None:
        start = len(self.state.log)
        fn(*args)
        self.think_ms.append(max(0, think_ms))
        self.spans.append((start, len(self.state.log) - start))

    def play_forced(self) -> None:
        """Rules section 6: a decision with one legal action is played by the engine."""
        while not self.state.is_over and len(self.state.legal_actions()) == 1:
            self.play(self.state.apply_forced)


def play_game(job: Job, config: ArenaConfig, seat_bot: AuthorSeat) -> tuple[GameRow, ArenaGame]:
    """One whole game; the author's bot at `job.seat`, house bots elsewhere."""
    labels = lineup_of(job, config, seat_bot.label)
    n = len(labels)
    state: State = new_game(
        GameConfig(seed=job.seed, num_seats=n, difficulty=config.difficulty, ruleset=config.ruleset)
    )
    game_id = f"arena-{job.lineup}-{job.index}"
    session = ArenaGame(
        game_id=game_id,
        state=state,
        seats=[{"seat": i, "bot": b, "version": ""} for i, b in enumerate(labels)],
    )
    house = {
        s: PLAYERS[b](random.Random(job.seed * 8 + s))
        for s, b in enumerate(labels)
        if s != job.seat
    }
    clock = Clock(config.deadline_s, config.bank_s)
    row = GameRow(job.index, job.lineup, job.seed, job.seat, n, 0, 0, "", 0, 0)
    seen = 0
    session.play_forced()
    while not state.is_over:
        seat = state.acting_seat
        legal = state.legal_actions()
        obs = state.observation(seat)
        if seat != job.seat:
            action = house[seat].act(obs, legal)
            session.play(state.apply, action)
        else:
            ply = session.ply
            decided: Decided = seat_bot.decide(
                game_id, seat, ply, obs, legal, state.log[seen:], clock
            )
            seen = len(state.log)
            ms = decided.think_s * 1000
            row.think_ms.append(ms)
            if ms > row.slowest_ms:
                row.slowest_ms, row.slowest_ply = ms, ply
            think = int(ms)
            if decided.kind == "action":
                session.play(state.apply, decided.action, think_ms=think)
            else:
                row.fault_reasons.append(decided.reason)
                row.timeouts += decided.fault_kind == "timeout"
                if decided.kind == "forfeit":
                    session.play(state.forfeit, seat, decided.reason, think_ms=think)
                else:
                    session.play(state.apply_default, decided.reason, think_ms=think)
        session.play_forced()
    seat_bot.end_game(game_id, job.seat)
    result = state.result
    assert result is not None  # the loop above ran until the game was over
    mine = result["seats"][job.seat]
    row.rank, row.loot_points = int(mine["rank"]), int(mine["loot_points"])
    row.ended, row.faults = str(mine["ended"]), int(mine["faults"])
    return row, session


def replay_document(session: ArenaGame, config: ArenaConfig, row: GameRow) -> dict[str, Any]:
    """The game as a `digdown-replay/1` document (docs/replay-format.md), arena extras included."""
    st = session.state
    rec = st.record
    decisions = []
    faults = []
    for ply, (entry, think, (first, count)) in enumerate(
        zip(rec["entries"], session.think_ms, session.spans, strict=True)
    ):
        d = dict(entry)
        if "action" not in d:
            d.pop("forced", None)
            why = d.get("fault") or d.get("forfeit") or ""
            faults.append(
                {
                    "seat": d["seat"],
                    "ply": ply,
                    "kind": _fault_kind(why),
                    "reason": why,
                    "think_time_ms": think,
                    "forfeit": "forfeit" in d,
                }
            )
        d.update(think_time_ms=think, first_event=first, num_events=count)
        decisions.append(d)
    seats = [dict(s) for s in session.seats]
    stats = []
    for s in seats:
        mine = s["seat"] == row.seat
        stats.append(
            {
                "seat": s["seat"],
                "decisions": len(row.think_ms) if mine else 0,
                "think_ms_total": int(sum(row.think_ms)) if mine else 0,
                "think_ms_max": int(row.slowest_ms) if mine else 0,
                "bank_left_ms": 0,
                "runner_faults": len(row.fault_reasons) if mine else 0,
                "out": False,
            }
        )
    return {
        "format": wire.REPLAY_FORMAT,
        "record_format": rec["format"],
        "ruleset": rec["ruleset"],
        "engine_version": rec["engine_version"],
        "runner_version": RUNNER_VERSION,
        "config": rec["config"],
        "seats": seats,
        "time_control": {
            "decision_ms": int(config.deadline_s * 1000),
            "bank_ms": int(config.bank_s * 1000),
            "max_reply_bytes": 64 * 1024,
        },
        "cave": rec["cave"],
        "sleeved": rec["sleeved"],
        "first_lead": rec["first_lead"],
        "decisions": decisions,
        "events": st.log,
        "result": st.result,
        "faults": faults,
        "match": {
            "match_id": f"arena-{row.index}",
            "game_id": session.game_id,
            "engine": "in-process",
            "started_at": datetime.now(UTC).isoformat(),
            "duration_s": 0.0,
            "seat_stats": stats,
        },
    }


def _fault_kind(reason: str) -> str:
    head = reason.split(":", 1)[0].split()[-1] if reason else ""
    known = {"timeout", "malformed", "illegal", "dead", "unreachable", "unavailable"}
    return head if head in known else "error"


def write_replay(doc: dict[str, Any], path: Path) -> None:
    """gzip'd JSON, written to a temporary name and renamed (never a partial file)."""
    tmp = path.with_suffix(".part")
    tmp.write_bytes(gzip.compress(json.dumps(doc, separators=(",", ":")).encode()))
    os.replace(tmp, path)


# --- worker processes ----------------------------------------------------------------------

_worker: dict[str, Any] = {}


def _init(config: ArenaConfig) -> None:
    _worker["config"] = config
    _worker["seat"] = author_seat(config.bot)
    _worker["slowest"] = []  # this process's kept slowest times, ascending


def _keep_replay(row: GameRow) -> bool:
    """Whether this game may be among the run's kept replays (this process's view)."""
    config: ArenaConfig = _worker["config"]
    if config.keep <= 0 or not config.replay_dir:
        return False
    if row.fault_reasons:
        return True
    slowest: list[float] = _worker["slowest"]
    if len(slowest) < config.keep or row.slowest_ms > slowest[0]:
        slowest.append(row.slowest_ms)
        slowest.sort()
        del slowest[: -config.keep]
        return True
    return False


def _play(job: Job) -> GameRow:
    config: ArenaConfig = _worker["config"]
    row, session = play_game(job, config, _worker["seat"])
    if _keep_replay(row):
        path = Path(config.replay_dir) / f"game-{job.index:06d}.json.gz"
        write_replay(replay_document(session, config, row), path)
        row.replay = str(path)
    return row


def run_arena(config: ArenaConfig) -> Iterator[GameRow]:
    """Every game's row, as games finish (in parallel when `config.workers` > 1).

    The author's bot is loaded here first, so a bot that cannot load or answer
    is one clear error before any worker starts.
    """
    jobs = config.jobs()
    _init(config)
    if config.workers <= 1:
        for job in jobs:
            yield _play(job)
        return
    chunk = max(1, min(8, len(jobs) // (config.workers * 8)))
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        config.workers, mp_context=ctx, initializer=_init, initargs=(config,)
    ) as pool:
        yield from pool.map(_play, jobs, chunksize=chunk)

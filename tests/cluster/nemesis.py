"""A nemesis for the cluster: random faults, seeded and logged, while matches are played.

For a fixed time it picks a fault at random (``random.Random(seed)``: the same seed
gives the same schedule), applies it, waits its length, heals it, pauses, and picks
the next: short and long cuts between any two machines, one-way cuts, kills of a
worker, an engine, a remote or a connected bot or a Ladder gRPC server (one of the
two that hold the connected bots' streams), a clean restart of one (an upgrade),
SIGSTOP of one, Redis and PostgreSQL restarts, packet loss on every link. Every fault is logged
(kind, target, start and end, wall clock) to a JSON-lines file: the judge of the run
(``judge``) reads it to tell a bot's real failure (its process was killed) from the
infrastructure's, and a failed run can be replayed from its seed.

Only a killed bot is a bot's fault, with one documented exception: a remote bot's
machine cut off from a worker that reaches the ladder (a connected seat's relay, the
referee's witness) is the bot's machine unreachable, and its timeouts are charged
(docs/workers.md, "Whose fault: a seat that stops answering"). Every other fault is
the infrastructure's: a match whose replay charges a seat (a fault or a forfeit) and
that neither explains was rated by the infrastructure (the house bots never fail by
themselves).
"""

from __future__ import annotations

import json
import random
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests.cluster.stack import BOT_PORTS, CONNECTED, GRPC_SERVERS, NODES, Stack

# The machines a cut can be between (data: PostgreSQL and Redis).
MACHINES = NODES
# kind -> weight: how often it is picked.
KINDS = {
    "cut_short": 5,
    "cut_long": 2,
    "cut_one_way": 3,
    "kill_worker": 2,
    "kill_engine": 2,
    "kill_bot": 2,
    "kill_connected_bot": 2,
    "kill_grpc": 1,
    "restart_grpc": 1,
    "stop_grpc": 2,
    "restart_redis": 1,
    "restart_postgres": 1,
    "packet_loss": 1,
}
CUTS = ("cut_short", "cut_long", "cut_one_way")
# A kill of a bot explains a charge of that bot's seat in a match this close to it (s):
# the match may have started before (it was playing) or been retried after (unreachable).
KILL_SLACK_S = 30.0


@dataclass
class Injected:
    """One fault as the log keeps it."""

    n: int
    kind: str
    target: str
    started: float  # wall clock (time.time())
    ended: float = 0.0
    note: str = ""


class Nemesis:
    def __init__(self, stack: Stack, seed: int, log_path: Path) -> None:
        self.stack = stack
        self.seed = seed
        self.rng = random.Random(seed)
        self.log_path = log_path
        self.injected: list[Injected] = []

    # --- the schedule -------------------------------------------------------------------

    def run(self, duration_s: float, between: Callable[[], None] = lambda: None) -> None:
        """Inject faults for ``duration_s``; ``between`` runs after each (e.g. more matches)."""
        until = time.monotonic() + duration_s
        kinds, weights = zip(*KINDS.items(), strict=True)
        while time.monotonic() < until:
            kind = self.rng.choices(kinds, weights)[0]
            record = Injected(len(self.injected) + 1, kind, "", time.time())
            try:
                getattr(self, f"_{kind}")(record)
            except Exception as exc:  # a fault that could not be applied is logged, not fatal
                record.note = f"{record.note} failed: {type(exc).__name__}: {exc}"[:500]
                self._heal_network()
            record.ended = time.time()
            self.injected.append(record)
            with self.log_path.open("a") as fh:
                fh.write(json.dumps(asdict(record)) + "\n")
            print(f"nemesis {record.n}: {kind} {record.target} "
                  f"{record.ended - record.started:.1f} s {record.note}", flush=True)  # fmt: skip
            between()
            time.sleep(self.rng.uniform(1.0, 5.0))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.injected:
            out[r.kind] = out.get(r.kind, 0) + 1
        return out

    # --- the faults -----------------------------------------------------------------------

    def _pair(self) -> tuple[str, str]:
        a, b = self.rng.sample(MACHINES, 2)
        return a, b

    def _cut(self, record: Injected, low: float, high: float) -> None:
        a, b = self._pair()
        record.target = f"{a}<->{b}"
        self.stack.net.cut(a, b)
        time.sleep(self.rng.uniform(low, high))
        self.stack.net.heal(a, b)

    def _cut_short(self, record: Injected) -> None:
        self._cut(record, 1.0, 5.0)

    def _cut_long(self, record: Injected) -> None:
        self._cut(record, 10.0, 25.0)

    def _cut_one_way(self, record: Injected) -> None:
        a, b = self._pair()
        record.target = f"{a}->{b}"
        self.stack.net.cut_one_way(a, b)
        time.sleep(self.rng.uniform(2.0, 12.0))
        self.stack.net.heal_one_way(a, b)

    def _kill_worker(self, record: Injected) -> None:
        name = self.rng.choice(("w1", "w2"))
        record.target = name
        self.stack.services[name].kill(signal.SIGKILL)
        time.sleep(self.rng.uniform(0.5, 3.0))
        self.stack.restart_worker(name)

    def _kill_engine(self, record: Injected) -> None:
        name = self.rng.choice(("eng1", "eng2"))
        record.target = name
        self.stack.services[name].kill(signal.SIGKILL)
        time.sleep(self.rng.uniform(2.0, 8.0))
        self.stack.services[name].start()
        self.stack.wait_port(name)

    def _kill_bot(self, record: Injected) -> None:
        i = self.rng.randrange(len(BOT_PORTS))
        record.target = f"bot{i}"
        record.note = f"bot house{i}"
        self.stack.services[f"bot{i}"].kill(signal.SIGKILL)
        time.sleep(self.rng.uniform(1.0, 6.0))
        self.stack.services[f"bot{i}"].start()
        self.stack.wait_port(f"bot{i}")

    def _kill_connected_bot(self, record: Injected) -> None:
        i = self.rng.randrange(CONNECTED)
        name = f"cbot{i}"
        record.target = name
        record.note = f"bot linked{i}"
        seen = self.stack.connections(name)
        self.stack.services[name].kill(signal.SIGKILL)
        time.sleep(self.rng.uniform(1.0, 6.0))
        self.stack.services[name].start()
        self.stack.wait_connected(name, since=seen)

    def _grpc(self, record: Injected) -> str:
        name = self.rng.choice(sorted(GRPC_SERVERS))
        record.target = name
        return name

    def _kill_grpc(self, record: Injected) -> None:
        name = self._grpc(record)
        self.stack.services[name].kill(signal.SIGKILL)
        time.sleep(self.rng.uniform(1.0, 5.0))
        self.stack.services[name].start()
        self.stack.wait_port(name)

    def _restart_grpc(self, record: Injected) -> None:
        """A clean stop and start (an upgrade): its streams are closed with SERVER_STOPPING."""
        name = self._grpc(record)
        self.stack.services[name].stop()
        self.stack.services[name].start()
        self.stack.wait_port(name)

    def _stop_grpc(self, record: Injected) -> None:
        name = self._grpc(record)
        self.stack.services[name].kill(signal.SIGSTOP)
        time.sleep(self.rng.uniform(2.0, 10.0))
        self.stack.services[name].kill(signal.SIGCONT)

    def _restart_redis(self, record: Injected) -> None:
        record.target = "redis"
        self.stack.services["redis"].kill(signal.SIGKILL)
        time.sleep(self.rng.uniform(0.5, 3.0))
        self.stack.start_redis(persist=False)

    def _restart_postgres(self, record: Injected) -> None:
        record.target = "postgres"
        self.stack.services["postgres"].kill(signal.SIGKILL)
        time.sleep(self.rng.uniform(1.0, 5.0))
        self.stack.start_postgres()

    def _packet_loss(self, record: Injected) -> None:
        record.target = "every link"
        self.stack.net.lossy(True)
        time.sleep(self.rng.uniform(5.0, 15.0))
        self.stack.net.lossy(False)

    def _heal_network(self) -> None:
        self.stack.net.heal_all()


def _ends(target: str) -> set[str]:
    """The machines of a cut's target ("a<->b", "a->b")."""
    return set(target.replace("<->", " ").replace("->", " ").split())


def judge(charges: list[dict[str, Any]], injected: list[Injected]) -> list[dict[str, Any]]:
    """The finished matches that charged a seat with nothing of the bot's to explain it:
    rated by the infrastructure. ``charges`` (``drive charges``): per match, its window
    and its charged seats (bot name, faults, forfeit reason, the replay's fault kinds)."""
    kills = [r for r in injected if r.kind in ("kill_bot", "kill_connected_bot")]
    # Cuts between a worker and the remote bots' machine (either way).
    cut_off = [
        r for r in injected
        if r.kind in CUTS and _ends(r.target) & {"w1", "w2"} and "bots" in _ends(r.target)
    ]  # fmt: skip

    def during(r: Injected, match: dict[str, Any]) -> bool:
        return (
            r.started - KILL_SLACK_S <= match["finished_at"]
            and r.ended + KILL_SLACK_S >= match["started_at"]
        )

    wrong = []
    for match in charges:
        for seat in match["seats"]:
            explained = any(r.note == f"bot {seat['bot']}" and during(r, match) for r in kills)
            # The documented rule: a witness (a connected seat's relay) answered, the remote
            # bot's machine did not: its timeouts are its own.
            explained = explained or (
                match.get("connected_seat", False)
                and seat.get("kind") == "remote"
                and set(seat["kinds"]) <= {"timeout", "unavailable"}
                and any(during(r, match) for r in cut_off)
            )
            if not explained:
                wrong.append({"match": match["id"], **seat})
    return wrong

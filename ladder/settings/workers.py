"""The workers (Celery; docs/workers.md says why each value is what it is).

The ladder enqueues by task name (ladder/matches/queue.py); the workers' app
(workers/celery_app.py) reads this same module, so producer and consumer cannot
disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ladder.settings.core import VAR_DIR
from ladder.settings.environment import Environment
from ladder.settings.sandbox import LADDER_SANDBOX_START_S

env = Environment("workers")

LADDER_TASK_PLAY_MATCH = "workers.play_match"
LADDER_TASK_JANITOR = "workers.janitor"
LADDER_TASK_SMOKE_VERSION = "workers.smoke_version"
LADDER_TASK_MATCHMAKE = "workers.matchmake"
ENGINE_ADDRESS = env.text(
    "ENGINE_ADDRESS",
    "",
    shown="(each worker process starts its own)",
    why="the engine(s) matches are played on: host:port, a comma list, or a DNS name of replicas",
)
LADDER_MATCH_QUEUE = env.text("LADDER_MATCH_QUEUE", "matches", why="queue of the match task")
# Broker message priorities of play-match messages. Redis (kombu) keeps one list per
# step 0, 3, 6, 9 and a worker takes from 0 first: tournament and version-comparison
# matches (Match.priority > 0) are sent at 0, ladder matches at 6, so a free worker
# plays the events' matches first. The embedded broker is FIFO and ignores them.
LADDER_PRIORITY_EVENTS = 0
LADDER_PRIORITY_LADDER = 6
LADDER_MATCH_DECISION_S = env.number(
    "LADDER_MATCH_DECISION_S", 1.0, unit="s", why="deadline of one decision"
)
LADDER_MATCH_BANK_S = env.number(
    "LADDER_MATCH_BANK_S", 30, unit="s", why="a seat's time bank for decisions over the deadline"
)
LADDER_MATCH_MAX_DECISIONS = env.integer(
    "LADDER_MATCH_MAX_DECISIONS", 1000, unit="decisions", why="decisions a match is budgeted"
)
# What a hosted seat is charged: its CPU time (at least its wall time / the factor) or
# wall time; remote and connected seats are always charged wall time (docs/sandbox.md).
LADDER_MATCH_HOSTED_CLOCK = env.choice(
    "LADDER_MATCH_HOSTED_CLOCK", "cpu", ("cpu", "wall"), why="what a hosted seat is charged"
)
LADDER_MATCH_CPU_WALL_FACTOR = env.number(
    "LADDER_MATCH_CPU_WALL_FACTOR",
    3,
    why="a hosted seat charged CPU is charged at least its wall time divided by this",
)
_WALL_PER_DECISION_S = LADDER_MATCH_DECISION_S * (
    LADDER_MATCH_CPU_WALL_FACTOR if LADDER_MATCH_HOSTED_CLOCK == "cpu" else 1
)
LADDER_MATCH_WALL_S = env.number(
    "LADDER_MATCH_WALL_S",
    LADDER_MATCH_MAX_DECISIONS * _WALL_PER_DECISION_S + 4 * LADDER_MATCH_BANK_S + 60,
    unit="s",
    shown="decisions x deadline (x the factor when hosted seats are charged CPU) + 4 banks + 60",
    why="wall-clock limit of one match in the runner; the task's time limits are above it",
)
LADDER_ENGINE_RESUME_S = env.number(
    "LADDER_ENGINE_RESUME_S", 30, unit="s", why="a game whose engine died waits this long for one"
)
LADDER_MATCH_STREAMS = env.flag(
    "LADDER_MATCH_STREAMS",
    True,
    why="one stream per seat and per game; 0 plays every match by unary calls (docs/protocol.md)",
)
# Above the runner's own limit by what may still happen after its last check: one
# decision with a whole bank, an engine resume, and recording.
LADDER_MATCH_SOFT_LIMIT_S = round(
    LADDER_MATCH_WALL_S
    + (LADDER_MATCH_DECISION_S + LADDER_MATCH_BANK_S)
    + LADDER_ENGINE_RESUME_S
    + 60
)
LADDER_MATCH_HARD_LIMIT_S = LADDER_MATCH_SOFT_LIMIT_S + 30
LADDER_SMOKE_START_ATTEMPTS = max(
    1,
    env.integer(
        "LADDER_SMOKE_START_ATTEMPTS",
        3,
        why="smoke attempts a start timeout gets before it may count against the version (a "
        "slow machine is not the bot's fault; attempt k has k times the start limit)",
    ),
)
# A smoke match is one short easy game: the last attempt's sandbox start, at most a whole
# bank, slack.
LADDER_SMOKE_SOFT_LIMIT_S = round(
    LADDER_SANDBOX_START_S * LADDER_SMOKE_START_ATTEMPTS + LADDER_MATCH_BANK_S + 120
)
LADDER_WORKER_ALIVE_FILE = env.text(
    "LADDER_WORKER_ALIVE_FILE",
    "",
    why="a file the worker's main process touches at each broker ping that answers; a "
    "container healthcheck reads its age without starting an interpreter",
).strip()
LADDER_MATCH_LEASE_S = env.number(
    "LADDER_MATCH_LEASE_S", 60, unit="s", why="a claim's lease, renewed every quarter of it"
)
LADDER_MATCH_MAX_ATTEMPTS = env.integer(
    "LADDER_MATCH_MAX_ATTEMPTS", 3, why="claims of one match before it is errored"
)
LADDER_MATCH_RETRY_BACKOFF_S = env.number(
    "LADDER_MATCH_RETRY_BACKOFF_S",
    10,
    unit="s",
    why="first retry delay of a released match, doubled each attempt, jittered",
)
# Known-good peers (host:port) a worker connects to before charging a bot whose link
# failed: when neither the bot nor these answer, the worker is the one cut off.
LADDER_BLAME_CONTROLS = env.items(
    "LADDER_BLAME_CONTROLS",
    why="known-good host:port peers a worker tries before charging a bot whose link failed",
)
LADDER_WORKER_OWN_FAULT_COOLDOWN_S = env.number(
    "LADDER_WORKER_OWN_FAULT_COOLDOWN_S",
    20,
    unit="s",
    why="a worker that released a match for an outage of its own (cut off from the bots, no "
    "engine) claims nothing this long, so released matches land on a worker that can play them",
)
LADDER_JANITOR_INTERVAL_S = env.number(
    "LADDER_JANITOR_INTERVAL_S", 60, unit="s", why="how often beat runs the janitor"
)
LADDER_QUEUED_GRACE_S = env.number(
    "LADDER_QUEUED_GRACE_S",
    600,
    unit="s",
    why="a queued match whose message is older is sent again (above the longest retry delay)",
)
LADDER_BROKER_DIR = Path(
    env.text(
        "LADDER_BROKER_DIR",
        str(VAR_DIR / "broker"),
        shown="var/broker",
        why="the embedded broker's files (no broker server needed)",
    )
)


def celery_broker(
    environ: Mapping[str, str], broker_dir: Path, hard_limit_s: float
) -> tuple[str, str | None, dict[str, Any]]:
    """(CELERY_BROKER_URL, CELERY_BROKER_TRANSPORT, CELERY_BROKER_TRANSPORT_OPTIONS).

    CELERY_BROKER_URL, else REDIS_URL, else the embedded broker: files under
    ``broker_dir`` (``ladder/common/broker.py``), created here so a fresh
    checkout needs nothing. A function so tests configure their own broker
    the same way the environment does.
    """
    url = environ.get("CELERY_BROKER_URL") or environ.get("REDIS_URL") or ""
    if url:
        return url, None, {
            # A message unacked for this long is delivered again: above the hard limit, so a
            # match that is still being played is never handed to a second worker.
            "visibility_timeout": 2 * hard_limit_s,
            # A Redis that is cut off (no RST, packets dropped) is noticed within seconds:
            # a command waits at most socket_timeout; kombu pings and drops a BRPOP
            # connection whose reply is overdue by health_check_interval (the worker logs
            # "connection to broker lost" and reconnects); TCP keepalive for the rest.
            "socket_timeout": 5,
            "socket_connect_timeout": 3,
            "health_check_interval": 2,
            "socket_keepalive": True,
        }  # fmt: skip
    for folder in ("queue", "control"):
        (broker_dir / folder).mkdir(parents=True, exist_ok=True)
    return "filesystem://localhost//", "ladder.common.broker:Transport", {
        "data_folder_in": str(broker_dir / "queue"),
        "data_folder_out": str(broker_dir / "queue"),
        "control_folder": str(broker_dir / "control"),
        # A listdir per poll: cheap, and a free worker waits at most this long for work.
        "polling_interval": 0.05,
    }  # fmt: skip

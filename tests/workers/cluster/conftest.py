"""Real ``celery worker`` processes on the test database, a real engine and real bots.

Each test gets its own broker: the embedded one (files in the test's temp
directory) or its own ``redis-server`` on a unix socket in the test's temp
directory (so a test can kill and restart it without touching anyone else's
Redis). The test process configures its own Celery producer the same way
(``ladder.settings.celery_broker``), so ``match_create`` enqueues exactly as in
production. Workers run with short leases and a fast janitor so recovery
drills stay bounded; every process is stopped through its own handle.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from tests.support.broker import use_broker
from tests.support.database import database_url
from tests.support.processes import ROOT, Proc, start_bot, start_engine
from tests.support.redis import RedisServer
from tests.support.workers import Worker, start_worker

LINE = re.compile(r"match \d+ (?:finished|errored|released|skipped|aborted)\b.*")
# Short on purpose (the drills wait for leases to expire); generous enough for a loaded machine.
WORKER_SETTINGS = {
    "LADDER_MATCH_LEASE_S": "4",
    "LADDER_JANITOR_INTERVAL_S": "1",
    "LADDER_QUEUED_GRACE_S": "5",
    "LADDER_MATCH_RETRY_BACKOFF_S": "1",
    "LADDER_ENGINE_RESUME_S": "10",
    "LADDER_MATCH_MAX_ATTEMPTS": "3",
    # The drills count the matches they make; the matchmaker's test switches it on.
    "LADDER_MATCHMAKER_TARGET": "0",
}


@dataclass
class Cluster:
    """The broker, engine, bots and workers of one test, and what it needs to drive them."""

    tmp: Path
    broker_env: dict[str, str]
    engine: Proc
    bots: dict[str, int]  # bot name -> pk (remote bots, registered)
    redis: RedisServer | None = None
    workers: list[Worker] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "ladder.settings",
            "DATABASE_URL": database_url(),
            "LADDER_MEDIA_ROOT": str(django_settings.MEDIA_ROOT),
            "LADDER_DEV_MODE": "1",
            "ENGINE_ADDRESS": self.engine.address,
            "CELERY_BROKER_URL": "",
            "REDIS_URL": "",
            **WORKER_SETTINGS,
            **self.broker_env,
            **extra,
        }

    def start_worker(self, concurrency: int = 1, *, beat: bool = False, **env: str) -> Worker:
        """Another ``celery worker`` on this cluster's broker and the test database."""
        name = f"w{len(self.workers) + 1}"
        worker = start_worker(self.env(**env), self.tmp, name, concurrency=concurrency, beat=beat)
        self.workers.append(worker)
        return worker

    def logs(self) -> str:
        return "\n".join(w.log() for w in self.workers)

    def match_lines(self) -> list[str]:
        """The one log line per match delivery (``workers.match`` reports)."""
        return re.findall(
            r"match \d+ (?:finished|errored|released|skipped|aborted)\b.*", self.logs()
        )

    def stop(self) -> None:
        for worker in self.workers:  # all at once: each waits for its running task
            if worker.proc.poll() is None:
                worker.proc.send_signal(signal.SIGTERM)
        for worker in self.workers:
            worker.stop()


@pytest.fixture(scope="session")
def celery_procdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("celery-procs")


@pytest.fixture(scope="session")
def cluster_engine(celery_procdir: Path) -> Iterator[Proc]:
    p = start_engine(celery_procdir, "engine")
    yield p
    p.stop()


@pytest.fixture(scope="session")
def cluster_bots(celery_procdir: Path) -> Iterator[dict[str, Proc]]:
    """Remote house bots (random) and a slow one that makes matches last long enough to kill."""
    bots = {
        f"rand{i}": start_bot("examples.random_bot", celery_procdir, f"rand{i}", "--seed", str(i))
        for i in range(4)
    }
    bots["slow"] = start_bot("slow_bot.py", celery_procdir, "slow", "--sleep", "0.005")
    yield bots
    for b in bots.values():
        b.stop()


@pytest.fixture(params=["redis", pytest.param("embedded", marks=pytest.mark.vendor_neutral)])
def broker_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_cluster(
    transactional_db: Any,
    settings: Any,
    tmp_path: Path,
    cluster_engine: Proc,
    cluster_bots: dict[str, Proc],
) -> Iterator[Callable[[str], Cluster]]:
    """A cluster on the given broker ("redis" or "embedded"); workers are started by the test."""
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create

    made: list[Cluster] = []
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.LADDER_DEV_MODE = True

    def make(kind: str) -> Cluster:
        redis = None
        if kind == "redis":
            redis = RedisServer(tmp_path)
            redis.start()
            env = {"CELERY_BROKER_URL": redis.url}
        else:
            env = {"LADDER_BROKER_DIR": str(tmp_path / "broker")}
        use_broker(settings, env, tmp_path)
        owner = User.objects.create_user(username="owner", password="pw-12345678")
        bots = {
            name: bot_create(owner=owner, name=name, kind="remote", endpoint=proc.address).pk
            for name, proc in cluster_bots.items()
        }
        cluster = Cluster(tmp_path, env, cluster_engine, bots, redis)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.stop()
        if cluster.redis is not None:
            cluster.redis.kill()


def assert_each_finished_once(match_ids: list[int], n_bots: int) -> None:
    """Every match finished with one result, one set of rating changes, one stored replay."""
    from ladder.bots.models import Bot
    from ladder.matches.models import Match, MatchResult, MatchSeat
    from ladder.ratings.models import BotRating

    matches = {m.pk: m for m in Match.objects.filter(pk__in=match_ids)}
    bad = {pk: (m.status, m.error) for pk, m in matches.items() if m.status != "finished"}
    assert not bad, bad
    assert MatchResult.objects.filter(match_id__in=match_ids).count() == len(match_ids)
    for match in matches.values():
        assert match.replay.storage.exists(match.replay.name), match.replay.name
        assert match.replay_size == match.replay.size > 0
    seats = MatchSeat.objects.filter(match_id__in=match_ids)
    assert not seats.filter(rating_after__isnull=True).exists()
    entries = BotRating.objects.filter(ladder=django_settings.LADDER_DEFAULT_LADDER)
    games = dict(entries.values_list("bot_id", "games"))
    assert set(games) == set(Bot.objects.values_list("pk", flat=True))
    for bot_id, count in games.items():
        assert seats.filter(bot_id=bot_id).count() == count, "a rating change counted twice"
    total = sum(entries.values_list("rating", flat=True))
    assert total == n_bots * django_settings.LADDER_ELO_START, "ratings sum not conserved"
    call_command("rerate", "--check")  # exits non-zero (SystemExit) on any mismatch

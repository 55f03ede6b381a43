"""50 match results recorded concurrently by several OS processes: no lost update.

Every process records all 50 results in its own shuffled order, so each result
is also delivered several times at once (exactly-once under retries). Afterwards:
50 results, every rating chain intact, the sum conserved, and the final ratings
equal to a serial replay in recording order computed here with the pure Elo.
Runs on whichever database the suite uses (SQLite file or PostgreSQL).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from ladder.common import elo
from ladder.matches.creation import match_create
from ladder.matches.models import Match, MatchResult, MatchSeat
from ladder.ratings.recompute import ratings_recompute
from tests.ladder.conftest import make_result, standings
from tests.support.database import database_url

ROOT = Path(__file__).resolve().parents[3]
N_MATCHES = 50
N_BOTS = 8
N_PROCS = 4
READY_TIMEOUT_S = 120.0


@pytest.mark.sqlite_too  # row locks on PostgreSQL, the database's write lock on SQLite
@pytest.mark.django_db(transaction=True)
def test_concurrent_results_from_processes(make_user: Any, make_bot: Any, tmp_path: Path) -> None:
    owner = make_user("owner")
    bots = [make_bot(owner, f"conc-{i}") for i in range(N_BOTS)]
    rng = random.Random(20260501)
    jobs = []
    for _ in range(N_MATCHES):
        seated = rng.sample(bots, rng.randint(2, 4))
        match = match_create(bot_ids=[b.pk for b in seated])
        ranks = [rng.randint(1, len(seated)) for _ in seated]
        jobs.append({"match_id": match.pk, "result": make_result(ranks)})
    jobs_file = tmp_path / "jobs.json"
    jobs_file.write_text(json.dumps(jobs))
    go = tmp_path / "go"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DATABASE_URL": database_url(),
        "LADDER_MEDIA_ROOT": settings.MEDIA_ROOT,
        "PYTHONPATH": str(ROOT),
    }
    ready = [tmp_path / f"ready-{seed}" for seed in range(N_PROCS)]
    worker = [sys.executable, str(ROOT / "tests/ladder/matches/record_worker.py"), str(jobs_file)]
    procs = [
        subprocess.Popen(
            [*worker, str(seed), str(go), str(ready[seed])],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in range(N_PROCS)
    ]
    summaries = []
    try:
        # Start barrier: every worker is set up and connected before any records, so
        # the recordings really contend (a fixed sleep only hoped for that).
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not all(r.exists() for r in ready):
            failed = [p for p in procs if p.poll() is not None]
            assert not failed, f"worker exited early:\n{failed[0].communicate()[1][-3000:]}"
            assert time.monotonic() < deadline, "workers did not get ready in time"
            time.sleep(0.02)
        go.touch()
        for p in procs:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0, f"worker failed:\n{err[-3000:]}"
            summaries.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()

    # Exactly once: 50 recordings in total, every other delivery a no-op.
    assert sum(s["recorded"] for s in summaries) == N_MATCHES
    assert sum(s["noop"] for s in summaries) == N_MATCHES * (N_PROCS - 1)
    assert MatchResult.objects.count() == N_MATCHES
    assert set(Match.objects.values_list("status", flat=True)) == {Match.Status.FINISHED}

    # Serial replay in recording order with the pure Elo, independent of the services.
    ratings = {b.pk: elo.DEFAULT_START for b in bots}
    games = dict.fromkeys(ratings, 0)
    for res in MatchResult.objects.order_by("id"):
        seats = list(MatchSeat.objects.filter(match_id=res.match_id).order_by("seat"))
        before = [ratings[s.bot_id] for s in seats]
        deltas = elo.rate(before, [s.rank for s in seats], 32)
        for s, rb, d in zip(seats, before, deltas, strict=True):
            # No lost update: every seat saw the rating the previous result left.
            assert (s.rating_before, s.rating_after) == (rb, rb + d), f"match {res.match_id}"
            ratings[s.bot_id] = rb + d
            games[s.bot_id] += 1
    stored = {pk: (rating, played) for pk, rating, played, _ in standings()}
    assert stored == {pk: (ratings[pk], games[pk]) for pk in ratings}
    assert sum(r for r, _ in stored.values()) == N_BOTS * elo.DEFAULT_START
    assert ratings_recompute().mismatch_count == 0

"""The games as a data set: REST and ``manage.py export_games``, JSON Lines and Parquet,
only revealed deals, the filters, the limits, and the loader's arrays.

The matches are real games played by the engine's own players and recorded
through the recording service with their real replay documents.
"""

from __future__ import annotations

import gzip
import io
import json
import random
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from engine.players import HeuristicPlayer, RandomPlayer
from engine.rules import GameConfig, new_game
from engine.simulate import play_out
from engine.training import dataset
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.recording import match_record_result
from ladder.ratings.services import season_start

pytestmark = pytest.mark.django_db


def real_game(seed: int, seats: int) -> dict[str, Any]:
    """A replay document of a real dd-1 game: a heuristic seat 0, random seats after it."""
    state = new_game(GameConfig(seed=seed, num_seats=seats, ruleset="dd-1"))
    bots = [HeuristicPlayer(random.Random(seed))] + [
        RandomPlayer(random.Random(seed + s)) for s in range(1, seats)
    ]
    play_out(state, lambda seat, obs, legal: bots[seat].act(obs, legal))
    assert state.result is not None
    doc = dataset.replay_of(state)
    doc["seats"] = [
        {"seat": s, "bot": f"seat{s}", "address": "<hosted bot socket>"} for s in range(seats)
    ]
    return doc


@pytest.fixture
def games(make_user: Any, make_bot: Any) -> dict[str, Any]:
    """Six finished matches (2 and 3 seats) and one whose deal is still being played."""
    alice = make_user("alice")
    bots = [make_bot(alice, name) for name in ("heur", "rand-a", "rand-b")]
    finished = []
    for i in range(6):
        seats = 2 + i % 2
        doc = real_game(100 + i, seats)
        match = match_create(
            bot_ids=[b.pk for b in bots[:seats]], requested_by=alice, seed=doc["config"]["seed"]
        )
        match_record_result(
            match_id=match.pk,
            result=doc["result"],
            replay_bytes=gzip.compress(json.dumps(doc).encode(), mtime=0),
        )
        finished.append((match.pk, doc))
    # The same deal as the last finished match, still queued: that match stays hidden.
    hidden_seed = finished[-1][1]["config"]["seed"]
    match_create(bot_ids=[b.pk for b in bots[:3]], requested_by=alice, seed=hidden_seed)
    return {"alice": alice, "bots": bots, "finished": finished, "hidden": finished[-1][0]}


def lines_of(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def body_of(response: Any) -> bytes:
    return b"".join(response.streaming_content)


def test_jsonl_export_over_rest_holds_every_revealed_match_and_no_hidden_one(
    games: dict[str, Any],
) -> None:
    api = APIClient()
    assert api.get("/api/v1/exports/games/").status_code in (401, 403)
    api.force_authenticate(games["alice"])
    resp = api.get("/api/v1/exports/games/?data_format=jsonl")
    assert resp.status_code == 200 and resp["X-Export-Limit"] == "10000"
    lines = lines_of(body_of(resp))
    ids = [line["match"] for line in lines]
    expected = [mid for mid, _ in games["finished"] if mid != games["hidden"]]
    assert ids == expected
    stored = dict(games["finished"])
    for line in lines:
        assert line["replay"] == stored[line["match"]]
        assert [s["bot"] for s in line["seats"]][:2] == ["heur", "rand-a"]
        assert all(s["rating_before"] is not None for s in line["seats"])
    # Filters: one bot, a rating range nobody's start is in, limits and bad input.
    only = lines_of(body_of(api.get("/api/v1/exports/games/?bot=rand-b")))
    assert [line["match"] for line in only] == [m for m in expected if len(stored[m]["seats"]) == 3]
    assert lines_of(body_of(api.get("/api/v1/exports/games/?min_rating=9000"))) == []
    assert len(lines_of(body_of(api.get("/api/v1/exports/games/?limit=2")))) == 2
    assert api.get("/api/v1/exports/games/?data_format=xml").status_code == 400
    assert api.get("/api/v1/exports/games/?season=4").status_code == 400
    assert api.get("/api/v1/exports/games/?bot=nobody").status_code == 404


def test_seasons_and_dates_narrow_the_export(games: dict[str, Any], settings: Any) -> None:
    season_start(ladder="dd-1")
    api = APIClient()
    api.force_authenticate(games["alice"])
    first = lines_of(body_of(api.get("/api/v1/exports/games/?season=1")))
    assert len(first) == 5
    assert lines_of(body_of(api.get("/api/v1/exports/games/?season=2"))) == []
    ids = [mid for mid, _ in games["finished"]]
    cut = Match.objects.get(pk=ids[3]).finished_at
    since = [
        x["match"]
        for x in lines_of(body_of(api.get("/api/v1/exports/games/", {"since": cut.isoformat()})))
    ]
    until = [
        x["match"]
        for x in lines_of(body_of(api.get("/api/v1/exports/games/", {"until": cut.isoformat()})))
    ]
    assert ids[3] in since and ids[0] not in since
    assert ids[0] in until and ids[3] not in until
    assert sorted(since + until) == ids[:5]


def test_parquet_export_is_one_row_per_decision_and_loads_like_jsonl(
    games: dict[str, Any], tmp_path: Any
) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    api = APIClient()
    api.force_authenticate(games["alice"])
    body = body_of(api.get("/api/v1/exports/games/?data_format=parquet"))
    table = pq.read_table(io.BytesIO(body))
    revealed = [doc for mid, doc in games["finished"] if mid != games["hidden"]]
    assert table.num_rows == sum(len(list(dataset.decisions(doc))) for doc in revealed)
    assert set(table.column_names) >= {"match", "seat", "observation", "legal", "action", "rank"}
    (tmp_path / "g.parquet").write_bytes(body)
    call_command("export_games", "--out", str(tmp_path / "g.jsonl"))
    from_parquet = dataset.load(tmp_path / "g.parquet", ruleset="dd-1", seats=2)
    from_jsonl = dataset.load(tmp_path / "g.jsonl", ruleset="dd-1", seats=2)
    assert from_parquet.observations.shape == from_jsonl.observations.shape
    assert from_parquet.observations.shape[0] > 0
    assert np.array_equal(from_parquet.actions, from_jsonl.actions)
    assert np.array_equal(from_parquet.masks, from_jsonl.masks)
    # Every chosen action is legal, and the arrays line up.
    rows = np.arange(len(from_jsonl.actions))
    assert (from_jsonl.masks[rows, from_jsonl.actions] == 1).all()
    heur = dataset.load(tmp_path / "g.jsonl", ruleset="dd-1", seats=2, bots=["heur"])
    assert set(heur.bots) == {"heur"} and 0 < len(heur.actions) < len(from_jsonl.actions)


def test_the_command_writes_jsonl_and_parquet(games: dict[str, Any], tmp_path: Any) -> None:
    call_command("export_games", "--out", str(tmp_path / "all.jsonl"), "--bot", "rand-b")
    lines = list(dataset.read_jsonl(tmp_path / "all.jsonl"))
    assert lines and all(any(s["bot"] == "rand-b" for s in line["seats"]) for line in lines)
    assert games["hidden"] not in {line["match"] for line in lines}
    pytest.importorskip("pyarrow")
    call_command("export_games", "--out", str(tmp_path / "all.parquet"), "--format", "parquet")
    assert (tmp_path / "all.parquet").stat().st_size > 0


def test_exports_are_throttled_per_user(games: dict[str, Any], settings: Any) -> None:
    rf = dict(settings.REST_FRAMEWORK)
    rf["DEFAULT_THROTTLE_RATES"] = {**rf["DEFAULT_THROTTLE_RATES"], "exports": "2/hour"}
    settings.REST_FRAMEWORK = rf
    api = APIClient()
    api.force_authenticate(games["alice"])
    codes = [api.get("/api/v1/exports/games/?limit=1").status_code for _ in range(3)]
    assert codes == [200, 200, 429]

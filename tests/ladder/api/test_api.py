"""REST API: permissions, tokens, leaderboard, matches, replay download, schema, errors."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import itertools
import zipfile
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.core.cache import cache
from rest_framework.test import APIClient

from ladder.bots.models import Bot, BotVersion
from ladder.matches.creation import match_create
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db


def authed(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def world(make_user: Any, make_bot: Any, token_for: Any) -> dict[str, Any]:
    alice, bob = make_user("alice"), make_user("bob")
    staff = make_user("mod", staff=True)
    a1, a2, b1 = make_bot(alice, "alpha-1"), make_bot(alice, "alpha-2"), make_bot(bob, "bravo")
    return {
        "alice": alice,
        "bob": bob,
        "staff": staff,
        "bots": (a1, a2, b1),
        "a": authed(token_for(alice)),
        "b": authed(token_for(bob)),
        "s": authed(token_for(staff)),
    }


def test_errors_are_json(api: APIClient, world: dict[str, Any]) -> None:
    r = api.get("/api/v1/bots/999999/")
    assert r.status_code == 404
    assert r.json() == {"error": "not_found", "detail": "no such bot"}
    r = api.get("/api/v1/no/such/page/")  # other paths get the site's HTML 404 page
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    r = world["a"].post("/api/v1/bots/", {"name": "x", "kind": "alien"}, format="json")
    assert r.status_code == 400
    body = r.json()
    assert body["error"] == "invalid" and "kind" in body["fields"] and body["detail"]


def test_no_token_cannot_write(api: APIClient, world: dict[str, Any]) -> None:
    r = api.post("/api/v1/bots/", {"name": "anon-bot", "kind": "hosted"}, format="json")
    assert r.status_code in (401, 403)
    assert r.json()["error"] == "not_authenticated"
    assert not Bot.objects.filter(name="anon-bot").exists()


def test_another_users_bot(world: dict[str, Any]) -> None:
    a1 = world["bots"][0]
    r = world["b"].patch(f"/api/v1/bots/{a1.pk}/", {"description": "mine now"}, format="json")
    assert r.status_code == 403 and r.json()["error"] == "permission_denied"
    r = world["b"].delete(f"/api/v1/bots/{a1.pk}/")
    assert r.status_code == 403
    upload = io.BytesIO(b"x = 1\n")
    upload.name = "bot.py"
    r = world["b"].post(f"/api/v1/bots/{a1.pk}/versions/", {"file": upload}, format="multipart")
    assert r.status_code == 403
    assert BotVersion.objects.filter(bot=a1).count() == 1
    r = world["a"].patch(f"/api/v1/bots/{a1.pk}/", {"description": "ok"}, format="json")
    assert r.status_code == 200 and r.json()["description"] == "ok"


def test_revoked_token(world: dict[str, Any], token_for: Any) -> None:
    secret = token_for(world["alice"])
    client = authed(secret)
    assert client.get("/api/v1/tokens/").status_code == 200
    tid = client.get("/api/v1/tokens/").json()["results"][0]["id"]
    assert client.delete(f"/api/v1/tokens/{tid}/").status_code == 204
    r = client.get("/api/v1/tokens/")
    assert r.status_code == 401
    assert r.json() == {"error": "authentication_failed", "detail": "invalid or revoked token"}
    r = authed("ddl_not-a-real-token").get("/api/v1/bots/")
    assert r.status_code == 401


def test_token_lifecycle_shown_once_and_hashed(world: dict[str, Any]) -> None:
    basic = APIClient()
    basic.credentials(HTTP_AUTHORIZATION="Basic " + base64.b64encode(b"bob:pw-12345678").decode())
    r = basic.post("/api/v1/tokens/", {"name": "laptop"}, format="json")
    assert r.status_code == 201
    secret = r.json()["token"]
    from ladder.accounts.models import ApiToken

    row = ApiToken.objects.get(pk=r.json()["id"])
    assert row.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(ApiToken.objects.values_list())
    listed = authed(secret).get("/api/v1/tokens/").json()["results"]
    assert {t["name"] for t in listed} >= {"laptop", "test"}
    assert all("token" not in t for t in listed)
    # Another user's token cannot be revoked.
    assert world["a"].delete(f"/api/v1/tokens/{row.pk}/").status_code == 404


def test_staff_moderates(world: dict[str, Any]) -> None:
    b1 = world["bots"][2]
    r = world["a"].post(f"/api/v1/bots/{b1.pk}/suspend/", {"reason": "x"}, format="json")
    assert r.status_code == 403
    r = world["s"].post(f"/api/v1/bots/{b1.pk}/suspend/", {"reason": "timeouts"}, format="json")
    assert r.status_code == 200 and r.json()["is_active"] is False
    assert r.json()["suspended_reason"] == "timeouts"
    board = APIClient().get("/api/v1/leaderboard/").json()
    assert "bravo" not in [row["name"] for row in board["results"]]
    assert world["s"].post(f"/api/v1/bots/{b1.pk}/unsuspend/").json()["is_active"] is True
    a1, a2, _ = world["bots"]
    m = world["a"].post("/api/v1/matches/", {"bots": [a1.pk, a2.pk]}, format="json").json()
    assert world["a"].post(f"/api/v1/matches/{m['id']}/cancel/").status_code == 403
    r = world["s"].post(f"/api/v1/matches/{m['id']}/cancel/", {"reason": "maint"}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"


def test_upload_via_api_reports_errors(world: dict[str, Any]) -> None:
    a1 = world["bots"][0]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../evil.py", "x=1")
    buf.seek(0)
    buf.name = "bot.zip"
    r = world["a"].post(f"/api/v1/bots/{a1.pk}/versions/", {"file": buf}, format="multipart")
    assert r.status_code == 400
    body = r.json()
    assert body["error"] == "upload_rejected"
    assert any("unsafe path" in e for e in body["errors"])
    assert any("missing entry point" in e for e in body["errors"])
    good = io.BytesIO(b"def act(o):\n    return 0\n")
    good.name = "bot.py"
    r = world["a"].post(f"/api/v1/bots/{a1.pk}/versions/", {"file": good}, format="multipart")
    assert r.status_code == 201 and r.json()["number"] == 2
    versions = APIClient().get(f"/api/v1/bots/{a1.pk}/versions/").json()["results"]
    assert [v["number"] for v in versions] == [2, 1]
    assert "validation_log" not in versions[0]


def test_remote_bot_endpoint_ssrf_via_api(world: dict[str, Any]) -> None:
    r = world["a"].post(
        "/api/v1/bots/",
        {"name": "remote-x", "kind": "remote", "endpoint": "169.254.169.254:80"},
        format="json",
    )
    assert r.status_code == 400 and r.json()["error"] == "endpoint_rejected"
    assert not Bot.objects.filter(name="remote-x").exists()
    bot = world["a"].post("/api/v1/bots/", {"name": "remote-x", "kind": "remote"}, format="json")
    assert bot.status_code == 201
    r = world["a"].put(
        f"/api/v1/bots/{bot.json()['id']}/endpoint/", {"endpoint": "127.0.0.1:50051"}, format="json"
    )
    assert r.status_code == 400 and "loopback" in r.json()["detail"]


def test_leaderboard_matches_and_detail(
    world: dict[str, Any], django_assert_max_num_queries: Any
) -> None:
    a1, a2, b1 = world["bots"]
    alice = world["alice"]
    for ranks in ([1, 2, 3], [1, 3, 2], [2, 1, 3]):
        record(match_create(bot_ids=[a1.pk, a2.pk, b1.pk], requested_by=alice), ranks)
    queued = match_create(bot_ids=[a2.pk, b1.pk], requested_by=alice)
    client = APIClient()
    with django_assert_max_num_queries(4):
        board = client.get("/api/v1/leaderboard/?page_size=2").json()
    assert board["count"] == 3 and len(board["results"]) == 2 and board["next"]
    top = board["results"][0]
    assert top["name"] == "alpha-1" and top["position"] == 1 and top["games"] == 3
    assert top["provisional"] is True
    lo, hi = top["interval95"]
    assert lo < top["rating"] < hi
    page2 = client.get("/api/v1/leaderboard/?page_size=2&page=2").json()["results"]
    assert page2[0]["position"] == 3
    only_bob = client.get("/api/v1/leaderboard/?owner=bob").json()["results"]
    assert [r["name"] for r in only_bob] == ["bravo"]
    assert client.get("/api/v1/leaderboard/?provisional=false").json()["count"] == 0
    assert sum(r["rating"] for r in client.get("/api/v1/leaderboard/").json()["results"]) == 4500

    with django_assert_max_num_queries(6):
        finished = client.get(f"/api/v1/matches/?bot={b1.pk}&status=finished").json()
    assert len(finished["results"]) == 3 and finished["next"] is None
    assert "count" not in finished  # keyset pages: no COUNT(*) per page
    assert client.get("/api/v1/matches/?status=queued").json()["results"][0]["id"] == queued.pk
    assert client.get("/api/v1/matches/?status=bogus").status_code == 400

    detail = client.get(f"/api/v1/matches/{finished['results'][-1]['id']}/").json()
    assert detail["status"] == "finished" and detail["result"]["ranks"] == [1, 2, 3]
    seats = detail["seats"]
    assert [s["bot_name"] for s in seats] == ["alpha-1", "alpha-2", "bravo"]
    assert seats[0]["rating_before"] == 1500.0 and seats[0]["rating_delta"] > 0
    assert abs(sum(s["rating_delta"] for s in seats)) < 1e-9

    bot = client.get(f"/api/v1/bots/{a1.pk}/").json()
    assert bot["ladder"] == "dd-1"
    assert [(r["ladder"], r["rating"], r["games"]) for r in bot["ratings"]] == [
        ("dd-1", bot["rating"], 3)
    ]
    history = client.get(f"/api/v1/bots/{a1.pk}/rating-history/").json()
    assert len(history) == 3
    assert [h["rating_after"] for h in history][-1] == bot["rating"]
    assert all(x["rating_after"] == y["rating_before"] for x, y in itertools.pairwise(history))
    assert [h["recorded"] for h in history] == sorted(h["recorded"] for h in history)


def test_replay_download(world: dict[str, Any]) -> None:
    a1, a2, _ = world["bots"]
    match = match_create(bot_ids=[a1.pk, a2.pk], requested_by=world["alice"])
    client = APIClient()
    assert client.get(f"/api/v1/matches/{match.pk}/replay/").status_code == 404
    record(match, [1, 2])
    r = client.get(f"/api/v1/matches/{match.pk}/replay/")
    assert r.status_code == 200
    data = b"".join(r.streaming_content)
    assert gzip.decompress(data).startswith(b"{")
    assert r["Content-Type"] == "application/gzip"
    assert r["Content-Disposition"].startswith("attachment;")
    assert f'filename="digdown-match-{match.pk}.json.gz"' in r["Content-Disposition"]
    assert r["X-Content-Type-Options"] == "nosniff"
    assert r["ETag"] == f'"{hashlib.sha256(data).hexdigest()}"'
    assert int(r["Content-Length"]) == len(data)
    again = client.get(f"/api/v1/matches/{match.pk}/replay/", HTTP_IF_NONE_MATCH=r["ETag"])
    assert again.status_code == 304


def test_schema_and_offline_swagger(api: APIClient) -> None:
    schema = api.get("/api/schema/?format=json").json()
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/matches/{match_id}/replay/" in schema["paths"]
    html = api.get("/api/docs/").content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower() and "unpkg" not in html.lower()
    assert "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")


def test_throttling(api: APIClient, settings: Any, world: dict[str, Any]) -> None:
    cache.clear()
    rf = dict(settings.REST_FRAMEWORK)
    rf["DEFAULT_THROTTLE_RATES"] = {"anon": "3/min", "user": "5/min"}
    settings.REST_FRAMEWORK = rf
    codes = [api.get("/api/v1/leaderboard/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    r = api.get("/api/v1/leaderboard/")
    assert r.json()["error"] == "throttled" and r.json()["retry_after"] >= 1
    codes = [world["b"].get("/api/v1/bots/").status_code for _ in range(6)]
    assert codes == [200] * 5 + [429]
    cache.clear()


def test_huge_upload_refused_before_parsing(world: dict[str, Any]) -> None:
    a1 = world["bots"][0]
    big = io.BytesIO(b"#" * (2 * 1024 * 1024))
    big.name = "bot.py"
    r = world["a"].post(f"/api/v1/bots/{a1.pk}/versions/", {"file": big}, format="multipart")
    assert r.status_code == 413 and r.json()["error"] == "too_large"
    assert BotVersion.objects.filter(bot=a1).count() == 1


def test_schema_generates_without_warnings(tmp_path: Any) -> None:
    from django.core.management import call_command

    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/v1/leaderboard/" in out.read_text()


def test_match_filter_by_tournament(world: dict[str, Any]) -> None:
    from ladder.tournaments.models import Tournament

    a1, a2, b1 = world["bots"]
    cup = Tournament.objects.create(name="Cup")
    cup.participants.set([a1, a2])
    in_cup = match_create(bot_ids=[a1.pk, a2.pk], tournament=cup)
    match_create(bot_ids=[a1.pk, b1.pk])
    rows = APIClient().get(f"/api/v1/matches/?tournament={cup.pk}").json()["results"]
    assert [r["id"] for r in rows] == [in_cup.pk]
    listed = APIClient().get("/api/v1/tournaments/").json()["results"]
    assert (listed[0]["name"], listed[0]["participant_count"]) == ("Cup", 2)
    bots = APIClient().get(f"/api/v1/tournaments/{cup.pk}/participants/").json()["results"]
    assert [b["name"] for b in bots] == ["alpha-1", "alpha-2"]


def test_responses_have_the_shape_the_schema_publishes(world: dict[str, Any]) -> None:
    """Top-level and row fields of each read are exactly the published ones (lists paged)."""
    a1, a2, b1 = world["bots"]
    record(match_create(bot_ids=[a1.pk, a2.pk, b1.pk], requested_by=world["alice"]), [1, 2, 3])
    schema = APIClient().get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = components[node["$ref"].rsplit("/", 1)[1]]
        return node

    def fields(node: dict[str, Any]) -> set[str]:
        return set(resolve(node)["properties"])

    paths = {
        "/api/v1/leaderboard/": "/api/v1/leaderboard/",
        "/api/v1/bots/": "/api/v1/bots/",
        "/api/v1/bots/{bot_id}/": f"/api/v1/bots/{a1.pk}/",
        "/api/v1/bots/{bot_id}/versions/": f"/api/v1/bots/{a1.pk}/versions/",
        "/api/v1/matches/": "/api/v1/matches/",
        "/api/v1/matches/{match_id}/": f"/api/v1/matches/{a1.seats.get().match_id}/",
        "/api/v1/tokens/": "/api/v1/tokens/",
        "/api/v1/tournaments/": "/api/v1/tournaments/",
    }
    for template, url in paths.items():
        body = world["a"].get(url).json()
        published = resolve(
            schema["paths"][template]["get"]["responses"]["200"]["content"]["application/json"][
                "schema"
            ]
        )
        assert set(body) == set(published["properties"]), template
        if body.get("results"):
            item = published["properties"]["results"]["items"]
            assert set(body["results"][0]) <= fields(item), template
            required = set(resolve(item).get("required", []))
            assert required <= set(body["results"][0]), template

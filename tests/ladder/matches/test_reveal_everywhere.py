"""Every interface that shows a match hides its seed and replay until its deal is done.

The rule is one selector (``ladder.matches.selectors.match_reveal``). This test
does not trust that each interface calls it: it builds the sharpest case (a
duplicate deal whose first rotation is finished and recorded, with its replay
stored, while the second rotation still waits to play the same cave) and walks
every interface — each URL of the site (the REST API, the pages, the viewer),
each admin page of each registered model, each method of the Ladder gRPC
service — as an anonymous visitor, the bots' owner and a superuser, asserting
that neither the seed nor anything of the stored replay (its sha256, its file
name) appears in any answer. A new URL or gRPC method is walked (or must be
classified here) without anyone remembering to add it, so one that renders a
match's own fields instead of the selector's view fails.

Once the second rotation is recorded, the same walk finds the seed and the
replay on the match's page and API: the walk can see a leak when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from google.protobuf import text_format

from digdown.v1 import game_pb2 as game_pb
from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from ladder.grpc.server import LadderServer
from ladder.matches.models import Match
from tests.ladder.conftest import record

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

SEED = 8_765_432_109_876_543_210  # distinctive: its digits appear nowhere by chance
T = 10.0


@dataclass
class Hidden:
    """A duplicate deal half played: rotation 0 recorded (hidden), rotation 1 queued."""

    played: Match
    waiting: Match
    deal_id: int
    tournament_id: int
    bot_id: int
    token_id: int
    token: str
    owner: Any
    superuser: Any

    def secrets(self) -> list[str]:
        m = Match.objects.get(pk=self.played.pk)
        assert m.replay_sha256 and m.replay.name, "the played rotation has a stored replay"
        return [str(SEED), m.replay_sha256, m.replay.name]


@pytest.fixture
def hidden(make_user: Callable[..., Any], make_bot: Callable[..., Any]) -> Hidden:
    from ladder.accounts.models import User
    from ladder.accounts.services import token_create
    from ladder.tournaments.models import Tournament
    from ladder.tournaments.services import deal_create

    owner = make_user("owner")
    superuser = User.objects.create_superuser(username="root", password="pw-12345678")
    a, b = make_bot(owner, "reveal-a"), make_bot(owner, "reveal-b")
    cup = Tournament.objects.create(name="reveal cup")
    cup.participants.set([a, b])
    deal = deal_create(bot_ids=[a.pk, b.pk], seed=SEED, rated=False, tournament=cup)
    played, waiting = deal.matches.order_by("deal_rotation")
    record(played, [1, 2])
    token = token_create(user=owner, name="reveal")
    return Hidden(
        played=played,
        waiting=waiting,
        deal_id=deal.pk,
        tournament_id=cup.pk,
        bot_id=a.pk,
        token_id=token.token.pk,
        token=token.secret,
        owner=owner,
        superuser=superuser,
    )


# --- the site: every URL of the URLconf ---------------------------------------------


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), p


def _site_urls(h: Hidden) -> list[str]:
    """Every non-admin route with its parameters filled from the hidden deal's world."""
    values = {
        "match_id": [h.played.pk, h.waiting.pk],
        "deal_id": [h.deal_id],
        "tournament_id": [h.tournament_id],
        "bot_id": [h.bot_id],
        "seat": [0],
        "number": [1],
        "token_id": [h.token_id],
        "comparison_id": [1],
        # Competitions are walked by their routes only: no competition of this world holds a
        # final deal in play yet (their final's matches are ladder matches of the walk above).
        "competition_id": [1],
        "invitation_id": [1],
        "token": ["not-a-token"],
    }
    urls = []
    for route, pattern in _routes(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue  # walked model by model below, as staff
        params = list(pattern.pattern.converters)
        unknown = [p for p in params if p not in values]
        assert not unknown, f"{route}: give the walk a value for {unknown} (see this test)"
        fills = [{p: values[p][0] for p in params}]
        if params:  # every value of the first parameter (both rotations of the deal)
            fills = [{**fills[0], params[0]: v} for v in values[params[0]]]
        for fill in fills:
            path = "/" + route
            for name, value in fill.items():
                end = path.index(f":{name}>") + len(name) + 2
                start = path.rindex("<", 0, end)
                path = path[:start] + pattern.pattern.converters[name].to_url(value) + path[end:]
            urls.append(path)
    return urls


def _admin_urls() -> list[str]:
    """Each registered model's list, and the change page of each of its rows (few here)."""
    urls = []
    for model in admin.site._registry:
        info = model._meta.app_label, model._meta.model_name
        urls.append(reverse("admin:{}_{}_changelist".format(*info)))
        for pk in model.objects.values_list("pk", flat=True)[:20]:
            urls.append(reverse("admin:{}_{}_change".format(*info), args=[pk]))
    return urls


def _leaks(body: bytes, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s.encode() in body]


def test_no_page_api_viewer_or_admin_shows_the_cave_of_a_deal_in_play(hidden: Hidden) -> None:
    secrets = hidden.secrets()
    anonymous, owner, root = Client(), Client(), Client()
    owner.force_login(hidden.owner)
    root.force_login(hidden.superuser)
    site = _site_urls(hidden)
    assert any(f"/matches/{hidden.played.pk}/" in u for u in site), site
    walked = 0
    for client in (anonymous, owner, root):
        for url in site:
            response = client.get(url)
            assert response.status_code < 500, (url, response.status_code)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            assert not _leaks(body, secrets), f"{url} shows {_leaks(body, secrets)}"
            walked += 1
    for url in _admin_urls():
        response = root.get(url)
        assert response.status_code == 200, (url, response.status_code)
        assert not _leaks(response.content, secrets), (
            f"{url} shows {_leaks(response.content, secrets)}"
        )
        walked += 1
    assert walked > 3 * 40, walked

    # The walk sees the cave once the deal is done (it would see a leak).
    record(hidden.waiting, [2, 1])
    page = anonymous.get(reverse("web:match", args=[hidden.played.pk])).content
    api = anonymous.get(reverse("match-detail", args=[hidden.played.pk])).content
    change = root.get(reverse("admin:matches_match_change", args=[hidden.played.pk])).content
    for body in (page, api, change):
        assert _leaks(body, secrets[:2]) == secrets[:2]


# --- the Ladder gRPC service: every method -------------------------------------------

# Methods that change something and answer with no stored match of someone else's
# deal; each is still listed, so a new method must be classified here.
WRITES_NOT_WALKED = {
    "CreateBot": "creates a bot",
    "UploadVersion": "uploads a version",
    "SetEndpoint": "sets an endpoint",
    "ReactivateBot": "lifts a suspension",
    "RequestChallenge": "queues a new match (its seed hidden: it has not finished)",
    "CreateTournament": "creates a tournament",
    "CompareVersions": "queues a comparison's deals",
    "Play": "a connected bot's own live game, no stored match",
    "CreateCompetition": "creates a competition (staff)",
    "EnterCompetition": "enters a bot",
    "CreatePrivateTournament": "creates a private tournament",
    "InviteToCompetition": "invites a bot",
    "AcceptCompetitionInvitation": "accepts an invitation",
    "StartPrivateTournament": "starts a private tournament's final (its deals not yet played)",
}


def _grpc_reads(h: Hidden) -> dict[str, list[Any]]:
    played, waiting = h.played.pk, h.waiting.pk
    return {
        "ListMyBots": [pb.ListMyBotsRequest()],
        "Leaderboard": [pb.LeaderboardRequest(include_inactive=True)],
        "ListMatches": [pb.ListMatchesRequest(), pb.ListMatchesRequest(bot="reveal-a")],
        "GetMatch": [pb.GetMatchRequest(match_id=played), pb.GetMatchRequest(match_id=waiting)],
        "DownloadReplay": [pb.DownloadReplayRequest(match_id=played)],
        "GetSeatLog": [pb.GetSeatLogRequest(match_id=played, seat=0)],
        "GetVersionLog": [pb.GetVersionLogRequest(bot="reveal-a", version=1)],
        "GetRuleset": [game_pb.GetRulesetRequest()],
        "ListLadders": [pb.ListLaddersRequest()],
        "GetTournament": [pb.GetTournamentRequest(tournament_id=h.tournament_id)],
        "GetComparison": [pb.GetComparisonRequest(comparison_id=1)],
        "ListCompetitions": [pb.ListCompetitionsRequest()],
        "GetCompetition": [pb.GetCompetitionRequest(competition_id=1)],
    }


def test_no_grpc_method_shows_the_cave_of_a_deal_in_play(hidden: Hidden) -> None:
    secrets = hidden.secrets()
    service = pb.DESCRIPTOR.services_by_name["Ladder"]
    reads = _grpc_reads(hidden)
    unclassified = [
        m.name for m in service.methods if m.name not in reads and m.name not in WRITES_NOT_WALKED
    ]
    assert not unclassified, f"classify {unclassified} in this test (a read is walked)"
    server = LadderServer("127.0.0.1:0", max_workers=2, rate="0")
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            auth = [("authorization", f"Bearer {hidden.token}")]
            for name, requests in reads.items():
                method = service.methods_by_name[name]
                for request in requests:
                    answers = _call(getattr(stub, name), request, auth, method.server_streaming)
                    text = "\n".join(answers)
                    leaked = [s for s in secrets if s in text]
                    assert not leaked, f"{name}({request}) shows {leaked}"
    finally:
        server.stop(1.0)


def _call(rpc: Any, request: Any, auth: list[tuple[str, str]], streaming: bool) -> list[str]:
    """The answers as text (every field, bytes escaped), or the status and its message."""
    try:
        replies = (
            list(rpc(request, metadata=auth, timeout=T))
            if streaming
            else [rpc(request, metadata=auth, timeout=T)]
        )
    except grpc.RpcError as exc:
        assert exc.code() != grpc.StatusCode.INTERNAL, exc.details()
        return [f"{exc.code()}: {exc.details()}"]
    return [text_format.MessageToString(r) + r.SerializeToString().hex() for r in replies]

"""No seed or face-down card of an unplayed deal on any surface, for every kind of object.

``test_reveal_everywhere`` walks every interface for one sharp case (a duplicate
deal half played). The comparison page still listed every deal's seed while all
its matches were queued: the walk never rendered a comparison with a deal in
play. This test builds every kind of object that can hold an unplayed deal —
a ladder match, a duplicate set, a tournament, a version comparison — in each
state in which its deal is not done (queued; running; half played: one rotation
finished, another still to play) and renders every surface for it:

- every page of the site, every REST answer, the games export and the live
  frames (``/api/v1/matches/N/live/``, the pulse) — every route of the URLconf,
  its parameters filled from the object's world — as an anonymous visitor, the
  owner and a superuser; every admin page as the superuser;
- every read method of the Ladder gRPC service, as the owner.

It fails on any of the deal's seeds (decimal or hex), the stored replay of a
played rotation (sha256, file name), or the face-down cards of the cave: a
running rotation's latest live frame holds a marker standing for what the
running game has revealed, which is the hidden part of the cave its twins have
still to play. The table of what was rendered (object kind x state x surface)
is printed (``-s``) for the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from django.test import Client
from django.urls import get_resolver

from digdown.v1 import game_pb2 as game_pb
from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from ladder.grpc.server import LadderServer
from ladder.matches.models import Match
from tests.ladder.conftest import record
from tests.ladder.matches.test_reveal_everywhere import (
    WRITES_NOT_WALKED,
    _admin_urls,
    _call,
    _leaks,
    _routes,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

FACE_DOWN = "face-down-7f3a9c"  # stands for the cards a running twin has revealed
TABLE: dict[tuple[str, str], dict[str, int]] = {}


@dataclass
class World:
    kind: str
    state: str
    owner: Any
    superuser: Any
    token: str
    bot: Any
    matches: list[int]
    seeds: list[int]
    deal_id: int = 0
    tournament_id: int = 0
    comparison_id: int = 0
    token_id: int = 0
    replays: list[str] = field(default_factory=list)

    def secrets(self) -> list[str]:
        out = [FACE_DOWN, *self.replays]
        for seed in self.seeds:
            out += [str(seed), f"{seed:x}", f"{seed:016x}"]
        return out


def _running(match: Match, *, twins: bool) -> None:
    """Running, with a live frame. With ``twins`` (other rotations of its deal still to
    play) the frame holds the marker: what this game turned face up is face down in
    theirs. A lone match's frame is public (the worker writes only public views)."""
    from django.utils import timezone

    from ladder.viewer.models import LiveFrame

    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING, started_at=timezone.now())
    LiveFrame.objects.create(
        match_id=match.pk,
        ply=3,
        view={"revealed": FACE_DOWN if twins else "public"},
        events=[[0, {"kind": "reveal", "seat": 0, "card": FACE_DOWN if twins else "public"}]],
    )


def _build(kind: str, state: str, make_user: Any, make_bot: Any) -> World:
    from ladder.accounts.models import User
    from ladder.accounts.services import token_create
    from ladder.bots.services import bot_version_smoke_record, bot_version_upload
    from ladder.matches.creation import match_create
    from ladder.tournaments.models import Deal, VersionComparison
    from ladder.tournaments.services import comparison_create, deal_create, tournament_create

    owner = make_user("owner")
    superuser = User.objects.create_superuser(username="root", password="pw-12345678")
    a, b = make_bot(owner, "redact-a"), make_bot(make_user("rival"), "redact-b")
    created = token_create(user=owner, name="redact")
    world = World(kind, state, owner, superuser, created.secret, a, [], [])
    world.token_id = created.token.pk
    matches: list[Match] = []
    if kind == "ladder match":
        m = match_create(bot_ids=[a.pk, b.pk], seed=8_111_222_333_444_555_666)
        matches = [m]
    elif kind == "duplicate set":
        deal = deal_create(bot_ids=[a.pk, b.pk], seed=8_222_333_444_555_666_777, rated=False)
        world.deal_id = deal.pk
        matches = list(deal.matches.order_by("deal_rotation"))
    elif kind == "tournament":
        cup = tournament_create(
            name="redaction cup", participant_ids=[a.pk, b.pk], duplicate=True, created_by=superuser
        )
        world.tournament_id = cup.pk
        matches = list(Match.objects.filter(tournament=cup).order_by("deal_rotation", "pk"))
        world.deal_id = next(m.deal_id for m in matches if m.deal_id)
    elif kind == "comparison":
        code = b"def act(obs):\n    return 1\n"
        v2 = bot_version_upload(user=owner, bot_id=a.pk, filename="bot.py", data=code)
        bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="passed", log=b"")
        comparison = comparison_create(
            user=owner, bot_id=a.pk, old_version=1, new_version=2, opponent_ids=[b.pk], deals=2
        )
        world.comparison_id = comparison.pk
        assert VersionComparison.objects.filter(pk=comparison.pk).exists()
        matches = list(
            Match.objects.filter(deal__comparison=comparison).order_by(
                "deal__comparison_index", "deal__comparison_side", "deal_rotation"
            )
        )
        world.deal_id = matches[0].deal_id or 0
    world.matches = [m.pk for m in matches]
    world.seeds = sorted({m.seed for m in Match.objects.filter(pk__in=world.matches)})
    if kind == "comparison":
        world.seeds = sorted(
            set(world.seeds)
            | set(
                Deal.objects.filter(comparison_id=world.comparison_id).values_list(
                    "seed", flat=True
                )
            )
        )
    assert len(matches) >= 1 and world.seeds
    if state == "running":
        _running(matches[0], twins=len(matches) > 1)
    elif state == "half played":
        assert len(matches) >= 2, (kind, "needs two rotations of one deal")
        record(matches[0], [1, 2])
        played = Match.objects.get(pk=matches[0].pk)
        world.replays = [played.replay_sha256, played.replay.name]
        if len(matches) > 2:
            _running(matches[1], twins=True)  # and a twin running while the others wait
    return world


CASES = [
    ("ladder match", "queued"),
    ("ladder match", "running"),
    ("duplicate set", "queued"),
    ("duplicate set", "running"),
    ("duplicate set", "half played"),
    ("tournament", "queued"),
    ("tournament", "running"),
    ("tournament", "half played"),
    ("comparison", "queued"),
    ("comparison", "running"),
    ("comparison", "half played"),
]


def _site_urls(w: World) -> list[tuple[str, str]]:
    """(surface, url) of every non-admin route filled from the world (every match)."""
    values = {
        "match_id": w.matches,
        "deal_id": [w.deal_id or 1],
        "tournament_id": [w.tournament_id or 1],
        "bot_id": [w.bot.pk],
        "seat": [0],
        "number": [1],
        "token_id": [w.token_id],
        "comparison_id": [w.comparison_id or 1],
        # Competitions by their routes only: their final's deals are not yet a kind here.
        "competition_id": [1],
        "invitation_id": [1],
        "token": ["not-a-token"],
    }
    urls = []
    for route, pattern in _routes(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue
        params = list(pattern.pattern.converters)
        unknown = [p for p in params if p not in values]
        assert not unknown, f"{route}: give the walk a value for {unknown}"
        fills: list[dict[str, Any]] = [{}]
        for p in params:
            fills = [{**f, p: v} for f in fills for v in values[p]]
        for fill in fills:
            path = "/" + route
            for name, value in fill.items():
                end = path.index(f":{name}>") + len(name) + 2
                start = path.rindex("<", 0, end)
                path = path[:start] + pattern.pattern.converters[name].to_url(value) + path[end:]
            urls.append((_surface(path), path))
    return urls


def _surface(path: str) -> str:
    if path.endswith("/live/") or "pulse" in path:
        return "live frames"
    if "export" in path:
        return "exports"
    if path.startswith("/api/"):
        return "REST"
    return "pages"


def _grpc_reads(w: World) -> dict[str, list[Any]]:
    return {
        "ListMyBots": [pb.ListMyBotsRequest()],
        "Leaderboard": [pb.LeaderboardRequest(include_inactive=True)],
        "ListMatches": [pb.ListMatchesRequest(), pb.ListMatchesRequest(bot="redact-a")],
        "GetMatch": [pb.GetMatchRequest(match_id=m) for m in w.matches],
        "DownloadReplay": [pb.DownloadReplayRequest(match_id=m) for m in w.matches],
        "GetSeatLog": [pb.GetSeatLogRequest(match_id=m, seat=0) for m in w.matches],
        "GetVersionLog": [pb.GetVersionLogRequest(bot="redact-a", version=1)],
        "GetRuleset": [game_pb.GetRulesetRequest()],
        "ListLadders": [pb.ListLaddersRequest()],
        "GetTournament": [pb.GetTournamentRequest(tournament_id=w.tournament_id or 1)],
        "GetComparison": [pb.GetComparisonRequest(comparison_id=w.comparison_id or 1)],
        "ListCompetitions": [pb.ListCompetitionsRequest()],
        "GetCompetition": [pb.GetCompetitionRequest(competition_id=1)],
    }


def _walk(w: World) -> dict[str, int]:
    secrets = w.secrets()
    seen: dict[str, int] = {}
    anonymous, owner, root = Client(), Client(), Client()
    owner.force_login(w.owner)
    root.force_login(w.superuser)
    for who, client in (("anonymous", anonymous), ("owner", owner), ("superuser", root)):
        for surface, url in _site_urls(w):
            response = client.get(url)
            assert response.status_code < 500, (url, who, response.status_code)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            assert not _leaks(body, secrets), (
                f"{w.kind}/{w.state}: {url} ({who}) shows {_leaks(body, secrets)}"
            )
            seen[surface] = seen.get(surface, 0) + 1
    for url in _admin_urls():
        response = root.get(url)
        assert response.status_code == 200, (url, response.status_code)
        assert not _leaks(response.content, secrets), (
            f"{w.kind}/{w.state}: {url} shows {_leaks(response.content, secrets)}"
        )
        seen["admin"] = seen.get("admin", 0) + 1
    service = pb.DESCRIPTOR.services_by_name["Ladder"]
    reads = _grpc_reads(w)
    unclassified = [
        m.name for m in service.methods if m.name not in reads and m.name not in WRITES_NOT_WALKED
    ]
    assert not unclassified, f"classify {unclassified} in this test"
    server = LadderServer("127.0.0.1:0", max_workers=2, rate="0")
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            auth = [("authorization", f"Bearer {w.token}")]
            for name, requests in reads.items():
                method = service.methods_by_name[name]
                for request in requests:
                    text = "\n".join(
                        _call(getattr(stub, name), request, auth, method.server_streaming)
                    )
                    leaked = [s for s in secrets if s in text]
                    assert not leaked, f"{w.kind}/{w.state}: {name}({request}) shows {leaked}"
                    seen["gRPC"] = seen.get("gRPC", 0) + 1
    finally:
        server.stop(1.0)
    return seen


@pytest.mark.parametrize(
    ("kind", "state"), CASES, ids=[f"{k}-{s}".replace(" ", "_") for k, s in CASES]
)
def test_no_surface_shows_the_cave_of_a_deal_in_play(
    kind: str, state: str, make_user: Callable[..., Any], make_bot: Callable[..., Any]
) -> None:
    world = _build(kind, state, make_user, make_bot)
    seen = _walk(world)
    for surface in ("pages", "REST", "exports", "live frames", "admin", "gRPC"):
        assert seen.get(surface), (surface, seen)
    TABLE[(kind, state)] = seen


def test_zz_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    """Object kind x state x surface: answers rendered and checked (the report's table)."""
    surfaces = ("pages", "REST", "exports", "live frames", "admin", "gRPC")
    with capsys.disabled():
        print("\n| object | state | " + " | ".join(surfaces) + " |")
        print("|---|---|" + "---|" * len(surfaces))
        for (kind, state), seen in TABLE.items():
            print(
                f"| {kind} | {state} | " + " | ".join(str(seen.get(s, 0)) for s in surfaces) + " |"
            )
    # Under pytest-xdist the cases may run on other workers: each cell this process
    # walked must have checked answers on every surface it has.
    assert TABLE, "no case ran in this process"
    assert all(sum(seen.values()) > 0 for seen in TABLE.values()), TABLE

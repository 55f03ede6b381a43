"""The competition RPCs on a real in-process gRPC server: create (staff), enter, a
knockout final to its result, statuses for bad input; a private tournament."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import grpc
import pytest
from django.utils import timezone

from digdown.v1 import ladder_pb2 as pb
from ladder.accounts.services import token_create
from ladder.competitions.models import Competition
from ladder.competitions.services import competitions_tick, final_advance
from tests.ladder.competitions.test_competitions import _play_open
from tests.ladder.grpc.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]
T = 10.0


def _at(seconds: int) -> str:
    return (timezone.now() + timedelta(seconds=seconds)).isoformat()


def test_competition_over_grpc(stub_inproc: Any, make_user: Any, make_bot: Any) -> None:
    staff = token_create(user=make_user("boss", staff=True)).secret
    users = [make_user(f"g{i}") for i in range(3)]
    bots = [make_bot(u, f"gb-{i}") for i, u in enumerate(users)]
    final = pb.CompetitionFinal(
        format="SINGLE_ELIMINATION", ladder="dd-1", min_deals=1, matchup_max_deals=2
    )
    request = pb.CreateCompetitionRequest(
        name="grpc cup",
        rules="R",
        entry_opens_at=_at(-5),
        freeze_at=_at(60),
        final_starts_at=_at(90),
        final_size=4,
        final=final,
    )
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.CreateCompetition(
            request, metadata=bearer(token_create(user=users[0]).secret), timeout=T
        )
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    bad = pb.CreateCompetitionRequest(name="bad", entry_opens_at="yesterday", final=final)
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.CreateCompetition(bad, metadata=bearer(staff), timeout=T)
    assert (
        err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "RFC 3339" in err.value.details()
    )
    c = stub_inproc.CreateCompetition(request, metadata=bearer(staff), timeout=T).competition
    assert c.phase == "ENTRY" and c.phases[0].phase == "ENTRY"
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.CreateCompetition(request, metadata=bearer(staff), timeout=T)
    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
    for user, bot in zip(users, bots, strict=True):
        token = token_create(user=user).secret
        r = stub_inproc.EnterCompetition(
            pb.EnterCompetitionRequest(competition_id=c.id, bot=bot.name),
            metadata=bearer(token),
            timeout=T,
        )
        assert r.entry.bot == bot.name
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.EnterCompetition(
            pb.EnterCompetitionRequest(competition_id=c.id, bot=bots[0].name),
            metadata=bearer(token_create(user=users[0]).secret),
            timeout=T,
        )
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    listed = stub_inproc.ListCompetitions(pb.ListCompetitionsRequest(), timeout=T)
    assert [x.name for x in listed.competitions] == ["grpc cup"]
    at = timezone.now()
    competitions_tick(at + timedelta(seconds=61))
    competitions_tick(at + timedelta(seconds=91))
    competition = Competition.objects.get(pk=c.id)
    strength = {b.pk: i for i, b in enumerate(bots)}
    for _ in range(20):
        if not _play_open(competition, strength):
            break
        final_advance(competition_id=c.id)
    got = stub_inproc.GetCompetition(
        pb.GetCompetitionRequest(competition_id=c.id, page_size=2), timeout=T
    )
    assert got.competition.phase == "FINISHED"
    assert got.competition.places[0].bot == "gb-2" and got.competition.places[0].low == 1
    assert len(got.competition.entries) == 2 and got.next_page_token == "2"
    assert json.loads(got.competition.final_view_json)[0]["kind"] == "single_elimination"
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.GetCompetition(pb.GetCompetitionRequest(competition_id=10**9), timeout=T)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_private_tournament_over_grpc(stub_inproc: Any, make_user: Any, make_bot: Any) -> None:
    me, friend = make_user("me"), make_user("friend")
    mine = [make_bot(me, "mine-1"), make_bot(me, "mine-2")]
    theirs = make_bot(friend, "theirs-1")
    my_token, their_token = token_create(user=me).secret, token_create(user=friend).secret
    final = pb.CompetitionFinal(
        format="ROUND_ROBIN", ladder="dd-1", min_deals=1, max_games=12, top=2
    )
    c = stub_inproc.CreatePrivateTournament(
        pb.CreatePrivateTournamentRequest(name="ours", bots=[b.name for b in mine], final=final),
        metadata=bearer(my_token),
        timeout=T,
    ).competition
    assert c.private and c.phase == "ENTRY"
    inv = stub_inproc.InviteToCompetition(
        pb.InviteToCompetitionRequest(competition_id=c.id, bot=theirs.name),
        metadata=bearer(my_token),
        timeout=T,
    )
    stub_inproc.AcceptCompetitionInvitation(
        pb.AcceptCompetitionInvitationRequest(invitation_id=inv.id),
        metadata=bearer(their_token),
        timeout=T,
    )
    started = stub_inproc.StartPrivateTournament(
        pb.StartPrivateTournamentRequest(competition_id=c.id), metadata=bearer(my_token), timeout=T
    ).competition
    assert started.phase == "FINAL" and started.deals_open == 3
    mine_list = stub_inproc.ListCompetitions(
        pb.ListCompetitionsRequest(private=True), metadata=bearer(their_token), timeout=T
    )
    assert [x.name for x in mine_list.competitions] == ["ours"]

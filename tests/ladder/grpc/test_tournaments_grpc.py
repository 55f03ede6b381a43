"""CreateTournament / GetTournament and CompareVersions / GetComparison on a real
in-process gRPC server (the production server shape on port 0)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from ladder.accounts.services import token_create
from ladder.matches.models import Match
from ladder.tournaments.services import tournament_advance
from tests.ladder.conftest import record
from tests.ladder.grpc.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
T = 10.0


def test_tournament_over_grpc(stub_inproc: Any, make_user: Any, make_bot: Any) -> None:
    staff = token_create(user=make_user("boss", staff=True)).secret
    author = make_user("author")
    names = [make_bot(author, f"g-{i}").name for i in range(3)]
    request = pb.CreateTournamentRequest(name="cup", participants=names)
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.CreateTournament(
            request, metadata=bearer(token_create(user=author).secret), timeout=T
        )
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.CreateTournament(
            pb.CreateTournamentRequest(name="x", participants=names, format="SWISS", seats=3),
            metadata=bearer(staff),
            timeout=T,
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    t = stub_inproc.CreateTournament(request, metadata=bearer(staff), timeout=T).tournament
    assert (t.status, t.format, t.rated, len(t.standings)) == ("RUNNING", "ROUND_ROBIN", False, 3)
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.CreateTournament(request, metadata=bearer(staff), timeout=T)
    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
    for m in Match.objects.filter(tournament_id=t.id):
        record(m, [1, 2])
    tournament_advance(tournament_id=t.id)
    got = stub_inproc.GetTournament(pb.GetTournamentRequest(tournament_id=t.id), timeout=T)
    assert got.tournament.status == "FINISHED"
    assert sum(s.points for s in got.tournament.standings) == 3.0
    match = stub_inproc.GetMatch(
        pb.GetMatchRequest(match_id=Match.objects.filter(tournament_id=t.id).first().pk), timeout=T
    ).match
    assert match.tournament_id == t.id
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.GetTournament(pb.GetTournamentRequest(tournament_id=99999), timeout=T)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_compare_versions_over_grpc(stub_inproc: Any, make_user: Any, make_bot: Any) -> None:
    from ladder.bots.services import bot_version_smoke_record, bot_version_upload

    author = make_user("author")
    token = token_create(user=author).secret
    mine = make_bot(author, "mine")
    v2 = bot_version_upload(user=author, bot_id=mine.pk, filename="b.py", data=b"x = 1\n")
    bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="ok", log=b"")
    make_bot(make_user("house"), "opp")
    ask = pb.CompareVersionsRequest(
        bot="mine", old_version=1, new_version=2, opponents=["opp"], deals=2
    )
    c = stub_inproc.CompareVersions(ask, metadata=bearer(token), timeout=T).comparison
    assert (c.status, c.matches, c.has_result, c.opponents) == ("RUNNING", 8, False, ["opp"])
    for m in Match.objects.filter(deal__comparison_id=c.id).select_related("deal"):
        seated = list(m.seats.order_by("seat").values_list("bot_id", flat=True))
        new = m.deal.comparison_side == "new"
        record(m, [1 if (b == mine.pk) == new else 2 for b in seated])
        shown = stub_inproc.GetMatch(pb.GetMatchRequest(match_id=m.pk), timeout=T).match
        assert shown.deal_id == m.deal_id
    got = stub_inproc.GetComparison(
        pb.GetComparisonRequest(comparison_id=c.id), metadata=bearer(token), timeout=T
    ).comparison
    assert got.status == "FINISHED" and got.has_result and got.complete_deals == 2
    assert got.first_share_diff.mean == 1.0 and got.mean_rank_diff.mean == -1.0
    other = token_create(user=make_user("other")).secret
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.GetComparison(
            pb.GetComparisonRequest(comparison_id=c.id), metadata=bearer(other), timeout=T
        )
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.CompareVersions(ask, metadata=bearer(other), timeout=T)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_get_tournament_pages_standings_and_participants(
    stub_inproc: Any, make_user: Any, make_bot: Any
) -> None:
    """Pages of ``page_size`` walk every standing line and participant once, in order; a
    request from before pages (neither field) gets the first 50 and a token for the rest."""
    from ladder.matches.creation import match_create
    from ladder.tournaments.models import Tournament
    from ladder.tournaments.selectors import tournament_standings

    authors = [make_user(f"author-{k}") for k in range(3)]  # 20 bots each at most
    bots = [make_bot(authors[i % 3], f"p-{i:02d}") for i in range(53)]
    cup = Tournament.objects.create(name="big cup")
    cup.participants.set(bots)
    for i in range(0, 12, 2):  # some points, so the standings are not in name order
        record(match_create(bot_ids=[bots[i].pk, bots[i + 1].pk], tournament=cup), [2, 1])
    every = [(s.bot_name, s.standing.rank, s.standing.points) for s in tournament_standings(
        tournament=cup)]  # fmt: skip
    assert len(every) == 53

    def got(**fields: Any) -> Any:
        return stub_inproc.GetTournament(
            pb.GetTournamentRequest(tournament_id=cup.pk, **fields), timeout=T
        )

    old = got()
    assert len(old.tournament.standings) == len(old.tournament.participants) == 50
    assert old.tournament.participant_count == 53 and old.next_page_token
    rest = got(page_token=old.next_page_token)
    assert (len(rest.tournament.standings), rest.next_page_token) == (3, "")
    for size in (1, 7, 53, 200):
        lines, names, token, pages = [], [], "", 0
        while True:
            page = got(page_size=size, page_token=token)
            lines += [(s.bot, s.rank, s.points) for s in page.tournament.standings]
            names += page.tournament.participants
            pages += 1
            token = page.next_page_token
            if not token:
                break
        assert lines == every, size
        assert names == sorted(b.name for b in bots), size
        assert pages == -(-53 // size), size
    for bad in ({"page_token": "not-a-token"}, {"page_size": -1}):
        with pytest.raises(grpc.RpcError) as err:
            got(**bad)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT

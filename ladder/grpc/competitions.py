"""The Ladder service's competition RPCs (a mixin of ``LadderServicer``): thin calls of
``ladder.competitions.services`` and ``.selectors``, messages of ``ladder.proto``'s
competitions block. Errors become statuses in the interceptor (``ladder.grpc.auth``).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import grpc
from django.utils.dateparse import parse_datetime

from digdown.v1 import ladder_pb2
from ladder.common.exceptions import ApplicationError, Conflict
from ladder.competitions import selectors, services
from ladder.competitions.final import Format
from ladder.competitions.models import Competition, CompetitionEntry, CompetitionInvitation
from ladder.grpc.auth import GrpcError, current_user, require_user
from ladder.grpc.lookups import bot_named, own_bot_named
from ladder.grpc.messages import time_text
from ladder.grpc.paging import page_size_of, token_number


def _when(text: str, field: str) -> datetime:
    value = parse_datetime(text.strip()) if text.strip() else None
    if value is None or value.tzinfo is None:
        raise ApplicationError(f"{field} must be an RFC 3339 time with its offset")
    return value


def _page(page_size: int, page_token: str) -> tuple[int, int]:
    """A page's size and offset, as every other list of this service reads them."""
    return page_size_of(page_size), token_number(page_token) or 0


def _final_fields(final: ladder_pb2.CompetitionFinal) -> dict[str, Any]:
    fmt = final.format.strip().lower()
    if fmt not in [f.value for f in Format]:
        raise ApplicationError(
            f"format must be one of {', '.join(f.value.upper() for f in Format)}"
        )
    first = final.first_stage.strip().lower() or "swiss"
    return {
        "format": fmt,
        "seats": final.seats or 2,
        "confidence": final.confidence or 0.95,
        "min_deals": final.min_deals or 2,
        "max_games": final.max_games or 2000,
        "matchup_max_deals": final.matchup_max_deals or 16,
        "group_max_deals": final.group_max_deals or 12,
        "top": final.top or 4,
        "advance": final.advance or 2,
        "first_stage": first,
        "finalists": final.finalists or 4,
        "ladder": final.ladder,
    }


def entry_pb(entry: CompetitionEntry) -> ladder_pb2.CompetitionEntry:
    return ladder_pb2.CompetitionEntry(
        bot=entry.bot.name,
        owner=entry.owner.username,
        version=entry.version.number if entry.version else 0,
        seed=entry.seed or 0,
        finalist=entry.finalist,
        place=entry.place or 0,
        place_low=entry.place_low or 0,
        place_high=entry.place_high or 0,
    )


def competition_pb(
    c: Competition, *, page_size: int = 0, page_token: str = "", full: bool = True
) -> tuple[ladder_pb2.Competition, str]:
    """A competition; with ``full``, a page of its entrants and its result."""
    message = ladder_pb2.Competition(
        id=c.pk,
        name=c.name,
        rules=c.rules,
        entry=c.entry.upper(),
        private=c.private,
        phase=c.phase.upper(),
        phases=[
            ladder_pb2.CompetitionPhase(
                phase=p.phase.upper(), at=time_text(p.at), current=p.current, done=p.done
            )
            for p in selectors.competition_phases(c)
        ],
        entry_opens_at=time_text(c.entry_opens_at),
        freeze_at=time_text(c.freeze_at),
        final_starts_at=time_text(c.final_starts_at),
        finished_at=time_text(c.finished_at),
        entries_per_user=c.entries_per_user,
        entry_count=getattr(c, "entry_count", 0),
        final_size=c.final_size,
        final=ladder_pb2.CompetitionFinal(
            format=c.format.upper(),
            seats=c.seats,
            confidence=c.confidence,
            min_deals=c.min_deals,
            max_games=c.max_games,
            matchup_max_deals=c.matchup_max_deals,
            group_max_deals=c.group_max_deals,
            top=c.top,
            advance=c.advance,
            first_stage=c.first_stage.upper(),
            finalists=c.finalists,
            ladder=c.ladder,
        ),
        games=c.games,
        deals_open=c.deals_open,
    )
    if not full:
        return message, ""
    size, offset = _page(page_size, page_token)
    entries = list(selectors.competition_entries(competition=c)[offset : offset + size + 1])
    message.entries.extend(entry_pb(e) for e in entries[:size])
    message.final_view_json = json.dumps(c.final_view or [], separators=(",", ":"))
    result = selectors.result_rows(c)
    if result:
        message.places.extend(
            ladder_pb2.CompetitionPlace(
                bot=p["bot_name"],
                place=p["place"],
                low=p["low"],
                high=p["high"],
                score=p["score"] or 0,
            )
            for p in result["places"]
        )
        message.coin_tosses.extend(
            ladder_pb2.CoinToss(a=t["a_name"], b=t["b_name"], p=t["p"])
            for t in result["coin_tosses"]
        )
        message.pairwise.extend(
            ladder_pb2.PairwiseShare(
                a=r["a_name"],
                b=r["b_name"],
                deals=r["deals"],
                share=r["share"],
                low=r["low"],
                high=r["high"],
            )
            for r in result["pairwise"]
        )
        message.settled_places = result["settled_places"]
        message.capped = result["capped"]
    more = len(entries) > size
    return message, str(offset + size) if more else ""


def _response(
    competition_id: int, page_size: int = 0, page_token: str = ""
) -> ladder_pb2.CompetitionResponse:
    c = selectors.competition_get(competition_id=competition_id)
    message, token = competition_pb(c, page_size=page_size, page_token=page_token)
    return ladder_pb2.CompetitionResponse(competition=message, next_page_token=token)


def _invitation_pb(i: CompetitionInvitation) -> ladder_pb2.CompetitionInvitation:
    return ladder_pb2.CompetitionInvitation(
        id=i.pk,
        competition_id=i.competition_id,
        username=i.user.username,
        bot=i.bot.name if i.bot else "",
        accepted=i.accepted_at is not None,
    )


class CompetitionsServicer:
    """The competition RPCs of ``digdown.v1.Ladder``."""

    def CreateCompetition(
        self, request: ladder_pb2.CreateCompetitionRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.CompetitionResponse:
        user = require_user()
        entry = request.entry.strip().lower() or Competition.Entry.OPEN
        if entry not in Competition.Entry.values:
            raise ApplicationError("entry must be OPEN or INVITATION")
        try:
            competition = services.competition_create(
                user=user,
                name=request.name,
                rules=request.rules,
                entry=entry,
                entry_opens_at=_when(request.entry_opens_at, "entry_opens_at"),
                freeze_at=_when(request.freeze_at, "freeze_at"),
                final_starts_at=_when(request.final_starts_at, "final_starts_at"),
                entries_per_user=request.entries_per_user or 1,
                final_size=request.final_size or 16,
                **_final_fields(request.final),
            )
        except Conflict as exc:
            if "exists" in exc.message:
                raise GrpcError(grpc.StatusCode.ALREADY_EXISTS, exc.message) from exc
            raise
        return _response(competition.pk)

    def ListCompetitions(
        self, request: ladder_pb2.ListCompetitionsRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListCompetitionsResponse:
        user = require_user() if request.private else current_user()
        size, offset = _page(request.page_size, request.page_token)
        qs = selectors.competition_list(user=user, private=request.private)
        rows = list(qs[offset : offset + size + 1])
        return ladder_pb2.ListCompetitionsResponse(
            competitions=[competition_pb(c, full=False)[0] for c in rows[:size]],
            next_page_token=str(offset + size) if len(rows) > size else "",
        )

    def GetCompetition(
        self, request: ladder_pb2.GetCompetitionRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.CompetitionResponse:
        return _response(request.competition_id, request.page_size, request.page_token)

    def EnterCompetition(
        self, request: ladder_pb2.EnterCompetitionRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.CompetitionEntryResponse:
        user = require_user()
        bot = own_bot_named(request.bot, user)
        entry = services.competition_enter(
            user=user, competition_id=request.competition_id, bot_id=bot.pk
        )
        return ladder_pb2.CompetitionEntryResponse(
            competition_id=request.competition_id, entry=entry_pb(entry)
        )

    def CreatePrivateTournament(
        self, request: ladder_pb2.CreatePrivateTournamentRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.CompetitionResponse:
        user = require_user()
        if len(request.bots) > 64:
            raise ApplicationError("at most 64 bots")
        bots = [own_bot_named(name, user) for name in request.bots]
        competition = services.private_tournament_create(
            user=user,
            name=request.name,
            bot_ids=[b.pk for b in bots],
            **_final_fields(request.final),
        )
        return _response(competition.pk)

    def InviteToCompetition(
        self, request: ladder_pb2.InviteToCompetitionRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.CompetitionInvitation:
        user = require_user()
        if bool(request.username) == bool(request.bot):
            raise ApplicationError("give username or bot")
        if request.bot:
            invitation = services.private_invite(
                user=user, competition_id=request.competition_id, bot_id=bot_named(request.bot).pk
            )
        else:
            invitation = services.competition_invite(
                user=user, competition_id=request.competition_id, username=request.username
            )
        return _invitation_pb(invitation)

    def AcceptCompetitionInvitation(
        self,
        request: ladder_pb2.AcceptCompetitionInvitationRequest,
        context: grpc.ServicerContext,
    ) -> ladder_pb2.CompetitionEntryResponse:
        entry = services.private_invitation_accept(
            user=require_user(), invitation_id=request.invitation_id
        )
        return ladder_pb2.CompetitionEntryResponse(
            competition_id=entry.competition_id, entry=entry_pb(entry)
        )

    def StartPrivateTournament(
        self, request: ladder_pb2.StartPrivateTournamentRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.CompetitionResponse:
        services.private_tournament_start(
            user=require_user(), competition_id=request.competition_id
        )
        return _response(request.competition_id)

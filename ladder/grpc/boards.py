"""digdown.v1.Ladder's ladder methods: the ladders, their leaderboards, the rulesets."""

from __future__ import annotations

from functools import partial

import grpc

from digdown import rulesets
from digdown.v1 import game_pb2, ladder_pb2
from ladder.common import keyset
from ladder.common.exceptions import ApplicationError, NotFound
from ladder.grpc.messages import points_of
from ladder.grpc.paging import offset_page, page_size_of
from ladder.ladders import ladder_default, ladder_get, ladder_list
from ladder.ratings.selectors import leaderboard_list, leaderboard_row_at, rating_uncertainty


class BoardsServicer:
    """The ladder and leaderboard methods of ``LadderServicer`` (public)."""

    def ListLadders(
        self, request: ladder_pb2.ListLaddersRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListLaddersResponse:
        return ladder_pb2.ListLaddersResponse(
            ladders=[
                ladder_pb2.LadderInfo(
                    key=lad.key,
                    ruleset=lad.ruleset,
                    difficulty=lad.difficulty,
                    min_seats=lad.min_seats,
                    max_seats=lad.max_seats,
                    is_default=lad.is_default,
                )
                for lad in ladder_list()
            ]
        )

    def Leaderboard(
        self, request: ladder_pb2.LeaderboardRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.LeaderboardResponse:
        ladder = ladder_get(request.ladder)
        qs = leaderboard_list(include_inactive=request.include_inactive, ladder=ladder.key)
        if request.page_token and not request.page_token.startswith(keyset.PREFIX):
            # A numeric token from before keyset pages: an offset, once, found on the
            # score index (``leaderboard_row_at``), then a keyset page from there.
            rows, offset, next_token = offset_page(
                qs,
                request.page_size,
                request.page_token,
                bound=partial(
                    leaderboard_row_at,
                    ladder=ladder.key,
                    include_inactive=request.include_inactive,
                ),
            )
            if next_token and rows:
                last = rows[-1]
                next_token = keyset.Cursor(True, last.score, last.pk, offset + len(rows)).encode()
        else:
            if request.page_token and keyset.decode(request.page_token) is None:
                raise ApplicationError("page_token is not one this server issued")
            page = keyset.board_page(qs, page_size_of(request.page_size), request.page_token)
            rows, offset, next_token = page.rows, page.before, page.next
        entries = []
        for i, b in enumerate(rows):
            u = rating_uncertainty(rating=b.rating, games=b.games, sigma=b.sigma)
            low, high = u.interval95 or (0.0, 0.0)
            entries.append(
                ladder_pb2.LeaderboardEntry(
                    position=offset + i + 1,
                    bot=b.name,
                    owner=b.owner.username,
                    rating=points_of(b.rating),
                    games=b.games,
                    wins=b.wins,
                    provisional=u.provisional,
                    interval_low=low,
                    interval_high=high,
                    sigma=points_of(b.sigma),
                    rank_rating=points_of(b.score),
                )
            )
        return ladder_pb2.LeaderboardResponse(
            entries=entries, next_page_token=next_token, ladder=ladder.key
        )

    def GetRuleset(
        self, request: game_pb2.GetRulesetRequest, context: grpc.ServicerContext
    ) -> game_pb2.GetRulesetResponse:
        """The ruleset document of the SDK this ladder runs (the same text as the engine's)."""
        default = ladder_default().ruleset
        try:
            return rulesets.ruleset_response(
                request.ruleset, default, rulesets.text, rulesets.available()
            )
        except KeyError as exc:
            raise NotFound(exc.args[0]) from None

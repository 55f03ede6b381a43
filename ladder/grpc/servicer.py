"""digdown.v1.Ladder: a thin layer over the ladder's services and selectors.

Each method translates the request into one service or selector call and the
result into proto messages; authorization rules live in the services (the
REST API enforces the same ones), errors are mapped by ``auth.CallGuard``.
Bots are addressed by name here (bot authors think in names). Reads run a
fixed number of queries whatever the page or data size: the selectors join
what the messages show, leaderboard pages are keyset pages over the board index
(``ladder.common.keyset``; numeric offset tokens from older clients still read),
match pages are keyset pages by id.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc

from digdown.v1 import ladder_pb2_grpc
from ladder.grpc.auth import GrpcError, current_token_id, require_user
from ladder.grpc.boards import BoardsServicer
from ladder.grpc.bots import BotsServicer
from ladder.grpc.competitions import CompetitionsServicer
from ladder.grpc.matches import MatchesServicer
from ladder.grpc.play import PlayHub
from ladder.grpc.tournaments import TournamentsServicer


class LadderServicer(
    BotsServicer,
    BoardsServicer,
    MatchesServicer,
    TournamentsServicer,
    CompetitionsServicer,
    ladder_pb2_grpc.LadderServicer,
):
    """digdown.v1.Ladder over services and selectors (errors are mapped by CallGuard)."""

    def __init__(self, hub: PlayHub | None = None) -> None:
        self.hub = hub

    def Play(self, request_iterator: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        if self.hub is None:
            raise GrpcError(grpc.StatusCode.UNIMPLEMENTED, "this server holds no Play streams")
        token_id = current_token_id()
        assert token_id is not None  # Play is not a public method: the guard wants a token
        yield from self.hub.play(request_iterator, context, user=require_user(), token_id=token_id)

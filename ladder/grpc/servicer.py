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

from typing import Any

import grpc

from digdown.v1 import ladder_pb2_grpc
from ladder.grpc.auth import GrpcError
from ladder.grpc.boards import BoardsServicer
from ladder.grpc.bots import BotsServicer
from ladder.grpc.competitions import CompetitionsServicer
from ladder.grpc.matches import MatchesServicer
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

    def Play(self, request_iterator: Any, context: grpc.ServicerContext) -> Any:
        """Not served here: ``LadderServer`` serves Play as a coroutine (``play_call``)."""
        raise GrpcError(grpc.StatusCode.UNIMPLEMENTED, "Play is served by ladder.grpc.play_call")

"""Matches, their seats and the one recorded result; one module per model.

``MatchResult`` is a one-to-one row per match: the database itself refuses a
second result (aiarena's shape). Its auto-increment id is the order in which
results were recorded; ``rerate`` replays ratings in that order. ``OpponentTally``
keeps each bot's record against each opponent as counters, written with the result;
``TournamentTally`` and ``TournamentPairTally`` keep a tournament's standings the same way.

A match may belong to a tournament and to a duplicate deal: those models are
the tournaments app's (``ladder.tournaments.models``), referred to by name.
"""

from ladder.matches.models.match import Match
from ladder.matches.models.opponent import OpponentTally
from ladder.matches.models.result import MatchResult
from ladder.matches.models.seat import MatchSeat
from ladder.matches.models.tournament_tally import TournamentPairTally, TournamentTally

__all__ = [
    "Match",
    "MatchResult",
    "MatchSeat",
    "OpponentTally",
    "TournamentPairTally",
    "TournamentTally",
]

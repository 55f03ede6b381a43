"""Tournaments, version comparisons and duplicate deals; one module per model family.

A ``Deal`` is one dealt cave (a seed) played once per seat rotation of one
table (``ladder.tournaments.deals``): its matches share the seed and carry their
rotation index. Tournaments and version comparisons own their deals and
matches; their schedules, standings and statistics are computed by the pure
modules beside these (``formats``, ``standings``, ``comparison``).

These tables were created by the matches app and keep their names
(``db_table``), so moving the models here moved no row.
"""

from ladder.tournaments.models.comparison import VersionComparison
from ladder.tournaments.models.deal import Deal
from ladder.tournaments.models.tournament import Tournament, TournamentBye

__all__ = ["Deal", "Tournament", "TournamentBye", "VersionComparison"]

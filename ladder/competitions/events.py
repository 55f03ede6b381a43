"""Where a competition's news leaves this app: the hook for telling authors.

The notifications app (e-mail and signed webhooks, each user's choices) is not
part of this app; the lead connects it here. Each function is called once per
event, after the transaction that made the event has committed (the phase moved
by a conditional UPDATE, the final's result written under the competition's lock),
so whatever is hooked in here is told exactly once per event.
"""

from __future__ import annotations

import logging

from ladder.competitions.models import Competition

log = logging.getLogger("ladder.competitions.events")


def phase_changed(competition: Competition, phase: str) -> None:
    """``competition`` moved to ``phase`` (entry, frozen, final, finished).

    A no-op beyond a log line: the notify engineer's ``ladder.notifications`` hooks
    in here (tell the entrants' owners, and the subscribers of the competition).
    """
    log.info("competition %s (%s): phase %s", competition.pk, competition.name, phase)


def final_finished(competition: Competition) -> None:
    """``competition``'s final has its result (``competition.result``; entries' places).

    A no-op beyond a log line: the notify engineer's ``ladder.notifications`` hooks
    in here (tell every entrant's owner their place and the winner).
    """
    log.info("competition %s (%s): final finished", competition.pk, competition.name)

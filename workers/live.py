"""Spectators of a running match: the worker publishes its public view, a few decisions behind.

The match runner tells ``LivePublisher`` every decision (``run_match(on_decision=)``).
What it keeps is public only: the acting seat's observation, which is the same
for every seat apart from the seat number (``ladder.viewer.services.public_view``
drops that), and the events, which every bot is sent anyway. It publishes the
view of ``DELAY`` decisions ago, so the live page never runs ahead of the
table, and at most every ``MIN_INTERVAL_S`` seconds, so a fast match costs the
database a write a second, not one per decision. The first frame waits for
that interval too: a match over in under a second (most matches of quick
bots) had no spectator to show it to, and cost two writes and a conversion of
the view for nothing. A match with no frame of this attempt and none of an
earlier one has nothing to clear at the end either. A failure to publish
never touches the match: it is logged and the match plays on.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence

from digdown import wire
from digdown.v1 import engine_pb2, game_pb2
from ladder.viewer.services import live_frame_clear, live_frame_publish

log = logging.getLogger("workers.live")

DELAY = 3  # decisions the live view is behind the table
MIN_INTERVAL_S = 1.0
EVENTS_KEPT = 40  # events shown with each view (the newest)


class LivePublisher:
    """``on_decision`` for one match; ``close()`` when the match ends, whatever happened."""

    def __init__(
        self,
        match_id: int,
        *,
        delay: int = DELAY,
        interval_s: float = MIN_INTERVAL_S,
        earlier_attempts: bool = True,
    ):
        """``earlier_attempts`` False (a match's first claim): no frame can be there
        before this one publishes, so ``close`` has nothing to clear unless it did."""
        self.match_id = match_id
        self.interval_s = interval_s
        # The protos as the runner got them (never changed after), converted to the
        # page's dicts only for the one frame published: converting every decision's
        # observation and events cost more than the rest of the runner's loop.
        self._pending: deque[tuple[int, game_pb2.Observation, int, Sequence[game_pb2.Event]]] = (
            deque(maxlen=delay + 1)
        )
        self._last = time.monotonic()  # the first frame after one interval, as every next one
        self._broken = False
        self._published = earlier_attempts  # a frame may be there to clear at the end

    def __call__(self, decision: engine_pb2.Decision, events: Sequence[game_pb2.Event]) -> None:
        if self._broken:
            return
        first = max(0, len(events) - EVENTS_KEPT)
        self._pending.append((decision.ply, decision.observation, first, events[first:]))
        now = time.monotonic()
        if len(self._pending) < (self._pending.maxlen or 1) or now - self._last < self.interval_s:
            return
        ply, observation, first, kept = self._pending[0]
        self._last = now
        self._published = True
        try:
            live_frame_publish(
                match_id=self.match_id,
                ply=ply,
                observation=wire.observation_from_proto(observation),
                events=[[first + i, wire.event_from_proto(e)] for i, e in enumerate(kept)],
            )
        except Exception:
            self._broken = True  # spectators lose the view; the match is not affected
            log.exception("match %d: live view not published (no more tries)", self.match_id)

    def close(self) -> None:
        if not self._published:
            return
        try:
            live_frame_clear(match_id=self.match_id)
        except Exception:
            log.exception("match %d: live view not cleared", self.match_id)

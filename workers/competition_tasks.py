"""The competitions' beat task: move phases at their times, advance running finals."""

from __future__ import annotations

from django.conf import settings

from ladder.competitions.services import competitions_tick as tick
from workers.celery_app import app


@app.task(name=settings.LADDER_TASK_COMPETITIONS_TICK, soft_time_limit=60, time_limit=90)
def competitions_tick() -> dict[str, list[int]]:
    """Open entry, freeze, start finals whose time has come, and advance running finals.

    Exactly once however many beats run: every move is a conditional UPDATE guarded
    by the phase it leaves, every final step is taken under the competition's lock
    (``ladder.competitions.services``).
    """
    return tick()

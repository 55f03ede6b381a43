"""What spectators of a running match may see: its latest public view, a few decisions behind.

The worker playing a match writes it (``ladder.viewer.services.live_frame_publish``,
called from ``workers/live.py``); the live page reads it. One row per running
match, replaced in place, removed when the match ends (its full replay is then
the thing to watch). Only public information is ever stored here: a seat's
observation without the seat (every seat's observation is the same apart from
that) and the public events, never a face-down card, the cave or the seed.
"""

from __future__ import annotations

from django.db import models


class LiveFrame(models.Model):
    match = models.OneToOneField(
        "matches.Match", on_delete=models.CASCADE, primary_key=True, related_name="live_frame"
    )
    ply = models.PositiveIntegerField(help_text="Record entries played before this view.")
    view = models.JSONField(help_text="The public observation (no seat, no hidden face).")
    events = models.JSONField(help_text="The last public events, [index, event] pairs.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"live frame of match {self.match_id} at ply {self.ply}"

"""Writes of the viewer: the live frame of a running match (see ``ladder.viewer.models``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from digdown.types import Observation
from ladder.viewer.models import LiveFrame

# Keys of an observation that name the one seat it was made for; the rest is public.
SEAT_KEYS = ("seat",)


def public_view(observation: Mapping[str, Any]) -> dict[str, Any]:
    """A seat's observation as a spectator's view: what every seat could see, nothing more."""
    return {k: v for k, v in observation.items() if k not in SEAT_KEYS}


def live_frame_publish(
    *, match_id: int, ply: int, observation: Observation, events: list[list[Any]]
) -> None:
    """Replace the match's live frame (one row per running match; an UPSERT)."""
    LiveFrame.objects.update_or_create(
        match_id=match_id,
        defaults={"ply": ply, "view": public_view(observation), "events": events},
    )


def live_frame_clear(*, match_id: int) -> None:
    """The match ended (or stopped): its live frame goes; the replay is what remains."""
    LiveFrame.objects.filter(match_id=match_id).delete()

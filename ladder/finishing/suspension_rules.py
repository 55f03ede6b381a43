"""When to take a failing bot off the ladder: a pure decision over its recent seats.

Spectators should never see matches stall on a dead bot, and the other bots
should not farm rating from it. Only the bot's own failures count (a forfeit
or faults recorded against its seat); errored matches (infrastructure) never
reach this function. A new version or the owner lifts the suspension.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SeatRecord:
    """One finished match of the bot, newest first in the sequences below."""

    forfeited: bool
    faults: int
    reason: str = ""


@dataclass(frozen=True)
class SuspendPolicy:
    window: int = 10  # the last N finished matches looked at
    max_forfeits: int = 5  # forfeits within the window
    consecutive_forfeits: int = 3  # or this many forfeits in a row (newest first)
    max_faults: int = 20  # or this many faults within the window


def suspension_reason(recent: Sequence[SeatRecord], policy: SuspendPolicy) -> str | None:
    """Why the bot should be suspended, in words its owner can act on; None to keep it."""
    window = list(recent[: policy.window])
    if not window:
        return None
    last = next((r.reason for r in window if r.forfeited and r.reason), "")
    hint = f" (last: {last})" if last else ""
    streak = 0
    for record in window:
        if not record.forfeited:
            break
        streak += 1
    if streak >= policy.consecutive_forfeits:
        return f"forfeited its last {streak} matches{hint}"
    forfeits = sum(r.forfeited for r in window)
    if forfeits >= policy.max_forfeits:
        return f"forfeited {forfeits} of its last {len(window)} matches{hint}"
    faults = sum(r.faults for r in window)
    if faults >= policy.max_faults:
        return f"made {faults} faults in its last {len(window)} matches"
    return None

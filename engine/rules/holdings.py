"""What moves a seat's cards: torches paid and taken, loot secured or lost, elimination."""

from __future__ import annotations

from bisect import insort

from .phases import AT_BASE
from .table import Seat, Table


def take_torches(state: Table, seat: Seat, k: int) -> int:
    """Up to k torch cards from the supply into the seat's inventory; how many it got."""
    taken = state.supply[:k]
    del state.supply[:k]
    for t in taken:
        insort(seat.torches, t)
    return len(taken)


def pay_torches(
    state: Table, seat: Seat, k: int, *, from_stash: bool = False, to: Seat | None = None
) -> int:
    """Up to k torches from the seat's inventory (then its stash, if `from_stash`) to the
    supply, or to another seat's inventory; how many were paid."""
    paid = seat.torches[:k]
    del seat.torches[:k]
    if from_stash and len(paid) < k:
        more = seat.stash[: k - len(paid)]
        del seat.stash[: len(more)]
        paid += more
    for t in paid:
        insort(state.supply if to is None else to.torches, t)
    if paid and to is None:
        state.pending.append({"seat": seat.index, "amount": len(paid), "kind": "TORCH_PAID"})
    elif paid and to is not None:
        state.pending.append(
            {"seat": seat.index, "to_seat": to.index, "amount": len(paid), "kind": "TORCH_PAID"}
        )
    return len(paid)


def torches_held(seat: Seat, *, with_stash: bool) -> int:
    return len(seat.torches) + (len(seat.stash) if with_stash else 0)


def lose_loot(state: Table, seat: Seat) -> None:
    """The seat's unsecured loot goes to the box."""
    _move_unsecured(state, seat, "LOOT_LOST", state.box)


def secure_loot(state: Table, seat: Seat) -> None:
    """The seat's unsecured loot is secured: it reaches the inventory at the next base phase."""
    _move_unsecured(state, seat, "LOOT_SECURED", seat.secured)


def _move_unsecured(state: Table, seat: Seat, event: str, to: list[int]) -> None:
    if seat.unsecured:
        state.pending.append(
            {
                "seat": seat.index,
                "cards": [state.card_dicts[c] for c in seat.unsecured],
                "kind": event,
            }
        )
        to.extend(seat.unsecured)
        seat.unsecured = []


def eliminate(state: Table, seat: Seat, reason: str, when: int) -> None:
    """The seat is out of the game; everything it holds goes to the box."""
    seat.eliminated = True
    seat.elimination = when
    seat.reason = reason
    held = seat.torches + seat.items + seat.stash + seat.tools + seat.unsecured + seat.secured
    state.box.extend(held)
    seat.torches, seat.items, seat.stash, seat.tools = [], [], [], []
    seat.unsecured, seat.secured = [], []
    seat.active = set()
    seat.position = AT_BASE
    state.pending.append({"seat": seat.index, "reason": reason, "kind": "ELIMINATED"})

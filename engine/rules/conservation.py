"""Card conservation: where every card of the box is (rules §9.8)."""

from __future__ import annotations

from collections.abc import Iterable

from .table import Table


def card_places(state: Table) -> dict[int, str]:
    """Where every card of the box (120 in dd-1) is. Raises if a card is in two places or none."""
    places: dict[int, str] = {}

    def put(cards: Iterable[int], where: str) -> None:
        for c in cards:
            if c in places:
                raise AssertionError(f"card {c} is both in {places[c]} and {where}")
            places[c] = where

    for p, passage in enumerate(state.passages):
        put(passage, f"passage {p}")
    for seat in state.seats:
        s = seat.index
        put(seat.torches, f"seat {s} inventory")
        put(seat.items, f"seat {s} inventory")
        put(seat.stash, f"seat {s} stash")
        put(seat.tools, f"seat {s} tools")
        put(seat.unsecured, f"seat {s} unsecured loot")
        put(seat.secured, f"seat {s} secured loot")
    put(state.supply, "supply")
    for stack in state.exchange.values():
        put(stack, "exchange stack")
    put(state.box, "box")
    ids = state.ids
    put([t for t in ids.basic if t not in places], "out of play")
    put(ids.objectives, "table")
    put(ids.inventories, "table")
    put([ids.base, ids.decision], "table")
    missing = set(range(state.rules.box_cards)) - set(places)
    if missing:
        raise AssertionError(f"cards nowhere: {sorted(missing)}")
    return places

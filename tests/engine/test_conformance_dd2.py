"""Rules §11: each conformance example of ruleset dd-2 as its own test, and what stays dd-1's."""

from __future__ import annotations

from typing import Any

import pytest

from engine.rules import Action
from tests.engine.scenario import SeatSpec, play, scenario

CAVE = [["Zombie"], ["Spider"], ["Skeleton"], ["Lava"]]


def _by_seat(events: list[dict[str, Any]], kind: str) -> dict[int, list[str]]:
    return {e["seat"]: [c["name"] for c in e["cards"]] for e in events if e["kind"] == kind}


def _paid(events: list[dict[str, Any]]) -> list[tuple[int, int | None, int]]:
    """(payer, receiver or None for the supply, amount) of every TORCH_PAID."""
    return [(e["seat"], e.get("to_seat"), e["amount"]) for e in events if e["kind"] == "TORCH_PAID"]


@pytest.mark.parametrize(
    ("torches", "stash", "own_secured"),
    [(1, 0, False), (1, 1, True), (2, 0, True)],
)
def test_11_1_non_lead_return_pays_from_inventory_then_stash(torches, stash, own_secured):
    state = scenario(
        ruleset="dd-2",
        passages=CAVE,
        seats=[SeatSpec(), SeatSpec(torches=torches, stash=stash, unsecured=["Iron Ore"])],
    )
    supply = len(state.supply)
    events = play(state, "EXPLORE", "RETURN")
    paid = torches + stash if own_secured else 1
    assert (1, None, paid) in _paid(events)
    assert len(state.supply) == supply + paid
    assert not state.seats[1].torches and not state.seats[1].stash
    if own_secured:
        assert _by_seat(events, "LOOT_SECURED")[1] == ["Iron Ore"]
    else:
        assert _by_seat(events, "LOOT_LOST")[1] == ["Iron Ore"]
    state.card_places()


def test_11_2_riders_with_loot_pay_the_caller_a_torch_and_a_dirt_pile_pays_nothing():
    state = scenario(
        ruleset="dd-2",
        passages=CAVE,
        seats=[
            SeatSpec(torches=5),
            SeatSpec(torches=1, unsecured=["Gold Ore"]),
            SeatSpec(torches=0, stash=1, unsecured=["Coal Ore"]),
            SeatSpec(torches=3, unsecured=["Dirt"]),
        ],
    )
    events = play(state, "RETURN")  # the lead (seat 0) calls it
    assert _paid(events) == [(0, None, 2), (1, 0, 1), (2, 0, 1)]
    assert len(state.seats[0].torches) == 5 - 2 + 2  # the caller's inventory grew by 2
    assert len(state.seats[1].torches) == 0 and len(state.seats[2].stash) == 0
    assert len(state.seats[3].torches) == 3
    secured = _by_seat(events, "LOOT_SECURED")
    assert secured == {1: ["Gold Ore"], 2: ["Coal Ore"], 3: ["Dirt"]}
    assert not _by_seat(events, "LOOT_LOST")
    state.card_places()


def test_11_3_a_rider_holding_loot_with_no_torch_anywhere_loses_it():
    state = scenario(
        ruleset="dd-2",
        passages=CAVE,
        seats=[SeatSpec(), SeatSpec(torches=0, stash=0, unsecured=["Iron Ore", "Dirt"])],
    )
    events = play(state, "RETURN")
    assert _by_seat(events, "LOOT_LOST") == {1: ["Iron Ore", "Dirt"]}
    assert 1 not in _by_seat(events, "LOOT_SECURED")
    assert len(state.seats[0].torches) == 5 - 2
    state.card_places()


def test_11_4_torchless_lead_can_only_return_and_pays_from_its_stash():
    state = scenario(
        ruleset="dd-2",
        passages=CAVE,
        seats=[SeatSpec(torches=0, stash=2, unsecured=["Gold Ore"]), SeatSpec()],
    )
    assert state.legal_actions() == [Action("RETURN")]
    events = play(state, "RETURN")
    assert _paid(events)[0] == (0, None, 2)
    assert not state.seats[0].stash
    assert _by_seat(events, "LOOT_SECURED")[0] == ["Gold Ore"]


def test_explore_and_peek_are_paid_from_the_inventory_only():
    state = scenario(
        ruleset="dd-2",
        passages=CAVE,
        seats=[SeatSpec(torches=1, stash=3), SeatSpec(torches=0, stash=3)],
    )
    play(state, "EXPLORE", "CONTINUE")  # the lead pays its one inventory torch
    assert len(state.seats[0].torches) == 0 and len(state.seats[0].stash) == 3
    play(state, "MOVE 0")
    assert Action("PEEK") not in state.legal_actions()  # no torch in inventory
    play(state, "READY", "MOVE 1")
    assert Action("PEEK") not in state.legal_actions()


def test_a_four_seat_caller_gains_a_torch_when_three_riders_hold_loot():
    """The §11 'watch' case, as it is: 2 paid, 3 received."""
    state = scenario(
        ruleset="dd-2",
        passages=CAVE,
        seats=[SeatSpec(torches=2)] + [SeatSpec(torches=2, unsecured=["Iron Ore"])] * 3,
    )
    play(state, "RETURN")
    assert len(state.seats[0].torches) == 3


def test_dd1_riders_still_ride_free():
    state = scenario(
        ruleset="dd-1",
        passages=CAVE,
        seats=[
            SeatSpec(torches=1, stash=2, unsecured=["Gold Ore"]),
            SeatSpec(unsecured=["Coal Ore"]),
        ],
    )
    events = play(state, "RETURN")
    assert _paid(events) == [(0, None, 1)]  # the stash does not pay in dd-1
    assert _by_seat(events, "LOOT_LOST") == {0: ["Gold Ore"]}
    assert _by_seat(events, "LOOT_SECURED") == {1: ["Coal Ore"]}
    assert len(state.seats[1].torches) == 5 + 2  # paid nothing; the Coal Ore brought 2

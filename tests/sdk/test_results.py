"""digdown.results: the engine's Result dict, typed once and back, and what it refuses."""

from __future__ import annotations

import pytest

from digdown import wire
from digdown.results import EndReason, GameResult, ResultError, SeatEnd
from digdown.v1 import game_pb2


def engine_result() -> dict:
    msg = game_pb2.Result(reason="last_standing", winner=1, turns=7, rounds=2, ranks=[2, 1])
    msg.seats.add(seat=0, rank=2, faults=3, ended="forfeited", reason="third fault: timeout")
    msg.seats.add(seat=1, rank=1, loot_points=4, completed=["a"], objectives=1, ended="won")
    return wire.result_from_proto(msg)


def test_the_engines_result_round_trips() -> None:
    d = engine_result()
    typed = GameResult.from_dict(d, 2)
    assert typed.reason is EndReason.LAST_STANDING and typed.ranks == (2, 1)
    assert typed.seats[0].forfeited and typed.seats[0].faults == 3
    assert typed.seats[1].ended is SeatEnd.WON and typed.seats[1].loot_points == 4
    assert typed.to_dict() == d
    assert GameResult.from_dict(typed.to_dict()) == typed


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reason": "nope"}, "reason must be one of"),
        ({"winner": 5}, "winner must be a seat"),
        ({"winner": True}, "winner must be an integer"),
        ({"ranks": [1, 1, 1]}, "one rank per seat"),
        ({"ranks": [0, 1], "seats": []}, "between 1 and 2"),
        ({"seats": [{"seat": 7, "rank": 1}]}, "seat 7 is not in this match"),
        ({"seats": [{"seat": 0, "rank": 1}]}, "rank disagrees"),
        ({"seats": [{"seat": 0, "rank": 2, "ended": "exploded"}]}, "ended must be one of"),
        ({"seats": "x"}, "seats must be a list"),
    ],
)
def test_what_is_not_a_result_is_refused(change: dict, message: str) -> None:
    with pytest.raises(ResultError, match=message):
        GameResult.from_dict({**engine_result(), **change}, 2)


def test_a_seat_the_engine_said_nothing_of_has_its_rank() -> None:
    typed = GameResult.from_dict({"reason": "won", "winner": 0, "ranks": [1, 2]})
    assert [(s.seat, s.rank, s.ended) for s in typed.seats] == [(0, 1, None), (1, 2, None)]

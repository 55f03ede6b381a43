"""engine.timeline: a replay re-simulated into the viewer's per-step timeline, and verified.

Replays come from the engine's own session code (tests/support/replays.py), so
faults, forfeits and think times can be placed at chosen plies; what each seat
saw is rebuilt independently from the seed through the rules' public methods.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from engine.narrate import describe_event
from engine.rules import DD1, RULESETS, Action
from engine.timeline import TIMELINE_FORMAT, ReplayDocumentError, build_timeline
from tests.support.replays import inprocess_replay, state_at


def decode(
    timeline: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
    """The documented delta decoding (docs/replay-timeline.md), as viewer.js does it."""
    views, own, caves = [], [], []
    view: dict[str, Any] = {}
    seats: dict[str, Any] = {}
    cave: list[Any] = []
    for step in timeline["steps"]:
        view = dict(view)
        for k, v in step["view"].items():
            if v is None:
                view.pop(k, None)
            else:
                view[k] = v
        for k, patch in step.get("items", {}).items():
            items = list(view[k])
            for i, v in patch.items():
                items[int(i)] = v
            view[k] = items
        seats = step.get("seats", seats)
        cave = step.get("cave", cave)
        views.append(view)
        own.append(seats)
        caves.append(cave)
    return views, own, caves


def seat_view(view: dict[str, Any], own: dict[str, Any], seat: int) -> dict[str, Any]:
    out = dict(view)
    for k, v in own[str(seat)].items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


@pytest.fixture(scope="module")
def hardcore() -> dict[str, Any]:
    """4 seats, hardcore, with a fault, a third fault (forfeit) and slow decisions."""
    probe = inprocess_replay(seed=5, seats=4, difficulty="hardcore")
    asked = [i for i, d in enumerate(probe["decisions"]) if not d.get("forced")]
    # Three faults of the same seat: find three decisions of one seat early on.
    seat = probe["decisions"][asked[10]]["seat"]
    plies = [i for i in asked if probe["decisions"][i]["seat"] == seat][:3]
    return inprocess_replay(
        seed=5,
        seats=4,
        difficulty="hardcore",
        names=["alpha", "beta", "gamma", "delta"],
        faults={p: "timeout: no answer within 1.5 s" for p in plies},
        think_ms={asked[1]: 1500, asked[2]: 2500, plies[0]: 1700},
    )


def test_every_step_shows_exactly_what_each_seat_saw(hardcore: dict[str, Any]) -> None:
    timeline = build_timeline(hardcore)
    assert timeline["format"] == TIMELINE_FORMAT
    assert timeline["verification"] == {
        "ok": True,
        "first_difference": "",
        "event_index": -1,
        "decision": -1,
    }
    n = len(hardcore["decisions"])
    assert len(timeline["decisions"]) == n and len(timeline["steps"]) == n + 1
    views, own, caves = decode(timeline)
    state = state_at(hardcore, 0)
    for d in range(n + 1):
        for seat in range(4):
            assert seat_view(views[d], own[d], seat) == state.observation(seat), (d, seat)
        # The full view: the card ids still in each passage, faces from the card table.
        assert caves[d] == [list(p) for p in state.passages]
        if d < n:
            entry = hardcore["decisions"][d]
            if "fault" in entry:
                state.apply_default(entry["fault"])
            elif "forfeit" in entry:
                state.forfeit(entry["seat"], entry["forfeit"])
            elif entry.get("forced"):
                state.apply_forced()
            else:
                state.apply(Action.from_dict(entry["action"]))
    assert timeline["result"] == state.result == hardcore["result"]


def test_decisions_carry_legal_actions_choice_fault_time_and_bank(hardcore: dict[str, Any]) -> None:
    timeline = build_timeline(hardcore)
    faults = [d for d in timeline["decisions"] if d["kind"] == "fault"]
    assert len(faults) == 3 and len({d["seat"] for d in faults}) == 1
    for d in timeline["decisions"]:
        stored = hardcore["decisions"][d["d"]]
        state = None
        if d["kind"] == "action":
            assert d["legal"][d["chosen"]]["action"] == stored["action"]
            assert d["played"] == d["chosen"] and d["asked"] == (not stored["forced"])
        if d["kind"] == "fault":
            state = state_at(hardcore, d["d"])
            assert [a["action"] for a in d["legal"]] == [a.to_dict() for a in state.legal_actions()]
            assert d["chosen"] is None and d["fault_kind"] == "timeout"
            assert d["reason"] == stored["fault"]
        assert d["think_ms"] == stored["think_time_ms"]
    first, second, third = faults
    # Faults 1 and 2 play the rules' default action; the third forfeits the seat instead.
    for fault in (first, second):
        state = state_at(hardcore, fault["d"])
        assert fault["legal"][fault["played"]]["action"] == state.default_action().to_dict()
    assert third["played"] is None
    followed = [e for e in timeline["events"] if e["d"] == third["d"]]
    assert [e["kind"] for e in followed][:2] == ["FAULT", "FORFEIT"]
    # The bank: 30 s, minus overruns of the 1 s deadline; a timeout empties it.
    asked = [d for d in timeline["decisions"] if d["asked"]]
    assert (asked[1]["think_ms"], asked[2]["think_ms"]) == (1500, 2500)
    assert asked[1]["bank_left_ms"] <= 29500 and asked[2]["bank_left_ms"] <= 28500
    assert first["bank_left_ms"] == 0
    by_seat: dict[int, int] = {}
    for d in timeline["decisions"]:
        if d["kind"] == "fault":
            by_seat[d["seat"]] = 0
        elif d["asked"]:
            by_seat[d["seat"]] = max(
                0, by_seat.get(d["seat"], 30000) - max(0, d["think_ms"] - 1000)
            )
        assert d["bank_left_ms"] == by_seat.get(d["seat"], 30000) or not d["asked"]


def test_events_in_words_and_the_event_log(hardcore: dict[str, Any]) -> None:
    timeline = build_timeline(hardcore)
    events = timeline["events"]
    assert [e["event"] for e in events] == hardcore["events"]
    for e in events:
        assert e["text"] and not e["text"].startswith(f"{e['kind']}:"), e
    # Every event belongs to the decision whose span produced it (-1: before the first one).
    for d in timeline["decisions"]:
        start, count = d["events"]
        assert {events[i]["d"] for i in range(start, start + count)} == {d["d"]}
    assert {e["d"] for e in events[: timeline["decisions"][0]["events"][0]]} == {-1}
    assert "alpha (seat 0)" in " ".join(e["text"] for e in events)
    # Rounds start where the round number changes, first at decision 0.
    rounds = timeline["rounds"]
    assert rounds[0] == {"round": 1, "decision": 0}
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    # Card faces of the full view are the engine's (enchantments included).
    for e in events:
        card = e["event"].get("card")
        if card:
            assert timeline["cards"][card["id"]] == card


def test_unknown_event_kinds_still_read() -> None:
    text = describe_event({"kind": "QUAKE", "passage": 2, "amount": 3}, str)
    assert text == "QUAKE: passage 2, amount 3."


def test_ruleset_comes_from_the_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay of another ruleset is re-simulated under that ruleset, not dd-1."""
    variant = dataclasses.replace(DD1, id="dd-test", hearts=2)
    monkeypatch.setitem(RULESETS, "dd-test", variant)
    doc = inprocess_replay(seed=3, seats=2)
    assert doc["ruleset"] == "dd-1"
    other = copy.deepcopy(doc)
    other["ruleset"] = other["config"]["ruleset"] = "dd-test"
    # The dd-1 events do not fit 2 hearts: the difference is reported, under dd-test.
    timeline = build_timeline(other)
    assert timeline["replay"]["ruleset"] == "dd-test"
    views, _, _ = decode(timeline)
    assert views[0]["hearts"] == 2 and views[0]["ruleset"] == "dd-test"
    monkeypatch.delitem(RULESETS, "dd-test")
    gone = build_timeline(other)
    assert not gone["verification"]["ok"] and gone["steps"] == []
    assert "unknown ruleset 'dd-test'" in gone["verification"]["first_difference"]


def _first(doc: dict[str, Any], kind: str, after: int = 0) -> int:
    return next(
        i for i, d in enumerate(doc["decisions"])
        if i > after and d.get("action", {}).get("kind") == kind and not d.get("forced")
    )  # fmt: skip


def test_a_tampered_event_cuts_the_timeline_before_its_decision() -> None:
    doc = inprocess_replay(seed=9, seats=3)
    d = _first(doc, "MOVE", after=20)
    first_event = doc["decisions"][d]["first_event"]
    doc["events"][first_event]["passage"] = (doc["events"][first_event]["passage"] + 1) % 4
    timeline = build_timeline(doc)
    v = timeline["verification"]
    assert not v["ok"] and v["decision"] == d and v["event_index"] == first_event
    assert f"event {first_event} (MOVE vs MOVE) differs: passage" in v["first_difference"]
    assert len(timeline["decisions"]) == d and len(timeline["steps"]) == d + 1
    assert len(timeline["events"]) == first_event and timeline["result"] is None


def test_a_tampered_action_does_not_re_simulate() -> None:
    doc = inprocess_replay(seed=9, seats=3)
    d = _first(doc, "MOVE", after=20)
    doc["decisions"][d]["action"] = {"kind": "COMMIT", "tool_id": 999}
    v = build_timeline(doc)["verification"]
    assert not v["ok"] and v["decision"] == d and v["event_index"] == -1
    assert v["first_difference"].startswith(f"decision {d} (seat ")
    assert "cannot be re-simulated" in v["first_difference"]


def test_a_tampered_result_shows_the_whole_game_but_does_not_verify() -> None:
    doc = inprocess_replay(seed=9, seats=3)
    doc["result"]["ranks"] = list(reversed(doc["result"]["ranks"]))
    timeline = build_timeline(doc)
    v = timeline["verification"]
    assert not v["ok"] and v["first_difference"].startswith("result differs: ranks")
    assert len(timeline["decisions"]) == len(doc["decisions"]) == v["decision"]
    assert timeline["result"]["ranks"] == list(reversed(doc["result"]["ranks"]))


def test_missing_decisions_and_a_cave_that_is_not_a_deal() -> None:
    doc = inprocess_replay(seed=9, seats=3)
    short = copy.deepcopy(doc)
    del short["decisions"][-3:]
    v = build_timeline(short)["verification"]
    assert not v["ok"] and "re-simulation" in v["first_difference"]
    cave = copy.deepcopy(doc)
    cave["cave"][0][0] = cave["cave"][1][0]
    timeline = build_timeline(cave)
    assert timeline["steps"] == [] and timeline["decisions"] == []
    assert timeline["verification"]["first_difference"].startswith("cannot set up the game:")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="digdown-replay/9"), "not a digdown-replay/1 document"),
        (lambda d: d.pop("cave"), "'cave' is missing"),
        (lambda d: d.update(decisions={"a": 1}), "'decisions' is missing or not a list"),
        (lambda d: d["decisions"].append({"seat": 0}), "has no action, fault or forfeit"),
        (lambda d: d["events"].append(7), "every replay event must be an object"),
    ],
)
def test_not_a_replay_at_all(change: Any, message: str) -> None:
    doc = inprocess_replay(seed=2, seats=2)
    change(doc)
    with pytest.raises(ReplayDocumentError, match=message):
        build_timeline(doc)
    with pytest.raises(ReplayDocumentError, match="a replay is a JSON object"):
        build_timeline([])  # type: ignore[arg-type]


def test_a_forfeit_of_a_seat_that_is_not_acting() -> None:
    doc = inprocess_replay(seed=4, seats=3, forfeits={6: 0})
    timeline = build_timeline(doc)
    assert timeline["verification"]["ok"]
    forfeit = timeline["decisions"][6]
    assert (forfeit["kind"], forfeit["seat"], forfeit["asked"]) == ("forfeit", 0, False)
    assert forfeit["reason"] == "dead: test forfeit at ply 6"
    acting = state_at(doc, 6).acting_seat
    assert (forfeit["legal"] == []) == (acting != 0)
    assert json.dumps(timeline)  # plain JSON all the way down


def test_a_bank_the_runner_stored_wins_over_the_derived_one() -> None:
    doc = inprocess_replay(seed=4, seats=2, think_ms={3: 1800})
    derived = build_timeline(doc)["decisions"][3]
    assert derived["bank_left_ms"] == 30000 - 800
    doc["decisions"][3]["bank_left_ms"] = 12345
    del doc["time_control"]
    assert build_timeline(doc)["decisions"][3]["bank_left_ms"] == 12345
    assert build_timeline(doc)["decisions"][4]["bank_left_ms"] is None

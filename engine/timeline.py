"""A replay as a per-step timeline for the replay viewer (docs/replay-timeline.md).

The viewer never knows the rules: this module re-simulates the replay's
decisions on the engine library, step by step, and writes down everything a
person watching needs — at every decision the acting seat, its legal actions,
what it chose (or the fault and the default played), time and bank, the
events in words; at every step what every seat could see and the whole dealt
cave. On the way it verifies the replay the way `Engine.VerifyReplay` does
(`engine.verify.first_difference`), and a replay that does not verify is cut
at the first decision that departs from it and says why, never shown as if it
were fine.

Pure apart from its input: no I/O, no Django, no clock. The ruleset is the
replay's own (`config.ruleset`), whatever the engine's default is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from engine.narrate import describe_action, describe_event
from engine.rules import ENGINE_VERSION, RECORD_FORMAT, Action, State
from engine.rules.record import apply_entry, state_from_record_setup
from engine.rules.shapes import Card, Event, Result
from engine.verify import first_difference

TIMELINE_FORMAT = "digdown-timeline/1"
REPLAY_FORMAT = "digdown-replay/1"
ENTRY_KINDS = ("action", "fault", "forfeit")
_LABEL_CHARS = 60  # bot names come from untrusted replays: keep labels short
_ABSENT = object()


class Verification(TypedDict):
    """Whether the replay re-simulated to its stored events and result, and where not."""

    ok: bool
    first_difference: str  # "" when ok
    event_index: int  # -1 when ok, or when only the result differs
    decision: int  # the first decision that differs, -1 when ok


class TimelineSeat(TypedDict):
    seat: int
    bot: str
    label: str


class TimelineEvent(TypedDict):
    """One event of the game, in words, with the decision that caused it (-1: the setup)."""

    d: int
    kind: str
    seat: int
    text: str
    event: Event


class ReplaySetting(TypedDict):
    ruleset: str
    engine_version: str
    runner_version: str
    config: dict[str, Any]
    time_control: dict[str, Any] | None


class TimelineDocument(TypedDict):
    """A `digdown-timeline/1` document (docs/replay-timeline.md): what the viewer plays."""

    format: str
    engine_version: str
    replay: ReplaySetting
    seats: list[TimelineSeat]
    verification: Verification
    cards: list[Card]
    observation_keys: list[str]
    decisions: list[dict[str, Any]]
    events: list[TimelineEvent]
    steps: list[dict[str, Any]]  # each the change since the step before
    rounds: list[dict[str, int]]
    result: Result | None
    sha256: NotRequired[str]  # the replay file's, set by the ladder's viewer that serves it


class ReplayDocumentError(ValueError):
    """Not a replay document at all (wrong format, missing or mistyped keys)."""


def build_timeline(doc: Mapping[str, Any]) -> TimelineDocument:
    """The timeline of one replay document (a `digdown-replay/1` dict, as read from its file).

    Raises ReplayDocumentError for something that is not a replay; a replay
    that does not re-simulate to its stored events and result gives a timeline
    whose `verification.ok` is false, cut before the first decision that differs.
    """
    _check_document(doc)
    names = _seat_names(doc)
    builder = _Builder(doc, names)
    return builder.build()


# --------------------------------------------------------------------------- input


def _check_document(doc: Any) -> None:
    if not isinstance(doc, Mapping):
        raise ReplayDocumentError(f"a replay is a JSON object, not {type(doc).__name__}")
    if doc.get("format") != REPLAY_FORMAT:
        raise ReplayDocumentError(f"not a {REPLAY_FORMAT} document (format {doc.get('format')!r})")
    expected: dict[str, type | tuple[type, ...]] = {
        "ruleset": str,
        "config": Mapping,
        "cave": list,
        "first_lead": int,
        "decisions": list,
        "events": list,
        "result": Mapping,
    }
    for key, kind in expected.items():
        if not isinstance(doc.get(key), kind):
            what = getattr(kind, "__name__", "value")
            raise ReplayDocumentError(f"replay key {key!r} is missing or not a {what}")
    for i, d in enumerate(doc["decisions"]):
        if not isinstance(d, Mapping) or not any(k in d for k in ENTRY_KINDS):
            raise ReplayDocumentError(f"decision {i} has no action, fault or forfeit")
    if not all(isinstance(e, Mapping) for e in doc["events"]):
        raise ReplayDocumentError("every replay event must be an object")


def record_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The engine record inside a replay document (as `wire.replay_to_record` reads it)."""
    entries = []
    for d in doc["decisions"]:
        kind = next(k for k in ENTRY_KINDS if k in d)
        entry: dict[str, Any] = {"seat": d.get("seat"), kind: d[kind]}
        if kind == "action":
            entry["forced"] = bool(d.get("forced", False))
        entries.append(entry)
    return {
        "format": doc.get("record_format") or RECORD_FORMAT,
        "ruleset": doc["ruleset"],
        "engine_version": doc.get("engine_version", ""),
        "config": dict(doc["config"]),
        "cave": doc["cave"],
        "sleeved": doc.get("sleeved", []),
        "first_lead": doc["first_lead"],
        "entries": entries,
    }


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _seat_names(doc: Mapping[str, Any]) -> dict[int, str]:
    names: dict[int, str] = {}
    for s in doc.get("seats") or []:
        if isinstance(s, Mapping) and isinstance(s.get("seat"), int):
            names[s["seat"]] = str(s.get("bot") or "")[:_LABEL_CHARS]
    return names


def _faults_by_ply(doc: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    faults = doc.get("faults") or []
    return {f["ply"]: f for f in faults if isinstance(f, Mapping) and isinstance(f.get("ply"), int)}


# --------------------------------------------------------------------------- building


class _Builder:
    """One pass over the decisions, collecting decisions, steps and events."""

    def __init__(self, doc: Mapping[str, Any], names: dict[int, str]) -> None:
        self.doc = doc
        self.names = names
        self.tool_names: dict[int, str] = {}
        self.decisions: list[dict[str, Any]] = []
        self.spans: list[tuple[int, int]] = []
        self.steps: list[tuple[dict[str, Any], dict[str, dict[str, Any]], list[list[int]]]] = []
        tc = doc.get("time_control")
        self.decision_ms = _int(tc.get("decision_ms"), -1) if isinstance(tc, Mapping) else -1
        bank_ms = _int(tc.get("bank_ms"), -1) if isinstance(tc, Mapping) else -1
        self.bank: dict[int, int] | None = None if bank_ms < 0 or self.decision_ms < 0 else {}
        self.bank_ms = bank_ms
        self.faults = _faults_by_ply(doc)
        self.num_seats = 0

    def seat_label(self, seat: Any) -> str:
        if not isinstance(seat, int) or seat < 0:
            return "nobody"
        name = self.names.get(seat, "")
        return f"{name} (seat {seat})" if name else f"seat {seat}"

    def tool_label(self, tool_id: Any) -> str:
        return self.tool_names.get(tool_id, f"tool {tool_id}")

    # --- the pass ---------------------------------------------------------------

    def build(self) -> TimelineDocument:
        record = record_of(self.doc)
        try:
            state = state_from_record_setup(record)
            state.card_places()  # the dealt cave must be a deal of this ruleset's cards
        except Exception as exc:  # a hostile or corrupt setup is a verdict, not a crash
            return self._output(None, (0, f"cannot set up the game: {exc}", -1))
        self.num_seats = state.observation(0)["num_seats"]
        self._snapshot(state)
        failure: tuple[int, str] | None = None
        for d, entry in enumerate(record["entries"]):
            try:
                self._decide(state, d, entry)
            except Exception as exc:
                failure = (d, f"decision {d} ({_entry_text(entry)}) cannot be re-simulated: {exc}")
                break
            self._snapshot(state)
        return self._output(state, self._verdict(state, failure))

    def _decide(self, state: State, d: int, entry: dict[str, Any]) -> None:
        view = self.steps[-1][0]
        acting = state.acting_seat
        seat = entry.get("seat")
        kind = next(k for k in ENTRY_KINDS if k in entry)
        legal: list[Action] = list(state.legal_actions()) if seat == acting else []
        default = state.default_action() if kind == "fault" and seat == acting else None
        start = len(state.log)
        events = apply_entry(state, entry)
        self.spans.append((start, len(events)))
        stored = self.doc["decisions"][d]
        think_ms = _int(stored.get("think_time_ms"))
        chosen = played = None
        if kind == "action":
            chosen = played = legal.index(Action.from_dict(entry["action"]))
        elif default is not None and not any(
            e.get("kind") == "FORFEIT" and e.get("seat") == seat for e in events
        ):
            played = legal.index(default)
        fault = self.faults.get(d, {})
        forced = kind == "action" and bool(entry.get("forced"))
        self.decisions.append(
            {
                "d": d,
                "seat": seat,
                "kind": kind,
                "round": view.get("round"),
                "turn": view.get("turn"),
                "phase": view.get("phase"),
                "legal": [
                    {
                        "action": a.to_dict(),
                        "text": describe_action(a.to_dict(), self.seat_label, self.tool_label),
                    }
                    for a in legal
                ],
                "chosen": chosen,
                "played": played,
                "forced": forced,
                "asked": kind == "fault" or (kind == "action" and not forced),
                "reason": str(entry.get(kind, "")) if kind != "action" else "",
                "fault_kind": str(fault.get("kind", "")) if kind != "action" else "",
                "think_ms": think_ms,  # what the time control charged (wall or CPU time)
                # Measured beside it by the runner (asked decisions; cpu_ms: hosted seats).
                "wall_ms": _int(stored["wall_ms"]) if "wall_ms" in stored else None,
                "cpu_ms": _int(stored["cpu_ms"]) if "cpu_ms" in stored else None,
                "bank_left_ms": self._spend_bank(seat, think_ms, forced, fault, stored),
                "events": [start, len(events)],
            }
        )

    def _spend_bank(
        self,
        seat: Any,
        think_ms: int,
        forced: bool,
        fault: Mapping[str, Any],
        stored: Mapping[str, Any],
    ) -> int | None:
        """The seat's bank after this decision, as the runner spends it (overruns only).

        The runner's own figure when the replay stores one per decision
        (`bank_left_ms`); else derived from the stored think times and time
        control, to the millisecond, a timeout fault emptying the bank as the
        runner does.
        """
        if not isinstance(seat, int):
            return None
        if isinstance(stored.get("bank_left_ms"), int):
            if self.bank is not None:
                self.bank[seat] = stored["bank_left_ms"]
            return int(stored["bank_left_ms"])
        if self.bank is None:
            return None
        left = self.bank.get(seat, self.bank_ms)
        if fault.get("kind") == "timeout":
            left = 0
        elif not forced and think_ms > self.decision_ms:
            left = max(0, left - (think_ms - self.decision_ms))
        self.bank[seat] = left
        return left

    def _snapshot(self, state: State) -> None:
        """The step now: what every seat sees (shared keys + per-seat ones) and the cave."""
        seen: list[Mapping[str, Any]] = [state.observation(s) for s in range(self.num_seats)]
        first = seen[0]
        keys = list(first) + [k for o in seen[1:] for k in o if k not in first]
        differ = {k for o in seen[1:] for k in keys if o.get(k, _ABSENT) != first.get(k, _ABSENT)}
        common = {k: first[k] for k in keys if k not in differ}
        own = {str(s): {k: o.get(k) for k in keys if k in differ} for s, o in enumerate(seen)}
        for player in common.get("players", first.get("players", [])):
            for tool in player.get("tools", []):
                self.tool_names.setdefault(tool["id"], f"{tool['name']} ({tool['strength']})")
        self.steps.append((common, own, _cave_now(state)))

    # --- verification -------------------------------------------------------------

    def _verdict(
        self, state: State, failure: tuple[int, str] | None
    ) -> tuple[int, str, int] | None:
        """(decision to cut at, why, event index or -1) of the first difference, or None.

        A stored event that differs from what was re-simulated comes first (it
        happened earlier); then a decision that could not be applied; then a
        stored replay with more events than the re-simulation, or another result.
        """
        try:
            diff = first_difference(
                list(self.doc["events"]), dict(self.doc["result"]), state.log, state.result
            )
        except Exception as exc:  # stored events or result the wire cannot even read
            return 0, f"the stored events or result cannot be read: {exc}", -1
        if diff is not None and 0 <= diff[0] < len(state.log):
            return self._decision_of_event(diff[0]), diff[1], diff[0]
        if failure is not None:
            return failure[0], failure[1], -1
        if diff is not None:
            return len(self.decisions), diff[1], diff[0]
        return None

    def _setup_events(self, state: State) -> int:
        """How many events came before the first decision (game start, round 1, turn 1)."""
        return self.spans[0][0] if self.spans else len(state.log)

    def _decision_of_event(self, index: int) -> int:
        """The decision whose events include event `index` (0 for the setup's events)."""
        for d, (start, count) in enumerate(self.spans):
            if start <= index < start + count:
                return d
        return 0

    # --- output -------------------------------------------------------------------

    def _output(
        self, state: State | None, verdict: tuple[int, str, int] | None
    ) -> TimelineDocument:
        cut = len(self.decisions) if verdict is None else min(verdict[0], len(self.decisions))
        steps = self.steps[: cut + 1]
        events: list[TimelineEvent] = []
        if state is not None:
            end = sum(self.spans[cut - 1]) if cut else self._setup_events(state)
            owner = [-1] * self._setup_events(state)
            for d, (_, count) in enumerate(self.spans[:cut]):
                owner.extend([d] * count)
            events = [
                {
                    "d": owner[i],
                    "kind": e.get("kind"),
                    "seat": e["seat"] if isinstance(e.get("seat"), int) else -1,
                    "text": describe_event(e, self.seat_label, self.tool_label),
                    "event": e,
                }
                for i, e in enumerate(state.log[:end])
            ]
        reached_end = state is not None and state.is_over and cut == len(self.decisions)
        tc = self.doc.get("time_control")
        return {
            "format": TIMELINE_FORMAT,
            "engine_version": ENGINE_VERSION,
            "replay": {
                "ruleset": self.doc["ruleset"],
                "engine_version": str(self.doc.get("engine_version", "")),
                "runner_version": str(self.doc.get("runner_version", "")),
                "config": dict(self.doc["config"]),
                "time_control": dict(tc) if isinstance(tc, Mapping) else None,
            },
            "seats": [
                {"seat": s, "bot": self.names.get(s, ""), "label": self.seat_label(s)}
                for s in range(_seat_count(steps, self.doc))
            ],
            "verification": {
                "ok": verdict is None,
                "first_difference": "" if verdict is None else verdict[1],
                "event_index": -1 if verdict is None else verdict[2],
                "decision": -1 if verdict is None else cut,
            },
            "cards": _cards_of(state) if state is not None else [],
            "observation_keys": _observation_keys(steps),
            "decisions": self.decisions[:cut],
            "events": events,
            "steps": _encode_steps(steps),
            "rounds": _rounds(steps),
            "result": state.result if reached_end and state is not None else None,
        }


def _observation_keys(steps: Sequence[tuple[dict[str, Any], dict[str, Any], Any]]) -> list[str]:
    """The engine's key order of an observation, so a seat's view reads as it was sent."""
    if not steps:
        return []
    view, own, _ = steps[0]
    return list(view) + [k for k in own.get("0", {}) if k not in view]


def _seat_count(steps: Sequence[Any], doc: Mapping[str, Any]) -> int:
    if steps:
        return int(steps[0][0].get("num_seats") or len(steps[0][1]))
    n = doc["config"].get("num_seats")
    return n if isinstance(n, int) and 0 < n <= 4 else 0


def _entry_text(entry: Mapping[str, Any]) -> str:
    if "action" in entry:
        try:
            return f"seat {entry.get('seat')} {Action.from_dict(entry['action'])}"
        except Exception:
            return f"seat {entry.get('seat')} {entry['action']!r}"[:200]
    kind = "fault" if "fault" in entry else "forfeit"
    return f"seat {entry.get('seat')} {kind}"


def _cave_now(state: State) -> list[list[int]]:
    """The card ids still in each passage, bottom to top: the full view's cave."""
    return [list(p) for p in state.passages]


def _cards_of(state: State) -> list[Card]:
    """Every cave card's face in this game (enchantments included), by card id."""
    return [state.card_dicts[c].copy() for c in range(len(state.card_dicts))]


def _encode_steps(
    steps: Sequence[tuple[dict[str, Any], dict[str, dict[str, Any]], list[list[int]]]],
) -> list[dict[str, Any]]:
    """Each step as what changed since the step before (docs/replay-timeline.md)."""
    out = []
    prev_view: dict[str, Any] = {}
    prev_own: dict[str, dict[str, Any]] | None = None
    prev_cave: list[list[int]] | None = None
    for view, own, cave in steps:
        delta: dict[str, Any] = {}
        items: dict[str, dict[str, Any]] = {}
        for k, v in view.items():
            old = prev_view.get(k)
            if k in prev_view and old == v:
                continue
            if isinstance(v, list) and isinstance(old, list) and len(v) == len(old):
                items[k] = {
                    str(i): x for i, (x, y) in enumerate(zip(v, old, strict=True)) if x != y
                }
            else:
                delta[k] = v
        delta.update({k: None for k in prev_view if k not in view})
        step: dict[str, Any] = {"view": delta}
        if items:
            step["items"] = items
        if own != prev_own:
            step["seats"] = own
        if cave != prev_cave:
            step["cave"] = cave
        out.append(step)
        prev_view, prev_own, prev_cave = view, own, cave
    return out


def _rounds(steps: Sequence[tuple[dict[str, Any], Any, Any]]) -> list[dict[str, int]]:
    """Where each round starts: the first step (= decision index) showing that round."""
    rounds: list[dict[str, int]] = []
    for d, (view, _, _) in enumerate(steps):
        r = view.get("round")
        if isinstance(r, int) and (not rounds or rounds[-1]["round"] != r):
            rounds.append({"round": r, "decision": d})
    return rounds

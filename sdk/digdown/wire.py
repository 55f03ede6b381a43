"""Adapter between the rules engine's plain dicts and the `digdown.v1` proto messages.

The engine's dict keys are the proto field names (docs/engine-api.md), so most
conversions are generic: `parse` / `to_dict`, on the fast converters of
`digdown.proto_codec` (same results as `json_format.ParseDict` / `MessageToDict`,
several times faster). Only three shapes differ and are handled by hand here:

- an action is `{"kind": KIND, ...args}` in the engine but a `oneof` of one
  message per kind in the proto (the oneof keeps other languages type-safe);
- a record's `cave` is a list of lists (a proto cannot nest repeated fields);
- a record entry's action is an action (see the first point).

`int64` fields come back as ints (not as ProtoJSON's strings), so that
dict -> proto -> dict is the identity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.message import Message

from digdown.proto_codec import _parse_fast, dict_to_message, message_to_dict
from digdown.proto_codec import dict_to_message as _fast_dict_to_message
from digdown.types import ACTION_ARGS, Action, Event, GameConfig, Observation, Result
from digdown.v1 import game_pb2

M = TypeVar("M", bound=Message)

REPLAY_FORMAT = "digdown-replay/1"
"""The replay file's format (docs/replay-format.md): what the engine writes and readers check."""
RECORD_FORMAT = "digdown-record/1"
"""The engine's record format; ``engine.rules`` produces it (a test keeps the two equal,
as this package may not import the engine)."""


class WireError(ValueError):
    """A message or dict that cannot be converted; the message says what is wrong."""


# Action kind -> (field of the `Action.kind` oneof, its argument names). The field is the
# kind in lower case except where that is a keyword of some language (game.proto).
_ONEOF_FIELD = {"CONTINUE": "continue_exploring", "RETURN": "return_to_base"}
ACTION_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    kind: (_ONEOF_FIELD.get(kind, kind.lower()), args) for kind, args in ACTION_ARGS.items()
}
FIELD_KINDS: dict[str, str] = {field: kind for kind, (field, _) in ACTION_FIELDS.items()}


# --- actions ------------------------------------------------------------------


def action_to_proto(action: object) -> game_pb2.Action:
    """Engine action (dict, or anything with `to_dict()`) -> `Action` message."""
    msg = game_pb2.Action()
    action_into(action, msg)
    return msg


def action_into(action: object, msg: game_pb2.Action) -> None:
    """`action_to_proto` written into the empty ``msg`` (a field of a response, or an
    element just added to a repeated field), which then needs no copy."""
    d = action.to_dict() if hasattr(action, "to_dict") else action
    if not isinstance(d, dict):
        raise WireError(f"an action is a dict with a 'kind', got {type(d).__name__}")
    kind = d.get("kind")
    if kind not in ACTION_FIELDS:
        raise WireError(f"unknown action kind {kind!r}")
    field, args = ACTION_FIELDS[kind]
    sub = getattr(msg, field)
    sub.SetInParent()
    for name in args:
        if d.get(name) is None:
            raise WireError(f"{kind} needs {name!r}")
        try:
            setattr(sub, name, d[name])
        except (TypeError, ValueError) as exc:
            raise WireError(f"{kind}.{name}: {exc}") from None


def actions_into(
    actions: Sequence[object], field: RepeatedCompositeFieldContainer[game_pb2.Action]
) -> None:
    """`actions_to_proto` appended to a repeated ``field``, each built in its element (an
    extend copies every message it is given)."""
    for a in actions:
        action_into(a, field.add())


def action_from_proto(msg: game_pb2.Action) -> Action:
    """`Action` message -> engine action dict; WireError when no kind is set."""
    field = msg.WhichOneof("kind")
    if field is None:
        raise WireError("the action has no kind set (exactly one field of Action.kind must be set)")
    kind = FIELD_KINDS[field]
    sub = getattr(msg, field)
    d: dict[str, Any] = {"kind": kind}
    for name in ACTION_FIELDS[kind][1]:
        d[name] = getattr(sub, name)
    return cast(Action, d)


def actions_to_proto(actions: Sequence[object]) -> list[game_pb2.Action]:
    """A list of engine actions -> `Action` messages, order kept."""
    return [action_to_proto(a) for a in actions]


# --- generic dict <-> message ---------------------------------------------------


def parse(d: Mapping[str, object], msg_cls: type[M]) -> M:
    """Dict with proto field names -> message; unknown keys are an error (catches drift)."""
    try:
        return dict_to_message(d, msg_cls)
    except (json_format.ParseError, TypeError, ValueError, AttributeError) as exc:
        raise WireError(f"cannot read {msg_cls.DESCRIPTOR.name}: {exc}") from None


def parse_into(d: Mapping[str, object], msg: Message) -> None:
    """`parse` written into the empty ``msg`` (a field of a response), which then needs no
    copy: the fast path is the constructor's own (``__init__`` with the same keywords),
    so the bytes are those of ``parse``'s message (map entries in the same order)."""
    if dict_to_message is _fast_dict_to_message and _parse_fast(cast(Descriptor, msg.DESCRIPTOR)):
        try:
            msg.__init__(**d)  # type: ignore[misc]
            return
        except Exception:
            pass  # whatever upb refuses, parse has the last word (CopyFrom clears first)
    msg.CopyFrom(parse(d, type(msg)))


def to_dict(msg: Message) -> dict[str, Any]:
    """Message -> dict with proto field names, default scalars included, int64 as int.

    Fields with explicit presence (`optional`, message fields) appear only when
    set, which is exactly the engine's "absent" convention (`top`, `resolution`).
    """
    return message_to_dict(msg)


# --- the engine's data, one function per shape -----------------------------------------


def config_to_proto(d: Mapping[str, object]) -> game_pb2.GameConfig:
    """GameConfig dict -> message."""
    return parse(d, game_pb2.GameConfig)


def config_from_proto(msg: game_pb2.GameConfig) -> GameConfig:
    """GameConfig message -> dict (ruleset defaults to "dd-1" when empty)."""
    d = to_dict(msg)
    d["ruleset"] = d.get("ruleset") or "dd-1"
    return cast(GameConfig, d)


def observation_to_proto(d: Mapping[str, object]) -> game_pb2.Observation:
    """Observation dict -> message."""
    return parse(d, game_pb2.Observation)


def observation_from_proto(msg: game_pb2.Observation) -> Observation:
    """Observation message -> dict (as `State.observation` returns it)."""
    return cast(Observation, to_dict(msg))


_EVENT_LISTS = ("cards", "ranks")


def event_to_proto(d: Mapping[str, object]) -> game_pb2.Event:
    """Event dict -> message."""
    return parse(d, game_pb2.Event)


def event_from_proto(msg: game_pb2.Event) -> Event:
    """Event message -> flat dict with only the keys its kind uses.

    Scalars have explicit presence so they survive even when 0; repeated fields
    cannot, so an empty `cards`/`ranks` list is left out.
    """
    d = to_dict(msg)
    for key in _EVENT_LISTS:
        if not d.get(key):
            d.pop(key, None)
    return cast(Event, d)


def events_to_proto(events: Sequence[Mapping[str, object]]) -> list[game_pb2.Event]:
    """A list of event dicts -> messages."""
    return [event_to_proto(e) for e in events]


def events_into(
    events: Sequence[Mapping[str, object]], field: RepeatedCompositeFieldContainer[game_pb2.Event]
) -> None:
    """`events_to_proto` appended to a repeated ``field``, each built in its element by the
    constructor's own path (``add`` with the same keywords: the same bytes), where an
    extend would copy every message it is given."""
    fast = dict_to_message is _fast_dict_to_message and _parse_fast(game_pb2.Event.DESCRIPTOR)
    for d in events:
        if fast:
            n = len(field)
            try:
                field.add(**d)
                continue
            except Exception:
                del field[n:]  # whatever upb refuses, parse has the last word
        field.append(event_to_proto(d))


def result_to_proto(d: Mapping[str, object]) -> game_pb2.Result:
    """Result dict -> message."""
    return parse(d, game_pb2.Result)


def result_from_proto(msg: game_pb2.Result) -> Result:
    """Result message -> dict."""
    return cast(Result, to_dict(msg))


# The kinds of a record entry / replay decision: the oneof `entry` of both messages.
ENTRY_KINDS = ("action", "fault", "forfeit")


def set_entry(msg: game_pb2.RecordEntry | game_pb2.ReplayDecision, d: Mapping[str, Any]) -> None:
    """Fill the oneof `entry` of a record entry or replay decision from its dict.

    Records and replays store the same three kinds of entry; one converter keeps
    them from drifting apart. WireError when `d` has none of ENTRY_KINDS.
    """
    if "action" in d:
        msg.action.CopyFrom(action_to_proto(d["action"]))
    elif "fault" in d:
        msg.fault = d["fault"]
    elif "forfeit" in d:
        msg.forfeit = d["forfeit"]
    else:
        raise WireError(f"a record entry needs 'action', 'fault' or 'forfeit': {d!r}")


def entry_to_proto(d: Mapping[str, Any]) -> game_pb2.RecordEntry:
    """Record entry dict (action / fault / forfeit) -> message."""
    msg = game_pb2.RecordEntry(seat=d["seat"])
    set_entry(msg, d)
    if "action" in d:
        msg.forced = bool(d.get("forced", False))
    return msg


def entry_from_proto(msg: game_pb2.RecordEntry | game_pb2.ReplayDecision) -> dict[str, Any]:
    """Record entry (or replay decision) message -> engine entry dict."""
    which = msg.WhichOneof("entry")
    if which == "action":
        return {"seat": msg.seat, "action": action_from_proto(msg.action), "forced": msg.forced}
    if which in ("fault", "forfeit"):
        return {"seat": msg.seat, which: getattr(msg, which)}
    raise WireError(f"record entry of seat {msg.seat} has no action, fault or forfeit")


def record_to_proto(d: Mapping[str, Any]) -> game_pb2.Record:
    """Record dict -> message."""
    try:
        plain = {k: v for k, v in d.items() if k not in ("cave", "entries")}
        msg = parse(plain, game_pb2.Record)
        for passage in d.get("cave", []):
            msg.cave.add().cards.extend(passage)
        msg.entries.extend(entry_to_proto(e) for e in d.get("entries", []))
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"cannot read Record: {exc}") from None
    return msg


def record_from_proto(msg: game_pb2.Record) -> dict[str, Any]:
    """Record message -> the engine's record dict (replayable by `replay_record`)."""
    d = to_dict(msg)
    d["config"] = config_from_proto(msg.config)
    d["cave"] = [list(p.cards) for p in msg.cave]
    d["entries"] = [entry_from_proto(e) for e in msg.entries]
    return d


def replay_to_record(msg: game_pb2.Replay) -> dict[str, Any]:
    """The engine record inside a Replay message (its decisions without annotations)."""
    return {
        "format": msg.record_format or RECORD_FORMAT,
        "ruleset": msg.ruleset,
        "engine_version": msg.engine_version,
        "config": config_from_proto(msg.config),
        "cave": [list(p.cards) for p in msg.cave],
        "sleeved": list(msg.sleeved),
        "first_lead": msg.first_lead,
        "entries": [entry_from_proto(dec) for dec in msg.decisions],
    }

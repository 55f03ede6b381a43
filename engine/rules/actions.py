"""Actions: one value type for every kind of decision in rules §4."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from .errors import MalformedAction
from .ruleset import LOOT_KINDS

# kind -> the argument names it takes
ACTION_ARGS: Final[dict[str, tuple[str, ...]]] = {
    "EXCHANGE": ("recipe",),
    "TRADE": ("item",),
    "GIVE": ("item", "to_seat"),
    "STASH": (),
    "UNSTASH": (),
    "DISCARD": ("item",),
    "DONE": (),
    "EXPLORE": (),
    "CONTINUE": (),
    "RETURN": (),
    "MOVE": ("passage",),
    "PEEK": (),
    "READY": (),
    "ATTEMPT": (),
    "LEAVE": (),
    "COMMIT": ("tool_id",),
    "STOP": (),
}
INT_ARGS: Final = frozenset({"passage", "tool_id", "to_seat"})  # the rest are strings


@dataclass(frozen=True, slots=True, repr=False)
class Action:
    """A decision. Only the arguments of its kind are set (see docs/engine-api.md)."""

    kind: str
    passage: int | None = None
    tool_id: int | None = None
    item: str | None = None
    to_seat: int | None = None
    recipe: str | None = None
    # The shared instances' dict form, built once (`canonical`): `to_dict` copies it, a copy
    # of a small dict being a block copy where building one inserts every key. Not compared.
    wire: dict[str, Any] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        wire = self.wire
        if wire is not None:
            return wire.copy()
        return self._build_dict()

    def _build_dict(self) -> dict[str, Any]:
        kind = self.kind
        if kind == "MOVE":
            return {"kind": kind, "passage": self.passage}
        if kind == "COMMIT":
            return {"kind": kind, "tool_id": self.tool_id}
        if kind == "EXCHANGE":
            return {"kind": kind, "recipe": self.recipe}
        if kind == "GIVE":
            return {"kind": kind, "item": self.item, "to_seat": self.to_seat}
        if kind == "TRADE" or kind == "DISCARD":
            return {"kind": kind, "item": self.item}
        d: dict[str, Any] = {"kind": kind}
        for name in ACTION_ARGS.get(kind, ()):
            d[name] = getattr(self, name)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Action:
        """Parse an action, refusing unknown kinds and missing or stray arguments."""
        if not isinstance(d, dict):
            raise MalformedAction(f"an action is an object with a 'kind', got {type(d).__name__}")
        kind = d.get("kind")
        if type(kind) is str:
            known = shared_action(d, kind)
            if known is not None:
                return known
        if kind not in ACTION_ARGS:
            raise MalformedAction(f"unknown action kind {kind!r}")
        wanted = ACTION_ARGS[kind]
        if len(d) > 1 + len(wanted):
            stray = [k for k in d if k != "kind" and k not in wanted and d[k] is not None]
            if stray:
                raise MalformedAction(f"{kind} takes {list(wanted) or 'no arguments'}, got {stray}")
        values: list[Any] = []
        for name in wanted:
            value = d.get(name)
            if value is None:
                raise MalformedAction(f"{kind} needs '{name}'")
            expected = int if name in INT_ARGS else str
            if type(value) is not expected and (
                not isinstance(value, expected) or isinstance(value, bool)
            ):
                raise MalformedAction(f"{kind}.{name} must be {expected.__name__}, got {value!r}")
            values.append(value)
        return canonical(kind, *values)

    def __str__(self) -> str:
        args = [str(getattr(self, n)) for n in ACTION_ARGS.get(self.kind, ())]
        return f"{self.kind}({', '.join(args)})" if args else self.kind

    def __deepcopy__(self, memo: dict[int, Any]) -> Action:
        return self  # immutable: a copy of a game shares its actions

    def __repr__(self) -> str:
        return self.__str__()


def shared_action(d: dict[str, Any], kind: str) -> Action | None:
    """The commonest entries, parsed without the general checks: no arguments, a passage, a
    tool, an item (each a shared instance; None when `d` is anything else)."""
    n = len(d)
    if n == 1:
        return _SIMPLE.get(kind)
    if n != 2:
        return None
    if kind == "MOVE" or kind == "COMMIT":
        arg = d.get("passage" if kind == "MOVE" else "tool_id")
        if type(arg) is int and 0 <= arg < 256:
            return MOVES[arg] if kind == "MOVE" else COMMITS[arg]
    elif kind == "TRADE" or kind == "DISCARD":
        item = d.get("item")
        if type(item) is str:
            return (TRADES if kind == "TRADE" else DISCARDS).get(item)
    return None


# One instance per action (up to a bound): the legal lists and parsed actions share them, so
# telling whether an action is legal is an identity test, not a field-by-field comparison.
_CANONICAL: Final[dict[tuple[Any, ...], Action]] = {}
# Parsed actions no game has (MOVE to passage 10**9) are not kept past this many.
_CANONICAL_LIMIT: Final = 4096


def canonical(kind: str, *values: Any) -> Action:
    """The shared instance of `kind` with its arguments in ACTION_ARGS order (values checked)."""
    key = (kind, *values)
    found = _CANONICAL.get(key)
    if found is not None:
        return found
    args = dict(zip(ACTION_ARGS[kind], values, strict=True))
    if len(_CANONICAL) >= _CANONICAL_LIMIT:
        return Action(kind, **args)
    wire = Action(kind, **args)._build_dict()
    action = Action(kind, **args, wire=wire)
    _CANONICAL[key] = action
    return action


_SIMPLE: Final[dict[str, Action]] = {k: canonical(k) for k, args in ACTION_ARGS.items() if not args}
# The actions with an argument that most decisions list, by that argument (ids are small).
MOVES: Final[list[Action]] = [canonical("MOVE", p) for p in range(256)]
COMMITS: Final[list[Action]] = [canonical("COMMIT", t) for t in range(256)]
# TRADE and DISCARD by item, GIVE by (item, seat): the base phase lists them every decision.
TRADES: Final[dict[str, Action]] = {k: canonical("TRADE", k) for k in LOOT_KINDS}
DISCARDS: Final[dict[str, Action]] = {k: canonical("DISCARD", k) for k in LOOT_KINDS}
GIVES: Final[dict[tuple[str, int], Action]] = {
    (k, s): canonical("GIVE", k, s) for k in LOOT_KINDS for s in range(8)
}
EXPLORE: Final = canonical("EXPLORE")
CONTINUE: Final = canonical("CONTINUE")
RETURN: Final = canonical("RETURN")
PEEK: Final = canonical("PEEK")
READY: Final = canonical("READY")
ATTEMPT: Final = canonical("ATTEMPT")
LEAVE: Final = canonical("LEAVE")
STOP: Final = canonical("STOP")
STASH: Final = canonical("STASH")
UNSTASH: Final = canonical("UNSTASH")
DONE: Final = canonical("DONE")

"""The shapes a bot reads, as TypedDicts: plain dicts at run time, checked keys in an editor.

Every key is the proto field name of the same value (protos/digdown/v1/game.proto),
so the observation a bot gets from `digdown.bot`, the events of a replay and the
engine's own dicts (docs/engine-api.md) all read the same way:
`observation["players"][observation["seat"]]["torches"]`, `action["kind"]`.
Enum-like values are upper-case strings. A key marked NotRequired is absent when
the proto field is unset (`Passage.top` while the top card is face down,
`Observation.resolution` outside phase RESOLVE, an action's arguments other than
its kind's). tests/sdk/test_sdk_types.py holds these keys equal to the
proto's fields.
"""

# No `from __future__ import annotations` here: TypedDict must see NotRequired[...] itself
# (Python 3.11 does not read it out of string annotations) to tell optional keys apart.
from typing import NotRequired, TypedDict


class Action(TypedDict):
    """`{"kind": KIND, ...}` with only the arguments of that kind (see ACTION_ARGS)."""

    kind: str
    recipe: NotRequired[str]  # EXCHANGE
    item: NotRequired[str]  # TRADE, GIVE, DISCARD
    to_seat: NotRequired[int]  # GIVE
    passage: NotRequired[int]  # MOVE
    tool_id: NotRequired[int]  # COMMIT


# kind -> the argument names it takes (the fields of its message in game.proto).
ACTION_ARGS: dict[str, tuple[str, ...]] = {
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


class GameConfig(TypedDict):
    ruleset: str
    seed: int
    num_seats: int
    difficulty: str


class Card(TypedDict):
    """A cave card's face. `strength`/`damage` include a hardcore sleeve."""

    id: int
    material: str
    name: str
    tool: str
    strength: int
    damage: int
    loot: str
    torches: int
    enchanted: bool


class Tool(TypedDict):
    id: int
    kind: str
    name: str
    strength: int
    active: bool


class Passage(TypedDict):
    index: int
    count: int
    backs: list[str]  # bottom -> top
    sleeved: list[bool]  # bottom -> top
    tile: bool
    top: NotRequired[Card]  # only while the top card's face is known


class Player(TypedDict):
    seat: int
    colour: str
    capacity: int
    torches: int
    items: dict[str, int]
    stash: int
    tools: list[Tool]
    position: int  # -1 at the base
    unsecured: list[Card]
    secured: list[Card]
    completed: list[str]
    eliminated: bool
    forfeited: bool
    faults: int
    base_actions: int
    moves: int
    ready: bool


class Resolution(TypedDict):
    passage: int
    card: Card
    owner: int
    helpers: list[int]
    attempting: bool
    committed: int
    committer: int  # -1 before the owner chose


class UnseenCount(TypedDict):
    material: str
    name: str
    count: int


class Observation(TypedDict):
    ruleset: str
    engine_version: str
    seat: int
    num_seats: int
    difficulty: str
    objectives: list[str]
    phase: str  # BASE, DECIDE, POSITION, RESOLVE, OVER
    round: int
    turn: int
    lead: int
    round_starter: int
    acting_seat: int
    hearts: int
    supply: int
    free_tiles: int
    exchange_stack: dict[str, int]
    passages: list[Passage]
    players: list[Player]
    resolution: NotRequired[Resolution]
    unseen: list[UnseenCount]


class Event(TypedDict):
    """`kind` plus only the keys that kind uses."""

    kind: str
    seat: NotRequired[int]
    to_seat: NotRequired[int]
    round: NotRequired[int]
    turn: NotRequired[int]
    passage: NotRequired[int]
    card: NotRequired[Card]
    cards: NotRequired[list[Card]]
    tool_id: NotRequired[int]
    amount: NotRequired[int]
    hearts: NotRequired[int]
    objective: NotRequired[str]
    item: NotRequired[str]
    recipe: NotRequired[str]
    reason: NotRequired[str]
    ranks: NotRequired[list[int]]


class SeatResult(TypedDict):
    seat: int
    rank: int
    objectives: int
    completed: list[str]
    loot_points: NotRequired[int]  # the rules always set it; absent in an older engine's result
    torches: int
    faults: int
    ended: str  # won, finished, eliminated, forfeited
    reason: str


class Result(TypedDict):
    reason: str  # won, last_standing, cave_exhausted, turn_limit
    winner: int
    turns: int
    rounds: int
    ranks: list[int]
    seats: list[SeatResult]

"""The shapes of what the rules hand out: events, observations, results and records.

TypedDicts, so plain dicts at run time: the compiled build builds and reads them as the
dicts they always were (no class, no conversion on the hot path), and mypy checks every
key the rules write. Every key is the proto field name of the same value
(protos/digdown/v1/game.proto), documented in docs/engine-api.md.

The bot SDK declares the same shapes for bots (`digdown.types`); the rules core may not
import the SDK (it imports nothing of ours), so the two declarations are held equal, key
by key and required or not, by tests/engine/test_shapes.py.

What the rules *read* from outside (a record to replay, an action dict from a bot) stays
`dict[str, Any]` where it is checked: the compiled build would turn a wrong value type
in a typed dict into a TypeError where the rules now raise their own clear error.
"""

# No `from __future__ import annotations`: TypedDict must see NotRequired[...] itself
# (Python 3.11 does not read it out of string annotations) to tell optional keys apart.
from typing import Any, NotRequired, TypedDict


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
    """A tool's public face (the observation's `players[i].tools`)."""

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
    """One seat's public state (the rules code's `Seat`, table.py)."""

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
    """What one seat may see (rules §3)."""

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
    resolution: NotRequired[Resolution]  # in phase RESOLVE only
    unseen: list[UnseenCount]


class Event(TypedDict):
    """`kind` plus only the keys that kind uses (docs/engine-api.md, "Events")."""

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
    """A finished game's result (rules §5)."""

    reason: str  # won, last_standing, cave_exhausted, turn_limit
    winner: int  # a seat, or -1
    turns: int
    rounds: int
    ranks: list[int]
    seats: list[SeatResult]


class Config(TypedDict):
    """A game's configuration as a dict (`GameConfig.to_dict`)."""

    seed: int
    num_seats: int
    difficulty: str
    ruleset: str


class Record(TypedDict):
    """A game's record: its setup and every entry; replays exactly (record.py).

    An entry is `{seat, action, forced}`, `{seat, fault}` or `{seat, forfeit}`; entries stay
    `dict[str, Any]` because a record read back is checked entry by entry as it replays.
    """

    format: str
    ruleset: str
    engine_version: str
    config: Config
    cave: list[list[int]]
    sleeved: list[int]
    first_lead: int
    entries: list[dict[str, Any]]

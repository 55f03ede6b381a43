"""A seat's observation dict as a fixed-size vector of numbers, and actions as indices.

Both are built from the ruleset's data (the card table, the recipes, the
number of passages and seats), never from a hard-coded list, so a new ruleset
gets its own encoding by construction. The vector is seen from the observer:
players are rotated so that the observer comes first, and passages, unseen
counts and the exchange stack keep the ruleset's order. The same observation
dict a bot receives over gRPC goes in, so a policy trained here reads what a
served bot reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.rules import Action, Ruleset, State
from engine.rules.actions import canonical
from engine.rules.features import feature_parts, pack

PHASES = ("BASE", "DECIDE", "POSITION", "RESOLVE", "OVER")
TOOLS = ("PICKAXE", "SWORD")
MATERIALS = ("DIRT", "STONE", "DEEPSLATE")
ITEMS = ("IRON", "GOLD", "DIAMOND", "EMERALD")
LOOTS = ("NONE", "TORCH", *ITEMS)


def _one_hot(value: Any, choices: Sequence[Any]) -> list[float]:
    return [1.0 if value == c else 0.0 for c in choices]


class ActionCatalog:
    """Every action a seat could ever take in one (ruleset, seats) setting, by index.

    A `COMMIT` names a tool card; tool ids differ per seat and grow with
    exchanges, so the catalog has one slot per position in the seat's own
    tool list (in the order the seat received them) instead of one per id.
    """

    def __init__(self, rules: Ruleset, num_seats: int) -> None:
        kinds = sorted({r.loot for r in rules.cave} & set(ITEMS), key=ITEMS.index)
        # The engine's shared action instances, so that a legal action's index is found by
        # identity (`by_id`) rather than by comparing fields.
        fixed = [canonical("EXCHANGE", r.name) for r in rules.recipes]
        fixed += [canonical("TRADE", k) for k in kinds]
        fixed += [canonical("GIVE", k, s) for k in kinds for s in range(num_seats)]
        fixed += [canonical(k) for k in ("STASH", "UNSTASH", "DONE")]
        fixed += [canonical("DISCARD", k) for k in ("TORCH", *kinds)]
        fixed += [canonical(k) for k in ("EXPLORE", "CONTINUE", "RETURN")]
        fixed += [canonical("MOVE", p) for p in range(rules.passages)]
        fixed += [canonical(k) for k in ("PEEK", "READY", "ATTEMPT", "LEAVE", "STOP")]
        self.fixed = fixed
        self.index = {a: i for i, a in enumerate(fixed)}
        self.by_id = {id(a): i for i, a in enumerate(fixed)}
        most_basic = max(sum(pair) for pair in rules.basic_tools.values())
        self.commit_slots = most_basic + sum(r.count for r in rules.recipes)
        self.size = len(fixed) + self.commit_slots
        self.zeros = np.zeros(self.size, dtype=np.int8)  # copied for each mask (writable)
        self.zeros.flags.writeable = False

    def index_of(self, action: Action, tools: Sequence[int]) -> int:
        """The index of a legal action; `tools` are the acting seat's tool ids in order."""
        if action.kind == "COMMIT":
            return len(self.fixed) + list(tools).index(action.tool_id)
        return self.index[action]

    def action_at(self, i: int, tools: Sequence[int]) -> Action:
        """The action at index `i` for a seat holding `tools` (ValueError past the end)."""
        if not 0 <= i < self.size:
            raise ValueError(f"action index {i} is not in 0..{self.size - 1}")
        if i < len(self.fixed):
            return self.fixed[i]
        slot = i - len(self.fixed)
        if slot >= len(tools):
            return Action("COMMIT", tool_id=-1)  # no such tool: never legal
        return canonical("COMMIT", tools[slot])

    def indices(self, legal: Sequence[Action], tools: Sequence[int]) -> list[int]:
        """The index of every legal action, in the order listed."""
        by_id = self.by_id
        out = []
        for action in legal:
            i = by_id.get(id(action))
            out.append(i if i is not None else self.index_of(action, tools))
        return out

    def mask(self, legal: Sequence[Action], tools: Sequence[int]) -> np.ndarray:
        """1 at the index of every legal action, 0 elsewhere (int8, as PettingZoo expects)."""
        # A few legal actions among many: a copy of zeros set one by one (cheaper than
        # numpy's fancy indexing, or a bytearray viewed by np.frombuffer, for so few).
        mask = self.zeros.copy()
        by_id = self.by_id
        for action in legal:
            i = by_id.get(id(action))
            mask[i if i is not None else self.index_of(action, tools)] = 1
        return mask


FLOAT32 = np.dtype("<f4")  # the rules core's pieces (features.FLOAT); a dtype object
# costs less to pass than its name


def unpack(parts: list[bytes]) -> np.ndarray:
    """The rules core's float32 pieces as one new, writable vector (one copy, no conversion)."""
    return np.frombuffer(bytearray().join(parts), FLOAT32)


class ObservationEncoder:
    """The observation dict of one seat -> a float32 vector of fixed length."""

    def __init__(self, rules: Ruleset, num_seats: int) -> None:
        self.rules = rules
        self.num_seats = num_seats
        self.faces = [(r.material, r.name) for r in rules.cave]
        self.recipes = [r.name for r in rules.recipes]
        self.size = len(self.encode_parts(None))

    def encode(self, obs: dict[str, Any]) -> np.ndarray:
        return np.asarray(self.encode_parts(obs), dtype=np.float32)

    def encode_state(self, state: State, seat: int) -> np.ndarray:
        """`encode(state.observation(seat))` without building the dict: the same numbers,
        computed by the rules core (engine/rules/features.py; compiled where built)."""
        return unpack(feature_parts(state, seat))

    def floats(self, values: list[int]) -> np.ndarray:
        """Whole numbers as the float32 vector (the format of `encode_state`'s pieces)."""
        return unpack([pack(values)])

    def encode_parts(self, obs: dict[str, Any] | None) -> list[float]:
        """The vector as a list; with `obs=None`, a list of the right length (for the size)."""
        o = obs or _EMPTY
        seat, n = o["seat"], self.num_seats
        v: list[float] = _one_hot(o["phase"], PHASES)
        v += [o["hearts"], o["supply"], o["free_tiles"], o["round"], o["turn"]]
        v += [1.0 if obj in o["objectives"] else 0.0 for obj in ITEMS]
        v += [o["exchange_stack"].get(name, 0) for name in self.recipes]
        rotated = [(seat + k) % n for k in range(n)]
        v += _one_hot((o["lead"] - seat) % n, range(n))
        v += _one_hot((o["acting_seat"] - seat) % n if o["acting_seat"] >= 0 else -1, range(n))
        for s in rotated:
            v += self._player(o["players"][s] if obs else None)
        for p in range(self.rules.passages):
            v += self._passage(o["passages"][p] if obs else None)
        unseen = {(u["material"], u["name"]): u["count"] for u in o["unseen"]}
        v += [unseen.get(face, 0) for face in self.faces]
        res = o.get("resolution")
        v += [1.0 if res else 0.0]
        v += _one_hot(res["passage"] if res else -1, range(self.rules.passages))
        v += self._card(res["card"] if res else None)
        v += [res["committed"] if res else 0, 1.0 if res and res["attempting"] else 0.0]
        v += [1.0 if res and res["owner"] == seat else 0.0]
        v += [1.0 if res and res["committer"] == seat else 0.0]
        return v

    def _player(self, p: dict[str, Any] | None) -> list[float]:
        p = p or _EMPTY_PLAYER
        v = [p["torches"], p["stash"], p["capacity"]]
        v += [p["items"].get(k, 0) for k in ITEMS]
        v += _one_hot(p["position"], range(-1, self.rules.passages))
        for kind in TOOLS:
            mine = [t for t in p["tools"] if t["kind"] == kind]
            v += [sum(t["strength"] for t in mine if t["active"]), sum(t["strength"] for t in mine)]
        v += [len(p["unsecured"]), len(p["secured"])]
        v += [sum(1 for c in p["unsecured"] if c["loot"] != "NONE")]
        v += [1.0 if k in p["completed"] else 0.0 for k in ITEMS]
        v += [float(p["eliminated"]), float(p["ready"]), p["moves"], p["faults"]]
        return v

    def _passage(self, p: dict[str, Any] | None) -> list[float]:
        p = p or _EMPTY_PASSAGE
        backs = p["backs"]
        v = [p["count"], float(p["tile"]), float(bool(p["sleeved"]) and p["sleeved"][-1])]
        v += _one_hot(backs[-1] if backs else None, MATERIALS)
        v += [backs.count(m) for m in MATERIALS]
        v += [1.0 if "top" in p else 0.0]
        v += self._card(p.get("top"))
        return v

    @staticmethod
    def _card(c: dict[str, Any] | None) -> list[float]:
        if c is None:
            return [0.0] * (2 + len(TOOLS) + len(LOOTS) + 1)
        return [c["strength"], c["damage"], *_one_hot(c["tool"], TOOLS),
                *_one_hot(c["loot"], LOOTS), c["torches"]]  # fmt: skip


_EMPTY_PLAYER: dict[str, Any] = {
    "torches": 0, "stash": 0, "capacity": 0, "items": {}, "position": -1, "tools": [],
    "unsecured": [], "secured": [], "completed": [], "eliminated": False, "ready": False,
    "moves": 0, "faults": 0,
}  # fmt: skip
_EMPTY_PASSAGE: dict[str, Any] = {"count": 0, "tile": False, "sleeved": [], "backs": []}
_EMPTY: dict[str, Any] = {
    "seat": 0, "phase": "", "hearts": 0, "supply": 0, "free_tiles": 0, "round": 0, "turn": 0,
    "objectives": [], "exchange_stack": {}, "lead": 0, "acting_seat": -1, "unseen": [],
}  # fmt: skip

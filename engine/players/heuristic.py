"""A sensible bot that plays from public information only.

It values a card by what its loot does for this seat (an uncompleted objective
is worth far more than anything else), estimates unknown tops from the public
`unseen` counts of that material, and spends tools and torches as resources:

- base phase: upgrade tools (diamond/iron pickaxe first), trade gold/emerald
  for torches, carry every torch that fits and stash the rest;
- decide: only the lead ever returns, once its round is spent (nothing left
  worth digging with its active tools) or its unsecured loot is worth securing
  while it can still pay the return in full (counting its stash where the
  ruleset lets the stash pay, as dd-2 does);
- position: stand where the expected value as owner is best, or as a helper
  behind a seat that is already ready when every owned top looks bad; peek
  when the information is worth more than a torch;
- resolve: attempt only what its own (plus helpers') active tools can beat,
  commit the cheapest set of tools, and help only against damaging cards.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Any

from engine.rules import RULESETS, Action
from engine.rules.ruleset import CaveRow
from engine.rules.shapes import Passage, Player, Tool

from .base import Observation


@dataclass(frozen=True)
class HeuristicParams:
    """The heuristic's weights, in one value so that variants can play each other.

    Values are in "torch" units. The defaults were chosen by self-play and
    head-to-head runs of `engine.simulate`.
    """

    win_value: float = 100.0  # completing the last objective ends the game
    objective_value: float = 20.0  # completing one objective is permanent
    dig_value: float = 0.6  # a card with no loot still opens the passage below it
    tool_cost: float = 0.1  # per point of tool strength spent (tools are gone for the round)
    secure_factor: float = 0.6  # unsecured loot may still be lost on the way home
    torch_value: float = 1.0
    return_loot: float = 3.0  # unsecured loot worth securing while the return can be paid
    peek_price: float = 1.0  # a peek's torch while torches are plentiful
    peek_price_low: float = 3.0  # ... and once it would eat into the torches kept for the return
    # Variants (the exploit players of engine/players/exploits.py); defaults: the heuristic.
    carry_torches: int = 0  # torches to carry out of the base phase; 0: every one that fits
    returns: str = "spent"  # "spent": as above; "never": only when forced; "whenever": see below


DEFAULT_PARAMS = HeuristicParams()
POINTS = {"IRON": 1, "GOLD": 2, "DIAMOND": 3, "EMERALD": 3}


@cache
def _rows_by_face(ruleset: str) -> dict[tuple[str, str], CaveRow]:
    """(material, name) -> its §8 row: what an unseen face would be."""
    return {(r.material, r.name): r for r in RULESETS[ruleset].cave}


@cache
def _cheapest_indices(strengths: tuple[int, ...], need: int) -> tuple[int, ...] | None:
    """Indices of the subset reaching `need` with the least strength (then fewest tools).

    Cached on the strengths alone: a seat holds a handful of tools, so the
    distinct (strengths, need) pairs of a whole simulation are few.
    """
    if need <= 0:
        return ()
    best: tuple[int, ...] | None = None
    best_key = (10**9, 10**9)
    for k in range(1, len(strengths) + 1):
        for combo in combinations(range(len(strengths)), k):
            total = sum(strengths[i] for i in combo)
            if total >= need and (total, k) < best_key:
                best, best_key = combo, (total, k)
    return best


def _cheapest(tools: list[Tool], need: int) -> list[Tool] | None:
    """The tools that reach `need` with the least strength, or None if they cannot."""
    picked = _cheapest_indices(tuple(t["strength"] for t in tools), need)
    return None if picked is None else [tools[i] for i in picked]


class _View:
    """The observation seen from one seat, with the derived facts the bot needs."""

    def __init__(self, obs: Observation, params: HeuristicParams) -> None:
        self.obs = obs
        self.params = params
        self.rules = RULESETS[obs["ruleset"]]
        self.seat: int = obs["seat"]
        self.me: Player = obs["players"][self.seat]
        self.hearts: int = obs["hearts"]
        done = set(self.me["completed"])
        self.todo = [o for o in obs["objectives"] if o not in done]
        # One decision evaluates the same few card faces many times over.
        self._owner_cache: dict[tuple[Any, ...], float] = {}
        self._pool_cache: dict[tuple[str, bool], list[tuple[float, Mapping[str, Any]]]] = {}

    def active(self, player: Player, kind: str) -> list[Tool]:
        return [t for t in player["tools"] if t["active"] and t["kind"] == kind]

    def strength(self, player: Player, kind: str) -> int:
        return sum(t["strength"] for t in self.active(player, kind))

    def return_purse(self) -> int:
        """Torches this seat could pay a return with: the stash counts where it may pay (dd-2)."""
        me = self.me
        return int(me["torches"]) + (int(me["stash"]) if self.rules.return_from_stash else 0)

    def loot_on_the_table(self) -> bool:
        """Whether any seat holds unsecured loot, so that a return secures something."""
        return any(
            card["loot"] != "NONE" for player in self.obs["players"] for card in player["unsecured"]
        )

    def can_upgrade(self) -> bool:
        """Whether an IRON in hand could still become a better tool."""
        return any(n > 0 for n in self.obs["exchange_stack"].values())

    # ----------------------------------------------------------- values

    def loot_value(self, card: Mapping[str, Any]) -> float:
        loot = card["loot"]
        if loot in self.todo:
            return self.params.win_value if len(self.todo) == 1 else self.params.objective_value
        if loot == "NONE":
            return self.params.dig_value
        if loot == "TORCH":
            return self.params.secure_factor * float(card["torches"]) * self.params.torch_value
        if loot == "IRON":
            return self.params.secure_factor * (3.0 if self.can_upgrade() else 1.0)
        if loot == "DIAMOND":
            stack = self.obs["exchange_stack"]
            upgrade = stack.get("DIAMOND_PICKAXE", 0) + stack.get("DIAMOND_SWORD", 0)
            return self.params.secure_factor * (4.0 if upgrade else 3.0)
        # GOLD and EMERALD trade for torches
        torches = self.rules.trade.get(loot, POINTS.get(loot, 1))
        return self.params.secure_factor * torches * self.params.torch_value

    def unsecured_value(self) -> float:
        """What this seat would keep by a paid return (objectives are already banked)."""
        total = 0.0
        for card in self.me["unsecured"]:
            loot = card["loot"]
            if loot == "TORCH":
                total += card["torches"]
            elif loot == "IRON":
                total += 3.0 if self.can_upgrade() else 1.0
            elif loot in POINTS:
                total += float(self.rules.trade.get(loot, POINTS[loot]))
        return total

    def damage_cost(self, damage: int) -> float:
        if damage <= 0:
            return 0.0
        if self.hearts - damage <= 0:
            return 2.0 + self.unsecured_value()
        return damage * (1.5 if self.hearts - damage <= 1 else 1.0)

    def owner_value(self, card: Mapping[str, Any]) -> float:
        """Expected value of owning this face-up card: attempt it if worth it, else leave."""
        key = (card["tool"], card["strength"], card["damage"], card["loot"], card["torches"])
        value = self._owner_cache.get(key)
        if value is None:
            value = self._owner_cache[key] = self._owner_value(card)
        return value

    def _owner_value(self, card: Mapping[str, Any]) -> float:
        leave = -self.damage_cost(card["damage"])
        tools = self.active(self.me, card["tool"])
        use = _cheapest(tools, card["strength"])
        if use is None:
            return leave
        spent = sum(int(t["strength"]) for t in use)
        attempt = self.loot_value(card) - self.params.tool_cost * spent
        return max(attempt, leave)

    def candidates(self, passage: Passage) -> list[tuple[float, Mapping[str, Any]]]:
        """(probability, card) for the top of a passage, from the public unseen counts."""
        if "top" in passage:
            return [(1.0, passage["top"])]
        key = (passage["backs"][-1], passage["sleeved"][-1])
        if key not in self._pool_cache:
            self._pool_cache[key] = self._pool(*key)
        return self._pool_cache[key]

    def _pool(self, material: str, sleeved: bool) -> list[tuple[float, Mapping[str, Any]]]:
        rows = _rows_by_face(self.rules.id)
        pool = []
        for entry in self.obs["unseen"]:
            if entry["material"] != material:
                continue
            row = rows[(entry["material"], entry["name"])]
            if sleeved and row.name not in self.rules.sleeved_names:
                continue
            bonus_s = self.rules.sleeve_strength if sleeved else 0
            bonus_d = self.rules.sleeve_damage if sleeved else 0
            card = {
                "material": row.material,
                "name": row.name,
                "tool": row.tool,
                "strength": row.strength + bonus_s,
                "damage": row.damage + bonus_d,
                "loot": row.loot,
                "torches": row.torches,
            }
            pool.append((entry["count"], card))
        total = sum(c for c, _ in pool)
        if not total:
            return []
        return [(c / total, card) for c, card in pool]

    def passage_value(self, passage: Passage) -> float:
        cands = self.candidates(passage)
        if not cands:
            return -1.0
        return sum(p * self.owner_value(card) for p, card in cands)


class HeuristicPlayer:
    """Plays each decision by expected value over public information (see module doc)."""

    name = "heuristic"

    def __init__(
        self, rng: random.Random, params: HeuristicParams = DEFAULT_PARAMS, name: str = ""
    ) -> None:
        self.rng = rng
        self.params = params
        if name:
            self.name = name

    def act(self, observation: Observation, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        view = _View(observation, self.params)
        phase = observation["phase"]
        if phase == "BASE":
            choice = self._base(view, legal)
        elif phase == "DECIDE":
            choice = self._decide(view, legal)
        elif phase == "POSITION":
            choice = self._position(view, legal)
        else:
            choice = self._resolve(view, legal)
        # Defensive: a heuristic slip must not become a fault.
        return choice if choice in legal else legal[0]

    # ------------------------------------------------------------- base

    def _base(self, view: _View, legal: list[Action]) -> Action:
        me = view.me
        kinds = {a.recipe for a in legal if a.kind == "EXCHANGE"}
        tools = me["tools"]
        picks = [t for t in tools if t["kind"] == "PICKAXE" and t["strength"] > 2]
        swords = [t for t in tools if t["kind"] == "SWORD" and t["strength"] > 2]
        if "DIAMOND_PICKAXE" in kinds and not any(t["strength"] >= 6 for t in picks):
            return Action("EXCHANGE", recipe="DIAMOND_PICKAXE")
        if "IRON_PICKAXE" in kinds and len(picks) < 2:
            return Action("EXCHANGE", recipe="IRON_PICKAXE")
        if "IRON_SWORD" in kinds and not swords and picks:
            return Action("EXCHANGE", recipe="IRON_SWORD")
        if "DIAMOND_SWORD" in kinds and picks and not any(t["strength"] >= 6 for t in swords):
            return Action("EXCHANGE", recipe="DIAMOND_SWORD")
        supply = view.obs["supply"]
        for item in ("EMERALD", "GOLD"):
            trade = Action("TRADE", item=item)
            if trade in legal and supply >= 2 and item not in view.todo:
                return trade

        items = me["items"]
        n_items = sum(items.values())
        capacity = me["capacity"]
        torches, stash = me["torches"], me["stash"]
        # Items no recipe can use any more only block torch slots: drop them
        # when the torches they displace are waiting in the stash.
        useless = [k for k in ("IRON", "DIAMOND", "GOLD", "EMERALD") if items.get(k)]
        if not view.can_upgrade():
            room = capacity - n_items
            if stash and room < min(4, torches + stash) and useless:
                return Action("DISCARD", item=useless[0])
        carry = view.params.carry_torches
        if carry and torches > carry and Action("STASH") in legal:
            return Action("STASH")
        wanted = min(carry, capacity - n_items)
        if carry and stash and torches < wanted and Action("UNSTASH") in legal:
            return Action("UNSTASH")
        if torches + n_items > capacity:
            if torches and Action("STASH") in legal:
                return Action("STASH")
            for kind in view.rules.default_discard_order:
                if Action("DISCARD", item=kind) in legal:
                    return Action("DISCARD", item=kind)
        if stash and torches + n_items < capacity and Action("UNSTASH") in legal and not carry:
            return Action("UNSTASH")
        if Action("DONE") in legal:
            return Action("DONE")
        if Action("UNSTASH") in legal:
            return Action("UNSTASH")
        return legal[0]

    # ----------------------------------------------------------- decide

    def _decide(self, view: _View, legal: list[Action]) -> Action:
        cost = view.rules.return_cost
        purse = view.return_purse()
        if view.params.returns == "whenever" and purse >= cost and view.loot_on_the_table():
            return Action("RETURN")
        if view.seat != view.obs["lead"] or Action("EXPLORE") not in legal:
            return Action("CONTINUE") if Action("CONTINUE") in legal else legal[0]
        if view.params.returns == "never":
            return Action("EXPLORE")
        best = max(
            (view.passage_value(p) for p in view.obs["passages"] if p["count"]),
            default=-1.0,
        )
        loot = view.unsecured_value()
        spent = best <= view.params.dig_value / 2
        if spent and (purse >= cost or loot == 0):
            return Action("RETURN")
        # Keep enough torches to pay the return once the loot is worth it.
        worth = loot >= view.params.return_loot
        if worth and purse <= cost:
            return Action("RETURN")
        if worth and view.hearts <= 1 and purse >= cost:
            return Action("RETURN")
        return Action("EXPLORE")

    # --------------------------------------------------------- position

    def _position(self, view: _View, legal: list[Action]) -> Action:
        obs = view.obs
        owned = {
            pl["position"]
            for pl in obs["players"]
            if pl["ready"] and not pl["eliminated"] and pl["seat"] != view.seat
        }
        options: list[tuple[float, int]] = []
        for passage in obs["passages"]:
            p = passage["index"]
            if not passage["count"]:
                continue
            value = 0.0 if p in owned else view.passage_value(passage)
            options.append((value, p))
        if not options:
            return legal[0]
        options.sort(key=lambda vp: (-vp[0], vp[1]))
        target = options[0][1]
        here = view.me["position"]
        if here != target and Action("MOVE", passage=target) in legal:
            return Action("MOVE", passage=target)
        if (
            here == target
            and Action("PEEK") in legal
            and target not in owned
            and self._peek_worth(view, target, options)
        ):
            return Action("PEEK")
        if Action("READY") in legal:
            return Action("READY")
        return next((a for a in legal if a.kind == "MOVE"), legal[0])

    def _peek_worth(self, view: _View, p: int, options: list[tuple[float, int]]) -> bool:
        """Value of information: choosing after seeing the card beats choosing blind."""
        passage = view.obs["passages"][p]
        cands = view.candidates(passage)
        if len(cands) <= 1:
            return False
        others = [v for v, q in options if q != p]
        alt = max(others) if others else float("-inf")
        blind = max(sum(pr * view.owner_value(c) for pr, c in cands), alt)
        informed = sum(pr * max(view.owner_value(c), alt) for pr, c in cands)
        reserve = view.rules.return_cost + 1
        low = view.return_purse() <= reserve
        price = view.params.peek_price_low if low else view.params.peek_price
        return view.me["torches"] > 1 and informed - blind > price

    # ---------------------------------------------------------- resolve

    def _resolve(self, view: _View, legal: list[Action]) -> Action:
        res = view.obs["resolution"]
        card = res["card"]
        players = view.obs["players"]
        kind = card["tool"]
        if not res["attempting"]:
            own = view.strength(view.me, kind)
            helpers = sum(view.strength(players[h], kind) for h in res["helpers"])
            if own >= card["strength"] and view.owner_value(card) > -view.damage_cost(
                card["damage"]
            ):
                return Action("ATTEMPT")
            if card["damage"] > 0 and own + helpers >= card["strength"]:
                return Action("ATTEMPT")
            return Action("LEAVE")
        need = card["strength"] - res["committed"]
        mine = [t for t in view.active(view.me, kind) if Action("COMMIT", tool_id=t["id"]) in legal]
        if view.seat != res["owner"] and card["damage"] <= 0:
            return Action("STOP")  # never dig ore for a rival
        use = _cheapest(mine, need)
        if use:
            top = max(use, key=lambda t: t["strength"])
            return Action("COMMIT", tool_id=top["id"])
        # Not enough alone: commit only if the helpers still to come can finish it.
        if view.seat == res["owner"]:
            later = res["helpers"]
        else:
            later = res["helpers"][res["helpers"].index(view.seat) + 1 :]
        rest = sum(view.strength(players[h], kind) for h in later)
        if card["damage"] > 0 and mine and sum(t["strength"] for t in mine) + rest >= need:
            top = max(mine, key=lambda t: t["strength"])
            return Action("COMMIT", tool_id=top["id"])
        return Action("STOP")

"""A naive simulator of the same rules, written to be obviously correct, not fast.

The baseline `bench/engine_bench.py` measures the engine against: it replays the
same recorded games. Everything is plain data (dicts, lists, action dicts) and
recomputed from scratch when asked: the legal actions by walking the rules, the
observation by reading every field, the acting seat from the step in progress.
Only the rulesets' numbers and card tables come from `engine.rules` (they are
data, not rules); every rule is written here again, one function per rule, in
the order rules §2-§6 state them. `tests/engine/test_reference_rules.py` checks
that it agrees with the engine on every legal list, observation, event and
result of many games; a disagreement there is a bug in one of the two.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from typing import Any

from engine.rules.ruleset import ITEM_KINDS, LOOT_KINDS, PICKAXE, RULESETS, SWORD, TORCH, Ruleset
from engine.rules.versions import ENGINE_VERSION

Card = dict[str, Any]
ActionDict = dict[str, Any]
ORDINALS = ("first", "second", "third", "fourth", "fifth")


class ReferenceGame:
    """One game from a record's setup; `step(entry)` applies one record entry."""

    def __init__(self, record: dict[str, Any]) -> None:
        config = record["config"]
        rules: Ruleset = RULESETS[config["ruleset"]]
        self.rules = rules
        self.config = config
        n = config["num_seats"]
        # The card table (rules §8, §1): cave rows expanded, then torches, tools, exchange cards.
        self.rows = [row for row in rules.cave for _ in range(row.count)]
        self.sleeved = set(record["sleeved"])
        first_torch = len(self.rows)
        first_basic = first_torch + rules.torch_cards
        per_colour = len(rules.colour_tools)
        self.tools: dict[int, dict[str, Any]] = {}
        for c, colour in enumerate(rules.colours):
            for k, kind in enumerate(rules.colour_tools):
                t = first_basic + per_colour * c + k
                name = f"{colour.title()} Stone {kind.title()}"
                self.tools[t] = {
                    "id": t,
                    "kind": kind,
                    "name": name,
                    "strength": rules.basic_strength,
                }
        next_id = first_basic + per_colour * len(rules.colours)
        self.exchange: dict[str, list[int]] = {}
        for recipe in rules.recipes:
            self.exchange[recipe.name] = []
            for _ in range(recipe.count):
                name = recipe.name.replace("_", " ").title()
                self.tools[next_id] = {"id": next_id, "kind": recipe.tool, "name": name,
                                       "strength": recipe.strength}  # fmt: skip
                self.exchange[recipe.name].append(next_id)
                next_id += 1
        self.passages = [list(p) for p in record["cave"]]
        self.known: set[int] = set()
        self.unseen = Counter(self.face(c) for p in self.passages for c in p)
        self.tiles: set[int] = set()
        self.hearts = rules.hearts
        self.box: list[int] = []
        self.supply = list(range(first_torch, first_basic))
        self.objectives = list(rules.objectives[config["difficulty"]])
        self.seats = [self.new_seat(i, n, first_basic) for i in range(n)]
        inv, stash = rules.start_torches[n]
        for seat in self.seats:
            seat["torches"] = self.supply[:inv]
            seat["stash"] = self.supply[inv : inv + stash]
            del self.supply[: inv + stash]
        self.phase = "DECIDE"
        self.round = self.turn = 0
        self.lead = self.round_starter = record["first_lead"]
        self.order: list[int] = []
        self.idx = 0
        self.to_resolve: list[int] = []
        self.res_passage = self.res_owner = -1
        self.res_helpers: list[int] = []
        self.attempting = False
        self.committers: list[int] = []
        self.cidx = self.committed = 0
        self.is_over = False
        self.end_reason = ""
        self.winner = -1
        self.eliminations = 0
        self.result: dict[str, Any] | None = None
        self.events: list[dict[str, Any]] = []
        self.emit("GAME_START", seat=self.lead)
        self.start_round()

    def new_seat(self, i: int, n: int, first_basic: int) -> dict[str, Any]:
        """Rules §2.1: seat i's tools come from colour i (then i+n, ...), swords then pickaxes."""
        rules = self.rules
        swords, picks = rules.basic_tools[n]
        colours = [i + k * n for k in range(rules.colours_per_seat(n))]
        per_colour = len(rules.colour_tools)
        own = [first_basic + per_colour * c + k for c in colours for k in range(per_colour)]
        tools = [t for t in own if self.tools[t]["kind"] == SWORD][:swords]
        tools += [t for t in own if self.tools[t]["kind"] == PICKAXE][:picks]
        return {
            "index": i, "colour": rules.colours[i], "capacity": rules.capacity[n],
            "torches": [], "items": [], "stash": [], "tools": tools, "active": set(tools),
            "position": -1, "unsecured": [], "secured": [], "completed": [],
            "eliminated": False, "elimination": -1, "forfeited": False, "reason": "",
            "faults": 0, "base_actions": 0, "moves": 0, "ready": False,
        }  # fmt: skip

    # ------------------------------------------------------------------ cards

    def face(self, c: int) -> tuple[str, str]:
        return self.rows[c].material, self.rows[c].name

    def card(self, c: int) -> Card:
        row, enchanted = self.rows[c], c in self.sleeved
        return {
            "id": c, "material": row.material, "name": row.name, "tool": row.tool,
            "strength": row.strength + (self.rules.sleeve_strength if enchanted else 0),
            "damage": row.damage + (self.rules.sleeve_damage if enchanted else 0),
            "loot": row.loot, "torches": row.torches, "enchanted": enchanted,
        }  # fmt: skip

    def emit(self, kind: str, **fields: Any) -> None:
        self.events.append({**fields, "kind": kind})

    def seats_from(self, first: int) -> list[int]:
        n = len(self.seats)
        order = [(first + k) % n for k in range(n)]
        return [s for s in order if not self.seats[s]["eliminated"]]

    def next_alive_after(self, s: int) -> int:
        n = len(self.seats)
        for k in range(1, n + 1):
            if not self.seats[(s + k) % n]["eliminated"]:
                return (s + k) % n
        return s

    def items_of(self, seat: dict[str, Any], kind: str) -> list[int]:
        return [c for c in seat["items"] if self.rows[c].loot == kind]

    def counts(self, seat: dict[str, Any]) -> dict[str, int]:
        return {k: len(self.items_of(seat, k)) for k in ITEM_KINDS}

    def make_known(self, c: int) -> None:
        if c not in self.known:
            self.known.add(c)
            self.unseen[self.face(c)] -= 1

    # -------------------------------------------------------------- holdings

    def take_torches(self, seat: dict[str, Any], k: int) -> int:
        taken = self.supply[:k]
        del self.supply[:k]
        for t in taken:
            insort(seat["torches"], t)
        return len(taken)

    def pay_torches(self, seat: dict[str, Any], k: int, from_stash: bool = False,
                    to: dict[str, Any] | None = None) -> int:  # fmt: skip
        paid = seat["torches"][:k]
        del seat["torches"][:k]
        if from_stash and len(paid) < k:
            more = seat["stash"][: k - len(paid)]
            del seat["stash"][: len(more)]
            paid += more
        for t in paid:
            insort(self.supply if to is None else to["torches"], t)
        if paid and to is None:
            self.emit("TORCH_PAID", seat=seat["index"], amount=len(paid))
        elif paid and to is not None:
            self.emit("TORCH_PAID", seat=seat["index"], to_seat=to["index"], amount=len(paid))
        return len(paid)

    def move_unsecured(self, seat: dict[str, Any], event: str, to: list[int]) -> None:
        if seat["unsecured"]:
            self.emit(event, seat=seat["index"], cards=[self.card(c) for c in seat["unsecured"]])
            to.extend(seat["unsecured"])
            seat["unsecured"] = []

    def eliminate(self, seat: dict[str, Any], reason: str, when: int) -> None:
        seat.update(eliminated=True, elimination=when, reason=reason)
        for pile in ("torches", "items", "stash", "tools", "unsecured", "secured"):
            self.box.extend(seat[pile])
            seat[pile] = []
        seat["active"] = set()
        seat["position"] = -1
        self.emit("ELIMINATED", seat=seat["index"], reason=reason)

    # ------------------------------------------------------------------- flow

    def start_round(self) -> None:
        self.round += 1
        self.round_starter = self.lead
        self.emit("ROUND_START", round=self.round, seat=self.lead)
        if self.round == 1:
            self.start_turn()
        else:
            self.start_base_phase()

    def start_turn(self) -> None:
        self.turn += 1
        self.phase = "DECIDE"
        self.order = self.seats_from(self.lead)
        self.idx = 0
        for seat in self.seats:
            seat["moves"] = 0
            seat["ready"] = False
        self.emit("TURN_START", turn=self.turn, seat=self.lead)

    def end_game(self, reason: str, winner: int = -1) -> None:
        self.is_over = True
        self.phase = "OVER"
        self.end_reason = reason
        self.winner = winner
        self.result = self.build_result()
        self.emit("GAME_END", reason=reason, seat=winner, ranks=self.result["ranks"])

    def ended_last_standing(self) -> bool:
        if len([s for s in self.seats if not s["eliminated"]]) <= 1:
            self.end_game("last_standing")
            return True
        return False

    def end_turn(self) -> None:
        if self.turn >= self.rules.turn_limit:
            self.end_game("turn_limit")
            return
        self.lead = self.next_alive_after(self.lead)
        self.start_turn()

    def end_round(self) -> None:
        for seat in self.seats:
            seat["position"] = -1
            seat["ready"] = False
        self.attempting = False
        self.emit("ROUND_END", round=self.round)
        if self.turn >= self.rules.turn_limit:
            self.end_game("turn_limit")
            return
        self.lead = self.next_alive_after(self.lead)
        self.start_round()

    # ------------------------------------------------------------- base phase

    def start_base_phase(self) -> None:
        self.hearts = self.rules.hearts
        for seat in self.seats:
            seat["active"] = set(seat["tools"])
        self.emit("BASE_REFILL", hearts=self.hearts)
        for s in self.seats_from(self.round_starter):
            seat = self.seats[s]
            if not seat["secured"]:
                continue
            moved = [self.card(c) for c in seat["secured"]]
            for c in seat["secured"]:
                loot = self.rows[c].loot
                if loot in ITEM_KINDS:
                    insort(seat["items"], c)
                    continue
                self.box.append(c)
                if loot == TORCH:
                    self.take_torches(seat, self.rows[c].torches)
            seat["secured"] = []
            self.emit("LOOT_TO_INVENTORY", seat=s, cards=moved)
        self.phase = "BASE"
        self.order = self.seats_from(self.round_starter)
        self.idx = 0
        for seat in self.seats:
            seat["base_actions"] = 0

    def end_base_phase(self) -> None:
        self.eliminations += 1
        for s in self.seats_from(self.round_starter):
            seat = self.seats[s]
            if not seat["torches"] and not seat["stash"]:
                self.eliminate(seat, "no torch in inventory or stash", self.eliminations)
        if self.ended_last_standing():
            return
        if self.seats[self.lead]["eliminated"]:
            self.lead = self.next_alive_after(self.lead)
            self.round_starter = self.lead
        self.start_turn()

    def base_action(self, seat: dict[str, Any], a: ActionDict) -> None:
        kind, i = a["kind"], seat["index"]
        if kind == "DONE":
            self.emit("DONE", seat=i)
            self.idx += 1
            if self.idx >= len(self.order):
                self.end_base_phase()
            return
        if kind == "EXCHANGE":
            recipe = next(r for r in self.rules.recipes if r.name == a["recipe"])
            paid = []
            for item, count in recipe.cost:
                for c in self.items_of(seat, item)[:count]:
                    seat["items"].remove(c)
                    self.box.append(c)
                    paid.append(self.card(c))
            tool = self.exchange[recipe.name].pop(0)
            seat["tools"].append(tool)
            seat["active"].add(tool)
            self.emit("EXCHANGE", seat=i, recipe=recipe.name, tool_id=tool, cards=paid)
        elif kind == "TRADE":
            c = self.items_of(seat, a["item"])[0]
            seat["items"].remove(c)
            self.box.append(c)
            got = self.take_torches(seat, self.rules.trade[a["item"]])
            self.emit("TRADE", seat=i, item=a["item"], amount=got)
        elif kind == "GIVE":
            c = self.items_of(seat, a["item"])[0]
            seat["items"].remove(c)
            insort(self.seats[a["to_seat"]]["items"], c)
            self.emit("GIVE", seat=i, to_seat=a["to_seat"], item=a["item"])
        elif kind == "STASH":
            insort(seat["stash"], seat["torches"].pop(0))
            self.emit("STASH", seat=i)
        elif kind == "UNSTASH":
            insort(seat["torches"], seat["stash"].pop(0))
            self.emit("UNSTASH", seat=i)
        elif kind == "DISCARD":
            if a["item"] == TORCH:
                c = seat["torches"].pop(0)
            else:
                c = self.items_of(seat, a["item"])[0]
                seat["items"].remove(c)
            self.box.append(c)
            self.emit("DISCARD", seat=i, item=a["item"])
        seat["base_actions"] += 1

    # ------------------------------------------------------------ exploration

    def after_decision(self) -> None:
        self.idx += 1
        if self.idx < len(self.order):
            return
        self.pay_torches(self.seats[self.lead], self.rules.explore_cost)
        self.phase = "POSITION"
        self.order = self.seats_from(self.lead)
        self.idx = 0

    def call_return(self, seat: dict[str, Any]) -> None:
        rules = self.rules
        purse = len(seat["torches"]) + (len(seat["stash"]) if rules.return_from_stash else 0)
        paid = self.pay_torches(seat, rules.return_cost, from_stash=rules.return_from_stash)
        self.emit("RETURN", seat=seat["index"], amount=paid)
        if purse < rules.return_cost:
            self.move_unsecured(seat, "LOOT_LOST", self.box)
        for s in self.seats_from(seat["index"]):
            rider = self.seats[s]
            holds = any(self.rows[c].loot in LOOT_KINDS for c in rider["unsecured"])
            if rider is not seat and rules.rider_fee and holds:
                fee = self.pay_torches(rider, rules.rider_fee, rules.return_from_stash, to=seat)
                if fee < rules.rider_fee:
                    self.move_unsecured(rider, "LOOT_LOST", self.box)
            self.move_unsecured(rider, "LOOT_SECURED", rider["secured"])
        self.end_round()

    def start_resolve(self) -> None:
        self.phase = "RESOLVE"
        self.to_resolve = [
            p for p in range(self.rules.passages)
            if self.passages[p] and any(self.seats[s]["position"] == p for s in self.order)
        ]  # fmt: skip
        self.next_passage()

    def next_passage(self) -> None:
        while self.to_resolve:
            p = self.to_resolve.pop(0)
            at = [s for s in self.seats_from(self.lead) if self.seats[s]["position"] == p]
            if not at or not self.passages[p]:
                continue
            top = self.passages[p][-1]
            self.make_known(top)
            self.res_passage, self.res_owner, self.res_helpers = p, at[0], at[1:]
            self.attempting = False
            self.committers = []
            self.cidx = self.committed = 0
            self.emit("REVEAL", passage=p, seat=self.res_owner, card=self.card(top))
            return
        self.res_passage = -1
        self.end_turn()

    def resolved(self) -> None:
        p = self.res_passage
        c = self.passages[p].pop()
        self.known.discard(c)
        self.tiles.discard(p)
        owner = self.seats[self.res_owner]
        owner["unsecured"].append(c)
        self.attempting = False
        self.emit("RESOLVED", seat=owner["index"], passage=p, card=self.card(c))
        loot = self.rows[c].loot
        if loot in self.objectives and loot not in owner["completed"]:
            owner["completed"].append(loot)
            self.emit("OBJECTIVE", seat=owner["index"], objective=loot)
            if len(owner["completed"]) == len(self.objectives):
                self.end_game("won", owner["index"])
                return
        if not any(self.passages):
            self.end_game("cave_exhausted")
            return
        self.next_passage()

    def unresolved(self) -> None:
        top = self.passages[self.res_passage][-1]
        self.attempting = False
        self.emit("UNRESOLVED", passage=self.res_passage, card=self.card(top))
        damage = self.card(top)["damage"]
        if damage:
            self.hearts = max(0, self.hearts - damage)
            self.emit("DAMAGE", amount=damage, hearts=self.hearts)
            if self.hearts == 0:
                self.emit("RESPAWN", round=self.round)
                for s in self.seats_from(self.lead):
                    self.move_unsecured(self.seats[s], "LOOT_LOST", self.box)
                self.to_resolve = []
                self.res_passage = -1
                self.end_round()
                return
        self.next_passage()

    def turn_action(self, seat: dict[str, Any], a: ActionDict) -> None:
        kind, i = a["kind"], seat["index"]
        if kind in ("EXPLORE", "CONTINUE"):
            self.emit(kind, seat=i)
            self.after_decision()
        elif kind == "RETURN":
            self.call_return(seat)
        elif kind == "MOVE":
            seat["position"] = a["passage"]
            seat["moves"] += 1
            self.emit("MOVE", seat=i, passage=a["passage"])
        elif kind == "PEEK":
            p = seat["position"]
            self.pay_torches(seat, self.rules.peek_cost)
            self.tiles.add(p)
            self.make_known(self.passages[p][-1])
            seat["moves"] += 1
            self.emit("PEEK", seat=i, passage=p, card=self.card(self.passages[p][-1]))
        elif kind == "READY":
            seat["ready"] = True
            self.emit("READY", seat=i, passage=seat["position"])
            self.idx += 1
            if self.idx >= len(self.order):
                self.start_resolve()
        elif kind == "ATTEMPT":
            self.attempting = True
            self.committers = [self.res_owner, *self.res_helpers]
            self.cidx = self.committed = 0
            self.emit("ATTEMPT", seat=i, passage=self.res_passage)
        elif kind == "LEAVE":
            self.emit("LEAVE", seat=i, passage=self.res_passage)
            self.unresolved()
        elif kind == "COMMIT":
            seat["active"].discard(a["tool_id"])
            self.committed += self.tools[a["tool_id"]]["strength"]
            self.emit("COMMIT", seat=i, tool_id=a["tool_id"], amount=self.committed)
            if self.committed >= self.card(self.passages[self.res_passage][-1])["strength"]:
                self.resolved()
        elif kind == "STOP":
            self.emit("STOP", seat=i)
            self.cidx += 1
            if self.cidx >= len(self.committers):
                self.unresolved()

    # ----------------------------------------------------------------- legal

    def acting_seat(self) -> int:
        if self.is_over:
            return -1
        if self.phase == "RESOLVE":
            return self.committers[self.cidx] if self.attempting else self.res_owner
        return self.order[self.idx]

    def legal(self) -> list[ActionDict]:
        """Every legal action of the acting seat, in the engine's documented order."""
        if self.is_over:
            return []
        seat = self.seats[self.acting_seat()]
        if self.phase == "DECIDE":
            if seat["index"] != self.lead:
                return [{"kind": "CONTINUE"}, {"kind": "RETURN"}]
            return ([{"kind": "EXPLORE"}] if seat["torches"] else []) + [{"kind": "RETURN"}]
        if self.phase == "POSITION":
            at = seat["position"]
            at_card = at >= 0 and bool(self.passages[at])
            within = seat["moves"] < self.rules.position_action_limit
            legal: list[ActionDict] = [{"kind": "READY"}] if at_card else []
            if within or not at_card:
                open_ = [p for p in range(len(self.passages)) if self.passages[p] and p != at]
                legal += [{"kind": "MOVE", "passage": p} for p in open_]
            top_known = at_card and self.passages[at][-1] in self.known
            tile_free = len(self.tiles) < self.rules.tiles
            if within and at_card and not top_known and tile_free and seat["torches"]:
                legal.append({"kind": "PEEK"})
            return legal
        if self.phase == "RESOLVE":
            if not self.attempting:
                return [{"kind": "ATTEMPT"}, {"kind": "LEAVE"}]
            need = self.rows[self.passages[self.res_passage][-1]].tool
            legal = [{"kind": "COMMIT", "tool_id": t} for t in seat["tools"]
                     if t in seat["active"] and self.tools[t]["kind"] == need]  # fmt: skip
            return [*legal, {"kind": "STOP"}]
        return self.base_legal(seat)

    def over_capacity(self, seat: dict[str, Any]) -> bool:
        return len(seat["torches"]) + len(seat["items"]) > seat["capacity"]

    def done_allowed(self, seat: dict[str, Any]) -> bool:
        return not self.over_capacity(seat) and (bool(seat["torches"]) or not seat["stash"])

    def base_legal(self, seat: dict[str, Any]) -> list[ActionDict]:
        rules = self.rules
        held = [k for k, n in self.counts(seat).items() if n]
        if seat["base_actions"] >= rules.base_action_limit:
            if self.done_allowed(seat):
                return [{"kind": "DONE"}]
            if self.over_capacity(seat):
                kinds = ([TORCH] if seat["torches"] else []) + held
                return [{"kind": "DISCARD", "item": k} for k in kinds]
            return [{"kind": "UNSTASH"}]
        counts = self.counts(seat)
        legal: list[ActionDict] = []
        for r in rules.recipes:
            if self.exchange[r.name] and all(counts[k] >= n for k, n in r.cost):
                legal.append({"kind": "EXCHANGE", "recipe": r.name})
        legal += [{"kind": "TRADE", "item": k} for k in held if k in rules.trade]
        receivers = [o["index"] for o in self.seats if o is not seat and not o["eliminated"]
                     and len(o["torches"]) + len(o["items"]) < o["capacity"]]  # fmt: skip
        legal += [{"kind": "GIVE", "item": k, "to_seat": r} for k in held for r in receivers]
        if seat["torches"]:
            legal.append({"kind": "STASH"})
        if seat["stash"]:
            legal.append({"kind": "UNSTASH"})
        if seat["torches"]:
            legal.append({"kind": "DISCARD", "item": TORCH})
        legal += [{"kind": "DISCARD", "item": k} for k in held]
        if self.done_allowed(seat):
            legal.append({"kind": "DONE"})
        return legal

    def default_action(self) -> ActionDict:
        """Rules §6: what a fault plays."""
        legal = self.legal()
        seat = self.seats[self.acting_seat()]
        if self.phase == "DECIDE":
            if seat["index"] != self.lead:
                return {"kind": "CONTINUE"}
            return {"kind": "EXPLORE"} if {"kind": "EXPLORE"} in legal else {"kind": "RETURN"}
        if self.phase == "POSITION":
            if {"kind": "READY"} in legal:
                return {"kind": "READY"}
            return next(a for a in legal if a["kind"] == "MOVE")
        if self.phase == "RESOLVE":
            return {"kind": "STOP"} if self.attempting else {"kind": "LEAVE"}
        if {"kind": "DONE"} in legal:
            return {"kind": "DONE"}
        if self.over_capacity(seat):
            for item in self.rules.default_discard_order:
                if {"kind": "DISCARD", "item": item} in legal:
                    return {"kind": "DISCARD", "item": item}
        return {"kind": "UNSTASH"}

    # --------------------------------------------------------------- entries

    def play(self, a: ActionDict) -> None:
        seat = self.seats[self.acting_seat()]
        if self.phase == "BASE":
            self.base_action(seat, a)
        else:
            self.turn_action(seat, a)

    def forfeit(self, seat: dict[str, Any], reason: str) -> None:
        """Rules §6: out at once; the decision in progress carries on."""
        self.eliminations += 1
        seat["forfeited"] = True
        self.emit("FORFEIT", seat=seat["index"], reason=reason)
        self.eliminate(seat, reason, self.eliminations)
        if self.ended_last_standing():
            return
        i = seat["index"]
        if self.phase == "RESOLVE":
            if i in self.res_helpers:
                self.res_helpers.remove(i)
            if i == self.res_owner:
                if not self.res_helpers:
                    self.attempting = False
                    self.next_passage()
                    return
                self.res_owner = self.res_helpers.pop(0)
            if not self.attempting or i not in self.committers:
                return
            pos = self.committers.index(i)
            self.committers.remove(i)
            if pos < self.cidx:
                self.cidx -= 1
            if self.cidx >= len(self.committers):
                self.unresolved()
            return
        if i not in self.order:
            return
        pos = self.order.index(i)
        self.order.remove(i)
        if self.phase == "DECIDE" and i == self.lead:
            self.lead = self.next_alive_after(i)
            self.order = self.seats_from(self.lead)
            self.idx = 0
            return
        if pos < self.idx:
            self.idx -= 1
        if self.idx < len(self.order):
            return
        if self.phase == "BASE":
            self.end_base_phase()
        elif self.phase == "DECIDE":
            self.idx = len(self.order) - 1
            self.after_decision()
        elif self.phase == "POSITION":
            self.start_resolve()

    def step(self, entry: dict[str, Any]) -> list[dict[str, Any]]:
        """One record entry; the events it caused."""
        start = len(self.events)
        if self.is_over:
            raise ValueError("the game is over")
        if "forfeit" in entry:
            self.forfeit(self.seats[entry["seat"]], entry["forfeit"])
        elif entry["seat"] != self.acting_seat():
            raise ValueError(f"entry for seat {entry['seat']}, seat {self.acting_seat()} acts")
        elif "fault" in entry:
            seat = self.seats[entry["seat"]]
            seat["faults"] += 1
            reason = entry["fault"]
            self.emit("FAULT", seat=seat["index"], reason=reason, amount=seat["faults"])
            limit = self.rules.fault_limit
            if seat["faults"] >= limit:
                nth = ORDINALS[limit - 1] if limit <= len(ORDINALS) else f"{limit}th"
                self.forfeit(seat, f"{nth} fault: {reason}")
            else:
                self.play(self.default_action())
        else:
            legal = self.legal()
            action = entry["action"]
            if action not in legal or (entry.get("forced") and len(legal) != 1):
                raise ValueError(f"{action} is not legal now: {legal}")
            self.play(action)
        return self.events[start:]

    # ---------------------------------------------------------------- result

    def loot_points(self, seat: dict[str, Any]) -> int:
        points = self.rules.loot_points
        cards = seat["items"] + seat["secured"]
        return sum(points[self.rows[c].loot] for c in cards if self.rows[c].loot in ITEM_KINDS)

    def build_result(self) -> dict[str, Any]:
        """Rules §5: the winner first; then the rest, best key first, ties sharing a rank."""
        seats = self.seats
        ranks = [0] * len(seats)
        next_rank = 1
        if self.winner >= 0:
            ranks[self.winner] = 1
            next_rank = 2
        standing = [
            (
                s["index"],
                (len(s["completed"]), self.loot_points(s), len(s["torches"]) + len(s["stash"])),
            )
            for s in seats
            if not s["eliminated"] and s["index"] != self.winner
        ]
        out = [
            (s["index"], (s["elimination"],))
            for s in seats
            if s["eliminated"] and not s["forfeited"]
        ]
        gone = [(s["index"], (s["elimination"],)) for s in seats if s["forfeited"]]
        for group in (standing, out, gone):
            for i, key in group:
                ranks[i] = next_rank + sum(1 for _, other in group if other > key)
            next_rank += len(group)

        def ended(s: dict[str, Any]) -> str:
            if s["index"] == self.winner:
                return "won"
            if s["forfeited"]:
                return "forfeited"
            return "eliminated" if s["eliminated"] else "finished"

        return {
            "reason": self.end_reason, "winner": self.winner, "turns": self.turn,
            "rounds": self.round, "ranks": ranks,
            "seats": [{"seat": s["index"], "rank": ranks[s["index"]],
                       "objectives": len(s["completed"]), "completed": list(s["completed"]),
                       "loot_points": self.loot_points(s),
                       "torches": len(s["torches"]) + len(s["stash"]), "faults": s["faults"],
                       "ended": ended(s), "reason": s["reason"]} for s in seats],
        }  # fmt: skip

    # ----------------------------------------------------------- observation

    def observation(self, seat: int) -> dict[str, Any]:
        """What `seat` may see (rules §3), built from scratch."""
        passages = []
        for p, cards in enumerate(self.passages):
            entry: dict[str, Any] = {
                "index": p, "count": len(cards),
                "backs": [self.rows[c].material for c in cards],
                "sleeved": [c in self.sleeved for c in cards],
                "tile": p in self.tiles,
            }  # fmt: skip
            if cards and cards[-1] in self.known:
                entry["top"] = self.card(cards[-1])
            passages.append(entry)
        players = [
            {
                "seat": s["index"], "colour": s["colour"], "capacity": s["capacity"],
                "torches": len(s["torches"]), "items": self.counts(s), "stash": len(s["stash"]),
                "tools": [{**self.tools[t], "active": t in s["active"]} for t in s["tools"]],
                "position": s["position"],
                "unsecured": [self.card(c) for c in s["unsecured"]],
                "secured": [self.card(c) for c in s["secured"]],
                "completed": list(s["completed"]), "eliminated": s["eliminated"],
                "forfeited": s["forfeited"], "faults": s["faults"],
                "base_actions": s["base_actions"], "moves": s["moves"], "ready": s["ready"],
            }
            for s in self.seats
        ]  # fmt: skip
        obs: dict[str, Any] = {
            "ruleset": self.rules.id, "engine_version": ENGINE_VERSION, "seat": seat,
            "num_seats": len(self.seats), "difficulty": self.config["difficulty"],
            "objectives": list(self.objectives), "phase": self.phase, "round": self.round,
            "turn": self.turn, "lead": self.lead, "round_starter": self.round_starter,
            "acting_seat": self.acting_seat(), "hearts": self.hearts,
            "supply": len(self.supply), "free_tiles": self.rules.tiles - len(self.tiles),
            "exchange_stack": {name: len(stack) for name, stack in self.exchange.items()},
            "passages": passages, "players": players,
            "unseen": [{"material": m, "name": name, "count": n}
                       for (m, name), n in sorted(self.unseen.items()) if n],
        }  # fmt: skip
        if self.phase == "RESOLVE" and self.res_passage >= 0 and not self.is_over:
            obs["resolution"] = {
                "passage": self.res_passage,
                "card": self.card(self.passages[self.res_passage][-1]),
                "owner": self.res_owner, "helpers": list(self.res_helpers),
                "attempting": self.attempting, "committed": self.committed,
                "committer": self.committers[self.cidx] if self.attempting else -1,
            }  # fmt: skip
        return obs

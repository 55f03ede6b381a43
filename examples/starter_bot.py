"""Starter bot: copy this file, change `act`, run `python starter_bot.py --listen 127.0.0.1:50061`.

Needs only the SDK (`pip install ./sdk`). The rules are in docs/rules.md, the
observation's keys in docs/engine-api.md, a walk-through in docs/writing-a-bot.md.
"""

from digdown.bot import parse_args, serve
from digdown.rulesets import load


def act(observation: dict, legal_actions: list) -> dict:
    """Called once per decision that has a real choice (always 2+ legal actions).

    `observation` is what your seat may know, `legal_actions` are dicts such as
    {"kind": "MOVE", "passage": 2}. Return one of them (or its index) within the
    deadline (1 s): a late, illegal or crashing answer is a fault, the engine plays
    a safe default, and the third fault forfeits your seat.
    """
    cave = load(observation["ruleset"])["cave"]  # card table: name, tool, strength, loot...
    me = observation["players"][observation["seat"]]
    power = {
        kind: sum(t["strength"] for t in me["tools"] if t["active"] and t["kind"] == kind)
        for kind in ("PICKAXE", "SWORD")
    }
    first = {}  # the first legal action of each kind
    for action in legal_actions:
        first.setdefault(action["kind"], action)

    def chance(passage: dict) -> float:
        """How likely my active tools beat the top card of `passage` (card data + unseen)."""
        if "top" in passage:
            return float(power[passage["top"]["tool"]] >= passage["top"]["strength"])
        left = {(u["material"], u["name"]): u["count"] for u in observation["unseen"]}
        rows = [
            (left.get((r["material"], r["name"]), 0), r)
            for r in cave
            if r["material"] == passage["backs"][-1]
        ]
        total = sum(n for n, _ in rows) or 1
        return sum(n for n, r in rows if power[r["tool"]] >= r["strength"]) / total

    phase = observation["phase"]
    if phase == "BASE":  # better tools first, carry every torch that fits, then go
        free = me["capacity"] - me["torches"] - sum(me["items"].values())
        for kind in ("EXCHANGE", "UNSTASH" if free > 0 else "", "DONE", "DISCARD"):
            if kind in first:
                return first[kind]
    if phase == "DECIDE":  # the lead pays a torch per turn: keep 2 to pay for the return
        if "EXPLORE" in first and me["torches"] > 2:
            return first["EXPLORE"]
        return first.get("CONTINUE") or first["RETURN"]
    if phase == "POSITION":  # stand where my tools most likely win; stay on a tie
        here = [a for a in legal_actions if a["kind"] == "READY"]
        moves = [a for a in legal_actions if a["kind"] == "MOVE"]
        return max(
            here + moves,
            key=lambda a: chance(observation["passages"][a.get("passage", me["position"])]),
        )
    if phase == "RESOLVE":
        card = observation["resolution"]["card"]
        if "ATTEMPT" in first:
            return first["ATTEMPT" if power[card["tool"]] >= card["strength"] else "LEAVE"]
        return first.get("COMMIT") or first["STOP"]
    return legal_actions[0]


if __name__ == "__main__":
    args = parse_args(None, "starter bot")
    serve(act, listen=args.listen, name=args.name or "starter", port_file=args.port_file)

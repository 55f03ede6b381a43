"""Events and actions in words, for people watching a replay.

The replay viewer shows what happened without knowing the rules: every
sentence is written here, next to the engine, from the engine's own event and
action dicts (docs/engine-api.md). An event kind this module does not know (a
later ruleset's) still gets a plain sentence from its fields, never an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

SeatLabel = Callable[[Any], str]


def card_text(card: Mapping[str, Any]) -> str:
    """'Deepslate Skeleton (sword 4, damage 1, enchanted)' from an engine Card dict."""
    name = str(card.get("name", "?"))
    material = str(card.get("material", "")).title()
    if material and not name.startswith(material):
        name = f"{material} {name}"
    facts = [f"{str(card.get('tool', '?')).lower()} {card.get('strength', '?')}"]
    if card.get("damage"):
        facts.append(f"damage {card['damage']}")
    loot = card.get("loot", "NONE")
    if loot == "TORCH":
        facts.append(f"{card.get('torches', 0)} torches")
    elif loot and loot != "NONE":
        facts.append(str(loot))
    if card.get("enchanted"):
        facts.append("enchanted")
    return f"{name} ({', '.join(facts)})"


def _cards(cards: Sequence[Mapping[str, Any]] | None) -> str:
    return ", ".join(card_text(c) for c in cards or []) or "nothing"


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _recipe(name: Any) -> str:
    return str(name).replace("_", " ").lower()


def describe_event(
    event: Mapping[str, Any], seat: SeatLabel, tool: Callable[[Any], str] = str
) -> str:
    """One sentence for one engine event; `seat` names a seat, `tool` names a tool id."""
    kind = event.get("kind", "?")
    e = event.get
    s = seat(e("seat")) if "seat" in event else ""
    match kind:
        case "GAME_START":
            return f"The game starts; {s} leads first."
        case "ROUND_START":
            return f"Round {e('round')} starts; {s} leads."
        case "BASE_REFILL":
            return f"At the base: hearts back to {e('hearts')}, every tool active again."
        case "LOOT_TO_INVENTORY":
            return f"{s} brings home {_cards(e('cards'))}."
        case "EXCHANGE":
            return (
                f"{s} exchanges {_cards(e('cards'))} for a {_recipe(e('recipe'))} "
                f"({tool(e('tool_id'))})."
            )
        case "TRADE":
            return f"{s} trades 1 {e('item')} for {_plural(e('amount'), 'torch')}."
        case "GIVE":
            return f"{s} gives 1 {e('item')} to {seat(e('to_seat'))}."
        case "STASH":
            return f"{s} puts a torch in its stash."
        case "UNSTASH":
            return f"{s} takes a torch from its stash."
        case "DISCARD":
            return f"{s} discards 1 {e('item')}."
        case "DONE":
            return f"{s} is done at the base."
        case "ELIMINATED":
            return f"{s} is eliminated: {e('reason')}."
        case "TURN_START":
            return f"Turn {e('turn')} starts; {s} leads."
        case "EXPLORE":
            return f"{s} (the lead) explores."
        case "CONTINUE":
            return f"{s} continues."
        case "RETURN":
            return f"{s} calls the return and pays {_plural(e('amount'), 'torch')}."
        case "TORCH_PAID":
            return f"{s} pays {_plural(e('amount'), 'torch')}."
        case "LOOT_SECURED":
            return f"{s} secures {_cards(e('cards'))}."
        case "LOOT_LOST":
            return f"{s} loses {_cards(e('cards'))}."
        case "MOVE":
            return f"{s} moves to passage {e('passage')}."
        case "PEEK":
            return f"{s} peeks at passage {e('passage')}: {card_text(e('card') or {})}."
        case "READY":
            return f"{s} is ready at passage {e('passage')}."
        case "REVEAL":
            return f"Passage {e('passage')} reveals {card_text(e('card') or {})}; {s} owns it."
        case "ATTEMPT":
            return f"{s} attempts it."
        case "LEAVE":
            return f"{s} leaves it."
        case "COMMIT":
            return f"{s} commits {tool(e('tool_id'))}: {e('amount')} committed."
        case "STOP":
            return f"{s} stops committing."
        case "RESOLVED":
            return f"{card_text(e('card') or {})} is resolved: {s} takes it (unsecured)."
        case "UNRESOLVED":
            return f"{card_text(e('card') or {})} at passage {e('passage')} stays unresolved."
        case "DAMAGE":
            return f"The party takes {e('amount')} damage: {_plural(e('hearts'), 'heart')} left."
        case "OBJECTIVE":
            return f"{s} completes the {e('objective')} objective."
        case "RESPAWN":
            return "The hearts ran out: everyone respawns at the base, unsecured loot is lost."
        case "ROUND_END":
            return f"Round {e('round')} ends."
        case "FAULT":
            return f"{s} faults ({e('amount')} of 3): {e('reason')}. The default action is played."
        case "FORFEIT":
            return f"{s} forfeits: {e('reason')}."
        case "GAME_END":
            ranks = e("ranks") or []
            order = ", ".join(f"{seat(i)} rank {r}" for i, r in enumerate(ranks))
            winner = (
                f"{seat(e('seat'))} wins; " if isinstance(e("seat"), int) and e("seat") >= 0 else ""
            )
            return f"The game ends ({e('reason')}): {winner}{order}."
    fields = ", ".join(f"{k} {v}" for k, v in event.items() if k != "kind")
    return f"{kind}: {fields}." if fields else f"{kind}."


def describe_action(
    action: Mapping[str, Any], seat: SeatLabel, tool: Callable[[Any], str] = str
) -> str:
    """A short label for an action dict: 'MOVE to passage 2', 'COMMIT Red Stone Sword (2)'."""
    kind = str(action.get("kind", "?"))
    a = action.get
    match kind:
        case "MOVE":
            return f"MOVE to passage {a('passage')}"
        case "COMMIT":
            return f"COMMIT {tool(a('tool_id'))}"
        case "GIVE":
            return f"GIVE {a('item')} to {seat(a('to_seat'))}"
        case "EXCHANGE":
            return f"EXCHANGE for {_recipe(a('recipe'))}"
        case "TRADE" | "DISCARD":
            return f"{kind} {a('item')}"
    args = " ".join(f"{k}={v}" for k, v in action.items() if k != "kind")
    return f"{kind} {args}" if args else kind

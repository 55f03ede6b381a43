"""What one seat may see (rules §3): everything public, no unknown card face, no seed."""

from __future__ import annotations

from functools import cache
from typing import Any

from .cards import tool_cards
from .phases import RESOLVE
from .ruleset import Ruleset
from .table import Table
from .versions import ENGINE_VERSION


def observe(state: Table, seat: int) -> dict[str, Any]:
    if not 0 <= seat < len(state.seats):
        raise ValueError(f"no seat {seat} in a {len(state.seats)}-seat game")
    cards = state.card_dicts
    passages = []
    for p, passage in enumerate(state.passages):
        size = len(passage)
        entry: dict[str, Any] = {
            "index": p,
            "count": size,
            "backs": state.dealt_backs[p][:size],
            "sleeved": state.dealt_sleeves[p][:size],
            "tile": p in state.tiles,
        }
        if passage and passage[-1] in state.known:
            entry["top"] = cards[passage[-1]]
        passages.append(entry)
    tools = _tool_faces(state)
    players = []
    for s in state.seats:
        players.append(
            {
                "seat": s.index,
                "colour": s.colour,
                "capacity": s.capacity,
                "torches": len(s.torches),
                "items": state.item_counts(s),
                "stash": len(s.stash),
                "tools": [{**tools[t], "active": t in s.active} for t in s.tools],
                "position": s.position,
                "unsecured": [cards[c] for c in s.unsecured],
                "secured": [cards[c] for c in s.secured],
                "completed": list(s.completed),
                "eliminated": s.eliminated,
                "forfeited": s.forfeited,
                "faults": s.faults,
                "base_actions": s.base_actions,
                "moves": s.moves,
                "ready": s.ready,
            }
        )
    obs: dict[str, Any] = {
        "ruleset": state.rules.id,
        "engine_version": ENGINE_VERSION,
        "seat": seat,
        "num_seats": len(state.seats),
        "difficulty": state.config["difficulty"],
        "objectives": list(state.objectives),
        "phase": state.phase,
        "round": state.round,
        "turn": state.turn,
        "lead": state.lead,
        "round_starter": state.round_starter,
        "acting_seat": state.acting_seat,
        "hearts": state.hearts,
        "supply": len(state.supply),
        "free_tiles": state.rules.tiles - len(state.tiles),
        "exchange_stack": {name: len(stack) for name, stack in state.exchange.items()},
        "passages": passages,
        "players": players,
        "unseen": [
            {"material": m, "name": name, "count": n}
            for (m, name), n in sorted(state.unseen.items())
            if n
        ],
    }
    if state.phase == RESOLVE and state.res_passage >= 0 and not state.is_over:
        obs["resolution"] = {
            "passage": state.res_passage,
            "card": cards[state.passages[state.res_passage][-1]],
            "owner": state.res_owner,
            "helpers": list(state.res_helpers),
            "attempting": state.attempting,
            "committed": state.committed,
            "committer": state.committers[state.cidx] if state.attempting else -1,
        }
    return obs


def _tool_faces(state: Table) -> dict[int, dict[str, Any]]:
    return _tool_faces_of(state.rules)


@cache
def _tool_faces_of(rules: Ruleset) -> dict[int, dict[str, Any]]:
    """The fixed part of every tool's public face, built once per ruleset."""
    return {
        t: {"id": t, "kind": card.kind, "name": card.name, "strength": card.strength}
        for t, card in tool_cards(rules).items()
    }

"""What one seat may see (rules §3): everything public, no unknown card face, no seed."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from .state import ENGINE_VERSION, RESOLVE, items_of_kind

if TYPE_CHECKING:
    from .state import State


def observe(state: State, seat: int) -> dict[str, Any]:
    if not 0 <= seat < len(state.seats):
        raise ValueError(f"no seat {seat} in a {len(state.seats)}-seat game")
    cards = state.card_dicts
    rows = state.rows
    passages = []
    unseen: Counter[tuple[str, str]] = Counter()
    for p, passage in enumerate(state.passages):
        entry: dict[str, Any] = {
            "index": p,
            "count": len(passage),
            "backs": [rows[c].material for c in passage],
            "sleeved": [c in state.sleeved for c in passage],
            "tile": p in state.tiles,
        }
        for c in passage:
            if c not in state.known:
                unseen[(rows[c].material, rows[c].name)] += 1
        if passage and passage[-1] in state.known:
            entry["top"] = cards[passage[-1]]
        passages.append(entry)
    table = state.tool_table
    players = []
    for s in state.seats:
        players.append(
            {
                "seat": s.index,
                "colour": s.colour,
                "capacity": s.capacity,
                "torches": len(s.torches),
                "items": items_of_kind(state, s),
                "stash": len(s.stash),
                "tools": [
                    {
                        "id": t,
                        "kind": table[t].kind,
                        "name": table[t].name,
                        "strength": table[t].strength,
                        "active": t in s.active,
                    }
                    for t in s.tools
                ],
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
            {"material": m, "name": name, "count": n} for (m, name), n in sorted(unseen.items())
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

"""What one seat may see (rules §3): everything public, no unknown card face, no seed."""

from __future__ import annotations

from functools import cache

from .cards import tool_cards
from .phases import RESOLVE
from .ruleset import Ruleset
from .shapes import Observation, Passage, Player, Tool, UnseenCount
from .table import Table
from .versions import ENGINE_VERSION


def observe(state: Table, seat: int) -> Observation:
    """The observation dict. Read-only: parts that did not change since the last observation
    (card faces, tool faces, passages, the unseen counts) are the same objects as in it."""
    if not 0 <= seat < len(state.seats):
        raise ValueError(f"no seat {seat} in a {len(state.seats)}-seat game")
    cards = state.card_dicts
    passages = [_passage(state, p) for p in range(len(state.passages))]
    faces = _tool_faces_of(state.rules)
    players: list[Player] = []
    for s in state.seats:
        active = s.active
        players.append(
            {
                "seat": s.index,
                "colour": s.colour,
                "capacity": s.capacity,
                "torches": len(s.torches),
                "items": state.item_counts(s),
                "stash": len(s.stash),
                "tools": [faces[t][1] if t in active else faces[t][0] for t in s.tools],
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
    obs: Observation = {
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
        "unseen": _unseen(state),
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


def _passage(state: Table, p: int) -> Passage:
    """Passage p's public entry; the previous one while the passage looks the same."""
    passage = state.passages[p]
    size = len(passage)
    tile = p in state.tiles
    top = passage[-1] if passage and passage[-1] in state.known else -1
    key = (size, tile, top)
    cached = state.passage_views[p]
    if cached is not None and cached[0] == key:
        return cached[1]
    entry: Passage = {
        "index": p,
        "count": size,
        "backs": state.dealt_backs[p][:size],
        "sleeved": state.dealt_sleeves[p][:size],
        "tile": tile,
    }
    if top >= 0:
        entry["top"] = state.card_dicts[top]
    state.passage_views[p] = (key, entry)
    return entry


def _unseen(state: Table) -> list[UnseenCount]:
    """The unseen counts by face; rebuilt only after a face became known (`make_known`)."""
    view = state.unseen_view
    if view is None:
        view = state.unseen_view = [
            {"material": m, "name": name, "count": n}
            for (m, name), n in sorted(state.unseen.items())
            if n
        ]
    return view


@cache
def _tool_faces_of(rules: Ruleset) -> dict[int, tuple[Tool, Tool]]:
    """Every tool's public face, (inactive, active), built once per ruleset (shared)."""
    faces: dict[int, tuple[Tool, Tool]] = {}
    for t, card in tool_cards(rules).items():
        faces[t] = (
            {
                "id": t,
                "kind": card.kind,
                "name": card.name,
                "strength": card.strength,
                "active": False,
            },
            {
                "id": t,
                "kind": card.kind,
                "name": card.name,
                "strength": card.strength,
                "active": True,
            },
        )
    return faces

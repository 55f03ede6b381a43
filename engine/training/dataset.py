"""The ladder's game exports as training data: (observation, action mask, action) arrays.

An export (``manage.py export_games``, ``GET /api/v1/exports/games/``) is either
JSON Lines, one finished match per line with its whole replay document
(docs/replay-format.md), or Parquet, one row per decision. Both come down to
the same decisions: a replay is re-simulated from its record (the dealt cave
and every entry, never the RNG) and every real choice a seat made — not a
forced move, a fault's default or a forfeit — is a decision: the seat's
observation encoded as the training environment encodes it
(``engine.training.encoding``), the indices of the legal actions, the index of
the one chosen, and the seat's final rank.

``decisions(doc)`` is what the ladder's Parquet export writes; ``load(path)``
reads either format into arrays for one setting (ruleset and seat count: the
encodings' sizes depend on them). Memory: rows are read and converted in
batches; only the arrays asked for are held.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.rules import RULESETS, Action
from engine.rules.record import apply_entry, state_from_record_setup

from .encoding import ActionCatalog, ObservationEncoder


@dataclass(frozen=True)
class Decision:
    """One real choice of one seat in a replayed game."""

    seat: int
    turn: int
    observation: list[float]
    legal: list[int]
    action: int
    rank: int


def record_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The engine record inside a replay document (its setup and ``decisions`` as entries)."""
    return {
        "format": doc["record_format"],
        "ruleset": doc["ruleset"],
        "config": doc["config"],
        "cave": doc["cave"],
        "sleeved": doc.get("sleeved", []),
        "first_lead": doc["first_lead"],
        "entries": doc["decisions"],
    }


def replay_of(state: Any) -> dict[str, Any]:
    """The core of a replay document (docs/replay-format.md) for a game played in-process:
    its record (setup and decisions) and result — what ``decisions`` reads."""
    r = state.record
    return {
        "format": "digdown-replay/1",
        "record_format": r["format"],
        "ruleset": r["ruleset"],
        "engine_version": r.get("engine_version", ""),
        "config": r["config"],
        "cave": r["cave"],
        "sleeved": r["sleeved"],
        "first_lead": r["first_lead"],
        "decisions": r["entries"],
        "events": state.log,
        "result": state.result,
    }


def setting_of(doc: dict[str, Any]) -> tuple[str, int]:
    """(ruleset, seats) of a replay: which encoding its decisions use."""
    return str(doc["ruleset"]), int(doc["config"]["num_seats"])


def decisions(doc: dict[str, Any]) -> Iterator[Decision]:
    """Every real choice in a replay, in order, encoded (see the module docstring)."""
    record = record_of(doc)
    ruleset, seats = setting_of(doc)
    rules = RULESETS[ruleset]
    encoder, catalog = ObservationEncoder(rules, seats), ActionCatalog(rules, seats)
    ranks = list(doc["result"]["ranks"])
    state = state_from_record_setup(record)
    for turn, entry in enumerate(record["entries"]):
        chose = "action" in entry and not entry.get("forced") and "fault" not in entry
        if chose and "forfeit" not in entry:
            seat = int(entry["seat"])
            obs = state.observation(seat)
            tools = [t["id"] for t in obs["players"][seat]["tools"]]
            legal = state.legal_actions()
            yield Decision(
                seat=seat,
                turn=turn,
                observation=encoder.encode_parts(obs),
                legal=sorted(catalog.index_of(a, tools) for a in legal),
                action=catalog.index_of(Action.from_dict(entry["action"]), tools),
                rank=int(ranks[seat]),
            )
        apply_entry(state, entry)


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """The matches of a JSON Lines export (gzip'd or not), one at a time."""
    p = Path(path)
    opener: Any = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _parquet_rows(path: str | Path, batch_rows: int = 8192) -> Iterator[dict[str, Any]]:
    import pyarrow.parquet as pq  # the export extra

    for batch in pq.ParquetFile(str(path)).iter_batches(batch_size=batch_rows):
        yield from batch.to_pylist()


@dataclass
class Arrays:
    """Training arrays of one setting: row i is one decision."""

    ruleset: str
    seats: int
    observations: np.ndarray  # float32 [N, observation size]
    masks: np.ndarray  # int8 [N, action count]
    actions: np.ndarray  # int64 [N]
    seat_ranks: np.ndarray  # int8 [N]: the deciding seat's final rank
    bots: list[str]


def load(
    path: str | Path,
    *,
    ruleset: str | None = None,
    seats: int | None = None,
    bots: Sequence[str] | None = None,
) -> Arrays:
    """An export (``.jsonl``/``.jsonl.gz`` or ``.parquet``) as arrays of one setting.

    The setting is ``ruleset`` and ``seats``, or the first match's; decisions of
    other settings are skipped. ``bots`` keeps only those bots' decisions (by name).
    """
    p = Path(path)
    rows: Iterable[dict[str, Any]]
    rows = _parquet_rows(p) if p.suffix == ".parquet" else _jsonl_decisions(p)
    wanted = set(bots) if bots else None
    obs: list[list[float]] = []
    legal: list[list[int]] = []
    acts: list[int] = []
    ranks: list[int] = []
    names: list[str] = []
    for row in rows:
        if ruleset is None or seats is None:
            ruleset, seats = str(row["ruleset"]), int(row["num_seats"])
        if (row["ruleset"], row["num_seats"]) != (ruleset, seats):
            continue
        if wanted is not None and row["bot"] not in wanted:
            continue
        obs.append(row["observation"])
        legal.append(row["legal"])
        acts.append(row["action"])
        ranks.append(row["rank"])
        names.append(row["bot"])
    if ruleset is None or seats is None:
        raise ValueError(f"{path}: no decisions")
    size = ActionCatalog(RULESETS[ruleset], seats).size
    masks = np.zeros((len(legal), size), dtype=np.int8)
    for i, indices in enumerate(legal):
        masks[i, indices] = 1
    return Arrays(
        ruleset=ruleset,
        seats=seats,
        observations=np.asarray(obs, dtype=np.float32).reshape(len(obs), -1),
        masks=masks,
        actions=np.asarray(acts, dtype=np.int64),
        seat_ranks=np.asarray(ranks, dtype=np.int8),
        bots=names,
    )


def _jsonl_decisions(path: Path) -> Iterator[dict[str, Any]]:
    """The decision rows of a JSON Lines export, as the Parquet export has them."""
    for line in read_jsonl(path):
        yield from decision_rows(line)


def decision_rows(line: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The Parquet export's rows of one exported match (a JSON Lines line)."""
    doc = line["replay"]
    ruleset, seats = setting_of(doc)
    bot_of = {s["seat"]: s.get("bot", "") for s in line.get("seats", [])}
    for d in decisions(doc):
        yield {
            "match": int(line["match"]),
            "ladder": line.get("ladder", ""),
            "ruleset": ruleset,
            "num_seats": seats,
            "seat": d.seat,
            "bot": bot_of.get(d.seat, ""),
            "turn": d.turn,
            "observation": d.observation,
            "legal": d.legal,
            "action": d.action,
            "rank": d.rank,
        }

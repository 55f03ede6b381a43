"""Setting up a game (rules §2): the pinned deal of the cave, sleeves and first lead."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cards import cave_rows_by_id
from .pinned_random import MAX_SEED, draw_index, fisher_yates, make_rng
from .ruleset import RULESETS, Ruleset
from .shapes import Config
from .state import State


@dataclass(frozen=True)
class GameConfig:
    """Everything that determines a game before the first action."""

    seed: int = 0
    num_seats: int = 2
    difficulty: str = "normal"
    ruleset: str = "dd-1"

    def validate(self) -> Ruleset:
        """The config's ruleset, or ValueError naming what is wrong."""
        if self.ruleset not in RULESETS:
            raise ValueError(f"unknown ruleset {self.ruleset!r}; known: {sorted(RULESETS)}")
        rules = RULESETS[self.ruleset]
        seats = rules.seat_counts
        if type(self.num_seats) is not int or self.num_seats not in seats:
            raise ValueError(f"num_seats must be one of {list(seats)}, got {self.num_seats!r}")
        if self.difficulty not in rules.difficulties:
            raise ValueError(
                f"difficulty must be one of {rules.difficulties}, got {self.difficulty!r}"
            )
        if type(self.seed) is not int or not 0 <= self.seed < MAX_SEED:
            raise ValueError(f"seed must be an integer with 0 <= seed < 2^63, got {self.seed!r}")
        return rules

    def to_dict(self) -> Config:
        # The fields in declaration order, as asdict gives them (asdict's deep copy is slow).
        return {
            "seed": self.seed,
            "num_seats": self.num_seats,
            "difficulty": self.difficulty,
            "ruleset": self.ruleset,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GameConfig:
        return cls(
            seed=d.get("seed", 0),
            num_seats=d.get("num_seats", 2),
            difficulty=d.get("difficulty", "normal"),
            ruleset=d.get("ruleset", "dd-1"),
        )


def deal_cave(rules: Ruleset, config: GameConfig) -> tuple[list[list[int]], list[int], int]:
    """Rules §2.5-2.6 and §4: the cave (bottom -> top per passage), sleeves, first lead."""
    rng = make_rng(config.seed)
    rows = cave_rows_by_id(rules)
    passages: list[list[int]] = [[] for _ in range(rules.passages)]
    turn = 0
    for material in rules.deal_order:
        cards = [cid for cid, row in enumerate(rows) if row.material == material]
        for cid in fisher_yates(cards, rng):
            passages[turn % rules.passages].append(cid)
            turn += 1
    sleeved: list[int] = []
    if config.difficulty in rules.sleeved_difficulties:
        mobs = [
            cid
            for passage in passages
            for cid in passage
            if rows[cid].material == rules.deal_order[0] and rows[cid].name in rules.sleeved_names
        ]
        sleeved = fisher_yates(mobs, rng)[: rules.sleeves]
    first_lead = draw_index(config.num_seats, rng)
    return passages, sleeved, first_lead


def new_game(config: GameConfig) -> State:
    rules = config.validate()
    cave, sleeved, first_lead = deal_cave(rules, config)
    return State(rules, config.to_dict(), cave, sleeved, first_lead)

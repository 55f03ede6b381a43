"""Rulesets as data: the card table, counts, limits and every numeric parameter.

OpenSpiel declares a game's whole contract in one place; here that place is a
`Ruleset` value. The state machine reads every number from it, so a later
ruleset is a new value, not new code: `dd-2` is `dd-1` with two parameters of
the return changed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

# Final: the compiled build reads them as constants, not from the module's namespace.
DIRT: Final = "DIRT"
STONE: Final = "STONE"
DEEPSLATE: Final = "DEEPSLATE"
MATERIALS: Final = (DIRT, STONE, DEEPSLATE)
PICKAXE: Final = "PICKAXE"
SWORD: Final = "SWORD"
NONE: Final = "NONE"
TORCH: Final = "TORCH"
IRON: Final = "IRON"
GOLD: Final = "GOLD"
DIAMOND: Final = "DIAMOND"
EMERALD: Final = "EMERALD"
ITEM_KINDS: Final = (IRON, GOLD, DIAMOND, EMERALD)
LOOT_KINDS: Final = (TORCH, *ITEM_KINDS)  # every loot but NONE (rules §8)


@dataclass(frozen=True)
class CaveRow:
    """One row of the rules §8 table."""

    material: str
    name: str
    count: int
    tool: str
    strength: int
    damage: int
    loot: str = NONE
    torches: int = 0


@dataclass(frozen=True)
class Recipe:
    """An exchange card kind: what it is, how many exist, and what it costs."""

    name: str
    tool: str
    strength: int
    count: int
    cost: tuple[tuple[str, int], ...]


@dataclass(frozen=True, eq=False)
class Ruleset:
    """Every number and table of one ruleset. Compared and hashed by identity, so the
    tables derived from it can be cached per ruleset."""

    id: str
    cave: tuple[CaveRow, ...]
    recipes: tuple[Recipe, ...]
    capacity: dict[int, int]  # seats -> inventory slots per seat
    basic_tools: dict[int, tuple[int, int]]  # seats -> (swords, pickaxes) per seat
    start_torches: dict[int, tuple[int, int]]  # seats -> (inventory, stash) per seat
    objectives: dict[str, tuple[str, ...]]  # difficulty -> objectives every seat must complete
    trade: dict[str, int]
    loot_points: dict[str, int]
    # The box (rules §1): 120 cards in all.
    box_cards: int = 120
    torch_cards: int = 32
    colours: tuple[str, ...] = ("RED", "BLUE", "GREEN", "YELLOW")
    colour_tools: tuple[str, ...] = (SWORD, SWORD, PICKAXE, PICKAXE)  # the tools of one colour
    basic_strength: int = 2
    inventory_cards: int = 4
    # Table limits.
    passages: int = 4
    hearts: int = 4
    tiles: int = 5
    # Costs.
    explore_cost: int = 1
    peek_cost: int = 1
    return_cost: int = 2
    # Who pays for a return (rules §4.2a, §11). dd-1: the caller alone, from its
    # inventory; riders ride free. dd-2: the caller may pay from its stash too, and
    # every other seat holding loot pays the caller `rider_fee` torches (inventory,
    # then stash) or loses that loot.
    return_from_stash: bool = False
    rider_fee: int = 0
    # Limits that bound a game.
    base_action_limit: int = 40
    position_action_limit: int = 12
    turn_limit: int = 400
    fault_limit: int = 3  # the fault that forfeits a seat (rules §6)
    # Hardcore (rules §7).
    sleeved_difficulties: tuple[str, ...] = ("hardcore",)
    sleeves: int = 3
    sleeve_strength: int = 2
    sleeve_damage: int = 1
    sleeved_names: tuple[str, ...] = ("Skeleton", "Creeper", "Enderman", "Warden")
    deal_order: tuple[str, ...] = (DEEPSLATE, STONE, DIRT)
    default_discard_order: tuple[str, ...] = (TORCH, IRON, GOLD, DIAMOND, EMERALD)

    def __post_init__(self) -> None:
        """A ruleset that contradicts itself fails when it is defined, not mid-game."""
        for name in ("capacity", "basic_tools", "start_torches"):
            table: dict[int, object] = getattr(self, name)
            if set(table) != set(self.seat_counts):
                raise ValueError(f"ruleset {self.id}: {name} must cover the same seat counts")
        if max(self.seat_counts) > min(len(self.colours), self.inventory_cards):
            raise ValueError(f"ruleset {self.id}: more seats than colours or inventory cards")
        for n in self.seat_counts:
            inventory, stash = self.start_torches[n]
            if n * (inventory + stash) > self.torch_cards:
                raise ValueError(f"ruleset {self.id}: {n} seats start with more torches than exist")
            if n * self.colours_per_seat(n) > len(self.colours):
                raise ValueError(f"ruleset {self.id}: not enough basic tools for {n} seats")

    @property
    def seat_counts(self) -> tuple[int, ...]:
        """The numbers of seats a game may have (rules §2.1: 2, 3 or 4)."""
        return tuple(sorted(self.capacity))

    @property
    def difficulties(self) -> tuple[str, ...]:
        return tuple(self.objectives)

    def colours_per_seat(self, num_seats: int) -> int:
        """How many colours' basic tools one seat draws from (rules §2.1: two at 2 seats)."""
        swords, pickaxes = self.basic_tools[num_seats]
        per_colour_swords = self.colour_tools.count(SWORD)
        per_colour_picks = self.colour_tools.count(PICKAXE)
        return max(-(-swords // per_colour_swords), -(-pickaxes // per_colour_picks))


P, S = PICKAXE, SWORD

DD1 = Ruleset(
    id="dd-1",
    cave=(
        CaveRow(DIRT, "Dirt", 3, P, 1, 0),
        CaveRow(DIRT, "Coal Ore", 4, P, 2, 0, TORCH, 2),
        CaveRow(DIRT, "Iron Ore", 3, P, 2, 0, IRON),
        CaveRow(DIRT, "Zombie", 3, S, 2, 1),
        CaveRow(DIRT, "Spider", 2, S, 2, 1),
        CaveRow(STONE, "Coal Ore", 3, P, 2, 0, TORCH, 2),
        CaveRow(STONE, "Iron Ore", 4, P, 2, 0, IRON),
        CaveRow(STONE, "Gold Ore", 3, P, 4, 0, GOLD),
        CaveRow(STONE, "Skeleton", 3, S, 4, 1),
        CaveRow(STONE, "Creeper", 2, S, 2, 2),
        CaveRow(STONE, "Lava", 2, P, 3, 2),
        CaveRow(DEEPSLATE, "Deepslate Iron Ore", 2, P, 3, 0, IRON),
        CaveRow(DEEPSLATE, "Deepslate Gold Ore", 3, P, 5, 0, GOLD),
        CaveRow(DEEPSLATE, "Deepslate Diamond Ore", 3, P, 6, 0, DIAMOND),
        CaveRow(DEEPSLATE, "Deepslate Emerald Ore", 2, P, 6, 0, EMERALD),
        CaveRow(DEEPSLATE, "Skeleton", 2, S, 4, 1),
        CaveRow(DEEPSLATE, "Creeper", 2, S, 2, 2),
        CaveRow(DEEPSLATE, "Enderman", 2, S, 6, 2),
        CaveRow(DEEPSLATE, "Lava", 1, P, 3, 2),
        CaveRow(DEEPSLATE, "Warden", 1, S, 10, 4),
    ),
    recipes=(
        Recipe("IRON_SWORD", S, 4, 4, ((IRON, 1),)),
        Recipe("IRON_PICKAXE", P, 4, 4, ((IRON, 1),)),
        Recipe("DIAMOND_SWORD", S, 6, 2, ((DIAMOND, 1), (IRON, 1))),
        Recipe("DIAMOND_PICKAXE", P, 6, 2, ((DIAMOND, 1), (IRON, 1))),
    ),
    capacity={2: 8, 3: 6, 4: 6},
    basic_tools={2: (3, 3), 3: (2, 2), 4: (2, 2)},
    start_torches={2: (6, 4), 3: (5, 3), 4: (5, 2)},
    objectives={
        "easy": (IRON, GOLD),
        "normal": (GOLD, DIAMOND),
        "hard": (DIAMOND, EMERALD),
        "hardcore": (DIAMOND, EMERALD),
    },
    trade={GOLD: 3, EMERALD: 4},
    loot_points={IRON: 1, GOLD: 2, DIAMOND: 3, EMERALD: 3},
)

# Rules §11: dd-1 with riders paying their share of a return.
DD2 = replace(DD1, id="dd-2", return_from_stash=True, rider_fee=1)

RULESETS: dict[str, Ruleset] = {r.id: r for r in (DD1, DD2)}
DIFFICULTIES = DD1.difficulties

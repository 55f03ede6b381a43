"""A PettingZoo AEC environment around the rules library: train with the engine that judges you.

    from engine.training import DiggingDownEnv
    env = DiggingDownEnv(num_seats=2, difficulty="normal")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)
    env.final_rewards  # {"seat_0": 1.0, "seat_1": -1.0}: PettingZoo empties env.rewards

The game is the ladder's, decision for decision:

- agents are `seat_0` .. `seat_{n-1}`; `agent_selection` is the acting seat;
  decisions with a single legal action are played by the engine (as on the
  ladder, where bots are asked only when they have a choice);
- `observe(agent)` is `{"observation": float32 vector, "action_mask": int8
  vector}` (engine/training/encoding.py), computed by the rules core straight
  from the game (no observation dict is built for it); `infos[agent]` of the
  acting agent holds the very observation dict and legal action dicts a bot
  gets over gRPC (`{"observation": {...}, "legal_actions": [{"kind": ...}, ...]}`),
  built the first time it is read (read it before the next `step`);
- an action is an index into a fixed catalog (`env.catalog`); one that is not
  legal is a *fault*, exactly as on the ladder: the rules §6 default action is
  played and the third fault forfeits the seat;
- rewards come at the end, from the final ranks, scored as the ladder rates
  them: each other seat beaten counts 1, tied 1/2, lost 0, averaged and mapped
  onto [-1, 1] (rank 1 alone: +1; last alone: -1); PettingZoo removes each
  agent's entry from `rewards` as it leaves, so after the loop `final_rewards`
  holds every seat's (and `infos[agent]["result"]` the result until then);
- `reset(seed=s)` makes everything reproducible: the game seeds come from a
  generator seeded with `s`, so the same seed and the same actions give the
  same games. Seats eliminated during a game stay among `agents` (never
  selected) until the game ends for everyone.

Needs the `train` extra (`pip install -e '.[train]'`: pettingzoo, gymnasium, numpy).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from engine.rules import RULESETS, Action, GameConfig, State, new_game
from engine.rules.features import feature_parts

from .encoding import FLOAT32, ActionCatalog, ObservationEncoder

SEED_LIMIT = 2**63


def rank_rewards(ranks: list[int]) -> list[float]:
    """Pairwise scores of the final ranks (1 win, 1/2 tie, 0 loss) mapped onto [-1, 1]."""
    n = len(ranks)
    rewards = []
    for i, mine in enumerate(ranks):
        score = sum(1.0 if mine < r else 0.5 if mine == r else 0.0
                    for j, r in enumerate(ranks) if j != i)  # fmt: skip
        rewards.append(2.0 * score / (n - 1) - 1.0)
    return rewards


def play_forced(state: State) -> None:
    """Single-choice decisions are the engine's to play (as on the ladder), up to a choice."""
    while not state.is_over and len(state.legal_actions()) == 1:
        state.apply_forced()


def _listed(action: Action, legal: list[Action]) -> bool:
    """`action in legal`, by identity first (the catalog holds the engine's shared actions)."""
    for listed in legal:
        if listed is action:
            return True
    return action in legal


class DecisionInfo(dict[str, Any]):
    """`infos[agent]` of the acting agent: the observation dict and legal action dicts a bot
    gets over gRPC, built the first time anything reads them (most learners never do)."""

    __slots__ = ("_ply", "_seat", "_state")

    def __init__(self, state: State, seat: int) -> None:
        self._state, self._seat = state, seat
        self._ply = len(state.entries)

    def _fill(self) -> None:
        if not dict.__len__(self):
            if len(self._state.entries) != self._ply:
                raise RuntimeError("read a decision's info before stepping past it")
            dict.update(
                self,
                observation=self._state.observation(self._seat),
                legal_actions=[a.to_dict() for a in self._state.legal_actions()],
            )

    def __missing__(self, key: str) -> Any:
        self._fill()
        return dict.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        self._fill()
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self._fill()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._fill()
        return dict.__len__(self)

    def __repr__(self) -> str:
        self._fill()
        return dict.__repr__(self)

    def __eq__(self, other: object) -> bool:
        self._fill()
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def get(self, key: str, default: Any = None) -> Any:
        self._fill()
        return dict.get(self, key, default)

    def keys(self) -> Any:
        self._fill()
        return dict.keys(self)

    def values(self) -> Any:
        self._fill()
        return dict.values(self)

    def items(self) -> Any:
        self._fill()
        return dict.items(self)


class DiggingDownEnv(AECEnv):  # type: ignore[misc]
    """One game of Digging Down per episode, 2-4 agents."""

    metadata = {"name": "digging_down_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        num_seats: int = 2,
        difficulty: str = "normal",
        ruleset: str = "dd-1",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        GameConfig(num_seats=num_seats, difficulty=difficulty, ruleset=ruleset).validate()
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.num_seats = num_seats
        self.difficulty = difficulty
        self.ruleset = ruleset
        self.render_mode = render_mode
        rules = RULESETS[ruleset]
        self.catalog = ActionCatalog(rules, num_seats)
        self.encoder = ObservationEncoder(rules, num_seats)
        self.possible_agents = [f"seat_{i}" for i in range(num_seats)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1000.0, (self.encoder.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.catalog.size,), np.int8),
            }
        )
        act_space = spaces.Discrete(self.catalog.size)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._games_rng = np.random.default_rng()
        self.state: State | None = None
        self.game_seed = -1
        self.final_rewards: dict[str, float] = {}

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. `seed` reseeds the generator the game seeds are drawn from."""
        if seed is not None:
            self._games_rng = np.random.default_rng(seed)
        self.game_seed = int(self._games_rng.integers(0, SEED_LIMIT))
        self.state = new_game(
            GameConfig(
                seed=self.game_seed,
                num_seats=self.num_seats,
                difficulty=self.difficulty,
                ruleset=self.ruleset,
            )
        )
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.final_rewards: dict[str, float] = {}
        self.agent_selection = self.agents[0]  # until _select points at the acting seat
        self._play_forced()
        self._select()

    def step(self, action: int | None) -> None:
        # The hot path of every learner: written out flat (no helper calls where a few lines
        # do), as each Python call here costs about as much as a rules step.
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state()
        # Rewards come only when the game ends: until then they stay the zeros reset() set,
        # and PettingZoo's per-step bookkeeping (clear, accumulate) has nothing to do.
        if action is None:
            raise ValueError(f"{agent} must act: an action index, not None")
        index = int(action)
        fixed = self.catalog.fixed
        if 0 <= index < len(fixed):  # the catalog's fast path: no tool to look up
            chosen = fixed[index]
        else:
            chosen = self.catalog.action_at(index, state.seats[self._seat[agent]].tools)
        if _listed(chosen, state.legal_actions()):
            state.apply(chosen)
        else:  # as on the ladder: a fault plays the default action; the third forfeits
            state.apply_default(f"illegal action {chosen} (index {index})")
        while not state.is_over and len(state.legal_actions()) == 1:  # play_forced
            state.apply_forced()
        if state.is_over:
            self._select()
            self._cumulative_rewards[agent] = 0.0
            self._accumulate_rewards()
            return
        seat = state.acting_seat  # _select, the game going on
        infos = self.infos
        infos[agent] = {}  # the previous decision's
        agent = self.agent_selection = self.possible_agents[seat]
        infos[agent] = DecisionInfo(state, seat)

    def _play_forced(self) -> None:
        play_forced(self._state())

    def _select(self) -> None:
        """Point at the acting seat, or end the episode for everyone with rank rewards."""
        state = self._state()
        if state.is_over:
            result = state.result
            assert result is not None
            self.final_rewards = dict(zip(self.agents, rank_rewards(result["ranks"]), strict=True))
            self.infos = {a: {"result": result} for a in self.agents}
            for agent, reward in self.final_rewards.items():
                self.rewards[agent] = reward
                self.terminations[agent] = True
            self.agent_selection = self.agents[0]
            return
        seat = state.acting_seat
        self.infos[self.agent_selection] = {}  # the previous decision's, if any
        self.agent_selection = self.possible_agents[seat]
        self.infos[self.agent_selection] = DecisionInfo(state, seat)

    # -------------------------------------------------------------- observation

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The vector and the mask, computed from the game (no observation dict is built)."""
        state = self._state()
        seat = self._seat[agent]
        catalog = self.catalog
        mask = catalog.zeros.copy()
        if not state.is_over and state.acting_seat == seat:  # catalog.mask, written out
            by_id = catalog.by_id
            for action in state.legal_actions():
                i = by_id.get(id(action))
                mask[i if i is not None else catalog.index_of(action, state.seats[seat].tools)] = 1
        # The rules core's float32 pieces, joined into a new buffer numpy reads as is.
        vector = np.frombuffer(bytearray().join(feature_parts(state, seat)), FLOAT32)
        return {"observation": vector, "action_mask": mask}

    def _state(self) -> State:
        if self.state is None:
            raise RuntimeError("call reset() first")
        return self.state

    # ------------------------------------------------------------------- render

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.state is None:
            return None
        s = self.state
        if s.is_over:
            return f"game {self.game_seed}: over ({s.result and s.result['reason']}), ranks " + str(
                s.result and s.result["ranks"]
            )
        obs = s.observation(s.acting_seat)
        cave = " ".join(f"[{p['count']}{'*' if 'top' in p else ''}]" for p in obs["passages"])
        return (
            f"round {obs['round']} turn {obs['turn']} {obs['phase']}: hearts {obs['hearts']}, "
            f"cave {cave}, {self.agent_selection} to act"
        )

    def close(self) -> None:
        self.state = None

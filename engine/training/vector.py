"""Many games at once, stepped together, for learners that batch thousands of decisions.

    from engine.training import DiggingDownVectorEnv
    venv = DiggingDownVectorEnv(num_envs=256, num_seats=2)
    obs, mask, seat = venv.reset(seed=7)          # (256, obs), (256, actions), (256,)
    while training:
        actions = policy(obs, mask)              # one action index per game
        obs, mask, seat, rewards, done = venv.step(actions)

Each of the `num_envs` slots holds one game, always at a decision with a choice
(single-choice decisions are played by the engine, as on the ladder and in
`DiggingDownEnv`). Row i of `obs` and `mask` is what the acting seat of game i
sees, `seat[i]` is that seat: a self-play learner plays every seat from one
policy. An action that is not legal is a fault, exactly as on the ladder (the
default action is played; the third fault forfeits the seat).

When game i ends, `done[i]` is true, `rewards[i]` holds every seat's final reward
(the rank scores of `rank_rewards`; zero in rows not done), `finished[i]` (an
attribute) the game's result, and the slot starts its next game at once: row i
of `obs` is then already that game's first decision. `reset(seed=s)` makes the
whole sequence reproducible (one generator draws every slot's game seeds).
The vectors are the same as `DiggingDownEnv`'s (engine/training/encoding.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.rules import RULESETS, GameConfig, State, new_game
from engine.rules.features import feature_parts

from .encoding import FLOAT32, ActionCatalog, ObservationEncoder
from .env import SEED_LIMIT, _listed, play_forced, rank_rewards


class DiggingDownVectorEnv:
    """`num_envs` games of Digging Down stepped together, with auto-reset."""

    def __init__(
        self,
        num_envs: int,
        num_seats: int = 2,
        difficulty: str = "normal",
        ruleset: str = "dd-1",
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        GameConfig(num_seats=num_seats, difficulty=difficulty, ruleset=ruleset).validate()
        self.num_envs = num_envs
        self.num_seats = num_seats
        self.difficulty = difficulty
        self.ruleset = ruleset
        rules = RULESETS[ruleset]
        self.catalog = ActionCatalog(rules, num_seats)
        self.encoder = ObservationEncoder(rules, num_seats)
        self._rng = np.random.default_rng()
        self.states: list[State] = []
        self.obs = np.zeros((num_envs, self.encoder.size), dtype=np.float32)
        self.mask = np.zeros((num_envs, self.catalog.size), dtype=np.int8)
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.finished: list[dict[str, Any] | None] = [None] * num_envs
        self.games_played = 0

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New games in every slot; `seed` reseeds the generator of game seeds."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.states = [self._new_game() for _ in range(self.num_envs)]
        self.finished = [None] * self.num_envs
        self._show_all()
        return self.obs.copy(), self.mask.copy(), self.seat.copy()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action index per game: (obs, mask, seat, rewards, done) after it."""
        if not self.states:
            raise RuntimeError("call reset() first")
        chosen = np.asarray(actions).reshape(-1)
        if chosen.shape[0] != self.num_envs:
            raise ValueError(f"need {self.num_envs} actions, got {chosen.shape[0]}")
        rewards = np.zeros((self.num_envs, self.num_seats), dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=bool)
        catalog = self.catalog
        for i, index in enumerate(chosen.tolist()):
            state = self.states[i]
            self.finished[i] = None
            action = catalog.action_at(int(index), state.seats[state.acting_seat].tools)
            if _listed(action, state.legal_actions()):
                state.apply(action)
            else:  # as on the ladder: a fault plays the default action; the third forfeits
                state.apply_default(f"illegal action {action} (index {int(index)})")
            play_forced(state)
            if state.is_over:
                assert state.result is not None
                rewards[i] = rank_rewards(state.result["ranks"])
                done[i] = True
                self.finished[i] = state.result
                self.games_played += 1
                self.states[i] = self._new_game()
        self._show_all()
        return self.obs.copy(), self.mask.copy(), self.seat.copy(), rewards, done

    def _new_game(self) -> State:
        config = GameConfig(
            seed=int(self._rng.integers(0, SEED_LIMIT)),
            num_seats=self.num_seats,
            difficulty=self.difficulty,
            ruleset=self.ruleset,
        )
        state = new_game(config)
        play_forced(state)  # no game ends before its first choice
        return state

    def _show_all(self) -> None:
        """Every row: the acting seat's vector and mask, written in one numpy call each."""
        parts: list[bytes] = []
        hot: list[int] = []
        width = self.catalog.size
        indices = self.catalog.indices
        for i, state in enumerate(self.states):
            seat = state.acting_seat
            self.seat[i] = seat
            parts += feature_parts(state, seat)
            base = i * width
            hot += [base + k for k in indices(state.legal_actions(), state.seats[seat].tools)]
        packed = b"".join(parts)  # float32 pieces, every row's in order
        self.obs[:] = np.frombuffer(packed, FLOAT32).reshape(self.obs.shape)
        self.mask.fill(0)
        self.mask.reshape(-1)[hot] = 1

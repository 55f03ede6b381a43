"""Play thousands of games in the PettingZoo environment and report games/s.

    python -m engine.training.example --games 3000 --seats 2 --policy tabular

`random` samples a legal action from the mask. `tabular` is a small learner to
show the loop's shape: a value per (phase, action index), updated at the end of
each game towards the reward the seat got (every-visit Monte Carlo), acting
epsilon-greedily on it. Nothing heavy: the point is the loop and its speed,
measured around the environment and policy together.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from engine.training.encoding import PHASES
from engine.training.env import DiggingDownEnv


class Tabular:
    """Value of (phase, action index), learnt from the end-of-game rewards."""

    def __init__(self, rng: np.random.Generator, epsilon: float = 0.1, rate: float = 0.05) -> None:
        self.rng = rng
        self.epsilon = epsilon
        self.rate = rate
        self.value: defaultdict[tuple[int, int], float] = defaultdict(float)
        self.visits: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def act(self, agent: str, phase: int, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if self.rng.random() < self.epsilon:
            choice = int(legal[self.rng.integers(len(legal))])
        else:
            choice = int(max(legal, key=lambda a: self.value[(phase, int(a))]))
        self.visits[agent].append((phase, choice))
        return choice

    def learn(self, agent: str, reward: float) -> None:
        for key in self.visits.pop(agent, []):
            self.value[key] += self.rate * (reward - self.value[key])


def run(games: int, seats: int, difficulty: str, policy: str, seed: int) -> dict[str, float]:
    """Play `games` games; games/s, decisions/s and the mean reward of seat 0."""
    env = DiggingDownEnv(num_seats=seats, difficulty=difficulty)
    rng = np.random.default_rng(seed)
    learner = Tabular(rng) if policy == "tabular" else None
    decisions = 0
    seat0 = 0.0
    env.reset(seed=seed)
    started = time.perf_counter()
    for _ in tqdm(range(games), unit="game", file=sys.stderr, mininterval=1.0):
        env.reset()
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                if learner is not None:
                    learner.learn(agent, reward)
                if agent == "seat_0":
                    seat0 += reward
                env.step(None)
                continue
            mask = obs["action_mask"]
            if learner is None:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            else:
                phase = int(np.argmax(obs["observation"][: len(PHASES)]))
                action = learner.act(agent, phase, mask)
            env.step(action)
            decisions += 1
    took = time.perf_counter() - started
    return {
        "games": games,
        "seconds": took,
        "games_per_s": games / took,
        "decisions_per_s": decisions / took,
        "seat0_mean_reward": seat0 / games,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.training.example", description=__doc__)
    p.add_argument("--games", type=int, default=3000)
    p.add_argument("--seats", type=int, default=2)
    p.add_argument("--difficulty", default="normal")
    p.add_argument("--policy", choices=("random", "tabular"), default="tabular")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    r = run(args.games, args.seats, args.difficulty, args.policy, args.seed)
    print(
        f"{r['games']} games ({args.seats} seats, {args.difficulty}, {args.policy}) in "
        f"{r['seconds']:.1f} s: {r['games_per_s']:.1f} games/s, "
        f"{r['decisions_per_s']:.0f} decisions/s; seat 0 mean reward {r['seat0_mean_reward']:+.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

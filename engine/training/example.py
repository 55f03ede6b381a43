"""Train a small policy in the PettingZoo environment and compare it with the random one.

    python -m engine.training.example --games 3000 --seats 2 --policy tabular

Seat 0 plays the chosen policy; every other seat plays uniformly random legal
actions. `random` samples a legal action from the mask. `tabular` is a small
learner to show the loop's shape: a value per (phase, action index), updated at
the end of each game towards the reward seat 0 got (every-visit Monte Carlo),
acting epsilon-greedily on it. After the run, the random policy plays seat 0
of the very same games (the same seeds: `reset(seed=...)` draws the same game
seeds), so the report says whether anything was learned: seat 0's mean reward
with a 95% interval for both, and games/s for the loop (environment and
policy together). The progress bar shows on a terminal only.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

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


def run(
    games: int, seats: int, difficulty: str, policy: str, seed: int, progress: bool = False
) -> dict[str, Any]:
    """Play `games` games (seat 0: `policy`, the rest random); games/s and seat 0's rewards."""
    env = DiggingDownEnv(num_seats=seats, difficulty=difficulty)
    rng = np.random.default_rng(seed)
    learner = Tabular(rng) if policy == "tabular" else None
    decisions = 0
    rewards: list[float] = []
    env.reset(seed=seed)
    started = time.perf_counter()
    # disable=None: tqdm draws the bar on a terminal only (no flood of lines in a log).
    bar = tqdm(
        total=games,
        unit="game",
        file=sys.stderr,
        mininterval=1.0,
        disable=None if progress else True,
    )
    for _ in range(games):
        env.reset()
        for agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            mask = obs["action_mask"]
            if learner is not None and agent == "seat_0":
                phase = int(np.argmax(obs["observation"][: len(PHASES)]))
                action = learner.act(agent, phase, mask)
            else:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            decisions += 1
        # PettingZoo clears `rewards` as agents leave; the env keeps each seat's reward.
        rewards.append(env.final_rewards["seat_0"])
        if learner is not None:
            learner.learn("seat_0", env.final_rewards["seat_0"])
        if progress:
            bar.update()
    bar.close()
    took = time.perf_counter() - started
    mean, half = interval(rewards)
    late_mean, late_half = interval(rewards[len(rewards) // 2 :])
    return {
        "games": games,
        "policy": policy,
        "seconds": took,
        "games_per_s": games / took,
        "decisions_per_s": decisions / took,
        "seat0_mean_reward": mean,
        "seat0_reward_95": half,
        "seat0_late_mean_reward": late_mean,
        "seat0_late_reward_95": late_half,
    }


def interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal interval."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def line(r: dict[str, Any]) -> str:
    return (
        f"  {r['policy']:<8} seat 0 mean reward {r['seat0_mean_reward']:+.3f} "
        f"± {r['seat0_reward_95']:.3f} (second half {r['seat0_late_mean_reward']:+.3f} "
        f"± {r['seat0_late_reward_95']:.3f}); {r['games_per_s']:.1f} games/s, "
        f"{r['decisions_per_s']:.0f} decisions/s"
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.training.example", description=__doc__)
    p.add_argument("--games", type=int, default=3000)
    p.add_argument("--seats", type=int, default=2)
    p.add_argument("--difficulty", default="normal")
    p.add_argument("--policy", choices=("random", "tabular"), default="tabular")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.games < 1:
        p.error("--games must be at least 1")
    runs = [run(args.games, args.seats, args.difficulty, args.policy, args.seed, progress=True)]
    if args.policy != "random":  # the baseline: the same games' seeds, seat 0 random
        runs.append(run(args.games, args.seats, args.difficulty, "random", args.seed))
    print(
        f"{args.games} games ({args.seats} seats, {args.difficulty}, seeds from {args.seed}; "
        f"seat 0 plays the policy, the other seats random; rewards in [-1, 1], 95% intervals):"
    )
    for r in runs:
        print(line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())

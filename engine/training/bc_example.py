"""Behaviour cloning from the ladder's games: a small policy learns the heuristic's moves.

    .venv/bin/python -m engine.training.bc_example [--export games.jsonl | --games 300]
        [--bot heuristic] [--eval-games 200] [--seed 0]

The data is an export of the ladder (``manage.py export_games --out games.jsonl``,
or the REST export) read with ``engine.training.dataset``; without ``--export``
the heuristic plays ``--games`` 2-seat dd-2 games against itself here and they
are turned into the same rows, so the example runs anywhere. Only the chosen
bot's decisions are learned (``--bot``, the seat's bot name in the export).

The policy is a one-hidden-layer network over the observation encoding with
the illegal actions masked out, trained by Adam on the cross-entropy of the
heuristic's choice (numpy only). It reports, on held-out games, how often it
picks the heuristic's action, and then plays: its rank-1 share against the
random player over ``--eval-games`` 2-seat games (seats rotating), beside the
random player's own share against random (the floor, about a half) and the
heuristic's (the ceiling it imitates).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from engine.players import HeuristicPlayer, RandomPlayer
from engine.rules import RULESETS, Action, GameConfig, new_game
from engine.simulate import play_out

from .dataset import Arrays, decision_rows, load, replay_of
from .encoding import ActionCatalog, ObservationEncoder

RULESET, SEATS = "dd-2", 2


def heuristic_lines(games: int, seed: int) -> Iterator[dict[str, Any]]:
    """Export-shaped lines of ``games`` heuristic-against-heuristic games."""
    for i in range(games):
        state = new_game(GameConfig(seed=seed + i, num_seats=SEATS, ruleset=RULESET))
        bots = [HeuristicPlayer(random.Random((seed + i) * 8 + s)) for s in range(SEATS)]
        play_out(state, lambda seat, obs, legal, bots=bots: bots[seat].act(obs, legal))
        yield {
            "match": i,
            "seats": [{"seat": s, "bot": "heuristic"} for s in range(SEATS)],
            "replay": replay_of(state),
        }


def arrays_of(lines: Sequence[dict[str, Any]]) -> tuple[Arrays, np.ndarray]:
    """Arrays of the lines' decisions and, per row, which line (game) it came from."""
    obs, masks, acts, games = [], [], [], []
    size = ActionCatalog(RULESETS[RULESET], SEATS).size
    for g, line in enumerate(lines):
        for row in decision_rows(line):
            obs.append(row["observation"])
            m = np.zeros(size, dtype=np.int8)
            m[row["legal"]] = 1
            masks.append(m)
            acts.append(row["action"])
            games.append(g)
    arrays = Arrays(
        ruleset=RULESET, seats=SEATS,
        observations=np.asarray(obs, dtype=np.float32), masks=np.asarray(masks),
        actions=np.asarray(acts, dtype=np.int64), seat_ranks=np.zeros(len(acts), np.int8),
        bots=["heuristic"] * len(acts),
    )  # fmt: skip
    return arrays, np.asarray(games)


class Policy:
    """x -> masked softmax over the action catalog, one hidden layer of ``hidden`` units."""

    def __init__(self, n_in: int, n_out: int, hidden: int, rng: np.random.Generator) -> None:
        self.w1 = rng.normal(0, 1 / np.sqrt(n_in), (n_in, hidden)).astype(np.float32)
        self.b1 = np.zeros(hidden, np.float32)
        self.w2 = rng.normal(0, 1 / np.sqrt(hidden), (hidden, n_out)).astype(np.float32)
        self.b2 = np.zeros(n_out, np.float32)
        self.mean = np.zeros(n_in, np.float32)
        self.scale = np.ones(n_in, np.float32)

    def params(self) -> list[np.ndarray]:
        return [self.w1, self.b1, self.w2, self.b2]

    def logits(self, x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = np.maximum(0, ((x - self.mean) / self.scale) @ self.w1 + self.b1)
        z = h @ self.w2 + self.b2
        return np.where(mask > 0, z, -1e9), h

    def fit(self, data: Arrays, epochs: int, lr: float = 3e-3, batch: int = 256) -> None:
        x, mask, y = data.observations, data.masks, data.actions
        self.mean = x.mean(0)
        self.scale = x.std(0) + 1e-3
        params = self.params()
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        rng = np.random.default_rng(0)
        step = 0
        for _ in range(epochs):
            order = rng.permutation(len(y))
            for start in range(0, len(y), batch):
                idx = order[start : start + batch]
                xb = (x[idx] - self.mean) / self.scale
                z, h = self.logits(x[idx], mask[idx])
                p = np.exp(z - z.max(1, keepdims=True))
                p /= p.sum(1, keepdims=True)
                p[np.arange(len(idx)), y[idx]] -= 1  # d(cross-entropy)/dz
                p /= len(idx)
                dh = (p @ self.w2.T) * (h > 0)
                grads = [xb.T @ dh, dh.sum(0), h.T @ p, p.sum(0)]
                step += 1
                for i, (param, g) in enumerate(zip(params, grads, strict=True)):
                    m[i] = 0.9 * m[i] + 0.1 * g
                    v[i] = 0.999 * v[i] + 0.001 * g * g
                    mh, vh = m[i] / (1 - 0.9**step), v[i] / (1 - 0.999**step)
                    param -= (lr * mh / (np.sqrt(vh) + 1e-8)).astype(param.dtype)

    def choose(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.asarray(self.logits(x, mask)[0].argmax(1))


class PolicyPlayer:
    """A seat that plays the trained policy's most likely legal action."""

    name = "bc"

    def __init__(self, policy: Policy) -> None:
        rules = RULESETS[RULESET]
        self.policy = policy
        self.encoder = ObservationEncoder(rules, SEATS)
        self.catalog = ActionCatalog(rules, SEATS)

    def act(self, obs: dict[str, Any], legal: list[Action]) -> Action:
        tools = [t["id"] for t in obs["players"][obs["seat"]]["tools"]]
        x = self.encoder.encode(obs)[None, :]
        mask = self.catalog.mask(legal, tools)[None, :]
        return self.catalog.action_at(int(self.policy.choose(x, mask)[0]), tools)


def rank1_share(make: Callable[[int], Any], games: int, seed: int) -> float:
    """Share of ``games`` 2-seat games the player ``make(game)`` ranks first in (ties count)
    against the random player, seats alternating."""
    firsts = 0
    for i in range(games):
        me = i % 2
        state = new_game(GameConfig(seed=seed + i, num_seats=SEATS, ruleset=RULESET))
        seats = [make(i), RandomPlayer(random.Random(seed + i))]
        if me == 1:
            seats.reverse()
        play_out(state, lambda seat, obs, legal, seats=seats: seats[seat].act(obs, legal))
        assert state.result is not None
        firsts += state.result["ranks"][me] == 1
    return firsts / games


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", help="a JSON Lines export of the ladder")
    ap.add_argument("--bot", default="heuristic", help="whose decisions to learn (export)")
    ap.add_argument("--games", type=int, default=300, help="games to play without --export")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--eval-games", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.export:
        data = load(args.export, ruleset=RULESET, seats=SEATS, bots=[args.bot])
        n = len(data.actions)
        games = np.arange(n) * 5 // max(n, 1)  # the last fifth of the rows held out
    else:
        data, games = arrays_of(list(heuristic_lines(args.games, args.seed)))
    held = games >= np.quantile(games, 0.8)
    train = Arrays(
        data.ruleset, data.seats, data.observations[~held], data.masks[~held],
        data.actions[~held], data.seat_ranks[~held], [],
    )  # fmt: skip
    policy = Policy(data.observations.shape[1], data.masks.shape[1], args.hidden,
                    np.random.default_rng(args.seed))  # fmt: skip
    policy.fit(train, epochs=args.epochs)
    agree = float(
        (policy.choose(data.observations[held], data.masks[held]) == data.actions[held]).mean()
    )
    legal_guess = float((1.0 / data.masks[held].sum(1)).mean())
    seed = 10**6 + args.seed
    bc = rank1_share(lambda i: PolicyPlayer(policy), args.eval_games, seed)
    rnd = rank1_share(lambda i: RandomPlayer(random.Random(7 * i + 1)), args.eval_games, seed)
    heur = rank1_share(lambda i: HeuristicPlayer(random.Random(i)), args.eval_games, seed)
    print(f"decisions: {int((~held).sum())} to learn from, {int(held.sum())} held out")
    print(f"agreement with the heuristic on held-out decisions: {agree:.3f}"
          f" (a uniformly random legal choice: {legal_guess:.3f})")  # fmt: skip
    print(f"rank-1 share against random, {args.eval_games} 2-seat {RULESET} games:")
    print(f"  behaviour-cloned policy {bc:.3f}")
    print(f"  random policy           {rnd:.3f}")
    print(f"  heuristic (the teacher) {heur:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

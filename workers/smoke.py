"""The smoke match of a new hosted version, in one module: played, judged and recorded.

A version is only worth seating on the ladder once it has shown, in the sandbox
and over the real protocol, that it starts, answers and lasts a whole game.

- ``play_smoke_match(version_id, engine_address)`` is what the ``smoke_version``
  task does: the version's upload read back from storage, its game played, the
  verdict recorded through ``ladder.bots.services.bot_version_smoke_record``
  (VALID or INVALID, the outcome line and the captured log). Which versions play
  one is the ladder's rule (``ladder.bots.selectors.version_for_smoke``: hosted
  versions only), asked once before the game.
- ``smoke_game(bundle, engine_address)`` is the game itself, with no Django: the
  version sandboxed in seat 0 of a 2-seat easy game against the random house bot
  (served in this process on a unix socket: trusted code, nothing to sandbox). It
  passes when the bot started and was not forfeited (dead, unreachable, or three
  faults); its faults are told but allowed.

Engine trouble is not the bot's fault: ``EngineUnavailable`` or ``EngineError``
propagate, and the version stays pending for another try.
"""

from __future__ import annotations

import logging
import secrets
import tempfile
from dataclasses import dataclass

from django.conf import settings

from digdown.bot import BotServer, BotService, seeded_rng_factory
from engine.players import RandomPlayer, dict_actions
from ladder.bots.models import BotVersion
from ladder.bots.selectors import version_for_smoke
from ladder.bots.services import bot_version_smoke_record
from ladder.common.exceptions import Conflict
from workers.hosted import hosted_refusal, sandbox_settings, version_bundle
from workers.runner import EnginePool, TimeControl, run_match
from workers.sandbox.bundle import Bundle
from workers.sandbox.launcher import SandboxConfig, SandboxLimits, hosted_seat

log = logging.getLogger("workers.smoke")

SMOKE_DIFFICULTY = "easy"


@dataclass(frozen=True)
class SmokeOutcome:
    """Whether the version may play, what happened (one line), and its captured log."""

    passed: bool
    outcome: str
    log: bytes


def play_smoke_match(*, version_id: int, engine_address: str | EnginePool) -> BotVersion:
    """Play a hosted version's smoke match and record it (VALID or INVALID, outcome, log).

    Engine trouble propagates (``workers.runner.RunnerError``): the version stays
    PENDING and the smoke match can be played again.
    """
    version = version_for_smoke(version_id=version_id)
    if why := hosted_refusal():
        raise Conflict(why)
    limits, config = sandbox_settings()
    smoke = smoke_game(
        version_bundle(version),
        engine_address,
        seed=secrets.randbelow(2**31),
        limits=limits,
        config=config,
        # The ladder's clock for hosted seats, with the smoke match's own time limits.
        time_control=TimeControl(
            hosted_clock=settings.LADDER_MATCH_HOSTED_CLOCK,
            cpu_wall_factor=settings.LADDER_MATCH_CPU_WALL_FACTOR,
        ),
    )
    log.info("smoke match of %s v%d: %s", version.bot.name, version.number, smoke.outcome)
    return bot_version_smoke_record(
        version_id=version.pk, passed=smoke.passed, outcome=smoke.outcome, log=smoke.log
    )


def smoke_game(
    bundle: Bundle,
    engine_address: str | EnginePool,
    *,
    seed: int = 0,
    limits: SandboxLimits | None = None,
    config: SandboxConfig | None = None,
    time_control: TimeControl | None = None,
) -> SmokeOutcome:
    """Play ``bundle`` (sandboxed, seat 0) against the random house bot; judge it."""
    with tempfile.TemporaryDirectory(prefix="digdown-smoke-") as tmp:
        house = BotServer(
            BotService(
                factory=seeded_rng_factory(dict_actions(RandomPlayer), seed),
                name="random",
                version="1",
            ),
            f"unix:{tmp}/random.sock",
            max_workers=2,
        )
        house.start()
        try:
            with hosted_seat(bundle, limits, config) as seat:
                outcome = run_match(
                    engine_address,
                    [seat.bot_spec(name="candidate"), house.address],
                    seed=seed,
                    difficulty=SMOKE_DIFFICULTY,
                    time_control=time_control,
                )
        finally:
            house.stop(0.5)
    log = seat.log_bytes()
    forfeit = next((f for f in outcome.faults if f.seat == 0 and f.forfeit), None)
    stats = outcome.seats[0]
    faults = sum(1 for f in outcome.faults if f.seat == 0 and not f.forfeit)
    if seat.start_error:
        return SmokeOutcome(False, f"failed: {seat.start_error}", log)
    if forfeit is not None or stats["out"]:
        why = forfeit.reason if forfeit else "forfeited after three faults"
        return SmokeOutcome(False, f"failed: {why}"[:300], log)
    rank = outcome.ranks[0] if outcome.ranks else 0
    return SmokeOutcome(
        True,
        f"passed: rank {rank} of 2 against the random house bot, {stats['decisions']} "
        f"decisions, {faults} faults ({SMOKE_DIFFICULTY} game, seed {seed})",
        log,
    )

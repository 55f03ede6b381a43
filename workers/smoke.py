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

Neither is a slow machine. A bot that is alive but not serving within the start
limit (``LADDER_SANDBOX_START_S``) may be slow by itself or held back by a busy
host (measured: at load 30-40 a bot that starts in 1 s on a quiet host missed
15 s). So a start timeout is never judged on the spot: ``StartTimedOut`` is
raised, the version stays PENDING and the task plays the smoke match again
later, each attempt with a longer start limit (attempt k: k times the limit), up
to ``LADDER_SMOKE_START_ATTEMPTS`` attempts. Only the last attempt's timeout can
make the version INVALID, and only when the machine did not hold the bot back
(its threads waited for a CPU less than a quarter of the limit); otherwise it
stays PENDING and the janitor sends it again later.
"""

from __future__ import annotations

import dataclasses
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
# A start timeout is the machine's when the bot's threads waited this share of the start
# limit for a CPU (they were ready to run and did not get one).
STARVED_SHARE = 0.25


@dataclass(frozen=True)
class SmokeOutcome:
    """Whether the version may play, what happened (one line), and its captured log."""

    passed: bool
    outcome: str
    log: bytes
    # Alive but not serving within the start limit; with how long it waited for a CPU.
    start_timed_out: bool = False
    waited_s: float = 0.0


class StartTimedOut(Exception):
    """The smoke match's bot did not serve in time and that is not judged yet: play again."""

    def __init__(self, outcome: SmokeOutcome, attempt: int) -> None:
        super().__init__(f"attempt {attempt + 1}: {outcome.outcome}")
        self.outcome = outcome
        self.attempt = attempt


def start_limit(base_s: float, attempt: int) -> float:
    """The start limit of smoke attempt ``attempt`` (0-based): k times the limit on the k-th."""
    return base_s * (attempt + 1)


def timeout_is_the_bots(
    smoke: SmokeOutcome, *, attempt: int, attempts: int, start_s: float
) -> bool:
    """Whether a start timeout may count against the version: on its last attempt, and
    only if the machine did not keep it waiting for a CPU."""
    return attempt + 1 >= attempts and smoke.waited_s < STARVED_SHARE * start_s


def play_smoke_match(
    *, version_id: int, engine_address: str | EnginePool, attempt: int = 0
) -> BotVersion:
    """Play a hosted version's smoke match and record it (VALID or INVALID, outcome, log).

    Engine trouble propagates (``workers.runner.RunnerError``): the version stays
    PENDING and the smoke match can be played again. So does a start timeout that is
    not (yet) the bot's own (``StartTimedOut``; the module's docstring says when).
    ``attempt`` counts the earlier attempts (0 on the first).
    """
    version = version_for_smoke(version_id=version_id)
    if why := hosted_refusal():
        raise Conflict(why)
    limits, config = sandbox_settings()
    limits = dataclasses.replace(limits, start_s=start_limit(limits.start_s, attempt))
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
    if smoke.start_timed_out and not timeout_is_the_bots(
        smoke,
        attempt=attempt,
        attempts=settings.LADDER_SMOKE_START_ATTEMPTS,
        start_s=limits.start_s,
    ):
        raise StartTimedOut(smoke, attempt)
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
        return SmokeOutcome(
            False,
            f"failed: {seat.start_error}",
            log,
            start_timed_out=seat.start_timed_out,
            waited_s=seat.waited_s,
        )
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

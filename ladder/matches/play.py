"""Play a queued match now: claim it, dial its bots, run it on an engine, record it.

The Django side of ``workers.runner``: used by ``manage.py playmatch`` and meant
for the workers of a later issue. Hosted bots play in the sandbox
(``workers.hosted``), one per seat, each dialed on its unix socket; where the
sandbox cannot run they are refused with the reason before anything is
claimed. Endpoints of remote bots are checked again right before dialing and
the checked *address* is dialed, not the name (DNS rebinding, pitfalls G8). A
match that cannot be played is marked errored with the reason; a played one is
recorded through ``match_record_result`` (result, replay and ratings exactly
once), and the logs of its hosted seats are kept for their owners.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from digdown.healthcheck import wait_until_serving
from ladder.bots.endpoints import endpoint_check
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, Conflict
from ladder.matches.models import Match, MatchSeat
from ladder.matches.services import (
    RecordOutcome,
    match_fail,
    match_record_result,
    match_seat_logs_store,
    match_start,
)
from workers.hosted import hosted_refusal, match_hosted_seats
from workers.runner import BotSpec, MatchOutcome, RunnerError, TimeControl, run_match
from workers.sandbox import HostedSeat

log = logging.getLogger("ladder.play")

ENGINE_START_S = 20.0


class PlayFailed(ApplicationError):
    """The match could not be played (it is marked errored with this message)."""

    code = "play_failed"


@dataclass(frozen=True)
class PlayReport:
    """A played and recorded match (``recorded`` False: it already had a result)."""

    match: Match
    outcome: MatchOutcome
    recorded: bool


def playable_check(bots: list[Bot]) -> None:
    """Refuse bots this process cannot play, before a match is created or claimed."""
    hosted = [b.name for b in bots if b.kind == Bot.Kind.HOSTED]
    if hosted and (why := hosted_refusal()):
        raise Conflict(f"bot {hosted[0]} is a hosted bot and {why}")


def bot_specs(seats: Sequence[MatchSeat], hosted: Mapping[int, HostedSeat]) -> list[BotSpec]:
    """One BotSpec per seat: a hosted seat's sandbox, or the address a remote endpoint
    resolves to *now*."""
    specs = []
    for seat in seats:
        if seat.seat in hosted:
            name, version = seat.bot.name, str(seat.version.number)
            specs.append(hosted[seat.seat].bot_spec(name=name, version=version))
            continue
        if not seat.version.endpoint:
            raise Conflict(f"bot {seat.bot.name} has no endpoint")
        checked = endpoint_check(seat.version.endpoint)
        specs.append(
            BotSpec(
                address=checked.dial_target,
                name=seat.bot.name,
                version=str(seat.version.number),
            )
        )
    return specs


def match_play(
    *,
    match_id: int,
    engine_address: str,
    worker: str,
    time_control: TimeControl | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> PlayReport:
    """Claim, play and record one queued match; PlayFailed (match errored) otherwise."""
    match = match_start(match_id=match_id, worker=worker)
    hosted: dict[int, HostedSeat] = {}
    try:
        seats = list(match.seats.select_related("bot", "version").order_by("seat"))
        with (
            match_hosted_seats(seats) as hosted,
            tempfile.TemporaryDirectory(prefix="digdown-play-") as tmp,
        ):
            out = Path(tmp) / "replay.json.gz"
            outcome = run_match(
                engine_address,
                bot_specs(seats, hosted),
                seed=match.seed,
                difficulty=match.difficulty,
                ruleset=match.ruleset,
                time_control=time_control,
                out=out,
                on_progress=on_progress,
                match_id=str(match.pk),
            )
            replay_bytes = out.read_bytes()
    except (ApplicationError, RunnerError, OSError) as exc:
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        match_fail(match_id=match.pk, error=message)
        _keep_logs(match.pk, hosted)
        raise PlayFailed(f"match {match.pk} could not be played: {message}") from exc
    try:
        recorded: RecordOutcome = match_record_result(
            match_id=match.pk, result=outcome.result, replay_bytes=replay_bytes
        )
    except ApplicationError as exc:
        # The engine's result or replay was refused (or the match was cancelled
        # meanwhile): never leave it running with nobody to finish it.
        with suppress(ApplicationError):
            match_fail(match_id=match.pk, error=f"result not recorded: {exc.message}")
        raise PlayFailed(f"match {match.pk} was played but not recorded: {exc.message}") from exc
    if recorded.recorded:  # a retry that found the result already there keeps the first logs
        _keep_logs(match.pk, hosted)
    return PlayReport(match=recorded.match, outcome=outcome, recorded=recorded.recorded)


def _keep_logs(match_id: int, hosted: Mapping[int, HostedSeat]) -> None:
    """Store the hosted seats' logs with their seats (owner-only; never in the replay)."""
    if hosted:
        match_seat_logs_store(
            match_id=match_id, logs={n: seat.log_bytes() for n, seat in hosted.items()}
        )


@contextmanager
def engine_address(address: str | None = None) -> Iterator[str]:
    """The engine to use: ``address``, else ENGINE_ADDRESS, else a local subprocess.

    The local engine binds port 0 and reports it through a file (no guessed
    ports), is waited on through its health service, and is stopped (SIGTERM,
    then SIGKILL) when the block ends, whatever happened inside.
    """
    address = address or settings.ENGINE_ADDRESS
    if address:
        yield address
        return
    with tempfile.TemporaryDirectory(prefix="digdown-engine-") as tmp:
        port_file = Path(tmp) / "engine.port"
        log_path = Path(tmp) / "engine.log"
        root = Path(__file__).resolve().parents[2]
        with log_path.open("wb") as log_file:
            proc = subprocess.Popen(
                [sys.executable, "-m", "engine.server", "--listen", "127.0.0.1:0",
                 "--port-file", str(port_file), "--log-level", "WARNING"],
                cwd=root,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONPATH": str(root)},
            )  # fmt: skip
        try:
            deadline = time.monotonic() + ENGINE_START_S
            while not (port_file.exists() and port_file.read_text().strip()):
                if proc.poll() is not None:
                    raise OSError(f"engine exited with {proc.returncode}: {log_path.read_text()}")
                if time.monotonic() > deadline:
                    raise OSError(f"the local engine did not start within {ENGINE_START_S} s")
                time.sleep(0.05)
            local = f"127.0.0.1:{int(port_file.read_text())}"
            try:
                wait_until_serving(
                    local,
                    "digdown.v1.Engine",
                    max(0.1, deadline - time.monotonic()),
                    alive=lambda: proc.poll() is None,
                )
            except ChildProcessError:
                raise OSError(
                    f"engine exited with {proc.returncode}: {log_path.read_text()}"
                ) from None
            log.info("local engine on %s (pid %d)", local, proc.pid)
            yield local
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)

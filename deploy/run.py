"""``make run``: the whole ladder on this machine, from a fresh clone, in one command.

    python -m deploy.run                 # keeps the ladder playing until Ctrl-C
    python -m deploy.run --matches 5     # plays 5 matches, prints the leaderboard, exits 0

What it does, in order, saying so as it goes: migrates the database (SQLite in
``var/`` unless ``DATABASE_URL`` is set), starts the engine, the Celery workers
(the embedded broker unless ``REDIS_URL``/``CELERY_BROKER_URL`` is set), celery
beat (janitor; matchmaking once its task is in ``CELERY_BEAT_SCHEDULE``), the
Ladder gRPC server and the web server (gunicorn, or ``runserver`` where gunicorn
is not installed); registers the example bots (random, heuristic, starter) for a
demo user as hosted bots (sandboxed; docs/sandbox.md) and prints how to sign in,
an API token, what runs where and what to try next.

Why a small supervisor here rather than a Procfile runner (honcho, foreman): a
signal sent to a whole process group (a terminal's Ctrl-C, or a runner stopping its
processes that way) reaches Celery's pool children, which reset SIGTERM to its
default, so a running match would be killed mid-game instead of finished; and the
order matters (no new matches, then the workers' warm shutdown, then the engine). Here
each process runs in a session of its own (the terminal's Ctrl-C reaches only this
supervisor) and is stopped through its own main process, in order: no new
matches (beat, the fallback matchmaker), no new requests (web, gRPC), the workers'
warm shutdown (running matches finish), then the engine. A second Ctrl-C stops
at once; the matches that were running are released to the queue and sent again.
Every process group is swept with SIGKILL at the end: nothing is left behind.

Where hosted bots cannot be sandboxed (no bubblewrap, no user namespaces), the
example bots are registered as remote bots served by processes started here
(loopback endpoints are allowed in development) and the message says how to get
the sandbox (or, for development only, ``LADDER_SANDBOX_UNSAFE_DEV_MODE=1``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import os
import random
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
DEMO_USER = "demo"
# The example bots: (name when hosted, name when served here as a remote bot, module).
DEMO_BOTS = (
    ("random", "local-random", "examples.random_bot"),
    ("heuristic", "local-heuristic", "examples.heuristic_bot"),
    ("starter", "local-starter", "examples.starter_bot"),
)
DEMO_BOT_PORTS = (50061, 50062, 50063)
START_TIMEOUT_S = 60.0
# One node name per machine; no gossip or mingle: nothing else to sync with at start.
WORKER_FLAGS = ("-n", "run@%h", "--without-mingle", "--without-gossip")
VALIDATE_TIMEOUT_S = 180.0
POLL_S = 0.25


def count(text: str) -> int:
    """A non-negative whole number for argparse."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m deploy.run", description=__doc__.split("\n")[0])
    p.add_argument(
        "--matches", type=count, default=0, help="play this many matches, print the board, exit"
    )
    p.add_argument(
        "--concurrency", type=count, default=2, help="matches played at once (worker processes)"
    )
    p.add_argument("--web-port", type=int, default=8000)
    p.add_argument("--grpc-port", type=int, default=50052)
    p.add_argument("--engine-port", type=int, default=50051)
    p.add_argument(
        "--timeout", type=float, default=600.0, help="--matches: give up after this many seconds"
    )
    p.add_argument(
        "--stop-grace",
        type=float,
        default=120.0,
        help="seconds running matches get to finish on Ctrl-C before they are requeued",
    )
    return p.parse_args(argv)


# --- output -------------------------------------------------------------------------------


def say(text: str = "") -> None:
    print(text, flush=True)


def step(text: str) -> None:
    say(f"  ... {text}")


def done(text: str) -> None:
    say(f"  ok  {text}")


# --- processes ------------------------------------------------------------------------------


@dataclass
class Service:
    """One process of the ladder: how it starts, how we know it is up, where it logs."""

    name: str
    argv: list[str]
    ready: Callable[[Service], bool]
    what: str
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    log_start: int = 0  # where this run's output begins in the log

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def pick_port(wanted: int) -> int:
    """``wanted`` if nothing listens there, else a free port (the banner shows it)."""
    if wanted and port_free(wanted):
        return wanted
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = int(s.getsockname()[1])
    if wanted:
        say(f"  !!  port {wanted} is in use: {port} instead")
    return port


def grpc_ready(service: str, port: int) -> Callable[[Service], bool]:
    def check(_: Service) -> bool:
        import grpc

        from digdown.healthcheck import SERVING, status

        with grpc.insecure_channel(f"{HOST}:{port}") as channel:
            return status(channel, service, 0.5) == SERVING

    return check


def http_ready(port: int) -> Callable[[Service], bool]:
    def check(_: Service) -> bool:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/", timeout=2) as reply:
                return int(reply.status) < 500
        except (urllib.error.URLError, OSError):
            return False

    return check


def log_says(text: str) -> Callable[[Service], bool]:
    """Ready once ``text`` is in what the process wrote in this run (the log is appended to)."""

    def check(svc: Service) -> bool:
        if svc.log_path is None:
            return False
        with svc.log_path.open("rb") as log:
            log.seek(svc.log_start)
            return text.encode() in log.read()

    return check


class Stack:
    """The started processes, each in a session of its own, logging to ``log_dir``."""

    def __init__(self, log_dir: Path, env: dict[str, str]) -> None:
        self.log_dir = log_dir
        self.env = env
        self.services: list[Service] = []
        self._logs: list[IO[bytes]] = []

    def start(self, svc: Service, timeout_s: float = START_TIMEOUT_S) -> Service:
        svc.log_path = self.log_dir / f"{svc.name}.log"
        log = svc.log_path.open("ab")
        self._logs.append(log)
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(svc.argv)}\n".encode())
        log.flush()
        svc.log_start = log.tell()
        step(f"starting {svc.what}")
        svc.proc = subprocess.Popen(
            svc.argv,
            cwd=ROOT,
            env={**self.env, **svc.env},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.services.append(svc)
        deadline = time.monotonic() + timeout_s
        while not svc.ready(svc):
            if not svc.alive():
                raise StartError(svc, "stopped while starting")
            if time.monotonic() > deadline:
                raise StartError(svc, f"not ready within {timeout_s:g} s")
            time.sleep(POLL_S)
        done(f"{svc.what} (pid {svc.proc.pid})")
        return svc

    def dead(self) -> list[Service]:
        return [s for s in self.services if not s.alive()]

    def stop(self, names: Sequence[str], timeout_s: float, on_wait: Callable[[], None]) -> None:
        """SIGTERM the main process of each named service; SIGKILL its group after the timeout."""
        chosen = [s for s in self.services if s.name in names and s.alive()]
        for svc in chosen:
            assert svc.proc is not None
            with contextlib.suppress(ProcessLookupError):
                svc.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while any(s.alive() for s in chosen) and time.monotonic() < deadline:
            on_wait()
            time.sleep(POLL_S)
        for svc in chosen:
            if svc.alive():
                say(f"  !!  {svc.name} did not stop in {timeout_s:g} s: killed")
                self.kill(svc)

    def kill(self, svc: Service) -> None:
        if svc.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(svc.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            svc.proc.wait(10)

    def sweep(self) -> None:
        """SIGKILL every process group we started: whatever a process left behind goes too."""
        for svc in self.services:
            self.kill(svc)
        for log in self._logs:
            log.close()


class StartError(RuntimeError):
    def __init__(self, svc: Service, why: str) -> None:
        super().__init__(f"{svc.what} {why}; its log ({svc.log_path}) ends with:\n{svc.log_tail()}")


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM while starting or running.

    A BaseException, as KeyboardInterrupt is: the signal may arrive inside library code
    that catches Exception (a broker publish that retries), which must not swallow it.
    """


# --- the ladder's side (Django) -------------------------------------------------------------


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    import django

    django.setup()


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def sandbox_refusal() -> str:
    """Why hosted bots cannot run here ("" when they can), as the workers will see it."""
    from workers.hosted import hosted_refusal

    return hosted_refusal()


def demo_user() -> tuple[Any, str, str]:
    """The demo user (created once), a fresh password and a fresh API token for this run."""
    from ladder.accounts.models import User
    from ladder.accounts.services import token_create

    user = User.objects.filter(username=DEMO_USER).first()
    if user is None:
        user = User.objects.create_user(username=DEMO_USER, email="demo@example.org")
    password = secrets.token_urlsafe(9)
    user.set_password(password)
    user.save(update_fields=["password"])
    return user, password, token_create(user=user, name="make run").secret


def register_hosted(user: Any) -> list[int]:
    """The example bots as hosted bots of ``user``; a new version when an example changed."""
    from examples.hosted_bundle import build
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_create, bot_version_upload

    ids = []
    for name, _, _ in DEMO_BOTS:
        bot = Bot.objects.filter(name__iexact=name).first()
        if bot is None:
            bot = bot_create(owner=user, name=name, kind=Bot.Kind.HOSTED, description="example")
        elif bot.owner_id != user.pk or bot.kind != Bot.Kind.HOSTED:
            say(f"  !!  a bot named {name} exists and is not the demo's hosted bot: left out")
            continue
        filename, data = build(name)
        digest = hashlib.sha256(data).hexdigest()
        if not bot.versions.filter(archive_sha256=digest).exclude(status="invalid").exists():
            bot_version_upload(user=user, bot_id=bot.pk, filename=filename, data=data)
            step(f"uploaded {name} ({len(data)} bytes): its smoke match makes it valid")
        ids.append(bot.pk)
    return ids


def wait_valid(bot_ids: list[int], check_stack: Callable[[], None]) -> list[int]:
    """Wait until each bot has a current (valid) version; drop those whose smoke match failed."""
    from ladder.bots.models import Bot, BotVersion

    deadline = time.monotonic() + VALIDATE_TIMEOUT_S
    while True:
        bots = list(Bot.objects.filter(pk__in=bot_ids))
        waiting = [b for b in bots if b.current_version_id is None]
        for bot in waiting:
            newest = bot.versions.order_by("-number").first()
            if newest is not None and newest.status == BotVersion.Status.INVALID:
                say(f"  !!  {bot.name}: smoke match failed: {newest.smoke_outcome}")
                bot_ids = [i for i in bot_ids if i != bot.pk]
        if not [b for b in waiting if b.pk in bot_ids]:
            return bot_ids
        if time.monotonic() > deadline:
            names = ", ".join(b.name for b in waiting)
            raise RuntimeError(f"hosted bots {names} not valid after {VALIDATE_TIMEOUT_S:g} s")
        check_stack()
        time.sleep(POLL_S)


def register_remote(user: Any, ports: Sequence[int]) -> list[int]:
    """The example bots as remote bots of ``user`` at the loopback ports served here."""
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_create, bot_set_endpoint

    ids = []
    for (_, name, _), port in zip(DEMO_BOTS, ports, strict=True):
        endpoint = f"{HOST}:{port}"
        bot = Bot.objects.filter(name__iexact=name).first()
        if bot is None:
            bot = bot_create(owner=user, name=name, kind=Bot.Kind.REMOTE, endpoint=endpoint)
        elif bot.owner_id != user.pk or bot.kind != Bot.Kind.REMOTE:
            say(f"  !!  a bot named {name} exists and is not the demo's remote bot: left out")
            continue
        elif bot.current_version is None or bot.current_version.endpoint != endpoint:
            bot_set_endpoint(user=user, bot_id=bot.pk, endpoint=endpoint)
        ids.append(bot.pk)
    return ids


def requeue_leftovers() -> None:
    """Matches left queued or lost by an earlier run are sent to the workers again now."""
    from django.conf import settings

    from ladder.matches.services import match_requeue_stale

    report = match_requeue_stale(queued_grace_s=0, max_attempts=settings.LADDER_MATCH_MAX_ATTEMPTS)
    if report.requeued or report.resent:
        done(f"sent again: {len(report.requeued) + len(report.resent)} match(es) of earlier runs")


def release_orphaned_matches() -> list[int]:
    """Give back to the queue the running matches of this machine's workers that are gone.

    After a worker was killed (a second Ctrl-C, or it did not stop in time) its
    matches would wait for their lease to expire and the janitor; here they are
    released at once (fenced by the claim, as the worker itself would) and sent again.
    """
    from ladder.matches.models import Match
    from ladder.matches.queue import match_enqueue
    from ladder.matches.services import match_release

    host = socket.gethostname()
    released = []
    running = Match.objects.filter(status=Match.Status.RUNNING, claimed_by__startswith=f"{host}:")
    for match in running:
        pid = match.claimed_by.rsplit(":", 1)[1]
        if pid.isdigit() and process_exists(int(pid)):
            continue
        if match_release(
            match_id=match.pk,
            worker=match.claimed_by,
            attempt=match.attempts,
            error="its worker was stopped by make run",
        ):
            match_enqueue(match_id=match.pk)
            released.append(match.pk)
    return released


def process_exists(pid: int) -> bool:
    """Signal 0: nothing is sent, only whether the pid exists is checked."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # another user's process
    except (ProcessLookupError, OverflowError):
        return False
    return True


def matchmaking_scheduled() -> bool:
    """Is a matchmaking task in beat's schedule (then beat keeps the ladder playing)?"""
    from django.conf import settings

    schedule: dict[str, dict[str, Any]] = settings.CELERY_BEAT_SCHEDULE
    return any("matchmak" in str(entry.get("task")) for entry in schedule.values())


def demo_playable(user_id: int, remote_examples: bool) -> list[int]:
    """The demo user's bots that can be seated now (the examples and whatever they upload).

    Examples of the other kind, registered by an earlier run on this database (the
    sandbox was installed or removed since), are left out: they cannot play now.
    """
    from ladder.bots.models import Bot

    other = [hosted if remote_examples else remote for hosted, remote, _ in DEMO_BOTS]
    return list(
        Bot.objects.filter(
            owner_id=user_id,
            is_active=True,
            retired_at__isnull=True,
            current_version__isnull=False,
        )
        .exclude(name__in=other)
        .values_list("pk", flat=True)
    )


def in_flight(bot_ids: list[int]) -> int:
    """Queued or running matches that seat any of ``bot_ids``."""
    from ladder.matches.models import Match

    return (
        Match.objects.filter(
            status__in=[Match.Status.QUEUED, Match.Status.RUNNING], seats__bot_id__in=bot_ids
        )
        .distinct()
        .count()
    )


def queue_demo_match(bot_ids: list[int], rng: random.Random) -> int:
    """FALLBACK MATCHMAKER of make run: a random table of the demo user's bots.

    The ladder's matchmaker never seats two bots of one owner (collusion), and
    every example bot is the demo user's, so without this they would never meet.
    """
    from ladder.matches.services import match_create

    seats = rng.randint(2, min(4, len(bot_ids)))
    return match_create(bot_ids=rng.sample(bot_ids, seats)).pk


def finished_since(after_id: int, shown: set[int]) -> list[tuple[int, str]]:
    """(id, one line) for each match after ``after_id`` that ended and is not in ``shown``."""
    from ladder.matches.models import Match
    from ladder.ratings.elo import points

    done_statuses = [Match.Status.FINISHED, Match.Status.ERRORED, Match.Status.CANCELLED]
    lines = []
    for match in (
        Match.objects.filter(pk__gt=after_id, status__in=done_statuses)
        .exclude(pk__in=shown)
        .prefetch_related("seats__bot")
        .order_by("pk")
    ):
        if match.status != Match.Status.FINISHED:
            lines.append((match.pk, f"match {match.pk} {match.status}: {match.error[:200]}"))
            continue
        seats = sorted(match.seats.all(), key=lambda s: (s.rank or 9, s.seat))
        who = ", ".join(
            f"{s.rank}. {s.bot.name}"
            + ("" if s.rating_delta is None else f" ({points(s.rating_delta):+.1f})")
            for s in seats
        )
        lines.append((match.pk, f"match {match.pk} finished: {who}"))
    return lines


def last_match_id() -> int:
    from ladder.matches.models import Match

    return Match.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def leaderboard_table() -> str:
    from django.conf import settings

    from ladder.ratings.elo import points
    from ladder.ratings.selectors import leaderboard_list

    key = settings.LADDER_DEFAULT_LADDER
    rows = [f"Leaderboard ({key})", "", "  #  bot                   kind     rating  games  wins"]
    for n, bot in enumerate(leaderboard_list(ladder=key)[:20], start=1):
        rows.append(
            f"{n:>3}  {bot.name:<20}  {bot.kind:<7} {points(bot.rating):>7.1f}  "  # type: ignore[attr-defined]
            f"{bot.games:>5}  {bot.wins:>4}"  # type: ignore[attr-defined]
        )
    return "\n".join(rows)


# --- the run ----------------------------------------------------------------------------------


def services(args: argparse.Namespace, ports: dict[str, int], remote_bots: bool) -> list[Service]:
    py = sys.executable
    engine_address = f"{HOST}:{ports['engine']}"
    on_engine = {"ENGINE_ADDRESS": engine_address}
    listed = [
        Service(
            "engine",
            [py, "-m", "engine.server", "--listen", engine_address],
            grpc_ready("digdown.v1.Engine", ports["engine"]),
            f"the engine on {engine_address}",
        )
    ]
    if remote_bots:
        for (_, name, module), port in zip(DEMO_BOTS, ports_of_bots(ports), strict=True):
            listed.append(
                Service(
                    name,
                    [py, "-m", module, "--listen", f"{HOST}:{port}"],
                    grpc_ready("digdown.v1.Bot", port),
                    f"bot {name} on {HOST}:{port}",
                )
            )
    celery = [py, "-m", "celery", "-A", "workers.celery_app"]
    listed += [
        Service(
            "worker",
            [*celery, "worker", "-l", "INFO", "-c", str(args.concurrency), *WORKER_FLAGS],
            log_says(" ready."),
            f"the Celery worker ({args.concurrency} matches at once)",
            on_engine,
        ),
        Service(
            "beat",
            [*celery, "beat", "-l", "INFO"],
            log_says("beat: Starting..."),
            "celery beat (janitor" + (", matchmaking)" if matchmaking_scheduled() else ")"),
        ),
        Service(
            "grpc",
            [py, "manage.py", "grpcserver", "--listen", f"{HOST}:{ports['grpc']}"],
            grpc_ready("digdown.v1.Ladder", ports["grpc"]),
            f"the Ladder gRPC server on {HOST}:{ports['grpc']}",
            on_engine,
        ),
        Service(
            "web",
            web_argv(py, ports["web"]),
            http_ready(ports["web"]),
            f"the web server on http://{HOST}:{ports['web']}/",
            on_engine,
        ),
    ]
    return listed


def web_argv(py: str, port: int) -> list[str]:
    """gunicorn (with the project's config when there is one), else Django's runserver."""
    if importlib.util.find_spec("gunicorn") is None:
        return [py, "manage.py", "runserver", "--noreload", f"{HOST}:{port}"]
    config = ROOT / "ladder" / "gunicorn.conf.py"
    argv = [py, "-m", "gunicorn"]
    if config.exists():
        argv += ["-c", str(config)]
    return [*argv, "--bind", f"{HOST}:{port}", "--workers", "2", "ladder.wsgi:application"]


def ports_of_bots(ports: dict[str, int]) -> list[int]:
    return [ports[f"bot{i}"] for i in range(len(DEMO_BOTS))]


def banner(
    ports: dict[str, int], password: str, token: str, log_dir: Path, remote_bots: bool
) -> str:
    from django.conf import settings

    db = settings.DATABASES["default"]
    database = f"SQLite {db['NAME']}" if "sqlite" in db["ENGINE"] else f"PostgreSQL {db['NAME']}"
    broker = settings.CELERY_BROKER_URL
    if broker.startswith("filesystem"):
        broker = f"embedded, files in {settings.LADDER_BROKER_DIR}"
    web = f"http://{HOST}:{ports['web']}"
    grpc_at = f"{HOST}:{ports['grpc']}"
    if remote_bots:
        bots = "remote bots served here (hosted bots cannot run: no sandbox)"
    elif settings.LADDER_SANDBOX_UNSAFE_DEV_MODE:
        bots = "hosted bots, UNSAFE development mode: NOT isolated (no sandbox)"
    else:
        bots = "hosted bots, in the sandbox (bubblewrap)"
    return f"""
The ladder is running.

  leaderboard    {web}/
  sign in        {web}/accounts/login/   user {DEMO_USER}   password {password}
  your page      {web}/me/      admin: {web}/admin/ (staff only)
  REST API       {web}/api/v1/   docs {web}/api/docs/
  Ladder gRPC    {grpc_at}   (authorization: Bearer <token>)
  API token      {token}
  engine         {HOST}:{ports["engine"]}
  database       {database}
  broker         {broker}
  example bots   {bots}
  logs           {log_dir}/<process>.log   (tail -f {log_dir}/worker.log)

Try next:
  open {web}/ and watch the board move; a match's page shows its replay
  write a bot: docs/writing-a-bot.md (python -m examples.hosted_bundle starter, then
      upload it on {web}/me/)
  connect with the token:
      grpcurl -plaintext -H 'authorization: Bearer {token}' {grpc_at} digdown.v1.Ladder/ListMyBots
      curl -H 'Authorization: Bearer {token}' {web}/api/v1/bots/

Ctrl-C stops everything (running matches finish first; Ctrl-C again to stop at once).
"""


class Runner:
    def __init__(self, args: argparse.Namespace, env: dict[str, str]) -> None:
        from django.conf import settings

        self.args = args
        self.log_dir = Path(settings.VAR_DIR) / "log"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.stack = Stack(self.log_dir, env)
        self.force = False
        self.playing = False  # Ctrl-C while the ladder plays is how it is meant to stop
        self.first = 0  # matches after this one are shown as they end
        self.shown: set[int] = set()

    def check_stack(self) -> None:
        dead = self.stack.dead()
        if dead:
            svc = dead[0]
            raise StartError(svc, f"stopped (exit {svc.proc.returncode if svc.proc else '?'})")

    def show_finished(self) -> int:
        lines = finished_since(self.first, self.shown)
        for pk, line in lines:
            say(f"  {line}")
            self.shown.add(pk)
        return len(lines)

    def run(self) -> int:
        args = self.args
        say("Starting the Digging Down Ladder")
        step("migrating the database")
        migrate()
        done("database up to date")
        refusal = sandbox_refusal()
        if refusal:
            say(
                f"\n  !!  {refusal}.\n"
                "  !!  The example bots are served here as REMOTE bots instead (not hosted);\n"
                "  !!  uploaded (hosted) bots cannot play on this machine until the sandbox\n"
                "  !!  runs: install bubblewrap (apt install bubblewrap) and allow user\n"
                "  !!  namespaces; see docs/sandbox.md.\n"
            )
        ports = {
            "engine": pick_port(args.engine_port),
            "grpc": pick_port(args.grpc_port),
            "web": pick_port(args.web_port),
        }
        if refusal:
            for i, port in enumerate(DEMO_BOT_PORTS):
                ports[f"bot{i}"] = pick_port(port)
        for svc in services(args, ports, remote_bots=bool(refusal)):
            self.stack.start(svc)
        requeue_leftovers()
        self.first = last_match_id()
        user, password, token = demo_user()
        if refusal:
            bot_ids = register_remote(user, ports_of_bots(ports))
            done(f"example bots registered (remote): {len(bot_ids)}")
        else:
            bot_ids = register_hosted(user)
            step("waiting for the hosted example bots' smoke matches")
            bot_ids = wait_valid(bot_ids, self.check_stack)
            done(f"example bots registered (hosted, valid): {len(bot_ids)}")
        if len(bot_ids) < 2:
            raise RuntimeError("fewer than two example bots can play")
        say(banner(ports, password, token, self.log_dir, bool(refusal)))
        if args.matches:
            return self.play(bot_ids, args.matches)
        self.playing = True
        self.keep_playing(user.pk, remote_examples=bool(refusal))
        return 0

    def play(self, bot_ids: list[int], n: int) -> int:
        """``--matches N``: queue N matches between the example bots, wait, print the board."""
        from ladder.matches.models import Match

        rng = random.Random()
        ids = [queue_demo_match(bot_ids, rng) for _ in range(n)]
        say(f"Playing {n} match(es): {ids[0]}..{ids[-1]}")
        deadline = time.monotonic() + self.args.timeout
        done_statuses = [Match.Status.FINISHED, Match.Status.ERRORED, Match.Status.CANCELLED]
        while True:
            self.check_stack()
            self.show_finished()
            ended = Match.objects.filter(pk__in=ids, status__in=done_statuses)
            if ended.count() == n:
                break
            if time.monotonic() > deadline:
                say(f"  !!  not all {n} matches ended within {self.args.timeout:g} s")
                return 1
            time.sleep(POLL_S)
        say()
        say(leaderboard_table())
        errored = Match.objects.filter(pk__in=ids).exclude(status=Match.Status.FINISHED).count()
        if errored:
            say(f"\n  !!  {errored} of {n} match(es) did not finish (see above)")
            return 1
        return 0

    def keep_playing(self, user_id: int, remote_examples: bool) -> None:
        """Until Ctrl-C: show each match as it ends; keep the demo user's bots playing."""
        if matchmaking_scheduled():
            why = (
                "beat runs the matchmaker for every other bot; it never seats two bots of one "
                "owner, and the example bots are all the demo user's"
            )
        else:
            why = "no matchmaking task is scheduled in beat"
        say(
            "make run queues matches between the demo user's bots itself (fallback "
            f"matchmaker: {why}).\n"
        )
        rng = random.Random()
        next_queue = 0.0
        while True:
            self.check_stack()
            self.show_finished()
            if time.monotonic() >= next_queue:
                next_queue = time.monotonic() + 1.0
                bot_ids = demo_playable(user_id, remote_examples)
                if len(bot_ids) >= 2:
                    for _ in range(self.args.concurrency - in_flight(bot_ids)):
                        queue_demo_match(bot_ids, rng)
            time.sleep(POLL_S)

    def shutdown(self) -> None:
        """Stop in order (see the module's docstring); the sweep runs whatever happens."""
        say("\nStopping (Ctrl-C again to stop at once; running matches are then requeued)")
        try:
            self.stack.stop(["beat", "web", "grpc"], 30, lambda: None)
            running = _running_count()
            if running:
                say(f"  ... waiting for {running} running match(es) to finish")

            def waiting() -> None:
                if self.force:
                    for svc in self.stack.services:
                        if svc.name == "worker":
                            self.stack.kill(svc)
                with contextlib.suppress(Exception):
                    self.show_finished()

            self.stack.stop(["worker"], self.args.stop_grace, waiting)
            released = release_orphaned_matches()
            if released:
                say(f"  ok  requeued match(es) {', '.join(map(str, released))}")
            self.stack.stop([s.name for s in self.stack.services], 15, lambda: None)
        except Exception as exc:  # the database went away, say: still stop every process
            say(f"  !!  while stopping: {exc.__class__.__name__}: {exc}")
        finally:
            self.stack.sweep()
        say("Stopped; nothing left running.")


def _running_count() -> int:
    from ladder.matches.models import Match

    return Match.objects.filter(status=Match.Status.RUNNING).count()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    env.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    # A lively demo: the matchmaker (once merged in beat's schedule) looks every 10 s, not 30.
    env.setdefault("LADDER_MATCHMAKER_INTERVAL_S", "10")
    # The processes log to their files; this one's own log lines would only clutter the screen.
    os.environ.setdefault("LADDER_LOG_LEVEL", "WARNING")
    setup_django()
    runner = Runner(args, env)

    def interrupt(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)

    def force(signum: int, _frame: object) -> None:
        runner.force = True

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    code = 0
    try:
        code = runner.run()
    except Interrupted:
        code = 0 if runner.playing else 130
    except (StartError, RuntimeError) as exc:
        say(f"\n  !!  {exc}")
        code = 1
    finally:
        signal.signal(signal.SIGINT, force)
        signal.signal(signal.SIGTERM, force)
        runner.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())

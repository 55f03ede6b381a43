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
import importlib.util
import os
import random
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from deploy.ladder import (
    DEMO_BOTS,
    DemoAccount,
    demo_accounts,
    demo_playable,
    finished_since,
    in_flight,
    last_match_id,
    leaderboard_table,
    matchmaking_scheduled,
    migrate,
    queue_demo_match,
    register_hosted,
    register_remote,
    release_orphaned_matches,
    requeue_leftovers,
    running_count,
    sandbox_refusal,
    setup_django,
    wait_valid,
)
from deploy.processes import (
    HOST,
    POLL_S,
    ROOT,
    Service,
    Stack,
    StartError,
    done,
    grpc_ready,
    http_ready,
    log_says,
    pick_port,
    say,
    step,
)

DEMO_BOT_PORTS = (50061, 50062, 50063)
# One node name per machine; no gossip or mingle: nothing else to sync with at start.
WORKER_FLAGS = ("-n", "run@%h", "--without-mingle", "--without-gossip")


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
    p.add_argument(
        "--host",
        default=HOST,
        help="the address the web site and the Ladder gRPC server listen on (default"
        f" {HOST}: this machine only; 0.0.0.0: every interface, for bots elsewhere)",
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


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM while starting or running.

    A BaseException, as KeyboardInterrupt is: the signal may arrive inside library code
    that catches Exception (a broker publish that retries), which must not swallow it.
    """


# --- the run ----------------------------------------------------------------------------------


# The processes that serve Prometheus metrics, on ports from METRICS_PORT up.
METRICS_OF = ("engine", "worker", "grpc", "web")
METRICS_PORT = 9101


def metrics_env(ports: dict[str, int], name: str) -> dict[str, str]:
    return {"LADDER_METRICS_PORT": str(ports[f"metrics-{name}"])}


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
            metrics_env(ports, "engine"),
        )
    ]
    if remote_bots:
        for (_, name, module, _), port in zip(DEMO_BOTS, ports_of_bots(ports), strict=True):
            listed.append(
                Service(
                    name,
                    [py, "-m", module, "--listen", f"{HOST}:{port}"],
                    grpc_ready("digdown.v1.Bot", port),
                    f"bot {name} on {HOST}:{port}",
                )
            )
    celery = [py, "-m", "celery", "-A", "workers.celery_app"]
    host = args.host
    probe = local_address(host)
    listed += [
        Service(
            "worker",
            [*celery, "worker", "-l", "INFO", "-c", str(args.concurrency), *WORKER_FLAGS],
            log_says(" ready."),
            f"the Celery worker ({args.concurrency} matches at once)",
            {**on_engine, **metrics_env(ports, "worker")},
        ),
        Service(
            "beat",
            [*celery, "beat", "-l", "INFO"],
            log_says("beat: Starting..."),
            "celery beat (janitor" + (", matchmaking)" if matchmaking_scheduled() else ")"),
        ),
        Service(
            "grpc",
            [py, "manage.py", "grpcserver", "--listen", f"{host}:{ports['grpc']}"],
            grpc_ready("digdown.v1.Ladder", ports["grpc"], probe),
            f"the Ladder gRPC server on {host}:{ports['grpc']}",
            {**on_engine, **metrics_env(ports, "grpc")},
        ),
        Service(
            "web",
            web_argv(py, ports["web"], host),
            http_ready(ports["web"], probe),
            f"the web server on http://{host}:{ports['web']}/",
            {**on_engine, **metrics_env(ports, "web"), **allowed_hosts_env(host)},
        ),
    ]
    return listed


def web_argv(py: str, port: int, host: str = HOST) -> list[str]:
    """gunicorn (with the project's config when there is one), else Django's runserver."""
    if importlib.util.find_spec("gunicorn") is None:
        return [py, "manage.py", "runserver", "--noreload", f"{host}:{port}"]
    config = ROOT / "ladder" / "gunicorn.conf.py"
    argv = [py, "-m", "gunicorn"]
    if config.exists():
        argv += ["-c", str(config)]
    return [*argv, "--bind", f"{host}:{port}", "--workers", "2", "ladder.wsgi:application"]


def local_address(host: str) -> str:
    """Where this machine reaches a server bound to ``host`` (its readiness probe)."""
    return HOST if host in ("0.0.0.0", "::", "") else host


def reachable_address(host: str) -> str:
    """The address another machine uses for a server bound to ``host``: the host itself,
    or for every interface (0.0.0.0) the address of the one that routes outwards."""
    if host not in ("0.0.0.0", "::", ""):
        return host
    import socket

    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # a UDP "connect" sends nothing: it picks the route
        return str(s.getsockname()[0])
    return socket.gethostname()


def allowed_hosts_env(host: str) -> dict[str, str]:
    """The web server answers requests naming the address it was asked to serve on (Django
    refuses other Host headers) unless DJANGO_ALLOWED_HOSTS is set already."""
    if host == HOST or os.environ.get("DJANGO_ALLOWED_HOSTS"):
        return {}
    names = ["localhost", "127.0.0.1", "[::1]", reachable_address(host)]
    if host in ("0.0.0.0", "::"):
        import socket

        names += [socket.gethostname(), socket.getfqdn()]
    return {"DJANGO_ALLOWED_HOSTS": ",".join(dict.fromkeys(names))}


def ports_of_bots(ports: dict[str, int]) -> list[int]:
    return [ports[f"bot{i}"] for i in range(len(DEMO_BOTS))]


def banner(
    ports: dict[str, int],
    accounts: dict[str, DemoAccount],
    log_dir: Path,
    remote_bots: bool,
    keeps_running: bool = True,
    host: str = HOST,
) -> str:
    from django.conf import settings

    db = settings.DATABASES["default"]
    database = f"SQLite {db['NAME']}" if "sqlite" in db["ENGINE"] else f"PostgreSQL {db['NAME']}"
    broker = settings.CELERY_BROKER_URL
    if broker.startswith("filesystem"):
        broker = f"embedded, files in {settings.LADDER_BROKER_DIR}"
    reach = HOST if host == HOST else reachable_address(host)
    web = f"http://{reach}:{ports['web']}"
    grpc_at = f"{reach}:{ports['grpc']}"
    metrics = "  ".join(f"{name} :{ports[f'metrics-{name}']}" for name in METRICS_OF)
    if remote_bots:
        bots = "remote bots served here (hosted bots cannot run: no sandbox)"
    elif settings.LADDER_SANDBOX_UNSAFE_DEV_MODE:
        bots = "hosted bots, UNSAFE development mode: NOT isolated (no sandbox)"
    else:
        bots = "hosted bots, in the sandbox (bubblewrap)"
    demo, *others = accounts.values()
    token = demo.token
    signins = f"user {demo.user.username}   password {demo.password}   (staff)"
    for a in others:
        signins += f"{' ' * 0}\n{' ' * 17}user {a.user.username}   password {a.password}"
    indent = "\n" + " " * 17
    tokens = indent.join(f"{a.token}   ({a.user.username})" for a in accounts.values())
    # A Python line instead of grpcurl: the SDK is in the venv already, grpcurl is not.
    python_line = (
        '.venv/bin/python -c "import grpc; from digdown.v1 import ladder_pb2 as pb, '
        "ladder_pb2_grpc as g; print(g.LadderStub(grpc.insecure_channel('"
        f"{grpc_at}')).ListMyBots(pb.ListMyBotsRequest(), metadata=[('authorization', "
        f"'Bearer {token}')], timeout=10))\""
    )
    if host == HOST:
        elsewhere = (
            "this ladder listens on 127.0.0.1 only: `make run HOST=0.0.0.0` serves the web"
            " site and gRPC on every interface"
        )
    else:
        elsewhere = (
            f"the web site and gRPC listen on {host}; open ports {ports['grpc']} and {ports['web']}"
        )
    stop = (
        "Ctrl-C stops everything (running matches finish first; Ctrl-C again to stop at once)."
        if keeps_running
        else "It stops by itself once the matches asked for have been played."
    )
    return f"""
The ladder is running.

  leaderboard    {web}/
  sign in        {web}/accounts/login/   {signins}
  sign up        {web}/accounts/signup/   (your own account: your bots meet the examples)
  your page      {web}/me/      admin: {web}/admin/ (staff only)
  REST API       {web}/api/v1/   docs {web}/api/docs/
  Ladder gRPC    {grpc_at}   (authorization: Bearer <token>; the docs' snippets say
                 127.0.0.1:50052: use {grpc_at} here)
  API token      {tokens}
                 (the same passwords and tokens every run: var/demo-accounts.json)
  engine         {HOST}:{ports["engine"]}
  database       {database}
  broker         {broker}
  example bots   {bots}
  logs           {log_dir}/<process>.log   (tail -f {log_dir}/worker.log)
  metrics        {web}/metrics, and each process's own: {metrics}

Try next:
  open {web}/ and watch the board move; a match's page shows its replay
  write a bot: docs/writing-a-bot.md; try it locally first:
      .venv/bin/python -m engine.arena --bot examples/starter_bot.py --games 100
      then python -m examples.hosted_bundle starter (var/uploads/starter_bot.py) and
      upload it on {web}/me/
  connect with the token (gRPC from Python, then REST):
      {python_line}
      curl -H 'Authorization: Bearer {token}' {web}/api/v1/bots/
  connect a bot that runs elsewhere ({elsewhere}):
      curl -H 'Authorization: Bearer {token}' -d name=mybot -d kind=connected {web}/api/v1/bots/
      DIGDOWN_TOKEN={token} python -m digdown.connect --connect {grpc_at} --bot mybot
      (any machine with `pip install ./sdk`; your own bot: docs/writing-a-bot.md, "Connect")
  (grpcurl works too, if installed: github.com/fullstorydev/grpcurl; the server has
  reflection: grpcurl -plaintext -H 'authorization: Bearer <token>' {grpc_at} list)

{stop}
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
        # Each process's Prometheus /metrics (docs/operations.md, "Metrics").
        for i, name in enumerate(METRICS_OF):
            ports[f"metrics-{name}"] = pick_port(METRICS_PORT + i)
        if refusal:
            for i, port in enumerate(DEMO_BOT_PORTS):
                ports[f"bot{i}"] = pick_port(port)
        for svc in services(args, ports, remote_bots=bool(refusal)):
            self.stack.start(svc)
        requeue_leftovers()
        self.first = last_match_id()
        accounts = demo_accounts()
        if refusal:
            bot_ids = register_remote(accounts, ports_of_bots(ports))
            done(f"example bots registered (remote): {len(bot_ids)}")
        else:
            bot_ids = register_hosted(accounts)
            step("waiting for the hosted example bots' smoke matches")
            bot_ids = wait_valid(bot_ids, self.check_stack)
            done(f"example bots registered (hosted, valid): {len(bot_ids)}")
        owner_ids = [a.user.pk for a in accounts.values()]
        playable = demo_playable(owner_ids, remote_examples=bool(refusal))
        if len({owner for _, owner in playable}) < 2:
            raise RuntimeError("the example bots of two owners are needed, and cannot all play")
        say(
            banner(
                ports, accounts, self.log_dir, bool(refusal),
                keeps_running=not args.matches, host=args.host,
            )
        )  # fmt: skip
        if args.matches:
            return self.play(playable, args.matches)
        self.playing = True
        self.keep_playing(owner_ids, remote_examples=bool(refusal))
        return 0

    def play(self, bots: list[tuple[int, int]], n: int) -> int:
        """``--matches N``: queue N matches between the example bots, wait, print the board."""
        from ladder.matches.models import Match

        rng = random.Random()
        ids = [pk for _ in range(n) if (pk := queue_demo_match(bots, rng)) is not None]
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

    def keep_playing(self, owner_ids: list[int], remote_examples: bool) -> None:
        """Until Ctrl-C: show each match as it ends; keep the demo accounts' bots playing."""
        if matchmaking_scheduled():
            why = "beat's matchmaker seats every bot too, yours included"
        else:
            why = "no matchmaking task is scheduled in beat"
        say(
            "make run also queues matches between the demo accounts' bots itself, never two "
            f"bots of one owner at a table (fallback matchmaker: {why}).\n"
        )
        rng = random.Random()
        next_queue = 0.0
        while True:
            self.check_stack()
            self.show_finished()
            if time.monotonic() >= next_queue:
                next_queue = time.monotonic() + 1.0
                bots = demo_playable(owner_ids, remote_examples)
                for _ in range(self.args.concurrency - in_flight([b for b, _ in bots])):
                    if queue_demo_match(bots, rng) is None:
                        break
            time.sleep(POLL_S)

    def shutdown(self) -> None:
        """Stop in order (see the module's docstring); the sweep runs whatever happens."""
        say("\nStopping (Ctrl-C again to stop at once; running matches are then requeued)")
        try:
            self.stack.stop(["beat", "web", "grpc"], 30, lambda: None)
            running = running_count()
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

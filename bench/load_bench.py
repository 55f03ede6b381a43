"""Latency under a bounded load: the site served by gunicorn on loopback, at ladder scale.

    DATABASE_URL=postgres://.../NAME .venv/bin/python bench/load_bench.py \\
        [--bots 10000] [--matches 200000] [--clients 8] [--seconds 20] [--json]

Not a test. The data set is ``bench/ladder_data.py``'s (built only when the
database does not hold that size). The ladder's web process runs as production
runs it: gunicorn with ``ladder/gunicorn.conf.py`` (``--web-workers`` processes),
``DJANGO_DEBUG=0``, collected static files, database connections kept
(``LADDER_DB_CONN_MAX_AGE=60``). ``--clients`` threads, each with its own
keep-alive connection, send requests back to back for ``--seconds`` (a closed
loop: the load is bounded by the number of clients, never more requests in
flight than clients), cycling through: the leaderboard, a bot page (a random
bot, and the busiest one with thousands of matches), a match page, a match's
replay timeline (the viewer's endpoint; built once, then served from the cache,
as repeated views are) and the REST leaderboard. It reports p50/p95/p99 and max
per kind, the requests served per second, and every non-200 answer.

The anonymous pages that ``ladder.common.pagecache`` serves from the shared
cache (the leaderboard, a random bot's page, the busiest bot's) are loaded twice
in the same run, the page cache off and then on (Redis at ``--cache-url``, under
a key prefix of its own): p95 and requests/s of both and their ratio. The cached
run reads the same random bots as the uncached one (the same seed), so it sees
cold misses as a visitor would (a page is cached on its first view).

``--one-client N`` then times every page and read alone, one keep-alive client and
nothing else in flight, ``N`` requests of each (round-robin over the reads, so a
burst of load on the machine hits them all alike): every page of the site
(leaderboard sorts, searches and deep keyset pages, random and the busiest bot's
pages, match pages, ``/now/``, tournaments, and the signed-in dashboard and manage
pages), every REST read of ``bench/ladder_reads.py`` (deep keyset pages, match
lists filtered by bot) over gunicorn, and its gRPC reads through a
``LadderServer`` on loopback; page cache off, then on (what a visitor sees).
p50/p95/max per read and the load average of each phase: the target is p95 <
50 ms for every one with the cache off, whatever the bot's history.

One finished match gets a real replay file (a 4-seat hardcore game from the
tests) so that its timeline can be built; nothing else in the data set changes.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import importlib.util
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
REPLAY = ROOT / "tests" / "engine" / "service" / "replays" / "dd-1-hardcore-4.replay.json.gz"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database", default=os.environ.get("DATABASE_URL", ""))
    p.add_argument("--bots", type=int, default=10_000)
    p.add_argument("--matches", type=int, default=200_000)
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (the bound)")
    p.add_argument(
        "--seconds", type=float, default=20.0,
        help="how long the load lasts (0: only the --one-client reads)",
    )  # fmt: skip
    p.add_argument("--web-workers", type=int, default=2, help="gunicorn worker processes")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--cache-url",
        default=os.environ.get("LADDER_CACHE_URL") or "redis://127.0.0.1:6379/0",
        help="the shared cache of the cache-on run",
    )
    p.add_argument(
        "--one-client",
        type=int,
        default=0,
        metavar="N",
        help="then every page and read alone, one client, N requests each (0: not run)",
    )
    p.add_argument("--json", action="store_true")
    return p.parse_args(argv)


def production_env(database: str, static_root: str, media_root: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "bench-only-" + "b" * 40,
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "LADDER_STATIC_ROOT": static_root,
        "LADDER_MEDIA_ROOT": media_root,
        "LADDER_DB_CONN_MAX_AGE": os.environ.get("LADDER_DB_CONN_MAX_AGE", "60"),
        "LADDER_THROTTLE_ANON": "100000000/min",
        "LADDER_THROTTLE_USER": "100000000/min",
        "LADDER_WEB_ACCESS_LOG": "",
        "LADDER_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }


def place_replay(match_id: int, media_root: Path) -> None:
    """Give one finished match a real replay file, recorded as the ladder records one."""
    from ladder.matches.models import Match

    data = REPLAY.read_bytes()
    match = Match.objects.get(pk=match_id)
    name = f"replays/{match_id}/bench-{hashlib.sha256(data).hexdigest()[:16]}.json.gz"
    (media_root / name).parent.mkdir(parents=True, exist_ok=True)
    (media_root / name).write_bytes(data)
    match.replay = name
    match.replay_sha256 = hashlib.sha256(data).hexdigest()
    match.replay_size = len(data)
    match.save(update_fields=["replay", "replay_sha256", "replay_size"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_gunicorn(
    env: dict[str, str], port: int, workers: int, log: Path
) -> subprocess.Popen[bytes]:
    config = str(ROOT / "ladder" / "gunicorn.conf.py")
    argv = [sys.executable, "-m", "gunicorn", "-c", config, "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers), "ladder.wsgi:application"]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {log.read_text()[-2000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/api/v1/ladders/")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("gunicorn did not answer within 60 s")


# The pages ladder.common.pagecache serves; "bot (top 100)" is a random bot of the board's
# first 100 (what visitors of the leaderboard click), so the cache sees repeated views.
CACHED = ("leaderboard", "bot (top 100)", "bot (busiest)")


def cache_env(env: dict[str, str], cache_url: str, on: bool) -> dict[str, str]:
    """The server's environment with the page cache off (and no shared cache) or on."""
    out = {k: v for k, v in env.items() if k not in ("LADDER_CACHE_URL", "LADDER_CACHE_PREFIX")}
    if on:
        out["LADDER_CACHE_URL"] = cache_url
        out["LADDER_CACHE_PREFIX"] = f"load-bench-{os.getpid()}-{time.time_ns()}"
        out["LADDER_PAGE_CACHE_SECONDS"] = "600"
    else:
        out["LADDER_PAGE_CACHE_SECONDS"] = "0"
    return out


def served_load(
    env: dict[str, str], args: argparse.Namespace, urls: dict[str, Callable[[], str]], log: Path
) -> dict:
    """``load`` against a gunicorn started with ``env`` (stopped afterwards)."""
    port = free_port()
    server = start_gunicorn(env, port, args.web_workers, log)
    try:
        # One untimed request per kind and worker: imports, connections, templates.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for url in [make() for make in urls.values()] * args.web_workers:
            conn.request("GET", url)
            conn.getresponse().read()
        conn.close()
        return load(port, urls, args.clients, args.seconds)
    finally:
        from procs import stop  # beside this script, as ladder_data is

        stop([server])


def kinds(data: Any, rng: random.Random) -> dict[str, Callable[[], str]]:
    from ladder.bots.models import Bot
    from ladder.matches.models import Match
    from ladder.ratings.selectors import leaderboard_list

    bot_ids = list(Bot.objects.values_list("pk", flat=True))
    top = list(leaderboard_list().values_list("pk", flat=True)[:100])
    match_ids = list(Match.objects.filter(status="finished").values_list("pk", flat=True)[::50])
    return {
        "leaderboard": lambda: "/",
        "bot": lambda: f"/bots/{rng.choice(bot_ids)}/",
        "bot (busiest)": lambda: f"/bots/{data.busiest_bot}/",
        "bot (top 100)": lambda: f"/bots/{rng.choice(top)}/",
        "match": lambda: f"/matches/{rng.choice(match_ids)}/",
        "replay timeline": lambda: f"/api/v1/matches/{data.largest_match}/timeline/",
        "API leaderboard": lambda: "/api/v1/leaderboard/",
    }


def one_client_reads(data: Any, rng: random.Random) -> dict[str, Callable[[], str]]:
    """Every page and REST read, anonymous unless its name says signed in (see ``alone``)."""
    import web_bench
    from ladder_reads import rest_reads

    reads = dict(web_bench.pages(data, rng))
    for name in ("API leaderboard (reference)", "API bot detail (reference)"):
        del reads[name]  # the REST reads below hold both
    for name in ("dashboard", "manage (busiest bot)"):
        reads[f"{name} (signed in)"] = reads.pop(name)
    for name, url in rest_reads(data).items():
        reads[f"REST {name}"] = lambda url=url: url
    return reads


def credentials(data: Any) -> dict[str, str]:
    """The busiest bot's owner signed in: a session cookie (pages) and an API token (REST)."""
    from django.conf import settings
    from django.test import Client

    from ladder.accounts.models import User
    from ladder.accounts.services import token_create

    owner = User.objects.get(username=data.busiest_owner)
    client = Client()
    client.force_login(owner)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return {
        "session": f"{settings.SESSION_COOKIE_NAME}={session}",
        "token": token_create(user=owner, name="load-bench").secret,
    }


def server_cpu_s(server: subprocess.Popen[bytes]) -> float:
    """CPU seconds (user + system) the gunicorn master's workers have used so far: what a
    request cost the web process, which a busy machine's wall clock cannot say."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for child in Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split():
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def alone(
    port: int,
    urls: dict[str, Callable[[], str]],
    rounds: int,
    signed: dict[str, str],
    server: subprocess.Popen[bytes],
) -> dict[str, Any]:
    """Each read ``rounds`` times over one keep-alive connection, one request in flight,
    round-robin over the reads; a read whose name says "signed in" carries the owner's
    session cookie, "(authenticated)" the owner's API token. Besides the wall clock, the
    workers' CPU time per request (clock ticks summed over the rounds: a mean)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    samples: dict[str, list[float]] = {name: [] for name in urls}
    cpu: dict[str, float] = dict.fromkeys(urls, 0.0)
    errors: dict[str, int] = {}

    def headers(name: str) -> dict[str, str]:
        out = {"Accept-Encoding": "gzip"}
        if "signed in" in name:
            out["Cookie"] = signed["session"]
        if "authenticated" in name:
            out["Authorization"] = f"Bearer {signed['token']}"
        return out

    for name, url in urls.items():  # untimed: the worker's first view of each read
        conn.request("GET", url(), headers=headers(name))
        conn.getresponse().read()
    for _ in range(rounds):
        for name, url in urls.items():
            path, sent = url(), headers(name)
            used = server_cpu_s(server)
            began = time.perf_counter()
            conn.request("GET", path, headers=sent)
            reply = conn.getresponse()
            reply.read()
            took = (time.perf_counter() - began) * 1000
            cpu[name] += server_cpu_s(server) - used
            if reply.status == 200:
                samples[name].append(took)
            else:
                errors[f"{name}: {reply.status}"] = errors.get(f"{name}: {reply.status}", 0) + 1
    conn.close()
    kinds = {
        name: {**quantiles(times), "cpu_ms": round(cpu[name] * 1000 / max(rounds, 1), 1)}
        for name, times in samples.items()
    }
    return {"kinds": kinds, "errors": errors}


def quantiles(times: list[float]) -> dict[str, float]:
    if len(times) < 2:
        return {"n": len(times)}
    cuts = statistics.quantiles(times, n=100, method="inclusive")
    return {
        "n": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(cuts[94], 1),
        "max_ms": round(max(times), 1),
    }


def one_client(
    env: dict[str, str], args: argparse.Namespace, data: Any, log: Path
) -> dict[str, Any]:
    """``alone`` over gunicorn with the page cache off and on, and the gRPC reads."""
    from ladder_reads import bench_grpc

    signed = credentials(data)
    out: dict[str, Any] = {}
    for name, on in (("cache_off", False), ("cache_on", True)):
        urls = one_client_reads(data, random.Random(args.seed))  # the same pages both times
        port = free_port()
        server = start_gunicorn(cache_env(env, args.cache_url, on), port, args.web_workers, log)
        try:
            out[name] = alone(port, urls, args.one_client, signed, server)
        finally:
            server.terminate()
            server.wait(30)
        out[name]["load"] = [round(x, 2) for x in os.getloadavg()]
    grpc = bench_grpc(data, signed["token"], max(args.one_client, 2), writes=False)
    out["grpc"] = {
        "kinds": {
            k: {key: v[key] for key in ("p50_ms", "p95_ms", "max_ms", "cpu_ms")}
            for k, v in grpc.items()
        },
        "load": [round(x, 2) for x in os.getloadavg()],
    }
    return out


def load(port: int, urls: dict[str, Callable[[], str]], clients: int, seconds: float) -> dict:
    """``clients`` closed-loop clients for ``seconds``; every answer timed by its kind."""
    names = list(urls)
    samples: dict[str, list[float]] = {n: [] for n in names}
    errors: dict[str, int] = {}
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    stop_at: list[float] = []

    def client(k: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        i = k  # each client starts at a different kind
        start.wait()
        while time.monotonic() < stop_at[0]:
            name = names[i % len(names)]
            i += 1
            with lock:
                url = urls[name]()  # the URL choosers share one seeded RNG
            began = time.perf_counter()
            try:
                conn.request("GET", url, headers={"Accept-Encoding": "gzip"})
                reply = conn.getresponse()
                reply.read()
                status = reply.status
            except OSError as exc:
                status = -1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                url = f"{url} ({exc.__class__.__name__})"
            took = (time.perf_counter() - began) * 1000
            with lock:
                if status == 200:
                    samples[name].append(took)
                else:
                    key = f"{name}: {status}"
                    errors[key] = errors.get(key, 0) + 1
        conn.close()

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    stop_at.append(time.monotonic() + seconds)
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join(seconds + 120)
    elapsed = time.monotonic() - began
    figures = {}
    for name, times in samples.items():
        if len(times) < 2:
            figures[name] = {"n": len(times)}
            continue
        cuts = statistics.quantiles(times, n=100, method="inclusive")
        figures[name] = {
            "n": len(times),
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(cuts[94], 1),
            "p99_ms": round(cuts[98], 1),
            "max_ms": round(max(times), 1),
        }
    served = sum(len(t) for t in samples.values())
    return {"kinds": figures, "requests_per_s": round(served / elapsed, 1), "errors": errors}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.database.startswith("postgres"):
        sys.exit("--database (or DATABASE_URL) must be a PostgreSQL URL")
    if importlib.util.find_spec("gunicorn") is None:
        sys.exit("gunicorn is not installed")
    with tempfile.TemporaryDirectory(prefix="load-bench-") as tmp:
        static_root, media_root = Path(tmp) / "static", Path(tmp) / "media"
        env = production_env(args.database, str(static_root), str(media_root))
        os.environ.update(env)  # before Django is set up: the same settings as the server
        sys.path.insert(0, str(BENCH))
        from django.core.management import call_command
        from ladder_data import ensure  # the project's one builder (sets Django up)

        data = ensure(bots=args.bots, matches=args.matches)
        call_command("collectstatic", interactive=False, verbosity=0)
        place_replay(data.largest_match, media_root)
        log = Path(tmp) / "gunicorn.log"
        if args.seconds <= 0:  # only the reads alone
            single = one_client(env, args, data, log)
            report = {"data": {"bots": data.bots, "matches": data.matches},
                      "machine": {"cpus": os.cpu_count(), "load": list(os.getloadavg())},
                      "one_client": single}  # fmt: skip
            if args.json:
                print(json.dumps(report, indent=2))
            else:
                print_one_client(single, args.one_client)
            return 0
        urls = kinds(data, random.Random(args.seed))
        del urls["bot (top 100)"]  # the mix as before; the cache runs below read it
        figures = served_load(cache_env(env, args.cache_url, False), args, urls, log)
        phases: dict[str, Any] = {}
        for name, on in (("cache_off", False), ("cache_on", True)):
            pages = kinds(data, random.Random(args.seed))  # the same bots in both runs
            phase = {k: pages[k] for k in CACHED}
            phases[name] = served_load(cache_env(env, args.cache_url, on), args, phase, log)
            phases[name]["load"] = [round(x, 2) for x in os.getloadavg()]
        if args.one_client:
            phases["one_client"] = one_client(env, args, data, log)
    single = phases.pop("one_client", None)
    off, on = phases["cache_off"], phases["cache_on"]
    phases["ratio"] = {
        "requests_per_s_on_over_off": round(
            on["requests_per_s"] / max(off["requests_per_s"], 1e-9), 1
        ),
        **{
            f"{k}.p95_off_over_on": round(
                off["kinds"][k]["p95_ms"] / max(on["kinds"][k]["p95_ms"], 1e-9), 1
            )
            for k in CACHED
            if "p95_ms" in off["kinds"][k] and "p95_ms" in on["kinds"][k]
        },
    }
    report = {
        "data": {"bots": data.bots, "matches": data.matches},
        "clients": args.clients,
        "seconds": args.seconds,
        "web_workers": args.web_workers,
        "machine": {"cpus": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()]},
        **figures,
        **phases,
        # What the target reads: the anonymous pages from the cache, under the same load.
        "cached": on["kinds"],
    }
    if single is not None:
        report["one_client"] = single
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{data.bots} bots, {data.matches} matches; {args.clients} clients for {args.seconds:g} s "
        f"on gunicorn ({args.web_workers} workers): {figures['requests_per_s']} requests/s"
    )
    print(f"{'kind':<20}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for name, f in figures["kinds"].items():
        print(
            f"{name:<20}{f['n']:>6}{f.get('p50_ms', '-'):>9}{f.get('p95_ms', '-'):>9}"
            f"{f.get('p99_ms', '-'):>9}{f.get('max_ms', '-'):>9}"
        )
    for what, n in figures["errors"].items():
        print(f"not 200: {what} x{n}")
    print(f"anonymous pages ({', '.join(CACHED)}), page cache off and on, {args.clients} clients:")
    for name in ("cache_off", "cache_on"):
        ph = phases[name]
        p95 = ", ".join(f"{k} {ph['kinds'][k].get('p95_ms', '-')}" for k in CACHED)
        print(
            f"  {name:<10} {ph['requests_per_s']:>8} requests/s; p95 ms: {p95}; load {ph['load']}"
        )
        for what, n in ph["errors"].items():
            print(f"  not 200: {what} x{n}")
    print(f"  ratio      {phases['ratio']}")
    if single is not None:
        print_one_client(single, args.one_client)
    return 0


def print_one_client(single: dict[str, Any], rounds: int) -> None:
    print(f"\nevery page and read alone, one keep-alive client, {rounds} requests each:")
    off, on, grpc = single["cache_off"], single["cache_on"], single["grpc"]
    print(f"{'read':<46}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'CPU ms':>8}{'cached p95':>12}")
    rows = [(k, v, on["kinds"].get(k, {})) for k, v in off["kinds"].items()]
    rows += [(f"gRPC {k}", v, {}) for k, v in grpc["kinds"].items()]
    for name, f, cached in rows:
        print(f"{name[:45]:<46}{f.get('p50_ms', '-'):>8}{f.get('p95_ms', '-'):>8}"
              f"{f.get('max_ms', '-'):>8}{f.get('cpu_ms', '-'):>8}"
              f"{cached.get('p95_ms', '-'):>12}")  # fmt: skip
    worst = max(
        (f["p95_ms"], k) for part in (off, grpc) for k, f in part["kinds"].items()
        if "p95_ms" in f and "(offset" not in k
    )  # fmt: skip
    print(f"worst p95 (cache off, offset pages aside): {worst[0]} ms, {worst[1]}")
    print(f"load: cache off {off['load']}, cache on {on['load']}, gRPC {grpc['load']}")
    for what, n in {**off["errors"], **on["errors"]}.items():
        print(f"not 200: {what} x{n}")


if __name__ == "__main__":
    sys.exit(main())

"""Variables that processes outside Django read themselves, listed so the reference is whole.

The engine, the SDK's bots and the metrics server never import Django (their own
import contracts), and gunicorn reads its configuration file before Django exists; each
reads its variables where it runs. They are declared here with the module that reads
them, and a test checks that each module still names its variables.
"""

from __future__ import annotations

from ladder.settings.environment import Environment

web = Environment("web server (gunicorn)")
web.elsewhere(
    "LADDER_WEB_BIND",
    "0.0.0.0:8000",
    read_by="ladder/gunicorn.conf.py",
    why="the address gunicorn listens on",
)
web.elsewhere(
    "LADDER_WEB_WORKERS",
    "2 x cores + 1, at most 8",
    read_by="ladder/gunicorn.conf.py",
    why="gunicorn's worker processes",
)
web.elsewhere(
    "LADDER_WEB_THREADS",
    "4",
    read_by="ladder/gunicorn.conf.py",
    why="threads per worker: a request waiting on the database does not block the others",
)
web.elsewhere(
    "LADDER_WEB_TIMEOUT",
    "30",
    unit="s",
    read_by="ladder/gunicorn.conf.py",
    why="a worker silent this long is restarted",
)
web.elsewhere(
    "LADDER_WEB_KEEPALIVE",
    "5",
    unit="s",
    read_by="ladder/gunicorn.conf.py",
    why="an idle connection is kept this long (above a proxy's idle timeout)",
)
web.elsewhere(
    "LADDER_WEB_ACCESS_LOG",
    "-",
    read_by="ladder/gunicorn.conf.py",
    why="access log file, - for stdout, empty for none",
)

metrics = Environment("logs and metrics")
metrics.elsewhere(
    "LADDER_METRICS_PORT",
    "",
    read_by="telemetry/metrics.py",
    why="the port this process serves Prometheus /metrics on (engine, worker, "
    "grpcserver, gunicorn's master); empty or 0: none",
)
metrics.elsewhere(
    "LADDER_METRICS_ADDR",
    "127.0.0.1",
    read_by="telemetry/metrics.py",
    why="the address that server binds",
)

engine = Environment("engine and bots")
engine.elsewhere(
    "DIGDOWN_ENGINE_BUILD",
    "",
    read_by="engine/rules/__init__.py",
    why="pure runs the pure-Python rules core even where the compiled one is built",
)
engine.elsewhere(
    "DIGDOWN_GRPC_IO",
    "",
    read_by="sdk/digdown/game_io.py",
    why="default keeps grpc's own I/O in the game processes (engine, workers, bots) "
    "instead of polling their own sockets",
)
engine.elsewhere(
    "DIGDOWN_STREAM_SERVER",
    "single-threaded",
    read_by="sdk/digdown/stream_server.py",
    why="threaded serves a bot's streams on grpcio's thread pool",
)
engine.elsewhere(
    "DIGDOWN_TOKEN",
    "",
    read_by="sdk/digdown/connect.py",
    why="the API token a connected bot signs in with (instead of --token)",
)
engine.elsewhere(
    "LADDER_STREAM_CALL",
    "single-threaded",
    read_by="workers/runner/streams.py",
    why="threaded runs the runner's streams on grpcio's public threaded calls",
)

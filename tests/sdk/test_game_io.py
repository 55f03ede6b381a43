"""digdown.game_io: the I/O a game-playing process asks of grpc core, chosen before grpc's
import, kept when the environment already says otherwise, and honoured by this grpcio.

Each case runs in a fresh interpreter: grpcio reads the settings once, when imported."""

from __future__ import annotations

import json
import subprocess
import sys

from workers.server_process import ROOT, default_env

SETTINGS = ("GRPC_EXPERIMENTS", "GRPC_POLL_STRATEGY", "GRPC_VERBOSITY")


def _python(code: str, **env: str) -> dict[str, object]:
    """Run ``code`` in a new interpreter with grpc's settings cleared (and ``env`` added);
    the JSON it prints last."""
    base = {k: v for k, v in default_env().items() if k not in (*SETTINGS, "DIGDOWN_GRPC_IO")}
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    out: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return out


REPORT = (
    "import json, os, digdown.game_io as io\n"
    f"settings = {SETTINGS!r}\n"
    "print(json.dumps({'chosen': io.CHOSEN, **{k: os.environ.get(k) for k in settings}}))\n"
)


def test_importing_it_first_chooses_the_polled_io() -> None:
    from digdown.game_io import GAME_IO, QUIET

    out = _python(REPORT)
    assert out["chosen"] == "grpc I/O: polled by the waiting thread (poll, EventEngine off)"
    assert {k: out[k] for k in SETTINGS} == {**GAME_IO, **QUIET}


def test_settings_already_given_are_kept() -> None:
    out = _python(REPORT, GRPC_POLL_STRATEGY="epoll1")
    assert out["GRPC_POLL_STRATEGY"] == "epoll1"
    assert str(out["GRPC_EXPERIMENTS"]).startswith("-event_engine_client")
    assert "GRPC_POLL_STRATEGY=epoll1" in str(out["chosen"])


def test_the_operator_can_keep_grpcs_own_io() -> None:
    out = _python(REPORT, DIGDOWN_GRPC_IO="default")
    assert all(out[k] is None for k in SETTINGS)
    assert out["chosen"] == "grpc I/O: grpc defaults (EventEngine)"


def test_imported_after_grpc_it_changes_nothing() -> None:
    out = _python("import grpc\n" + REPORT)
    assert all(out[k] is None for k in SETTINGS)


# A stream of echoes on loopback, in one process: client and server. Prints how much of
# the process's CPU grpc core's own EventEngine threads took.
ECHO = """
import json, os, sys
sys.path.insert(0, os.getcwd())
#IO
from pathlib import Path
import grpc
from tests.support import loopback
from workers.runner.streams import CallStream

def stream(requests, context):
    yield from requests

server, address = loopback.serve("t.Echo", {"S": grpc.stream_stream_rpc_method_handler(stream)})
channel = grpc.insecure_channel(address)
call = CallStream(channel.stream_stream("/t.Echo/S"))
for _ in range(1000):
    assert call.ask(b"x" * 2000, 10.0) == b"x" * 2000
threads = {}
for task in Path(f"/proc/{os.getpid()}/task").iterdir():
    name = (task / "comm").read_text().strip()
    threads[name] = threads.get(name, 0) + int((task / "schedstat").read_text().split()[0])
call.close()
channel.close()
server.stop(None)
ee = sum(v for k, v in threads.items() if k.startswith("event_engine"))
print(json.dumps({"share": ee / sum(threads.values())}))
"""


def test_this_grpcio_honours_it() -> None:
    """With the game I/O the threads that wait read their own sockets: grpc's EventEngine
    threads, which otherwise read every message and hand it over, stay (almost) idle. A
    grpcio that ignored the settings would fail here, not just run slower."""
    polled = _python(ECHO.replace("#IO", "import digdown.game_io"))
    default = _python(ECHO.replace("#IO", ""), DIGDOWN_GRPC_IO="default")
    # Seen here: 0.7-1.3% polled, 8% with grpc's own I/O (client and server in one process).
    assert float(polled["share"]) < 0.04, (polled, default)
    assert float(default["share"]) > 3 * float(polled["share"]), (polled, default)


def test_the_game_processes_choose_it_and_the_ladder_does_not() -> None:
    """The engine, the bots and the workers import it before grpc; the ladder's gRPC server
    (thousands of connected bots, which poll() would scan on every wake-up) never does."""
    code = (
        "import json, sys, django\n"
        "django.setup()\n"
        "import MODULE\n"
        "print(json.dumps({'polled': 'digdown.game_io' in sys.modules}))\n"
    )
    env = {"DJANGO_SETTINGS_MODULE": "ladder.settings"}
    game = ("engine.server", "digdown.bot", "digdown.connect", "workers.celery_app", "workers.play")
    for module in game:
        assert _python(code.replace("MODULE", module), **env) == {"polled": True}, module
    for module in ("ladder.grpc.server", "digdown.serving"):
        assert _python(code.replace("MODULE", module), **env) == {"polled": False}, module

"""grpc core's I/O for a process that plays games, chosen by importing this module first.

A process that plays games (the engine, a match runner, a bot) sends one message
and waits for one, over and over.

By default grpc core reads every socket on threads of its own (its EventEngine) and
hands each message to the thread that waits for it: two thread wake-ups per message.
A game's engine, its bots and the match runner exchange one small message at a time,
so that hand-over is most of what a message costs on a busy machine. grpc core's
older I/O, polling each completion queue's own sockets with ``poll()``, lets the
waiting thread read its socket itself: a streamed decision costs about 30% less,
with the same games and the same replays (figures: docs/benchmark-report.md,
"Private library internals kept"; docs/protocol.md).
tests/sdk/test_game_io.py::test_this_grpcio_honours_it fails the day a grpcio
release stops honouring these settings.

Not for a server holding thousands of connections: ``poll()`` scans every socket
of a completion queue on each wake-up. The ladder's own gRPC server (connected
bots) keeps grpc's default; the engine, the workers and bots built with this
SDK use this.

grpcio reads these settings once, when it is imported, so this module is
imported first (``import digdown.game_io`` at the top of the process's entry
module); imported later, it changes nothing. Settings already in the environment
are kept, and ``DIGDOWN_GRPC_IO=default`` keeps grpc's own I/O. Child processes
inherit the settings.
"""

from __future__ import annotations

import os
import sys

GAME_IO = {
    # EventEngine off for clients, listeners and every other endpoint: grpc core's
    # iomgr, in which the thread waiting on a completion queue polls its sockets.
    "GRPC_EXPERIMENTS": "-event_engine_client,-event_engine_listener,"
    "-event_engine_for_all_other_endpoints",
    # Each completion queue polls its own sockets: a call's thread wakes for its own
    # messages, not through a thread that happens to poll every socket.
    "GRPC_POLL_STRATEGY": "poll",
}
# grpc core's older I/O logs at INFO every GOAWAY it receives (a bot or an engine that
# stops): a line on stderr per connection, where grpc's own I/O says nothing. ERROR is
# the verbosity grpc documents as its default.
QUIET = {"GRPC_VERBOSITY": "ERROR"}
OPT_OUT = "DIGDOWN_GRPC_IO"


def use_game_io() -> str:
    """Choose grpc core's per-thread polling I/O for this process and its children, if
    grpcio is not imported yet; what this process runs, for its start-up log."""
    opted_out = os.environ.get(OPT_OUT, "").strip().lower() == "default"
    if not opted_out and "grpc" not in sys.modules:
        for name, value in {**GAME_IO, **QUIET}.items():
            os.environ.setdefault(name, value)
    return describe()


def describe() -> str:
    """The grpc core I/O settings of this process, as one phrase."""
    chosen = {name: os.environ.get(name) for name in GAME_IO}
    if all(chosen[name] == value for name, value in GAME_IO.items()):
        return "grpc I/O: polled by the waiting thread (poll, EventEngine off)"
    shown = ", ".join(f"{name}={value}" for name, value in chosen.items() if value)
    return f"grpc I/O: {shown or 'grpc defaults (EventEngine)'}"


CHOSEN = use_game_io()
"""What this process runs, said in its start-up log."""

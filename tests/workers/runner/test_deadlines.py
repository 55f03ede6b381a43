"""Every gRPC call the runner, the CLIs or the SDK make carries a deadline.

A static check, so a new call without `timeout=` fails here instead of hanging
a worker on a silent bot one day.
"""

from __future__ import annotations

import ast
from pathlib import Path

from digdown.v1 import bot_pb2, engine_pb2

ROOT = Path(__file__).resolve().parents[3]
FILES = [
    *sorted((ROOT / "workers").rglob("*.py")),
    *sorted((ROOT / "sdk" / "digdown").glob("*.py")),
    *sorted((ROOT / "examples").glob("*.py")),
]
assert len(FILES) > 10 and all(f.exists() for f in FILES), FILES
RPCS = {
    m.name
    for d in (bot_pb2, engine_pb2)
    for s in d.DESCRIPTOR.services_by_name.values()
    for m in s.methods
} | {"Check"}


def calls_without_timeout(path: Path) -> list[str]:
    bad = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        # stub.Act(...), stub.Handshake.future(...), self._engine.CloseGame(...)
        name = func.attr if isinstance(func, ast.Attribute) else None
        if name == "future" and isinstance(func.value, ast.Attribute):  # type: ignore[union-attr]
            name = func.value.attr  # type: ignore[union-attr]
        # A stub call takes the request alone (the rest are keywords); a call with a
        # second positional argument passes a servicer context: the bot's own servicer
        # called in process (the SDK's connect-out loop), not an RPC.
        if len(node.args) >= 2:
            continue
        if name in RPCS and not any(k.arg == "timeout" for k in node.keywords):
            bad.append(f"{path.name}:{node.lineno} {name}")
    return bad


# Calls that must outlive any deadline, and what bounds them instead.
UNBOUNDED = {
    # A connect-out bot's Ladder.Play stream lives as long as the bot does (hours);
    # keepalive pings both ways end it when the other side is gone.
    ("connect.py", "Play"),
}


def test_every_rpc_has_a_deadline() -> None:
    assert "Act" in RPCS and "Step" in RPCS
    bad = [b for f in FILES for b in calls_without_timeout(f)]
    bad = [b for b in bad if (b.split(":")[0], b.split()[-1]) not in UNBOUNDED]
    assert bad == []


def test_the_check_finds_a_call_without_deadline(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "stub.Act(request)\nstub.Step(r, timeout=1)\nstub.Handshake.future(r)\n"
        "self.service.Act(request, context)\n"
    )
    found = [b.split()[-1] for b in calls_without_timeout(sample.resolve()) if b]
    assert found == ["Act", "Handshake"]

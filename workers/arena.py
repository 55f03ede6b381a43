"""`python -m workers.arena`: the arena (`engine.arena`) plus hosted bundles in the sandbox.

    python -m workers.arena --bot hosted:mybot.zip --vs heuristic --games 200

Everything of `python -m engine.arena`, and one more kind of `--bot`:
`hosted:FILE` (a `.py` file or a `.zip` with `bot.py`, `main.py` or
`__main__.py` at its root — what `UploadVersion` takes) is started once in the
very sandbox the ladder's workers use (bubblewrap, the same limits, no
network, `workers.sandbox`) and every game dials its socket. The arena itself
lives in the engine because an author's venv has only the SDK and the engine;
the sandbox is part of the ladder's workers, so this is the one arena command
that needs a clone of the ladder (no database, Celery or Django are started).
"""

from __future__ import annotations

import contextlib
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from engine.arena import ArenaConfig
from engine.arena.cli import main as arena_main
from engine.arena.seats import BotLoadError
from workers.sandbox import Bundle, SandboxUnavailable
from workers.sandbox.launcher import SandboxConfig, SandboxLimits, hosted_seat

PREFIX = "hosted:"
ENTRY_POINTS = ("bot.py", "main.py", "__main__.py")


def load_bundle(path: Path) -> Bundle:
    """The file as the ladder stores an upload: a `.py` script or a `.zip` with an entry point."""
    if not path.is_file():
        raise BotLoadError(f"no such bundle: {path}")
    data = path.read_bytes()
    bundle = Bundle(path.name, data)
    if not bundle.is_zip:
        return bundle
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
    entry = next((e for e in ENTRY_POINTS if e in names), "")
    if not entry:
        raise BotLoadError(f"{path} has none of {', '.join(ENTRY_POINTS)} at its root")
    return replace(bundle, entry_point=entry)


def resolve_hosted(spec: str, stack: contextlib.ExitStack, config: ArenaConfig) -> str:
    """Start a `hosted:` bundle in the sandbox for the whole run; answer its socket address."""
    if not spec.startswith(PREFIX):
        return spec
    bundle = load_bundle(Path(spec.removeprefix(PREFIX)))
    games = len(config.jobs())
    # One seat serves the whole run, so its life and CPU limits scale with the games.
    limits = SandboxLimits(
        cpu_s=max(300, games * 10), wall_s=max(1800.0, games * (config.deadline_s + 5.0))
    )
    try:
        seat = stack.enter_context(hosted_seat(bundle, limits, SandboxConfig()))
    except SandboxUnavailable as exc:
        raise BotLoadError(str(exc)) from None
    if seat.start_error:
        log = seat.log_bytes().decode("utf-8", "replace")
        raise BotLoadError(f"the hosted bot did not start: {seat.start_error}\n{log}")
    print(f"hosted bot running in the {seat.mode} sandbox at {seat.address}", file=sys.stderr)
    return seat.address


def main(argv: Sequence[str] | None = None) -> int:
    return arena_main(
        argv,
        prog="python -m workers.arena",
        resolve_bot=resolve_hosted,
        extra_help="--bot hosted:FILE.py|FILE.zip runs an upload in the ladder's sandbox.",
    )


if __name__ == "__main__":
    sys.exit(main())

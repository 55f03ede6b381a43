"""The rules of Digging Down (rulesets in `ruleset.py`) as a pure library.

No I/O, no clock, no global RNG, no Django, no gRPC: every other part of the
product is an adapter around this package. See docs/engine-api.md.

Two builds of the same sources: the compiled one (mypyc, made by
`python -m engine.compile_rules`, which `make venv` runs where a C compiler
is present) and the pure-Python one. `BUILD` says which one this process runs,
and `BUILD_REASON` why; `DIGDOWN_ENGINE_BUILD=pure` forces the pure one. A
compiled build made from other sources than the ones on disk is never used.
Both play every game identically (tests/engine/test_builds.py).
"""

import hashlib
import importlib
import json
import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_COMPILED = _HERE / "_compiled"


def sources_digest() -> str:
    """sha256 over the rules modules' sources (names and contents), `__init__` aside."""
    h = hashlib.sha256()
    for path in sorted(_HERE.glob("*.py")):
        if path.name != "__init__.py":
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _choose_build() -> tuple[str, str]:
    """("compiled" | "pure", why), and put the compiled modules first on the package path."""
    if os.environ.get("DIGDOWN_ENGINE_BUILD", "") == "pure":
        return "pure", "DIGDOWN_ENGINE_BUILD=pure"
    manifest = _COMPILED / "BUILD.json"
    if not manifest.exists():
        return "pure", "no compiled build (python -m engine.compile_rules makes one)"
    try:
        built = json.loads(manifest.read_text())
    except ValueError:
        return "pure", f"unreadable {manifest.name}"
    if built.get("sources_sha256") != sources_digest():
        return "pure", "the compiled build is stale: sources changed since it was made"
    suffix = f".{built.get('python')}-"
    have = {p.name.split(".")[0] for p in _COMPILED.iterdir() if suffix in p.name}
    if not set(built.get("modules", ())) <= have:
        return "pure", f"the compiled build is not for this Python ({built.get('python')})"
    __path__.insert(0, str(_COMPILED))
    try:  # the shared library every compiled module needs: if it loads, they all do
        importlib.import_module(f"{__name__}._native__mypyc")
    except ImportError as exc:
        __path__.remove(str(_COMPILED))
        return "pure", f"the compiled build does not load: {exc}"
    return "compiled", "mypyc build of these sources"


BUILD, BUILD_REASON = _choose_build()

from .actions import ACTION_ARGS, Action  # noqa: E402 (the build is chosen first)
from .errors import GameOver, IllegalAction, MalformedAction  # noqa: E402
from .record import replay_record  # noqa: E402
from .ruleset import DD1, DD2, RULESETS, Ruleset  # noqa: E402
from .setup import GameConfig, deal_cave, new_game  # noqa: E402
from .state import State  # noqa: E402
from .versions import ENGINE_VERSION, RECORD_FORMAT  # noqa: E402


def build_warning() -> str | None:
    """Why a compiled build on disk is not the one running, or None.

    After an edit under engine/rules the build goes stale and the pure one runs, correctly but
    several times slower; adapters print this at start-up so a benchmark or a server does not
    measure or serve the slow build unawares.
    """
    if BUILD == "compiled" or not (_COMPILED / "BUILD.json").exists():
        return None
    if os.environ.get("DIGDOWN_ENGINE_BUILD", "") == "pure":
        return None
    return (
        f"rules core: running the pure build, {BUILD_REASON}; "
        "`make venv` (or python -m engine.compile_rules) rebuilds the compiled one"
    )


def build_info() -> dict[str, str]:
    """Which build of the rules core runs, for logs and metadata (engine.simulate --json)."""
    return {"build": BUILD, "reason": BUILD_REASON, "engine_version": ENGINE_VERSION}


__all__ = [
    "ACTION_ARGS",
    "BUILD",
    "BUILD_REASON",
    "DD1",
    "DD2",
    "ENGINE_VERSION",
    "RECORD_FORMAT",
    "RULESETS",
    "Action",
    "GameConfig",
    "GameOver",
    "IllegalAction",
    "MalformedAction",
    "Ruleset",
    "State",
    "build_info",
    "build_warning",
    "deal_cave",
    "new_game",
    "replay_record",
    "sources_digest",
]

"""The rules of Digging Down (rulesets in `ruleset.py`) as a pure library.

No I/O, no clock, no global RNG, no Django, no gRPC: every other part of the
product is an adapter around this package. See docs/engine-api.md.

Two builds of the same sources: the compiled one (mypyc, made by
`python -m engine.compile_rules`, which `make venv` runs where a C compiler
is present) and the pure-Python one. `BUILD` says which one this process runs,
and `BUILD_REASON` why; `DIGDOWN_ENGINE_BUILD=pure` forces the pure one. A
compiled build made from other sources than the ones on disk is never used. The
choice (the one step with I/O) is made by engine/rules_build.py, outside these
modules, before the first of them is imported.
Both play every game identically (tests/engine/test_builds.py).
"""

import os

from engine import rules_build as _rules_build

# The one step with I/O, before the first rules module is imported (engine/rules_build.py).
_FACTS = _rules_build.read_facts(os.environ)
BUILD, BUILD_REASON = _rules_build.load(__name__, __path__, _FACTS)
sources_digest = _rules_build.sources_digest

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
    return _rules_build.warning(BUILD, BUILD_REASON, _FACTS)


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

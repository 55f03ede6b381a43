"""Which build of the rules core a process runs: the compiled one (mypyc) or the pure one.

The rules modules themselves do no I/O; choosing between their two builds does (an
environment variable, `_compiled/BUILD.json`, the sources' digest, the files on disk, loading
a shared library), and it must happen before the first rules module is imported, because
the compiled modules are found by putting `_compiled` first on the package's path. So the
choice lives here, outside the pure modules, in two steps: `read_facts` gathers what is on
disk and in the environment, and `decide` - a pure function, tested on its own
(tests/engine/test_rules_build.py) - says which build and why. `engine.rules` runs `load`
once when it is imported and keeps `BUILD`, `BUILD_REASON` and `build_info()` for callers.

A compiled build made from other sources than the ones on disk is never used; both builds
play every game identically (tests/engine/test_builds.py).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping, MutableSequence
from dataclasses import dataclass
from pathlib import Path

ENV = "DIGDOWN_ENGINE_BUILD"
"""Set to ``pure`` to run the pure build even where a current compiled one exists."""

RULES = Path(__file__).resolve().parent / "rules"
COMPILED = RULES / "_compiled"
MANIFEST = "BUILD.json"
NO_BUILD = "no compiled build (python -m engine.compile_rules makes one)"


@dataclass(frozen=True)
class BuildFacts:
    """What the choice depends on, read from the environment and the disk."""

    forced: str
    """The environment variable's value ('' when unset)."""
    manifest: str | None
    """`BUILD.json`'s text, or None when there is no compiled build (or it was not read)."""
    sources_sha256: str
    """The digest of the rules sources on disk ('' when not computed)."""
    compiled_files: frozenset[str]
    """The file names in `_compiled`."""


def sources_digest(rules: Path = RULES) -> str:
    """sha256 over the rules modules' sources (names and contents), `__init__` aside."""
    h = hashlib.sha256()
    for path in sorted(rules.glob("*.py")):
        if path.name != "__init__.py":
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def read_facts(environ: Mapping[str, str], compiled: Path = COMPILED) -> BuildFacts:
    """The facts `decide` needs; nothing more is read than the choice can use."""
    forced = environ.get(ENV, "")
    manifest = compiled / MANIFEST
    if forced == "pure" or not manifest.exists():
        return BuildFacts(forced, None, "", frozenset())
    return BuildFacts(
        forced,
        manifest.read_text(),
        sources_digest(compiled.parent),
        frozenset(p.name for p in compiled.iterdir()),
    )


def decide(facts: BuildFacts) -> tuple[str, str]:
    """("compiled" | "pure", why). "compiled" means: the build matches, try to load it."""
    if facts.forced == "pure":
        return "pure", f"{ENV}=pure"
    if facts.manifest is None:
        return "pure", NO_BUILD
    try:
        built = json.loads(facts.manifest)
    except ValueError:
        return "pure", f"unreadable {MANIFEST}"
    if not isinstance(built, dict):
        return "pure", f"unreadable {MANIFEST}"
    if built.get("sources_sha256") != facts.sources_sha256:
        return "pure", "the compiled build is stale: sources changed since it was made"
    suffix = f".{built.get('python')}-"
    have = {name.split(".")[0] for name in facts.compiled_files if suffix in name}
    if not set(built.get("modules", ())) <= have:
        return "pure", f"the compiled build is not for this Python ({built.get('python')})"
    return "compiled", "mypyc build of these sources"


def warning(build: str, reason: str, facts: BuildFacts) -> str | None:
    """Why a compiled build on disk is not the one running, or None (see `build_warning`)."""
    if build == "compiled" or facts.forced == "pure" or facts.manifest is None:
        return None
    return (
        f"rules core: running the pure build, {reason}; "
        "`make venv` (or python -m engine.compile_rules) rebuilds the compiled one"
    )


def load(package: str, path: MutableSequence[str], facts: BuildFacts) -> tuple[str, str]:
    """Decide, and for the compiled build put `_compiled` first on the package's `path` and
    load the shared library every compiled module needs (if it loads, they all do)."""
    build, why = decide(facts)
    if build != "compiled":
        return build, why
    path.insert(0, str(COMPILED))
    try:
        importlib.import_module(f"{package}._native__mypyc")
    except ImportError as exc:
        path.remove(str(COMPILED))
        return "pure", f"the compiled build does not load: {exc}"
    return build, why

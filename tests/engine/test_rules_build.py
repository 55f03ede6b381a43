"""The choice between the rules core's two builds (engine/rules_build.py): the decision a
pure function of what is on disk and in the environment, tested here case by case without
building anything; the I/O that gathers those facts on a scratch directory. The builds
themselves are compared in tests/engine/test_builds.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import engine.rules
from engine import rules_build
from engine.rules_build import ENV, NO_BUILD, BuildFacts, decide, read_facts, warning

PY = "cpython-311"  # BUILD.json's "python"; the files carry it before the platform
MANIFEST = json.dumps({"sources_sha256": "abc", "python": PY, "modules": ["table", "state"]})
FILES = frozenset(
    {f"table.{PY}-x86_64-linux-gnu.so", f"state.{PY}-x86_64-linux-gnu.so", "BUILD.json"}
)


def facts(**changes: object) -> BuildFacts:
    given: dict[str, object] = {
        "forced": "",
        "manifest": MANIFEST,
        "sources_sha256": "abc",
        "compiled_files": FILES,
    }
    given.update(changes)
    return BuildFacts(**given)  # type: ignore[arg-type]


def test_a_current_build_for_this_python_is_chosen() -> None:
    assert decide(facts()) == ("compiled", "mypyc build of these sources")


def test_the_pure_build_when_forced_missing_unreadable_stale_or_for_another_python() -> None:
    assert decide(facts(forced="pure")) == ("pure", f"{ENV}=pure")
    assert decide(facts(manifest=None)) == ("pure", NO_BUILD)
    assert decide(facts(manifest="{not json")) == ("pure", "unreadable BUILD.json")
    assert decide(facts(manifest="[1]")) == ("pure", "unreadable BUILD.json")
    build, why = decide(facts(sources_sha256="def"))
    assert build == "pure" and "stale" in why
    other = frozenset(name.replace("311", "312") for name in FILES)
    build, why = decide(facts(compiled_files=other))
    assert build == "pure" and "not for this Python" in why
    build, why = decide(facts(compiled_files=frozenset({f"table.{PY}-x86_64-linux-gnu.so"})))
    assert build == "pure" and "not for this Python" in why


def test_any_other_value_of_the_variable_does_not_force_anything() -> None:
    assert decide(facts(forced="compiled"))[0] == "compiled"


def test_a_warning_only_when_a_build_on_disk_is_not_running() -> None:
    assert warning("compiled", "ok", facts()) is None
    assert warning("pure", NO_BUILD, facts(manifest=None)) is None
    assert warning("pure", f"{ENV}=pure", facts(forced="pure")) is None
    stale = warning("pure", "the compiled build is stale", facts(sources_sha256="def"))
    assert stale is not None and "stale" in stale and "make venv" in stale


def test_the_facts_read_from_a_directory(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    compiled = rules / "_compiled"
    compiled.mkdir(parents=True)
    (rules / "__init__.py").write_text("# not hashed\n")
    (rules / "table.py").write_text("X = 1\n")
    assert read_facts({}, compiled) == BuildFacts("", None, "", frozenset())
    (compiled / "BUILD.json").write_text(MANIFEST)
    (compiled / f"table.{PY}.so").write_bytes(b"")
    read = read_facts({}, compiled)
    assert read.manifest == MANIFEST
    assert read.sources_sha256 == rules_build.sources_digest(rules)
    assert read.compiled_files == {"BUILD.json", f"table.{PY}.so"}
    assert read_facts({ENV: "pure"}, compiled) == BuildFacts("pure", None, "", frozenset())
    before = rules_build.sources_digest(rules)
    (rules / "__init__.py").write_text("# changed, still not hashed\n")
    assert rules_build.sources_digest(rules) == before
    (rules / "table.py").write_text("X = 2\n")
    assert rules_build.sources_digest(rules) != before


def test_the_package_keeps_its_names_for_callers() -> None:
    assert engine.rules.BUILD in ("compiled", "pure")
    assert engine.rules.build_info()["build"] == engine.rules.BUILD
    assert engine.rules.build_info()["reason"] == engine.rules.BUILD_REASON
    assert engine.rules.sources_digest() == rules_build.sources_digest()
    assert decide(read_facts(os.environ))[0] in ("compiled", "pure")

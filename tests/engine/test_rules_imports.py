"""The rules core's imports: only the standard library, and no cycle between its modules.
The package's `__init__` also imports its build loader (engine/rules_build.py), which itself
imports only the standard library.

Read from the source (typing-only imports included), so a cycle hidden behind
`TYPE_CHECKING` or a function-level import counts as one.
"""

from __future__ import annotations

import ast
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

RULES = Path(__file__).resolve().parents[2] / "engine" / "rules"


def _imports() -> dict[str, tuple[set[str], set[str]]]:
    """module -> (sibling modules it imports, top-level packages it imports)."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for path in sorted(RULES.glob("*.py")):
        siblings: set[str] = set()
        packages: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                packages |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                packages.add((node.module or "").split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                if node.module:
                    siblings.add(node.module.split(".")[0])
                else:
                    siblings |= {alias.name for alias in node.names}
        found[path.stem] = (siblings, packages)
    return found


def _outside(packages: set[str]) -> set[str]:
    return {p for p in packages if p not in sys.stdlib_module_names and p != "__future__"}


def test_rules_import_only_the_standard_library() -> None:
    for module, (_, packages) in _imports().items():
        outside = _outside(packages)
        if module == "__init__":
            source = (RULES / "__init__.py").read_text()
            assert "from engine import rules_build as _rules_build" in source
            outside -= {"engine"}
        assert not outside, f"engine.rules.{module} imports {sorted(outside)}"


def test_the_build_loader_imports_only_the_standard_library() -> None:
    loader = RULES.parent / "rules_build.py"
    packages: set[str] = set()
    for node in ast.walk(ast.parse(loader.read_text())):
        if isinstance(node, ast.Import):
            packages |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "engine.rules_build imports nothing relative"
            packages.add((node.module or "").split(".")[0])
    assert not _outside(packages), f"engine.rules_build imports {sorted(_outside(packages))}"


def test_no_import_cycle_inside_the_rules() -> None:
    graph = {module: siblings for module, (siblings, _) in _imports().items()}
    assert set().union(*graph.values()) <= set(graph), "an import names no module of the package"
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise AssertionError(f"import cycle in engine.rules: {exc.args[1]}") from None
    # The data sits below every rule, and the OpenSpiel-style State above them.
    assert order.index("table") < order.index("legal") < order.index("state")

"""Dependencies point one way: ``ladder`` never imports ``workers`` (it sends tasks by name).

A static check of every module under ladder/, so a convenient import from the
workers into the ladder fails here instead of tying the web process to the
runner, gRPC channels and Celery's worker side.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_ladder_does_not_import_workers() -> None:
    files = sorted((ROOT / "ladder").rglob("*.py"))
    assert len(files) > 20
    bad = {
        str(f.relative_to(ROOT)): sorted(n for n in imports_of(f) if n.split(".")[0] == "workers")
        for f in files
    }
    assert {f: names for f, names in bad.items() if names} == {}


def test_the_check_sees_an_import(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("from workers.runner import run_match\nimport workers.tasks\n")
    assert imports_of(sample) == {"workers.runner", "workers.tasks"}
